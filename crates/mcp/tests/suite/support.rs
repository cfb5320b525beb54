//! Shared helpers: the server binary, an in-process HTTP server, the Python client.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use ask_user_core::CancellationToken;
use ask_user_mcp::{AskUserServer, Routing, serve_http};
use serde_json::Value;
use tokio::net::TcpListener;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The standalone server binary built with this package.
pub fn server_bin() -> String {
    env!("CARGO_BIN_EXE_ask-user-mcp").to_owned()
}

/// The server binary as a command with a cleared environment and a private HOME and XDG dirs
/// under `home` ([`ask_user_test_support::hermetic`]): no `ASK_USER_*` of the developer's (a
/// hub, a store) and no default store of theirs reaches it.
pub fn server(home: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(server_bin());
    ask_user_test_support::hermetic(&mut command, home);
    command
}

/// The venv's Python (made by `scripts/setup`).
pub fn python() -> PathBuf {
    let python = root().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup first",
        python.display()
    );
    python
}

/// Where a test talks to the server.
#[derive(Debug, Clone)]
pub enum Target {
    /// Spawn the binary with these flags and talk over its stdin/stdout.
    Stdio(Vec<String>),
    /// A streamable HTTP endpoint.
    Http(String),
}

/// An HTTP server running in this process until dropped.
pub struct HttpServer {
    pub url: String,
    shutdown: CancellationToken,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Starts the server on a free loopback port.
pub async fn http_server(routing: Routing) -> HttpServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    tokio::spawn(serve_http(
        AskUserServer::new(routing),
        listener,
        shutdown.clone(),
    ));
    HttpServer { url, shutdown }
}

/// Runs `tests/<script>` with the venv's Python and returns its JSON output; panics with
/// its stderr when it fails.
pub async fn run_python(script: &str, args: &[String]) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    run_client(python(), &path, args).await
}

/// Runs the client script `script` with `interpreter` and `args`; returns its JSON output,
/// panics with its stdout and stderr when it fails.
pub async fn run_client(interpreter: impl AsRef<OsStr>, script: &Path, args: &[String]) -> Value {
    let name = script.file_name().unwrap().to_string_lossy();
    let output = tokio::process::Command::new(interpreter)
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{name}: not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))
}

/// A client's arguments: `first` (its mode or SDK flag), `extra`, then how to reach `target`
/// (for stdio: the server binary, with a memory store, and the target's flags).
pub fn client_args(first: [&str; 2], extra: &[&str], target: &Target) -> Vec<String> {
    let mut args: Vec<String> = first.iter().chain(extra).map(|s| s.to_string()).collect();
    match target {
        Target::Http(url) => args.extend(["--url".to_owned(), url.clone()]),
        Target::Stdio(flags) => {
            args.push("--command".into());
            args.push(server_bin());
            // Each server keeps its asks in memory: tests never share the user's store.
            args.extend(["--store".to_owned(), "memory".to_owned()]);
            args.extend(flags.iter().cloned());
        }
    }
    args
}

/// One client session: `mcp_client.py` against `target` in `mode`.
pub async fn client(target: &Target, mode: &str, extra: &[&str]) -> Value {
    let args = client_args(["--mode", mode], extra, target);
    run_python("mcp_client.py", &args).await
}

/// The model-facing text of a `tools/call` result (its one text block).
pub fn text(result: &Value) -> &str {
    let content = result["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result}");
    content[0]["text"].as_str().unwrap()
}
