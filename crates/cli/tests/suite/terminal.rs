//! The terminal question as a person uses it: a real pseudo-terminal (a tmux pane), keys sent
//! with `send-keys`, the screen read with `capture-pane`, conditions awaited (no fixed sleeps).
//! Each test runs `ask-user ask` with the question piped to stdin and stdout to a file, so
//! every test also checks that the UI is drawn on `/dev/tty` and stdout holds only the answer.

use pretty_assertions::assert_eq;

use super::support::{Pane, repo_file};

const OWN: &str = "Type your own answer";

fn deploy() -> String {
    std::fs::read_to_string(repo_file("examples/deploy.json")).unwrap()
}

const DB: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"SQLite"},{"label":"PostgreSQL (Recommended)","description":"Managed, with backups."},{"label":"MySQL"}]}]}"#;

/// After ask-user exited: the viewport is cleared, raw mode is off and the cursor shows.
fn assert_restored(pane: &Pane) {
    let stty = pane.file("stty.txt").unwrap();
    let flags: Vec<&str> = stty.split_whitespace().collect();
    assert!(
        flags.contains(&"icanon") && flags.contains(&"echo"),
        "cooked mode again:\n{stty}"
    );
    assert_eq!(pane.display("#{cursor_flag}"), "1", "cursor visible");
    let screen = pane.screen();
    assert!(!screen.contains(OWN), "the question is cleared:\n{screen}");
    assert!(
        screen.contains("MARKER"),
        "what was on screen before stays:\n{screen}"
    );
}

#[test]
fn enter_accepts_the_recommended_option() {
    let pane = Pane::ask(&[], DB);
    let screen = pane.wait_text(OWN);
    assert!(screen.contains("› 2. PostgreSQL (Recommended)"), "{screen}");
    assert!(screen.contains("Managed, with backups."), "{screen}");
    assert!(
        screen.contains("\n Database\n"),
        "the header chip:\n{screen}"
    );
    assert_eq!(pane.display("#{window_bell_flag}"), "1", "the bell rang");
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#,
            ""
        )
    );
    assert_restored(&pane);
}

#[test]
fn arrows_move_and_a_digit_picks() {
    let pane = Pane::ask(&[], DB);
    pane.wait_text(OWN);
    pane.keys(&["Up"]);
    pane.wait_text("› 1. SQLite");
    pane.keys(&["Down", "Down"]);
    pane.wait_text("› 3. MySQL");
    pane.keys(&["k"]);
    pane.wait_text("› 2. PostgreSQL");
    pane.keys(&["3"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, r#"{"answers":[{"id":"db","selected":["MySQL"]}]}"#)
    );
    assert_restored(&pane);
}

#[test]
fn own_answer_typed_inline() {
    let pane = Pane::ask(&[], DB);
    pane.wait_text(OWN);
    pane.type_text("Oracle 23ai");
    pane.wait_text("› 4. Oracle 23ai");
    pane.keys(&["BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
    pane.wait_for("the text shortened", |s| {
        s.contains("› 4. Oracle") && !s.contains("23")
    });
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            0,
            r#"{"answers":[{"id":"db","selected":[],"custom":"Oracle"}]}"#
        )
    );
}

#[test]
fn three_questions_with_toggles_progress_and_a_way_back() {
    let pane = Pane::ask(&[], &deploy());
    pane.wait_text("1/3");
    pane.keys(&["2"]);
    pane.wait_text("2/3");
    pane.keys(&["Left"]);
    let back = pane.wait_text("1/3");
    assert!(
        back.contains("› 2. Production"),
        "the earlier choice is kept:\n{back}"
    );
    pane.keys(&["Enter"]);
    pane.wait_text("2/3");
    // Unit tests start chosen (recommended); add the load test, toggle integration on and off.
    pane.keys(&["3", "Up", "Space"]);
    pane.wait_text("› [x] 2. Integration tests");
    pane.keys(&["Space"]);
    pane.wait_text("› [ ] 2. Integration tests");
    let screen = pane.screen();
    assert!(
        screen.contains("[x] 1. Unit tests (Recommended)") && screen.contains("[x] 3. Load test"),
        "{screen}"
    );
    pane.keys(&["Enter"]);
    pane.wait_text("3/3");
    pane.type_text("Flip the billing_v2 flag to roll back.");
    pane.wait_text("Flip the billing_v2 flag");
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            0,
            r#"{"answers":[{"id":"env","selected":["Production"]},{"id":"checks","selected":["Unit tests (Recommended)","Load test"]},{"id":"note","selected":[],"custom":"Flip the billing_v2 flag to roll back."}]}"#
        )
    );
    assert_restored(&pane);
}

#[test]
fn empty_multi_select_asks_once_more_then_skips() {
    let pane = Pane::ask(
        &[],
        r#"{"questions":[{"id":"f","question":"Which features?","multi_select":true,"options":["Auth (Recommended)","Billing"]}]}"#,
    );
    pane.wait_text("[x] 1. Auth");
    pane.keys(&["Space"]);
    pane.wait_text("[ ] 1. Auth");
    pane.keys(&["Enter"]);
    pane.wait_text(
        "Nothing chosen. Press Enter again to skip this question, or choose with Space.",
    );
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, r#"{"answers":[{"id":"f","selected":[]}]}"#)
    );
}

#[test]
fn esc_skips_one_question() {
    let pane = Pane::ask(&[], &deploy());
    pane.wait_text("1/3");
    pane.keys(&["Escape"]);
    pane.wait_text("2/3");
    pane.keys(&["Enter"]);
    pane.wait_text("3/3");
    pane.keys(&["Escape"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            0,
            r#"{"answers":[{"id":"env","selected":[]},{"id":"checks","selected":["Unit tests (Recommended)"]},{"id":"note","selected":[]}]}"#
        )
    );
    assert_restored(&pane);
}

#[test]
fn ctrl_c_dismisses_the_batch_with_exit_4() {
    let pane = Pane::ask(&[], &deploy());
    pane.wait_text("1/3");
    pane.keys(&["Enter"]);
    pane.wait_text("2/3");
    pane.keys(&["C-c"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (4, ask_user_core::DISMISSED_TEXT)
    );
    assert_restored(&pane);
}

#[test]
fn timeout_withdraws_the_question_with_exit_5() {
    let pane = Pane::ask(&["--timeout", "1s"], DB);
    pane.wait_text(OWN);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            5,
            "Error: no answer within 1s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later."
        )
    );
    assert_restored(&pane);
}

#[test]
fn sigterm_withdraws_the_question_and_restores_the_terminal() {
    let pane = Pane::ask(&[], DB);
    pane.wait_text(OWN);
    let pid = pane.pid();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (130, ask_user_core::ABORTED_TEXT)
    );
    assert_restored(&pane);
}

#[test]
fn hostile_question_text_is_shown_inert() {
    let hostile = r#"{"questions":[{"id":"x","header":"\u001b[41mALERT","question":"Title \u001b]0;PWNED\u0007 then \u001b[2J\u001b[H cleared? \u202eevil","options":["ok \u001b[1A\u001b[2K","no"]}]}"#;
    let pane = Pane::ask(&[], hostile);
    let title_before = pane.display("#{pane_title}");
    let screen = pane.wait_text(OWN);
    assert!(
        screen.contains("Title ␛]0;PWNED␇ then ␛[2J␛[H cleared? \\u{202e}evil"),
        "{screen}"
    );
    assert!(screen.contains("␛[41mALERT"), "{screen}");
    assert!(screen.contains("ok ␛[1A␛[2K"), "{screen}");
    assert!(
        screen.contains("MARKER"),
        "the screen was not cleared:\n{screen}"
    );
    let title = pane.display("#{pane_title}");
    assert!(!title.contains("PWNED"), "title changed to {title:?}");
    assert_eq!(title, title_before);
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            0,
            "{\"answers\":[{\"id\":\"x\",\"selected\":[\"ok \\u001b[1A\\u001b[2K\"]}]}"
        ),
        "the answer keeps the label byte for byte (JSON-escaped)"
    );
}

#[test]
fn forty_columns_wrap_without_cutting() {
    let pane = Pane::ask_sized(&[], &deploy(), 40, 24);
    let screen = pane.wait_text(OWN);
    for piece in [
        "Safe to try: only the team sees it,",
        "and a rollback takes a minute.",
        "smoke tests pass.",
    ] {
        assert!(screen.contains(piece), "{piece:?} in\n{screen}");
    }
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn resize_redraws() {
    let pane = Pane::ask(&[], &deploy());
    pane.wait_text("Safe to try: only the team sees it, and a rollback takes a minute.");
    pane.resize(44, 24);
    // Redrawn for 44 columns: the description wraps onto a line of its own, indented.
    let screen = pane.wait_for("the redraw at 44 columns", |s| {
        s.lines()
            .any(|l| l.trim_end() == "     a rollback takes a minute.")
    });
    assert!(
        screen
            .lines()
            .any(|l| l.trim_end() == "     Safe to try: only the team sees it, and"),
        "{screen}"
    );
    assert_eq!(
        screen.matches("Which environment").count(),
        1,
        "drawn once:\n{screen}"
    );
    pane.keys(&["Enter"]);
    pane.wait_text("2/3");
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn a_paste_goes_into_the_own_answer_and_a_pasted_newline_does_not_confirm() {
    let pane = Pane::ask(&[], DB);
    pane.wait_text(OWN);
    pane.paste("Postgres 17\nwith pgvector");
    pane.wait_text("› 4. Postgres 17 with pgvector");
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            0,
            r#"{"answers":[{"id":"db","selected":[],"custom":"Postgres 17 with pgvector"}]}"#
        )
    );
}

#[test]
fn keys_typed_before_the_question_appeared_do_not_answer_it() {
    let pane = Pane::ask_gated(&[], DB);
    pane.wait_text("MARKER");
    pane.keys(&["3"]);
    pane.wait_text("MARKER\n3");
    pane.open_gate();
    let screen = pane.wait_text(OWN);
    assert!(screen.contains("› 2. PostgreSQL (Recommended)"), "{screen}");
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (
            0,
            r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#
        )
    );
}

#[test]
fn in_the_background_nobody_can_answer_and_it_never_stops_the_process() {
    // Taking the terminal from a background job would stop it (SIGTTOU): a hang.
    let pane = Pane::ask_in_background(&[], DB);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (6, ask_user_core::NO_PROVIDER_TEXT)
    );
    assert!(!pane.screen().contains(OWN));
}
