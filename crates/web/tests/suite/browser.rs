//! The page in real headless Chromium (Debian's `/usr/bin/chromium`, driven by npm
//! `playwright-core` from `tests/browser/scenarios.cjs`), against the real server on a socket.

use std::sync::Arc;

use ask_user_core::{
    AskUserQuestionTool, CancellationToken, DISMISSED_TEXT, ExecutionContext, FirstAnswer,
};
use ask_user_test_support::answerers::{Waiting, selected};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::Notify;

use super::support::{DB, Scenario, ask, ask_with, until_pending, web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_select_by_keyboard_with_the_recommended_option_preselected() {
    let web = web().await;
    let call = ask(&web, DB);
    let seen = Scenario::start("single", web.url(), &[]).result().await;
    assert_eq!(
        seen,
        json!({
            "preselected": "PostgreSQL (Recommended)",
            "focused": "PostgreSQL (Recommended)",
            "badge": true,
            "shownLabel": "PostgreSQL",
            "description": "One file.",
            "closed": "Answer sent. The agent carries on.",
            "title": "ask-user",
            "errors": [],
        })
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_never_sends_a_preselected_option_that_was_never_on_screen() {
    // Found: with the 12th of 12 tall options recommended (so preselected), the page focused
    // option 1 and one Enter sent option 12 from ~2,000 px below the fold.
    let web = web().await;
    let description = "A long explanation of what this choice does to the data. ".repeat(8);
    let options: Vec<serde_json::Value> = (1..=12)
        .map(|i| {
            let label = if i == 12 {
                "Drop the orders table (Recommended)".to_owned()
            } else {
                format!("Option {i}")
            };
            json!({"label": label, "description": description})
        })
        .collect();
    let request = json!({"questions":[{"id":"q","question":"What should I do with the orders table?","options":options}]});
    let call = ask(&web, &request.to_string());
    let seen = Scenario::start("unseenRecommended", web.url(), &[])
        .result()
        .await;
    assert_eq!(
        seen,
        json!({
            "inViewAtLoad": false,
            "belowTheFold": true,
            "closedAfterFirstEnter": null,
            "summary": "Not sent yet: check your choice in question 1 (scrolled into view), then Submit again.",
            "inViewAfterFirstEnter": true,
            "focused": "Drop the orders table (Recommended)",
            "errors": [],
        })
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"q","selected":["Drop the orders table (Recommended)"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_is_enabled_only_once_the_whole_request_taller_than_the_screen_was_in_view() {
    let web = web().await;
    let request = ask_user_test_support::tall_permission_request();
    let call = ask(&web, &request);
    let seen = Scenario::start("tallRequest", web.url(), &[])
        .result()
        .await;
    assert_eq!(
        seen,
        json!({
            "disabledAtLoad": true,
            "disabledAfterEnd": true,
            "openAfterEnd": true,
            "enabledAfterReading": true,
            "errors": [],
        })
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"permission","selected":["Allow once"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_select_own_answers_skip_and_an_incomplete_submission_held_back() {
    let web = web().await;
    let call = ask(
        &web,
        r#"{"questions":[
        {"id":"checks","question":"Which checks?","multi_select":true,"options":["Unit tests (Recommended)","Lint","End-to-end"]},
        {"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]},
        {"id":"name","question":"Service name?"},
        {"id":"color","question":"Colour?","options":["Red","Blue"]}]}"#,
    );
    let seen = Scenario::start("multi", web.url(), &[]).result().await;
    assert_eq!(
        seen,
        json!({
            "hintShown": true,
            "incomplete": [false, false, true, true],
            "skipPressed": "true",
            "radiosAfterTyping": 0,
            "axe": [],
            "errors": [],
        })
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"checks","selected":["Unit tests (Recommended)","Lint"],"custom":"also fuzz"},{"id":"db","selected":[]},{"id":"name","selected":[],"custom":"billing-api"},{"id":"color","selected":[],"custom":"Teal"}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_submission_shows_why_and_keeps_the_question_open() {
    let web = web().await;
    let call = ask(&web, DB);
    let seen = Scenario::start("refused", web.url(), &[]).result().await;
    assert_eq!(
        seen,
        json!({
            "errorText": "\"Bogus\" is not one of the options of question \"db\"",
            "stillOpen": true,
            "errorHiddenAfter": true,
            "axe": [],
        })
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tabs_racing_one_wins_the_other_sees_it_answered_elsewhere() {
    let web = web().await;
    let call = ask(&web, DB);
    let seen = Scenario::start("twoTabs", web.url(), &[]).result().await;
    let mut kinds: Vec<String> = serde_json::from_value(seen["kinds"].clone()).unwrap();
    kinds.sort();
    let mut texts: Vec<String> = serde_json::from_value(seen["texts"].clone()).unwrap();
    texts.sort();
    // The loser learns it lost from the live withdrawal, or from its own submission's 409 when
    // that comes first: either way it says so, without an error.
    if kinds[1] == "not-taken" {
        assert_eq!(kinds, ["answered-here", "not-taken"]);
        assert_eq!(
            texts,
            [
                "Answer sent. The agent carries on.",
                "Not taken: already answered in another tab or on another device.",
            ]
        );
    } else {
        assert_eq!(kinds, ["answered-elsewhere", "answered-here"]);
        assert_eq!(
            texts,
            [
                "Answer sent. The agent carries on.",
                "Answered in another tab or on another device.",
            ]
        );
    }
    assert_eq!(
        seen["loserChecked"], 0,
        "the loser's unsent choices are cleared"
    );
    assert_eq!(seen["loserError"], false, "and no error is shown");
    assert_eq!(
        seen["late"],
        json!({"status": 409, "text": "not taken: already answered in another tab or on another device"})
    );
    let text = call.await.unwrap().text();
    assert!(
        text == r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#
            || text == r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#,
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_opened_later_shows_what_is_still_pending() {
    let web = web().await;
    let first = ask(
        &web,
        r#"{"questions":[{"id":"a","question":"First?","options":["Yes (Recommended)","No"]}]}"#,
    );
    until_pending(&web, 1).await;
    let second = ask(
        &web,
        r#"{"questions":[{"id":"b","question":"Second?","options":["Yes (Recommended)","No"]}]}"#,
    );
    until_pending(&web, 2).await;
    let seen = Scenario::start("late", web.url(), &[]).result().await;
    assert_eq!(
        seen,
        json!({"before": 2, "after": 1, "remaining": "First?", "titleBefore": "(2) ask-user", "titleAfter": "(1) ask-user", "focusMoved": true})
    );
    assert_eq!(
        second.await.unwrap().text(),
        r#"{"answers":[{"id":"b","selected":["Yes (Recommended)"]}]}"#
    );
    assert_eq!(
        first.await.unwrap().text(),
        r#"{"answers":[{"id":"a","selected":["Yes (Recommended)"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_question_is_withdrawn_live() {
    let web = web().await;
    let cancel = CancellationToken::new();
    let call = ask_with(&web, DB, ExecutionContext::new(cancel.clone()));
    let mut page = Scenario::start("withdrawn", web.url(), &[]);
    page.step("shown").await;
    cancel.cancel();
    let seen = page.result().await;
    assert_eq!(
        seen,
        json!({"kind": "cancelled", "closed": "Withdrawn by the agent: it no longer needs this answer. Nothing was sent.", "inputsDisabled": true, "checked": 0, "title": "ask-user"})
    );
    assert_eq!(
        call.await.unwrap().text(),
        "Error: ask_user_question was aborted before the user answered"
    );
}

/// Stands in for the terminal answerer in a race: answers "SQLite" when `go` is notified, and
/// records whether it was cancelled. (The real terminal is raced with the page in the CLI's
/// tests.)
fn slow(go: &Arc<Notify>) -> Arc<Waiting> {
    Arc::new(
        Waiting::new()
            .answering_when(go.clone(), selected("db", "SQLite"))
            .named("the terminal"),
    )
}

fn race(
    web: &ask_user_web::WebAnswerer,
    slow: &Arc<Waiting>,
) -> tokio::task::JoinHandle<ask_user_core::Outcome> {
    let both = FirstAnswer::new(vec![Arc::new(web.clone()), slow.clone()]);
    let tool = AskUserQuestionTool::new(Arc::new(both));
    tokio::spawn(async move { tool.call(DB, ExecutionContext::default()).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_another_answerer_the_page_withdraws_when_the_other_answers_first() {
    let web = web().await;
    let go = Arc::new(Notify::new());
    let slow = slow(&go);
    let call = race(&web, &slow);
    let mut page = Scenario::start("withdrawn", web.url(), &[]);
    page.step("shown").await;
    go.notify_one();
    let seen = page.result().await;
    // Not "withdrawn" — the human answered, in the terminal.
    assert_eq!(
        seen,
        json!({"kind": "answered-other", "closed": "Not taken here: answered in the terminal.", "inputsDisabled": true, "checked": 0, "title": "ask-user"})
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#
    );
    assert_eq!(web.state().pending(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_another_answerer_the_page_answers_first_and_the_other_is_cancelled() {
    let web = web().await;
    let go = Arc::new(Notify::new());
    let slow = slow(&go);
    let call = race(&web, &slow);
    let seen = Scenario::start("single", web.url(), &[]).result().await;
    assert_eq!(seen["closed"], "Answer sent. The agent carries on.");
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#
    );
    assert!(slow.withdrawn(), "the other answerer was cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_model_text_stays_text() {
    let web = web().await;
    let arguments = json!({"questions": [{
        "id": "x\" onmouseover=\"window.__pwned=6",
        "header": "<img src=x onerror=\"window.__pwned=1\">",
        "question": "\"><script>window.__pwned=2</script><b>bold?</b>",
        "options": [
            {"label": "javascript:window.__pwned=3", "description": "<a href=\"javascript:window.__pwned=4\">click</a>"},
            {"label": "<img src=x onerror=window.__pwned=5> (Recommended)", "description": "</span></label><script>window.__pwned=7</script>"}
        ]
    }]})
    .to_string();
    let call = ask(&web, &arguments);
    let seen = Scenario::start("hostile", web.url(), &[]).result().await;
    assert_eq!(
        seen,
        json!({
            "pwned": null,
            "images": 0,
            "scripts": ["cards.js", "app.js"],
            "anchors": 0,
            "bolds": 0,
            "chip": "<img src=x onerror=\"window.__pwned=1\">",
            "chipTitle": "<img src=x onerror=\"window.__pwned=1\">",
            "question": "\"><script>window.__pwned=2</script><b>bold?</b>",
            "labels": ["javascript:window.__pwned=3", "<img src=x onerror=window.__pwned=5>"],
            "values": ["javascript:window.__pwned=3", "<img src=x onerror=window.__pwned=5> (Recommended)"],
            "descriptions": ["<a href=\"javascript:window.__pwned=4\">click</a>", "</span></label><script>window.__pwned=7</script>"],
            "pwnedAfter": null,
            "errors": [],
        })
    );
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"x\" onmouseover=\"window.__pwned=6","selected":["javascript:window.__pwned=3"]}]}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dismissing_the_batch_tells_the_model_the_user_did_not_answer() {
    let web = web().await;
    let call = ask(&web, DB);
    let seen = Scenario::start("dismiss", web.url(), &[]).result().await;
    assert_eq!(
        seen,
        json!({
            "label": "Dismiss",
            "closed": "Dismissed. The agent is told you did not answer.",
            "cardsAfterHide": 0,
            "empty": "No questions right now. This page updates by itself when the agent asks.",
        })
    );
    let outcome = call.await.unwrap();
    assert_eq!(outcome.text(), DISMISSED_TEXT);
    assert_eq!(outcome.code().unwrap().as_str(), "ASK_CANCELLED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_is_refused_without_the_key_with_a_foreign_host_cross_origin_and_oversized() {
    let web = web().await;
    let call = ask(&web, DB);
    let seen = Scenario::start("access", web.url(), &[]).result().await;
    let key_text =
        "forbidden: this address needs its secret key; open the full link ask-user printed";
    assert_eq!(
        seen,
        json!({
            "noKey": {"status": 403, "text": key_text},
            "wrongKey": {"status": 403, "text": key_text},
            "rebind": {"status": 403, "text": "forbidden: unexpected Host header; open the address ask-user printed"},
            "crossOrigin": "refused: TypeError",
            "big": {"status": 413, "text": "request body too large: at most 8 MiB"},
            "stillOpen": null,
        })
    );
    // The cross-origin answer ("SQLite") did not count: the page's own answer did.
    assert_eq!(
        call.await.unwrap().text(),
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#
    );
}

/// Regenerates `docs/web-desktop.png` and `docs/web-phone.png` (and a dark phone shot):
/// `cargo test -p ask-user-web --test all -- --ignored screenshots`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes docs/*.png; run by hand when the page changes"]
async fn screenshots() {
    let web = web().await;
    let _call = ask(&web, include_str!("../../examples/demo.json"));
    until_pending(&web, 1).await;
    let docs = super::support::repo_root().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let path = |name: &str| docs.join(name).to_string_lossy().into_owned();
    let (desktop, phone, dark) = (
        path("web-desktop.png"),
        path("web-phone.png"),
        path("web-phone-dark.png"),
    );
    let seen = Scenario::start("screenshot", web.url(), &[&desktop, &phone, &dark])
        .result()
        .await;
    assert_eq!(seen, json!({"ok": true}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_360_px_phone_in_dark_mode_fits_and_answers_by_touch() {
    let web = web().await;
    let long = "x".repeat(300);
    let arguments = json!({"questions": [{
        "id": "db",
        "header": format!("A very long header {long}"),
        "question": format!("Which one? {long}"),
        "options": [{"label": "Keep (Recommended)"}, {"label": format!("Other {long}"), "description": long}]
    }]})
    .to_string();
    let call = ask(&web, &arguments);
    let seen = Scenario::start("phone", web.url(), &[]).result().await;
    assert_eq!(seen["scrollWidth"], 360, "no sideways scrolling: {seen}");
    assert!(seen["widest"].as_f64().unwrap() <= 360.0, "{seen}");
    assert_eq!(seen["background"], "rgb(17, 20, 24)", "dark colours");
    assert_eq!(
        seen["chipClipped"], true,
        "the long header is cut on screen"
    );
    assert_eq!(seen["chipExpanded"], true, "a tap shows all of it");
    assert_eq!(
        call.await.unwrap().text(),
        format!(r#"{{"answers":[{{"id":"db","selected":["Other {long}"]}}]}}"#)
    );
}

/// In real Chromium: bidi and control characters are shown inert, every "(Recommended)" option is
/// badged, the header chip works by keyboard, the incomplete hint belongs to its question
/// and a live summary announces it, accessible names carry no CSS uppercase; once the ask is
/// over and the server stops, the page says it is done and stops reconnecting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_text_is_inert_the_page_is_accessible_and_says_when_it_is_done() {
    let web = web().await;
    let arguments = json!({"questions": [
        {"id": "pay", "header": "Pay\u{202e}yaP",
         "question": "Send \u{202e}0001$\u{202c} now?\u{7}",
         "options": [
            {"label": "\u{202e}oN (Recommended)", "description": "line 1\nline\u{2028}2"},
            {"label": "Yes (Recommended)"},
            {"label": "Maybe\u{200b}"}]},
        {"id": "name", "question": "Service name?"}]})
    .to_string();
    let call = ask(&web, &arguments);
    let mut page = Scenario::start("trust", web.url(), &[]);
    page.step("answered").await;
    assert_eq!(
        call.await.unwrap().text(),
        "{\"answers\":[{\"id\":\"pay\",\"selected\":[\"\u{202e}oN (Recommended)\"]},{\"id\":\"name\",\"selected\":[],\"custom\":\"billing-api\"}]}"
    );
    web.shut_down().await;
    let seen = page.result().await;
    assert_eq!(
        seen["shown"],
        json!({
            "chip": "Pay\\u{202e}yaP",
            "question": "Send \\u{202e}0001$\\u{202c} now?␇",
            "labels": ["\\u{202e}oN", "Yes", "Maybe\u{27e8}1 blank character\u{27e9}"],
            "values": ["\u{202e}oN (Recommended)", "Yes (Recommended)", "Maybe\u{200b}"],
            "badges": [true, true, false],
            "preselected": ["\u{202e}oN (Recommended)"],
            "description": "line 1\nline\\u{2028}2",
        })
    );
    assert_eq!(
        seen["chipExpanded"], true,
        "the keyboard on its question shows the whole header"
    );
    assert_eq!(
        seen["chipTabIndex"], -1,
        "the chip is no Tab stop of its own"
    );
    assert_eq!(
        seen["chipName"], true,
        "the chip's accessible name is its text"
    );
    assert_eq!(seen["badgeName"], true);
    assert_eq!(
        seen["noUppercase"], true,
        "no CSS uppercase in accessible names"
    );
    assert_eq!(
        seen["incomplete"],
        json!({"invalid": "true", "describedBy": "Choose an option, type an answer, or skip this question.", "firstInvalid": null})
    );
    assert_eq!(
        seen["summary"],
        "1 question needs an answer: choose an option, type an answer, or skip it."
    );
    assert_eq!(seen["summaryAfter"], true);
    assert_eq!(seen["status"], "Done, you can close this tab.");
    assert_eq!(
        seen["reconnects"], 0,
        "no reconnecting to a server that is gone"
    );
    assert_eq!(seen["errors"], json!([]));
}

/// The shared text-safety corpus (`crates/core/tests/golden/text-safety.json`) on the page in
/// real Chromium: each case, as a question's text, shows exactly as pinned there (the server
/// prepares it; the page has no rule of its own), and right-to-left text runs right to left
/// (`dir="auto"`), as do option labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_shared_corpus_as_pinned_and_right_to_left_text_right_to_left() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/golden/text-safety.json");
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = fixture["cases"].as_array().unwrap().clone();
    assert!(cases.len() > 40, "the fixture is read");
    let web = web().await;
    let mut calls = Vec::new();
    for (n, chunk) in cases.chunks(10).enumerate() {
        let questions: Vec<serde_json::Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"id": format!("c{n}-{i}"), "question": c["input"]}))
            .collect();
        calls.push(ask(&web, &json!({ "questions": questions }).to_string()));
        until_pending(&web, n + 1).await;
    }
    let rtl = [
        "\u{5dc}\u{5de}\u{5d7}\u{5d5}\u{5e7}",
        "\u{62d}\u{630}\u{641}",
    ];
    calls.push(ask(
        &web,
        &json!({"questions": [{"id": "rtl", "question": "Which?", "options": [
            {"label": rtl[0]}, {"label": rtl[1]}, {"label": "Latin"}]}]})
        .to_string(),
    ));
    until_pending(&web, calls.len()).await;
    let page = Scenario::start("corpus", web.url(), &[&(cases.len() + 1).to_string()]);
    let seen = page.result().await;
    let seen = seen["seen"].as_array().unwrap();
    for (case, shown) in cases.iter().zip(seen) {
        assert_eq!(shown["text"], case["display"], "{}", case["name"]);
        // dir="auto": the first strong character decides.
        let right_to_left = ask_user_test_support::right_to_left(case["display"].as_str().unwrap());
        assert_eq!(
            shown["direction"],
            if right_to_left { "rtl" } else { "ltr" },
            "{}",
            case["name"]
        );
    }
    assert_eq!(
        seen[cases.len()]["labels"],
        json!([
            {"text": rtl[0], "direction": "rtl"},
            {"text": rtl[1], "direction": "rtl"},
            {"text": "Latin", "direction": "ltr"},
        ])
    );
    for call in calls {
        call.abort();
    }
    web.shut_down().await;
}
