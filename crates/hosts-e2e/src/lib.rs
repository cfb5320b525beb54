//! # ask-user-hosts-e2e
//!
//! Real agent hosts ([`Host`]: Claude Code, Codex CLI, Gemini CLI, the npm packages pinned in
//! `tools/hosts`) run headless with `ask-user mcp` as their MCP server, while a **fake model
//! API** (`tools/hosts/fake-model-api.mjs`) scripts the model: it calls `ask_user_question`
//! with the [`Scenario`]'s arguments and records the exact tool result the host hands back.
//!
//! Each [`run`] happens in a network namespace of its own with only `lo` ([`Netns`]), in a
//! fresh temporary HOME, with a cleared environment, dummy keys and each host's telemetry and
//! update switches off. Nothing is left behind: the namespace is deleted and every process
//! killed when the run ends (also on panic).
//!
//! ```no_run
//! use ask_user_hosts_e2e::{Host, Scenario, run};
//! let scenario = Scenario::new(r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#)
//!     .server_args(["--via", "none"]);
//! let out = run(Host::ClaudeCode, "/path/to/ask-user", &scenario);
//! println!("{}", out.texts()[0]);
//! ```
#![deny(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hosts;
mod tui;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use hosts::tool_text;
pub use tui::{RESULT_DEADLINE, Session, claude_mcp_connected, interactive};

/// How long one host run may take before the test fails (generous: a headless run takes
/// about a second here; CI machines are slow).
pub const DEADLINE: Duration = Duration::from_secs(120);

/// An agent host, as installed from npm in `tools/hosts/node_modules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// `@anthropic-ai/claude-code` (`claude -p`), against the fake Anthropic Messages API.
    ClaudeCode,
    /// `@openai/codex` (`codex exec`), against the fake OpenAI Responses API.
    Codex,
    /// `@google/gemini-cli` (`gemini -p`), against the fake Gemini API.
    Gemini,
}

impl Host {
    /// Every host.
    pub const ALL: [Host; 3] = [Host::ClaudeCode, Host::Codex, Host::Gemini];

    /// The host's command name in `node_modules/.bin`.
    pub fn bin_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }
    }
}

/// How the host runs: headless (`claude -p`, `codex exec`, `gemini -p`), or its interactive
/// terminal UI in a tmux pane ([`interactive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One prompt, no terminal, the final answer on stdout.
    Headless,
    /// The host's own terminal UI, started with the prompt, in a real terminal.
    Interactive,
}

/// What one run does: the arguments the fake model calls the tool with, the `ask-user mcp`
/// flags, and how many times the fake calls again after a "still open" result.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The tool call's arguments (a JSON object, as text).
    pub arguments: String,
    /// The flags after `ask-user mcp` (the harness adds `--store` when none is given).
    pub server_args: Vec<String>,
    /// Calls the fake model makes again when a result says the question is still open.
    pub retries: u32,
    /// Extra environment for the `ask-user` server (e.g. `RUST_LOG`).
    pub server_env: Vec<(String, String)>,
}

impl Scenario {
    /// A scenario calling the tool once with `arguments`, the server with no flags.
    pub fn new(arguments: &str) -> Self {
        Self {
            arguments: arguments.to_owned(),
            server_args: Vec::new(),
            retries: 0,
            server_env: vec![("RUST_LOG".into(), "info".into())],
        }
    }

    /// The same with these `ask-user mcp` flags.
    pub fn server_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.server_args = args.into_iter().map(Into::into).collect();
        self
    }

    /// The same, calling the tool again up to `retries` times while it says "still open".
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }
}

/// What a run left: the tool results the fake model received, in order, and the logs.
#[derive(Debug)]
pub struct Run {
    /// The host that ran.
    pub host: Host,
    /// One `{"api","result"}` object per tool result the fake model received.
    pub records: Vec<Value>,
    /// The host's stdout (its final answer in headless mode).
    pub stdout: String,
    /// The host's stderr.
    pub stderr: String,
    /// The `ask-user mcp` server's stderr (its log).
    pub server_log: String,
    /// The run's temporary directory (HOME, configs, the store), kept while `Run` lives.
    pub dir: tempfile::TempDir,
}

impl Run {
    /// The text the model read from each tool result ([`tool_text`]).
    pub fn texts(&self) -> Vec<String> {
        self.records
            .iter()
            .map(|r| tool_text(self.host, &r["result"]))
            .collect()
    }

    /// Everything the run printed, for a failing assertion's message.
    pub fn diagnostics(&self) -> String {
        format!(
            "records: {:?}\n--- host stdout\n{}\n--- host stderr\n{}\n--- server log\n{}",
            self.records, self.stdout, self.stderr, self.server_log
        )
    }
}

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// `tools/hosts/node_modules/.bin/<host>`; panics, saying to run `scripts/setup`, when the
/// hosts are not installed.
pub fn host_bin(host: Host) -> PathBuf {
    let bin = workspace_root()
        .join("tools/hosts/node_modules/.bin")
        .join(host.bin_name());
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup (npm ci in tools/hosts)",
        bin.display()
    );
    bin
}

/// A network namespace with only `lo` (up), deleted on drop.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates one; panics with the reason when it cannot (the tests need root and `ip`).
    pub fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "askuser-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        ip(&["netns", "add", &name]);
        let ns = Self { name };
        ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
        ns
    }

    /// A command running `program` inside the namespace, with a cleared environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = ask_user_test_support::tool("ip");
        command
            .env_clear()
            .args(["netns", "exec", &self.name])
            .arg(program);
        command
    }
}

impl Default for Netns {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Whatever still runs inside (a host, its MCP server, the fake) ends with it.
        if let Ok(out) = ask_user_test_support::tool("ip")
            .args(["netns", "pids", &self.name])
            .output()
        {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Ok(pid) = pid.parse() {
                    ask_user_test_support::signal(pid, ask_user_test_support::Signal::KILL);
                }
            }
        }
        let _ = ask_user_test_support::tool("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

fn ip(args: &[&str]) {
    let out = ask_user_test_support::tool("ip")
        .args(args)
        .output()
        .expect("cannot run `ip` (iproute2): the host tests need it");
    assert!(
        out.status.success(),
        "`ip {}` failed (the host tests need root for a network namespace): {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A child process killed (and reaped) on drop.
#[derive(Debug)]
pub(crate) struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The fake model API, listening inside `ns`; returns the process and its port.
pub(crate) fn fake_model(ns: &Netns, dir: &Path, scenario: &Scenario) -> (Killed, u16) {
    let mut command = ns.command("node");
    command
        .arg(workspace_root().join("tools/hosts/fake-model-api.mjs"))
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("FAKE_TOOL_ARGS", &scenario.arguments)
        .env("FAKE_RECORD", dir.join("record.jsonl"))
        .env("FAKE_LOG", dir.join("fake.log"))
        .env("FAKE_RETRIES", scenario.retries.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = Killed(
        command
            .spawn()
            .expect("cannot start node for the fake model API"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("listening ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the fake model API did not start: {line:?}"));
    (child, port)
}

/// Runs `host` headless once for `scenario`, with `ask_user` (the binary's path) as its MCP
/// server named `ask-user`, and returns what the fake model received. Panics when the host
/// does not finish within [`DEADLINE`].
pub fn run(host: Host, ask_user: impl AsRef<Path>, scenario: &Scenario) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let ns = Netns::new();
    let (_fake, port) = fake_model(&ns, dir.path(), scenario);
    let server = hosts::ServerCommand::new(ask_user.as_ref(), dir.path(), scenario);
    let mut command = ns.command(host_bin(host));
    hosts::configure(
        host,
        Mode::Headless,
        &mut command,
        dir.path(),
        port,
        &server,
    );
    command
        .current_dir(dir.path().join("work"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.path().join("host.out")).unwrap())
        .stderr(std::fs::File::create(dir.path().join("host.err")).unwrap());
    let mut child = Killed(command.spawn().expect("cannot start the host"));
    let start = Instant::now();
    loop {
        if child.0.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{host:?} did not finish within {DEADLINE:?}: {}",
            read(&dir.path().join("host.err"))
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(child);
    let records = records(dir.path());
    Run {
        host,
        records,
        stdout: read(&dir.path().join("host.out")),
        stderr: read(&dir.path().join("host.err")),
        server_log: read(&dir.path().join("server.log")),
        dir,
    }
}

/// The `{"api","result"}` lines the fake model recorded under `dir` so far.
pub(crate) fn records(dir: &Path) -> Vec<Value> {
    read(&dir.join("record.jsonl"))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
