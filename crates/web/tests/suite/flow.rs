//! Nothing is sent that the screen does not show, and closed cards say what happened
//! (docs/contract.md §6), in real headless Chromium (`tests/browser/flow.cjs`), with axe-core
//! over each state (no serious or critical violation).

use std::time::Duration;

use ask_user_core::{CancellationToken, DISMISSED_TEXT, ExecutionContext};
use ask_user_web::{WebAnswerer, WebConfig};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{DB, Scenario, ask, ask_with, web};

/// Three questions, each with a recommended option (the terminal takes three Enters).
const THREE: &str = r#"{"questions":[
    {"id":"db","header":"Database","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]},
    {"id":"lock","header":"Migration","question":"Run the table-locking migration now?","options":["Tonight (Recommended)","Now"]},
    {"id":"checks","header":"Checks","question":"Which checks?","multi_select":true,"options":["Unit tests (Recommended)","Lint"]}]}"#;

fn no_axe_violations(seen: &Value) {
    for (state, found) in seen["axe"].as_object().expect("axe results per state") {
        assert_eq!(found, &json!([]), "axe-core, state {state}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_answered_one_enter_per_question_and_only_the_last_enter_sends() {
    let web = web().await;
    let call = ask(&web, THREE);
    let seen = Scenario::start("keys", web.url(), &[]).result().await;
    no_axe_violations(&seen);
    let mut names: Vec<String> = serde_json::from_value(seen["names"].clone()).unwrap();
    names.sort();
    assert_eq!(
        names,
        [
            "button: Dismiss all",
            "button: Skip this question",
            "button: Skip this question",
            "button: Skip this question",
            "button: Submit 3 answers",
            "checkbox: Lint",
            "checkbox: Unit tests Recommended",
            "group: 1 of 3 Database Which database?",
            "group: 2 of 3 Migration Run the table-locking migration now?",
            "group: 3 of 3 Checks Which checks?",
            "list: ",
            "radio: Now",
            "radio: PostgreSQL Recommended",
            "radio: SQLite",
            "radio: Tonight Recommended",
            "status: ",
            "textbox: Add your own answer (optional)",
            "textbox: Or type your own answer",
            "textbox: Or type your own answer",
        ],
        "what a screen reader is told (Chromium's accessibility tree)"
    );
    assert_eq!(seen["keys"], 3, "page keys = terminal keys for this batch");
    assert_eq!(
        seen["openAfterFirst"], true,
        "the first Enter sends nothing"
    );
    assert_eq!(seen["focus"], json!([0, 1, 2]), "each Enter moves on");
    assert_eq!(
        seen["review"],
        json!([
            "Database: PostgreSQL",
            "Migration: Tonight",
            "Checks: Unit tests"
        ])
    );
    assert_eq!(seen["submitLabel"], "Submit 3 answers");
    assert_eq!(seen["progress"], json!(["1 of 3", "2 of 3", "3 of 3"]));
    assert_eq!(seen["sent"], seen["review"], "the card says what was sent");
    assert_eq!(seen["errors"], json!([]));
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"lock","selected":["Tonight (Recommended)"]},{"id":"checks","selected":["Unit tests (Recommended)"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_holds_back_a_question_that_was_never_on_screen() {
    let web = web().await;
    let long = "A long description that takes room on a phone screen. ".repeat(4);
    let options: Vec<Value> = (1..=6)
        .map(|i| {
            let label = if i == 1 {
                "Option 1 (Recommended)".to_owned()
            } else {
                format!("Option {i}")
            };
            json!({"label": label, "description": long})
        })
        .collect();
    let arguments = json!({"questions": [
        {"id": "a", "question": "First?", "options": options},
        {"id": "b", "question": "Second?", "options": ["Yes (Recommended)", "No"]},
        {"id": "lock", "question": "Lock the orders table now?", "options": ["Yes, lock it (Recommended)", "No"]}]})
    .to_string();
    let call = ask(&web, &arguments);
    let seen = Scenario::start("unseen", web.url(), &[]).result().await;
    no_axe_violations(&seen);
    assert_eq!(
        seen["seenBefore"],
        Value::Null,
        "the last question starts off screen"
    );
    assert_eq!(seen["stillOpen"], true, "nothing was sent");
    assert_eq!(
        seen["summary"],
        "Not sent yet: check question 2, 3 (scrolled into view), then Submit again."
    );
    assert_eq!(seen["focus"], 1, "the keyboard is on the first of them");
    assert_eq!(seen["lastVisible"], true);
    assert_eq!(seen["errors"], json!([]));
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"a","selected":["Option 1 (Recommended)"]},{"id":"b","selected":["Yes (Recommended)"]},{"id":"lock","selected":["Yes, lock it (Recommended)"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dismiss_with_answers_in_progress_asks_once_more() {
    let web = web().await;
    let call = ask(&web, DB);
    let seen = Scenario::start("dismiss-confirm", web.url(), &[])
        .result()
        .await;
    no_axe_violations(&seen);
    assert_eq!(
        seen["armed"],
        json!({
            "label": "Discard your answers? Press again",
            "notice": "You have started answering: press Dismiss again to discard it, or carry on.",
            "open": true,
        })
    );
    assert_eq!(call.await.unwrap().text(), DISMISSED_TEXT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_text_survives_a_withdrawn_question_and_the_budget_counts_down() {
    let web = WebAnswerer::start(WebConfig {
        timeout: Some(Duration::from_secs(600)),
        ..WebConfig::default()
    })
    .await
    .unwrap();
    let cancel = CancellationToken::new();
    let call = ask_with(&web, DB, ExecutionContext::new(cancel.clone()));
    let mut page = Scenario::start("kept", web.url(), &[]);
    page.step("typed").await;
    cancel.cancel();
    let seen = page.result().await;
    no_axe_violations(&seen);
    let countdown = seen["countdown"].as_str().unwrap();
    assert!(
        countdown.starts_with("Time left to answer: 9 min ")
            || countdown == "Time left to answer: 10 min 0 s",
        "{countdown}"
    );
    assert_eq!(
        seen["closed"],
        "⊘ Withdrawn by the agent: it no longer needs this answer. Nothing was sent."
    );
    assert_eq!(seen["kind"], "cancelled");
    assert_eq!(seen["kept"], true);
    assert_eq!(
        seen["keptNote"],
        "Your typed text above was not sent; it stays there so you can copy it."
    );
    assert_eq!(
        seen["textAboveNote"], true,
        "the note's words match the layout"
    );
    assert_eq!(seen["text"], "half of a long reply");
    assert_eq!(seen["textVisible"], true);
    assert_eq!(seen["readOnly"], true);
    assert_eq!(seen["copied"], "half of a long reply");
    assert_eq!(seen["countdownHidden"], true);
    assert_eq!(seen["checked"], 0, "no choice looks taken");
    assert_eq!(seen["errors"], json!([]));
    assert_eq!(
        call.await.unwrap().text(),
        "Error: ask_user_question was aborted before the user answered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_card_lists_what_was_sent_and_a_long_question_is_body_text() {
    let web = web().await;
    let long = format!(
        "Explain the plan.\n\n{}",
        "Details of the plan. ".repeat(180)
    );
    let arguments = json!({"questions": [
        {"id": "db", "header": "Database", "question": "Which database?", "options": ["PostgreSQL (Recommended)", "SQLite"]},
        {"id": "plan", "question": long}]})
    .to_string();
    let call = ask(&web, &arguments);
    let seen = Scenario::start("closed-answer", web.url(), &[])
        .result()
        .await;
    assert_eq!(seen["axe"], json!([]), "axe-core on the answered card");
    assert!(
        seen["longQuestion"]["legend"].as_u64().unwrap() < 80,
        "{seen}"
    );
    // The legend is the question's first line, not its line breaks shown as "␤".
    assert_eq!(seen["longQuestion"]["short"], "Explain the plan.");
    assert_eq!(seen["longQuestion"]["bodyWeight"], "400");
    assert_eq!(
        seen["longQuestion"]["bodyLength"].as_u64().unwrap(),
        // As the shared rule shows it: the trailing space goes.
        long.trim_end().chars().count() as u64
    );
    assert_eq!(seen["closed"], "✔ Answer sent. The agent carries on.");
    assert_eq!(
        seen["sent"],
        json!(["Database: SQLite", "Explain the plan.: “my own words”"])
    );
    assert_eq!(
        seen["recommended"],
        json!({"borderLeft": "1px", "badgeBackground": "rgba(0, 0, 0, 0)", "checked": false}),
        "the Recommended option not picked does not look picked"
    );
    assert_eq!(seen["errors"], json!([]));
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"plan","selected":[],"custom":"my own words"}]}"#
    );
}
