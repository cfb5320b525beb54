//! Shared test support: fresh stores of each backend, a throwaway Postgres cluster, and child
//! processes (this test binary run again in child mode, see `child.rs`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
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
    let url = fresh_pg_database().await;
    Fixture {
        store: Store::open(&url).await.unwrap(),
        url,
        _dir: None,
    }
}

/// The server the Postgres tests use: `ASK_USER_TEST_PG` (a role that may create databases,
/// `max_connections` >= 200 for the 50-process test), else a throwaway cluster started once per
/// test process and stopped when the process ends.
fn pg_server() -> &'static str {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("ASK_USER_TEST_PG") {
        Ok(url) if !url.is_empty() => url,
        _ => start_cluster(),
    })
}

/// A new, empty database on the test server; its URL.
pub(crate) async fn fresh_pg_database() -> String {
    fresh_database_on(pg_server()).await
}

/// A new, empty database on the server `server` names (a URL whose role may create
/// databases); its URL.
pub(crate) async fn fresh_database_on(server: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let server = server.to_owned();
    let name = format!(
        "ask_user_test_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    let (client, conn) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test Postgres {server}: {e}"));
    tokio::spawn(conn);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    with_dbname(&server, &name)
}

/// `url` with its database replaced by `db`.
fn with_dbname(url: &str, db: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let base = match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

fn pg_bin(name: &str) -> PathBuf {
    let mut candidates: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin").join(name))
        .filter(|p| p.exists())
        .collect();
    candidates.sort();
    if let Some(p) = candidates.pop() {
        return p;
    }
    let on_path = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output();
    match on_path {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => panic!(
            "Postgres is not installed ({name} not found): run scripts/setup (Debian package \
             postgresql) or set ASK_USER_TEST_PG=postgres://… to use a running server"
        ),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.trim_ascii() == b"0")
        .unwrap_or(false)
}

/// Runs a Postgres tool, as the `postgres` system user when we are root (Postgres refuses root).
fn pg_command(tool: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(tool);
        c
    } else {
        Command::new(tool)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// initdb + pg_ctl start in a temp dir on a free port; a watcher stops the cluster and removes
/// the directory once this test process has ended.
fn start_cluster() -> String {
    let cluster = Cluster::start();
    let url = cluster.url.clone();
    // The shared cluster lives as long as this process (the watcher stops it).
    std::mem::forget(cluster);
    url
}

/// A throwaway Postgres cluster of one test's own (not the shared one: restarting that would
/// break the tests running beside), stopped when dropped, and by a watcher if this process
/// dies first.
pub(crate) struct Cluster {
    /// `postgres://postgres@127.0.0.1:PORT/postgres` (a superuser).
    pub(crate) url: String,
    data: PathBuf,
    dir: PathBuf,
}

impl Cluster {
    /// Restarts the server (`pg_ctl restart -m fast`: every connection is terminated, then the
    /// server comes back on the same port); returns once it accepts connections again.
    #[allow(dead_code)] // used by crates/cli/tests/hub.rs, which includes this file
    pub(crate) fn restart(&self) {
        self.restart_with("fast");
    }

    /// [`Cluster::restart`] with `pg_ctl restart -m MODE` (`immediate`: a crash, recovered from
    /// the WAL on start).
    #[allow(dead_code)] // used by crates/cli/tests/chaos.rs, which includes this file
    /// Stops the server (`pg_ctl stop -m immediate`), as a crash would.
    #[allow(dead_code)] // not every test binary stops its cluster
    pub(crate) fn stop(&self) {
        let out = pg_command(&pg_bin("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output()
            .unwrap();
        assert!(out.status.success(), "pg_ctl stop failed");
    }

    pub(crate) fn restart_with(&self, mode: &str) {
        let out = pg_command(&pg_bin("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-m", mode, "-w", "-t", "60", "restart"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl restart failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = pg_command(&pg_bin("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Cluster {
    /// initdb + pg_ctl start in a temp dir on a free port.
    pub(crate) fn start() -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("ask-user-pg")
            .tempdir()
            .unwrap()
            .keep();
        if is_root() {
            let ok = Command::new("chown")
                .arg("postgres:")
                .arg(&dir)
                .status()
                .unwrap()
                .success();
            assert!(ok, "cannot chown {} to postgres", dir.display());
        }
        let data = dir.join("data");
        let out = pg_command(&pg_bin("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let out = pg_command(&pg_bin("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("log"))
            .arg("-o")
            .arg(format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300",
                dir.display()
            ))
            .args(["-w", "-t", "60", "start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(dir.join("log")).unwrap_or_default()
        );
        let script = format!(
            "while [ -d /proc/{pid} ]; do sleep 1; done; {pg_ctl} -D {data} -m immediate stop >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            pg_ctl = pg_bin("pg_ctl").display(),
            data = data.display(),
            dir = dir.display(),
        );
        // Never waited for: it outlives this process on purpose (it stops the cluster after us).
        #[allow(clippy::zombie_processes)]
        pg_command(Path::new("sh"))
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Cluster {
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            data,
            dir,
        }
    }
}

/// A child process: this test binary running `child::entry` with a command.
pub(crate) struct ChildProc {
    pub(crate) child: Child,
    lines: mpsc::Receiver<String>,
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
        cmd.args([
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
        ChildProc { child, lines }
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
