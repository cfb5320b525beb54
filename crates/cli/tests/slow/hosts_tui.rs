//! The real agent hosts' interactive terminal UIs end to end (crates/hosts-e2e): Claude Code
//! and the Codex TUI in a tmux pane, each in a network namespace with only loopback, against
//! the fake model API, with `ask-user mcp` as their MCP server. The host shows ask-user's form;
//! the test reads the screen and types into it like a person, and pins the exact text the
//! host hands its model.

use std::time::Duration;

use ask_user_core::DISMISSED_TEXT;
use ask_user_hosts_e2e::{Host, Scenario, Session, interactive};
use ask_user_test_support::TmuxPane;
use pretty_assertions::assert_eq;

const BIN: &str = env!("CARGO_BIN_EXE_ask-user");

/// One single-select question: the choice alone is the answer.
const ONE: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)"},{"label":"SQLite"}]}]}"#;

/// Single-select, multi-select, free text and an own answer in one call.
const BATCH: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)"},{"label":"SQLite"}]},{"id":"langs","question":"Which languages?","options":[{"label":"Rust"},{"label":"Go"}],"multi_select":true},{"id":"name","question":"Service name?"},{"id":"region","question":"Which region?","options":[{"label":"eu-west"},{"label":"us-east"}]}]}"#;

/// What the person answers to [`BATCH`], as the model reads it.
const BATCH_ANSWER: &str = r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"]},{"id":"name","selected":[],"custom":"billing-api"},{"id":"region","selected":[],"custom":"ap-south (Mumbai)"}]}"#;

/// Only the host's form can answer: no page, no inbox.
fn form_only(arguments: &str) -> Scenario {
    Scenario::new(arguments).server_args(["--via", "none"])
}

/// The texts Codex's model read, its varying `Wall time: 0.0108 seconds` as `N`.
fn codex_texts(session: &Session) -> Vec<String> {
    session
        .wait_texts(1)
        .iter()
        .map(|text| {
            match text
                .strip_prefix("Wall time: ")
                .and_then(|rest| rest.split_once(" seconds"))
            {
                Some((_, after)) => format!("Wall time: N seconds{after}"),
                None => text.clone(),
            }
        })
        .collect()
}

/// What Codex's model reads for a result whose text is `text` (an answer or an `isError`
/// result alike: Codex drops `isError`).
fn codex_wrapped(text: &str) -> String {
    format!("Wall time: N seconds\nOutput:\n{text}")
}

/// A person reads the form before the first key: this models their reading time and
/// synchronises nothing. It matters twice: a refusal sooner than the server's 1 s reaction
/// floor counts as the client's own (docs/decisions.md), and the Codex TUI drops a key
/// pressed the moment its form appears (measured: the first key lost in 2 runs of 8 when
/// pressed at once, in none of 8 after one second).
fn read_the_form() {
    std::thread::sleep(Duration::from_millis(1500));
}

/// Presses `key`, then waits until the screen satisfies `then`.
fn press(pane: &TmuxPane, key: &str, what: &str, then: impl Fn(&str) -> bool) {
    pane.keys(&[key]);
    pane.wait_for(what, then);
}

/// Whether a line of `screen` holds every one of `parts`.
fn line_with(screen: &str, parts: &[&str]) -> bool {
    screen
        .lines()
        .any(|line| parts.iter().all(|part| line.contains(part)))
}

// ---- Codex TUI ---------------------------------------------------------------------------

/// Waits for Codex's form to show field `n` of `of`.
fn codex_field(session: &Session, n: usize, of: usize) {
    session.pane().wait_text(&format!("Field {n}/{of}"));
}

/// Waits for Codex's form and reads it.
fn codex_form(session: &Session, fields: usize) {
    codex_field(session, 1, fields);
    read_the_form();
}

/// Codex TUI: a choice alone is submitted with Enter (before, every form ended with a text
/// field, and Enter on an empty text field does nothing there, so a choice could never be
/// sent).
#[test]
fn codex_tui_submits_a_choice_alone() {
    let session = interactive(Host::Codex, BIN, &form_only(ONE));
    let pane = session.pane();
    codex_form(&session, 1);
    press(pane, "Down", "SQLite chosen", |s| s.contains("› 2. SQLite"));
    pane.keys(&["Enter"]);
    assert_eq!(
        codex_texts(&session),
        [codex_wrapped(
            r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#
        )],
        "{}",
        session.diagnostics()
    );
}

/// Codex TUI: a multi-select's options start unticked (before, each started True, so Enter
/// through them ticked every one), free text is typed, and the own answer of a choice
/// question comes from its "Type my own answer" option and a second form.
#[test]
fn codex_tui_answers_a_multi_select_free_text_and_an_own_answer() {
    let session = interactive(Host::Codex, BIN, &form_only(BATCH));
    let pane = session.pane();
    // db: SQLite.
    codex_form(&session, 6);
    press(pane, "Down", "SQLite chosen", |s| s.contains("› 2. SQLite"));
    pane.keys(&["Enter"]);
    // langs: Rust and Go ticked (each starts on False), its own-answer choice left False.
    for field in [2, 3] {
        codex_field(&session, field, 6);
        assert!(pane.screen().contains("› 2. False"), "{}", pane.screen());
        press(pane, "Up", "True chosen", |s| s.contains("› 1. True"));
        pane.keys(&["Enter"]);
    }
    codex_field(&session, 4, 6);
    assert!(pane.screen().contains("› 2. False"), "{}", pane.screen());
    pane.keys(&["Enter"]);
    // name: typed.
    codex_field(&session, 5, 6);
    pane.type_text("billing-api");
    pane.wait_text("› billing-api");
    pane.keys(&["Enter"]);
    // region: "Type my own answer", then the second form.
    codex_field(&session, 6, 6);
    press(pane, "Down", "us-east", |s| s.contains("› 2. us-east"));
    press(pane, "Down", "own answer chosen", |s| {
        s.contains("› 3. Type my own answer")
    });
    press(pane, "Enter", "the second form", |s| {
        s.contains("Type your own answer:") && s.contains("Field 1/1")
    });
    pane.type_text("ap-south (Mumbai)");
    pane.wait_text("› ap-south (Mumbai)");
    pane.keys(&["Enter"]);
    assert_eq!(
        codex_texts(&session),
        [codex_wrapped(BATCH_ANSWER)],
        "{}",
        session.diagnostics()
    );
}

/// Codex TUI: a person who reads the form and presses Esc dismissed the questions.
#[test]
fn codex_tui_esc_is_the_persons_dismissal() {
    let session = interactive(Host::Codex, BIN, &form_only(ONE));
    codex_form(&session, 1);
    session.pane().keys(&["Escape"]);
    assert_eq!(
        codex_texts(&session),
        [codex_wrapped(DISMISSED_TEXT)],
        "{}",
        session.diagnostics()
    );
}

// ---- Claude Code -------------------------------------------------------------------------

/// Waits until Claude Code's form cursor (`❯`) is on the line holding `label`.
fn claude_at(pane: &TmuxPane, label: &str) {
    pane.wait_for(&format!("the cursor on {label:?}"), |s| {
        line_with(s, &["❯", label])
    });
}

/// Presses Down until the cursor is on `label` (the next field of that name).
fn claude_down_to(pane: &TmuxPane, label: &str) {
    press(pane, "Down", &format!("the cursor on {label:?}"), |s| {
        line_with(s, &["❯", label])
    });
}

/// Claude Code: every field kind of one form — a choice, a multi-select, free text and an
/// own answer — filled in by keys, then Accept.
#[test]
fn claude_code_answers_every_field_kind() {
    let session = interactive(Host::ClaudeCode, BIN, &form_only(BATCH));
    let pane = session.pane();
    pane.wait_text("requests your input");
    read_the_form();
    // The whole message is on screen (a long one is cut to "… (+N more lines)"), and each
    // field's title is its whole question.
    let screen = pane.wait_text("4/4 Which region?:");
    assert!(
        screen.contains("4 questions, one field each below") && !screen.contains("more lines"),
        "{screen}"
    );
    // db: expand, SQLite, Enter (the cursor moves to its own answer).
    claude_at(pane, "Which database?:");
    press(pane, "Right", "db expanded", |s| s.contains("◯ SQLite"));
    press(pane, "Down", "SQLite under the cursor", |s| {
        line_with(s, &["❯", "SQLite"])
    });
    press(pane, "Enter", "SQLite chosen", |s| {
        s.contains("Which database?: SQLite")
    });
    // langs: expand, tick Rust and Go, Enter.
    claude_down_to(pane, "Which languages? (choose any):");
    press(pane, "Right", "langs expanded", |s| s.contains("☐ Rust"));
    press(pane, "Space", "Rust ticked", |s| s.contains("☒ Rust"));
    press(pane, "Down", "Go under the cursor", |s| {
        line_with(s, &["❯", "Go"])
    });
    press(pane, "Space", "Go ticked", |s| s.contains("☒ Go"));
    press(pane, "Enter", "langs chosen", |s| {
        s.contains("Which languages? (choose any): Rust, Go")
    });
    // name: typed; Enter commits it and moves on.
    claude_down_to(pane, "Service name?:");
    pane.type_text("billing-api");
    pane.wait_text("Service name?: billing-api");
    press(pane, "Enter", "the cursor on the region", |s| {
        line_with(s, &["❯", "Which region?:"])
    });
    // region: no choice, its own answer typed.
    press(pane, "Down", "region's own answer", |s| {
        line_with(s, &["❯", "Your own answer to 4/4:", "Type something"])
    });
    pane.type_text("ap-south (Mumbai)");
    pane.wait_text("Your own answer to 4/4: ap-south (Mumbai)");
    press(pane, "Enter", "the cursor on Accept", |s| {
        line_with(s, &["❯", "Accept"])
    });
    // The person looks over what they are sending (Claude Code ignores an Enter on Accept
    // that comes straight after the last field: measured, it then needs a second one).
    read_the_form();
    pane.keys(&["Enter"]);
    assert_eq!(
        session.wait_texts(1),
        [BATCH_ANSWER],
        "{}",
        session.diagnostics()
    );
}

/// Claude Code: a person who reads the form and presses Esc dismissed the questions.
#[test]
fn claude_code_esc_is_the_persons_dismissal() {
    let session = interactive(Host::ClaudeCode, BIN, &form_only(ONE));
    session.pane().wait_text("requests your input");
    read_the_form();
    session.pane().keys(&["Escape"]);
    assert_eq!(
        session.wait_texts(1),
        [DISMISSED_TEXT],
        "{}",
        session.diagnostics()
    );
}

// ---- Long waits ----------------------------------------------------------------------------

/// Codex TUI: a form nobody answers until the call's limit (`--call-limit 2s` here; 270 s by
/// default, before Codex's own 300 s) reads the still-open text, and Codex takes the form off
/// the screen. (Claude Code needs no limit: its form is an input-required round the client
/// holds, with no call open meanwhile.)
#[test]
fn codex_tui_form_left_open_past_the_limit_reads_still_open() {
    let scenario = Scenario::new(ONE).server_args(["--via", "none", "--call-limit", "2s"]);
    let session = interactive(Host::Codex, BIN, &scenario);
    assert_eq!(
        codex_texts(&session),
        [codex_wrapped(ask_user_mcp::STILL_OPEN_TEXT)],
        "{}",
        session.diagnostics()
    );
    session
        .pane()
        .wait_for("the form off the screen", |s| !s.contains("Field 1/1"));
}

/// Claude Code: a person who reads the form and takes its Decline button dismissed the
/// questions too.
#[test]
fn claude_code_decline_is_the_persons_dismissal() {
    let session = interactive(Host::ClaudeCode, BIN, &form_only(ONE));
    let pane = session.pane();
    pane.wait_text("requests your input");
    read_the_form();
    claude_down_to(pane, "Your own answer:");
    claude_down_to(pane, "Accept");
    press(pane, "Right", "the cursor on Decline", |s| {
        line_with(s, &["❯ Decline"])
    });
    read_the_form();
    pane.keys(&["Enter"]);
    assert_eq!(
        session.wait_texts(1),
        [DISMISSED_TEXT],
        "{}",
        session.diagnostics()
    );
}
