//! Many processes on one store: first outcome wins across processes, 50 processes asking at
//! once on one SQLite file, and answers reaching waiters in other processes.

use std::collections::BTreeMap;

use ask_user_store::{
    AskId, Asker, NewAsk, Opened, Outcome, Recorded, Responder, Scope, Store, Timestamp,
};
use pretty_assertions::assert_eq;

use super::common::{self, ChildProc};

async fn race(url: &str, store: &Store) {
    let ask = NewAsk::new(&Scope::HostKey("race".into()), "{}", Asker::default());
    let Opened::Created(rec) = store.open_ask(&ask).await.unwrap() else {
        panic!("not new")
    };
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let id = rec.id.0.to_string();
    let children: Vec<ChildProc> = (0..8)
        .map(|_| ChildProc::spawn(&["race", url, &id, go.to_str().unwrap()]))
        .collect();
    // All start recording at once, as soon as the go file appears.
    std::fs::write(&go, "").unwrap();
    let said: Vec<String> = children.iter().map(ChildProc::next).collect();
    let pids: Vec<u32> = children.iter().map(|c| c.child.id()).collect();
    for c in children {
        c.finish();
    }
    let winners: Vec<&String> = said.iter().filter(|m| m.starts_with("won ")).collect();
    assert_eq!(winners.len(), 1, "{said:?}");
    let winner: u32 = winners[0].strip_prefix("won ").unwrap().parse().unwrap();
    assert!(pids.contains(&winner));
    for m in said.iter().filter(|m| !m.starts_with("won ")) {
        assert_eq!(*m, format!("lost {winner}"), "every loser is told who won");
    }
    let stored = store.get(rec.id).await.unwrap().closed.unwrap().outcome;
    assert!(matches!(stored, Outcome::Answered { answer, .. } if answer["pid"] == winner));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcomes_from_many_processes_have_one_winner_sqlite() {
    let f = common::sqlite().await;
    race(&f.url, &f.store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcomes_from_many_processes_have_one_winner_postgres() {
    let f = common::postgres().await;
    race(&f.url, &f.store).await;
}

async fn fifty_askers(url: &str, store: &Store) {
    let children: Vec<ChildProc> = (0..50)
        .map(|i| ChildProc::spawn(&["ask-wait", url, &format!("t{i}")]))
        .collect();
    let mut ids = BTreeMap::new();
    for (i, c) in children.iter().enumerate() {
        let m = c.next();
        let id: i64 = m
            .strip_prefix("opened ")
            .unwrap_or_else(|| panic!("child {i}: {m}"))
            .parse()
            .unwrap();
        ids.insert(i, AskId(id));
    }
    assert_eq!(store.list_open().await.unwrap().len(), 50);
    // The parent plays the inbox: it answers each ask with its own tag.
    for (i, id) in &ids {
        let answer = Outcome::Answered {
            answer: serde_json::json!({ "tag": format!("t{i}") }),
            by: Responder::default(),
        };
        assert_eq!(
            store
                .record_outcome(*id, &answer, Timestamp::now())
                .await
                .unwrap(),
            Recorded::Won
        );
    }
    for (i, c) in children.into_iter().enumerate() {
        assert_eq!(c.next(), format!("outcome {{\"tag\":\"t{i}\"}}"));
        c.finish();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_processes_ask_on_one_sqlite_file_and_each_gets_its_answer() {
    let f = common::sqlite().await;
    fifty_askers(&f.url, &f.store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_processes_ask_on_one_postgres_and_each_gets_its_answer() {
    let f = common::postgres().await;
    fifty_askers(&f.url, &f.store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_in_another_process_hears_a_sweep_withdrawal() {
    let f = common::sqlite().await;
    let ask = NewAsk::new(&Scope::HostKey("w".into()), "{}", Asker::default());
    let rec = f.store.open_ask(&ask).await.unwrap().record().clone();
    let child = ChildProc::spawn(&["wait", &f.url, &rec.id.0.to_string()]);
    assert_eq!(child.next(), "waiting");
    f.store
        .set_attached(rec.id, false, Timestamp::now())
        .await
        .unwrap();
    let later = Timestamp::now().plus(ask.grace);
    let swept = f
        .store
        .sweep(later, ask_user_store::Retention::default())
        .await
        .unwrap();
    assert_eq!(swept.withdrawn, vec![rec.id]);
    assert_eq!(child.next(), "outcome Some(Withdrawn)");
    child.finish();
}

#[test]
fn twenty_processes_creating_one_store_at_once_all_open_it() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("new/store.sqlite3").display());
    let children: Vec<ChildProc> = (0..20).map(|_| ChildProc::spawn(&["open", &url])).collect();
    let said: Vec<String> = children.iter().map(ChildProc::next).collect();
    for c in children {
        c.finish();
    }
    assert_eq!(said, vec!["ok".to_owned(); 20]);
}

/// The feed has no timer of its own (only `wait_outcome` re-reads as a safety net), so a change
/// announced to another process's feed came through the sidecar file watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_feed_hears_a_new_ask_through_the_file_watch() {
    let f = common::sqlite().await;
    // No safety scan: only the watch can announce the ask.
    let child = ChildProc::spawn_with_env(
        &[(ask_user_store::SAFETY_SCAN_TEST_ENV, "off")],
        &["follow", &f.url],
    );
    assert_eq!(child.next(), "subscribed");
    let ask = NewAsk::new(&Scope::HostKey("followed".into()), "{}", Asker::default());
    let id = f.store.open_ask(&ask).await.unwrap().record().id;
    assert_eq!(child.next(), format!("change {}", id.0));
    child.finish();
}

/// Every file event lost (no watch at all): a waiter in another process still hears the
/// answer, from its store's one safety scan (a waiter no longer re-reads its own ask on a
/// timer of its own; with the scan switched off, this wait would not end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_file_event_lost_the_safety_scan_delivers_the_answer() {
    answered_here_heard_there(
        &[
            (ask_user_store::WATCH_TEST_ENV, "none"),
            (ask_user_store::SAFETY_SCAN_TEST_ENV, "200"),
        ],
        "wait",
        "waiting",
    )
    .await;
}

/// The kernel refuses a file watch (the per-user inotify limit, reached by dozens of waiting
/// agents): the follower polls the sidecar instead and still hears the answer on its feed (no
/// safety scan: only the watch can wake it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_without_a_kernel_watch_polls_the_sidecar_and_hears_the_answer() {
    answered_here_heard_there(
        &[
            (ask_user_store::WATCH_TEST_ENV, "poll"),
            (ask_user_store::SAFETY_SCAN_TEST_ENV, "off"),
        ],
        "follow",
        "following, watch poll",
    )
    .await;
}

/// Opens an ask, starts the child `command` (`wait` or `follow`) on it with `env`, waits for
/// its first line `ready`, answers the ask here, and checks that the child hears the answer.
async fn answered_here_heard_there(env: &[(&str, &str)], command: &str, ready: &str) {
    let f = common::sqlite().await;
    let ask = NewAsk::new(&Scope::HostKey(command.into()), "{}", Asker::default());
    let rec = f.store.open_ask(&ask).await.unwrap().record().clone();
    let child = ChildProc::spawn_with_env(env, &[command, &f.url, &rec.id.0.to_string()]);
    assert_eq!(child.next(), ready);
    let answer = Outcome::Answered {
        answer: serde_json::json!("yes"),
        by: Responder::default(),
    };
    f.store
        .record_outcome(rec.id, &answer, Timestamp::now())
        .await
        .unwrap();
    assert_eq!(child.next(), "outcome \"yes\"");
    child.finish();
}

/// Processes that each commit once and end (an `ask` killed while its question is shown) keep
/// the WAL bounded: the one whose commit passes the bound checkpoints before its store closes,
/// and the checkpoint truncates the WAL, so the next process starts from an empty one. (With
/// SQLite's own checkpoint such a process never started the WAL over: it grew with each.)
/// The close's wait is lengthened (a test knob): its 250 ms cap is a policy for a loaded machine,
/// not the mechanism under test, and under `stress --cpu 2` a checkpoint past it was interrupted
/// (1 run in 20 read 135 frames).
#[test]
fn processes_that_commit_once_and_end_keep_the_wal_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    let bound = ask_user_store::WAL_BOUND_PAGES;
    let mut most = 0;
    for i in 0..40 {
        let child = ChildProc::spawn_with_env(
            &[(ask_user_store::CLOSE_WAIT_TEST_ENV, "60000")],
            &["ask-once", &url, &i.to_string()],
        );
        assert_eq!(child.next(), "opened");
        child.finish();
        let frames = common::wal_frames(&path);
        assert!(
            frames <= bound,
            "after process {i} a start reads {frames} frames, past the bound of {bound}"
        );
        most = most.max(frames);
    }
    // The processes did fill the WAL towards the bound (the test asks what it means to).
    assert!(
        most > bound / 2,
        "the WAL never held more than {most} frames"
    );
}

/// Writers in many processes, each one's commits waking its own checkpoints (PASSIVE, then
/// TRUNCATE holding the write lock), are never refused: every write of every process succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_in_many_processes_are_never_refused_while_checkpoints_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    // The file exists before the writers start (its creation is another test's subject).
    let store = Store::open(&url).await.unwrap();
    drop(store);
    let children: Vec<ChildProc> = (0..8)
        .map(|i| ChildProc::spawn(&["write-n", &url, "40", &format!("w{i}")]))
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        assert_eq!(c.next(), "done", "writer {i}");
        c.finish();
    }
    let store = Store::open(&url).await.unwrap();
    let closed = store
        .history(ask_user_store::HistoryPage {
            after: None,
            limit: 1_000,
        })
        .await
        .unwrap();
    assert_eq!(closed.len(), 320);
}
