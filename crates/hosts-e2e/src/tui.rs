//! A host's interactive terminal UI in a real terminal (a tmux pane of
//! [`ask_user_test_support::TmuxPane`]), inside its own network namespace, against the fake
//! model API: the test reads the host's screen and types into it like a person.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ask_user_test_support::TmuxPane;
use serde_json::Value;

use crate::{Host, Killed, Mode, Netns, Scenario, fake_model, hosts, read, records};

/// How long a tool result may take to reach the fake model once the person acted.
pub const RESULT_DEADLINE: Duration = Duration::from_secs(30);

/// The pane's size: wide and tall enough for a host's whole form.
const WIDTH: u16 = 120;
const HEIGHT: u16 = 50;

/// One host running interactively; everything (the pane, the host, its MCP server, the fake
/// model API, the namespace) ends when it drops.
#[derive(Debug)]
pub struct Session {
    /// The host that runs.
    pub host: Host,
    // Field order is drop order: the pane (and the host in it) first, the namespace last.
    pane: TmuxPane,
    _fake: Killed,
    _ns: Netns,
}

/// Starts `host`'s interactive UI with the prompt, `ask_user` (the binary's path) as its MCP
/// server named `ask-user`, for `scenario`; the fake model calls the tool on its first turn.
/// Claude Code and the Codex TUI; Gemini CLI 0.61's interactive mode (`--prompt-interactive`)
/// starts, but its requests to the model here carry no MCP tool even once `/mcp list` says the
/// server is ready, so no test uses it.
pub fn interactive(host: Host, ask_user: impl AsRef<Path>, scenario: &Scenario) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let ns = Netns::new();
    let (fake, port) = fake_model(&ns, dir.path(), scenario);
    let server = hosts::ServerCommand::new(ask_user.as_ref(), dir.path(), scenario);
    let mut command = ns.command(crate::host_bin(host));
    hosts::configure(
        host,
        Mode::Interactive,
        &mut command,
        dir.path(),
        port,
        &server,
    );
    let script = script(&command, dir.path());
    let pane = TmuxPane::start(dir, &script, WIDTH, HEIGHT, "host.err");
    let session = Session {
        host,
        pane,
        _fake: fake,
        _ns: ns,
    };
    match host {
        Host::ClaudeCode => session.prompt_when_connected(),
        Host::Codex => session.prompt_when_idle(),
        Host::Gemini => {}
    }
    session
}

/// `command` (its program, arguments and environment, on a cleared one) as a shell script
/// run in `dir/work`, its stderr to `dir/host.err`.
fn script(command: &Command, dir: &Path) -> String {
    let mut words = vec!["exec".to_owned(), "env".to_owned(), "-i".to_owned()];
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            let mut pair = key.to_os_string();
            pair.push("=");
            pair.push(value);
            words.push(quote(&pair));
        }
    }
    words.push(quote(command.get_program()));
    words.extend(command.get_args().map(quote));
    format!(
        "cd {} || exit 1\n{} 2>{}\n",
        quote(dir.join("work").as_os_str()),
        words.join(" "),
        quote(dir.join("host.err").as_os_str())
    )
}

/// A word for `sh`, in single quotes.
fn quote(word: &OsStr) -> String {
    hosts::shell_quote(&word.to_string_lossy())
}

/// Claude Code, its prompt showing: opens `/mcp`, waits until it lists ask-user with its one
/// tool (connected), and closes it. A model turn that starts sooner is offered no MCP tool.
pub fn claude_mcp_connected(pane: &TmuxPane) {
    pane.type_text("/mcp");
    pane.wait_text("❯ /mcp");
    pane.keys(&["Enter"]);
    pane.wait_for("ask-user connected with its tool in /mcp", |screen| {
        screen
            .lines()
            .any(|line| line.contains("ask-user") && line.contains("1 tool"))
    });
    pane.keys(&["Escape"]);
    pane.wait_for("/mcp closed", |screen| !screen.contains("MCP servers"));
}

impl Session {
    /// Claude Code: waits until `/mcp` lists the server's tool, then types the prompt (a
    /// prompt on the command line goes to the model before MCP tools are listed).
    fn prompt_when_connected(&self) {
        let pane = &self.pane;
        pane.wait_text("auto mode on");
        claude_mcp_connected(pane);
        pane.type_text(hosts::PROMPT);
        pane.wait_for("the prompt typed", |screen| {
            screen
                .lines()
                .any(|line| line.starts_with('❯') && line.contains(hosts::PROMPT))
        });
        pane.keys(&["Enter"]);
    }

    /// Codex: waits for its composer, then types the prompt (keys typed while the TUI still
    /// starts are sometimes lost).
    fn prompt_when_idle(&self) {
        let pane = &self.pane;
        pane.wait_text("Ask Codex to do anything");
        pane.type_text(hosts::PROMPT);
        pane.wait_for("the prompt typed", |screen| {
            screen
                .lines()
                .any(|line| line.starts_with('›') && line.contains(hosts::PROMPT))
        });
        pane.keys(&["Enter"]);
    }

    /// The terminal the host draws on.
    pub fn pane(&self) -> &TmuxPane {
        &self.pane
    }

    /// The tool results the fake model received so far.
    pub fn records(&self) -> Vec<Value> {
        records(self.pane.dir())
    }

    /// Waits (at most [`RESULT_DEADLINE`]) until the fake model has received `n` tool results and
    /// returns them.
    pub fn wait_records(&self, n: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let records = self.records();
            if records.len() >= n {
                return records;
            }
            assert!(
                start.elapsed() < RESULT_DEADLINE,
                "waited {RESULT_DEADLINE:?} for {n} tool result(s), got {records:?}\n{}",
                self.diagnostics()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The text the model read from each of the first `n` tool results, once they arrived.
    pub fn wait_texts(&self, n: usize) -> Vec<String> {
        self.wait_records(n)
            .iter()
            .map(|r| crate::tool_text(self.host, &r["result"]))
            .collect()
    }

    /// The `ask-user mcp` server's stderr (its log) so far.
    pub fn server_log(&self) -> String {
        read(&self.pane.dir().join("server.log"))
    }

    /// The screen, the host's stderr and the server's log, for a failing assertion's message.
    pub fn diagnostics(&self) -> String {
        format!(
            "--- screen\n{}\n--- host stderr\n{}\n--- server log\n{}",
            self.pane.screen(),
            read(&self.pane.dir().join("host.err")),
            self.server_log()
        )
    }
}
