//! Following other processes' writes (SQLite): the sidecar file's watch (the kernel's, or a
//! poll of its metadata when the kernel refuses one), and the scan loop that, on each event and
//! at least every [`SAFETY_SCAN`], reads the asks whose `seq` passed the last one seen and
//! announces them on the handle's feed.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use notify::Watcher;
use tokio::sync::Notify;

use super::run::Run;
use super::{Inner, SqliteStore, meta_value, notify_path};
use crate::error::Result;
use crate::feed::Feed;
use crate::model::{AskId, Change};

/// A handle's following of other processes' writes, set up by its first subscription.
pub(super) struct Watch {
    /// `None` when no file watch could be set up: followers then rely on the scan loop's
    /// safety scan every [`SAFETY_SCAN`].
    _watcher: Option<Watching>,
    /// What the watch is, for diagnostics (see [`crate::Store::watch_mode`]).
    mode: &'static str,
    wake: Arc<Notify>,
}

impl Watch {
    /// Lets the scan loop see the store is gone and end.
    pub(super) fn end(&self) {
        self.wake.notify_one();
    }
}

/// The file watch in use: the kernel's (inotify), or — when the kernel refuses one (the
/// per-user inotify limit reached, e.g. by dozens of waiting agents) — a poll of the sidecar's
/// metadata: one `stat` per [`POLL_EVERY`], no database read.
/// Held only to keep the watch alive (dropping it stops the watch; the poll thread ends with
/// the store).
enum Watching {
    Kernel(#[allow(dead_code)] notify::RecommendedWatcher),
    Poll,
}

/// What the poll compares: the sidecar's inode, length, modification time (to the nanosecond)
/// and its bytes (each writer stores a new value, so two writes within one clock tick differ).
fn sidecar_stamp(path: &Path) -> Option<(u64, u64, i64, i64, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let bytes = std::fs::read(path).unwrap_or_default();
    Some((m.ino(), m.len(), m.mtime(), m.mtime_nsec(), bytes))
}

/// The fallback watch: a thread that looks at the sidecar every [`POLL_EVERY`] and wakes the
/// scan loop when it changed; it ends once the store is dropped.
fn poll_sidecar(target: PathBuf, wake: Arc<Notify>, alive: Weak<Inner>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("store-poll".to_owned())
        .spawn({
            // Taken before `subscribe` returns: a write after it is a change.
            let mut last = sidecar_stamp(&target);
            move || loop {
                std::thread::sleep(POLL_EVERY);
                if alive.upgrade().is_none() {
                    return;
                }
                let now = sidecar_stamp(&target);
                if now != last {
                    last = now;
                    wake.notify_one();
                }
            }
        })
        .map(|_| ())
}

/// How often the fallback watch looks at the sidecar file.
const POLL_EVERY: Duration = Duration::from_millis(250);

/// **Test only** (read only with the `test-knobs` feature, see [`crate::knobs`]): with this
/// variable set to `poll`, the kernel watch is not tried (as if the inotify limit were
/// reached), so tests can run the fallback; set to `none`, no watch at all is set up (as if
/// every file event were lost), so only the safety scan can wake a follower. Not for
/// production use.
pub const WATCH_TEST_ENV: &str = "ASK_USER_TEST_FILE_WATCH";

/// How often the scan loop looks for other processes' changes although no file event came: the
/// safety net against a lost event (a network file system) or a store without a watch, and
/// where a replaced store file is found. One indexed read per store handle, however many
/// callers wait on it (each waiter used to re-read its own ask this often: 1,900 reads a second
/// with 9,500 agents waiting on a hub).
const SAFETY_SCAN: Duration = Duration::from_secs(5);

/// **Test only** (read only with the `test-knobs` feature, see [`crate::knobs`]): the safety
/// scan's period in milliseconds instead of 5 s, or `off` for none, so a test can
/// prove that the file watch alone wakes a follower, or that the scan alone does. Not for
/// production use.
pub const SAFETY_SCAN_TEST_ENV: &str = "ASK_USER_TEST_SAFETY_SCAN";

/// The safety scan's period; `None`: switched off (test knob only).
fn safety_scan() -> Option<Duration> {
    match crate::knobs::var(SAFETY_SCAN_TEST_ENV).as_deref() {
        Some("off") => None,
        Some(ms) => Some(ms.parse().map_or(SAFETY_SCAN, Duration::from_millis)),
        None => Some(SAFETY_SCAN),
    }
}

impl SqliteStore {
    pub(crate) async fn subscribe(&self) -> Result<Feed> {
        let rx = self.inner.tx.subscribe();
        if self.inner.watch.get().is_none() {
            let _guard = self.inner.watch_init.lock().await;
            if self.inner.watch.get().is_none() {
                self.start_watch().await?;
            }
        }
        Ok(Feed::new(rx))
    }

    /// Starts following other processes' writes: a file watch on the sidecar and a task that
    /// announces the asks whose `seq` passed the last one seen.
    async fn start_watch(&self) -> Result<()> {
        let start = self.read(|db| meta_value(db, "seq")).await?.unwrap_or(0);
        self.inner.last_seq.store(start, Ordering::SeqCst);
        let wake = Arc::new(Notify::new());
        let target = notify_path(&self.inner.path);
        let handler = {
            let wake = wake.clone();
            move |ev: notify::Result<notify::Event>| match ev {
                Ok(ev) if ev.kind.is_access() => {}
                _ => wake.notify_one(),
            }
        };
        let (watcher, mode) = self.watch_sidecar(&target, &wake, handler);
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(scan_loop(weak, wake.clone()));
        let _ = self.inner.watch.set(Watch {
            _watcher: watcher,
            mode,
            wake,
        });
        Ok(())
    }

    /// The sidecar's watch: the kernel's, else the poll of its metadata, else none (the safety
    /// scan alone); what it is, for [`SqliteStore::watch_mode`].
    fn watch_sidecar(
        &self,
        target: &Path,
        wake: &Arc<Notify>,
        handler: impl notify::EventHandler,
    ) -> (Option<Watching>, &'static str) {
        let forced = crate::knobs::var(WATCH_TEST_ENV);
        if forced.as_deref() == Some("none") {
            return (None, "none");
        }
        let forced_poll = forced.is_some_and(|v| v == "poll");
        let kernel = if forced_poll {
            Err(notify::Error::generic(
                "the kernel watch is switched off for this test",
            ))
        } else {
            notify::recommended_watcher(handler).and_then(|mut w| {
                w.watch(target, notify::RecursiveMode::NonRecursive)
                    .map(|()| w)
            })
        };
        match kernel {
            Ok(w) => (Some(Watching::Kernel(w)), "kernel"),
            Err(e) => {
                // Degraded, not failed: a poll of the sidecar's metadata (cheap: no database
                // read), and the safety scan behind it.
                match poll_sidecar(target.to_owned(), wake.clone(), Arc::downgrade(&self.inner)) {
                    Ok(()) => {
                        // Info, not a warning: the poll serves as well (within 250 ms), and an
                        // agent's stderr is read by its model; `RUST_LOG=info` shows it.
                        tracing::info!(
                            store = %self.inner.shown,
                            "cannot watch {} with the kernel ({e}); checking it every {} ms instead. When many agents wait at once, raise the limit: sysctl fs.inotify.max_user_instances",
                            target.display(),
                            POLL_EVERY.as_millis()
                        );
                        (Some(Watching::Poll), "poll")
                    }
                    Err(p) => {
                        tracing::warn!(store = %self.inner.shown, "cannot watch {} for changes ({e}; {p}); answers from other processes are noticed within seconds only", target.display());
                        (None, "none")
                    }
                }
            }
        }
    }

    /// The file watch this handle follows changes with: `kernel`, `poll`, `none`, or `unwatched`
    /// before the first subscription.
    pub(crate) fn watch_mode(&self) -> &'static str {
        self.inner.watch.get().map_or("unwatched", |w| w.mode)
    }
}

/// Announces other processes' changes each time the sidecar is touched, and at least every
/// [`SAFETY_SCAN`] (a lost event); ends with the store.
async fn scan_loop(weak: Weak<Inner>, wake: Arc<Notify>) {
    let every = safety_scan();
    loop {
        match every {
            Some(every) => {
                let _ = tokio::time::timeout(every, wake.notified()).await;
            }
            None => wake.notified().await,
        }
        let Some(inner) = weak.upgrade() else { return };
        let last = inner.last_seq.load(Ordering::SeqCst);
        let scanned = inner
            .conns
            .read(move |db| {
                db.rows(
                    "SELECT id, seq FROM asks WHERE seq > ?1 ORDER BY seq",
                    [last],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
            })
            .await;
        match scanned {
            Ok(rows) => {
                for (id, seq) in rows {
                    inner.last_seq.fetch_max(seq, Ordering::SeqCst);
                    let _ = inner.tx.send(Change::Ask(AskId(id)));
                }
            }
            _ => {
                let _ = inner.tx.send(Change::Rescan);
            }
        }
        // The sidecar's watch also fires when the files are deleted (and the safety scan comes
        // round): followers re-read, and find the store gone (`Store::wait_outcome`).
        if (SqliteStore {
            inner: inner.clone(),
        })
        .check_file()
        .is_err()
        {
            let _ = inner.tx.send(Change::Rescan);
        }
    }
}
