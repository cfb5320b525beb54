//! The hub's inbox at scale (docs/contract.md §9): the paged state read and the paged page,
//! against a real `ask-user hub serve` process on SQLite and real headless Chromium
//! (playwright-core, `tests/hub_inbox/paging.cjs`). The open asks are put straight into the
//! hub's store file (the store is shared across processes by design): asking through the agent
//! API would take minutes under its per-token rate limit.

use super::hub_common;

use ask_user_store::{AskId, Asker, NewAsk, Opened, Outcome, Scope, Store, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use hub_common::{
    Hub, QUESTION, browser_script, get_signed_in, inbox_state as state, repo_root, session,
};

const AGENTS: [&str; 3] = ["alpha", "beta", "gamma"];

/// Runs `ask-user ARGS`, which must succeed: its stdout, trimmed.
fn run(args: &[&str]) -> String {
    let (code, out, err) = hub_common::run(args);
    assert_eq!(code, 0, "ask-user {args:?}: {err}");
    out.trim().to_owned()
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

/// The one-ask read the page makes for a live change names: that ask's card (open, or closed
/// with its outcome) and the count of every open ask; 404 for an ask that does not exist, 401
/// signed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_ask_read_gives_the_changed_asks_card_and_the_open_count() {
    let dir = tempfile::tempdir().unwrap();
    let store_url = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let store = Store::open(&store_url).await.unwrap();
    let open = seed(&store, 3, 0).await;
    let hub = Hub::start(&store_url, &[]);
    let cookie = session(&store_url, &hub.url).await;
    let one = |id: i64, cookie: String| {
        let url = format!("{}/inbox/asks/{id}", hub.url);
        async move {
            let resp = get_signed_in(&url, &cookie).await;
            let status = resp.status().as_u16();
            (status, resp.json::<Value>().await.unwrap())
        }
    };
    let (code, read) = one(open[1], cookie.clone()).await;
    assert_eq!(code, 200);
    assert_eq!(
        (
            &read["ask"]["id"],
            &read["ask"]["state"],
            &read["ask"]["agent"]
        ),
        (&json!(open[1]), &json!("open"), &json!(AGENTS[1]))
    );
    assert_eq!(read["ask"]["questions"][0]["id"], "go");
    assert_eq!(read["open_total"], 3);
    store
        .record_outcome(AskId(open[1]), &Outcome::Withdrawn, Timestamp::now())
        .await
        .unwrap();
    let (_, read) = one(open[1], cookie.clone()).await;
    assert_eq!(
        (&read["ask"]["state"], &read["open_total"]),
        (&json!("withdrawn"), &json!(2))
    );
    assert!(read["ask"]["closed_at"].is_i64(), "{read}");
    let (code, _) = one(999_999, cookie).await;
    assert_eq!(code, 404);
    let (code, _) = one(open[0], "nope".to_owned()).await;
    assert_eq!(code, 401, "signed out");
}

/// In real Chromium, 120 open asks from three agents: grouped by agent, the agent waiting
/// longest first, oldest first within a group, each group showing its three oldest with the
/// true count and a button for the rest; an arrival above the card being read does not move
/// it; a new agent's ask comes in as a last group and is answered with one tap; the card says
/// what was sent and the history names labels, not ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_groups_oldest_first_with_true_counts_and_keeps_the_card_under_the_finger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hub.sqlite3");
    let store_url = format!("sqlite:{}", path.display());
    let store = Store::open(&store_url).await.unwrap();
    let open = seed(&store, 120, 0).await;
    let token = run(&["hub", "token", "add", "late-agent", "--store", &store_url]);
    let alpha = run(&["hub", "token", "add", "alpha", "--store", &store_url]);
    let hub = Hub::start(&store_url, &[]);
    let link = hub_common::login_link(&store_url, &hub.url);

    let seen = browser_script(
        "hub_inbox/paging.cjs",
        &[&link, &hub.url, &token, &alpha],
        &[],
    );

    // `seed` goes round-robin alpha, beta, gamma from the oldest: alpha waits longest.
    let of = |agent: usize| -> Vec<i64> {
        open.iter()
            .enumerate()
            .filter(|(i, _)| i % 3 == agent)
            .map(|(_, id)| *id)
            .collect()
    };
    let first = &seen["first"];
    assert_eq!(
        first["groups"],
        json!(AGENTS),
        "the agent waiting longest first"
    );
    assert_eq!(
        first["groupCounts"],
        json!(["40 asks waiting", "40 asks waiting", "40 asks waiting"]),
        "true counts, not what is shown"
    );
    let oldest: Vec<i64> = (0..3).flat_map(|a| of(a)[..3].to_vec()).collect();
    assert_eq!(
        first["ids"],
        json!(oldest),
        "oldest first within each group"
    );
    assert_eq!(
        first["more"],
        json!([
            "Show 37 more from alpha",
            "Show 37 more from beta",
            "Show 37 more from gamma"
        ])
    );
    assert_eq!(first["counts"], "120 open");
    assert!(
        first["tabStops"].as_u64().unwrap() <= 60,
        "few keyboard stops: {first}"
    );
    let expanded = &seen["expanded"];
    assert_eq!(expanded["cards"], 46);
    let mut ids = of(0);
    ids.extend(of(1)[..3].iter().chain(&of(2)[..3]));
    assert_eq!(expanded["ids"], json!(ids));
    let moved = seen["moved"].as_f64().unwrap();
    assert!(
        moved.abs() < 1.0,
        "an arrival above does not move the card being read (moved {moved} px)"
    );
    assert_eq!(
        seen["alphaLast"], seen["alphaLate"],
        "it joins the end of its group"
    );

    let live = &seen["live"];
    assert_eq!(
        live["groups"],
        json!(["alpha", "beta", "gamma", "late-agent"]),
        "a new agent's group comes last"
    );
    assert_eq!(live["counts"], "122 open");
    assert_eq!(
        seen["typing"],
        json!({"focused": true, "value": "half typed"}),
        "a live update keeps the field being typed in"
    );
    assert_eq!(
        seen["withdrawn"],
        json!({
            "kind": "cancelled",
            "closed": "⊘ Withdrawn by the agent: it no longer needs this answer. Nothing was sent.",
            "text": "half typed",
            "visible": true,
            "readOnly": true,
            "kept": true,
        }),
        "typed text survives the ask closing"
    );
    assert_eq!(seen["preselected"], "Ship it (Recommended)");
    let answered = &seen["answered"];
    assert_eq!(answered["counts"], "121 open");
    assert_eq!(
        answered["groupCounts"],
        json!([
            "41 asks waiting",
            "40 asks waiting",
            "40 asks waiting",
            "nothing waiting"
        ])
    );
    assert_eq!(seen["sent"], json!(["Ship the late one?: Hold"]));
    assert_eq!(
        seen["axe"],
        json!({"first": [], "answered": []}),
        "axe-core: no serious or critical violation"
    );
    let history = seen["history"].as_str().unwrap();
    assert!(
        history.starts_with("✔ answered in the inbox — late-agent (")
            && history.ends_with("): Ship the late one? → Hold"),
        "{history}"
    );
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
                if answer == &json!({"answers": [{"id": "go", "selected": ["Hold"]}]})
        )),
        "answered with one tap"
    );
}

/// In real Chromium, the hub's inbox shows every case of the shared text-safety corpus
/// (`crates/core/tests/golden/text-safety.json`) as a question's text exactly as pinned there
/// (the hub prepares the text; the page has no rule of its own), and so the caller's names:
/// a padded project counted, a Hebrew agent name read right to left (`dir="auto"`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_shows_the_shared_corpus_as_pinned_and_right_to_left_text_right_to_left() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("crates/core/tests/golden/text-safety.json"))
            .unwrap(),
    )
    .unwrap();
    let cases = fixture["cases"].as_array().unwrap().clone();
    assert!(cases.len() > 40, "the fixture is read");
    let dir = tempfile::tempdir().unwrap();
    let store_url = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let store = Store::open(&store_url).await.unwrap();
    let hebrew_agent = "\u{5e1}\u{5d5}\u{5db}\u{5df}";
    let padded_project = format!("~/src/app{}; rm -rf ~", "\u{3000}".repeat(300));
    // One agent per ask: a group shows all its cards up to three.
    let mut asks: Vec<(i64, Vec<Value>)> = Vec::new();
    for (n, chunk) in cases.chunks(10).enumerate() {
        let questions: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"id": format!("c{i}"), "question": c["input"]}))
            .collect();
        let asker = Asker {
            agent: Some(if n == 0 {
                hebrew_agent.to_owned()
            } else {
                format!("agent-{n}")
            }),
            project: Some(padded_project.clone()),
            ..Asker::default()
        };
        let ask = NewAsk::new(
            &Scope::HostKey(format!("corpus-{n}")),
            json!({ "questions": questions }).to_string(),
            asker,
        );
        let Opened::Created(rec) = store.open_ask(&ask).await.unwrap() else {
            panic!("a new ask")
        };
        asks.push((rec.id.0, chunk.to_vec()));
    }
    let hub = Hub::start(&store_url, &[]);
    let link = hub_common::login_link(&store_url, &hub.url);
    let seen = browser_script(
        "hub_inbox/corpus.cjs",
        &[&link, &asks.len().to_string()],
        &[],
    );
    assert_eq!(seen["errors"], json!([]));
    let cards = seen["cards"].as_array().unwrap();
    for (id, cases) in &asks {
        let card = cards
            .iter()
            .find(|c| c["id"] == json!(id))
            .unwrap_or_else(|| panic!("card {id} in {seen}"));
        assert_eq!(
            card["project"],
            json!({"text": "~/src/app\u{27e8}300 blank characters\u{27e9}; rm -rf ~", "direction": "ltr"})
        );
        for (case, shown) in cases.iter().zip(card["questions"].as_array().unwrap()) {
            assert_eq!(shown["text"], case["display"], "{}", case["name"]);
            // dir="auto": the first strong character decides.
            let right_to_left =
                ask_user_test_support::right_to_left(case["display"].as_str().unwrap());
            assert_eq!(
                shown["direction"],
                if right_to_left { "rtl" } else { "ltr" },
                "{}",
                case["name"]
            );
        }
    }
    assert!(
        seen["groups"]
            .as_array()
            .unwrap()
            .contains(&json!({"text": hebrew_agent, "direction": "rtl"})),
        "{}",
        seen["groups"]
    );
}
