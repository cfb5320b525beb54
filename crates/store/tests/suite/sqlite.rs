//! The SQLite file itself: its permissions and journal, each fault a user can meet and its
//! message, schema versions, and recovery after a writer is killed mid-write.
//!
//! The read-only and full-disk cases run the store in a child process inside `unshare -m` with
//! its own tmpfs mount (the tests run as root; a mount namespace keeps the mount private).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ask_user_store::{AskId, Outcome, Store};
use pretty_assertions::assert_eq;

use super::common::ChildProc;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn store_is_created_private_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/ask-user/store.sqlite3");
    let store = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    assert_eq!(store.location(), path.display().to_string());
    assert_eq!((mode(&path), mode(path.parent().unwrap())), (0o600, 0o700));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    let version: i64 = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, ask_user_store::SCHEMA_VERSION);
}

#[tokio::test]
async fn directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = Store::open(&format!("sqlite:{}", dir.path().display()))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "store {}: is a directory, not a store file",
            dir.path().display()
        )
    );
}

#[tokio::test]
async fn corrupt_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    std::fs::write(&path, "these are notes, not a database\n".repeat(200)).unwrap();
    let e = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "store {}: not a usable store: the file is corrupt or not SQLite (file is not a database)",
            path.display()
        )
    );
}

/// Runs `open sqlite:PATH` in a child inside a private mount namespace, after `setup` (shell
/// run with `$D` = the mount point).
fn open_in_namespace(dir: &Path, setup: &str, path: &Path) -> Vec<String> {
    let script = format!("D={}; {setup} || exit 99; \"$@\"", dir.display());
    let url = format!("sqlite:{}", path.display());
    let child = ChildProc::spawn_wrapped(
        &["unshare", "-m", "sh", "-c", &script, "sh"],
        &["open", &url],
    );
    let mut out = Vec::new();
    while let Some(m) = child.next_or_end() {
        out.push(m);
    }
    child.finish();
    out
}

#[test]
fn read_only_location_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ask-user/store.sqlite3");
    let out = open_in_namespace(dir.path(), "mount -t tmpfs -o ro tmpfs $D", &path);
    assert_eq!(
        out,
        vec![format!(
            "err store {}: cannot write there: Read-only file system (os error 30)",
            path.display()
        )]
    );
}

#[test]
fn existing_store_on_a_read_only_mount_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let script = format!(
        "D={}; mount -t tmpfs tmpfs $D && \"$@\" && mount -o remount,ro $D && \"$@\"",
        dir.path().display()
    );
    let url = format!("sqlite:{}", path.display());
    let child = ChildProc::spawn_wrapped(
        &["unshare", "-m", "sh", "-c", &script, "sh"],
        &["open", &url],
    );
    let (first, second) = (child.next(), child.next());
    child.finish();
    assert_eq!(first, "ok");
    assert_eq!(
        second,
        format!(
            "err store {}: cannot write there: Read-only file system (os error 30)",
            path.display()
        )
    );
}

#[test]
fn full_disk_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let out = open_in_namespace(dir.path(), "mount -t tmpfs -o size=12k tmpfs $D", &path);
    assert_eq!(
        out,
        vec![format!(
            "err store {}: the disk is full; free some space or pick another store with --store",
            path.display()
        )]
    );
}

#[test]
fn disk_filling_up_while_asking_is_reported_and_nothing_acknowledged_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    // The child asks until the store refuses, then reads back, through a fresh handle, every
    // ask it acknowledged (the tmpfs goes with its namespace, so the child checks).
    let url = format!("sqlite:{}", path.display());
    let script = format!(
        "D={}; mount -t tmpfs -o size=1m tmpfs $D && \"$@\"",
        dir.path().display()
    );
    let child = ChildProc::spawn_wrapped(
        &["unshare", "-m", "sh", "-c", &script, "sh"],
        &["fill", &url],
    );
    let mut acked = 0;
    let last = loop {
        let m = child.next();
        if m.starts_with("acked ") {
            acked += 1;
        } else {
            break m;
        }
    };
    child.finish();
    // How many fit depends on the race between the writer and the checkpoint thread: with the
    // WAL checkpointed as it fills, hundreds; when the WAL fills the disk before its first
    // checkpoint copies it (the checkpoint then fails on the full disk too), about ten.
    assert!(acked >= 5, "the store held only {acked} asks");
    assert_eq!(
        last,
        format!(
            "err store {}: the disk is full; free some space or pick another store with --store; verified {acked}",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_version_1_store_gains_the_channel_and_secret_tables_and_keeps_its_asks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    let store = Store::open(&url).await.unwrap();
    let ask = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("k".into()),
        "{}",
        ask_user_store::Asker::default(),
    );
    let id = store.open_ask(&ask).await.unwrap().record().id;
    drop(store);
    // Make it the store a version-1 binary left behind.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE channel_tokens; DROP TABLE channel_messages; DROP TABLE secrets; DROP TABLE leases; \
         DROP INDEX asks_leased; ALTER TABLE asks DROP COLUMN lease_until; \
         DROP INDEX asks_one_open_per_host_key; DROP INDEX asks_by_namespace_key; \
         DROP INDEX asks_open_by_namespace; \
         ALTER TABLE asks DROP COLUMN namespace; \
         DROP TRIGGER asks_count_opened; DROP TRIGGER asks_count_changed; \
         DROP TRIGGER asks_count_deleted; DELETE FROM meta WHERE key = 'open_asks'; \
         CREATE UNIQUE INDEX asks_one_open_per_key ON asks (scope, request_hash) WHERE state = 'open'; \
         UPDATE meta SET value = 1 WHERE key = 'schema_version';",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&url).await.unwrap();
    let kept = store.get(id).await.unwrap();
    assert!(kept.is_open());
    assert_eq!(
        store.count_open().await.unwrap(),
        1,
        "counted at the upgrade"
    );
    assert_eq!(
        kept.key.namespace().as_str(),
        "",
        "an older ask is in the unnamed namespace"
    );
    assert!(matches!(
        store.open_ask(&ask).await.unwrap(),
        ask_user_store::Opened::Reattached(r) if r.id == id
    ));
    assert!(store.claim_channel_send(id, "ntfy").await.unwrap());
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, ask_user_store::SCHEMA_VERSION);
}

#[tokio::test]
async fn store_too_new_is_refused_and_an_additive_newer_schema_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    drop(Store::open(&url).await.unwrap());
    let set = |version: i64, compat: i64| {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            [version],
        )
        .unwrap();
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'compatible_from'",
            [compat],
        )
        .unwrap();
    };
    // A newer binary added a column: this one keeps working beside it, and does not lower the version.
    let newer = ask_user_store::SCHEMA_VERSION + 1;
    set(newer, 1);
    let store = Store::open(&url).await.unwrap();
    assert!(store.list_open().await.unwrap().is_empty());
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, newer);
    drop(conn);
    // A newer binary made a change this one cannot follow.
    let known = ask_user_store::SCHEMA_VERSION;
    set(known + 4, known + 1);
    let e = Store::open(&url).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "store {}: schema version {} needs ask-user schema {} or newer, and this ask-user knows up to {known}; upgrade ask-user or pick another store with --store",
            path.display(),
            known + 4,
            known + 1
        )
    );
}

#[tokio::test]
async fn writer_killed_mid_write_loses_nothing_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    let mut child = ChildProc::spawn(&["write-loop", &url]);
    let mut acked = Vec::new();
    while acked.len() < 150 {
        let m = child.next();
        let mut parts = m.strip_prefix("acked ").unwrap().split(' ');
        let id: i64 = parts.next().unwrap().parse().unwrap();
        let i: i64 = parts.next().unwrap().parse().unwrap();
        acked.push((AskId(id), i));
    }
    // SIGKILL while it keeps writing: no chance to checkpoint or close.
    child.child.kill().unwrap();
    child.child.wait().unwrap();
    let wal = std::fs::metadata(format!("{}-wal", path.display())).unwrap();
    assert!(wal.len() > 0, "the killed writer left its WAL behind");
    let store = Store::open(&url).await.unwrap();
    for (id, i) in acked {
        let rec = store.get(id).await.unwrap();
        match rec.closed.map(|c| c.outcome) {
            Some(Outcome::Answered { answer, .. }) => {
                assert_eq!(answer, serde_json::json!({ "i": i }))
            }
            other => panic!("ask {id} lost its answer: {other:?}"),
        }
    }
    // The count of open asks was written in the transactions the kill cut short, and is
    // rolled back with them.
    assert_eq!(
        store.count_open().await.unwrap(),
        store.list_open().await.unwrap().len() as u64
    );
}

#[test]
fn default_store_is_created_under_the_state_directory() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let child = ChildProc::spawn_with_env(
        &[("XDG_STATE_HOME", state.to_str().unwrap())],
        &["open-default"],
    );
    let said = child.next();
    child.finish();
    let path = state.join("ask-user/store.sqlite3");
    assert_eq!(said, format!("ok {}", path.display()));
    assert_eq!(mode(&path), 0o600);
}

#[tokio::test]
async fn a_value_written_by_something_else_is_reported_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let store = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let ask = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("k".into()),
        "{}",
        ask_user_store::Asker::default(),
    );
    let id = store.open_ask(&ask).await.unwrap().record().id;
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE asks SET state = 'answered', outcome = 'yes', closed_at = 1 WHERE id = ?1",
        [id.0],
    )
    .unwrap();
    let e = store.get(id).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "store {}: ask {id} holds a value this ask-user cannot read: outcome: expected value at line 1 column 1",
            path.display()
        )
    );
}

/// An ask written by a binary older than schema 4 has no lease: it is trusted as attached
/// (as before leases), never detached by the sweep, while asks with a lease are.
#[tokio::test]
async fn an_ask_an_older_binary_attached_has_no_lease_and_is_not_expired() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    let store = Store::open(&url).await.unwrap();
    let t0 = ask_user_store::Timestamp(1_800_000_000_000);
    let mut ask = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("new".into()),
        "{}",
        ask_user_store::Asker::default(),
    );
    ask.created_at = t0;
    let leased = store.open_ask(&ask).await.unwrap().record().id;
    // The statements a schema-3 binary runs: an INSERT without the column, and a re-attach.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO asks (scope, request_hash, host_keyed, request, asker, created_at, \
         grace_ms, attached, seq) VALUES ('key:old', 'h', 1, '{}', '{}', ?1, 86400000, 1, 0)",
        [t0.0],
    )
    .unwrap();
    let old = ask_user_store::AskId(conn.last_insert_rowid());
    drop(conn);
    let rec = store.get(old).await.unwrap();
    assert_eq!((rec.attached, rec.lease_until), (true, None));
    let later = t0.plus(std::time::Duration::from_secs(3600));
    let swept = store
        .sweep(later, ask_user_store::Retention::default())
        .await
        .unwrap();
    assert_eq!(swept.expired, vec![leased]);
    let rec = store.get(old).await.unwrap();
    assert_eq!(
        (rec.is_open(), rec.attached, rec.detached_at),
        (true, true, None)
    );
}

#[tokio::test]
async fn wal_is_kept_across_runs_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let url = format!("sqlite:{}", path.display());
    let store = Store::open(&url).await.unwrap();
    let ask = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("kept".into()),
        "{\"q\":1}",
        ask_user_store::Asker::default(),
    );
    let id = store.open_ask(&ask).await.unwrap().record().id;
    let answer = Outcome::Answered {
        answer: serde_json::json!({ "a": 1 }),
        by: ask_user_store::Responder::default(),
    };
    store
        .record_outcome(id, &answer, ask_user_store::Timestamp::now())
        .await
        .unwrap();
    // The last connection closes: the WAL and its index stay, private like the file.
    drop(store);
    for side in ["wal", "shm"] {
        let p = std::path::PathBuf::from(format!("{}-{side}", path.display()));
        assert!(p.exists(), "{side} was deleted at close");
        assert_eq!(mode(&p), 0o600, "{side}");
    }
    let store = Store::open(&url).await.unwrap();
    match store.get(id).await.unwrap().closed.map(|c| c.outcome) {
        Some(Outcome::Answered { answer, .. }) => {
            assert_eq!(answer, serde_json::json!({ "a": 1 }))
        }
        other => panic!("the answer kept in the WAL was not read back: {other:?}"),
    }
}

/// Every `ask` runs the retention sweep before its question is shown: with nothing to sweep it
/// writes nothing (the WAL does not grow: no commit to sync on the way to the first frame),
/// and a brand-new file starts in WAL mode with its header on disk.
#[tokio::test]
async fn a_sweep_with_nothing_to_do_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let store = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let ask = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("k".into()),
        "{}",
        ask_user_store::Asker::default(),
    );
    store.open_ask(&ask).await.unwrap();
    let wal = dir.path().join("store.sqlite3-wal");
    let before = std::fs::metadata(&wal).unwrap().len();
    let swept = store
        .sweep(
            ask_user_store::Timestamp::now(),
            ask_user_store::Retention::default(),
        )
        .await
        .unwrap();
    assert_eq!(swept, ask_user_store::Swept::default());
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), before);
    // The header on disk says WAL (bytes 18 and 19 are 2).
    let header = std::fs::read(&path).unwrap();
    assert_eq!((header[18], header[19]), (2, 2));
}

/// The hub's quota check counts a namespace's open asks from an index of open asks alone,
/// not from every ask the namespace ever made.
#[tokio::test]
async fn open_asks_of_a_namespace_are_counted_from_their_own_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let store = Store::open_sqlite(&path).await.unwrap();
    let ns = ask_user_store::Namespace::hub_token("t");
    assert_eq!(store.count_open_in(&ns).await.unwrap(), 0);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM asks WHERE namespace = ?1 AND state = 'open'",
            ["x"],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("asks_open_by_namespace"), "{plan}");
}

/// The WAL a starting process reads back stays under the store's checkpoint bound: the commits
/// that pass it wake the checkpoint thread, which truncates the WAL (SQLite's own checkpoint,
/// at 1,000 pages, left up to 1,000 frames for every start to read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_stays_under_its_checkpoint_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let store = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    for i in 0..100 {
        let ask = ask_user_store::NewAsk::new(
            &ask_user_store::Scope::HostKey(format!("k{i}")),
            format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(2_000)),
            ask_user_store::Asker::default(),
        );
        let id = store.open_ask(&ask).await.unwrap().record().id;
        let answer = Outcome::Answered {
            answer: serde_json::json!({ "i": i }),
            by: ask_user_store::Responder::default(),
        };
        let now = ask_user_store::Timestamp::now();
        store.record_outcome(id, &answer, now).await.unwrap();
        assert!(store.mark_delivered(id, &answer, now).await.unwrap());
    }
    // The last checkpoint may still be running on its thread.
    let frames = super::common::wal_settles_under(&path, ask_user_store::WAL_BOUND_PAGES).await;
    assert!(
        frames <= ask_user_store::WAL_BOUND_PAGES,
        "a start reads {frames} frames, past the bound of {}",
        ask_user_store::WAL_BOUND_PAGES
    );
}

/// The inbox's first page (its open asks, their count, the newest closed asks) costs the same
/// whatever the number of open asks: at 100,000 open asks (and 20,000 closed, newer) no statement of
/// it scans the open asks — the count reads one row kept by the asks table's triggers, the
/// pages walk their partial indexes for one page — checked on the query plans and on the
/// virtual machine's steps each statement took.
#[tokio::test]
async fn the_first_page_reads_no_more_at_100k_open_asks_than_a_page() {
    const OPEN: i64 = 100_000;
    const CLOSED: i64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let store = Store::open_sqlite(&path).await.unwrap();
    let ask = |k: &str| {
        ask_user_store::NewAsk::new(
            &ask_user_store::Scope::HostKey(k.into()),
            r#"{"questions":[{"question":"Deploy now?","options":["Yes","No"]}]}"#,
            ask_user_store::Asker::default(),
        )
    };
    let open = store.open_ask(&ask("open")).await.unwrap().record().id;
    let closed = store.open_ask(&ask("closed")).await.unwrap().record().id;
    store
        .record_outcome(
            closed,
            &Outcome::Withdrawn,
            ask_user_store::Timestamp::now(),
        )
        .await
        .unwrap();
    // Clones of both, in SQL (one statement each, a recursive series).
    let mut conn = rusqlite::Connection::open(&path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    let tx = conn.transaction().unwrap();
    for (template, n) in [(open, OPEN - 1), (closed, CLOSED - 1)] {
        tx.execute(
            "WITH RECURSIVE gen(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM gen WHERE g < ?2) \
             INSERT INTO asks (scope, request_hash, host_keyed, request, asker, created_at, \
               grace_ms, attached, detached_at, state, outcome, closed_at, delivered_at, seq, \
               lease_until, namespace) \
             SELECT scope || '-' || g, request_hash, host_keyed, request, asker, created_at + g, \
               grace_ms, attached, detached_at, state, outcome, closed_at + g, delivered_at, seq, \
               lease_until, namespace FROM asks, gen WHERE id = ?1",
            rusqlite::params![template.0, n],
        )
        .unwrap();
    }
    tx.execute_batch("ANALYZE").unwrap();
    tx.commit().unwrap();
    assert_eq!(store.count_open().await.unwrap(), OPEN as u64);
    let statements = store.first_page_statements(50, 50);
    assert_eq!(statements.len(), 3);
    for (sql, params) in statements {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(rusqlite::params_from_iter(&params), |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        // A SCAN reads the whole table or index, stopped only by a LIMIT: allowed only over
        // the closed asks' index, newest first (the history's page). Counting the open asks
        // was `SCAN asks USING COVERING INDEX asks_open`.
        for line in &plan {
            let scans =
                line.starts_with("SCAN asks") && !line.ends_with("USING INDEX asks_history");
            assert!(!scans, "{sql}: {plan:?}");
        }
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt
            .query_map(rusqlite::params_from_iter(&params), |_| Ok(()))
            .unwrap()
            .count();
        assert!(rows <= 51, "{sql}: {rows} rows");
        let steps = stmt.get_status(rusqlite::StatementStatus::VmStep);
        // A page is at most 51 rows of ~20 columns: a few thousand steps. Counting 100,000
        // open asks took hundreds of thousands.
        assert!(steps < 10_000, "{sql}: {steps} steps, {plan:?}");
    }
}

/// A statement SQLite refuses (a second channel token with the same hash: the primary key)
/// names SQLite's extended result code in its text, and keeps SQLite's error as its source.
#[tokio::test]
async fn a_refused_statement_names_and_keeps_sqlites_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let store = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let token = ask_user_store::ChannelToken {
        hash: "h".into(),
        ask: AskId(1),
        channel: "ntfy".into(),
        choice: "{}".into(),
        user: None,
    };
    store.put_channel_token(&token).await.unwrap();
    let e = store.put_channel_token(&token).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "store {}: UNIQUE constraint failed: channel_tokens.hash (SQLite code 1555)",
            path.display()
        )
    );
    match &e {
        ask_user_store::Error::Backend { cause: Some(c), .. } => {
            assert_eq!(c.code(), Some("1555"));
        }
        other => panic!("not a backend error with its cause: {other:?}"),
    }
    let source = std::error::Error::source(&e).expect("the driver's error is the source");
    let sqlite = source
        .downcast_ref::<rusqlite::Error>()
        .expect("the source is SQLite's own error");
    assert_eq!(
        sqlite.sqlite_error().map(|f| f.extended_code),
        Some(rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
    );
}
