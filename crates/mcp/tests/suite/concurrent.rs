//! 100 concurrent HTTP sessions, each holding a pending question; every answer must reach
//! its own caller.

use std::sync::atomic::Ordering;

use ask_user_mcp::Routing;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Holding, http_server, run_python};

const SESSIONS: usize = 100;

#[tokio::test(flavor = "multi_thread")]
async fn hundred_sessions_with_pending_elicitations_each_get_their_own_answer() {
    let http = http_server(Routing::default()).await;
    let out = run_python(
        "many_sessions.py",
        &[
            "--url".into(),
            http.url.clone(),
            "--count".into(),
            SESSIONS.to_string(),
            "--mode".into(),
            "legacy".into(),
            "--elicit".into(),
        ],
    )
    .await;
    assert_eq!(
        out,
        json!({"answered": SESSIONS, "mismatches": [], "forms_seen": SESSIONS})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hundred_sessions_pending_on_the_fallback_each_get_their_own_answer_in_both_eras() {
    for mode in ["legacy", "auto"] {
        // The answerer releases every question only once all of them are pending.
        let holding = Holding::new(SESSIONS, None);
        let routing = Routing {
            fallback: vec![holding.clone()],
            ..Routing::default()
        };
        let http = http_server(routing).await;
        let out = run_python(
            "many_sessions.py",
            &[
                "--url".into(),
                http.url.clone(),
                "--count".into(),
                SESSIONS.to_string(),
                "--mode".into(),
                mode.into(),
            ],
        )
        .await;
        assert_eq!(
            out,
            json!({"answered": SESSIONS, "mismatches": [], "forms_seen": 0}),
            "{mode}"
        );
        assert_eq!(holding.pending.load(Ordering::SeqCst), SESSIONS);
    }
}
