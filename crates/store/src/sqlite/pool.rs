//! The connections of one SQLite handle: one writer that commits in groups, and a pool of
//! readers (docs/decisions.md "SQLite: group commit and a reader pool").
//!
//! **Writer.** Every write is a job sent to one thread that owns the write connection. The
//! thread takes the first job waiting, then every other job already queued (at most
//! [`MAX_GROUP`]), and runs them in one `BEGIN IMMEDIATE … COMMIT`, each job inside its own
//! savepoint (a job that fails or decides to change nothing rolls back only its own part). A job's
//! caller gets its result only once that `COMMIT` returned: with `synchronous=FULL` its write is
//! then synced, exactly as when each write was its own transaction — concurrent writes share
//! the one sync instead of queueing for one each. A failed `COMMIT` fails every job of the
//! group (none of them is durable); a job whose error made SQLite roll back the whole
//! transaction (a full disk, an I/O error) fails the jobs before it in the group with the same
//! error, and the jobs after it run in a new transaction.
//!
//! **Readers.** Reads run on [`READERS`] connections of their own (WAL: readers never wait
//! for the writer, nor the writer for them), each opened on its first use — without the
//! create flag, so a store file deleted meanwhile is not re-created empty — and `query_only`.
//! A read after a write's result sees that write (a read starts from the latest commit).
//!
//! **Checkpoints.** After each group the writer hands the WAL's frame count (from SQLite's WAL
//! hook) to the handle's [`Checkpointer`], which checkpoints on a thread and connection of its
//! own; dropping the handle closes it ([`Checkpointer::close`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, mpsc};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use super::BUSY_TIMEOUT;
use super::checkpoint::{self, Checkpointer};
use super::run::{Db, Run, Writer};
use crate::error::{Error, Result};

/// How many writes one commit takes at most.
pub(super) const MAX_GROUP: usize = 256;

/// How many prepared statements each connection keeps (every statement the store runs fits,
/// so none is parsed again).
const STATEMENT_CACHE: usize = 64;

/// How many read connections a handle keeps.
pub(super) const READERS: usize = 3;

/// A write waiting for the writer thread.
trait Job: Send {
    /// Runs the write inside the group's transaction; a clone of its error when it failed.
    fn run(&mut self, conn: &mut Connection, shown: &str) -> Option<Error>;
    /// Hands the caller its result: `failed` when the group's commit (or an earlier write of
    /// the group) failed, so nothing of this write is durable.
    fn finish(self: Box<Self>, failed: Option<&Error>);
}

struct Pending<T, F> {
    write: Option<F>,
    result: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Job for Pending<T, F>
where
    T: Send,
    F: FnOnce(&mut Writer<'_>) -> Result<T> + Send,
{
    fn run(&mut self, conn: &mut Connection, shown: &str) -> Option<Error> {
        let write = self.write.take()?;
        let result = write(&mut Writer::new(conn, shown));
        let failed = result.as_ref().err().cloned();
        self.result = Some(result);
        failed
    }

    fn finish(self: Box<Self>, failed: Option<&Error>) {
        let out = match (failed, self.result) {
            (_, Some(Err(e))) => Err(e),
            (Some(e), _) => Err(e.clone()),
            (None, Some(ok)) => ok,
            (None, None) => Err(Error::backend("", "the write was not run")),
        };
        // The caller may have stopped waiting (its future dropped): nothing to tell then.
        let _ = self.reply.send(out);
    }
}

/// The writer and the readers of one store file.
pub(super) struct Conns {
    path: PathBuf,
    shown: String,
    jobs: mpsc::Sender<Box<dyn Job>>,
    readers: Vec<Mutex<Option<Connection>>>,
    next: AtomicUsize,
    checkpointer: std::sync::Arc<Checkpointer>,
    /// How many group commits the writer made (read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    commits: std::sync::Arc<AtomicUsize>,
}

impl Conns {
    /// Starts the writer thread on `writer` (opened and migrated).
    pub(super) fn start(writer: Connection, path: PathBuf, shown: String) -> Result<Conns> {
        writer.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let (jobs, queue) = mpsc::channel::<Box<dyn Job>>();
        let commits = std::sync::Arc::new(AtomicUsize::new(0));
        let checkpointer = Checkpointer::new(path.clone(), shown.clone());
        std::thread::Builder::new()
            .name("store-writer".to_owned())
            .spawn({
                let (shown, commits) = (shown.clone(), commits.clone());
                let checkpointer = checkpointer.clone();
                move || write_loop(writer, &shown, &queue, &commits, &checkpointer)
            })
            .map_err(|e| Error::backend(&shown, format!("cannot start the store's writer: {e}")))?;
        Ok(Conns {
            path,
            shown,
            jobs,
            readers: (0..READERS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            checkpointer,
            commits,
        })
    }

    /// Runs `write` in the next group commit; returns once that commit is durable.
    pub(super) async fn write<T: Send + 'static>(
        &self,
        write: impl FnOnce(&mut Writer<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (reply, result) = oneshot::channel();
        let job = Box::new(Pending {
            write: Some(write),
            result: None,
            reply,
        });
        let gone = || Error::backend(&self.shown, "the store's writer has stopped");
        self.jobs.send(job).map_err(|_| gone())?;
        // Awaited on the blocking pool, as reads are: a runtime on a paused test clock (the
        // simulation, `crates/sim`) then does not jump its clock ahead while the commit runs,
        // so a store write takes no simulated time, on SQLite as on the memory store.
        tokio::task::spawn_blocking(move || result.blocking_recv())
            .await
            .map_err(|_| gone())?
            .map_err(|_| gone())?
    }

    /// Runs `read` on a reader connection in a blocking thread.
    pub(super) async fn read<T: Send + 'static>(
        self: &std::sync::Arc<Self>,
        read: impl FnOnce(&Db<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut slot = this.reader();
            if slot.is_none() {
                *slot = Some(open_reader(&this.path, &this.shown)?);
            }
            match slot.as_ref() {
                Some(conn) => read(&Db::new(conn, &this.shown)),
                None => unreachable_reader(&this.shown),
            }
        })
        .await
        .map_err(|e| Error::backend(&self.shown, e.to_string()))?
    }

    /// A free reader, else the next in turn once free.
    fn reader(&self) -> MutexGuard<'_, Option<Connection>> {
        for slot in &self.readers {
            if let Ok(guard) = slot.try_lock() {
                return guard;
            }
        }
        let turn = self.next.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        lock(&self.readers[turn])
    }
}

impl Drop for Conns {
    /// The handle's last clone is gone: a checkpoint asked for or running gets a short while
    /// to finish ([`Checkpointer::close`]).
    fn drop(&mut self) {
        self.checkpointer.close();
    }
}

fn unreachable_reader<T>(shown: &str) -> Result<T> {
    Err(Error::backend(shown, "no reader connection"))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A connection holds no state of ours that a panic could leave half-written: each read is
    // one statement.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A read connection: the file must exist (never created here), queries only.
fn open_reader(path: &std::path::Path, shown: &str) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let open = || {
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "query_only", true)?;
        // It never commits, so it would never checkpoint; off all the same, like every
        // connection of the store's (the checkpoint thread does it).
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Like the writer: the last connection to close keeps the WAL.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        Ok(conn)
    };
    super::run::opening(shown, open)
}

/// The writer thread: group after group until every handle is gone.
fn write_loop(
    mut conn: Connection,
    shown: &str,
    queue: &mpsc::Receiver<Box<dyn Job>>,
    commits: &AtomicUsize,
    checkpointer: &std::sync::Arc<Checkpointer>,
) {
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        commit_group(&mut conn, shown, group, commits, checkpointer);
        // After the group's callers have their results: the checkpoint never delays them.
        checkpointer.wake();
    }
}

/// Runs `group` in as few transactions as its failures allow, one `COMMIT` each.
fn commit_group(
    conn: &mut Connection,
    shown: &str,
    group: Vec<Box<dyn Job>>,
    commits: &AtomicUsize,
    checkpointer: &Checkpointer,
) {
    let mut rest = group.into_iter().peekable();
    while rest.peek().is_some() {
        if let Err(e) = Db::new(conn, shown).batch("BEGIN IMMEDIATE") {
            for job in rest {
                job.finish(Some(&e));
            }
            return;
        }
        let mut ran: Vec<Box<dyn Job>> = Vec::new();
        let mut aborted = false;
        for mut job in rest.by_ref() {
            let failed = job.run(conn, shown);
            if conn.is_autocommit() {
                // The write's error rolled the whole transaction back: the writes before it
                // are lost too.
                let e =
                    failed.unwrap_or_else(|| Error::backend(shown, "the transaction ended early"));
                for done in ran.drain(..) {
                    done.finish(Some(&e));
                }
                job.finish(None);
                aborted = true;
                break;
            }
            ran.push(job);
        }
        if aborted {
            continue;
        }
        let committed = Db::new(conn, shown).batch("COMMIT");
        if committed.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        if committed.is_ok() {
            commits.fetch_add(1, Ordering::Relaxed);
            // Before the callers hear of the commit: one that closes the store at once still
            // finds the checkpoint wanted and waits for it.
            checkpointer.committed(checkpoint::take_frames());
        }
        let failed = committed.err();
        for job in ran {
            job.finish(failed.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::Arc;

    fn conns(dir: &std::path::Path) -> Arc<Conns> {
        let path = dir.join("t.sqlite3");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (v INTEGER PRIMARY KEY)")
            .unwrap();
        Arc::new(Conns::start(conn, path, "t".to_owned()).unwrap())
    }

    fn insert(v: i64) -> impl FnOnce(&mut Writer<'_>) -> Result<()> + Send + 'static {
        move |w| w.execute("INSERT INTO t (v) VALUES (?1)", [v]).map(drop)
    }

    /// Writes queued while the writer is busy share its next commit; each caller gets its
    /// own result (a failed write rolls back only itself), and every write that succeeded is
    /// there for a reader once its result came back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_queued_meanwhile_share_one_commit() {
        let dir = tempfile::tempdir().unwrap();
        let c = conns(dir.path());
        let (hold, held) = std::sync::mpsc::channel::<()>();
        let (started, is_started) = oneshot::channel::<()>();
        let first = tokio::spawn({
            let c = c.clone();
            async move {
                c.write(move |w| {
                    let _ = started.send(());
                    held.recv().unwrap();
                    insert(0)(w)
                })
                .await
            }
        });
        is_started.await.unwrap();
        // The writer is inside the first group now: these queue for the next one (a write's
        // first poll queues its job).
        let mut queued: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + '_>>> =
            (1..=20)
                .map(|v| Box::pin(c.write(insert(v))) as _)
                .collect();
        queued.push(Box::pin(c.write(insert(0))));
        for f in &mut queued {
            std::future::poll_fn(|cx| {
                let _ = f.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
        }
        hold.send(()).unwrap();
        first.await.unwrap().unwrap();
        let mut results = Vec::new();
        for f in queued {
            results.push(f.await);
        }
        let duplicate = results.pop().unwrap();
        assert!(duplicate.is_err(), "a duplicate key fails alone");
        for r in results {
            r.unwrap();
        }
        assert_eq!(
            c.commits.load(Ordering::Relaxed),
            2,
            "one commit for the first write, one for the 21 queued"
        );
        let n: i64 = c
            .read(|db| db.cached("SELECT count(*) FROM t", |s| s.query_row([], |r| r.get(0))))
            .await
            .unwrap();
        assert_eq!(n, 21);
    }
}
