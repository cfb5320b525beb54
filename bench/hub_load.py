"""What the hub benches share (bench/hub-throughput, bench/hub-memory): the Rust load generator
(crates/hub/examples/hub_load.rs), a hub to measure, its tokens and a signed-in human, and the
rule that a figure within 20 % of the client's own ceiling is not printed as the hub's.

Only the Python standard library; the generator does the requests.
"""
import http.client
import json
import os
import re
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("ASK_USER_BENCH_BIN") or os.path.join(ROOT, "target/release/ask-user")
LOAD = os.environ.get("ASK_USER_BENCH_LOAD") or os.path.join(ROOT, "target/release/examples/hub_load")
QUESTION = {"questions": [{"id": "go", "question": "Deploy now?", "options": ["Yes", "No"]}]}
ANSWER = {"answers": [{"id": "go", "selected": ["Yes"]}]}
# The hub's per-token limits (crates/hub/src/gate.rs, auth.rs): a burst of 60 requests refilled
# at 20 a second, 32 requests held open at once, 64 asks open at once.
BURST = 50
REFILL_SECONDS = BURST / 20 + 0.2
HELD_PER_TOKEN = 32
QUOTA = 64
# A figure this close to the client's own ceiling measures the client, not the hub.
CLIENT_BOUND = 0.8


def build():
    """Builds what is missing: the release binary and the load generator."""
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "ask-user"], cwd=ROOT, check=True)
    if not os.path.exists(LOAD):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "ask-user-hub", "--example", "hub_load"],
                       cwd=ROOT, check=True)


def load(mode, job):
    """Runs the generator in `mode` on `job`: its JSON result."""
    out = subprocess.run([LOAD, mode], input=json.dumps(job), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"hub_load {mode} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


class Instant:
    """The generator's server that replies at once: the client's ceiling. Ends when closed (its
    stdin closes), and with this process."""

    def __enter__(self):
        self.p = subprocess.Popen([LOAD, "instant"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        m = re.search(r"listening on ([0-9.]+:\d+)", self.p.stdout.readline())
        if not m:
            raise SystemExit("hub_load instant did not start")
        self.addr = m.group(1)
        return self

    def __exit__(self, *_):
        self.p.stdin.close()
        self.p.wait()


def run(env, *args):
    return subprocess.run([BIN, *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def serve(env, store):
    """A `hub serve` on `store`: the process and its address "HOST:PORT"."""
    hub = subprocess.Popen([BIN, "hub", "serve", "--listen", "127.0.0.1:0", "--store", store,
                            "--max-connections", "4096"],
                           stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    m = re.search(r"serving on http://([0-9.]+:\d+)", hub.stderr.readline())
    if not m:
        hub.kill()
        raise SystemExit("the hub did not start")
    return hub, m.group(1)


def human(env, store, addr):
    """A signed-in human's headers for the inbox (cookie and origin)."""
    origin = f"http://{addr}"
    link = run(env, "hub", "login-link", "--store", store, "--url", origin)
    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    c.request("POST", link.split(f":{port}", 1)[1], headers={"Origin": origin})
    r = c.getresponse()
    r.read()
    assert r.status == 303, r.status
    return [["Cookie", r.getheader("set-cookie").split(";")[0]], ["Origin", origin]]


def tokens(env, store, n, tag):
    return [run(env, "hub", "token", "add", f"{tag}{i}-{os.getpid()}", "--store", store) for i in range(n)]


def bearer(token):
    return [["Authorization", f"Bearer {token}"]]


def ask_job(token, key, arguments=None):
    return {"method": "POST", "path": "/v1/asks", "headers": bearer(token),
            "body": json.dumps({"arguments": arguments or QUESTION, "key": key})}


def in_bursts(addrs, connections, jobs_of_token):
    """Sends each token's jobs at full speed, at most BURST of each token at a time, waiting
    between rounds for the tokens' buckets to refill. Statuses and bodies, per token."""
    out = {t: [] for t in jobs_of_token}
    start = 0
    while any(start < len(j) for j in jobs_of_token.values()):
        if start:
            time.sleep(REFILL_SECONDS)
        batch = [(t, j) for t, jobs in jobs_of_token.items() for j in jobs[start:start + BURST]]
        r = load("post", {"addrs": addrs, "connections": connections, "requests": [j for _, j in batch]})
        for (t, _), s, b in zip(batch, r["statuses"], r["bodies"]):
            out[t].append((s, b))
        start += BURST
    return out


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fsync_floor(directory):
    n, t0 = 0, time.perf_counter()
    with open(os.path.join(directory, "fsync.dat"), "ab") as f:
        while time.perf_counter() - t0 < 1.0:
            f.write(b"x")
            f.flush()
            os.fsync(f.fileno())
            n += 1
    os.unlink(os.path.join(directory, "fsync.dat"))
    return n / (time.perf_counter() - t0)


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(len(v) * p / 100)) - 1))] if v else float("nan")


def rate_line(label, value, ceiling, unit="/s"):
    """A rate beside the client's ceiling, or "client-bound" when within 20 % of it."""
    if value >= CLIENT_BOUND * ceiling:
        return (f"  {label:<14} client-bound: {value:,.0f}{unit} is within 20 % of this client's own ceiling "
                f"({ceiling:,.0f}{unit}); not a figure of the hub (more connections: ASK_USER_BENCH_THREADS)")
    return f"  {label:<14} {value:8,.0f}{unit}   {value / ceiling:5.2f}x the client's ceiling ({ceiling:,.0f}{unit})"


def latency_line(label, value, floor):
    """A latency beside the client's own (against the instant server), or "client-bound" when
    within 20 % of it."""
    if value <= floor / CLIENT_BOUND:
        return (f"  {label:<14} client-bound: {value:.2f} ms is within 20 % of this client's own "
                f"{floor:.2f} ms against a server that replies at once")
    return f"  {label:<14} {value:8.2f} ms  {value / floor:5.2f}x the client's own ({floor:.2f} ms)"


def median(values):
    return statistics.median(values) if values else float("nan")
