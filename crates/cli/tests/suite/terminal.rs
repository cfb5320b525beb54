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

/// [`BATCH3`] in a pane, its first question answered with Enter: on the second (`2/3`).
fn on_the_second_of_three() -> Pane {
    let pane = Pane::ask(&[], BATCH3);
    pane.wait_text("1/3");
    pane.keys(&["Enter"]);
    pane.wait_text("2/3");
    pane
}

/// `ask-user ask ARGS` in a pane (see [`Pane::ask`]), once its question is on screen.
fn shown(args: &[&str], question: &str) -> Pane {
    let pane = Pane::ask(args, question);
    pane.wait_text(OWN);
    pane
}

/// One question "Which?" with the options O1 to O5, a multi-select if `multi`.
fn five_options(multi: bool) -> String {
    format!(
        r#"{{"questions":[{{"id":"f","question":"Which?","multi_select":{multi},"options":["O1","O2","O3","O4","O5"]}}]}}"#
    )
}

/// After ask-user exited: the viewport is cleared, raw mode is off and the cursor shows.
fn assert_restored(pane: &Pane) {
    pane.assert_cooked_with_cursor();
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
    let pane = shown(&[], DB);
    pane.keys(&["Up"]);
    pane.wait_text("› 1. SQLite");
    pane.keys(&["Down", "Down"]);
    pane.wait_text("› 3. MySQL");
    pane.keys(&["Up"]);
    pane.wait_text("› 2. PostgreSQL");
    pane.keys(&["3"]);
    pane.wait_text("› 3. MySQL");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"db","selected":["MySQL"]}]}"#);
    assert_restored(&pane);
}

#[test]
fn own_answer_typed_inline() {
    let pane = shown(&[], DB);
    pane.type_text("Oracle 23ai");
    pane.wait_text("› 4. Oracle 23ai");
    pane.keys(&["BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
    pane.wait_for("the text shortened", |s| {
        s.contains("› 4. Oracle") && !s.contains("23")
    });
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":[],"custom":"Oracle"}]}"#,
    );
}

#[test]
fn three_questions_with_toggles_progress_and_a_way_back() {
    let pane = Pane::ask(&[], &deploy());
    pane.wait_text("1/3");
    pane.keys(&["2"]);
    pane.wait_text("› 2. Production");
    pane.keys(&["Enter"]);
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
    pane.finished_with(0, r#"{"answers":[{"id":"env","selected":["Production"]},{"id":"checks","selected":["Unit tests (Recommended)","Load test"]},{"id":"note","selected":[],"custom":"Flip the billing_v2 flag to roll back."}]}"#);
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
    pane.finished_with(0, r#"{"answers":[{"id":"f","selected":[]}]}"#);
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
    pane.wait_text("Enter sends the answers");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"env","selected":[]},{"id":"checks","selected":["Unit tests (Recommended)"]},{"id":"note","selected":[]}]}"#);
    assert_restored(&pane);
}

#[test]
fn ctrl_c_dismisses_the_batch_with_exit_4() {
    let pane = Pane::ask(&[], &deploy());
    pane.wait_text("1/3");
    pane.keys(&["Enter"]);
    pane.wait_text("2/3");
    // An answer was given: Ctrl-C asks once more, a second Ctrl-C dismisses.
    pane.keys(&["C-c"]);
    pane.wait_text("Dismiss all questions?");
    pane.keys(&["C-c"]);
    pane.finished_with(4, ask_user_core::DISMISSED_TEXT);
    assert_restored(&pane);
}

#[test]
fn timeout_withdraws_the_question_with_exit_5() {
    let pane = shown(&["--timeout", "1s"], DB);
    pane.finished_with(5, "Error: no answer within 1s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later.");
    assert_restored(&pane);
}

#[test]
fn sigterm_withdraws_the_question_and_restores_the_terminal() {
    let pane = shown(&[], DB);
    pane.signal(ask_user_test_support::Signal::TERM);
    pane.finished_with(130, ask_user_core::ABORTED_TEXT);
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
    // Answers in progress: Ctrl-C asks once more, the second dismisses.
    pane.keys(&["C-c", "C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn a_paste_goes_into_the_own_answer_and_a_pasted_newline_does_not_confirm() {
    let pane = shown(&[], DB);
    pane.paste("Postgres 17\nwith pgvector");
    pane.wait_text("› 4. Postgres 17 with pgvector");
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":[],"custom":"Postgres 17 with pgvector"}]}"#,
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
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#,
    );
}

#[test]
fn in_the_background_nobody_can_answer_and_it_never_stops_the_process() {
    // Taking the terminal from a background job would stop it (SIGTTOU): a hang.
    let pane = Pane::ask_in_background(&[], DB);
    pane.finished_with(6, ask_user_core::NO_PROVIDER_TEXT);
    assert!(!pane.screen().contains(OWN));
}

// ---- No stray key sends an answer; typed text is never reinterpreted or lost. ----

const BATCH3: &str = r#"{"questions":[{"id":"env","question":"Which environment?","options":["Staging","Production (Recommended)"]},{"id":"log","question":"Which tracing?","multi_select":true,"options":["Logging (Recommended)","Metrics","Tracing"]},{"id":"go","question":"Go ahead?","options":["Yes (Recommended)","No"]}]}"#;

#[test]
fn letters_typed_on_an_option_row_go_into_the_own_answer() {
    // Defect 1: `k` moved the cursor and was lost.
    let pane = shown(&[], DB);
    pane.type_text("keep it simple");
    pane.wait_text("› 4. keep it simple");
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":[],"custom":"keep it simple"}]}"#,
    );
}

#[test]
fn a_digit_followed_by_text_becomes_part_of_the_text_and_never_submits() {
    // Defect 1: `2 replicas please` submitted option 2 at the first key.
    let pane = shown(&[], DB);
    pane.type_text("2 replicas please");
    pane.wait_text("› 4. 2 replicas please");
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":[],"custom":"2 replicas please"}]}"#,
    );
}

#[test]
fn a_digit_alone_moves_and_only_enter_confirms() {
    let pane = shown(&[], DB);
    pane.keys(&["3"]);
    pane.wait_text("› 3. MySQL");
    assert!(pane.file("rc.txt").is_none(), "a digit never confirms");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"db","selected":["MySQL"]}]}"#);
}

#[test]
fn typing_in_a_multi_select_keeps_every_letter() {
    // Defect 1: `just tracing` showed as `ust tracing`.
    let pane = on_the_second_of_three();
    pane.type_text("just tracing");
    pane.wait_text("4. just tracing");
    pane.keys(&["C-c", "C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn esc_on_the_last_question_does_not_send_the_batch() {
    // Defect 16: Esc on the last question submitted everything.
    let pane = on_the_second_of_three();
    pane.keys(&["Enter"]);
    pane.wait_text("3/3");
    pane.keys(&["Escape"]);
    let screen = pane.wait_text("Enter sends the answers");
    assert!(screen.contains("Go ahead?"), "{screen}");
    assert!(pane.file("rc.txt").is_none(), "Esc alone sends nothing");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"env","selected":["Production (Recommended)"]},{"id":"log","selected":["Logging (Recommended)"]},{"id":"go","selected":[]}]}"#);
}

#[test]
fn holding_backspace_in_the_own_answer_stays_on_the_question() {
    // Defect 6: Backspace past the start of the text went to the previous question.
    let pane = on_the_second_of_three();
    pane.type_text("abc");
    pane.wait_text("4. abc");
    pane.keys(&["BSpace"; 12]);
    pane.wait_for("the text deleted", |s| {
        !s.contains("4. abc") && s.contains(OWN)
    });
    pane.type_text("x");
    let screen = pane.wait_text("4. x");
    assert!(screen.contains("2/3"), "still on question 2:\n{screen}");
    pane.keys(&["C-c", "C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn a_long_own_answer_shows_its_end_where_the_caret_is() {
    // Defect 2: from ~5 wrapped lines the end of the text was off screen.
    let pane = shown(&[], DB);
    let words: String = (0..90).map(|i| format!("word{i} ")).collect();
    pane.type_text(&format!("{words}THE-END"));
    let screen = pane.wait_text("THE-END");
    assert!(
        screen.contains("Enter"),
        "the key help still shows:\n{screen}"
    );
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert!(run.stdout.contains("THE-END"), "{}", run.stdout);
}

#[test]
fn a_long_question_opens_at_its_start_and_home_never_moves_the_choice() {
    // A 3,995-character question: the view opens at the question; Home used to move the
    // choice to option 1 off screen, and Enter then sent option 1 from a screen without options.
    let long = format!("START {}", "lorem ipsum dolor sit amet ".repeat(147));
    let json = format!(
        r#"{{"questions":[{{"id":"q","header":"HEAD","question":"{long}","options":["No","Yes (Recommended)"]}}]}}"#
    );
    let pane = Pane::ask(&[], &json);
    let screen = pane.wait_text("START lorem");
    assert!(screen.contains("HEAD"), "{screen}");
    // Enter before the whole question was on screen only shows more of it; PgDn reads it
    // through to the options.
    pane.keys(&["NPage"; 4]);
    pane.wait_text("› 2. Yes (Recommended)");
    pane.keys(&["Home"]);
    pane.wait_text("START lorem");
    pane.keys(&["Enter"]);
    pane.wait_text("› 2. Yes (Recommended)");
    pane.keys(&["Home"]);
    pane.wait_text("START lorem");
    pane.keys(&["End"]);
    pane.wait_text("› 2. Yes (Recommended)");
    for _ in 0..40 {
        pane.keys(&["Up"]);
    }
    pane.wait_text("START lorem");
    pane.keys(&["Enter"]);
    pane.wait_text("› 1. No");
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, r#"{"answers":[{"id":"q","selected":["No"]}]}"#),
        "only what was on screen was sent"
    );
}

#[test]
fn at_forty_by_twelve_the_question_text_is_visible() {
    let pane = Pane::ask_sized(&[], &deploy(), 40, 12);
    let screen = pane.wait_text("1/3");
    assert!(screen.contains("Which environment"), "{screen}");
    pane.keys(&["Down", "Down"]);
    pane.wait_text("› 3. Both, staging first");
    let screen = pane.wait_text("↑ Which environment");
    assert!(screen.contains("Staging now"), "{screen}");
    pane.keys(&["Down"]);
    pane.wait_for("the own-answer row", own_row_selected);
    pane.keys(&["Up"; 8]);
    pane.wait_text("Which environment should I deploy the");
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn typed_option_numbers_are_option_numbers() {
    // `1` `3` in a five-option multi-select sent custom "13" with nothing ticked; in a
    // single-select `2` `3` sent custom "23".
    let pane = shown(&[], &five_options(true));
    pane.type_text("13");
    pane.wait_text("[x] 3. O3");
    pane.keys(&["Enter"]);
    let run = pane.finished();
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, r#"{"answers":[{"id":"f","selected":["O1","O3"]}]}"#),
        "3 keys"
    );
    let pane = shown(&[], &five_options(false));
    pane.type_text("23");
    pane.wait_text("› 3. O3");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"f","selected":["O3"]}]}"#);
}

#[test]
fn typed_text_survives_the_question_closing() {
    let pane = shown(&[], DB);
    pane.type_text("half a thought about replicas");
    pane.wait_text("half a thought about replicas");
    pane.signal(ask_user_test_support::Signal::TERM);
    assert_eq!(pane.finished().status, 130);
    let screen = pane.screen();
    assert!(screen.contains("✘ Not sent: "), "why it closed:\n{screen}");
    assert!(
        screen.contains("\nhalf a thought about replicas\n"),
        "the text, whole on its own line to copy:\n{screen}"
    );
}

#[test]
fn at_forty_columns_the_summary_keeps_the_whole_answer() {
    let pane = Pane::ask_sized(&[], DB, 40, 12);
    pane.wait_text(OWN);
    pane.type_text("the managed cluster in eu-west with two replicas");
    pane.keys(&["Enter"]);
    assert_eq!(pane.finished().status, 0);
    let screen = pane.screen();
    let joined: Vec<&str> = screen.lines().map(str::trim).collect();
    assert!(
        joined
            .join(" ")
            .contains("✔ Which database? → the managed cluster in eu-west with two replicas"),
        "{screen}"
    );
}

#[test]
fn a_newline_in_a_label_cannot_fake_an_option_row() {
    // Defect 13.
    let pane = Pane::ask(
        &[],
        r#"{"questions":[{"id":"x","question":"Pick","options":["Keep\n  2. Delete everything (Recommended)","Other"]}]}"#,
    );
    let screen = pane.wait_text(OWN);
    assert!(
        screen.contains("Keep␤  2. Delete everything (Recommended)"),
        "{screen}"
    );
    assert!(
        !screen
            .lines()
            .any(|l| l.trim_start().starts_with("2. Delete")),
        "{screen}"
    );
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

/// The cursor is on the own-answer row (`› N.` then the caret's blank, then the placeholder).
fn own_row_selected(screen: &str) -> bool {
    screen
        .lines()
        .any(|l| l.starts_with("› ") && l.contains(OWN))
}

fn many(n: usize) -> String {
    let options: Vec<String> = (1..=n)
        .map(|i| format!(r#"{{"label":"Region {i}","description":"Data centre {i}."}}"#))
        .collect();
    format!(
        r#"{{"questions":[{{"id":"r","question":"Where?","options":[{}]}}]}}"#,
        options.join(",")
    )
}

#[test]
fn no_more_mark_below_the_last_row_and_no_orphan_description() {
    // Defect 5.
    let pane = Pane::ask(&[], &many(26));
    pane.wait_text("Region 1");
    pane.keys(&["Down"; 26]);
    let screen = pane.wait_for("the own-answer row", own_row_selected);
    assert!(!screen.contains("↓ more"), "{screen}");
    let lines: Vec<&str> = screen.lines().collect();
    let mark = lines.iter().position(|l| l.contains("↑ more")).unwrap();
    assert!(
        !lines[mark + 1].trim_start().starts_with("Data centre"),
        "an option's description without its label:\n{screen}"
    );
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn long_lists_take_two_digit_numbers_and_scroll_without_moving_the_choice() {
    // Defect 11.
    let pane = Pane::ask(&[], &many(26));
    pane.wait_text("Region 1");
    pane.type_text("12");
    pane.wait_text("› 12. Region 12");
    pane.keys(&["Home"]);
    pane.wait_for("the top of the list, the choice scrolled away", |s| {
        s.contains("   1. Region 1") && !s.contains("› 12.")
    });
    pane.keys(&["Enter"]);
    pane.wait_text("› 12. Region 12");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"r","selected":["Region 12"]}]}"#);
}

#[test]
fn the_own_answer_edits_with_the_caret_and_deletes_whole_graphemes() {
    // Defect 10.
    let pane = shown(&[], DB);
    pane.type_text("world");
    pane.wait_text("4. world");
    pane.keys(&["Home"]);
    pane.type_text("hello ");
    pane.wait_text("4. hello world");
    pane.keys(&["End"]);
    pane.type_text(" 👨‍👩‍👧");
    pane.keys(&["BSpace"]);
    pane.keys(&["Left", "Left", "BSpace", "C-e"]);
    pane.type_text("!");
    pane.wait_text("4. hello word !");
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":[],"custom":"hello word !"}]}"#,
    );
}

#[test]
fn an_emoji_sequence_in_a_label_is_drawn_as_the_emoji() {
    // Defect 10: the zero-width joiner of a family emoji showed as `\u{200d}`.
    let pane = Pane::ask(
        &[],
        r#"{"questions":[{"id":"x","question":"Who?","options":["Family 👨‍👩‍👧 (Recommended)","Solo"]}]}"#,
    );
    let screen = pane.wait_text(OWN);
    assert!(!screen.contains("\\u{200d}"), "{screen}");
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn a_summary_of_the_answer_stays_on_screen() {
    // Defect 7.
    let pane = shown(&[], DB);
    pane.keys(&["Enter"]);
    assert_eq!(pane.finished().status, 0);
    let screen = pane.screen();
    assert!(
        screen.contains("✔ Which database? → PostgreSQL (Recommended)"),
        "{screen}"
    );
}

#[test]
fn a_resize_leaves_no_stale_copies_and_keeps_what_was_above() {
    // Defect 7.
    let pane = shown(&[], &deploy());
    pane.resize(60, 24);
    pane.wait_for("the redraw", |s| s.lines().all(|l| l.len() <= 60));
    pane.resize(80, 24);
    pane.wait_for("the redraw at 80 columns", |s| {
        s.contains("Safe to try: only the team sees it, and a rollback takes a minute.")
    });
    // What was above stays (on screen, or in the scrollback when reflowed lines pushed it
    // there); the question is there once.
    let history = pane.tmux(&["capture-pane", "-p", "-S", "-", "-t", "main"]);
    assert_eq!(history.matches("MARKER").count(), 1, "{history}");
    assert_eq!(
        history.matches("Which environment").count(),
        1,
        "one copy, also in the scrollback:\n{history}"
    );
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);
}

#[test]
fn ctrl_l_redraws_over_output_from_another_process() {
    // Defect 8.
    let pane = shown(&[], DB);
    let tty = pane.display("#{pane_tty}");
    std::fs::write(&tty, "\r\x1b[2KGARBAGE GARBAGE\r\n").unwrap();
    pane.wait_text("GARBAGE");
    pane.keys(&["C-l"]);
    let screen = pane.wait_for("the redraw", |s| !s.contains("GARBAGE") && s.contains(OWN));
    assert!(screen.contains("› 2. PostgreSQL (Recommended)"), "{screen}");
    pane.keys(&["Enter"]);
    assert_eq!(pane.finished().status, 0);
}

#[test]
fn suspend_and_resume_redraw_in_raw_mode() {
    // Defect 4: after `kill -TSTP` and `fg` keys echoed and the view was gone.
    let pane = shown(&[], DB);
    pane.keys(&["C-z"]);
    pane.wait_for("the question put away", |s| !s.contains(OWN));
    let pid = pane.pid();
    // A SIGCONT that arrives before the process has stopped itself would be lost (as `fg`
    // typed at once could not be): resume only a stopped process.
    pane.wait_for("the process stopped", |_| stopped(&pid));
    use ask_user_test_support::Signal;
    let number: u32 = pid.parse().unwrap();
    assert!(ask_user_test_support::signal(number, Signal::CONT));
    pane.wait_text(OWN);
    // The same from outside: `kill -TSTP`, then `kill -CONT` (what `fg` sends).
    for signal in [Signal::TSTP, Signal::CONT] {
        assert!(ask_user_test_support::signal(number, signal));
        if signal == Signal::TSTP {
            pane.wait_for("the question put away", |s| !s.contains(OWN));
            pane.wait_for("the process stopped", |_| stopped(&pid));
        }
    }
    pane.wait_text(OWN);
    pane.keys(&["Down"]);
    let screen = pane.wait_text("› 3. MySQL");
    assert!(
        !screen.contains("^[[B"),
        "no echo: raw mode is back\n{screen}"
    );
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"db","selected":["MySQL"]}]}"#);
}

/// Whether process `pid` is stopped (state `T` in `/proc/PID/stat`).
fn stopped(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.rsplit_once(") ")?.1.to_owned();
            after_name.chars().next()
        })
        == Some('T')
}

#[test]
fn a_tiny_terminal_says_so_and_a_bigger_one_shows_the_question() {
    // Defect 14.
    let pane = Pane::ask_sized(&[], DB, 20, 5);
    pane.wait_text("too small");
    pane.resize(80, 24);
    pane.wait_text(OWN);
    pane.keys(&["Enter"]);
    assert_eq!(pane.finished().status, 0);
}

#[test]
fn a_signal_while_the_terminal_is_being_set_up_still_restores_it() {
    // Defect 17: the SIGINT/SIGTERM/SIGHUP handlers were installed only when a spawned task
    // first ran, after raw mode was on and the cursor query (up to 300 ms) was sent. `script`
    // gives ask-user a pseudo-terminal that never answers that query, which holds the window
    // open; SIGTERM is sent once the query is seen, i.e. in raw mode.
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("question.json"), DB).unwrap();
    let inner = format!(
        "cd '{dir}'\nsh -c 'echo $$ > pid.txt; exec \"$0\" ask question.json' '{bin}' > out.txt 2> err.txt\necho $? > rc.txt\nstty -a > stty.txt\n",
        dir = dir.path().display(),
        bin = super::support::BIN,
    );
    std::fs::write(dir.path().join("inner.sh"), inner).unwrap();
    // A cleared environment and a memory store: never the developer's default store.
    let home = tempfile::tempdir().unwrap();
    let mut script = ask_user_test_support::hermetic_command("script", home.path())
        .args([
            "-qfec",
            &format!("sh '{}/inner.sh'", dir.path().display()),
            "/dev/null",
        ])
        .env("ASK_USER_STORE", "memory")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = script.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    // Reads until the cursor query shows (the read ends at EOF if ask-user never sends it).
    while !seen.windows(4).any(|w| w == b"\x1b[6n") {
        let n = stdout.read(&mut chunk).unwrap();
        assert!(
            n > 0,
            "no cursor query: {:?}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&chunk[..n]);
    }
    let pid = std::fs::read_to_string(dir.path().join("pid.txt")).unwrap();
    assert!(ask_user_test_support::signal(
        pid.trim().parse().unwrap(),
        ask_user_test_support::Signal::TERM
    ));
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    drop(script.stdin.take());
    script.wait().unwrap();
    let rc = std::fs::read_to_string(dir.path().join("rc.txt")).unwrap();
    let stty = std::fs::read_to_string(dir.path().join("stty.txt")).unwrap();
    let flags: Vec<&str> = stty.split_whitespace().collect();
    assert!(
        flags.contains(&"icanon") && flags.contains(&"echo"),
        "cooked mode again (exit {rc}):\n{stty}"
    );
    assert_eq!(rc.trim(), "130", "the turn was cancelled, not killed");
}

#[test]
fn a_timeout_shows_a_countdown() {
    // Defect 12: `--timeout` showed no countdown (the registry now hands the budget to the
    // terminal answerer, which only shows it; the core keeps the budget).
    let pane = Pane::ask(&["--timeout", "5m"], DB);
    let screen = pane.wait_text(" left");
    assert!(
        screen.contains("4:5") || screen.contains("5:00"),
        "a countdown from 5m: {screen}"
    );
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#,
    );
}

#[test]
fn spaces_between_option_numbers_toggle_each_and_the_own_rows_number_is_not_typed() {
    // Found: in a multi-select "1 3 5" ticked nothing and sent the text "1 3 5"; in a
    // single-select `2` Space sent the text "2"; the own-answer row's number typed itself
    // ("3ship it").
    let pane = shown(&[], &five_options(true));
    pane.type_text("1 3 5");
    let screen = pane.wait_text("[x] 5. O5");
    assert!(
        screen.contains("[x] 1. O1") && screen.contains("[x] 3. O3"),
        "{screen}"
    );
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"f","selected":["O1","O3","O5"]}]}"#);
    let pane = shown(&[], &five_options(false));
    pane.type_text("2 ");
    pane.wait_text("› 2. O2");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"f","selected":["O2"]}]}"#);
    let pane = shown(&[], DB);
    pane.type_text("4");
    pane.wait_for("the own-answer row", own_row_selected);
    pane.type_text("ship it");
    pane.wait_text("ship it");
    pane.keys(&["Enter"]);
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":[],"custom":"ship it"}]}"#,
    );
    assert_restored(&pane);
}

#[test]
fn at_thirty_by_six_down_enter_sends_nothing_before_the_question_was_on_screen() {
    // Found: at 30×6, ↓ Enter sent an answer while no question text was on screen.
    let question = r#"{"questions":[{"id":"q","header":"Deploy","question":"Which environment should I deploy the billing service to, given the freeze that starts tonight at ten?","options":[{"label":"Staging (Recommended)","description":"Safe to try."},{"label":"Production","description":"Real customers get it at once."},"Both"]}]}"#;
    let pane = Pane::ask_sized(&[], question, 30, 6);
    pane.wait_text("Which environment");
    pane.keys(&["Down"]);
    let screen = pane.wait_text("› 2. Production");
    assert!(
        screen.contains("↑ Which environment"),
        "the question's first line stays on top:\n{screen}"
    );
    pane.keys(&["Enter"]);
    let screen = pane.wait_text("at ten?");
    assert!(!screen.contains("› 2."), "{screen}");
    pane.keys(&["Enter"]);
    pane.wait_text("› 2. Production");
    pane.keys(&["Enter"]);
    pane.finished_with(0, r#"{"answers":[{"id":"q","selected":["Production"]}]}"#);
}
