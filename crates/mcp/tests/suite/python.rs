//! PyPI `mcp` 2.3.0 against the server: `legacy` mode (initialize, protocol 2025-11-25,
//! `elicitation/create` pushed during the call) and `auto` mode (`server/discover`, protocol
//! 2026-07-28, an input-required result the client fulfils and retries), over stdio and HTTP.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::definition::{OUTPUT_SCHEMA, PARAMETERS};
use ask_user_core::{DISMISSED_TEXT, NO_PROVIDER_TEXT};
use ask_user_mcp::Routing;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use ask_user_test_support::answerers::Holding;

use super::support::{HttpServer, Target, client, http_server, text};

const MODES: [(&str, &str); 2] = [("legacy", "2025-11-25"), ("auto", "2026-07-28")];

const ARGUMENTS: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)","description":"Full SQL, needs a server."},"SQLite"]},{"id":"langs","question":"Which languages?","options":["Rust","Go","Python"],"multi_select":true},{"id":"name","question":"Service name?"}]}"#;

/// Both transports with elicitation on and no fallback answerer.
async fn targets() -> (Vec<Target>, HttpServer) {
    targets_with(ask_user_elicit::HUMAN_REACTION).await
}

/// [`targets`] with this reaction floor (`--reaction-floor`).
async fn targets_with(floor: Duration) -> (Vec<Target>, HttpServer) {
    let http = http_server(Routing {
        reaction_floor: floor,
        ..Routing::default()
    })
    .await;
    let targets = vec![
        Target::Stdio(vec![
            "--via".into(),
            "none".into(),
            "--reaction-floor".into(),
            humantime::format_duration(floor).to_string(),
        ]),
        Target::Http(http.url.clone()),
    ];
    (targets, http)
}

/// One call of `mode` over HTTP to a server (kept running by the returned handle) whose
/// fallback UI holds the question and reports it pending in a file of `dir`; the client does
/// `action` (`--cancel`, `--vanish`) once it is pending. The client's output and the UI.
async fn held_on_the_fallback(
    dir: &Path,
    mode: &str,
    action: &str,
) -> (Value, Arc<Holding>, HttpServer) {
    let pending = dir.join(format!("pending-{mode}{action}"));
    let holding = Arc::new(Holding::new(0, Some(pending.clone())));
    let routing = Routing {
        fallback: vec![holding.clone()],
        ..Routing::default()
    };
    let http = http_server(routing).await;
    let arguments = r#"{"questions":[{"id":"go","question":"Deploy?"}]}"#;
    let pending = pending.to_string_lossy().into_owned();
    let out = client(
        &Target::Http(http.url.clone()),
        mode,
        &["--arguments", arguments, action, "--pending-file", &pending],
    )
    .await;
    (out, holding, http)
}

/// Polls (`polls` times, 10 ms apart) until the UI saw one question withdrawn.
async fn wait_withdrawn(holding: &Holding, polls: usize) {
    for _ in 0..polls {
        if holding.withdrawals() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_maps_the_form_back_to_answers_in_both_eras_and_transports() {
    let (targets, _http) = targets().await;
    let reply = r#"accept:{"db":"SQLite","db.own":"","langs":["Go","Rust"],"langs.own":"Zig","name":"  billing-api "}"#;
    for target in &targets {
        for (mode, protocol) in MODES {
            let out = client(target, mode, &["--arguments", ARGUMENTS, "--reply", reply]).await;
            assert_eq!(out["protocol"], protocol, "{target:?}");
            assert_eq!(
                text(&out),
                r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"],"custom":"Zig"},{"id":"name","selected":[],"custom":"billing-api"}]}"#,
                "{target:?} {mode}"
            );
            assert_eq!(
                out["result"]["structuredContent"],
                json!({"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"],"custom":"Zig"},{"id":"name","selected":[],"custom":"billing-api"}]})
            );
            assert_eq!(out["result"]["isError"], false);
            let forms = out["elicitations"].as_array().unwrap();
            assert_eq!(forms.len(), 1, "{target:?} {mode}");
            assert_eq!(forms[0]["mode"], "form");
            assert_eq!(
                forms[0]["message"],
                "3 questions, one field each below; a blank field skips its question."
            );
            assert_eq!(
                forms[0]["requestedSchema"],
                json!({"type":"object","properties":{
                    "db":{"type":"string","title":"1/3 [Database] Which database?","description":"PostgreSQL (Recommended): Full SQL, needs a server.","oneOf":[{"const":"PostgreSQL (Recommended)","title":"PostgreSQL (Recommended)"},{"const":"SQLite","title":"SQLite"}],"default":"PostgreSQL (Recommended)"},
                    "db.own":{"type":"string","title":"Your own answer to 1/3","description":"Optional: type this instead of choosing an option."},
                    "langs":{"type":"array","title":"2/3 Which languages? (choose any)","items":{"anyOf":[{"const":"Rust","title":"Rust"},{"const":"Go","title":"Go"},{"const":"Python","title":"Python"}]}},
                    "langs.own":{"type":"string","title":"Your own answer to 2/3","description":"Optional: type this in addition to, or instead of, the options."},
                    "name":{"type":"string","title":"3/3 Service name?"}}})
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn decline_and_cancel_dismiss_the_batch() {
    // A person refuses the form: this scripted client answers at once, so the reaction
    // floor (a refusal faster than a person is the client's) is off here.
    let (targets, _http) = targets_with(Duration::ZERO).await;
    for target in &targets {
        for (mode, _) in MODES {
            for reply in ["decline", "cancel"] {
                let out = client(target, mode, &["--arguments", ARGUMENTS, "--reply", reply]).await;
                assert_eq!(text(&out), DISMISSED_TEXT, "{target:?} {mode} {reply}");
                assert_eq!(out["result"]["isError"], true);
                assert_eq!(out["result"].get("structuredContent"), None);
            }
        }
    }
}

/// A client that refuses the form faster than a person can (a headless host: `claude -p`,
/// `codex exec`) did not show it: with no other answerer the model reads the no-answerer
/// text, never "dismissed".
#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_faster_than_a_person_is_not_a_dismissal() {
    let (targets, _http) = targets().await;
    for target in &targets {
        for (mode, _) in MODES {
            for reply in ["decline", "cancel"] {
                let out = client(target, mode, &["--arguments", ARGUMENTS, "--reply", reply]).await;
                assert_eq!(text(&out), NO_PROVIDER_TEXT, "{target:?} {mode} {reply}");
                assert_eq!(out["result"]["isError"], true);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_are_an_error_result_with_the_core_text_and_nobody_is_asked() {
    let (targets, _http) = targets().await;
    let cases = [
        (
            r#"{"questions":[]}"#,
            "Error: invalid arguments: questions: empty, add at least one question",
        ),
        (
            r#"{}"#,
            r#"Error: invalid arguments: questions: missing, send {"questions":[{"id":"…","question":"…"}]}"#,
        ),
        (
            r#"{"questions":[{"id":"a","question":"A?","options":["X","X"]},{"id":"a","question":" "}]}"#,
            "",
        ),
    ];
    for target in &targets {
        for (mode, _) in MODES {
            for (arguments, expected) in cases {
                let out = client(
                    target,
                    mode,
                    &["--arguments", arguments, "--reply", "decline"],
                )
                .await;
                let got = text(&out);
                let core = ask_user_core::decode(arguments, &Default::default())
                    .unwrap_err()
                    .to_string();
                assert_eq!(got, core, "{target:?} {mode}");
                if !expected.is_empty() {
                    assert_eq!(got, expected);
                }
                assert_eq!(out["result"]["isError"], true);
                assert_eq!(out["elicitations"], json!([]));
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn content_that_does_not_fit_is_refused_and_the_form_sent_again() {
    let (targets, _http) = targets().await;
    let arguments = r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL","SQLite"]}]}"#;
    let reply = r#"accept:{"db":"MySQL"}|accept:{"db":"SQLite"}"#;
    for target in &targets {
        for (mode, _) in MODES {
            let out = client(target, mode, &["--arguments", arguments, "--reply", reply]).await;
            assert_eq!(
                text(&out),
                r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#
            );
            let forms = out["elicitations"].as_array().unwrap();
            assert_eq!(forms.len(), 2, "{target:?} {mode}");
            assert_eq!(
                forms[1]["message"],
                "Not accepted: \"MySQL\" is not one of the options of question \"db\". Please answer again.\n\nWhich database?"
            );
        }
        // Three refusals end the call.
        let always_wrong = r#"accept:{"db":"MySQL"}"#;
        for (mode, _) in MODES {
            let out = client(
                target,
                mode,
                &["--arguments", arguments, "--reply", always_wrong],
            )
            .await;
            assert_eq!(
                text(&out),
                "Error: the answers from the MCP client's form did not fit the questions (\"MySQL\" is not one of the options of question \"db\"); ask again"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_call_withdraws_the_pushed_form() {
    // Legacy era: the server holds the question as a pending elicitation/create; the client's
    // notifications/cancelled for the tool call must make the server cancel that request.
    let (targets, _http) = targets().await;
    let arguments = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
    for target in &targets {
        let out = client(
            target,
            "legacy",
            &["--arguments", arguments, "--reply", "hold", "--cancel"],
        )
        .await;
        assert_eq!(out["withdrawn"], true, "{target:?}");
        assert_eq!(out["after_cancel_tools"], 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_call_withdraws_the_question_from_the_fallback_ui_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, _) in MODES {
        let (out, holding, _http) = held_on_the_fallback(dir.path(), mode, "--cancel").await;
        assert_eq!(out["after_cancel_tools"], 1);
        // The cancellation reached the UI before the server moved on.
        wait_withdrawn(&holding, 500).await;
        assert_eq!(holding.withdrawals(), 1, "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_cannot_elicit_gets_the_fallback_or_no_tool() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#).unwrap();
    let arguments = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
    let scripted = Target::Stdio(vec!["--answers".into(), answers.to_string_lossy().into()]);
    let nobody = Target::Stdio(vec!["--via".into(), "none".into()]);
    for (mode, _) in MODES {
        let out = client(&scripted, mode, &["--arguments", arguments]).await;
        assert_eq!(
            text(&out),
            r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#
        );
        assert_eq!(out["tools"].as_array().unwrap().len(), 1);

        // Nobody can answer: the tool is left out of the list, and a call anyway says so.
        let out = client(&nobody, mode, &["--arguments", arguments]).await;
        assert_eq!(out["tools"], json!([]), "{mode}");
        assert_eq!(text(&out), NO_PROVIDER_TEXT);
        assert_eq!(out["result"]["isError"], true);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_listing_carries_the_core_schemas() {
    let (targets, _http) = targets().await;
    for target in &targets {
        for (mode, _) in MODES {
            let out = client(target, mode, &["--list-only", "--reply", "decline"]).await;
            let tool = &out["tools"][0];
            assert_eq!(tool["name"], "ask_user_question");
            assert_eq!(
                tool["inputSchema"].to_string(),
                PARAMETERS,
                "{target:?} {mode}"
            );
            assert_eq!(tool["outputSchema"].to_string(), OUTPUT_SCHEMA);
        }
    }
}

/// The web page as the fallback (the page's own HTTP API stands in for its script; the page
/// itself runs in real Chromium in the web crate's tests).
#[tokio::test(flavor = "multi_thread")]
async fn without_elicitation_the_web_page_asks_and_a_cancelled_call_is_withdrawn_from_it() {
    let web = ask_user_web::WebAnswerer::start(ask_user_web::WebConfig::default())
        .await
        .unwrap();
    let url = web.url().to_owned();
    let routing = Routing {
        fallback: vec![std::sync::Arc::new(web.clone())],
        ..Routing::default()
    };
    let http = http_server(routing).await;
    let targets = [Target::Http(http.url.clone())];
    let arguments =
        r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes (Recommended)","No"]}]}"#;
    for target in &targets {
        for (mode, _) in MODES {
            let answer = r#"[{"id":"go","selected":["No"]}]"#;
            let out = client(
                target,
                mode,
                &["--arguments", arguments, "--web-url", &url, "--web", answer],
            )
            .await;
            assert_eq!(out["web_status"], 200, "{mode}");
            assert_eq!(text(&out), r#"{"answers":[{"id":"go","selected":["No"]}]}"#);
            assert_eq!(out["elicitations"], json!([]));

            let out = client(
                target,
                mode,
                &[
                    "--arguments",
                    arguments,
                    "--web-url",
                    &url,
                    "--web",
                    "cancel",
                ],
            )
            .await;
            assert_eq!(out["web_withdrawn"], "cancelled", "{mode}");
            assert_eq!(web.state().pending(), 0);
        }
    }
}

/// A 2026-07-28 call is one HTTP request: its connection closing ends it. (A 2025-era session
/// may resume its stream after a dropped connection, so there the question stays until the
/// session ends: `DELETE`, a cancellation, or `SESSION_IDLE`.)
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_vanishes_mid_call_over_stateless_http_has_its_question_withdrawn() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["auto"] {
        let (out, holding, _http) = held_on_the_fallback(dir.path(), mode, "--vanish").await;
        assert_eq!(out["vanished"], true);
        wait_withdrawn(&holding, 1000).await;
        assert_eq!(holding.withdrawals(), 1, "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_time_budget_withdraws_the_pushed_form_and_says_it_is_not_approval() {
    let target = Target::Stdio(vec![
        "--via".into(),
        "none".into(),
        "--timeout".into(),
        "300ms".into(),
    ]);
    let arguments = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
    let out = client(
        &target,
        "legacy",
        &["--arguments", arguments, "--reply", "hold"],
    )
    .await;
    assert_eq!(
        text(&out),
        "Error: no answer within 300ms; this is not approval. Do not act as if the user agreed: continue without it, or ask again later."
    );
    assert_eq!(out["withdrawn"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_is_a_protocol_error_naming_the_one_tool() {
    let (targets, _http) = targets().await;
    for target in &targets {
        for (mode, _) in MODES {
            let out = client(
                target,
                mode,
                &[
                    "--tool",
                    "ask_user",
                    "--arguments",
                    "{}",
                    "--reply",
                    "decline",
                ],
            )
            .await;
            assert_eq!(
                out["error"], "unknown tool \"ask_user\"; this server has only ask_user_question",
                "{target:?} {mode}"
            );
        }
    }
}
