//! The official TypeScript SDK as the client (`tools/node/mcp-client.mjs`), at its latest
//! version (npm `@modelcontextprotocol/sdk` 1.32.2, protocol 2025-11-25) and pinned at 1.17.5
//! (the aliased package `sdk-1-17`, a 2025-06-18 client, as Codex negotiates), over stdio and
//! streamable HTTP. Every form the server sends is checked, raw, against that SDK's
//! schema of its protocol version, strictly (no key the version does not define).

use std::time::Duration;

use ask_user_core::{DISMISSED_TEXT, NO_PROVIDER_TEXT};
use ask_user_elicit::NOTHING_CHOSEN;
use ask_user_mcp::Routing;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{HttpServer, Target, client_args, http_server, root, run_client, text};

/// (`--sdk`, protocol it negotiates).
const SDKS: [(&str, &str); 2] = [("1.17", "2025-06-18"), ("latest", "2025-11-25")];

const ARGUMENTS: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)","description":"Full SQL, needs a server."},"SQLite"]},{"id":"langs","question":"Which languages?","options":["Rust","Go","Python"],"multi_select":true},{"id":"name","question":"Service name?"}]}"#;

const DEPLOY: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

/// Runs the node client with `args` and returns its JSON output.
async fn node(args: &[String]) -> Value {
    let script = root().join("tools/node/mcp-client.mjs");
    let modules = root().join("tools/node/node_modules/sdk-1-17");
    assert!(
        modules.exists(),
        "{} is missing: run scripts/setup first",
        modules.display()
    );
    run_client("node", &script, args).await
}

/// One session of the `sdk` client against `target`.
async fn client(sdk: &str, target: &Target, extra: &[&str]) -> Value {
    node(&client_args(["--sdk", sdk], extra, target)).await
}

/// Both transports, elicitation on, no fallback answerer.
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

/// Every form the client saw passed the strict check of its SDK's schema.
fn checked_forms(out: &Value) -> &Vec<Value> {
    let forms = out["elicitations"].as_array().unwrap();
    for form in forms {
        assert_eq!(form["problems"], json!([]), "{form}");
        assert_eq!(form["valid"], true);
        assert_eq!(form["handled"], true, "the SDK refused the form: {form}");
    }
    forms
}

#[tokio::test(flavor = "multi_thread")]
async fn every_version_gets_forms_its_schema_accepts_and_answers_map_back() {
    let (targets, _http) = targets().await;
    // A human: one choice, two of three options plus an own answer, free text.
    let human =
        r#"fill:{"db":"SQLite","langs":["Go","Rust"],"langs.own":"Zig","name":"  billing-api "}"#;
    // Own answer instead of the choice; nothing ticked on the multi-select (skipped).
    let own = r#"fill:{"db.own":"MariaDB","langs":[]}"#;
    for target in &targets {
        for (sdk, protocol) in SDKS {
            let out = client(sdk, target, &["--arguments", ARGUMENTS, "--reply", human]).await;
            assert_eq!(out["protocol"], protocol, "{target:?} {sdk}");
            assert_eq!(
                text(&out),
                r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"],"custom":"Zig"},{"id":"name","selected":[],"custom":"billing-api"}]}"#,
                "{target:?} {sdk}"
            );
            let forms = checked_forms(&out);
            assert_eq!(forms.len(), 1);
            // The server's first request of the session has id 1 (never the falsy 0).
            assert_eq!(forms[0]["id"], 1);
            let schema = &forms[0]["params"]["requestedSchema"]["properties"];
            if protocol == "2025-06-18" {
                assert_eq!(forms[0]["params"].get("mode"), None);
                assert_eq!(schema["langs.2"], json!({"type":"boolean","title":"Go"}));
                assert_eq!(
                    schema["db"]["enum"],
                    json!(["PostgreSQL (Recommended)", "SQLite"])
                );
            } else {
                assert_eq!(forms[0]["params"]["mode"], "form");
                assert_eq!(schema["langs"]["type"], "array");
            }

            let out = client(sdk, target, &["--arguments", ARGUMENTS, "--reply", own]).await;
            assert_eq!(
                text(&out),
                r#"{"answers":[{"id":"db","selected":[],"custom":"MariaDB"},{"id":"langs","selected":[]},{"id":"name","selected":[]}]}"#,
                "{target:?} {sdk}"
            );
            checked_forms(&out);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_strict_check_refuses_2025_11_25_shapes_for_a_2025_06_18_client() {
    // The check the tests above rely on can fail: today's shapes sent to the 1.17 SDK.
    let titled = json!({"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{
        "mode":"form","message":"Deploy?","requestedSchema":{"type":"object","properties":{
        "go":{"type":"string","title":"Deploy?","oneOf":[{"const":"Yes","title":"Yes"}],"default":"Yes"}}}}});
    let out = node(&[
        "--sdk".into(),
        "1.17".into(),
        "--check-only".into(),
        titled.to_string(),
    ])
    .await;
    let problems = out["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p == "params.mode: not in this version's schema"),
        "{out}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().unwrap().contains("oneOf")),
        "{out}"
    );
    let out = node(&[
        "--sdk".into(),
        "latest".into(),
        "--check-only".into(),
        titled.to_string(),
    ])
    .await;
    assert_eq!(out["problems"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn decline_and_cancel_dismiss_the_batch() {
    // A person refuses the form: this scripted client answers at once, so the reaction
    // floor (a refusal faster than a person is the client's) is off here.
    let (targets, _http) = targets_with(Duration::ZERO).await;
    for target in &targets {
        for (sdk, _) in SDKS {
            for reply in ["decline", "cancel"] {
                let out = client(sdk, target, &["--arguments", DEPLOY, "--reply", reply]).await;
                assert_eq!(text(&out), DISMISSED_TEXT, "{target:?} {sdk} {reply}");
                assert_eq!(out["result"]["isError"], true);
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
        for (sdk, _) in SDKS {
            for reply in ["decline", "cancel"] {
                let out = client(sdk, target, &["--arguments", DEPLOY, "--reply", reply]).await;
                assert_eq!(text(&out), NO_PROVIDER_TEXT, "{target:?} {sdk} {reply}");
                assert_eq!(out["result"]["isError"], true);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_call_fires_the_handlers_abort_signal() {
    // The first form of the session (id 1): the SDK ignores a cancellation of id 0.
    let (targets, _http) = targets().await;
    for target in &targets {
        for (sdk, _) in SDKS {
            let out = client(
                sdk,
                target,
                &["--arguments", DEPLOY, "--reply", "hold", "--cancel"],
            )
            .await;
            assert_eq!(out["elicitations"][0]["id"], 1, "{target:?} {sdk}");
            assert_eq!(out["withdrawn"], true, "{target:?} {sdk}");
            assert_eq!(out["after_cancel_tools"], 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_the_client_cannot_show_goes_to_the_next_answerer() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#).unwrap();
    let scripted = Target::Stdio(vec!["--answers".into(), answers.display().to_string()]);
    let nobody = Target::Stdio(vec!["--via".into(), "none".into()]);
    for (sdk, _) in SDKS {
        let out = client(sdk, &scripted, &["--arguments", DEPLOY, "--reply", "throw"]).await;
        assert_eq!(out["elicitations"].as_array().unwrap().len(), 1);
        assert_eq!(
            text(&out),
            r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#,
            "{sdk}"
        );
        // Nothing left: a short text for the model, no protocol dump.
        let out = client(sdk, &nobody, &["--arguments", DEPLOY, "--reply", "throw"]).await;
        assert_eq!(text(&out), NO_PROVIDER_TEXT, "{sdk}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_blank_form_is_asked_once_more_then_skips_everything() {
    let target = Target::Stdio(vec!["--via".into(), "none".into()]);
    for (sdk, _) in SDKS {
        // Nothing chosen (a 2025-06-18 form: every option box unticked).
        let blank = r#"fill:{"langs":[]}"#;
        let reply = format!("{blank}|{blank}");
        let out = client(sdk, &target, &["--arguments", ARGUMENTS, "--reply", &reply]).await;
        let forms = checked_forms(&out);
        assert_eq!(forms.len(), 2, "{sdk}");
        let message = forms[1]["params"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{NOTHING_CHOSEN}\n\n")),
            "{message}"
        );
        assert_eq!(
            text(&out),
            r#"{"answers":[{"id":"db","selected":[]},{"id":"langs","selected":[]},{"id":"name","selected":[]}]}"#
        );
        // Something filled the second time: that is the answer.
        let reply = format!(r#"{blank}|fill:{{"name":"x"}}"#);
        let out = client(sdk, &target, &["--arguments", ARGUMENTS, "--reply", &reply]).await;
        assert_eq!(
            text(&out),
            r#"{"answers":[{"id":"db","selected":[]},{"id":"langs","selected":[]},{"id":"name","selected":[],"custom":"x"}]}"#
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_keeps_a_5s_request_timeout_alive_for_an_answer_after_12s() {
    let http = http_server(Routing {
        progress_interval: std::time::Duration::from_secs(2),
        ..Routing::default()
    })
    .await;
    let targets = [
        Target::Stdio(vec![
            "--via".into(),
            "none".into(),
            "--progress-interval".into(),
            "2s".into(),
        ]),
        Target::Http(http.url.clone()),
    ];
    for target in &targets {
        let out = client(
            "latest",
            target,
            &[
                "--arguments",
                DEPLOY,
                "--reply",
                r#"wait:12000:fill:{"go":"No"}"#,
                "--timeout",
                "5000",
                "--progress",
            ],
        )
        .await;
        assert_eq!(out.get("error"), None, "{target:?}: {out}");
        assert_eq!(text(&out), r#"{"answers":[{"id":"go","selected":["No"]}]}"#);
        assert!(out["progress"].as_u64().unwrap() >= 3, "{out}");
    }
}

/// After the client's `DELETE` the question is gone from the page before the `DELETE` is
/// answered: an answer posted right after gets 409, never "200 ok" for an answer nobody reads.
#[tokio::test(flavor = "multi_thread")]
async fn after_delete_a_late_answer_on_the_page_gets_409() {
    let web = ask_user_web::WebAnswerer::start(ask_user_web::WebConfig::default())
        .await
        .unwrap();
    let url = web.url().to_owned();
    let http = http_server(Routing {
        fallback: vec![std::sync::Arc::new(web.clone())],
        ..Routing::default()
    })
    .await;
    for (sdk, _) in SDKS {
        let out = client(
            sdk,
            &Target::Http(http.url.clone()),
            &[
                "--arguments",
                DEPLOY,
                "--reply",
                "none",
                "--web-url",
                &url,
                "--delete",
            ],
        )
        .await;
        assert_eq!(out["web_status"], 409, "{sdk}: {out}");
        assert_eq!(web.state().pending(), 0);
    }
}

/// docs/contract.md §8: a client whose own 5 s request timeout fires (no progress
/// reset; the SDK sends `notifications/cancelled`) leaves the ask detached, not withdrawn: the
/// page keeps the question, the human answers it at ~8 s, the answer is stored but not
/// delivered (the cancelled request's result went nowhere), and the same call retried — on
/// the same session, or on a new session of a client with the same name — gets that answer at
/// once, without a second question; then it is delivered.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_retried_after_the_clients_timeout_gets_the_answer_given_meanwhile() {
    let web = ask_user_web::WebAnswerer::start(ask_user_web::WebConfig::default())
        .await
        .unwrap();
    let url = web.url().to_owned();
    let store = ask_user_store::Store::memory();
    let http = http_server(Routing {
        fallback: vec![std::sync::Arc::new(web.clone())],
        store: Some(store.clone()),
        ..Routing::default()
    })
    .await;
    // Each round asks its own question, so one round's ask never meets the other's.
    let tonight = DEPLOY.replace("Deploy?", "Deploy tonight?");
    for (sdk, new_session, arguments) in
        [("latest", false, DEPLOY), ("1.17", true, tonight.as_str())]
    {
        let mut args = vec![
            "--arguments",
            arguments,
            "--reply",
            "none",
            "--web-url",
            &url,
            "--retry",
            "--timeout",
            "5000",
            "--answer-at",
            "8000",
            "--retry-delay",
            "3000",
        ];
        if new_session {
            args.push("--retry-new-session");
        }
        let target = Target::Http(http.url.clone());
        let run = client(sdk, &target, &args);
        // Meanwhile, in the store: the ask is detached when the client's timeout fires, and
        // once the human answered it is closed but not delivered until the retry collects it.
        let watch = async {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
            let id = loop {
                let open = store.list_open().await.unwrap();
                if let Some(rec) = open.first()
                    && !rec.attached
                {
                    break rec.id;
                }
                assert!(tokio::time::Instant::now() < deadline, "never detached");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            };
            let closed = store.wait_outcome(id).await.unwrap();
            assert_eq!(closed.delivered_at, None, "{sdk}: {closed:?}");
            id
        };
        let (out, id) = tokio::join!(run, watch);
        assert!(
            out["error"].as_str().unwrap().contains("timed out"),
            "{sdk}: {out}"
        );
        assert_eq!(out["pending_after_timeout"], true, "{sdk}: {out}");
        assert_eq!(out["web_status"], 200, "{sdk}: {out}");
        assert_eq!(out.get("retry_error"), None, "{sdk}: {out}");
        assert_eq!(
            out["retry"]["content"][0]["text"], r#"{"answers":[{"id":"go","selected":["No"]}]}"#,
            "{sdk}: {out}"
        );
        // Nobody answers a second question, so that answer can only be the stored one.
        let rec = store.get(id).await.unwrap();
        assert!(rec.delivered_at.is_some(), "{sdk}: {rec:?}");
        assert_eq!(web.state().pending(), 0, "{sdk}");
    }
}

/// A call retried while its ask is still open (the client's 5 s timeout fired, nobody
/// answered yet) re-attaches to it: the page keeps one question, not two, and the answer given
/// there afterwards is the retry's result.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_retried_while_its_ask_is_open_waits_on_the_same_question() {
    let web = ask_user_web::WebAnswerer::start(ask_user_web::WebConfig::default())
        .await
        .unwrap();
    let url = web.url().to_owned();
    let store = ask_user_store::Store::memory();
    let http = http_server(Routing {
        fallback: vec![std::sync::Arc::new(web.clone())],
        store: Some(store.clone()),
        ..Routing::default()
    })
    .await;
    let args = [
        "--arguments",
        DEPLOY,
        "--reply",
        "none",
        "--web-url",
        &url,
        "--retry",
        "--timeout",
        "5000",
        "--answer-after-retry",
        "4000",
        "--retry-delay",
        "1000",
    ];
    let target = Target::Http(http.url.clone());
    let run = client("latest", &target, &args);
    // Detached when the timeout fires, attached again by the retry: then the page still holds
    // exactly one question.
    let watch = async {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut detached = false;
        loop {
            let open = store.list_open().await.unwrap();
            assert!(open.len() <= 1, "{open:?}");
            match open.first() {
                Some(rec) if !rec.attached => detached = true,
                Some(_) if detached => break,
                _ => {}
            }
            assert!(tokio::time::Instant::now() < deadline, "never re-attached");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(web.state().pending(), 1);
    };
    let (out, ()) = tokio::join!(run, watch);
    assert!(
        out["error"].as_str().unwrap().contains("timed out"),
        "{out}"
    );
    assert_eq!(out["web_status"], 200, "{out}");
    assert_eq!(
        out["retry"]["content"][0]["text"], r#"{"answers":[{"id":"go","selected":["No"]}]}"#,
        "{out}"
    );
    assert_eq!(web.state().pending(), 0);
}
