//! Shared helpers: demo requests, and the runner for the Chromium scenarios.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use ask_user_core::{AskUserQuestionTool, ExecutionContext, Outcome};
use ask_user_web::{WebAnswerer, WebConfig};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// One single-select question with a recommended option and descriptions.
pub const DB: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)","description":"Runs in production already."},{"label":"SQLite","description":"One file."}]}]}"#;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A web answerer on a free loopback port.
pub async fn web() -> WebAnswerer {
    WebAnswerer::start(WebConfig::default()).await.unwrap()
}

/// Starts one tool call through `web` in a task.
pub fn ask(web: &WebAnswerer, arguments: &str) -> JoinHandle<Outcome> {
    ask_with(web, arguments, ExecutionContext::default())
}

pub fn ask_with(web: &WebAnswerer, arguments: &str, ctx: ExecutionContext) -> JoinHandle<Outcome> {
    let tool = AskUserQuestionTool::new(Arc::new(web.clone()));
    let arguments = arguments.to_owned();
    tokio::spawn(async move { tool.call(arguments, ctx).await })
}

/// Waits until `web` has `n` batches pending (a condition, polled; no fixed sleep). A generous
/// deadline only turns a hang into a failure.
pub async fn until_pending(web: &WebAnswerer, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while web.state().pending() != n {
        assert!(
            std::time::Instant::now() < deadline,
            "gave up waiting for {n} pending batches ({} pending)",
            web.state().pending()
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// A running browser scenario (`node tests/browser/scenarios.cjs <name> <url> …`).
pub struct Scenario {
    name: String,
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Scenario {
    pub fn start(name: &str, url: &str, extra: &[&str]) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser/scenarios.cjs");
        let (playwright, axe) = ask_user_test_support::browser_tools();
        let mut child = Command::new("node")
            .arg(script)
            .arg(name)
            .arg(url)
            .args(extra)
            .env("PLAYWRIGHT_CORE", playwright)
            .env("AXE_CORE", axe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (scripts/setup installs it)");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            name: name.to_owned(),
            child,
            stdin,
            stdout,
        }
    }

    async fn fail(&mut self, what: &str) -> ! {
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut stderr).await;
        }
        let status = self.child.wait().await;
        panic!(
            "browser scenario {}: {what}\nstatus: {status:?}\nstderr:\n{stderr}",
            self.name
        );
    }

    async fn next_line(&mut self) -> String {
        match self.stdout.next_line().await {
            Ok(Some(line)) => line,
            _ => self.fail("ended early").await,
        }
    }

    /// Waits for `STEP <name>`.
    pub async fn step(&mut self, step: &str) {
        let line = self.next_line().await;
        if line != format!("STEP {step}") {
            self.fail(&format!("expected STEP {step}, got {line}"))
                .await;
        }
    }

    /// Lets a scenario waiting in `waitGo()` continue.
    #[allow(dead_code)]
    pub async fn go(&mut self) {
        self.stdin.write_all(b"GO\n").await.unwrap();
    }

    /// Waits for `RESULT <json>` and a successful exit.
    pub async fn result(mut self) -> serde_json::Value {
        let line = self.next_line().await;
        let Some(json) = line.strip_prefix("RESULT ") else {
            self.fail(&format!("expected RESULT, got {line}")).await
        };
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        let status = self.child.wait().await.unwrap();
        if !status.success() {
            self.fail("exited with failure").await;
        }
        value
    }
}
