//! Hardening through the real binary: `--journal` and `--notify`, an unwritable
//! journal at startup, arguments over the caps refused (not truncated), and in a real pty a
//! timeout that fires while a batch is half answered and SIGINT while the question is up.

use std::path::Path;

use ask_user_host::{Entry, read};
use pretty_assertions::assert_eq;

use super::support::{Pane, Run, run};

const GO: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#;
const BATCH: &str = r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]},{"id":"name","question":"Service name?"},{"id":"go","question":"Deploy now?","options":["Yes","No"]}]}"#;

/// `ask-user ask --answers ANSWERS --journal JOURNAL EXTRA`, `stdin` piped in.
fn run_journaled(answers: &Path, journal: &Path, extra: &[&str], stdin: &str) -> Run {
    let mut args = vec![
        "ask",
        "--answers",
        answers.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args, stdin)
}

#[test]
fn journal_and_notify_record_and_announce_the_ask() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, answers, notified) = (
        dir.path().join("journal.jsonl"),
        dir.path().join("answers.json"),
        dir.path().join("notified"),
    );
    std::fs::write(&answers, r#"{"answers":[{"id":"go","selected":["No"]}]}"#).unwrap();
    let notify = format!("cat > '{}'", notified.display());
    let done = run_journaled(&answers, &journal, &["--notify", &notify], GO);
    assert_eq!(
        (done.status, done.stdout.as_str()),
        (0, r#"{"answers":[{"id":"go","selected":["No"]}]}"#)
    );
    let lines = read(&journal).unwrap();
    let [
        Entry::Ask { call, .. },
        Entry::Outcome {
            call: closed,
            code,
            text,
            ..
        },
    ] = &lines[..]
    else {
        panic!("{lines:?}")
    };
    assert_eq!(
        (call, code.as_str(), text),
        (closed, "ANSWERED", &done.stdout)
    );
    // The command may still be running after ask-user exits (it is never waited for).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(&notified).is_ok_and(|s| s.ends_with('\n')) {
        assert!(std::time::Instant::now() < deadline, "notify never ran");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        std::fs::read_to_string(&notified)
            .unwrap()
            .starts_with(r#"{"questions":[{"id":"go""#)
    );
}

#[test]
fn an_unwritable_journal_is_a_usage_error_before_anything_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("journal.jsonl");
    let done = run(&["ask", "--journal", path.to_str().unwrap()], GO);
    assert_eq!(
        (done.status, done.stdout.as_str(), done.stderr.as_str()),
        (
            2,
            "",
            // Our text around the OS's reason (ENOENT, as std words it).
            format!(
                "ask-user: cannot open the journal file {}: {}\n",
                path.display(),
                std::io::Error::from_raw_os_error(2)
            )
            .as_str()
        )
    );
}

#[test]
fn arguments_over_the_caps_are_refused_whole_and_nobody_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, answers) = (
        dir.path().join("journal.jsonl"),
        dir.path().join("answers.json"),
    );
    // A script that would answer anything it were asked.
    std::fs::write(&answers, r#"{"answers":[]}"#).unwrap();
    let huge = "é".repeat(100_000);
    let many: Vec<String> = (0..30).map(|i| format!("\"o{i}\"")).collect();
    let args = format!(
        r#"{{"questions":[{{"id":"a","question":"{huge}","options":[{}]}}]}}"#,
        many.join(",")
    );
    let done = run_journaled(&answers, &journal, &[], &args);
    assert_eq!(
        (done.status, done.stdout.as_str()),
        (
            3,
            "Error: invalid arguments: questions[0].question: 100000 characters exceed the limit of 4000, shorten it; questions[0].options: 30 options exceed the limit of 26, offer fewer choices"
        )
    );
    let lines = read(&journal).unwrap();
    assert!(
        matches!(&lines[..], [Entry::Outcome { code, .. }] if code == "INVALID_ARGS"),
        "no ask line: nobody was asked"
    );
}

#[test]
fn a_timeout_while_the_batch_is_half_answered_is_timed_out_and_nothing_partial_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let pane = Pane::ask(
        &["--timeout", "8s", "--journal", journal.to_str().unwrap()],
        BATCH,
    );
    pane.wait_text("Which database?");
    // 8 s leave room for a loaded machine to draw the question and take the key.
    pane.keys(&["Enter"]); // the recommended option of question 1
    pane.wait_text("Service name?");
    pane.finished_with(5, "Error: no answer within 8s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later.");
    pane.assert_cooked_with_cursor();
    let lines = read(&journal).unwrap();
    assert!(
        matches!(&lines[..], [Entry::Ask { .. }, Entry::Outcome { code, answers: None, .. }] if code == "ASK_TIMED_OUT"),
        "{lines:?}"
    );
}

#[test]
fn sigint_while_the_question_is_up_aborts_and_restores_the_terminal() {
    let pane = Pane::ask(&[], GO);
    pane.wait_text("Deploy now?");
    pane.signal(ask_user_test_support::Signal::INT);
    pane.finished_with(130, ask_user_core::ABORTED_TEXT);
    pane.assert_cooked_with_cursor();
    assert!(
        !pane.screen().contains("Deploy now?"),
        "the question is cleared"
    );
}
