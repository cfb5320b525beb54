//! The shared host flags: `--journal FILE` and `--notify CMD` as both hosts parse them.

use std::sync::Arc;

use ask_user_core::ExecutionContext;
use ask_user_host::{Entry, HostArgs, HostCall, read};
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
    let call = HostCall::builder(Arc::new(PickRecommended))
        .journal(opened.map(Arc::new))
        .notify(args.notify.clone())
        .timeout(args.timeout)
        .build();
    let outcome = call
        .call(ARGS, ExecutionContext::default())
        .await
        .into_outcome();
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
    let call = HostCall::builder(Arc::new(PickRecommended))
        .notify(args.notify.clone())
        .build();
    let outcome = call
        .call(ARGS, ExecutionContext::default())
        .await
        .into_outcome();
    assert_eq!(outcome.code(), None);
}

#[test]
fn an_unwritable_journal_flag_is_a_startup_error_naming_the_file() {
    let args = Command::try_parse_from(["host", "--journal", "/nonexistent-dir/j.jsonl"])
        .unwrap()
        .host;
    // Our text around the OS's reason (ENOENT, as std words it).
    assert_eq!(
        args.open_journal().unwrap_err().to_string(),
        format!(
            "cannot open the journal file /nonexistent-dir/j.jsonl: {}",
            std::io::Error::from_raw_os_error(2)
        )
    );
}

#[test]
fn timeout_takes_a_humantime_duration_longer_than_zero() {
    let parse =
        |value: &str| Command::try_parse_from(["host", "--timeout", value]).map(|c| c.host.timeout);
    assert_eq!(
        parse("90s").unwrap(),
        Some(std::time::Duration::from_secs(90))
    );
    assert_eq!(
        parse("1h 30m").unwrap(),
        Some(std::time::Duration::from_secs(5400))
    );
    assert_eq!(
        Command::try_parse_from(["host"]).unwrap().host.timeout,
        None
    );
    for zero in ["0s", "0m", "0"] {
        let error = parse(zero).unwrap_err().to_string();
        assert!(
            error.contains(&format!(
                "invalid value '{zero}' for '--timeout <DURATION>': the timeout must be longer than zero"
            )),
            "{error}"
        );
    }
    assert_eq!(
        ask_user_host::ZERO_TIMEOUT,
        "the timeout must be longer than zero"
    );
    // humantime's reason is its own text; only our framing is pinned.
    let error = parse("soon").unwrap_err().to_string();
    assert!(
        error.contains("invalid value 'soon' for '--timeout <DURATION>': "),
        "{error}"
    );
}
