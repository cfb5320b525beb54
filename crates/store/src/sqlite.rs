//! The SQLite backend: the embedded default (docs/contract.md §8 "Store", "Crash safety").
//!
//! One file in WAL mode with `synchronous=FULL`, created with mode 0600 in a 0700 directory; the
//! WAL and its index (`PATH-wal`, `PATH-shm`, same mode) stay beside it across runs; the WAL is
//! checkpointed and truncated by a thread of the handle's own once a commit leaves it past
//! [`WAL_BOUND_PAGES`] ([`checkpoint`]), never inside a writer's commit.
//! Every write runs in a savepoint of a `BEGIN IMMEDIATE` transaction that the handle's writer
//! thread shares among the writes queued meanwhile (group commit, [`pool`]), so writers of
//! several processes queue on SQLite's write lock (busy timeout [`BUSY_TIMEOUT`]) instead of
//! failing with "database is locked" on a lock upgrade; reads run on reader connections. Each write bumps a counter (`meta.seq`) and stamps the ask with it, then touches the
//! sidecar file `PATH-notify`; a process that follows the feed watches that file (the `notify`
//! crate: inotify on Linux) and reads the asks whose `seq` passed the last one it saw
//! ([`watch`]). A waiting
//! process therefore sleeps in the kernel until a writer commits.
//!
//! Opening the file and migrating it is [`open`]; every statement runs through [`run`], where
//! SQLite's errors become the store's.

mod checkpoint;
mod open;
mod pool;
mod run;
mod watch;

pub use checkpoint::{CLOSE_WAIT_TEST_ENV, WAL_BOUND_PAGES};
use open::{meta_value, open_connection};
use run::{Db, Run, Writer};
use watch::Watch;
pub use watch::{SAFETY_SCAN_TEST_ENV, WATCH_TEST_ENV};

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::broadcast;

use crate::channel::{ChannelToken, Spend};
use crate::error::{Error, Result};
use crate::feed::FEED_CAPACITY;
use crate::liveness::Liveness;
use crate::model::found;
use crate::model::{
    AskId, AskRecord, CANDIDATES, Change, NewAsk, Opened, Outcome, Recorded, Retention, Reuse,
    Swept, Timestamp, candidate, duration_ms, lease, reuse_of,
};
use crate::row::{COLUMNS, RawAsk, encode_asker, encode_outcome};
use crate::statements::{Cell, Param, SqlDb, Statements};

/// How long a writer waits for another process's write lock before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub(crate) struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    shown: String,
    conns: Arc<pool::Conns>,
    notify_file: Option<File>,
    tx: broadcast::Sender<Change>,
    last_seq: AtomicI64,
    watch: OnceLock<Watch>,
    watch_init: tokio::sync::Mutex<()>,
    /// The file's (device, inode) when it was opened: a file deleted or replaced under the
    /// open connection is detected by comparing ([`SqliteStore::check_file`]).
    file_id: Option<(u64, u64)>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(w) = self.watch.get() {
            w.end();
        }
    }
}

fn file_id_of(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| file_id_of(&m))
}

/// The sidecar file a writer touches after each commit.
fn notify_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push("-notify");
    PathBuf::from(s)
}

/// The newest ask of `ask`'s key a call may re-attach to ([`candidate`]), among the key's
/// newest [`CANDIDATES`].
fn newest_candidate(
    db: &impl Run,
    ask: &NewAsk,
    liveness: &dyn Liveness,
) -> Result<Option<AskRecord>> {
    let rows = db.rows(
        &format!(
            "SELECT {COLUMNS} FROM asks WHERE namespace = ?1 AND scope = ?2 \
             AND request_hash = ?3 ORDER BY id DESC LIMIT ?4"
        ),
        params![
            ask.key.namespace().as_str(),
            ask.key.scope(),
            ask.key.request_hash(),
            CANDIDATES
        ],
        read_row,
    )?;
    for row in rows {
        let rec = row.into_record(db.shown())?;
        if candidate(&rec, ask, liveness) {
            return Ok(Some(rec));
        }
    }
    Ok(None)
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawAsk> {
    Ok(RawAsk {
        id: r.get(0)?,
        scope: r.get(1)?,
        request_hash: r.get(2)?,
        host_keyed: r.get(3)?,
        request: r.get(4)?,
        asker: r.get(5)?,
        created_at: r.get(6)?,
        grace_ms: r.get(7)?,
        attached: r.get(8)?,
        detached_at: r.get(9)?,
        outcome: r.get(10)?,
        closed_at: r.get(11)?,
        delivered_at: r.get(12)?,
        lease_until: r.get(13)?,
        namespace: r.get(14)?,
    })
}

/// Bumps and returns the change counter (inside a write transaction).
fn next_seq(db: &impl Run) -> Result<i64> {
    db.cached(
        "UPDATE meta SET value = value + 1 WHERE key = 'seq' RETURNING value",
        |s| s.query_row([], |r| r.get(0)),
    )
}

fn get_raw(db: &impl Run, id: AskId) -> Result<Option<RawAsk>> {
    db.cached(&format!("SELECT {COLUMNS} FROM asks WHERE id = ?1"), |s| {
        s.query_row([id.0], read_row).optional()
    })
}

impl SqliteStore {
    pub(crate) async fn open(path: PathBuf) -> Result<SqliteStore> {
        let shown = path.display().to_string();
        let (conn, notify_file) = tokio::task::spawn_blocking({
            let path = path.clone();
            let shown = shown.clone();
            move || -> Result<(Connection, Option<File>)> {
                let conn = open_connection(&path, &shown)?;
                // The sidecar is a wake-up hint only: without it (e.g. a directory that lost
                // write permission after the store was made) followers fall back to the
                // safety scan.
                let notify_file = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .open(notify_path(&path))
                    .ok();
                Ok((conn, notify_file))
            }
        })
        .await
        .map_err(|e| Error::backend(&shown, e.to_string()))??;
        let (tx, _) = broadcast::channel(FEED_CAPACITY);
        let path_for_id = path.clone();
        let conns = Arc::new(pool::Conns::start(conn, path.clone(), shown.clone())?);
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                shown,
                conns,
                notify_file,
                tx,
                last_seq: AtomicI64::new(0),
                watch: OnceLock::new(),
                watch_init: tokio::sync::Mutex::new(()),
                file_id: file_id(&path_for_id),
            }),
        })
    }

    /// [`Error::Gone`] when the store file was deleted or replaced since it was opened (the
    /// connection still reads the unlinked file, which no other process sees). One `stat`; an
    /// error other than "not found" counts as present (nothing to report for sure).
    pub(crate) fn check_file(&self) -> Result<()> {
        let Some(opened) = self.inner.file_id else {
            return Ok(());
        };
        let now = match std::fs::metadata(&self.inner.path) {
            Ok(m) => Some(file_id_of(&m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => return Ok(()),
        };
        if now == Some(opened) {
            Ok(())
        } else {
            Err(Error::Gone {
                path: self.inner.shown.clone(),
            })
        }
    }

    pub(crate) fn location(&self) -> &str {
        &self.inner.shown
    }

    /// The database file's path, as it was opened.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.inner.path
    }

    /// Runs `write` in the writer's next group commit; returns once it is durable.
    async fn write<T: Send + 'static>(
        &self,
        write: impl FnOnce(&mut Writer<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.inner.conns.write(write).await
    }

    /// Runs `read` on a reader connection ([`Error::Gone`] when it fails because the file was
    /// deleted or replaced).
    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Db<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        // A reader opened after the file was deleted cannot open it: say so as such.
        self.inner
            .conns
            .read(read)
            .await
            .map_err(|e| self.check_file().err().unwrap_or(e))
    }

    /// After a commit: wakes other processes and this process's followers.
    fn announce(&self, ids: &[AskId]) {
        if let Some(f) = &self.inner.notify_file {
            // A hint only: a failed touch leaves other processes to their safety scan. A new
            // value each time, so a follower that polls (no kernel watch) sees two writes
            // within one clock tick as a change.
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let _ = f.write_at(&stamp.to_le_bytes(), 0);
        }
        for id in ids {
            let _ = self.inner.tx.send(Change::Ask(*id));
        }
    }

    pub(crate) async fn open_ask(
        &self,
        ask: &NewAsk,
        liveness: Arc<dyn Liveness>,
    ) -> Result<Opened> {
        let ask = ask.clone();
        let opened = self
            .write(move |w| {
                let tx = w.savepoint()?;
                let latest = newest_candidate(&tx, &ask, &*liveness)?;
                let opened = match (reuse_of(latest.as_ref(), ask.created_at), latest) {
                    (Reuse::Undelivered, Some(rec)) => return Ok(Opened::Undelivered(rec)),
                    (Reuse::Reattach, Some(mut rec)) => {
                        let seq = next_seq(&tx)?;
                        let until = ask.created_at.plus(lease());
                        tx.execute(
                            "UPDATE asks SET attached = 1, detached_at = NULL, lease_until = ?3, seq = ?2 \
                             WHERE id = ?1",
                            params![rec.id.0, seq, until.0],
                        )?;
                        rec.attached = true;
                        rec.detached_at = None;
                        rec.lease_until = Some(until);
                        Opened::Reattached(rec)
                    }
                    _ => {
                        let seq = next_seq(&tx)?;
                        tx.cached(
                            "INSERT INTO asks (scope, request_hash, host_keyed, request, asker, created_at, \
                             grace_ms, attached, seq, lease_until, namespace) \
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?9, ?10)",
                            |s| {
                                s.execute(params![
                                    ask.key.scope(),
                                    ask.key.request_hash(),
                                    ask.key.is_host_keyed(),
                                    ask.request,
                                    encode_asker(&ask.asker),
                                    ask.created_at.0,
                                    duration_ms(ask.grace),
                                    seq,
                                    ask.created_at.plus(lease()).0,
                                    ask.key.namespace().as_str()
                                ])
                            },
                        )?;
                        let id = AskId(tx.conn().last_insert_rowid());
                        Opened::Created(ask.created(id))
                    }
                };
                tx.commit()?;
                Ok(opened)
            })
            .await?;
        if !matches!(opened, Opened::Undelivered(_)) {
            self.announce(&[opened.record().id]);
        }
        Ok(opened)
    }

    pub(crate) async fn record_outcome(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<Recorded> {
        let state = outcome.state_name();
        let encoded = encode_outcome(outcome);
        let recorded = self
            .write(move |w| {
                let tx = w.savepoint()?;
                let seq = next_seq(&tx)?;
                let n = tx.cached(
                    "UPDATE asks SET state = ?2, outcome = ?3, closed_at = ?4, seq = ?5 \
                     WHERE id = ?1 AND state = 'open'",
                    |s| s.execute(params![id.0, state, encoded, at.0, seq]),
                )?;
                let recorded = if n == 1 {
                    Recorded::Won
                } else {
                    let rec = get_raw(&tx, id)?
                        .ok_or(Error::NotFound(id))?
                        .into_record(tx.shown())?;
                    match rec.closed {
                        Some(c) => Recorded::Lost(c),
                        None => return Err(Error::NotFound(id)),
                    }
                };
                // A lost race wrote nothing; its commit only ends the transaction.
                tx.commit()?;
                Ok(recorded)
            })
            .await?;
        if recorded == Recorded::Won {
            self.announce(&[id]);
        }
        Ok(recorded)
    }

    /// Runs one guarded update: `Ok(true)` when it changed the ask, `Ok(false)` when the ask
    /// exists but the guard excluded it, [`Error::NotFound`] when it does not exist.
    async fn guarded_update(
        &self,
        id: AskId,
        sql: &'static str,
        value: Option<i64>,
    ) -> Result<bool> {
        let changed = self
            .write(move |w| {
                let tx = w.savepoint()?;
                let seq = next_seq(&tx)?;
                let n = tx.cached(sql, |s| s.execute(params![id.0, value, seq]))?;
                if n == 0 {
                    let exists = get_raw(&tx, id)?.is_some();
                    drop(tx); // rolls the savepoint back
                    return if exists {
                        Ok(false)
                    } else {
                        Err(Error::NotFound(id))
                    };
                }
                tx.commit()?;
                Ok(true)
            })
            .await?;
        if changed {
            self.announce(&[id]);
        }
        Ok(changed)
    }

    pub(crate) async fn set_attached(
        &self,
        id: AskId,
        attached: bool,
        at: Timestamp,
    ) -> Result<()> {
        if attached {
            self.guarded_update(
                id,
                "UPDATE asks SET detached_at = NULL, attached = 1, lease_until = ?2, seq = ?3 \
                 WHERE id = ?1 AND state = 'open'",
                Some(at.plus(lease()).0),
            )
            .await
            .map(drop)
        } else {
            self.guarded_update(
                id,
                "UPDATE asks SET detached_at = CASE WHEN state = 'open' THEN ?2 ELSE detached_at END, \
                 attached = 0, lease_until = NULL, seq = ?3 \
                 WHERE id = ?1 AND (state = 'open' OR attached = 1)",
                Some(at.0),
            )
            .await
            .map(drop)
        }
    }

    pub(crate) async fn mark_delivered(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<bool> {
        let expected = outcome.clone();
        let (matches, changed) = self
            .write(move |w| {
                let tx = w.savepoint()?;
                let rec = get_raw(&tx, id)?
                    .ok_or(Error::NotFound(id))?
                    .into_record(tx.shown())?;
                if rec.closed.is_none_or(|c| c.outcome != expected) {
                    drop(tx); // rolls the savepoint back
                    return Ok((false, false));
                }
                if rec.delivered_at.is_some() {
                    drop(tx); // rolls the savepoint back
                    return Ok((true, false));
                }
                let seq = next_seq(&tx)?;
                tx.execute(
                    "UPDATE asks SET delivered_at = ?2, seq = ?3 WHERE id = ?1",
                    params![id.0, at.0, seq],
                )?;
                tx.commit()?;
                Ok((true, true))
            })
            .await?;
        if changed {
            self.announce(&[id]);
        }
        Ok(matches)
    }

    pub(crate) async fn unmark_delivered(&self, id: AskId, at: Timestamp) -> Result<()> {
        self.guarded_update(
            id,
            "UPDATE asks SET delivered_at = NULL, seq = ?3 WHERE id = ?1 AND delivered_at = ?2",
            Some(at.0),
        )
        .await
        .map(drop)
    }

    pub(crate) async fn find_ask(
        &self,
        ask: &NewAsk,
        liveness: Arc<dyn Liveness>,
    ) -> Result<Option<AskRecord>> {
        let ask = ask.clone();
        self.read(move |db| {
            let latest = newest_candidate(db, &ask, &*liveness)?;
            Ok(found(latest, ask.created_at))
        })
        .await
    }

    pub(crate) async fn sweep(&self, now: Timestamp, retention: Retention) -> Result<Swept> {
        let withdrawn_json = encode_outcome(&Outcome::Withdrawn);
        let swept = self
            .write(move |w| {
                let tx = w.savepoint()?;
                // The stamp the changes would carry; the counter is bumped only when an ask
                // changed, so a sweep with nothing to do writes nothing (and its commit syncs
                // nothing: it is on every start's way to the first frame).
                let seq = tx.cached("SELECT value + 1 FROM meta WHERE key = 'seq'", |s| {
                    s.query_row([], |r| r.get::<_, i64>(0))
                })?;
                let expired = tx.rows(
                    "UPDATE asks SET attached = 0, detached_at = lease_until, \
                     seq = ?2 WHERE state = 'open' AND attached = 1 AND lease_until IS NOT NULL \
                     AND lease_until <= ?1 RETURNING id",
                    params![now.0, seq],
                    |r| r.get(0).map(AskId),
                )?;
                let withdrawn = tx.rows(
                    "UPDATE asks SET state = 'withdrawn', outcome = ?2, closed_at = ?1, seq = ?3 \
                     WHERE state = 'open' AND attached = 0 AND detached_at + grace_ms <= ?1 \
                     RETURNING id",
                    params![now.0, withdrawn_json, seq],
                    |r| r.get(0).map(AskId),
                )?;
                let cutoff = now.0.saturating_sub(duration_ms(retention.keep_closed));
                let purged = tx.execute(
                    "DELETE FROM asks WHERE state <> 'open' AND closed_at <= ?1 \
                     AND (delivered_at IS NOT NULL OR state NOT IN ('answered', 'dismissed'))",
                    [cutoff],
                )?;
                tx.batch(
                    "DELETE FROM channel_tokens WHERE ask NOT IN (SELECT id FROM asks); \
                     DELETE FROM channel_messages WHERE ask NOT IN (SELECT id FROM asks);",
                )?;
                if !expired.is_empty() || !withdrawn.is_empty() {
                    tx.execute("UPDATE meta SET value = ?1 WHERE key = 'seq'", [seq])?;
                }
                tx.commit()?;
                Ok(Swept {
                    expired,
                    withdrawn,
                    purged: purged as u64,
                })
            })
            .await?;
        if !swept.expired.is_empty() || !swept.withdrawn.is_empty() {
            let changed: Vec<AskId> = swept
                .expired
                .iter()
                .chain(&swept.withdrawn)
                .copied()
                .collect();
            self.announce(&changed);
        }
        Ok(swept)
    }

    pub(crate) async fn spend_channel_token(
        &self,
        hash: &str,
        ask: AskId,
        channel: &str,
        at: Timestamp,
    ) -> Result<Spend> {
        let (hash, channel) = (hash.to_owned(), channel.to_owned());
        self.write(move |w| {
            let tx = w.savepoint()?;
            let row = tx.cached(
                "SELECT ask, channel, choice, user_id, used_at FROM channel_tokens WHERE hash = ?1",
                |s| {
                    s.query_row([&hash], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, Option<i64>>(4)?,
                        ))
                    })
                    .optional()
                },
            )?;
            let spend = match row {
                None => Spend::Unknown,
                Some((a, ch, _, _, _)) if a != ask.0 || ch != channel => Spend::Elsewhere,
                Some((_, _, _, _, Some(_))) => Spend::Used,
                Some((a, ch, choice, user, None)) => {
                    tx.execute(
                        "UPDATE channel_tokens SET used_at = ?2 WHERE hash = ?1 AND used_at IS NULL",
                        params![hash, at.0],
                    )?;
                    Spend::Spent(ChannelToken {
                        hash: hash.clone(),
                        ask: AskId(a),
                        channel: ch,
                        choice,
                        user,
                    })
                }
            };
            tx.commit()?;
            Ok(spend)
        })
        .await
    }
}

impl SqliteStore {
    /// Extends the lease in place: no `seq` bump and no sidecar touch, so followers are not
    /// woken by a renewal (nothing they show changed).
    pub(crate) async fn renew(&self, id: AskId, at: Timestamp) -> Result<bool> {
        let until = at.plus(lease()).0;
        self.write(move |w| {
            let n = w.execute(
                "UPDATE asks SET lease_until = ?2 WHERE id = ?1 AND state = 'open' AND attached = 1",
                params![id.0, until],
            )?;
            if n == 1 {
                return Ok(true);
            }
            match get_raw(w, id)? {
                Some(_) => Ok(false),
                None => Err(Error::NotFound(id)),
            }
        })
        .await
    }
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Param::Int(i) => i.to_sql(),
            Param::Text(t) => t.to_sql(),
            Param::OptInt(i) => i.to_sql(),
            Param::OptText(t) => t.to_sql(),
        }
    }
}

fn cell_of(v: rusqlite::types::ValueRef<'_>) -> rusqlite::Result<Cell> {
    use rusqlite::types::{FromSql, ValueRef};
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        other => Cell::Text(String::column_result(other).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, other.data_type(), Box::new(e))
        })?),
    })
}

/// Every row of `sql`, each column as a [`Cell`].
fn run_rows(db: &impl Run, sql: &str, params: &[Param]) -> Result<Vec<Vec<Cell>>> {
    db.rows(sql, rusqlite::params_from_iter(params.iter()), |r| {
        (0..r.as_ref().column_count())
            .map(|i| r.get_ref(i).and_then(cell_of))
            .collect()
    })
}

impl SqlDb for SqliteStore {
    const STATEMENTS: &'static Statements = &crate::statements::SQLITE;

    fn location(&self) -> &str {
        &self.inner.shown
    }

    async fn execute(&self, sql: &'static str, params: Vec<Param>) -> Result<u64> {
        self.write(move |w| {
            w.cached(sql, |s| {
                s.execute(rusqlite::params_from_iter(params.iter()))
            })
            .map(|n| n as u64)
        })
        .await
    }

    async fn rows(
        &self,
        sql: &'static str,
        params: Vec<Param>,
        write: bool,
    ) -> Result<Vec<Vec<Cell>>> {
        if write {
            self.write(move |w| run_rows(w, sql, &params)).await
        } else {
            self.read(move |db| run_rows(db, sql, &params)).await
        }
    }
}
