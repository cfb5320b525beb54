//! Exactly once through the hub, with real processes (docs/contract.md §8 "Exactly once, made
//! precise"): `ask-user hub serve` on a throwaway SQLite store, agents as `ask-user ask --hub`
//! with cleared environments, the human over the hub's signed-in HTTP API.

use super::hub_common;

use ask_user_test_support::{Reaped, hermetic_command, spawn_with_input};
use hub_common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// An agent run to completion with a cleared environment: its own memory store and state
/// directory, the hub's URL and token, `--key key`; `env` adds variables. (status, stdout).
fn agent(
    hub: &str,
    token: &str,
    key: &str,
    home: &std::path::Path,
    env: &[(&str, &str)],
) -> (i32, String) {
    agent_for(hub, token, key, "60s", home, env)
}

/// [`agent`] with the budget `timeout` (`--timeout`).
fn agent_for(
    hub: &str,
    token: &str,
    key: &str,
    timeout: &str,
    home: &std::path::Path,
    env: &[(&str, &str)],
) -> (i32, String) {
    let mut command = hermetic_command(bin(), home);
    command
        .args(["ask", "--hub", hub, "--key", key, "--timeout", timeout])
        .env("ASK_USER_STORE", "memory")
        .env("ASK_USER_HUB_TOKEN", token)
        .envs(env.iter().copied());
    let (status, out, _) = Reaped::with_input(&mut command, QUESTION.as_bytes()).finish(DEADLINE);
    (status, out)
}

async fn post_ask(hub: &str, token: &str, key: &str) -> Value {
    let resp = http()
        .post(format!("{hub}/v1/asks"))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .body(
            json!({"arguments": serde_json::from_str::<Value>(QUESTION).unwrap(), "key": key})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tokens_with_the_same_key_and_question_hold_two_asks_and_never_share_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let alice = token(&store, "alice");
    let bob = token(&store, "bob");
    let hub = Hub::start(&store, &[]);
    let a = post_ask(&hub.url, &alice, "deploy").await;
    let b = post_ask(&hub.url, &bob, "deploy").await;
    assert_ne!(a["id"], b["id"], "bob's ask must not be alice's");
    let cookie = session(&store, &hub.url).await;
    let (status, _) = human_answer(&hub.url, &cookie, a["id"].as_i64().unwrap(), "Yes").await;
    assert_eq!(status, 200);
    // Bob's retry is bob's own, still open ask; alice's gets her answer.
    let b_again = post_ask(&hub.url, &bob, "deploy").await;
    assert_eq!(
        (b_again["id"].clone(), b_again["state"].clone()),
        (b["id"].clone(), json!("open"))
    );
    let a_again = post_ask(&hub.url, &alice, "deploy").await;
    assert_eq!(a_again["state"], "answered");
    // Bob's token cannot read alice's ask.
    let resp = http()
        .get(format!("{}/v1/asks/{}", hub.url, a["id"]))
        .bearer_auth(&bob)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_after_storing_and_before_printing_leaves_the_answer_for_its_retry() {
    let Served {
        dir,
        token: agent_token,
        hub,
        cookie,
        ..
    } = Served::start("agent").await;
    let url = hub.url.clone();
    let human = tokio::spawn(async move {
        let id = wait_open(&url, &cookie, 1).await[0];
        human_answer(&url, &cookie, id, "No").await
    });
    // The agent dies (abort) after the answer is stored locally, before stdout is written.
    let (hub_url, tok, home) = (hub.url.clone(), agent_token.clone(), dir.path().to_owned());
    let (status, out) = tokio::task::spawn_blocking(move || {
        agent(
            &hub_url,
            &tok,
            "k-1",
            &home,
            &[("ASK_USER_TEST_FAILPOINT", "before-stdout")],
        )
    })
    .await
    .unwrap();
    assert_eq!(
        human.await.unwrap().0,
        200,
        "the human was told it was sent"
    );
    assert_ne!(status, 0);
    assert_eq!(out, "", "nothing printed");
    // The retry (same key) gets that answer at once: the hub was never told "delivered".
    let (hub_url, home) = (hub.url.clone(), dir.path().to_owned());
    let (status, out) =
        tokio::task::spawn_blocking(move || agent(&hub_url, &agent_token, "k-1", &home, &[]))
            .await
            .unwrap();
    assert_eq!((status, out.trim()), (0, ANSWER_NO));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tokens_sharing_one_local_store_and_key_each_print_their_own_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let local = format!("sqlite:{}", dir.path().join("local.sqlite3").display());
    let alice = token(&store, "alice");
    let bob = token(&store, "bob");
    let hub = Hub::start(&store, &[]);
    let cookie = session(&store, &hub.url).await;
    let run = |tok: String| {
        let (hub_url, home, local) = (hub.url.clone(), dir.path().to_owned(), local.clone());
        tokio::task::spawn_blocking(move || {
            agent(&hub_url, &tok, "same", &home, &[("ASK_USER_STORE", &local)])
        })
    };
    let alice_run = run(alice);
    let first = wait_open(&hub.url, &cookie, 1).await[0];
    let bob_run = run(bob);
    let both = wait_open(&hub.url, &cookie, 2).await;
    let second = *both.iter().find(|id| **id != first).unwrap();
    assert_eq!(human_answer(&hub.url, &cookie, first, "Yes").await.0, 200);
    let (status, out) = alice_run.await.unwrap();
    assert_eq!((status, out.trim()), (0, ANSWER_YES));
    assert_eq!(human_answer(&hub.url, &cookie, second, "No").await.0, 200);
    let (status, out) = bob_run.await.unwrap();
    assert_eq!(
        (status, out.trim()),
        (0, ANSWER_NO),
        "bob prints bob's answer, never alice's"
    );
}

/// A proxy in front of the hub (a fake rate limiter, named so): forwards every request, except
/// that the `refuse` requests after the first post get `429 Too Many Requests` with
/// `Retry-After: 1`. Records (when, method and path, status) of every request.
struct RateLimiter {
    url: String,
    log: std::sync::Arc<std::sync::Mutex<Vec<(std::time::Instant, String, u16)>>>,
    _serving: Serving,
}

/// The task serving one of these tests' proxies, stopped when dropped.
struct Serving(tokio::task::JoinHandle<()>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Serves `app` on a loopback port of its own: its URL and the task serving it.
async fn serve(app: axum::Router) -> (String, Serving) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (url, Serving(task))
}

/// `req` sent on to `upstream` (its path and query, its headers but `Host`, its body): the
/// upstream's status, headers and body.
async fn forward(
    upstream: &str,
    req: axum::http::Request<axum::body::Body>,
) -> axum::http::Response<axum::body::Body> {
    let mut out = http().request(
        req.method().clone(),
        format!(
            "{upstream}{}",
            req.uri().path_and_query().map_or("", |p| p.as_str())
        ),
    );
    for (name, value) in req.headers() {
        if name != "host" {
            out = out.header(name, value);
        }
    }
    let body = axum::body::to_bytes(req.into_body(), 1 << 20)
        .await
        .unwrap();
    let resp = out.body(body).send().await.unwrap();
    let mut back = axum::http::Response::builder().status(resp.status().as_u16());
    for (name, value) in resp.headers() {
        back = back.header(name, value);
    }
    back.body(axum::body::Body::from(resp.bytes().await.unwrap()))
        .unwrap()
}

async fn rate_limiter(upstream: String, refuse: usize) -> RateLimiter {
    use axum::body::Body;
    use axum::http::{Request, Response};
    use std::sync::{Arc, Mutex};
    let log: Arc<Mutex<Vec<(std::time::Instant, String, u16)>>> = Arc::default();
    let left = Arc::new(std::sync::atomic::AtomicUsize::new(refuse));
    let handler = {
        let log = log.clone();
        move |req: Request<Body>| {
            let (log, left, upstream) = (log.clone(), left.clone(), upstream.clone());
            async move {
                let what = format!("{} {}", req.method(), req.uri().path());
                let posted = log
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|(_, w, s)| w == "POST /v1/asks" && *s == 200);
                let take = |n: usize| n.checked_sub(1);
                if posted
                    && left
                        .fetch_update(
                            std::sync::atomic::Ordering::SeqCst,
                            std::sync::atomic::Ordering::SeqCst,
                            take,
                        )
                        .is_ok()
                {
                    log.lock()
                        .unwrap()
                        .push((std::time::Instant::now(), what, 429));
                    return Response::builder()
                        .status(429)
                        .header("retry-after", "1")
                        .header("content-type", "application/json")
                        .body(Body::from(
                            r#"{"error":"rate limited: slow down and retry"}"#,
                        ))
                        .unwrap();
                }
                let back = forward(&upstream, req).await;
                log.lock()
                    .unwrap()
                    .push((std::time::Instant::now(), what, back.status().as_u16()));
                back
            }
        }
    };
    let (url, serving) = serve(axum::Router::new().fallback(handler)).await;
    RateLimiter {
        url,
        log,
        _serving: serving,
    }
}

/// 429 after the first post is transient (docs/contract.md §8): the agent honours
/// `Retry-After` within its budget, keeps its ask, and prints the answer the human gives after
/// it (it used to exit with "rate limited … slow down and retry", and the answer reached
/// nobody).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_told_429_after_its_post_waits_retry_after_and_gets_the_answer() {
    let Served {
        dir,
        token: agent_token,
        hub,
        cookie,
        ..
    } = Served::start("agent").await;
    let limiter = rate_limiter(hub.url.clone(), 3).await;
    let (proxy, home) = (limiter.url.clone(), dir.path().to_owned());
    let agent =
        tokio::task::spawn_blocking(move || agent(&proxy, &agent_token, "k-429", &home, &[]));
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    // The human answers once the agent was refused three times.
    let deadline = std::time::Instant::now() + DEADLINE;
    while limiter
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.2 == 429)
        .count()
        < 3
    {
        assert!(std::time::Instant::now() < deadline, "never rate limited");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(human_answer(&hub.url, &cookie, id, "Yes").await.0, 200);
    let (status, out) = agent.await.unwrap();
    assert_eq!((status, out.trim()), (0, ANSWER_YES));
    // Each request after a 429 came at least its Retry-After (1 s) later.
    let log = limiter.log.lock().unwrap().clone();
    for pair in log.windows(2) {
        if pair[0].2 == 429 {
            let gap = pair[1].0.duration_since(pair[0].0);
            assert!(
                gap >= std::time::Duration::from_millis(950),
                "retried {gap:?} after a 429 with Retry-After: 1: {log:?}"
            );
        }
    }
    // One ask on the hub: the agent kept its key and re-attached.
    let asks = wait_open(&hub.url, &cookie, 0).await;
    assert!(asks.is_empty(), "{asks:?}");
}

/// What the agent prints (stdout, the model's text; exit 1) when the hub's answer cannot be
/// stored because the local disk is full: the store's own "disk is full" text for `path`.
fn full_disk_text(path: &str) -> String {
    format!(
        "Error: the hub's answer could not be recorded: store {path}: the disk is full; free some space or pick another store with --store"
    )
}

/// A full local disk when the answer is to be stored (a real ENOSPC: the agent's local store
/// is on a 4 MiB tmpfs of its own mount namespace, `unshare -Urm`, filled once its question is
/// on the hub): the answer the hub took is not lost — the agent does not tell the hub
/// "delivered" for an answer it could not store and print, and its retry (same key) prints it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_local_disk_at_the_answer_leaves_it_for_the_retry() {
    use std::io::Write;
    let Served {
        dir,
        token: agent_token,
        hub,
        cookie,
        ..
    } = Served::start("agent").await;
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let local = format!("sqlite:{}", disk.join("store.sqlite3").display());
    let mut command = hermetic_command("unshare", dir.path());
    command
        .args([
            "-Urm",
            "sh",
            "-c",
            r#"mount -t tmpfs -o size=4m tmpfs "$0" && exec "$@""#,
        ])
        .arg(&disk)
        .arg(bin())
        .args([
            "ask",
            "--hub",
            &hub.url,
            "--key",
            "k-full",
            "--timeout",
            "60s",
        ])
        .args(["--store", &local])
        .env("ASK_USER_HUB_TOKEN", &agent_token);
    let child = Reaped::with_input(&mut command, QUESTION.as_bytes());
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    // Fill the agent's disk (its mount namespace, through /proc/PID/root).
    let seen = std::path::PathBuf::from(format!("/proc/{}/root", child.id()))
        .join(disk.strip_prefix("/").unwrap());
    let mut fill = std::fs::File::create(seen.join("fill")).unwrap();
    let block = vec![0u8; 64 * 1024];
    let full = loop {
        if let Err(e) = fill.write_all(&block) {
            break e;
        }
    };
    assert_eq!(full.raw_os_error(), Some(28), "ENOSPC: {full}");
    assert_eq!(human_answer(&hub.url, &cookie, id, "No").await.0, 200);
    let (status_1, printed, stderr) = tokio::task::spawn_blocking(move || child.finish(DEADLINE))
        .await
        .unwrap();
    // One ending: the answer's write met the full disk (every commit appends new WAL pages,
    // and not one page is left), so the call ends as a failure whose text names it — it never
    // prints an answer it could not store, and the hub is not told "delivered".
    let shown = disk.join("store.sqlite3").display().to_string();
    assert_eq!(
        (status_1, printed.as_str()),
        (1, full_disk_text(&shown).as_str()),
        "stderr: {stderr}"
    );
    // The retry (same key, a disk with room) prints the answer.
    let (hub_url, home) = (hub.url.clone(), dir.path().to_owned());
    let (status, retry) =
        tokio::task::spawn_blocking(move || agent(&hub_url, &agent_token, "k-full", &home, &[]))
            .await
            .unwrap();
    assert_eq!(
        (status, retry.trim()),
        (0, ANSWER_NO),
        "first run: {status_1:?} {printed} {stderr}"
    );
}

/// A proxy in front of the hub that lets the human answer exactly when the agent's withdraw is
/// in flight: on the agent's first `DELETE /v1/asks/{id}` (its budget ran out) it first answers
/// `label` as the human (through the hub's signed-in API, not through the proxy), keeps the
/// status the human was shown, then forwards the DELETE. Everything else is forwarded as is.
struct AnswerAtWithdraw {
    url: String,
    /// The human's status (200: told "sent"), once answered.
    human: std::sync::Arc<std::sync::Mutex<Option<u16>>>,
    _serving: Serving,
}

async fn answer_at_withdraw(hub: String, cookie: String, label: &'static str) -> AnswerAtWithdraw {
    use axum::body::Body;
    use axum::http::{Method, Request};
    use std::sync::{Arc, Mutex};
    let human: Arc<Mutex<Option<u16>>> = Arc::default();
    let handler = {
        let human = human.clone();
        move |req: Request<Body>| {
            let (human, hub, cookie) = (human.clone(), hub.clone(), cookie.clone());
            async move {
                if req.method() == Method::DELETE && human.lock().unwrap().is_none() {
                    let id: i64 = req
                        .uri()
                        .path()
                        .trim_start_matches("/v1/asks/")
                        .parse()
                        .unwrap();
                    let (status, _) = human_answer(&hub, &cookie, id, label).await;
                    *human.lock().unwrap() = Some(status);
                }
                forward(&hub, req).await
            }
        }
    };
    let (url, serving) = serve(axum::Router::new().fallback(handler)).await;
    AnswerAtWithdraw {
        url,
        human,
        _serving: serving,
    }
}

/// The human answers on the hub exactly when the agent's budget ran out and
/// its withdraw is on its way. (The budget, 6 s, only has to outlast the agent's start and
/// first post on a loaded machine: with 2 s the budget sometimes ran out before the ask was
/// posted, and nothing was withdrawn.) The hub's compare-and-set took the answer (the human was told
/// "sent"), so the agent prints that answer — not "no answer … not approval" — and tells the
/// hub it was delivered (it used to drop the DELETE's reply and print the timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_taken_by_the_hub_as_the_budget_ran_out_is_what_the_agent_prints() {
    let Served {
        dir,
        token: agent_token,
        hub,
        cookie,
        ..
    } = Served::start("agent").await;
    let proxy = answer_at_withdraw(hub.url.clone(), cookie.clone(), "Yes").await;
    let (via, home) = (proxy.url.clone(), dir.path().to_owned());
    let tok = agent_token.clone();
    let (status, out) =
        tokio::task::spawn_blocking(move || agent_for(&via, &tok, "k-edge", "6s", &home, &[]))
            .await
            .unwrap();
    let told = *proxy.human.lock().unwrap();
    assert_eq!(told, Some(200), "the human was told the answer was sent");
    assert_eq!(
        (status, out.trim()),
        (0, ANSWER_YES),
        "the agent prints the answer the hub took"
    );
    // Delivered: the same key asks anew (an open ask), it is not handed the answer again.
    let again = post_ask(&hub.url, &agent_token, "k-edge").await;
    assert_eq!(again["state"], "open", "{again}");
}

/// An agent re-run (same key, its own SQLite store) with its stderr followed line by line, so
/// a test can wait for what it logs.
struct Rerun {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Rerun {
    fn start(hub: &str, token: &str, extra: &[impl AsRef<std::ffi::OsStr>]) -> Rerun {
        Rerun::start_with(hub, token, extra, &[])
    }

    /// [`Rerun::start`] with more environment variables (test knobs).
    fn start_with(
        hub: &str,
        token: &str,
        extra: &[impl AsRef<std::ffi::OsStr>],
        env: &[(&str, &str)],
    ) -> Rerun {
        use std::io::BufRead;
        let mut child = spawn_with_input(
            ask_user()
                .args(["ask", "--hub", hub])
                .args(extra)
                .env("ASK_USER_HUB_TOKEN", token)
                .envs(env.iter().copied()),
            QUESTION.as_bytes(),
        );
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        Rerun { child, lines }
    }

    /// Waits for a stderr line containing `text` (or the end of stderr: the process ended).
    fn wait_for(&self, text: &str) -> Option<String> {
        loop {
            match self.lines.recv_timeout(DEADLINE) {
                Ok(line) if line.contains(text) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// Waits for the end: (status, stdout).
    fn finish(mut self) -> (i32, String) {
        use std::io::Read;
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = self.child.wait().unwrap();
        (status.code().unwrap_or(-1), out)
    }
}

impl Drop for Rerun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first run of a keyed call (`--key KEY --timeout 5m`, its own SQLite store) whose
/// question reached the hub, then aborted by its caller (SIGTERM: detached); its hub then
/// killed. What a re-run of the same call meets.
struct FirstRun {
    dir: tempfile::TempDir,
    store: String,
    key: &'static str,
    token: String,
    /// The hub's URL (the same once it is back).
    url: String,
    cookie: String,
    /// The first run's question on the hub.
    id: i64,
}

impl FirstRun {
    async fn detached_then_hub_down(key: &'static str) -> FirstRun {
        let Served {
            dir,
            store,
            token,
            mut hub,
            cookie,
        } = Served::start("agent").await;
        let mut first = FirstRun {
            dir,
            store,
            key,
            token,
            url: hub.url.clone(),
            cookie,
            id: 0,
        };
        let run = Rerun::start(&first.url, &first.token, &first.extra());
        first.id = wait_open(&first.url, &first.cookie, 1).await[0];
        assert!(ask_user_test_support::signal(
            run.child.id(),
            ask_user_test_support::Signal::TERM
        ));
        assert_eq!(run.finish().0, 130, "the first run was aborted");
        hub.kill();
        first
    }

    /// The arguments of the call after the question: its key, budget and local store.
    fn extra(&self) -> Vec<String> {
        let local = format!("sqlite:{}", self.dir.path().join("local.sqlite3").display());
        ["--key", self.key, "--timeout", "5m", "--store", &local]
            .map(str::to_owned)
            .to_vec()
    }

    /// The hub back on its address, the first run's question its only open one, answered "Yes"
    /// by the human.
    async fn hub_back_and_answered(&self) -> Hub {
        let hub = Hub::start_at(self.url.trim_start_matches("http://"), &self.store, &[]);
        let open = wait_open(&hub.url, &self.cookie, 1).await;
        assert_eq!(open, vec![self.id], "one question, the first run's");
        let (status, _) = human_answer(&hub.url, &self.cookie, self.id, "Yes").await;
        assert_eq!(status, 200);
        hub
    }
}

/// A keyed re-run that starts while its hub is down (restarting) does not
/// end as "nobody can answer" (exit 6) nor withdraw its local ask: a refused connection is
/// transient for a keyed call. Once the hub is back it re-attaches to the question the first
/// run posted, and prints the answer the human gives there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_rerun_while_the_hub_restarts_reattaches_and_gets_the_answer() {
    let first = FirstRun::detached_then_hub_down("k-restart").await;
    // The re-run starts while the hub is down, and tries it.
    let rerun = Rerun::start(&first.url, &first.token, &first.extra());
    let tried = rerun.wait_for(&first.url);
    assert!(tried.is_some(), "the re-run never tried the hub");
    // The hub is back on the same address: the re-run re-attaches to the same question.
    let _hub = first.hub_back_and_answered().await;
    let (code, out) = rerun.finish();
    assert_eq!(
        (code, out.trim()),
        (0, ANSWER_YES),
        "the re-run prints the answer (it used to exit 6: {tried:?})"
    );
}

/// A keyed re-run whose hub stays down **past the first post's patience** (30 s; shortened
/// here by a test knob) keeps its question: its store holds the open ask of this key, so it is
/// not "nobody can answer" (exit 6) and its local ask is not withdrawn. It keeps trying the
/// hub within its budget, re-attaches when the hub is back, and prints the answer given there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_rerun_whose_hub_stays_down_past_the_patience_keeps_its_question() {
    let first = FirstRun::detached_then_hub_down("k-down").await;
    // The re-run's first post gives up on the hub after 200 ms (instead of 30 s)…
    let rerun = Rerun::start_with(
        &first.url,
        &first.token,
        &first.extra(),
        &[("ASK_USER_TEST_HUB_PATIENCE_MS", "200")],
    );
    // …and says it keeps the question and tries again (it used to exit 6 here).
    let kept = rerun.wait_for("the question stays stored for this call");
    assert!(
        kept.is_some(),
        "the re-run ended instead of keeping its question"
    );
    let _hub = first.hub_back_and_answered().await;
    let (code, out) = rerun.finish();
    assert_eq!(
        (code, out.trim()),
        (0, ANSWER_YES),
        "the re-run prints the answer given once the hub is back (said: {kept:?})"
    );
}
