//! "Nobody can answer" only when no answerer and no stored ask exist (docs/contract.md §8
//! "Exactly once, made precise"): a call with no terminal (`setsid`, no controlling terminal)
//! whose key finds an open or answered ask in its store is served from it. Real `ask-user ask`
//! processes on a SQLite store; the human's answer is written to the store as `ask-user inbox`
//! writes it (first outcome wins) — the inbox's own screen is tested in the durable suite.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ask_user_store::{AskRecord, Outcome, Recorded, Responder, Store, Timestamp};
use ask_user_test_support::{Reaped, hermetic};

const QUESTION: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
const ANSWER: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;
const DEADLINE: Duration = Duration::from_secs(60);

fn store_url(dir: &Path) -> String {
    format!("sqlite:{}", dir.join("store.sqlite3").display())
}

/// `ask-user ask ARGS` with no controlling terminal, stdout and stderr piped.
fn asker(dir: &Path, args: &[&str]) -> Reaped {
    let mut command = Command::new("setsid");
    hermetic(&mut command, dir)
        .arg(env!("CARGO_BIN_EXE_ask-user"))
        .arg("ask")
        .args(args)
        .args(["--store", &store_url(dir), "--timeout", "60s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Reaped(command.spawn().unwrap());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(QUESTION.as_bytes())
        .unwrap();
    child
}

/// Waits for the child's end (within [`DEADLINE`]): (status, stdout, stderr).
fn finished(mut child: Reaped) -> (i32, String, String) {
    use std::io::Read;
    let deadline = Instant::now() + DEADLINE;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the asker never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap().code().unwrap_or(-1);
    (status, out, err)
}

async fn open_asks(
    store: &Store,
    what: &str,
    done: impl Fn(&[AskRecord]) -> bool,
) -> Vec<AskRecord> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let open = store.list_open().await.unwrap();
        if done(&open) {
            return open;
        }
        assert!(Instant::now() < deadline, "waited for {what}: {open:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The human's "No" as the inbox stores it.
async fn answer_in_the_inbox(store: &Store, rec: &AskRecord) {
    let outcome = Outcome::Answered {
        answer: serde_json::from_str(ANSWER).unwrap(),
        by: Responder {
            answerer: "the inbox".to_owned(),
            ..Responder::default()
        },
    };
    assert_eq!(
        store
            .record_outcome(rec.id, &outcome, Timestamp::now())
            .await
            .unwrap(),
        Recorded::Won
    );
}

/// A terminal asker killed with `kill -9`, its answer given in the inbox: the same call with no
/// terminal prints it (it used to exit 6, "ask in plain text", before looking at the store).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_with_no_terminal_gets_the_answer_stored_for_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let first = asker(dir.path(), &["--via", "inbox", "--key", "k-7"]);
    let store = Store::open(&store_url(dir.path())).await.unwrap();
    let open = open_asks(&store, "the ask stored", |o| o.len() == 1).await;
    drop(first); // kill -9 (Reaped): nothing runs after it
    answer_in_the_inbox(&store, &open[0]).await;
    let (status, out, err) =
        tokio::task::spawn_blocking(move || finished(asker(dir.path(), &["--key", "k-7"])))
            .await
            .unwrap();
    assert_eq!((status, out.trim()), (0, ANSWER), "{err}");
}

/// The same while the ask is still open: the retry with no terminal re-attaches and waits for
/// the inbox, then prints the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_with_no_terminal_reattaches_to_its_open_ask() {
    let dir = tempfile::tempdir().unwrap();
    let first = asker(dir.path(), &["--via", "inbox", "--key", "k-7b"]);
    let store = Store::open(&store_url(dir.path())).await.unwrap();
    let before = open_asks(&store, "the ask stored", |o| o.len() == 1).await;
    drop(first);
    let path = dir.path().to_owned();
    let retry = asker(&path, &["--key", "k-7b"]);
    // Re-attached: still one ask, with the retry's new lease.
    let open = open_asks(&store, "the retry re-attached", |o| {
        o.len() == 1 && o[0].id == before[0].id && o[0].lease_until > before[0].lease_until
    })
    .await;
    answer_in_the_inbox(&store, &open[0]).await;
    let (status, out, err) = tokio::task::spawn_blocking(move || finished(retry))
        .await
        .unwrap();
    assert_eq!((status, out.trim()), (0, ANSWER), "{err}");
    assert!(store.list_open().await.unwrap().is_empty());
}

/// With no stored ask and no terminal: nobody can answer (exit 6), and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_terminal_and_no_stored_ask_is_nobody_can_answer_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let (status, out, _) =
        tokio::task::spawn_blocking(move || finished(asker(&path, &["--key", "k-none"])))
            .await
            .unwrap();
    assert_eq!(status, 6, "{out}");
    let store = Store::open(&store_url(dir.path())).await.unwrap();
    assert!(store.list_open().await.unwrap().is_empty());
    let history = store
        .history(ask_user_store::HistoryPage {
            after: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(history.is_empty(), "{history:#?}");
}
