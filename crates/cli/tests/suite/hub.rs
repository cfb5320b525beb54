//! The hub as it runs (docs/contract.md §9): real `ask-user hub serve` processes, real
//! Postgres (the store's throwaway-cluster harness), real headless Chromium (playwright-core,
//! `tests/hub/inbox.cjs`), agents as real `ask-user ask --hub` processes.

use ask_user_test_support::postgres as pg;

use super::exactly_once_stored::{answer_with, open_asks};
use super::hub_common;

use hub_common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Runs the Chromium driver; its `RESULT` JSON.
fn browser(args: &[&str]) -> Value {
    browser_env(args, &[])
}

/// [`browser`] with `env` set for the driver (a token it needs: never in its argv).
fn browser_env(args: &[&str], env: &[(&str, &str)]) -> Value {
    browser_script("hub/inbox.cjs", args, env)
}

/// Runs the futures concurrently on this task and collects their outputs.
async fn futures_like_join<F>(futs: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    for f in futs {
        set.spawn(f);
    }
    set.join_all().await
}

/// An answer given on this machine while the replica the agent asked through hangs (SIGSTOP):
/// the hub's copy of the question is withdrawn through the other replica, so the phone can no
/// longer take an answer — and tell its human "sent" — for a call that already printed this
/// one. Before, the withdraw was tried once, on the hung replica, and the copy stayed open:
/// the human's Send on the phone was taken (200) after the agent had printed "No".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answered_here_while_a_replica_hangs_the_hubs_copy_is_withdrawn_through_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let store = pg::fresh_database().await;
    let tok = token(&store, "laptop-claude");
    let a = Hub::start(&store, &[]);
    let b = Hub::start(&store, &[]);
    let urls = format!("{},{}", a.url, b.url);
    let local = format!("sqlite:{}", dir.path().join("local.sqlite3").display());
    let extra = ["--via", "inbox,hub", "--store", &local, "--timeout", "5m"];
    let agent = Agent::start_with(&urls, &tok, "here", &extra);
    let cookie = session(&store, &b.url).await;
    let id = wait_open(&b.url, &cookie, 1).await[0];
    let mine = ask_user_store::Store::open(&local).await.unwrap();
    let here = open_asks(&mine, "the local ask", |open| !open.is_empty()).await;
    // A hangs: every request to it waits, the agent's long-poll too (so it stays on A).
    assert!(ask_user_test_support::signal(
        a.child.id(),
        ask_user_test_support::Signal::STOP
    ));
    // The human answers on this machine, as `ask-user inbox` stores it.
    answer_with(&mine, &here[0], ANSWER_NO).await;
    let (code, out, err) = tokio::task::spawn_blocking(move || agent.finish())
        .await
        .unwrap();
    assert_eq!((code, out.as_str()), (0, ANSWER_NO), "{err}");
    // The phone cannot take an answer for it any more.
    let (status, body) = human_answer(&b.url, &cookie, id, "Yes").await;
    assert_eq!(status, 409, "{body}\n{err}");
    assert_eq!(inbox(&b.url, &cookie).await["open"], json!([]));
}

/// An agent waits on replica A; the human answers in Chromium on replica B's inbox (the first
/// Send's response lost: the retry is told "sent"); the agent prints the answer. Then A is killed (SIGKILL) while the agent waits: the agent reconnects to
/// B, re-attaches with its call key, and still gets the answer given meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_on_postgres_answer_on_b_reaches_agent_on_a_even_after_a_is_killed() {
    let store = pg::fresh_database().await;
    let tok = token(&store, "laptop-claude");
    let mut a = Hub::start(&store, &[]);
    let b = Hub::start(&store, &[]);
    let urls = format!("{},{}", a.url, b.url);

    // 1. Answer on B, in the browser, while the agent waits on A.
    let agent = Agent::start(&urls, &tok, "fix the build");
    let cookie = session(&store, &b.url).await;
    let ids = wait_open(&b.url, &cookie, 1).await;
    let state = inbox(&b.url, &cookie).await;
    assert_eq!(state["open"][0]["agent"], "laptop-claude");
    assert_eq!(state["open"][0]["session"], "fix the build");
    let link = login_link(&store, &b.url);
    // The first Send reaches the hub but its response is cut: the card says to try again, the
    // human clicks Send again, and the retry (the same idempotency id) is told "sent" — the
    // answer was taken — never "another answer counted".
    let seen = browser(&["answer", &link, "Yes", "cut"]);
    let keys = seen["cut"]["keys"].as_array().unwrap();
    assert!(keys[0].as_str().is_some_and(|k| k.len() == 32), "{seen}");
    assert_eq!(keys.len(), 2, "{seen}");
    assert_eq!(keys[0], keys[1], "one idempotency id, sent twice: {seen}");
    assert_eq!(
        seen["cut"]["error"],
        "not sent: the hub did not answer; try again"
    );
    assert_eq!(seen["agent"], "laptop-claude");
    assert_eq!(seen["note"], "sent to laptop-claude");
    assert_eq!(seen["sent"], json!(["Deploy now?: Yes"]), "{seen}");
    let history = seen["history"].as_str().unwrap();
    assert!(
        history.starts_with("✔ answered in the inbox — laptop-claude (")
            && history.ends_with("): Deploy now? → Yes"),
        "labels, not ids: {seen}"
    );
    assert_eq!(
        seen["errors"],
        json!([]),
        "console errors (CSP?) on the page"
    );
    agent.prints(ANSWER_YES);
    let state = inbox(&b.url, &cookie).await;
    assert_eq!(state["history"][0]["id"], ids[0]);
    assert_eq!(state["history"][0]["state"], "answered");

    // 2. A dies mid-wait; the answer given on B meanwhile still reaches the agent.
    let agent = Agent::start(&urls, &tok, "second");
    wait_open(&b.url, &cookie, 1).await;
    a.kill();
    let id = wait_open(&b.url, &cookie, 1).await[0];
    let (status, body) = human_answer(&b.url, &cookie, id, "No").await;
    assert_eq!((status, body), (200, json!({"sent": true})));
    let (code, out, err) = agent.finish();
    assert_eq!((code, out.as_str()), (0, ANSWER_NO), "{err}");
}

/// Two humans answer the same ask at once, on A and on B: exactly one wins everywhere; the
/// other is told which answer counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_answers_at_once_on_two_replicas_exactly_one_wins() {
    let store = pg::fresh_database().await;
    let tok = token(&store, "ci");
    let a = Hub::start(&store, &[]);
    let b = Hub::start(&store, &[]);
    for round in 0..5 {
        let posted: Value = http()
            .post(format!("{}/v1/asks", a.url))
            .bearer_auth(&tok)
            .json(&json!({"arguments": serde_json::from_str::<Value>(QUESTION).unwrap(), "key": format!("race-{round}")}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = posted["id"].as_i64().unwrap();
        let ca = session(&store, &a.url).await;
        let cb = session(&store, &b.url).await;
        let (ra, rb) = tokio::join!(
            human_answer(&a.url, &ca, id, "Yes"),
            human_answer(&b.url, &cb, id, "No")
        );
        let (won, lost, winner) = match (ra.0, rb.0) {
            (200, 409) => (ra, rb, "Yes"),
            (409, 200) => (rb, ra, "No"),
            other => panic!("expected one 200 and one 409, got {other:?}: {ra:?} {rb:?}"),
        };
        assert_eq!(won.1, json!({"sent": true}));
        assert_eq!(
            lost.1["error"],
            "not sent: this question was already closed elsewhere; the outcome that counted is shown"
        );
        assert_eq!(
            lost.1["counted"]["answers"]["answers"][0]["selected"][0],
            winner
        );
        // The agent, on either replica, reads the winner.
        for hub in [&a, &b] {
            let view = agent_view(&hub.url, &tok, id).await;
            assert_eq!(view["answers"]["answers"][0]["selected"][0], winner);
        }
    }
}

/// Everything the hub refuses, with the texts pinned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_tokens_login_links_csrf_host_and_plain_http() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let mine = token(&store, "mine");
    let theirs = token(&store, "theirs");
    let hub = Hub::start(&store, &[]);
    let c = http();
    let unauthorized = json!({"error": "unauthorized: this request needs a valid agent token (Authorization: Bearer …; ask-user hub token add NAME makes one)"});
    let no_such = json!({"error": "no such ask for this agent"});
    let posted: Value = c
        .post(format!("{}/v1/asks", hub.url))
        .bearer_auth(&mine)
        .json(&json!({"arguments": serde_json::from_str::<Value>(QUESTION).unwrap()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = posted["id"].as_i64().unwrap();
    assert_eq!(posted["state"], "open");
    let get = |tok: Option<String>, id: i64| {
        let mut r = c.get(format!("{}/v1/asks/{id}", hub.url));
        if let Some(t) = tok {
            r = r.bearer_auth(t);
        }
        async move {
            let resp = r.send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
        }
    };
    // No token, a wrong token.
    assert_eq!(get(None, id).await, (401, unauthorized.clone()));
    assert_eq!(
        get(Some("auh_wrong".into()), id).await,
        (401, unauthorized.clone())
    );
    // Another agent's ask looks exactly like one that does not exist, for reading and deleting.
    assert_eq!(get(Some(theirs.clone()), id).await, (404, no_such.clone()));
    assert_eq!(
        get(Some(theirs.clone()), id + 1000).await,
        (404, no_such.clone())
    );
    let del = c
        .delete(format!("{}/v1/asks/{id}", hub.url))
        .bearer_auth(&theirs)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 404);
    assert_eq!(get(Some(mine.clone()), id).await.1["state"], "open");
    // Invalid arguments: the model-facing refusal.
    let bad = c
        .post(format!("{}/v1/asks", hub.url))
        .bearer_auth(&mine)
        .json(&json!({"arguments": {"questions": []}}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    assert_eq!(
        bad.json::<Value>().await.unwrap(),
        json!({"error": "Error: invalid arguments: questions: empty, add at least one question"})
    );
    // A revoked token is refused like a wrong one.
    let (code, _, err) = run(&["hub", "token", "revoke", "mine", "--store", &store]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        get(Some(mine.clone()), id).await,
        (401, unauthorized.clone())
    );
    let (_, listed, _) = run(&["hub", "token", "list", "--store", &store]);
    assert_eq!(listed, "theirs\n");
    let (code, _, err) = run(&["hub", "token", "add", "theirs", "--store", &store]);
    assert_eq!(code, 1);
    assert!(
        err.contains("an agent named `theirs` already has a token; revoke it first (ask-user hub token revoke theirs)"),
        "{err}"
    );

    // Login link: single use; revoked links refused; the cookie's flags.
    let link = login_link(&store, &hub.url);
    let first = c
        .post(&link)
        .header("Origin", &hub.url)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 303);
    let replay = c
        .post(&link)
        .header("Origin", &hub.url)
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 403);
    assert_eq!(
        replay.text().await.unwrap(),
        "This sign-in link was already used, has expired or was revoked. Print a new one with: ask-user hub login-link"
    );
    let unused = login_link(&store, &hub.url);
    let cookie = session(&store, &hub.url).await;
    let (code, out, _) = run(&["hub", "revoke-sessions", "--store", &store]);
    assert_eq!((code, out.as_str()), (0, "revoked 5\n"));
    let revoked = c
        .post(&unused)
        .header("Origin", &hub.url)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 403);
    let signed_out = get_signed_in(&format!("{}/inbox/state", hub.url), &cookie).await;
    assert_eq!(signed_out.status(), 401);
    let page = c.get(&hub.url).send().await.unwrap();
    assert_eq!(page.status(), 401);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("ask-user hub login-link")
    );

    // CSRF: a signed-in browser's cookie sent by another origin's page is refused.
    let cookie = session(&store, &hub.url).await;
    for origin in [Some("http://evil.example"), None] {
        let mut r = c
            .post(format!("{}/inbox/asks/{id}/dismiss", hub.url))
            .header("Cookie", format!("ask_user_hub={cookie}"));
        if let Some(o) = origin {
            r = r.header("Origin", o);
        }
        let resp = r.send().await.unwrap();
        assert_eq!(resp.status(), 403);
        assert_eq!(
            resp.json::<Value>().await.unwrap(),
            json!({"error": "refused: this request did not come from the hub's own page"})
        );
    }
    // DNS rebinding: a foreign Host name is refused even with the cookie.
    let port = hub.url.rsplit(':').next().unwrap();
    let rebound = c
        .get(format!("{}/inbox/state", hub.url))
        .header("Host", format!("rebind.test:{port}"))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 421);
    // The page's headers.
    let page = get_signed_in(&hub.url, &cookie).await;
    assert_eq!(page.status(), 200);
    assert_eq!(
        page.headers()["content-security-policy"],
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    assert!(!page.text().await.unwrap().contains("<script>"));
    // Per-token rate limits: one agent's flood is refused (429) and leaves the others alone.
    let flood = futures_like_join(
        (0..150)
            .map(|_| {
                c.get(format!("{}/v1/asks/{}", hub.url, id + 1000))
                    .bearer_auth(&theirs)
                    .send()
            })
            .collect(),
    )
    .await;
    let limited: Vec<_> = flood
        .into_iter()
        .map(|r| r.unwrap())
        .filter(|r| r.status() == 429)
        .collect();
    assert!(!limited.is_empty(), "150 requests at once meet the limit");
    // Some meet the cap of requests open at once (tests/suite/hub_abuse.rs), the rest the rate.
    let mut texts = Vec::new();
    for r in limited {
        texts.push(r.json::<Value>().await.unwrap());
    }
    let rate = json!({"error": "rate limited: this agent's token sent too many requests; slow down and retry"});
    assert!(texts.contains(&rate), "{texts:?}");
    let other = token(&store, "other");
    assert_eq!(get(Some(other.clone()), id).await, (404, no_such.clone()));
    // A body over the limit.
    let big = c
        .post(format!("{}/v1/asks", hub.url))
        .bearer_auth(&other)
        .header("Content-Type", "application/json")
        .body(vec![b' '; 300 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(big.status(), 413);

    // Plain HTTP on a non-loopback address: refused without --insecure-http.
    let (code, _, err) = run(&["hub", "serve", "--listen", "0.0.0.0:0", "--store", "memory"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "ask-user: refusing to serve the hub over plain HTTP on 0.0.0.0:0, which is not a loopback address: anyone on the network could read its tokens and answers; give --tls-cert and --tls-key, or put it behind a TLS reverse proxy and pass --insecure-http (with --public-url https://…)"
    );
    let open = Hub::start_at(
        "0.0.0.0:0",
        "memory",
        &["--insecure-http", "--public-url", "https://hub.example.com"],
    );
    assert!(open.url.starts_with("http://0.0.0.0:"), "{}", open.url);
}

/// An unreachable hub is a clear error at once (exit 6, nobody can answer), never a hang.
#[test]
fn unreachable_hub_is_a_clear_error_not_a_hang() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let agent = Agent::start(&url, "auh_x", "s");
    let (code, out, err) = agent.finish();
    assert_eq!(code, 6, "{out} {err}");
    assert_eq!(
        out,
        "Error: no way to ask the user is available; ask your question in plain text in your reply instead."
    );
    assert!(
        err.contains(&format!("no hub reachable ({url}: ")),
        "the reason is logged: {err}"
    );
    // A hub that refuses the token: the same for the model, the hub's words in the log.
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let hub = Hub::start(&store, &[]);
    let (code, out, err) = Agent::start(&hub.url, "auh_wrong", "s").finish();
    assert_eq!(code, 6, "{out}");
    assert!(
        err.contains(&format!(
            "the hub {} refused the ask: unauthorized: this request needs a valid agent token",
            hub.url
        )),
        "{err}"
    );
}

/// 300 idle connections without credentials (loopback, bounded) do not stop the human's page:
/// the hub closes the oldest idle connection to make room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connection_flood_does_not_lock_the_human_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let hub = Hub::start(&store, &["--max-connections", "64"]);
    let cookie = session(&store, &hub.url).await;
    let addr = hub.url.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    for _ in 0..3 {
        let resp = get_signed_in(&hub.url, &cookie).await;
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(inbox(&hub.url, &cookie).await["open"], json!([]));
    drop(idle);
}

/// The inbox with asks from three agents at 1280×800 and 390×844 in real Chromium; the
/// screenshots go to `ASK_USER_HUB_SCREENSHOTS` (docs/ when refreshing them) or a temp dir.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbox_screenshots_with_three_agents() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let hub = Hub::start(&store, &[]);
    let asks = [
        (
            "laptop-claude",
            "/home/ana/src/shop",
            "laptop",
            "Fix the checkout bug",
            json!({"questions":[{"id":"db","header":"Migration","question":"The fix needs a schema change. Run the migration on staging now?","options":[{"label":"Run it (Recommended)","description":"Takes about 2 minutes; staging is idle."},{"label":"Wait until tonight"},{"label":"Skip the migration","description":"Ship the code fix only."}]}]}),
        ),
        (
            "ci-runner",
            "github.com/acme/api",
            "ci-7f3a",
            "nightly release",
            json!({"questions":[{"id":"tag","question":"Tag release v2.4.0 and publish to crates.io?","options":["Publish","Tag only","Stop"]},{"id":"notes","question":"Anything to add to the release notes?"}]}),
        ),
        (
            "build-box",
            "/srv/builds/firmware",
            "build-box",
            "flaky test triage",
            json!({"questions":[{"id":"quarantine","header":"Tests","question":"Which flaky tests should be quarantined?","multi_select":true,"options":["usb_reconnect","ota_resume","sensor_calibration"]}]}),
        ),
    ];
    for (agent, project, host, session_title, arguments) in asks {
        let tok = token(&store, agent);
        let resp = http()
            .post(format!("{}/v1/asks", hub.url))
            .bearer_auth(&tok)
            .json(&json!({"arguments": arguments, "context": {"project": project, "host": host, "session": session_title}}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        if agent == "ci-runner" {
            // This agent's long-poll breaks off: its ask is detached, and the page says so.
            let id = resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
            let cut = reqwest::Client::builder()
                .timeout(Duration::from_millis(500))
                .build()
                .unwrap()
                .get(format!("{}/v1/asks/{id}?wait=30", hub.url))
                .bearer_auth(&tok)
                .send()
                .await;
            assert!(cut.is_err(), "the poll was cut");
            let start = Instant::now();
            loop {
                let view = agent_view(&hub.url, &tok, id).await;
                if view["attached"] == false {
                    break;
                }
                assert!(start.elapsed() < DEADLINE, "never detached: {view}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    let out_dir = std::env::var("ASK_USER_HUB_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| dir.path().to_owned());
    let links = format!(
        "{},{}",
        login_link(&store, &hub.url),
        login_link(&store, &hub.url)
    );
    let shots = browser(&["screens", &links, out_dir.to_str().unwrap(), "3"]);
    for shot in shots.as_array().unwrap() {
        assert_eq!(
            shot["agents"],
            json!(["laptop-claude", "ci-runner", "build-box"]),
            "grouped by agent, the longest waiting first"
        );
        assert_eq!(shot["overflow"], false, "no horizontal scrolling: {shot}");
        assert_eq!(
            shot["detached"],
            json!(["ci-runner"]),
            "the detached ask is marked"
        );
        assert_eq!(shot["errors"], json!([]));
        assert!(Path::new(shot["file"].as_str().unwrap()).exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_taller_than_the_screen_is_allowed_only_once_all_was_in_view() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let hub = Hub::start(&store, &[]);
    let arguments: Value =
        serde_json::from_str(&ask_user_test_support::tall_permission_request()).unwrap();
    let tok = token(&store, "laptop-claude");
    let resp = http()
        .post(format!("{}/v1/asks", hub.url))
        .bearer_auth(&tok)
        .json(
            &json!({"arguments": arguments, "context": {"project": "/src/shop", "host": "laptop"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let id = resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let link = login_link(&store, &hub.url);
    let seen = tokio::task::spawn_blocking(move || browser(&["tall-request", &link]))
        .await
        .unwrap();
    assert_eq!(
        seen,
        json!({
            "atLoad": {"choice": true, "quick": true},
            "afterJump": true,
            "afterReading": {"choice": true, "quick": true},
            "errors": [],
        })
    );
    let view = agent_view(&hub.url, &tok, id).await;
    assert_eq!(view["state"], "answered", "{view}");
}

/// `--tls-cert`/`--tls-key`: the hub serves https itself (rustls); an agent reaches it with
/// the system's trust store (here `SSL_CERT_FILE` naming the test's own CA), the session cookie
/// is `Secure`, and a non-loopback address needs no `--insecure-http`.
#[test]
fn tls_serves_https_and_the_agent_gets_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    // Not a CA: rustls (webpki, the agent's client) refuses one as the server's own.
    ask_user_test_support::self_signed(
        dir.path(),
        &["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
        "2",
        "/CN=ask-user hub test",
        &key,
        &cert,
    );
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let tok = token(&store, "remote");
    let tls = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let hub = Hub::start(&store, &tls);
    assert!(hub.url.starts_with("https://127.0.0.1:"), "{}", hub.url);
    let agent = Agent::spawn(
        ask_user()
            .args(["ask", "--hub", &hub.url])
            .env("ASK_USER_STORE", AGENT_STORE)
            .env("ASK_USER_HUB_TOKEN", &tok)
            .env("SSL_CERT_FILE", &cert),
    );
    let curl = |args: &[&str]| -> String {
        let out = ask_user_test_support::tool("curl")
            .args(["-sS", "--cacert", cert.to_str().unwrap()])
            .args(args)
            .output()
            .expect("curl runs");
        assert!(
            out.status.success(),
            "curl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let link = login_link(&store, &hub.url);
    let head = curl(&[
        "-i",
        "-X",
        "POST",
        "-H",
        &format!("Origin: {}", hub.url),
        &link,
    ]);
    let cookie_line = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .expect("a session cookie");
    assert!(cookie_line.contains("; Secure"), "{cookie_line}");
    let cookie = cookie_line
        .split_once(':')
        .unwrap()
        .1
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let start = Instant::now();
    let id = loop {
        let state: Value = serde_json::from_str(&curl(&[
            "-H",
            &format!("Cookie: {cookie}"),
            &format!("{}/inbox/state", hub.url),
        ]))
        .unwrap();
        if let Some(id) = state["open"][0]["id"].as_i64() {
            break id;
        }
        assert!(start.elapsed() < DEADLINE, "the ask never showed");
        std::thread::sleep(Duration::from_millis(100));
    };
    let sent = curl(&[
        "-H",
        &format!("Cookie: {cookie}"),
        "-H",
        &format!("Origin: {}", hub.url),
        "-H",
        "Content-Type: application/json",
        "-d",
        ANSWER_YES,
        &format!("{}/inbox/asks/{id}/answer", hub.url),
    ]);
    assert_eq!(sent, r#"{"sent":true}"#);
    agent.prints(ANSWER_YES);
    // With TLS, a non-loopback address is served without --insecure-http.
    let open = Hub::start_at("0.0.0.0:0", "memory", &tls);
    assert!(open.url.starts_with("https://0.0.0.0:"), "{}", open.url);
}

/// Runs the PyPI `mcp` 2.3.0 client (`crates/mcp/tests/mcp_client.py`, legacy mode: it
/// declares elicitation) against `ask-user mcp ARGS` over stdio; its JSON report.
async fn mcp_client(server_args: &[&str], token: &str, arguments: &str) -> Value {
    let home = tempfile::tempdir().unwrap();
    let python = repo_root().join(".venv/bin/python");
    let python = ask_user_test_support::hermetic_command(python, home.path());
    mcp_client_with(python, server_args, token, arguments).await
}

/// [`mcp_client`] run by `python` (a command whose environment the caller chose).
async fn mcp_client_with(
    mut python: Command,
    server_args: &[&str],
    token: &str,
    arguments: &str,
) -> Value {
    let program = Path::new(python.get_program()).to_path_buf();
    assert!(
        program.exists(),
        "{} is missing: run scripts/setup",
        program.display()
    );
    let child = python
        .arg(repo_root().join("crates/mcp/tests/mcp_client.py"))
        .args(["--mode", "legacy", "--arguments", arguments])
        // The client would accept any form: with `--hub` alone none may be shown.
        .args(["--reply", r#"accept:{"go":"No"}"#])
        .arg("--command")
        .arg(bin())
        .args(server_args)
        .env("ASK_USER_HUB_TOKEN", token)
        .env_remove("ASK_USER_HUB")
        .env_remove("ASK_USER_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let waited = tokio::task::spawn_blocking(move || rx.recv_timeout(DEADLINE))
        .await
        .unwrap();
    let Ok(out) = waited else {
        ask_user_test_support::signal(pid, ask_user_test_support::Signal::KILL);
        panic!("the MCP client did not end within {DEADLINE:?} (a hang)");
    };
    let out = out.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mcp_client.py: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `ask-user mcp --hub URL` (docs/contract.md §9): a real MCP client that can elicit calls the
/// tool; with `--hub` alone the question goes to the hub's inbox (not to the client's form),
/// shown with the agent's name and session title; the human answers there and the client gets
/// the answer. With `--via hub` the form comes first. An unreachable hub gives the model the no-answerer error result at once, never
/// a hang; `--hub` without a token is refused before serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_asks_through_the_hub_and_an_unreachable_hub_is_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let tok = token(&store, "mcp-agent");
    let hub = Hub::start(&store, &[]);
    let hub_url = hub.url.clone();
    let tok_for_client = tok.clone();
    let client = tokio::spawn(async move {
        mcp_client(
            &[
                "mcp",
                "--hub",
                &hub_url,
                "--session-title",
                "through mcp",
                "--store",
                "memory",
            ],
            &tok_for_client,
            QUESTION,
        )
        .await
    });
    let cookie = session(&store, &hub.url).await;
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    let state = inbox(&hub.url, &cookie).await;
    assert_eq!(state["open"][0]["agent"], "mcp-agent");
    assert_eq!(state["open"][0]["session"], "through mcp");
    let (status, body) = human_answer(&hub.url, &cookie, id, "Yes").await;
    assert_eq!((status, body), (200, json!({"sent": true})));
    let out = client.await.unwrap();
    assert_eq!(out["result"]["content"][0]["text"], ANSWER_YES, "{out}");
    assert_eq!(out["result"]["isError"], false);
    assert_eq!(
        out["result"]["structuredContent"],
        serde_json::from_str::<Value>(ANSWER_YES).unwrap()
    );
    assert_eq!(out["elicitations"], json!([]), "no form with --hub alone");
    let state = inbox(&hub.url, &cookie).await;
    assert_eq!(state["history"][0]["id"], id);
    assert_eq!(state["history"][0]["state"], "answered");

    // With `hub` in --via the hub is a fallback: a client that can elicit answers in its form.
    let out = mcp_client(
        &[
            "mcp", "--via", "hub", "--hub", &hub.url, "--store", "memory",
        ],
        &tok,
        QUESTION,
    )
    .await;
    assert_eq!(out["result"]["content"][0]["text"], ANSWER_NO, "{out}");
    assert_eq!(out["elicitations"].as_array().unwrap().len(), 1);
    assert_eq!(inbox(&hub.url, &cookie).await["open"], json!([]));

    // An unreachable hub: the model reads the no-answerer text as an error result.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = format!("http://127.0.0.1:{port}");
    let out = mcp_client(
        &["mcp", "--hub", &gone, "--store", "memory"],
        &tok,
        QUESTION,
    )
    .await;
    assert_eq!(
        out["result"]["content"][0]["text"],
        "Error: no way to ask the user is available; ask your question in plain text in your reply instead.",
        "{out}"
    );
    assert_eq!(out["result"]["isError"], true);
    assert_eq!(out["elicitations"], json!([]));

    // `--hub` without a token: a usage error before serving, the same text as `ask --hub`.
    let out = ask_user()
        .args(["mcp", "--hub", &hub.url, "--store", "memory"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "ask-user: --hub needs the agent's token: ASK_USER_HUB_TOKEN or --hub-token-file FILE (ask-user hub token add NAME prints one)"
    );
}

/// Waits until a card of `agent` is open in the inbox; the inbox's state then.
/// Waits for a card of `agent`, asserts it is the one open question and answers `label` on it:
/// the human is told "sent".
async fn answer_the_one_card(url: &str, cookie: &str, agent: &str, label: &str) {
    let state = until_card_of(url, cookie, agent).await;
    let open = state["open"].as_array().unwrap();
    assert_eq!(
        (open.len(), &state["open_total"]),
        (1, &json!(1)),
        "one question, one card: {state}"
    );
    let id = open[0]["id"].as_i64().unwrap();
    let (status, body) = human_answer(url, cookie, id, label).await;
    assert_eq!((status, body), (200, json!({"sent": true})));
}

async fn until_card_of(url: &str, cookie: &str, agent: &str) -> Value {
    let start = Instant::now();
    loop {
        let state = inbox(url, cookie).await;
        if state["open"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["agent"] == agent)
        {
            return state;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{agent}'s card never showed: {state}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One machine, one card: the hub quick start on one machine — `hub serve`, `ask --hub` and
/// `mcp --hub` all on the default store of one HOME — lists each question once in the hub's
/// inbox, as the token's (never also the agent's own local record as an "unknown agent"), open
/// and then in the history; the agent prints the answer given on that card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_machine_one_card_an_agent_asking_through_the_hub_is_listed_once() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let tok = printed(ask_user_at(home).args(["hub", "token", "add", "laptop"]));
    let hub = Hub::serve(ask_user_at(home).args(["hub", "serve", "--listen", "127.0.0.1:0"]));
    let link = printed(ask_user_at(home).args(["hub", "login-link"]));
    let resp = http()
        .post(&link)
        .header("Origin", &hub.url)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    let cookie = cookie_value(&resp);

    // The agent's local record is written before its question is posted to the hub: once the
    // token's card is listed, a local record in the hub's store would be listed too.
    // 1. `ask-user ask --hub` (the agent's store not named: the default one).
    let agent = Agent::spawn(
        ask_user_at(home)
            .args(["ask", "--hub", &hub.url])
            .env("ASK_USER_HUB_TOKEN", &tok),
    );
    answer_the_one_card(&hub.url, &cookie, "laptop", "Yes").await;
    agent.prints(ANSWER_YES);
    let state = inbox(&hub.url, &cookie).await;
    let history = state["history"].as_array().unwrap();
    assert_eq!(
        history
            .iter()
            .map(|c| (&c["agent"], &c["state"]))
            .collect::<Vec<_>>(),
        vec![(&json!("laptop"), &json!("answered"))],
        "one card in the history too: {state}"
    );

    // 2. `ask-user mcp --hub` (what `setup claude-code --hub` installs), the same HOME.
    let mut python =
        ask_user_test_support::hermetic_command(repo_root().join(".venv/bin/python"), home);
    python
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_DATA_HOME", home.join("data"));
    let hub_url = hub.url.clone();
    let client = tokio::spawn(async move {
        mcp_client_with(python, &["mcp", "--hub", &hub_url], &tok, QUESTION).await
    });
    answer_the_one_card(&hub.url, &cookie, "laptop", "No").await;
    let out = client.await.unwrap();
    assert_eq!(out["result"]["content"][0]["text"], ANSWER_NO, "{out}");
    let state = inbox(&hub.url, &cookie).await;
    assert_eq!(state["history"].as_array().unwrap().len(), 2, "{state}");
}

/// An agent's hub on Postgres that cannot reach Postgres for a while (docs/contract.md §9
/// "Scale-out": reconnect, re-scan, nothing missed), on a cluster of this test's own:
/// 1. the cluster is restarted (`pg_ctl restart -m fast`) while `ask-user ask --hub A` waits;
///    the human then answers on replica B; the agent prints the answer;
/// 2. replica A's connections are cut and kept out (its role's `CONNECTION LIMIT 0`) while the
///    human answers on B, so the NOTIFY reaches no listener of A; let back in, A's listener
///    reconnects, re-scans, and the agent prints the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_or_unreachable_mid_wait_the_agent_still_gets_the_answer() {
    let cluster = tokio::task::spawn_blocking(pg::Cluster::start)
        .await
        .unwrap();
    let admin = ask_user_test_support::postgres::connect(&cluster.url).await;
    // Replica A logs in as a role that is not a superuser (so a connection limit applies to
    // it); it owns the database and makes the schema; B is the superuser.
    for sql in [
        "CREATE ROLE hub_a LOGIN",
        "CREATE DATABASE hubdb OWNER hub_a",
    ] {
        admin.batch_execute(sql).await.unwrap();
    }
    let port = cluster
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let store_a = format!("postgres://hub_a@127.0.0.1:{port}/hubdb");
    let store_b = format!("postgres://postgres@127.0.0.1:{port}/hubdb");
    let tok = token(&store_a, "pg-agent");
    let a = Hub::start(&store_a, &[]);
    let b = Hub::start(&store_b, &[]);

    // 1. Postgres restarted mid-wait.
    let agent = Agent::start(&a.url, &tok, "restart");
    let cookie = session(&store_b, &b.url).await;
    let id = wait_open(&b.url, &cookie, 1).await[0];
    drop(admin);
    tokio::task::block_in_place(|| cluster.restart());
    let (status, body) = answer_until_reachable(&b.url, &cookie, id, "Yes").await;
    assert_eq!((status, body), (200, json!({"sent": true})));
    agent.prints(ANSWER_YES);

    // 2. An answer written while A's listener is down. A's page stream says when A's feed
    // changes: its first event is `ready`, then `all` when the listener re-scans.
    let agent = Agent::start(&a.url, &tok, "listener down");
    let id = wait_open(&b.url, &cookie, 1).await[0];
    let cookie_a = session(&store_a, &a.url).await;
    let mut events = Events::open(&a.url, &cookie_a).await;
    assert_eq!(events.next().await, "ready");
    let admin = ask_user_test_support::postgres::connect(&cluster.url).await;
    admin
        .batch_execute(
            "ALTER ROLE hub_a CONNECTION LIMIT 0; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'hub_a'",
        )
        .await
        .unwrap();
    let start = Instant::now();
    loop {
        let left: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = 'hub_a'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if left == 0 {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "A's connections never went");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) = human_answer(&b.url, &cookie, id, "No").await;
    assert_eq!((status, body), (200, json!({"sent": true})));
    // Still shut out: A cannot have heard of the answer yet.
    let left: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'hub_a'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "A stayed shut out while the answer was written");
    admin
        .batch_execute("ALTER ROLE hub_a CONNECTION LIMIT -1")
        .await
        .unwrap();
    // The answer's NOTIFY reached no listener of A: what A hears next is its re-scan.
    assert_eq!(events.next().await, "all", "A's listener re-scans");
    let (code, out, err) = agent.finish();
    assert_eq!((code, out.as_str()), (0, ANSWER_NO), "{err}");
}

/// Answers as [`human_answer`] does, again while the hub says its store is unreachable (5xx,
/// right after a Postgres restart): the human clicks again.
async fn answer_until_reachable(url: &str, cookie: &str, id: i64, label: &str) -> (u16, Value) {
    let start = Instant::now();
    loop {
        let (status, body) = human_answer(url, cookie, id, label).await;
        if status < 500 {
            return (status, body);
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the hub never reached its store again: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The inbox page's live stream (`/inbox/events`) as the page reads it.
struct Events {
    resp: reqwest::Response,
    buf: String,
}

impl Events {
    async fn open(url: &str, cookie: &str) -> Events {
        let resp = reqwest::Client::new()
            .get(format!("{url}/inbox/events"))
            .header("Cookie", format!("ask_user_hub={cookie}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        Events {
            resp,
            buf: String::new(),
        }
    }

    /// The data of the next `change` event (keep-alive comments skipped).
    async fn next(&mut self) -> String {
        tokio::time::timeout(DEADLINE, async {
            loop {
                if let Some(end) = self.buf.find("\n\n") {
                    let event: String = self.buf.drain(..end + 2).collect();
                    if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                        return data.trim().to_owned();
                    }
                    continue;
                }
                let chunk = self.resp.chunk().await.unwrap().expect("the stream ended");
                self.buf.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await
        .expect("an event within the deadline")
    }
}
/// An agent waits on replica A; A and then the agent are killed (SIGKILL), so nothing detaches
/// the ask and nobody renews its lease (test-only knob `ASK_USER_TEST_LEASE_MS`: 3 s).
/// Replica B's own periodic sweep marks it detached on the human's page, still open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_and_its_replica_killed_leave_an_ask_the_other_replica_marks_detached() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    let tok = token(&store, "laptop-claude");
    let lease = [("ASK_USER_TEST_LEASE_MS", "3000")];
    let mut a = Hub::start_env("127.0.0.1:0", &store, &[], &lease);
    let b = Hub::start_env("127.0.0.1:0", &store, &[], &lease);
    let mut agent = Agent::start(&a.url, &tok, "killed");
    let cookie = session(&store, &b.url).await;
    let id = wait_open(&b.url, &cookie, 1).await[0];
    // Alive: A renews the lease while the agent's long-poll waits, past several leases.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let state = inbox(&b.url, &cookie).await;
    assert_eq!(
        (&state["open"][0]["id"], &state["open"][0]["attached"]),
        (&json!(id), &json!(true)),
        "{state}"
    );
    a.kill();
    let _ = agent.child.kill();
    let _ = agent.child.wait();
    let start = Instant::now();
    loop {
        let state = inbox(&b.url, &cookie).await;
        let open = &state["open"][0];
        if open["attached"] == json!(false) {
            assert_eq!((&open["id"], &open["state"]), (&json!(id), &json!("open")));
            break;
        }
        assert!(start.elapsed() < DEADLINE, "never marked detached: {state}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `hub serve` on a Postgres that does not answer yet (starting beside it) says on stderr that
/// it waits for the database — naming it without its password — and serves as soon as the
/// database answers, with no restart. The database's address is a loopback port where nothing
/// listens at first; a forwarder to a real throwaway cluster opens there once the message
/// is seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_serve_says_it_waits_for_a_starting_database_then_serves() {
    let cluster = tokio::task::spawn_blocking(pg::Cluster::start)
        .await
        .unwrap();
    let real = cluster
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("postgres://postgres:pg-s3cret@127.0.0.1:{port}/postgres");
    let mut child = KillOnDrop(
        ask_user_at(dir.path())
            .args(["hub", "serve", "--listen", "127.0.0.1:0", "--store", &store])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = child.0.stderr.take().unwrap();
    let (tx, lines) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let next_with = |needle: &str| -> String {
        let start = Instant::now();
        loop {
            let left = DEADLINE.saturating_sub(start.elapsed());
            match lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(e) => panic!("no stderr line with {needle:?} ({e})"),
            }
        }
    };
    let waiting = next_with("waiting for the database");
    assert!(
        waiting.starts_with(&format!(
            "ask-user hub: waiting for the database (store postgres://127.0.0.1:{port}/postgres: cannot connect to Postgres: "
        )),
        "{waiting}"
    );
    assert!(!waiting.contains("pg-s3cret"), "{waiting}");
    // The database "finishes starting": its port answers now.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let forwarder = tokio::spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let real = real.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) =
                    tokio::net::TcpStream::connect(format!("127.0.0.1:{real}")).await
                {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    let serving = next_with("serving on ");
    assert!(
        serving.contains("serving on http://127.0.0.1:"),
        "{serving}"
    );
    drop(child);
    forwarder.abort();
}

/// A child killed (and reaped) when dropped: a failed assertion leaves no `hub serve` behind.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An agent with a time budget (`ask --hub URL --timeout 10m`) sends its deadline with the
/// ask; the hub's page counts down to it, as the terminal and the local page do, and when the
/// ask times out the card closes saying so, the own answer typed meanwhile kept (read-only,
/// copyable) and the countdown gone (real headless Chromium at phone size). An agent whose
/// budget really runs out (`--timeout 2s`) closes its hub ask as timed out, not withdrawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_counts_down_to_the_agents_deadline_and_a_time_out_keeps_the_typed_text() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let tok = token(&store, "timed-agent");
    let hub = Hub::start(&store, &[]);
    let asked_at = now_ms();
    let agent = Agent::start_with(&hub.url, &tok, "countdown", &["--timeout", "10m"]);
    let cookie = session(&store, &hub.url).await;
    wait_open(&hub.url, &cookie, 1).await;
    let state = inbox(&hub.url, &cookie).await;
    let deadline = state["open"][0]["deadline"].as_i64().expect("a deadline");
    assert!(
        deadline >= asked_at + 600_000 && deadline <= now_ms() + 600_000,
        "{deadline} vs asked at {asked_at}"
    );
    let link = login_link(&store, &hub.url);
    let url = hub.url.clone();
    let token_env = tok.clone();
    let seen = tokio::task::spawn_blocking(move || {
        browser_env(&["countdown", &link, &url], &[("AGENT_TOKEN", &token_env)])
    })
    .await
    .unwrap();
    let counts = |t: &Value| {
        t.as_str().is_some_and(|t| {
            t.strip_prefix("Time left to answer: 9 min ")
                .and_then(|rest| rest.strip_suffix(" s"))
                .is_some_and(|n| n.parse::<u8>().is_ok_and(|n| n < 60))
        })
    };
    assert!(counts(&seen["first"]) && counts(&seen["later"]), "{seen}");
    assert_ne!(seen["first"], seen["later"], "{seen}");
    assert_eq!(
        (
            &seen["withdrawn"],
            &seen["closed"],
            &seen["icon"],
            &seen["kept"],
            &seen["keptNote"],
            &seen["textAboveNote"],
            &seen["readOnly"],
            &seen["countdownHidden"],
            &seen["errors"]
        ),
        (
            &json!("timed_out"),
            &json!("Timed out: the agent’s time limit ran out. Nothing was sent."),
            &json!("◷"),
            &json!("half a thought"),
            &json!("Your typed text above was not sent; it stays there so you can copy it."),
            &json!(true),
            &json!(true),
            &json!(true),
            &json!([])
        ),
        "{seen}"
    );
    drop(agent);

    let short = Agent::start_with(&hub.url, &tok, "short budget", &["--timeout", "2s"]);
    let (code, out, err) = short.finish();
    assert_eq!(code, 5, "{out}{err}");
    // Its DELETE says why (`?reason=timed_out`): the page shows "timed out", not "withdrawn".
    let start = Instant::now();
    loop {
        let state = inbox(&hub.url, &cookie).await;
        let short = state["history"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["session"] == json!("short budget"))
            .cloned();
        if let Some(short) = short {
            assert_eq!(short["state"], json!("timed_out"), "{state}");
            break;
        }
        assert!(start.elapsed() < DEADLINE, "never closed: {state}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// The human's inbox while the hub's Postgres is down: every read and the answer are refused
/// with 503 and one plain text, never the database driver's error (a trial saw raw driver
/// errors on the page 30 times).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_says_503_in_plain_words_while_postgres_is_down() {
    let cluster = tokio::task::spawn_blocking(pg::Cluster::start)
        .await
        .unwrap();
    let store = cluster.url.clone();
    let tok = token(&store, "pg-down");
    let hub = Hub::start(&store, &[]);
    let cookie = session(&store, &hub.url).await;
    let agent = Agent::start(&hub.url, &tok, "down");
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    tokio::task::block_in_place(|| cluster.stop());
    let plain = json!({"error": "the inbox's store is unavailable right now; try again in a moment (an answer already taken stays taken)"});
    let (status, body) = human_answer(&hub.url, &cookie, id, "Yes").await;
    assert_eq!((status, body), (503, plain.clone()));
    let resp = get_signed_in(&format!("{}/inbox/state", hub.url), &cookie).await;
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.json::<Value>().await.unwrap(), plain);
    drop(agent);
}

/// The human's answer or dismissal posted to the hub's page with `Idempotency-Key: key`
/// (`label` answers; `None` dismisses), to `via` (the hub, or a proxy in front of it) with the
/// hub's own `Host` and `Origin`: the status and body, or `None` when no response came.
async fn human_submit(
    hub: &str,
    via: &str,
    cookie: &str,
    id: i64,
    label: Option<&str>,
    key: &str,
) -> Option<(u16, Value)> {
    let (path, body) = match label {
        Some(label) => (
            "answer",
            json!({"answers": [{"id": "go", "selected": [label]}]}),
        ),
        None => ("dismiss", json!({})),
    };
    let resp = http()
        .post(format!("{via}/inbox/asks/{id}/{path}"))
        .header("Host", hub.trim_start_matches("http://"))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .header("Origin", hub)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .body(body.to_string())
        .send()
        .await
        .ok()?;
    let status = resp.status().as_u16();
    Some((status, resp.json().await.ok()?))
}

/// A proxy in front of `hub` for one connection that forwards the request and cuts the
/// connection as soon as the hub starts answering: the hub did the work (its answer is
/// written before it replies), the human never hears so. Its URL.
async fn cut_after_write(hub: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let upstream = hub.trim_start_matches("http://").to_owned();
    tokio::spawn(async move {
        let (client, _) = listener.accept().await.unwrap();
        let server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
        let (mut client_read, client_write) = client.into_split();
        let (mut server_read, mut server_write) = server.into_split();
        let forward = tokio::spawn(async move {
            let mut buf = [0u8; 8192];
            loop {
                match client_read.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if server_write.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut first = [0u8; 1];
        let _ = server_read.read(&mut first).await;
        forward.abort();
        drop(client_write);
    });
    url
}

/// Answers carry an idempotency id (docs/contract.md §9 "The human"): a submission
/// retried after its response was lost (the connection cut once the hub wrote the answer) is
/// told "sent" — it was taken — not "another answer counted"; a dismissal likewise. A retry of
/// a submission that was never taken, after someone else's answer counted, is told which
/// answer counted (409), and so is a retry under the same id with another answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_submission_is_told_the_truth_taken_or_another_counted() {
    let Served {
        dir: _dir,
        token: tok,
        hub,
        cookie,
        ..
    } = Served::start("laptop-claude").await;

    // 1. Taken, the response lost: the retry (same id) is told "sent"; the agent prints it.
    let agent = Agent::start(&hub.url, &tok, "cut");
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    let proxy = cut_after_write(&hub.url).await;
    let first = human_submit(&hub.url, &proxy, &cookie, id, Some("Yes"), "tap-1").await;
    assert_eq!(first, None, "the first attempt's response was cut");
    let retry = human_submit(&hub.url, &hub.url, &cookie, id, Some("Yes"), "tap-1").await;
    assert_eq!(
        retry,
        Some((200, json!({"sent": true}))),
        "the retry of a taken answer is told it was taken"
    );
    agent.prints(ANSWER_YES);

    // 2. Another answer counted: the retry of a submission never taken hears which.
    let agent = Agent::start(&hub.url, &tok, "other");
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    let other = human_submit(&hub.url, &hub.url, &cookie, id, Some("Yes"), "phone-1").await;
    assert_eq!(other, Some((200, json!({"sent": true}))));
    let (status, body) = human_submit(&hub.url, &hub.url, &cookie, id, Some("No"), "laptop-1")
        .await
        .unwrap();
    assert_eq!(
        (
            status,
            &body["counted"]["state"],
            &body["counted"]["answers"]
        ),
        (
            409,
            &json!("answered"),
            &json!({"answers": [{"id": "go", "selected": ["Yes"]}]})
        ),
        "{body}"
    );
    // The same id with another answer was not taken as that answer: its first one counted.
    let (status, _) = human_submit(&hub.url, &hub.url, &cookie, id, Some("No"), "phone-1")
        .await
        .unwrap();
    assert_eq!(status, 409);
    agent.prints(ANSWER_YES);

    // 3. A dismissal taken, its response lost: the retry is told "sent".
    let agent = Agent::start(&hub.url, &tok, "dismiss");
    let id = wait_open(&hub.url, &cookie, 1).await[0];
    let proxy = cut_after_write(&hub.url).await;
    let first = human_submit(&hub.url, &proxy, &cookie, id, None, "dismiss-1").await;
    assert_eq!(first, None, "the first attempt's response was cut");
    let retry = human_submit(&hub.url, &hub.url, &cookie, id, None, "dismiss-1").await;
    assert_eq!(retry, Some((200, json!({"sent": true}))));
    let (code, _, err) = agent.finish();
    assert_ne!(code, 0, "dismissed: {err}");
}

/// Offer (c) on the hub's page (docs/contract.md §8 "No answer the human did not give to this
/// call"): the same agent asks the same question again after the human's answer to the first
/// was delivered. The second is a new, open question — nothing answers it by its content — and
/// its card offers the earlier answer as one tap, "Send the same answer again (given HH:MM:
/// Yes)". The human taps it (in Chromium): that is their answer to this ask, and the agent
/// prints it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_question_again_offers_the_earlier_answer_as_one_tap() {
    let Served {
        dir: _dir,
        store,
        token: tok,
        hub,
        cookie,
    } = Served::start("laptop-claude").await;
    let agent = Agent::start(&hub.url, &tok, "first");
    let first = wait_open(&hub.url, &cookie, 1).await[0];
    let (status, _) = human_answer(&hub.url, &cookie, first, "Yes").await;
    assert_eq!(status, 200);
    agent.prints(ANSWER_YES);

    let agent = Agent::start(&hub.url, &tok, "again");
    let second = wait_open(&hub.url, &cookie, 1).await[0];
    assert_ne!(second, first, "asked anew");
    let link = login_link(&store, &hub.url);
    let seen = browser(&["again", &link]);
    let offer = seen["offer"].as_str().unwrap();
    let time = offer
        .strip_prefix("Send the same answer again (given ")
        .and_then(|rest| rest.strip_suffix(": Yes)"))
        .unwrap_or_else(|| panic!("the offer: {seen}"));
    assert!(
        time.len() == 5 && time.as_bytes()[2] == b':',
        "a time of day: {seen}"
    );
    assert_eq!(seen["openBefore"], json!(true), "{seen}");
    assert_eq!(seen["note"], "sent to laptop-claude");
    assert_eq!(seen["sent"], json!(["Deploy now?: Yes"]), "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    agent.prints(ANSWER_YES);
}
