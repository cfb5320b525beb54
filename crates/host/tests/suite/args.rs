//! The shared host flags: `--journal FILE` and `--notify CMD` as both hosts parse them.

use std::sync::Arc;

use ask_user_core::{AskUserQuestionTool, ExecutionContext};
use ask_user_host::{Entry, HostArgs, call, read};
use ask_user_scripted::PickRecommended;
use clap::Parser;
use pretty_assertions::assert_eq;

use super::support::wait_until;

#[derive(Debug, Parser)]
struct Command {
    #[command(flatten)]
    host: HostArgs,
}

const ARGS: &str =
    r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes (Recommended)","No"]}]}"#;

#[tokio::test]
async fn journal_and_notify_flags_wire_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let marker = dir.path().join("notified");
    let args = Command::try_parse_from([
        "host".to_owned(),
        "--journal".to_owned(),
        journal.display().to_string(),
        "--notify".to_owned(),
        format!("cat > '{}'", marker.display()),
    ])
    .unwrap()
    .host;
    let opened = args.open_journal().unwrap();
    let tool = AskUserQuestionTool::new(args.with_notify(Arc::new(PickRecommended)));
    let outcome = call(opened.as_ref(), &tool, ARGS, ExecutionContext::default()).await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"go","selected":["Yes (Recommended)"]}]}"#
    );
    assert!(matches!(
        &read(&journal).unwrap()[..],
        [Entry::Ask { .. }, Entry::Outcome { .. }]
    ));
    wait_until("the notify command ran", || {
        std::fs::read_to_string(&marker).is_ok_and(|s| s.ends_with('\n'))
    });
}

#[tokio::test]
async fn without_flags_nothing_is_journaled_or_run() {
    let args = Command::try_parse_from(["host"]).unwrap().host;
    assert!(args.open_journal().unwrap().is_none());
    let tool = AskUserQuestionTool::new(args.with_notify(Arc::new(PickRecommended)));
    let outcome = call(None, &tool, ARGS, ExecutionContext::default()).await;
    assert_eq!(outcome.code(), None);
}

#[test]
fn an_unwritable_journal_flag_is_a_startup_error_naming_the_file() {
    let args = Command::try_parse_from(["host", "--journal", "/nonexistent-dir/j.jsonl"])
        .unwrap()
        .host;
    assert_eq!(
        args.open_journal().unwrap_err().to_string(),
        "cannot open the journal file /nonexistent-dir/j.jsonl: No such file or directory (os error 2)"
    );
}
