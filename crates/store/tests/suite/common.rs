//! Shared test support: fresh stores of each backend (Postgres on the test-support crate's
//! throwaway cluster), and child processes (this test binary run again in child mode, see
//! `child.rs`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use ask_user_store::Store;

/// A generous deadline for anything that waits on another task or process (a loaded machine).
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

/// A fresh store of one backend, and the URL that opens another handle to it.
pub(crate) struct Fixture {
    pub(crate) store: Store,
    pub(crate) url: String,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// Another handle on the same store: the same memory store, a second connection to the
    /// same SQLite file or Postgres database (as another process would have).
    pub(crate) async fn second(&self) -> Store {
        if self.url == "memory" {
            return self.store.clone();
        }
        Store::open(&self.url).await.unwrap()
    }
}

pub(crate) async fn memory() -> Fixture {
    Fixture {
        store: Store::memory(),
        url: "memory".into(),
        _dir: None,
    }
}

pub(crate) async fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    Fixture {
        store: Store::open(&url).await.unwrap(),
        url,
        _dir: Some(dir),
    }
}

pub(crate) async fn postgres() -> Fixture {
    let url = ask_user_test_support::postgres::fresh_database().await;
    Fixture {
        store: Store::open(&url).await.unwrap(),
        url,
        _dir: None,
    }
}

/// A child process: this test binary running `child::entry` with a command.
pub(crate) struct ChildProc {
    pub(crate) child: Child,
    lines: mpsc::Receiver<String>,
    /// The child's private home ([`ask_user_test_support::hermetic`]).
    _home: tempfile::TempDir,
}

impl ChildProc {
    /// Starts `args` (see `child.rs`) in a child process.
    pub(crate) fn spawn(args: &[&str]) -> ChildProc {
        ChildProc::spawn_wrapped(&[], args)
    }

    /// Starts the child under a wrapper command (e.g. `unshare -m sh -c '…' --`), which must
    /// exec its trailing arguments.
    pub(crate) fn spawn_wrapped(wrapper: &[&str], args: &[&str]) -> ChildProc {
        ChildProc::spawn_full(wrapper, &[], args)
    }

    /// Starts `args` with extra environment variables.
    pub(crate) fn spawn_with_env(env: &[(&str, &str)], args: &[&str]) -> ChildProc {
        ChildProc::spawn_full(&[], env, args)
    }

    fn spawn_full(wrapper: &[&str], env: &[(&str, &str)], args: &[&str]) -> ChildProc {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let home = tempfile::tempdir().unwrap();
        ask_user_test_support::hermetic(&mut cmd, home.path())
            .args([
                "--ignored",
                "--exact",
                "child::entry",
                "--nocapture",
                "--test-threads=1",
                "--quiet",
            ])
            .envs(env.iter().copied())
            .env("ASK_USER_STORE_CHILD", args.join("\u{1f}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(msg) = line.strip_prefix("@@ ") {
                    let _ = tx.send(msg.to_owned());
                }
            }
        });
        ChildProc {
            child,
            lines,
            _home: home,
        }
    }

    /// The child's next message, waiting up to [`DEADLINE`].
    pub(crate) fn next(&self) -> String {
        self.lines
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|e| panic!("no message from the child: {e}"))
    }

    /// The next message, or `None` when the child ended without one.
    pub(crate) fn next_or_end(&self) -> Option<String> {
        match self.lines.recv_timeout(DEADLINE) {
            Ok(m) => Some(m),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(e) => panic!("no message from the child: {e}"),
        }
    }

    /// Waits for the child to exit successfully.
    pub(crate) fn finish(mut self) {
        let status = self.child.wait().unwrap();
        assert!(status.success(), "child failed: {status}");
    }
}

impl Drop for ChildProc {
    /// A test that failed midway leaves no child behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The frames of `store`'s WAL a process that opens it alone reads back: those carrying the
/// WAL header's salt, up to the first that does not (older generations are not read).
pub(crate) fn wal_frames(store: &Path) -> u32 {
    let mut wal = store.as_os_str().to_owned();
    wal.push("-wal");
    let Ok(data) = std::fs::read(PathBuf::from(wal)) else {
        return 0;
    };
    if data.len() < 32 {
        return 0;
    }
    let page = u32::from_be_bytes([data[8], data[9], data[10], data[11]]) as usize;
    let salt = &data[16..24];
    let (mut n, mut off) = (0, 32);
    while off + 24 + page <= data.len() && &data[off + 8..off + 16] == salt {
        n += 1;
        off += 24 + page;
    }
    n
}

/// Waits until `store`'s WAL holds at most `bound` frames ([`wal_frames`]), up to
/// [`DEADLINE`]; the frames it held last.
pub(crate) async fn wal_settles_under(store: &Path, bound: u32) -> u32 {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let frames = wal_frames(store);
        if frames <= bound || std::time::Instant::now() >= deadline {
            return frames;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Expands each named case (an `async fn(Fixture)`) into one test per backend, in modules
/// `memory`, `sqlite` and `postgres` of the invoking module
/// (`conformance::sqlite::first_outcome_wins`, …).
macro_rules! every_backend {
    ($($case:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::super::common::memory().await).await })*
        }
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::super::common::sqlite().await).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::super::common::postgres().await).await })*
        }
    };
}
