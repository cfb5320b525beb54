//! The hook mappings against golden files (`tests/golden/hook/`): each `NAME.event.json` is a
//! hook input in the host's documented shape; `NAME.args.json` is what ask-user asks and
//! `NAME.CASE.reply.json` the exact JSON the host reads for each outcome. `ASK_USER_BLESS=1`
//! rewrites the expected files.

use std::path::PathBuf;
use std::time::Duration;

use ask_user_core::{AnswerItem, Answers, Limits, Outcome, decode};

use super::*;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/hook")
        .join(name)
}

fn event(name: &str) -> String {
    std::fs::read_to_string(golden(&format!("{name}.event.json"))).unwrap()
}

/// Compares `actual` with the golden file `name` (rewritten with `ASK_USER_BLESS=1`).
fn check(name: &str, actual: &str) {
    let path = golden(name);
    let actual = format!("{actual}\n");
    if std::env::var_os("ASK_USER_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual, expected,
        "{name} is stale; ASK_USER_BLESS=1 cargo test -p ask-user hook_map rewrites it"
    );
}

fn parsed(host: HookHost, name: &str) -> HookAsk {
    let ask = parse(host, &event(name)).unwrap().unwrap();
    // What is asked is valid ask_user_question arguments.
    decode(ask.arguments.as_str(), &Limits::default()).unwrap();
    check(&format!("{name}.args.json"), &ask.arguments);
    ask
}

fn answered(items: Vec<AnswerItem>) -> Outcome {
    Outcome::Answered(Answers { answers: items })
}

fn own(id: &str, text: &str) -> AnswerItem {
    AnswerItem {
        id: id.into(),
        selected: Vec::new(),
        custom: Some(text.into()),
    }
}

#[test]
fn ask_user_question_answers_go_back_as_updated_input_answers() {
    let ask = parsed(HookHost::ClaudeCode, "ask");
    assert!(ask.key.starts_with("claude-code:abc123:"), "{}", ask.key);
    let mut again: Value = serde_json::from_str(&event("ask")).unwrap();
    again["tool_use_id"] = json!("toolu_02_the_retry");
    let retry = parse(HookHost::ClaudeCode, &again.to_string())
        .unwrap()
        .unwrap();
    assert_eq!(
        retry.key, ask.key,
        "a retry (a new tool-use id) finds the same ask"
    );
    check("ask.still-open.reply.json", &still_open(&ask));
    let cases = [
        (
            "labels",
            answered(vec![
                AnswerItem::selected("q1", ["Postgres"]),
                AnswerItem::selected("q2", ["Lint", "Tests"]),
            ]),
        ),
        (
            "own-and-skip",
            answered(vec![
                own("q1", "MySQL, sadly"),
                AnswerItem {
                    id: "q2".into(),
                    selected: Vec::new(),
                    custom: None,
                },
            ]),
        ),
        ("dismissed", Outcome::Dismissed),
        ("timed-out", Outcome::TimedOut(Duration::from_secs(600))),
        ("nobody", Outcome::NoProvider),
    ];
    for (case, outcome) in cases {
        check(&format!("ask.{case}.reply.json"), &reply(&ask, &outcome));
    }
}

#[test]
fn a_plan_is_approved_or_kept_in_planning_with_the_humans_words() {
    let ask = parsed(HookHost::ClaudeCode, "plan");
    let cases = [
        (
            "approved",
            answered(vec![AnswerItem::selected("plan", [APPROVE])]),
        ),
        (
            "keep-planning",
            answered(vec![AnswerItem::selected("plan", [KEEP_PLANNING])]),
        ),
        (
            "own",
            answered(vec![own("plan", "Backfill in batches of 1000.")]),
        ),
        ("dismissed", Outcome::Dismissed),
    ];
    for (case, outcome) in cases {
        check(&format!("plan.{case}.reply.json"), &reply(&ask, &outcome));
    }
}

#[test]
fn a_permission_is_allowed_only_by_the_humans_choice() {
    for (host, name) in [
        (HookHost::ClaudeCode, "permission"),
        (HookHost::Codex, "codex-permission"),
    ] {
        let ask = parsed(host, name);
        let cases = [
            (
                "allowed",
                answered(vec![AnswerItem::selected("permission", [ALLOW_ONCE])]),
            ),
            (
                "denied",
                answered(vec![AnswerItem::selected("permission", [DENY])]),
            ),
            (
                "own",
                answered(vec![own("permission", "Not on main; use a branch.")]),
            ),
            ("timed-out", Outcome::TimedOut(Duration::from_secs(3600))),
            ("failed", Outcome::Failed("the store broke".into())),
        ];
        for (case, outcome) in cases {
            check(&format!("{name}.{case}.reply.json"), &reply(&ask, &outcome));
        }
    }
    let codex = parse(HookHost::Codex, &event("codex-permission"))
        .unwrap()
        .unwrap();
    assert!(
        codex
            .key
            .starts_with("codex:01a2333a-0c3d-7282-9333-7a1283216188:"),
        "keyed by the session, the tool and its input ({})",
        codex.key
    );
    check(
        "codex-permission.still-open.reply.json",
        &still_open(&codex),
    );
}

#[test]
fn other_events_fall_through_and_garbage_is_an_error() {
    assert_eq!(parse(HookHost::ClaudeCode, &event("other")).unwrap(), None);
    assert_eq!(
        parse(HookHost::Codex, &event("ask")).unwrap(),
        None,
        "Codex has no AskUserQuestion"
    );
    assert!(parse(HookHost::ClaudeCode, "not json").is_err());
    assert!(parse(HookHost::ClaudeCode, "[1]").is_err());
}

#[test]
fn a_long_plan_is_cut_and_says_so() {
    let plan = "x".repeat(SHOWN_CHARS + 5);
    let input = serde_json::json!({"hook_event_name":"PreToolUse","tool_name":"ExitPlanMode","session_id":"s","tool_use_id":"t","tool_input":{"plan":plan}});
    let ask = parse(HookHost::ClaudeCode, &input.to_string())
        .unwrap()
        .unwrap();
    decode(ask.arguments.as_str(), &Limits::default()).unwrap();
    assert!(ask.arguments.contains("… (5 more characters, not shown)"));
}

#[test]
fn an_mcp_servers_form_is_asked_field_by_field_and_answered_as_content() {
    let ask = parsed(HookHost::ClaudeCode, "form");
    assert!(ask.key.starts_with("claude-code:abc123:"), "{}", ask.key);
    check("form.still-open.reply.json", &still_open(&ask));
    let cases = [
        (
            "accepted",
            answered(vec![
                AnswerItem::selected("f1", ["production"]),
                AnswerItem::selected("f2", ["Europe", "Americas"]),
                AnswerItem::selected("f3", ["No"]),
                own("f4", " 3 "),
                own("f5", "Friday deploy, approved by Ann"),
            ]),
        ),
        (
            "partly",
            answered(vec![
                AnswerItem::selected("f1", ["staging"]),
                AnswerItem::selected("f3", ["Yes"]),
                own("f4", "three"),
            ]),
        ),
        ("dismissed", Outcome::Dismissed),
        ("timed-out", Outcome::TimedOut(Duration::from_secs(60))),
    ];
    for (case, outcome) in cases {
        check(&format!("form.{case}.reply.json"), &reply(&ask, &outcome));
    }
    let url_mode = r#"{"hook_event_name":"Elicitation","mcp_server_name":"s","message":"Sign in","mode":"url","url":"https://example.com"}"#;
    assert_eq!(
        parse(HookHost::ClaudeCode, url_mode).unwrap(),
        None,
        "a browser hand-off falls through"
    );
}
