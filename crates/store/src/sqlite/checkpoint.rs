//! The WAL's checkpoint, off the writer's path (docs/decisions.md "The WAL's checkpoint runs on
//! a thread of its own").
//!
//! SQLite's automatic checkpoint is off on the store's connections (`wal_autocheckpoint=0`): it
//! ran inside the commit that crossed its bound, on the one writer thread, so that commit and
//! every write queued behind it waited for it. Instead the writer connection learns from
//! SQLite's WAL hook how many frames the WAL holds after each commit ([`watch_wal`],
//! [`take_frames`]), and a commit that left more than [`WAL_BOUND_PAGES`] wakes the
//! [`Checkpointer`]'s thread, which checkpoints on a connection of its own:
//!
//! 1. `wal_checkpoint(PASSIVE)` copies the WAL's frames into the database file without taking
//!    SQLite's write lock: writers, in this process and others, go on committing meanwhile;
//! 2. when that copied every frame (no reader holds an older snapshot), `wal_checkpoint(TRUNCATE)`
//!    copies what was committed meanwhile and truncates the WAL to zero bytes, so the next
//!    process to open the store has no frame to read back. It holds the write lock while it
//!    waits for readers still reading from the WAL, at most [`BUSY`] (its connection's busy
//!    timeout); past that SQLite reports it busy and leaves the WAL as PASSIVE did, and the next
//!    commit past the bound tries again.
//!
//! A writer never waits for the thread: at most it meets the write lock TRUNCATE holds for
//! [`BUSY`] plus the copy of the frames committed since PASSIVE, and waits for it on its busy
//! handler (30 s) like for any other writer, so it is never refused ("database is locked").
//!
//! **Closing** ([`Checkpointer::close`], when the store's last handle is dropped): a checkpoint
//! asked for or running is waited for, at most [`CLOSE_WAIT`]; past that it is interrupted
//! (`sqlite3_interrupt`) and left. A checkpoint cut short, by the interrupt or by the process
//! ending, is safe: SQLite marks frames copied only after the database file is synced, and the
//! next checkpoint copies them again.

use std::cell::Cell;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::hooks::Wal;
use rusqlite::{Connection, InterruptHandle, OpenFlags};

/// A commit that leaves the WAL holding more frames (pages) than this wakes the checkpoint
/// thread. A process that finds no other on the store reads every frame back at its start
/// (about 2 µs each, measured), and each checkpoint costs the next commit one more sync (the
/// new WAL's header): with an answered one-question `ask` adding about 19 frames, 128 keeps
/// the read under 0.3 ms and checkpoints once every seven asks or so (docs/decisions.md).
pub const WAL_BOUND_PAGES: u32 = 128;

/// The checkpoint connection's busy timeout: how long TRUNCATE waits for the write lock, and
/// then (holding it) for readers of the WAL, before it gives up for this time.
pub(super) const BUSY: Duration = Duration::from_millis(10);

/// How long closing the store waits for a checkpoint asked for or running before it
/// interrupts it, unless [`CLOSE_WAIT_TEST_ENV`] sets another wait.
pub(super) const CLOSE_WAIT: Duration = Duration::from_millis(250);

/// **Test only** (feature `test-knobs`): `ASK_USER_TEST_CLOSE_WAIT_MS=N` makes closing the
/// store wait up to `N` ms for its checkpoint instead of [`CLOSE_WAIT`]. A test of what the
/// checkpoint achieves sets it high, so that a loaded machine (a checkpoint slower than 250 ms)
/// cannot turn the cap's interrupt into a failure of the mechanism under test.
pub const CLOSE_WAIT_TEST_ENV: &str = "ASK_USER_TEST_CLOSE_WAIT_MS";

/// The wait [`Checkpointer::close`] allows: [`CLOSE_WAIT`] or the test knob's.
fn close_wait() -> Duration {
    crate::knobs::var(CLOSE_WAIT_TEST_ENV)
        .and_then(|ms| ms.parse().ok())
        .map_or(CLOSE_WAIT, Duration::from_millis)
}

thread_local! {
    /// The frames in the WAL after the last commit made on this thread ([`note_frames`]).
    static FRAMES: Cell<c_int> = const { Cell::new(0) };
}

/// Switches SQLite's automatic checkpoint off on the writer connection `conn` and has each of
/// its commits note the WAL's frame count for [`take_frames`] (the WAL hook; the automatic
/// checkpoint was itself a WAL hook, so the order matters: the pragma clears the hook).
pub(super) fn watch_wal(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    conn.wal_hook(Some(note_frames));
    Ok(())
}

/// The WAL hook: called by SQLite on the committing thread, after the commit.
fn note_frames(_: &Wal, frames: c_int) -> rusqlite::Result<()> {
    FRAMES.set(frames);
    Ok(())
}

/// The frames the WAL held after the last commit made on this thread since the previous call
/// (0 when none).
pub(super) fn take_frames() -> u32 {
    u32::try_from(FRAMES.replace(0)).unwrap_or(0)
}

/// The checkpoint thread of one store handle, started on the first commit past the bound.
pub(super) struct Checkpointer {
    path: PathBuf,
    shown: String,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// A commit left the WAL past the bound since the last checkpoint began.
    wanted: bool,
    /// A checkpoint is running.
    running: bool,
    /// The store was closed: the thread ends once nothing is wanted.
    closed: bool,
    /// The thread was started.
    started: bool,
    /// Interrupts the checkpoint connection (once opened).
    interrupt: Option<InterruptHandle>,
    /// Checkpoints run so far (for the tests).
    runs: usize,
}

impl std::fmt::Debug for Checkpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpointer")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Checkpointer {
    /// A checkpointer for the store file `path` (no thread yet).
    pub(super) fn new(path: PathBuf, shown: String) -> Arc<Checkpointer> {
        Arc::new(Checkpointer {
            path,
            shown,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        })
    }

    /// Right after a commit that left `frames` in the WAL, before its writes' callers hear of
    /// it: past the bound, a checkpoint is wanted (so a store closed as soon as its caller
    /// returns still waits for it). Never waits: the lock guards only these flags.
    pub(super) fn committed(&self, frames: u32) {
        if frames > WAL_BOUND_PAGES {
            lock(&self.state).wanted = true;
        }
    }

    /// After the callers were answered: wakes the thread for a checkpoint wanted, starting it
    /// the first time.
    pub(super) fn wake(self: &Arc<Self>) {
        let mut s = lock(&self.state);
        if !s.wanted {
            return;
        }
        if !s.started {
            let this = self.clone();
            let spawned = std::thread::Builder::new()
                .name("store-checkpoint".to_owned())
                .spawn(move || run(&this));
            match spawned {
                Ok(_) => s.started = true,
                Err(e) => {
                    // The next commit past the bound tries again.
                    s.wanted = false;
                    tracing::debug!(store = %self.shown, "cannot start the checkpoint thread: {e}");
                }
            }
        }
        self.changed.notify_all();
    }

    /// The store is closing: waits for a checkpoint asked for or running, at most
    /// [`CLOSE_WAIT`], then interrupts it and leaves it; the thread ends after it.
    pub(super) fn close(&self) {
        let deadline = Instant::now() + close_wait();
        let mut s = lock(&self.state);
        s.closed = true;
        self.changed.notify_all();
        while s.wanted || s.running {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                if let Some(i) = &s.interrupt {
                    i.interrupt();
                }
                return;
            }
            s = self
                .changed
                .wait_timeout(s, left)
                .map_or_else(|p| p.into_inner().0, |(g, _)| g);
        }
    }

    /// Checkpoints run so far.
    #[cfg(test)]
    pub(super) fn runs(&self) -> usize {
        lock(&self.state).runs
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // The flags are each written whole: a panic cannot leave them half-changed.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The thread: one checkpoint per wake-up until the store is closed and nothing is wanted.
fn run(this: &Checkpointer) {
    let mut conn: Option<Connection> = None;
    loop {
        {
            let mut s = lock(&this.state);
            loop {
                if s.wanted {
                    s.wanted = false;
                    s.running = true;
                    break;
                }
                if s.closed {
                    return;
                }
                s = this
                    .changed
                    .wait(s)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
        if conn.is_none() {
            match open(&this.path) {
                Ok(c) => {
                    lock(&this.state).interrupt = Some(c.get_interrupt_handle());
                    conn = Some(c);
                }
                Err(e) => {
                    tracing::debug!(store = %this.shown, "cannot open the checkpoint connection: {e}");
                }
            }
        }
        if let Some(c) = &conn {
            match checkpoint(c) {
                Ok(done) => tracing::trace!(store = %this.shown, "checkpoint: {done:?}"),
                Err(e) => tracing::debug!(store = %this.shown, "checkpoint: {e}"),
            }
        }
        let mut s = lock(&this.state);
        s.running = false;
        s.runs += 1;
        this.changed.notify_all();
    }
}

/// The checkpoint connection: the file must exist (never created here); full sync, so the
/// database file is synced before SQLite marks a frame copied or truncates the WAL.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    // Like the others: the last connection to close keeps the WAL.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    // A checkpoint on a connection that has read nothing yet does nothing (it has not opened
    // the WAL): one read of the schema opens it.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(conn)
}

/// What one checkpoint did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Done {
    /// Every frame copied and the WAL truncated to zero bytes.
    Truncated,
    /// Frames copied as far as readers allowed; the WAL is kept (a reader held an older
    /// snapshot, or the write lock or a reader was busy past [`BUSY`]).
    Passive { frames: i64, copied: i64 },
}

/// PASSIVE, then TRUNCATE when PASSIVE copied everything.
fn checkpoint(conn: &Connection) -> rusqlite::Result<Done> {
    let (busy, frames, copied) = wal_checkpoint(conn, "PASSIVE")?;
    if busy != 0 || frames != copied {
        return Ok(Done::Passive { frames, copied });
    }
    let (busy, frames, copied) = wal_checkpoint(conn, "TRUNCATE")?;
    if busy != 0 {
        return Ok(Done::Passive { frames, copied });
    }
    Ok(Done::Truncated)
}

/// `PRAGMA wal_checkpoint(MODE)`: (busy, frames in the WAL, frames copied).
fn wal_checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(i64, i64, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// A commit past the bound wakes the thread; closing right after waits for that checkpoint,
    /// which leaves the WAL empty. A commit under the bound starts nothing.
    #[test]
    fn closing_waits_for_the_checkpoint_a_commit_past_the_bound_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sqlite3");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (v BLOB)")
            .unwrap();
        watch_wal(&conn).unwrap();
        let ckpt = Checkpointer::new(path.clone(), "t".to_owned());
        conn.execute("INSERT INTO t VALUES (zeroblob(100))", [])
            .unwrap();
        let few = take_frames();
        assert!((1..=WAL_BOUND_PAGES).contains(&few), "{few}");
        ckpt.committed(few);
        ckpt.wake();
        assert!(
            !lock(&ckpt.state).started,
            "no thread for a WAL under the bound"
        );
        // One commit of more pages than the bound (SQLite's own checkpoint is off: nothing
        // folds them into the file meanwhile).
        let big = i64::from(WAL_BOUND_PAGES) * 4096;
        conn.execute("INSERT INTO t VALUES (zeroblob(?1))", [big])
            .unwrap();
        let many = take_frames();
        assert!(many > WAL_BOUND_PAGES, "{many}");
        ckpt.committed(many);
        ckpt.wake();
        ckpt.close();
        assert_eq!(ckpt.runs(), 1);
        let wal = dir.path().join("t.sqlite3-wal");
        assert_eq!(
            std::fs::metadata(wal).unwrap().len(),
            0,
            "the WAL is truncated"
        );
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2);
    }
}
