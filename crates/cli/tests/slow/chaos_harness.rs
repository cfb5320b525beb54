//! The chaos harness: real `ask-user` processes on loopback — a `hub serve` on SQLite, agents
//! (`ask-user ask --hub`, each with its own SQLite local store and call key), and a scripted
//! human answering through the hub's real HTTP endpoints — while faults land: `kill -9` of
//! agents and of the hub (restarted on the same port), SIGTERM of agents, and `--timeout`s
//! expiring around the moment the human answers.
//!
//! A ledger records what each agent was asked (its own question, its own options), what the
//! human was told was sent (HTTP 200) and what each agent printed (its stdout, the model's
//! bytes). An agent that did not print its answer runs again with the same key (a retry), as a
//! model would. The report counts asked / acknowledged / delivered / lost / misdelivered /
//! asked twice / hung, and answer → agent latency (p50/p99).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_ask-user");

/// Generous deadline for anything that must happen (the machine is small and shared).
pub(crate) const DEADLINE: Duration = Duration::from_secs(90);

/// What one chaos run does.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The seed of every random choice the harness makes (not of the processes' scheduling).
    pub(crate) seed: u64,
    /// Logical agents (each asks one question, retrying until it printed its answer or gave up).
    pub(crate) agents: usize,
    /// How many agents wait at once.
    pub(crate) parallel: usize,
    /// Percent of agent runs killed with SIGKILL while they wait.
    pub(crate) kill_agents: u64,
    /// Percent of agent runs sent SIGTERM while they wait.
    pub(crate) term_agents: u64,
    /// Kill -9 and restart a hub replica this often (`None`: never).
    pub(crate) kill_hub_every: Option<Duration>,
    /// The hub's store: `None` for SQLite (one replica), or the Postgres database URL (two
    /// replicas, the human on the second, agents given both).
    pub(crate) postgres: Option<String>,
    /// With Postgres: `pg_ctl restart -m immediate` this often.
    pub(crate) restart_postgres_every: Option<Duration>,
    /// Whether agents' `--timeout`s (1.5–4.5 s) expire around the human's answers (else 60 s:
    /// the human always answers first).
    pub(crate) racing_timeouts: bool,
}

impl Config {
    /// The short run of the default test run.
    pub(crate) fn short() -> Self {
        Self {
            seed: 1,
            agents: 16,
            parallel: 8,
            kill_agents: 15,
            term_agents: 10,
            kill_hub_every: Some(Duration::from_secs(3)),
            postgres: None,
            restart_postgres_every: None,
            racing_timeouts: true,
        }
    }

    /// The short run with `CHAOS_SEED`, `CHAOS_AGENTS`, `CHAOS_PARALLEL` overriding it (the
    /// long run by hand: scripts/chaos).
    pub(crate) fn from_env() -> Self {
        let mut c = Self::short();
        let num = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        if let Some(v) = num("CHAOS_SEED") {
            c.seed = v;
        }
        if let Some(v) = num("CHAOS_AGENTS") {
            c.agents = usize::try_from(v).unwrap_or(c.agents);
        }
        if let Some(v) = num("CHAOS_PARALLEL") {
            c.parallel = usize::try_from(v).unwrap_or(c.parallel).max(1);
        }
        c
    }
}

/// A seeded SplitMix64 (the harness's choices only).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}

/// A child process killed (SIGKILL) and reaped when dropped: no test leaves one behind.
pub(crate) struct Proc(pub(crate) Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ask-user ARGS` with a cleared environment: only `HOME` (a private directory), `PATH` and
/// what `env` adds. Never the developer's store, config or hub.
pub(crate) fn command(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = hermetic(BIN, home, env);
    c.args(args);
    c
}

/// `program` with a cleared environment: a private `HOME` (and XDG directories under it),
/// `PATH` and `env`.
fn hermetic(program: &str, home: &Path, env: &[(&str, &str)]) -> Command {
    let mut c = ask_user_test_support::hermetic_command(program, home);
    c.env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .envs(env.iter().copied());
    c
}

fn run_ok(home: &Path, args: &[&str]) -> String {
    let out = command(home, args, &[]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The hub: one `ask-user hub serve` on a SQLite store, or two replicas on one Postgres
/// database; each on a fixed port, so it can be killed and restarted where agents look for it.
pub(crate) struct Hub {
    home: PathBuf,
    store: String,
    listens: Vec<String>,
    /// Every replica's URL, comma-separated (what agents pass to `--hub`).
    pub(crate) url: String,
    /// The replica the human's browser talks to (the last).
    pub(crate) human_url: String,
    procs: Vec<Option<Proc>>,
}

impl Hub {
    /// One replica on SQLite in `home`, or `replicas` on the Postgres database `postgres`.
    pub(crate) fn new(home: &Path, postgres: Option<&str>, replicas: usize) -> Hub {
        let store = match postgres {
            Some(url) => url.to_owned(),
            None => format!("sqlite:{}", home.join("hub.sqlite3").display()),
        };
        let listens: Vec<String> = (0..replicas.max(1))
            .map(|_| format!("127.0.0.1:{}", ask_user_test_support::free_port()))
            .collect();
        let urls: Vec<String> = listens.iter().map(|l| format!("http://{l}")).collect();
        let mut hub = Hub {
            home: home.to_owned(),
            store,
            url: urls.join(","),
            human_url: urls.last().cloned().unwrap_or_default(),
            procs: (0..listens.len()).map(|_| None).collect(),
            listens,
        };
        for r in 0..hub.listens.len() {
            hub.start(r);
        }
        hub
    }

    fn start(&mut self, replica: usize) {
        let mut child = command(
            &self.home,
            &[
                "hub",
                "serve",
                "--listen",
                &self.listens[replica],
                "--store",
                &self.store,
            ],
            &[],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("serving on ") {
                    let _ = tx.send(());
                }
            }
        });
        let proc = Proc(child);
        rx.recv_timeout(DEADLINE)
            .expect("the hub printed its address");
        self.procs[replica] = Some(proc);
    }

    /// `kill -9` of one replica, then a restart on the same port.
    pub(crate) fn crash_and_restart(&mut self, replica: usize) {
        let r = replica % self.procs.len();
        self.procs[r] = None;
        self.start(r);
    }

    /// How many replicas run.
    pub(crate) fn replicas(&self) -> usize {
        self.procs.len()
    }

    pub(crate) fn token(&self, name: &str) -> String {
        run_ok(
            &self.home,
            &["hub", "token", "add", name, "--store", &self.store],
        )
    }

    pub(crate) fn login_link(&self) -> String {
        run_ok(
            &self.home,
            &[
                "hub",
                "login-link",
                "--store",
                &self.store,
                "--url",
                &self.human_url,
            ],
        )
    }
}

/// What the ledger holds at the end.
#[derive(Debug, Default, Clone)]
pub(crate) struct Ledger {
    /// Agent → the labels the human was told were sent, with when, and the hub ask id.
    pub(crate) acked: BTreeMap<usize, Vec<(String, Instant, i64)>>,
    /// Agent → what it printed (the label of an answer), with when.
    pub(crate) printed: BTreeMap<usize, Vec<(String, Instant)>>,
    /// Agent → the hub ask ids the human saw for it.
    pub(crate) cards: BTreeMap<usize, BTreeSet<i64>>,
    /// Agents whose process did not end within its bound.
    pub(crate) hung: BTreeSet<usize>,
    /// Agents whose last process printed an error (a timeout, …) and ended: the model read it
    /// and moved on. An agent here with an acknowledged answer was told "sent" on the hub while
    /// its agent printed something else.
    pub(crate) printed_else: BTreeSet<usize>,
    /// Processes started (first runs and retries).
    pub(crate) processes: usize,
    /// Faults injected, by kind.
    pub(crate) faults: BTreeMap<&'static str, usize>,
    /// What happened to each agent, in order (printed for the agents a count names).
    pub(crate) trace: BTreeMap<usize, Vec<String>>,
    /// When the run started.
    pub(crate) started: Option<Instant>,
}

impl Ledger {
    fn log(&mut self, i: usize, what: String) {
        let ms = self.started.map_or(0, |s| s.elapsed().as_millis());
        self.trace
            .entry(i)
            .or_default()
            .push(format!("{ms} ms: {what}"));
    }

    /// The trace of every agent that was lost, misdelivered, asked twice or hung.
    pub(crate) fn suspects(&self, agents: usize) -> String {
        let mut out = String::new();
        for i in 0..agents {
            let acked = self.acked.get(&i).cloned().unwrap_or_default();
            let printed = self.printed.get(&i).cloned().unwrap_or_default();
            let cards = self.cards.get(&i).cloned().unwrap_or_default();
            let bad = (!acked.is_empty()
                && !printed
                    .iter()
                    .any(|(l, _)| acked.iter().any(|(a, _, _)| a == l)))
                || printed.iter().any(|(l, _)| *l != label(i))
                || acked
                    .first()
                    .is_some_and(|a| cards.iter().any(|id| *id > a.2))
                || self.hung.contains(&i);
            if bad {
                out.push_str(&format!("  agent {i} (cards {cards:?}):\n"));
                for line in self.trace.get(&i).into_iter().flatten() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        }
        out
    }
}

/// The counts a run prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) asked: usize,
    pub(crate) acknowledged: usize,
    pub(crate) delivered: usize,
    pub(crate) lost: usize,
    pub(crate) misdelivered: usize,
    pub(crate) asked_twice: usize,
    pub(crate) hung: usize,
    /// Acknowledged agents ("sent" on the hub) whose agent printed something else and moved on.
    pub(crate) told_sent_printed_else: usize,
}

impl Ledger {
    pub(crate) fn counts(&self, agents: usize) -> Counts {
        let mut c = Counts {
            asked: agents,
            acknowledged: 0,
            delivered: 0,
            lost: 0,
            misdelivered: 0,
            asked_twice: 0,
            hung: self.hung.len(),
            told_sent_printed_else: 0,
        };
        for i in 0..agents {
            let acked = self.acked.get(&i).cloned().unwrap_or_default();
            let printed = self.printed.get(&i).cloned().unwrap_or_default();
            if !acked.is_empty() {
                c.acknowledged += 1;
                if self.printed_else.contains(&i) && !self.printed.contains_key(&i) {
                    c.told_sent_printed_else += 1;
                }
                if printed
                    .iter()
                    .any(|(l, _)| acked.iter().any(|(a, _, _)| a == l))
                {
                    c.delivered += 1;
                } else {
                    c.lost += 1;
                }
            }
            c.misdelivered += printed.iter().filter(|(l, _)| *l != label(i)).count();
            // A second card after an answer was acknowledged on the first: asked again.
            let cards = self.cards.get(&i).cloned().unwrap_or_default();
            if let Some(first_ack) = acked.first()
                && cards.iter().any(|id| *id > first_ack.2)
            {
                c.asked_twice += 1;
            }
        }
        c
    }

    /// Answer → agent: from the human's 200 to the agent's stdout, in milliseconds, sorted.
    pub(crate) fn latencies(&self) -> Vec<u128> {
        let mut out = Vec::new();
        for (i, acks) in &self.acked {
            let Some((_, acked_at, _)) = acks.first() else {
                continue;
            };
            if let Some((_, at)) = self.printed.get(i).and_then(|p| p.first()) {
                out.push(at.saturating_duration_since(*acked_at).as_millis());
            }
        }
        out.sort_unstable();
        out
    }
}

/// The option agent `i`'s human chooses (each agent's options are its own).
pub(crate) fn label(i: usize) -> String {
    format!("yes-{i}")
}

fn question(i: usize) -> String {
    json!({"questions": [{"id": "go", "question": format!("Deploy build {i}?"),
        "options": [label(i), format!("no-{i}")]}]})
    .to_string()
}

/// Percentile `p` (0–100) of sorted `v`.
pub(crate) fn percentile(v: &[u128], p: usize) -> u128 {
    if v.is_empty() {
        return 0;
    }
    v[((v.len() - 1) * p) / 100]
}

pub(crate) type Shared = Arc<Mutex<Ledger>>;

fn note(ledger: &Shared, f: impl FnOnce(&mut Ledger)) {
    f(&mut ledger
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner));
}

/// How one agent process ended.
#[derive(Debug)]
enum Exit {
    /// It printed this answer label.
    Answered(String),
    /// It exited with this status without an answer (timed out 5, aborted 130, …).
    Status(Option<i32>),
    /// The harness killed it (SIGKILL).
    Killed,
    /// It did not end within its bound; killed.
    Hung,
}

/// One agent process: asks agent `i`'s question with `--key agent-i`; `fault` is a signal and
/// when to send it.
fn agent_once(
    home: &Path,
    hub_url: &str,
    token: &str,
    i: usize,
    timeout: Duration,
    fault: Option<(&'static str, Duration)>,
) -> Exit {
    let local = format!("sqlite:{}", home.join("local.sqlite3").display());
    let timeout_arg = format!("{}ms", timeout.as_millis());
    let key = format!("agent-{i}");
    // No controlling terminal (`setsid`), so only the hub can answer; setsid execs in place
    // (the child is not a group leader), so its pid is the agent's.
    let mut c = hermetic(
        "setsid",
        home,
        &[("ASK_USER_STORE", &local), ("ASK_USER_HUB_TOKEN", token)],
    );
    c.arg("--wait").arg(BIN).args([
        "ask",
        "--hub",
        hub_url,
        "--key",
        &key,
        "--timeout",
        &timeout_arg,
    ]);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(home.join("stderr.txt"))
            .unwrap(),
    );
    let mut proc = Proc(c.spawn().unwrap());
    let mut stdin = proc.0.stdin.take().unwrap();
    let _ = stdin.write_all(question(i).as_bytes());
    drop(stdin);
    let started = Instant::now();
    let bound = timeout + Duration::from_secs(15);
    let mut fault = fault;
    loop {
        if let Some(status) = proc.0.try_wait().unwrap() {
            let mut out = String::new();
            if let Some(mut s) = proc.0.stdout.take() {
                let _ = std::io::Read::read_to_string(&mut s, &mut out);
            }
            let parsed: Option<Value> = serde_json::from_str(&out).ok();
            if let Some(l) = parsed
                .as_ref()
                .and_then(|v| v.pointer("/answers/0/selected/0"))
                .and_then(Value::as_str)
            {
                return Exit::Answered(l.to_owned());
            }
            return match status.code() {
                None => Exit::Killed,
                code => Exit::Status(code),
            };
        }
        if let Some((what, after)) = fault
            && started.elapsed() >= after
        {
            fault = None;
            let signal = if what == "kill" {
                ask_user_test_support::Signal::KILL
            } else {
                ask_user_test_support::Signal::TERM
            };
            ask_user_test_support::signal(proc.0.id(), signal);
        }
        if started.elapsed() > bound {
            return Exit::Hung;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One logical agent: runs until it printed an answer, or timed out with nothing acknowledged
/// (the model moved on), retrying with the same key after a kill, a signal, or a timeout that
/// lost an acknowledged answer.
fn agent(
    dir: &Path,
    hub: &Arc<Mutex<Hub>>,
    token: &str,
    i: usize,
    config: &Config,
    ledger: &Shared,
) {
    let home = dir.join(format!("agent-{i}"));
    std::fs::create_dir_all(&home).unwrap();
    let mut rng = Rng(config.seed ^ (i as u64).wrapping_mul(0x9E37));
    for _attempt in 0..8 {
        let url = hub
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .url
            .clone();
        let drawn = Duration::from_millis(1500 + rng.below(3000));
        let timeout = if config.racing_timeouts {
            drawn
        } else {
            Duration::from_secs(60)
        };
        let roll = rng.below(100);
        let fault = if roll < config.kill_agents {
            Some(("kill", Duration::from_millis(200 + rng.below(3000))))
        } else if roll < config.kill_agents + config.term_agents {
            Some(("term", Duration::from_millis(200 + rng.below(3000))))
        } else {
            None
        };
        if let Some((what, _)) = fault {
            note(ledger, |l| {
                *l.faults
                    .entry(if what == "kill" {
                        "agent kill -9"
                    } else {
                        "agent SIGTERM"
                    })
                    .or_default() += 1
            });
        }
        note(ledger, |l| {
            l.processes += 1;
            l.log(
                i,
                format!(
                    "starts, --timeout {} ms, fault {fault:?}",
                    timeout.as_millis()
                ),
            );
        });
        let exit = agent_once(&home, &url, token, i, timeout, fault);
        let stderr = std::fs::read_to_string(home.join("stderr.txt")).unwrap_or_default();
        let _ = std::fs::remove_file(home.join("stderr.txt"));
        let said: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        note(ledger, |l| {
            l.log(i, format!("ends: {exit:?}; stderr: {said:?}"))
        });
        match exit {
            Exit::Answered(label) => {
                note(ledger, |l| {
                    l.printed
                        .entry(i)
                        .or_default()
                        .push((label, Instant::now()))
                });
                return;
            }
            Exit::Hung => {
                note(ledger, |l| {
                    l.hung.insert(i);
                });
                return;
            }
            // Interrupted: the model's command was killed or aborted; it runs it again (same
            // arguments, same key).
            Exit::Killed | Exit::Status(Some(130)) => {}
            // It printed an error (a timeout): the model read it and moves on. It knows
            // nothing of what the hub told the human.
            Exit::Status(_) => {
                note(ledger, |l| {
                    l.printed_else.insert(i);
                });
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in with a fresh login link: the session cookie.
async fn sign_in(hub: &Arc<Mutex<Hub>>) -> String {
    let (link, url) = {
        let h = hub
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (h.login_link(), h.human_url.clone())
    };
    let resp = http()
        .post(&link)
        .header("Origin", &url)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303, "sign-in");
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_owned();
    cookie.split(';').next().unwrap_or_default().to_owned()
}

/// The scripted human: reads the hub's inbox, answers each agent's card with that agent's
/// option after a random delay (seeded), and writes every 200 in the ledger.
async fn human(
    hub: Arc<Mutex<Hub>>,
    config: Config,
    ledger: Shared,
    stop: Arc<std::sync::atomic::AtomicBool>,
) {
    let url = hub
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .human_url
        .clone();
    let cookie = sign_in(&hub).await;
    let mut rng = Rng(config.seed.wrapping_mul(31).wrapping_add(7));
    let mut due: BTreeMap<i64, Instant> = BTreeMap::new();
    let mut done: BTreeSet<i64> = BTreeSet::new();
    let client = http();
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(40)).await;
        let Ok(resp) = client
            .get(format!("{url}/inbox/state"))
            .header("Cookie", &cookie)
            .send()
            .await
        else {
            continue; // the hub is down: it restarts
        };
        let Ok(state) = resp.json::<Value>().await else {
            continue;
        };
        let Some(open) = state["open"].as_array() else {
            continue;
        };
        for card in open {
            let (Some(id), Some(first)) = (
                card["id"].as_i64(),
                card.pointer("/questions/0/options/0/label")
                    .and_then(Value::as_str),
            ) else {
                continue;
            };
            let Some(i) = first
                .strip_prefix("yes-")
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            note(&ledger, |l| {
                l.cards.entry(i).or_default().insert(id);
            });
            if done.contains(&id) {
                continue;
            }
            let when = *due
                .entry(id)
                .or_insert_with(|| Instant::now() + Duration::from_millis(rng.below(4000)));
            if Instant::now() < when {
                continue;
            }
            let sent = client
                .post(format!("{url}/inbox/asks/{id}/answer"))
                .header("Cookie", &cookie)
                .header("Origin", &url)
                .header("Content-Type", "application/json")
                .body(json!({"answers": [{"id": "go", "selected": [label(i)]}]}).to_string())
                .send()
                .await;
            match sent {
                Ok(r) if r.status().as_u16() == 200 => {
                    done.insert(id);
                    note(&ledger, |l| {
                        l.log(i, format!("the human was told sent on card {id}"));
                        l.acked
                            .entry(i)
                            .or_default()
                            .push((label(i), Instant::now(), id));
                    });
                }
                // 409: settled already (timed out, withdrawn); 503/reset: try again later.
                Ok(r) if r.status().as_u16() == 409 || r.status().as_u16() == 404 => {
                    let status = r.status().as_u16();
                    note(&ledger, |l| {
                        l.log(i, format!("the human's answer on card {id}: {status}"))
                    });
                    done.insert(id);
                }
                _ => {}
            }
        }
    }
}

/// One chaos run: the counts, the latencies and the ledger. `restart_postgres` restarts the
/// hub's Postgres (`pg_ctl restart -m immediate`) when `config.restart_postgres_every` asks.
pub(crate) fn run(
    config: &Config,
    restart_postgres: Option<Arc<dyn Fn() + Send + Sync>>,
) -> (Counts, Vec<u128>, Ledger) {
    let dir = tempfile::tempdir().unwrap();
    let replicas = if config.postgres.is_some() { 2 } else { 1 };
    let hub = Arc::new(Mutex::new(Hub::new(
        dir.path(),
        config.postgres.as_deref(),
        replicas,
    )));
    let token = hub
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .token("chaos");
    let ledger: Shared = Arc::new(Mutex::new(Ledger {
        started: Some(Instant::now()),
        ..Ledger::default()
    }));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let human_thread = {
        let (hub, config, ledger, stop) =
            (hub.clone(), config.clone(), ledger.clone(), stop.clone());
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(human(hub, config, ledger, stop));
        })
    };
    let mut killer = config.kill_hub_every.map(|every| {
        let (hub, ledger, stop) = (hub.clone(), ledger.clone(), stop.clone());
        let restart_pg = restart_postgres.clone();
        let pg_every = config.restart_postgres_every;
        std::thread::spawn(move || {
            let mut next = Instant::now() + every;
            let mut next_pg = pg_every.map(|e| Instant::now() + e);
            let mut replica = 0usize;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                if Instant::now() >= next {
                    let mut h = hub
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    h.crash_and_restart(replica);
                    replica = (replica + 1) % h.replicas();
                    drop(h);
                    note(&ledger, |l| {
                        *l.faults.entry("hub kill -9").or_default() += 1
                    });
                    next = Instant::now() + every;
                }
                if let (Some(at), Some(restart), Some(e)) = (next_pg, &restart_pg, pg_every)
                    && Instant::now() >= at
                {
                    restart();
                    note(&ledger, |l| {
                        *l.faults.entry("pg_ctl restart -m immediate").or_default() += 1
                    });
                    next_pg = Some(Instant::now() + e);
                }
            }
        })
    });
    let next = Arc::new(Mutex::new(0usize));
    let workers: Vec<_> = (0..config.parallel)
        .map(|_| {
            let (hub, ledger, next, config, token, dir) = (
                hub.clone(),
                ledger.clone(),
                next.clone(),
                config.clone(),
                token.clone(),
                dir.path().to_owned(),
            );
            std::thread::spawn(move || {
                loop {
                    let i = {
                        let mut n = next
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        let i = *n;
                        *n += 1;
                        i
                    };
                    if i >= config.agents {
                        return;
                    }
                    agent(&dir, &hub, &token, i, &config, &ledger);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    // The promise is "a retry gets it": every agent whose last command was interrupted (killed,
    // aborted) runs it once more, as a model would, no fault, while the hub stays up. An agent
    // that printed an error moved on: no retry (the harness uses no knowledge of
    // acknowledgements to pick who retries).
    if let Some(k) = killer.take() {
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        k.join().unwrap();
        stop.store(false, std::sync::atomic::Ordering::SeqCst);
    }
    let missing: Vec<usize> = {
        let l = ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (0..config.agents)
            .filter(|i| {
                !l.printed.contains_key(i) && !l.printed_else.contains(i) && !l.hung.contains(i)
            })
            .collect()
    };
    for i in missing {
        let url = hub
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .url
            .clone();
        let home = dir.path().join(format!("agent-{i}"));
        note(&ledger, |l| {
            l.processes += 1;
            l.log(i, "the final retry starts".to_owned());
        });
        let exit = agent_once(&home, &url, &token, i, Duration::from_secs(3), None);
        note(&ledger, |l| {
            l.log(i, format!("the final retry ends: {exit:?}"));
            if let Exit::Answered(label) = exit {
                l.printed
                    .entry(i)
                    .or_default()
                    .push((label, Instant::now()));
            }
        });
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    human_thread.join().unwrap();
    let ledger = ledger
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    (ledger.counts(config.agents), ledger.latencies(), ledger)
}

/// The report's text.
pub(crate) fn report(
    config: &Config,
    counts: &Counts,
    latencies: &[u128],
    ledger: &Ledger,
) -> String {
    format!(
        "chaos seed {}: {} agents ({} processes), faults {:?}\n  asked {} / acknowledged {} / delivered {} / lost {} / misdelivered {} / asked twice {} / hung {} / told sent, printed else {}\n  answer → agent: p50 {} ms, p99 {} ms ({} answers)\n{}",
        config.seed,
        config.agents,
        ledger.processes,
        ledger.faults,
        counts.asked,
        counts.acknowledged,
        counts.delivered,
        counts.lost,
        counts.misdelivered,
        counts.asked_twice,
        counts.hung,
        counts.told_sent_printed_else,
        percentile(latencies, 50),
        percentile(latencies, 99),
        latencies.len(),
        ledger.suspects(config.agents),
    )
}
