//! "Nobody can answer" only when no answerer and no stored ask exist (docs/contract.md §8
//! "Exactly once, made precise"): a call with no terminal (`setsid`, no controlling terminal)
//! whose key finds an open or answered ask in its store is served from it. Real `ask-user ask`
//! processes on a SQLite store; the human's answer is written to the store as `ask-user inbox`
//! writes it (first outcome wins) — the inbox's own screen is tested in the durable suite.

use ask_user_test_support::postgres as pg;

use std::path::Path;
use std::time::{Duration, Instant};

use ask_user_store::{AskRecord, Outcome, Recorded, Responder, Store, Timestamp};
use ask_user_test_support::{Reaped, hermetic_command};

const QUESTION: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
const ANSWER: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;
const DEADLINE: Duration = Duration::from_secs(60);

fn store_url(dir: &Path) -> String {
    format!("sqlite:{}", dir.join("store.sqlite3").display())
}

/// `ask-user ask ARGS` with no controlling terminal, stdout and stderr piped.
fn asker(dir: &Path, args: &[&str]) -> Reaped {
    asker_with(dir, args, &[])
}

/// [`asker`] with extra environment variables (test knobs).
fn asker_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Reaped {
    let mut command = hermetic_command("setsid", dir);
    command
        .envs(env.iter().copied())
        .arg(env!("CARGO_BIN_EXE_ask-user"))
        .arg("ask")
        .args(args)
        .args(["--store", &store_url(dir), "--timeout", "60s"]);
    Reaped::with_input(&mut command, QUESTION.as_bytes())
}

/// Waits for the child's end (within [`DEADLINE`]): (status, stdout, stderr).
fn finished(child: Reaped) -> (i32, String, String) {
    child.finish(DEADLINE)
}

pub(super) async fn open_asks(
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
    answer_with(store, rec, ANSWER).await;
}

/// The human's `answer` as the inbox stores it.
pub(super) async fn answer_with(store: &Store, rec: &AskRecord, answer: &str) {
    let outcome = Outcome::Answered {
        answer: serde_json::from_str(answer).unwrap(),
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

/// Whether process `pid` is stopped (state `T` in `/proc/PID/stat`).
fn stopped_state(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    after.split_whitespace().next() == Some("T")
}

/// Sends `signal` (`STOP`, `CONT`) to `pid`.
fn signal(pid: u32, signal: ask_user_test_support::Signal) {
    assert!(ask_user_test_support::signal(pid, signal));
}

/// Two unkeyed agents in one directory asking the same question (a stopped agent's lease lapsed): the
/// first is stopped (SIGSTOP) until its lease lapses and a sweep marks its ask detached; the
/// second is its own caller all the same — its own ask, its own answer — and the first, once
/// continued, prints the answer given to its ask, not the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_caller_whose_lease_lapsed_is_never_merged_with_another() {
    const YES: &str = r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let lease = [("ASK_USER_TEST_LEASE_MS", "1000")];
    let first = asker_with(&path, &["--via", "inbox"], &lease);
    let store = Store::open(&store_url(&path)).await.unwrap();
    let open = open_asks(&store, "the first ask stored", |o| o.len() == 1).await;
    let stopped = open[0].clone();
    signal(first.id(), ask_user_test_support::Signal::STOP);
    let deadline = Instant::now() + DEADLINE;
    while !stopped_state(first.id()) {
        assert!(Instant::now() < deadline, "never stopped");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Its lease lapses (it cannot renew); a sweep (as every host does on opening the store)
    // marks its ask detached.
    let lapsed = store.get(stopped.id).await.unwrap().lease_until.unwrap();
    let deadline = Instant::now() + DEADLINE;
    while Timestamp::now() <= lapsed {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lapsed = store.get(stopped.id).await.unwrap().lease_until.unwrap();
    let swept = store
        .sweep(Timestamp::now(), ask_user_store::Retention::default())
        .await
        .unwrap();
    assert_eq!(
        swept.expired,
        vec![stopped.id],
        "the lease of {lapsed:?} lapsed"
    );
    let second = asker_with(&path, &["--via", "inbox"], &lease);
    // The second asker opened: a new ask, or (the defect) the stopped one's ask re-attached
    // with its lease.
    let open = open_asks(&store, "the second asker opened", |o| {
        o.len() == 2 || o.iter().any(|r| r.id == stopped.id && r.attached)
    })
    .await;
    assert_eq!(
        open.len(),
        2,
        "merged into the stopped caller's ask: {open:#?}"
    );
    let theirs = open.iter().find(|r| r.id != stopped.id).unwrap().clone();
    answer_with(&store, &theirs, ANSWER).await;
    let (status, out, err) = tokio::task::spawn_blocking(move || finished(second))
        .await
        .unwrap();
    assert_eq!((status, out.trim()), (0, ANSWER), "{err}");
    // The first, continued, still waits for its own ask and prints the answer given to it.
    signal(first.id(), ask_user_test_support::Signal::CONT);
    answer_with(&store, &stopped, YES).await;
    let (status, out, err) = tokio::task::spawn_blocking(move || finished(first))
        .await
        .unwrap();
    assert_eq!((status, out.trim()), (0, YES), "{err}");
}

/// One time source on Postgres (docs/contract.md §8 "No clock decides across processes"): a
/// process whose clock runs 40 days ahead (`faketime`) opens the same Postgres store — its
/// retention runs — and withdraws and purges nothing of another's: a detached ask (grace 24 h)
/// stays open for the human, an answer delivered yesterday stays in the audit history (30
/// days). Its decisions take the database's clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_40_days_ahead_on_postgres_withdraws_and_purges_nothing() {
    let url = pg::fresh_database().await;
    let store = Store::open(&url).await.unwrap();
    let new = |key: &str| {
        ask_user_store::NewAsk::new(
            &ask_user_store::Scope::HostKey(key.to_owned()),
            QUESTION.to_owned(),
            ask_user_store::Asker::default(),
        )
    };
    let detached = store.open_ask(&new("a")).await.unwrap().record().id;
    store
        .set_attached(detached, false, Timestamp::now())
        .await
        .unwrap();
    let answered = store.open_ask(&new("b")).await.unwrap().record().id;
    let outcome = Outcome::Answered {
        answer: serde_json::from_str(ANSWER).unwrap(),
        by: Responder {
            answerer: "inbox".to_owned(),
            ..Responder::default()
        },
    };
    assert_eq!(
        store
            .record_outcome(answered, &outcome, Timestamp::now())
            .await
            .unwrap(),
        Recorded::Won
    );
    assert!(
        store
            .mark_delivered(answered, &outcome, Timestamp::now())
            .await
            .unwrap()
    );
    // The skewed process: `ask` with no terminal and nothing stored for it ends at once as
    // "nobody can answer" (exit 6), after its store's retention ran.
    let dir = tempfile::tempdir().unwrap();
    let mut command = hermetic_command("setsid", dir.path());
    command
        .args(["faketime", "-f", "+40d"])
        .arg(env!("CARGO_BIN_EXE_ask-user"))
        .args(["ask", "--store", &url]);
    let child = Reaped::with_input(&mut command, QUESTION.as_bytes());
    let (code, _, err) = finished(child);
    assert_eq!(code, 6, "{err}");
    let rec = store.get(detached).await.unwrap();
    assert_eq!(
        (rec.closed.map(|c| c.outcome), rec.attached),
        (None, false),
        "the detached ask stays open for the human"
    );
    let rec = store.get(answered).await;
    assert!(
        rec.is_ok(),
        "the delivered answer stays in the audit history: {rec:?}"
    );
}
