//! The attention command: run with the request on stdin when a question opens, never waited
//! for, failures and slowness logged. Real `sh` processes; no mocks.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{AskUserQuestionTool, ExecutionContext, Limits, decode};
use ask_user_host::Notify;
use ask_user_scripted::PickRecommended;
use ask_user_test_support::answerers::{Offering, Reply, Submits, Unavailable};
use pretty_assertions::assert_eq;

use super::support::{capture_logs, log_lines, wait_until};

const ARGS: &str = r#"{"questions":[{"id":"db","question":"Which \"database\"? $(touch pwned) \u0000","options":["PostgreSQL (Recommended)","SQLite"]},{"id":"name","question":"Name?"}]}"#;

fn tool(notify: Notify) -> AskUserQuestionTool {
    AskUserQuestionTool::new(Arc::new(notify))
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[tokio::test]
async fn the_command_gets_the_request_on_stdin_and_the_question_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (stdin, env) = (dir.path().join("stdin"), dir.path().join("env"));
    let command = format!(
        r#"cd {dir}; printf '%s|%s' "$ASK_USER_QUESTION" "$ASK_USER_COUNT" > env.tmp; mv env.tmp {env}; cat > stdin.tmp; mv stdin.tmp {stdin}"#,
        dir = quoted(dir.path()),
        env = quoted(&env),
        stdin = quoted(&stdin),
    );
    let outcome = tool(Notify::new(Arc::new(PickRecommended), command))
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"name","selected":[]}]}"#
    );
    wait_until("the command has written its input", || stdin.exists());
    let request = decode(ARGS, &Limits::default()).unwrap().request;
    assert_eq!(
        std::fs::read_to_string(&stdin).unwrap(),
        format!("{}\n", request.to_canonical_json())
    );
    assert_eq!(
        std::fs::read_to_string(&env).unwrap(),
        "Which \"database\"? $(touch pwned) \u{2400}|2"
    );
    assert!(
        !dir.path().join("pwned").exists(),
        "model text must not run"
    );
}

#[tokio::test]
async fn the_ask_never_waits_for_the_command() {
    capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let (started, release, done) = (
        dir.path().join("started"),
        dir.path().join("release"),
        dir.path().join("done"),
    );
    // Runs until the test releases it, and never reads its stdin (a large request must not
    // block either).
    let command = format!(
        "touch {}; while [ ! -e {} ]; do sleep 0.01; done; touch {}",
        quoted(&started),
        quoted(&release),
        quoted(&done)
    );
    let big = format!(
        r#"{{"questions":[{}]}}"#,
        (0..10)
            .map(|i| format!(r#"{{"id":"q{i}","question":"{}"}}"#, "é".repeat(4_000)))
            .collect::<Vec<_>>()
            .join(",")
    );
    let notify = Notify::new(Arc::new(ask_user_scripted::PickRecommended), command)
        .with_slow_after(Duration::ZERO);
    let line = notify.command().to_owned();
    let outcome = tool(notify).call(big, ExecutionContext::default()).await;
    // The ask has returned while the command cannot have finished: it waits for `release`.
    assert_eq!(outcome.code(), None, "{}", outcome.text());
    assert!(!done.exists());
    wait_until("the command started", || started.exists());
    wait_until("the slow command is logged", || {
        !log_lines(&format!(
            "notify command `{line}` is still running after 0ms; not waiting for it"
        ))
        .is_empty()
    });
    std::fs::write(&release, "").unwrap();
    wait_until("the command ended", || done.exists());
}

#[tokio::test]
async fn a_failing_command_is_logged_and_the_ask_goes_on() {
    capture_logs();
    for (command, logged) in [
        ("exit 3 # failing-command-test", "failed: exit status: 3"),
        (
            "no-such-notifier-9f2c 2>/dev/null # failing-command-test",
            "failed: exit status: 127",
        ),
    ] {
        let outcome = tool(Notify::new(Arc::new(PickRecommended), command))
            .call(ARGS, ExecutionContext::default())
            .await;
        assert_eq!(outcome.code(), None, "{}", outcome.text());
        let expected = format!("notify command `{command}` {logged}");
        wait_until(&expected, || !log_lines(&expected).is_empty());
    }
}

#[tokio::test]
async fn availability_is_the_inner_answerers() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let notify = Notify::new(
        Arc::new(Unavailable("none")),
        format!("touch {}", quoted(&marker)),
    );
    assert!(!ask_user_core::UserInteraction::is_available(&notify));
    let outcome = tool(notify).call(ARGS, ExecutionContext::default()).await;
    assert_eq!(outcome, ask_user_core::Outcome::NoProvider);
    // Nobody could be asked, so nobody is called to the desk.
    assert!(!marker.exists());
}

/// The attention command's wrapper passes the call's race through, so a
/// page-like answerer inside it hears the call's decision: an answer it was told was accepted
/// is the outcome even when the budget runs out before its future completes.
#[tokio::test]
async fn the_wrapper_forwards_the_calls_race() {
    // Offers its answer, then the future loses every race until it is cancelled.
    let page = Arc::new(
        Offering::new(Reply::From(PickRecommended::answers), Submits::AtOnce).named("the page"),
    );
    let notify = Notify::new(page.clone(), "true");
    assert_eq!(
        ask_user_core::UserInteraction::name(&notify),
        Some("the page")
    );
    // The budget only has to outlast starting the notify command on a loaded machine.
    let outcome = tool(notify)
        .with_timeout(Some(Duration::from_secs(3)))
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(page.heard(), Some(ask_user_core::Decision::Accepted));
    assert_eq!(outcome.code(), None, "{}", outcome.text());
}

/// Threads of this process named `name` (Linux: `/proc/self/task/*/comm`).
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}

#[tokio::test]
async fn one_thread_watches_every_running_command() {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release");
    let commands = 6;
    for i in 0..commands {
        let started = dir.path().join(format!("started-{i}"));
        // Ends on `release`, or when the test's directory is gone.
        let command = format!(
            "touch {s}; while [ ! -e {} ] && [ -e {s} ]; do sleep 0.05; done",
            quoted(&release),
            s = quoted(&started),
        );
        let outcome = tool(Notify::new(Arc::new(PickRecommended), command))
            .call(ARGS, ExecutionContext::default())
            .await;
        assert_eq!(outcome.code(), None, "{}", outcome.text());
    }
    wait_until("every command started", || {
        (0..commands).all(|i| dir.path().join(format!("started-{i}")).exists())
    });
    // All six are running now; one notify thread watches them all (it was one thread each).
    // Waited for, not read once: a thread the notify thread has just spawned (a command's
    // stdin feeder) carries its creator's name until it names itself, so one read may count
    // it; with a thread per command the count would stay at six.
    wait_until("one notify thread", || {
        threads_named("ask-user-notify") == 1
    });
    std::fs::write(&release, "").unwrap();
}
