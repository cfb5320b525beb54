//! 100 concurrent HTTP sessions, each holding a pending question; every answer must reach
//! its own caller.

use std::sync::Arc;

use ask_user_mcp::Routing;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use ask_user_test_support::answerers::Holding;

use super::support::{http_server, run_python};

const SESSIONS: usize = 100;

/// `many_sessions.py`: SESSIONS clients of the server at `url` in `mode`, with `extra` flags.
async fn many_sessions(url: &str, mode: &str, extra: &[&str]) -> Value {
    let mut args: Vec<String> = [
        "--url",
        url,
        "--count",
        &SESSIONS.to_string(),
        "--mode",
        mode,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    run_python("many_sessions.py", &args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn hundred_sessions_with_pending_elicitations_each_get_their_own_answer() {
    let http = http_server(Routing::default()).await;
    let out = many_sessions(&http.url, "legacy", &["--elicit"]).await;
    assert_eq!(
        out,
        json!({"answered": SESSIONS, "mismatches": [], "forms_seen": SESSIONS})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hundred_sessions_pending_on_the_fallback_each_get_their_own_answer_in_both_eras() {
    for mode in ["legacy", "auto"] {
        // The answerer releases every question only once all of them are pending.
        let holding = Arc::new(Holding::new(SESSIONS, None));
        let routing = Routing {
            fallback: vec![holding.clone()],
            ..Routing::default()
        };
        let http = http_server(routing).await;
        let out = many_sessions(&http.url, mode, &[]).await;
        assert_eq!(
            out,
            json!({"answered": SESSIONS, "mismatches": [], "forms_seen": 0}),
            "{mode}"
        );
        assert_eq!(holding.asked(), SESSIONS);
    }
}

/// Two sessions of one client (same name) asking the identical question at once over `--http`
/// with a store (trials found them sharing one ask): two callers, two asks — each session prints the answer
/// given to its own ask; a third session asking it again after both read theirs is a new
/// question, never an earlier session's delivered answer.
#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_asking_the_identical_question_are_two_callers() {
    const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy the billing service now?","options":["Yes","No"]}]}"#;
    const YES: &str = r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#;
    const NO: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;
    let store = ask_user_store::Store::memory();
    let routing = Routing {
        // Shows each ask and never answers: the human answers in the store (the inbox).
        fallback: vec![Arc::new(Holding::new(0, None))],
        store: Some(store.clone()),
        ..Routing::default()
    };
    let http = http_server(routing).await;
    let human = {
        let store = store.clone();
        tokio::spawn(async move {
            let answer = |text: &str| ask_user_store::Outcome::Answered {
                answer: serde_json::from_str(text).unwrap(),
                by: ask_user_store::Responder {
                    answerer: "the inbox".to_owned(),
                    ..ask_user_store::Responder::default()
                },
            };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let mut answered = Vec::new();
            for (want, text) in [(2, YES), (1, NO), (1, YES)] {
                // The open asks not answered yet, once there are `want` of them (a generous
                // deadline only turns a hang into a failure).
                let open = loop {
                    let open: Vec<_> = store
                        .list_open()
                        .await
                        .unwrap()
                        .into_iter()
                        .filter(|r| !answered.contains(&r.id))
                        .collect();
                    if open.len() >= want {
                        break open;
                    }
                    assert!(
                        std::time::Instant::now() < deadline,
                        "waited for {want} open asks: {open:#?}"
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                };
                let id = open[0].id;
                store
                    .record_outcome(id, &answer(text), ask_user_store::Timestamp::now())
                    .await
                    .unwrap();
                answered.push(id);
            }
            answered
        })
    };
    // The human's failure ends the test at once (the client, killed on drop, would wait).
    let (answered, out) =
        tokio::try_join!(async { human.await.map_err(|e| e.to_string()) }, async {
            Ok(run_python("two_sessions.py", &[http.url.clone(), ARGS.into()]).await)
        },)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, json!({"together": [NO, YES], "later": YES}));
    assert_eq!(answered.len(), 3, "three asks: {answered:?}");
}
