//! The hub under attack (docs/contract.md §9 "Abuse", "Operations"): each way found to lock
//! the human out, outlive a revocation or leak a secret, against the real `ask-user hub serve`
//! on loopback, bounded in time and size (each test a few seconds). Every process runs with a
//! cleared environment and its own store and directories.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::hub_common::{self, get_signed_in, http};

use ask_user_test_support::Reaped;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Generous: the machine is small and shared.
const DEADLINE: Duration = Duration::from_secs(60);

const QUESTION: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes","No"]}]}"#;

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = hub_common::ask_user_at(dir);
    cmd.args(args);
    cmd
}

fn store(dir: &Path) -> String {
    format!("sqlite:{}", dir.join("hub.sqlite3").display())
}

/// Runs `ask-user ARGS` to completion: (status, stdout, stderr).
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = command(dir, args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn token(dir: &Path, name: &str) -> String {
    let (code, out, err) = run(
        dir,
        &["hub", "token", "add", name, "--store", &store(dir)],
        &[],
    );
    assert_eq!(code, 0, "token add: {err}");
    out.trim().to_owned()
}

/// A running `ask-user hub serve`; killed when dropped.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start(dir: &Path, extra: &[&str]) -> Served {
        Served::start_at(dir, "127.0.0.1:0", extra)
    }

    fn start_at(dir: &Path, listen: &str, extra: &[&str]) -> Served {
        let store = store(dir);
        let mut child = command(
            dir,
            &["hub", "serve", "--listen", listen, "--store", &store],
        )
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let url = hub_common::served_url(&mut child, DEADLINE);
        Served { child, url }
    }

    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }

    fn login_link(&self, dir: &Path) -> String {
        let (code, out, err) = run(
            dir,
            &[
                "hub",
                "login-link",
                "--store",
                &store(dir),
                "--url",
                &self.url,
            ],
            &[],
        );
        assert_eq!(code, 0, "login-link: {err}");
        out.trim().to_owned()
    }

    /// Signs in with a fresh link: the session cookie's value.
    async fn session(&self, dir: &Path) -> String {
        let resp = http()
            .post(self.login_link(dir))
            .header("Origin", &self.url)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 303);
        hub_common::cookie_value(&resp)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn post_ask(url: &str, token: &str) -> i64 {
    let resp = http()
        .post(format!("{url}/v1/asks"))
        .bearer_auth(token)
        .json(&json!({"arguments": serde_json::from_str::<Value>(QUESTION).unwrap()}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap()
}

/// A raw connection that sent `request` and keeps it open.
async fn raw(addr: &str, request: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    s
}

/// Like [`raw`], from 127.0.0.2: a flood from another address than the human's.
async fn raw_from_elsewhere(addr: &str, request: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut s = socket.connect(addr.parse().unwrap()).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    s
}

/// Keeps `n` connections from 127.0.0.2 sending `request` (and `trickle` every 100 ms),
/// reopening each as soon as the hub closes it, until the returned guard is dropped: a
/// flood that churns.
fn churn(
    addr: &str,
    request: String,
    trickle: &'static [u8],
    n: usize,
) -> tokio::task::JoinSet<()> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (addr, request) = (addr.to_owned(), request.clone());
        set.spawn(async move {
            loop {
                let mut s = raw_from_elsewhere(&addr, &request).await;
                let mut buf = [0u8; 1024];
                loop {
                    if !trickle.is_empty() && s.write_all(trickle).await.is_err() {
                        break;
                    }
                    let read =
                        tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await;
                    if let Ok(Ok(0) | Err(_)) = read {
                        break;
                    }
                }
            }
        });
    }
    set
}

/// Reads until the peer closes or `deadline`; what was read, and whether it closed.
async fn read_to_close(s: &mut TcpStream, deadline: Duration) -> (String, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let end = Instant::now() + deadline;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

fn long_poll(addr: &str, token: &str, id: i64) -> String {
    format!(
        "GET /v1/asks/{id}?wait=50 HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
}

/// `?wait=1e300` once panicked the handler (a duration too large to build).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_of_1e300_seconds_is_capped_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let tok = token(dir.path(), "a");
    let hub = Served::start(dir.path(), &[]);
    let id = post_ask(&hub.url, &tok).await;
    let c = http();
    let gone = c
        .delete(format!("{}/v1/asks/{id}", hub.url))
        .bearer_auth(&tok)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 200);
    for wait in ["1e300", "inf", "-5", "NaN"] {
        let resp = c
            .get(format!("{}/v1/asks/{id}?wait={wait}", hub.url))
            .bearer_auth(&tok)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "wait={wait}");
        assert_eq!(resp.json::<Value>().await.unwrap()["state"], "withdrawn");
    }
}

/// One token holds at most 32 requests open; the 33rd is told so (429) while another agent's
/// token is served as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_holds_at_most_its_share_of_open_requests() {
    let dir = tempfile::tempdir().unwrap();
    let greedy = token(dir.path(), "greedy");
    let other = token(dir.path(), "other");
    let hub = Served::start(dir.path(), &[]);
    let id = post_ask(&hub.url, &greedy).await;
    let mut polls = Vec::new();
    for _ in 0..33 {
        polls.push(raw(&hub.addr(), &long_poll(&hub.addr(), &greedy, id)).await);
    }
    // Exactly one of the 33 is refused at once; the others wait.
    let start = Instant::now();
    let (which, refused) = 'found: loop {
        for (i, p) in polls.iter_mut().enumerate() {
            let (reply, closed) = read_to_close(p, Duration::from_millis(20)).await;
            if closed || reply.ends_with('}') {
                break 'found (i, reply);
            }
        }
        assert!(start.elapsed() < DEADLINE, "no request was refused");
    };
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert!(
        refused.ends_with(r#"{"error":"too many requests open at once for this agent's token (at most 32 on one hub): wait for an earlier request to finish, or withdraw asks you no longer need, then retry"}"#),
        "{refused}"
    );
    let mut still = 0;
    polls.remove(which);
    for p in &mut polls {
        if read_to_close(p, Duration::from_millis(20)).await == (String::new(), false) {
            still += 1;
        }
    }
    assert_eq!(still, 32, "the other 32 wait");
    // Another agent is not affected.
    let _theirs = post_ask(&hub.url, &other).await;
    drop(polls);
}

/// Long-polls from many connections, reopened as soon as they are closed, fill the
/// connection cap; the human still signs in and reads the inbox, three times over (an agent's
/// long-poll yields its connection to the human's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_churning_flood_of_long_polls_never_locks_the_human_out() {
    let dir = tempfile::tempdir().unwrap();
    let a = token(dir.path(), "a");
    let b = token(dir.path(), "b");
    let hub = Served::start(dir.path(), &["--max-connections", "24"]);
    let ids = [post_ask(&hub.url, &a).await, post_ask(&hub.url, &b).await];
    let addr = hub.addr();
    let _flood_a = churn(&addr, long_poll(&addr, &a, ids[0]), b"", 30);
    let _flood_b = churn(&addr, long_poll(&addr, &b, ids[1]), b"", 30);
    human_signs_in_and_reads(&hub, dir.path(), 2).await;
}

/// Three times: a fresh sign-in, the page, and the inbox's state with `open` asks.
async fn human_signs_in_and_reads(hub: &Served, dir: &Path, open: usize) {
    for _ in 0..3 {
        let cookie = hub.session(dir).await;
        let page = get_signed_in(&hub.url, &cookie).await;
        assert_eq!(page.status(), 200);
        let state = get_signed_in(&format!("{}/inbox/state", hub.url), &cookie).await;
        assert_eq!(state.status(), 200);
        let state: Value = state.json().await.unwrap();
        assert_eq!(state["open"].as_array().unwrap().len(), open, "{state}");
    }
}

/// A poll waiting when its token is revoked (by another process) ends with 401 instead of
/// receiving the human's answer; the agent's open asks close as "revoked" (not "withdrawn")
/// on the page, and an answer given to one from a page still showing it is refused with that
/// outcome; a new token of the same name finds nothing of them (its own namespace: the old
/// id is "no such ask", the same call opens a new ask). A real agent (`ask --hub`) waiting
/// then ends with the model-facing text that says its token was revoked (exit 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_token_ends_its_waiting_poll_and_closes_its_asks_as_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let tok = token(dir.path(), "leaver");
    let hub = Served::start(dir.path(), &[]);
    let id = post_ask(&hub.url, &tok).await;
    let agent = Reaped::with_input(
        command(dir.path(), &["ask", "--hub", &hub.url])
            .env("ASK_USER_STORE", "memory")
            .env("ASK_USER_HUB_TOKEN", &tok),
        QUESTION.as_bytes(),
    );
    let mut poll = raw(&hub.addr(), &long_poll(&hub.addr(), &tok, id)).await;
    // Let it start waiting (a short read that finds nothing yet).
    let (early, closed) = read_to_close(&mut poll, Duration::from_millis(300)).await;
    assert!(!closed && early.is_empty(), "{early}");
    // The agent's own ask is open too before the revocation.
    let human = hub.session(dir.path()).await;
    let start = Instant::now();
    loop {
        let state = hub_common::inbox(&hub.url, &human).await;
        if state["open"].as_array().unwrap().len() == 2 {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the agent's ask never opened: {state}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (code, _, err) = run(
        dir.path(),
        &[
            "hub",
            "token",
            "revoke",
            "leaver",
            "--store",
            &store(dir.path()),
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let (reply, _) = read_to_close(&mut poll, DEADLINE).await;
    assert!(reply.starts_with("HTTP/1.1 401"), "{reply}");
    assert!(
        reply.contains("this agent's token was revoked while the request waited"),
        "{reply}"
    );
    let cookie = hub.session(dir.path()).await;
    let state = hub_common::inbox(&hub.url, &cookie).await;
    assert_eq!(state["open"], json!([]), "{state}");
    let history = state["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{state}");
    for closed in history {
        assert_eq!(
            (&closed["state"], &closed["agent"]),
            (&json!("revoked"), &json!("leaver")),
            "{state}"
        );
    }
    let (code, out, _) = agent.finish(DEADLINE);
    assert_eq!(
        (code, out.as_str()),
        (
            1,
            "Error: the hub revoked this agent's token while the question was open: nothing the human answers reaches this agent; ask in plain text, or ask the hub's owner for a new token"
        )
    );
    let late = http()
        .post(format!("{}/inbox/asks/{id}/answer", hub.url))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .header("Origin", &hub.url)
        .json(&json!({"answers": [{"id": "go", "selected": ["Yes"]}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(late.status(), 409);
    let late: Value = late.json().await.unwrap();
    assert_eq!(late["counted"]["state"], json!("revoked"), "{late}");

    // The same name again: another token, another namespace.
    let again = token(dir.path(), "leaver");
    let old = http()
        .get(format!("{}/v1/asks/{id}", hub.url))
        .bearer_auth(&again)
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), 404);
    assert_eq!(
        old.json::<Value>().await.unwrap(),
        json!({"error": "no such ask for this agent"})
    );
    let fresh = post_ask(&hub.url, &again).await;
    assert_ne!(fresh, id);
}

/// Signing out ends the page's live event stream (it no longer receives what changes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_ends_the_event_stream() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Served::start(dir.path(), &[]);
    let cookie = hub.session(dir.path()).await;
    let addr = hub.addr();
    let mut stream = raw(
        &addr,
        &format!(
            "GET /inbox/events HTTP/1.1\r\nHost: {addr}\r\nCookie: ask_user_hub={cookie}\r\n\r\n"
        ),
    )
    .await;
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("data: ready") {
        let n = tokio::time::timeout(DEADLINE, stream.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let out = http()
        .post(format!("{}/logout", hub.url))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .header("Origin", &hub.url)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    let (_, closed) = read_to_close(&mut stream, DEADLINE).await;
    assert!(closed, "the event stream outlived its session");
}

/// A path nothing serves still gets the security headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Served::start(dir.path(), &[]);
    for path in ["/nothing-here", "/v1/asks/1"] {
        let resp = http()
            .get(format!("{}{path}", hub.url))
            .send()
            .await
            .unwrap();
        let h = resp.headers();
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        assert_eq!(
            h["content-security-policy"],
            ask_user_hub::CONTENT_SECURITY_POLICY,
            "{path}"
        );
    }
}

/// `--help` never prints the value of `ASK_USER_STORE` (a Postgres URL holds its password).
#[test]
fn help_never_prints_the_store_url() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "postgres://hub:pw-never-shown@db.example/ask";
    for args in [
        &["hub", "serve", "--help"][..],
        &["hub", "token", "add", "--help"][..],
        &["hub", "login-link", "--help"][..],
    ] {
        let (code, out, err) = run(dir.path(), args, &[("ASK_USER_STORE", secret)]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("ASK_USER_STORE"), "{out}");
        assert!(!out.contains("pw-never-shown"), "{args:?}: {out}");
    }
}

/// An http `--public-url` beyond loopback, and `--insecure-http` without a public URL, are
/// refused with what to do.
#[test]
fn plain_http_public_urls_are_refused_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 2] = [
        (
            &["--public-url", "http://hub.example.com"],
            "ask-user: refusing --public-url `http://hub.example.com`: over plain http the human's session cookie and sign-in links travel in clear; give the https:// address (a TLS reverse proxy), or pass --insecure-http if you really mean it",
        ),
        (
            &["--listen", "0.0.0.0:0", "--insecure-http"],
            "ask-user: --insecure-http serves plain HTTP for a TLS reverse proxy: give --public-url https://… (the address browsers reach through the proxy)",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["hub", "serve", "--store", "memory"];
        args.extend_from_slice(extra);
        let (code, _, err) = run(dir.path(), &args, &[]);
        assert_eq!((code, err.trim_end()), (2, want), "{extra:?}");
    }
}

/// A TLS private key others can read is refused.
#[test]
fn a_world_readable_tls_key_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    let ok = ask_user_test_support::tool("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=ask-user hub test",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, _, err) = run(
        dir.path(),
        &[
            "hub",
            "serve",
            "--store",
            "memory",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(
        (code, err.trim_end().to_owned()),
        (
            2,
            format!(
                "ask-user: TLS: {}: the private key is readable by others (mode 644): chmod 600 it",
                key.display()
            )
        )
    );
}

/// SIGTERM (a service manager's stop) drains like SIGINT: exit 0, not 143.
#[test]
fn sigterm_drains_and_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut hub = Served::start(dir.path(), &[]);
    assert!(ask_user_test_support::signal(
        hub.child.id(),
        ask_user_test_support::Signal::TERM
    ));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = hub.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the hub did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A hub with Slack configured (its Web API unreachable: nothing is sent in these tests).
fn slack_hub(dir: &Path, extra: &[&str]) -> Served {
    use std::os::unix::fs::PermissionsExt;
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[slack]\napi_base = \"http://127.0.0.1:1/api\"\ntoken = \"xoxb-test\"\nsigning_secret = \"test-signing-secret\"\nchannel = \"C1\"\nallowed_users = [\"U1\"]\n",
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let port = ask_user_test_support::free_port();
    let listen = format!("127.0.0.1:{port}");
    let public = format!("http://127.0.0.1:{port}");
    let mut args = vec![
        "--public-url",
        &public,
        "--config",
        config.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Served::start_at(dir, &listen, &args)
}

fn slack_post(addr: &str, signed_headers: bool, length: usize) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let sig = if signed_headers {
        format!("X-Slack-Request-Timestamp: {now}\r\nX-Slack-Signature: v0=00\r\n")
    } else {
        String::new()
    };
    format!(
        "POST /channels/slack/interactivity HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n{sig}Content-Length: {length}\r\n\r\n"
    )
}

/// The Slack endpoint reads no body before the signature headers check, at most 128 KiB of
/// one, and not slowly: an unsigned 2 MiB POST is refused before its body, a signed-looking
/// one over the cap at once, a stalled body after the read deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_checks_its_headers_before_the_body_caps_it_and_holds_a_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let hub = slack_hub(dir.path(), &[]);
    let addr = hub.addr();
    let mut unsigned = raw(&addr, &slack_post(&addr, false, 2 << 20)).await;
    let (reply, _) = read_to_close(&mut unsigned, DEADLINE).await;
    assert!(reply.starts_with("HTTP/1.1 401"), "{reply}");
    assert!(
        reply.contains("Slack request signature refused."),
        "{reply}"
    );
    assert!(
        reply
            .to_ascii_lowercase()
            .contains("x-content-type-options: nosniff"),
        "{reply}"
    );
    let mut big = raw(&addr, &slack_post(&addr, true, 2 << 20)).await;
    let (reply, _) = read_to_close(&mut big, DEADLINE).await;
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    let mut slow = raw(&addr, &slack_post(&addr, true, 100)).await;
    slow.write_all(b"payload=").await.unwrap();
    let (reply, _) = read_to_close(&mut slow, DEADLINE).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
}

/// Slow Slack-looking bodies from many connections, reopened as soon as they are closed,
/// fill the cap; the human still signs in and reads the inbox (one address holds at most a
/// quarter of the cap unproven, and its newcomers close its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_churning_flood_of_slow_slack_bodies_never_locks_the_human_out() {
    let dir = tempfile::tempdir().unwrap();
    let hub = slack_hub(dir.path(), &["--max-connections", "24"]);
    let addr = hub.addr();
    let _flood = churn(&addr, slack_post(&addr, true, 100_000), b"p", 60);
    human_signs_in_and_reads(&hub, dir.path(), 0).await;
}

/// One token opens at most 64 asks; the 65th is refused with what to do, and withdrawing one
/// makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_opens_at_most_its_quota_of_asks() {
    let dir = tempfile::tempdir().unwrap();
    let tok = token(dir.path(), "busy");
    let hub = Served::start(dir.path(), &[]);
    let c = http();
    let ask = |n: usize| {
        let q = format!(
            r#"{{"questions":[{{"id":"q","question":"Question {n}?","options":["Yes","No"]}}]}}"#
        );
        c.post(format!("{}/v1/asks", hub.url))
            .bearer_auth(&tok)
            .json(&json!({"arguments": serde_json::from_str::<Value>(&q).unwrap()}))
            .send()
    };
    let mut first = None;
    for n in 0..64 {
        let resp = ask(n).await.unwrap();
        if resp.status() == 429 {
            // Over the rate (20 a second): the test slows down.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let again = ask(n).await.unwrap();
            assert_eq!(again.status(), 200);
            first.get_or_insert(again.json::<Value>().await.unwrap()["id"].as_i64().unwrap());
            continue;
        }
        assert_eq!(resp.status(), 200);
        first.get_or_insert(resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let over = ask(64).await.unwrap();
    assert_eq!(over.status(), 429);
    assert_eq!(
        over.json::<Value>().await.unwrap(),
        json!({"error": "quota: this agent already has 64 asks open, the most one token may; wait for their answers or withdraw the ones no longer needed (DELETE /v1/asks/ID), then ask again"})
    );
    let gone = c
        .delete(format!("{}/v1/asks/{}", hub.url, first.unwrap()))
        .bearer_auth(&tok)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 200);
    assert_eq!(ask(64).await.unwrap().status(), 200);
}

/// The quota counts the token's own asks, by its id, never by name: 64 asks open in the same
/// store by local callers calling themselves like the token (`ask-user mcp` clients, the local
/// user) leave the token its whole quota.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_callers_named_like_a_token_do_not_eat_its_quota() {
    use ask_user_store::{Asker, Namespace, NewAsk, Scope, Store};
    let dir = tempfile::tempdir().unwrap();
    let tok = token(dir.path(), "busy");
    let local = Store::open(&store(dir.path())).await.unwrap();
    for n in 0..64 {
        let asker = Asker {
            agent: Some("busy".to_owned()),
            project: None,
            host: None,
            session: None,
            pid: None,
            process: None,
        };
        let ns = if n % 2 == 0 {
            Namespace::mcp_client("busy")
        } else {
            Namespace::local_user(1000)
        };
        let ask = NewAsk::new(&Scope::HostKey(format!("k{n}")), QUESTION, asker).in_namespace(&ns);
        assert!(local.open_ask(&ask).await.unwrap().record().is_open());
    }
    drop(local);
    let hub = Served::start(dir.path(), &[]);
    post_ask(&hub.url, &tok).await;
}
