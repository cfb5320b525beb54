//! A throwaway Postgres for tests: Debian's `postgresql` started by the test itself (initdb +
//! pg_ctl in a temporary directory, a free loopback port, as the `postgres` user when root),
//! stopped when the test process ends, even by a crash. `ASK_USER_TEST_PG` names a running
//! server to use instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The server the Postgres tests use: `ASK_USER_TEST_PG` (a role that may create databases,
/// `max_connections` >= 200 for the 50-process test), else a throwaway cluster started once per
/// test process and stopped when the process ends.
pub fn server() -> &'static str {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("ASK_USER_TEST_PG") {
        Ok(url) if !url.is_empty() => url,
        _ => start_cluster(),
    })
}

/// A new, empty database on the test server; its URL.
pub async fn fresh_database() -> String {
    fresh_database_on(server()).await
}

/// A new, empty database on the server `server` names (a URL whose role may create
/// databases); its URL.
pub async fn fresh_database_on(server: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let server = server.to_owned();
    let name = format!(
        "ask_user_test_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    connect(&server)
        .await
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    with_dbname(&server, &name)
}

/// A client on `url`, its connection driven by a task of the current runtime: a test's own
/// admin session beside the store's (to read or change what the store wrote, or to terminate
/// its connections).
///
/// # Panics
/// When the server cannot be reached.
pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test Postgres {url}: {e}"));
    tokio::spawn(conn);
    client
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
#[derive(Debug)]
pub struct Cluster {
    /// `postgres://postgres@127.0.0.1:PORT/postgres` (a superuser).
    pub url: String,
    data: PathBuf,
    dir: PathBuf,
}

impl Cluster {
    /// Restarts the server (`pg_ctl restart -m fast`: every connection is terminated, then the
    /// server comes back on the same port); returns once it accepts connections again.
    pub fn restart(&self) {
        self.restart_with("fast");
    }

    /// Stops the server (`pg_ctl stop -m immediate`), as a crash would.
    pub fn stop(&self) {
        let out = pg_command(&pg_bin("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output()
            .unwrap();
        assert!(out.status.success(), "pg_ctl stop failed");
    }

    /// [`Cluster::restart`] with `pg_ctl restart -m MODE` (`immediate`: a crash, recovered from
    /// the WAL on start).
    pub fn restart_with(&self, mode: &str) {
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
    pub fn start() -> Cluster {
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
        let port = crate::free_port();
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
