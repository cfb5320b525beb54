//! Every exit path is bounded (docs/contract.md §8 "Exactly once, made precise": a second
//! SIGTERM, or 2 s after the first, ends the process), with a real `ask-user ask` whose
//! delivery is stuck (the test-only failpoint `hang-before-stdout`: the call's outcome is known
//! and never gets written, as an exit path stuck on a lock or a write would).

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use ask_user_test_support::{Reaped, hermetic_command};
use rustix::process::{Pid, Signal, kill_process};

const QUESTION: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

/// A generous deadline for "it ended": far above the 2 s bound, far below "never".
const ENDS_WITHIN: Duration = Duration::from_secs(60);

/// An asker waiting for an inbox on its own SQLite store, stuck before stdout once its call
/// ends; returns it once it waits (stderr said no inbox is open) with its stderr reader.
/// `ask --via inbox` on the store in `home` (plus `extra` arguments and `env`), asked
/// [`QUESTION`] on its stdin; stdout and stderr piped.
fn inbox_asker(home: &std::path::Path, extra: &[&str], env: &[(&str, &str)]) -> Reaped {
    let mut command = hermetic_command(env!("CARGO_BIN_EXE_ask-user"), home);
    command
        .args(["ask", "--via", "inbox", "--store", &store_url(home)])
        .args(extra)
        .envs(env.iter().copied());
    Reaped::with_input(&mut command, QUESTION.as_bytes())
}

/// Waits for `child` to end: its exit status, what it printed and the rest of its stderr.
fn finished(child: &mut Reaped) -> (Option<i32>, String, String) {
    let status = ended(child);
    let mut printed = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut printed).unwrap();
    (
        status,
        printed,
        rest(BufReader::new(child.stderr.take().unwrap())),
    )
}

fn stuck_asker(
    home: &std::path::Path,
    env: &[(&str, &str)],
) -> (Reaped, BufReader<std::process::ChildStderr>) {
    let mut env = env.to_vec();
    env.push(("ASK_USER_TEST_FAILPOINT", "hang-before-stdout"));
    let mut child = inbox_asker(home, &["--timeout", "10m"], &env);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert_ne!(
            stderr.read_line(&mut line).unwrap(),
            0,
            "stderr closed early"
        );
        if line.contains("no `ask-user inbox` is open") {
            return (child, stderr);
        }
    }
}

fn store_url(home: &std::path::Path) -> String {
    format!("sqlite:{}", home.join("store.sqlite3").display())
}

/// Waits (within [`ENDS_WITHIN`]) until the store's open asks satisfy `done`.
fn wait_store(
    home: &std::path::Path,
    what: &str,
    done: impl Fn(&[ask_user_store::AskRecord]) -> bool,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = ask_user_store::Store::open(&store_url(home)).await.unwrap();
        let deadline = Instant::now() + ENDS_WITHIN;
        while !done(&store.list_open().await.unwrap()) {
            assert!(Instant::now() < deadline, "waited for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// The asker's signal handlers are in place once its ask is in the store (they are installed
/// before the call opens it).
fn wait_asking(home: &std::path::Path) {
    wait_store(home, "the ask open and attached", |open| {
        open.iter().any(|r| r.attached)
    });
}

/// Waits for the asker to end; asserts it printed `ASK_ABORTED` with exit 130 and returns
/// its stderr.
fn finished_aborted(child: &mut Reaped) -> String {
    let (status, printed, text) = finished(child);
    assert_eq!(
        (status, printed.as_str()),
        (Some(130), ask_user_core::Outcome::Aborted.text().as_str()),
        "{text}"
    );
    text
}

fn signal(child: &Reaped, sig: Signal) {
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    kill_process(pid, sig).unwrap();
}

/// Waits (polling, within [`ENDS_WITHIN`]) for the child to end; its exit status.
fn ended(child: &mut Reaped) -> Option<i32> {
    let deadline = Instant::now() + ENDS_WITHIN;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.code().unwrap_or_else(|| {
                use std::os::unix::process::ExitStatusExt;
                -status.signal().unwrap_or(0)
            }));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn rest(mut stderr: BufReader<std::process::ChildStderr>) -> String {
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
    text
}

#[test]
fn a_call_stuck_after_sigterm_ends_within_the_bound() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, stderr) = stuck_asker(home.path(), &[]);
    wait_asking(home.path());
    signal(&child, Signal::TERM);
    assert_eq!(ended(&mut child), Some(130), "it hung after SIGTERM");
    let text = rest(stderr);
    assert!(
        text.contains(
            "ask-user: exiting now (2 s after the first signal); the question stays for the retry"
        ),
        "{text}"
    );
}

#[test]
fn a_second_sigterm_ends_a_stuck_call_at_once() {
    let home = tempfile::tempdir().unwrap();
    // The bound lengthened to 10 min: only the second signal can end it within the deadline.
    let (mut child, mut stderr) = stuck_asker(
        home.path(),
        &[
            ("ASK_USER_TEST_EXIT_BOUND_MS", "600000"),
            ("RUST_LOG", "info"),
        ],
    );
    wait_asking(home.path());
    signal(&child, Signal::TERM);
    // The first signal was taken once the store shows the ask detached, and a further one
    // counts as a second signal once the process says so (one signal sent twice at once, to
    // the process and its group, is one).
    wait_store(home.path(), "the ask detached", |open| {
        !open.is_empty() && open.iter().all(|r| !r.attached)
    });
    let mut line = String::new();
    while !line.contains("a second signal now ends the process at once") {
        line.clear();
        assert_ne!(
            stderr.read_line(&mut line).unwrap(),
            0,
            "stderr closed early"
        );
    }
    signal(&child, Signal::TERM);
    let status = ended(&mut child);
    let text = rest(stderr);
    assert_eq!(
        status,
        Some(130),
        "the second SIGTERM did not end it: {text}"
    );
    assert!(text.contains("exiting now (a second signal)"), "{text}");
}

/// Whether process `pid` has `path` open (one of its `/proc/PID/fd` links).
fn has_open(pid: u32, path: &std::path::Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == path))
}

/// A signal while the store is still being opened (here: its file is locked by another
/// process, so SQLite waits on it) is handled by the rule like any other: the handlers are
/// installed before the open, and the call ends at once with `ASK_ABORTED` (exit 130) — not
/// killed by the signal, not held until the bound — having stored and shown nothing.
#[test]
fn a_signal_while_the_store_opens_aborts_the_call_at_once() {
    use rustix::fs::{FlockOperation, fcntl_lock};
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("store.sqlite3");
    // Another process's lock, as SQLite takes them (POSIX record locks), on the whole file.
    let held = std::fs::File::create_new(&path).unwrap();
    fcntl_lock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
    let mut child = inbox_asker(home.path(), &[], &[]);
    let deadline = Instant::now() + ENDS_WITHIN;
    while !has_open(child.id(), &path) {
        assert!(
            Instant::now() < deadline,
            "the asker never opened the store"
        );
        assert!(child.try_wait().unwrap().is_none(), "the asker ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, Signal::TERM);
    let text = finished_aborted(&mut child);
    assert!(
        !text.contains("exiting now"),
        "held until the bound: {text}"
    );
    drop(held);
}

/// One SIGTERM sent twice at once — to the process and to its process group, as `timeout`
/// sends it — is one signal: the ask is detached and the call prints `ASK_ABORTED` (exit 130);
/// it is not the "second signal" that ends the process at once.
#[test]
fn a_signal_sent_to_the_process_and_its_group_at_once_is_one_signal() {
    let home = tempfile::tempdir().unwrap();
    let mut child = inbox_asker(home.path(), &[], &[]);
    wait_asking(home.path());
    signal(&child, Signal::TERM);
    signal(&child, Signal::TERM);
    let text = finished_aborted(&mut child);
    assert!(!text.contains("exiting now"), "{text}");
    wait_store(home.path(), "the ask detached", |open| {
        open.len() == 1 && !open[0].attached
    });
}
