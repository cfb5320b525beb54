//! The hub's inbox at scale (docs/contract.md §9): the paged state read and the paged page,
//! against a real `ask-user hub serve` process on SQLite and real headless Chromium
//! (playwright-core, `tests/hub_inbox/paging.cjs`). The open asks are put straight into the
//! hub's store file (the store is shared across processes by design): asking through the agent
//! API would take minutes under its per-token rate limit.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

mod hub_common;

use std::path::Path;
use std::process::Command;

use ask_user_store::{AskId, Asker, NewAsk, Opened, Outcome, Scope, Store, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use hub_common::{Hub, QUESTION, http, repo_root, session};

const AGENTS: [&str; 3] = ["alpha", "beta", "gamma"];

/// Runs `ask-user ARGS`, which must succeed: its stdout, trimmed.
fn run(args: &[&str]) -> String {
    let (code, out, err) = hub_common::run(args);
    assert_eq!(code, 0, "ask-user {args:?}: {err}");
    out.trim().to_owned()
}

/// The inbox state read with `query`, signed in with the session `cookie` (its value).
async fn state(url: &str, cookie: &str, query: &str) -> (u16, Value) {
    let resp = http()
        .get(format!("{url}/inbox/state{query}"))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Opens `n` asks in the store, round-robin over [`AGENTS`], the last one newest; closes
/// `closed` more (history). Their ids, oldest first.
async fn seed(store: &Store, n: usize, closed: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n + closed {
        let ask = NewAsk::new(
            &Scope::HostKey(format!("seed-{i}")),
            QUESTION,
            Asker {
                agent: Some(AGENTS[i % AGENTS.len()].into()),
                project: Some(format!("/src/p{i}")),
                ..Asker::default()
            },
        );
        let Opened::Created(rec) = store.open_ask(&ask).await.unwrap() else {
            panic!("a new ask")
        };
        if i >= n {
            store
                .record_outcome(rec.id, &Outcome::Withdrawn, Timestamp::now())
                .await
                .unwrap();
        } else {
            ids.push(rec.id.0);
        }
    }
    ids
}

fn ids(state: &Value) -> Vec<i64> {
    state["open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect()
}

/// The state read is paged: newest first, `limit` (default 50, at least 1, at most 500) asks
/// older than `before`, with the count of every open ask and whether more remain; the history
/// comes with the first page only; a malformed query is refused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_read_pages_open_asks_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hub.sqlite3");
    let store_url = format!("sqlite:{}", path.display());
    let store = Store::open(&store_url).await.unwrap();
    let mut open = seed(&store, 120, 3).await;
    open.reverse();
    let hub = Hub::start(&store_url, &[]);
    let cookie = session(&store_url, &hub.url).await;

    let (code, first) = state(&hub.url, &cookie, "").await;
    assert_eq!(code, 200);
    assert_eq!(ids(&first), open[..50]);
    assert_eq!(
        (&first["open_total"], &first["more"]),
        (&json!(120), &json!(true))
    );
    assert_eq!(first["history"].as_array().unwrap().len(), 3);
    assert_eq!(first["open"][0]["agent"], "gamma");
    assert_eq!(first["open"][0]["questions"][0]["recommended"], Value::Null);
    assert_eq!(
        first["open"][0]["questions"][0]["options"],
        json!([{"label": "Yes"}, {"label": "No"}])
    );

    let (_, second) = state(&hub.url, &cookie, &format!("?before={}", open[49])).await;
    assert_eq!(ids(&second), open[50..100]);
    assert_eq!(second["more"], true);
    assert_eq!(
        second.get("history"),
        None,
        "history with the first page only"
    );
    assert_eq!(second.get("open_total"), None, "and the count");
    let (_, last) = state(&hub.url, &cookie, &format!("?before={}&limit=50", open[99])).await;
    assert_eq!(ids(&last), open[100..]);
    assert_eq!(last["more"], false);

    let (_, one) = state(&hub.url, &cookie, "?limit=0").await;
    assert_eq!(ids(&one), open[..1], "at least one");
    let (_, all) = state(&hub.url, &cookie, "?limit=100000").await;
    assert_eq!(ids(&all), open, "all 120 fit under the cap of 500");

    // An ask answered meanwhile leaves the count and the pages.
    store
        .record_outcome(AskId(open[0]), &Outcome::Withdrawn, Timestamp::now())
        .await
        .unwrap();
    let (_, after) = state(&hub.url, &cookie, "?limit=2").await;
    assert_eq!(ids(&after), open[1..3]);
    assert_eq!(after["open_total"], 119);

    let (code, bad) = state(&hub.url, &cookie, "?limit=many").await;
    assert_eq!(code, 400);
    assert_eq!(
        bad["error"],
        "Failed to deserialize query string: limit: invalid digit found in string"
    );
    let (code, _) = state(&hub.url, "ask_user_hub=nope", "").await;
    assert_eq!(code, 401, "signed out");
}

/// In real Chromium: the first page shows 50 of 120 open asks with the counts, grouped by
/// agent; "Show more" adds the next 50 under the same groups; an agent asking while the page
/// is open shows first, live, with nothing older lost; the shared card preselects the
/// recommended option and Submit answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_first_page_then_more_on_demand_and_stays_live() {
    let playwright = repo_root().join("tools/node/node_modules/playwright-core");
    assert!(
        playwright.join("package.json").exists(),
        "playwright-core is missing at {}: run scripts/setup",
        playwright.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hub.sqlite3");
    let store_url = format!("sqlite:{}", path.display());
    let store = Store::open(&store_url).await.unwrap();
    let mut open = seed(&store, 120, 0).await;
    open.reverse();
    let token = run(&["hub", "token", "add", "late-agent", "--store", &store_url]);
    let hub = Hub::start(&store_url, &[]);
    let link = run(&[
        "hub",
        "login-link",
        "--store",
        &store_url,
        "--url",
        &hub.url,
    ]);

    let out = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hub_inbox/paging.cjs"))
        .args([&link, &hub.url, &token, "120"])
        .env("PLAYWRIGHT_CORE", playwright)
        .output()
        .expect("node runs (scripts/setup installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .expect("a RESULT line"),
    )
    .unwrap();

    // Per agent, how many of the newest `n` asks are theirs; groups in order of their newest.
    let groups = |n: usize| -> Vec<String> {
        ["gamma", "beta", "alpha"]
            .iter()
            .map(|agent| {
                let k = (0..120)
                    .rev()
                    .take(n)
                    .filter(|i| AGENTS[i % 3] == *agent)
                    .count();
                format!("{agent}{k} questions")
            })
            .collect()
    };
    // The newest `n` ids in page order: by agent (newest group first), newest first within
    // a group.
    let grouped = |n: usize| -> Vec<i64> {
        let mut ids = open[..n].to_vec();
        ids.sort_by_key(|id| {
            let i = open.iter().position(|o| o == id).unwrap();
            let agent = AGENTS[(119 - i) % 3];
            (
                ["gamma", "beta", "alpha"].iter().position(|a| *a == agent),
                i,
            )
        });
        ids
    };
    let first = &seen["first"];
    assert_eq!(first["cards"], 50);
    assert_eq!(first["counts"], "120 open, showing 50");
    assert_eq!(first["more"], true);
    assert_eq!(first["ids"], json!(grouped(50)));
    assert_eq!(first["groups"], json!(groups(50)));
    let second = &seen["second"];
    assert_eq!(second["counts"], "120 open, showing 100");
    assert_eq!(
        second["groups"],
        json!(groups(100)),
        "the same groups, grown"
    );
    assert_eq!(second["ids"], json!(grouped(100)));
    assert_eq!(second["more"], true);

    let live = &seen["live"];
    assert_eq!(live["first"], seen["late"], "the new ask comes first");
    assert_eq!(
        live["counts"], "121 open, showing 101",
        "nothing older was lost"
    );
    assert_eq!(live["groups"][0], "late-agent1 question");
    assert_eq!(seen["preselected"], "Ship it (Recommended)");
    let answered = &seen["answered"];
    assert_eq!(answered["counts"], "120 open, showing 100");
    assert_eq!(answered["groups"], json!(groups(100)));
    assert_eq!(
        seen["errors"],
        json!([]),
        "console errors (CSP?) on the page"
    );
    let rec = store
        .get(AskId(seen["late"].as_i64().unwrap()))
        .await
        .unwrap();
    assert!(
        rec.closed.is_some_and(|c| matches!(
            c.outcome,
            Outcome::Answered { ref answer, .. }
                if answer == &json!({"answers": [{"id": "go", "selected": ["Ship it (Recommended)"]}]})
        )),
        "answered through the shared card"
    );
}
