//! Each host's headless command line, config files and environment, and how each one wraps a
//! tool result for its model.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::{Host, Mode, Scenario};

/// The prompt of every run (the fake model ignores it).
pub(crate) const PROMPT: &str = "Ask me what you need to know.";

/// `ask-user mcp` as the hosts start it: through `sh` so its stderr lands in `server.log`
/// (hosts keep an MCP server's stderr to themselves).
pub(crate) struct ServerCommand {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
}

impl ServerCommand {
    pub(crate) fn new(ask_user: &Path, dir: &Path, scenario: &Scenario) -> Self {
        let log = dir.join("server.log");
        let mut env = vec![
            ("HOME".to_owned(), dir.join("home").display().to_string()),
            (
                "XDG_STATE_HOME".to_owned(),
                dir.join("state").display().to_string(),
            ),
        ];
        env.extend(scenario.server_env.iter().cloned());
        // The environment is set in the script too: interactive Claude Code does not pass a
        // server entry's `env` on (the server would use the real HOME's state directory).
        let assignments: Vec<String> = env
            .iter()
            .map(|(k, v)| shell_quote(&format!("{k}={v}")))
            .collect();
        let mut args = vec![
            "-c".to_owned(),
            format!(
                "exec /usr/bin/env {} \"$0\" \"$@\" 2>>{}",
                assignments.join(" "),
                shell_quote(&log.display().to_string())
            ),
            ask_user.display().to_string(),
            "mcp".to_owned(),
        ];
        args.extend(scenario.server_args.iter().cloned());
        if !scenario.server_args.iter().any(|a| a == "--store") {
            let store = dir.join("store.sqlite3");
            args.extend(["--store".to_owned(), format!("sqlite:{}", store.display())]);
        }
        Self {
            command: "/bin/sh".to_owned(),
            args,
            env,
        }
    }

    fn env_object(&self) -> Value {
        Value::Object(
            self.env
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }
}

/// Claude Code's dummy API key (long enough for its "approved keys" list, which holds the
/// last 20 characters).
const CLAUDE_KEY: &str = "sk-ant-api03-fake-key-for-the-host-tests-0000";

/// Writes `host`'s config under `dir` and sets its arguments and environment on `command`
/// for `mode`.
pub(crate) fn configure(
    host: Host,
    mode: Mode,
    command: &mut Command,
    dir: &Path,
    port: u16,
    server: &ServerCommand,
) {
    let home = dir.join("home");
    for sub in ["home", "work", "state"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    command
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home);
    match mode {
        Mode::Headless => command.env("TERM", "dumb").env("NO_COLOR", "1"),
        Mode::Interactive => command.env("TERM", "xterm-256color").env("LANG", "C.UTF-8"),
    };
    match host {
        Host::ClaudeCode => claude(command, mode, dir, port, server),
        Host::Codex => codex(command, mode, dir, port, server),
        Host::Gemini => gemini(command, mode, &home, port, server),
    }
}

fn claude(command: &mut Command, mode: Mode, dir: &Path, port: u16, server: &ServerCommand) {
    let config: PathBuf = dir.join("mcp.json");
    let servers = json!({"mcpServers": {"ask-user": {
        "type": "stdio",
        "command": server.command,
        "args": server.args,
        "env": server.env_object(),
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();
    match mode {
        Mode::Headless => {
            command.args(["-p", PROMPT, "--output-format", "text"]);
        }
        Mode::Interactive => {
            // Past the first-run screens: onboarding done, the key approved, the folder trusted.
            let work = dir.join("work");
            let tail = &CLAUDE_KEY[CLAUDE_KEY.len() - 20..];
            let state = json!({
                "hasCompletedOnboarding": true,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [tail], "rejected": []},
                "projects": {work.display().to_string(): {
                    "hasTrustDialogAccepted": true,
                    "hasCompletedProjectOnboarding": true,
                }},
            });
            std::fs::write(dir.join("home/.claude.json"), state.to_string()).unwrap();
            // The prompt is typed once the MCP server is connected ([`crate::Session`]):
            // the first turn of a prompt given here goes out before MCP tools are listed.
        }
    }
    command
        .arg("--strict-mcp-config")
        .arg("--mcp-config")
        .arg(&config)
        .args(["--allowedTools", "mcp__ask-user__ask_user_question"])
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", CLAUDE_KEY)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        // MCP tools straight in the tool list, not behind the ToolSearch tool.
        .env("ENABLE_TOOL_SEARCH", "false");
}

/// A word for `sh`, in single quotes.
pub(crate) fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn toml_string(text: &str) -> String {
    // A TOML basic string: JSON's escapes are valid TOML escapes for these characters.
    serde_json::to_string(text).unwrap()
}

fn codex(command: &mut Command, mode: Mode, dir: &Path, port: u16, server: &ServerCommand) {
    let codex_home = dir.join("codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let args: Vec<String> = server.args.iter().map(|a| toml_string(a)).collect();
    let env: Vec<String> = server
        .env
        .iter()
        .map(|(k, v)| format!("{} = {}", toml_string(k), toml_string(v)))
        .collect();
    let config = format!(
        r#"model = "fake-model"
model_provider = "fake"
approval_policy = {approval}
sandbox_mode = "read-only"
check_for_update_on_startup = false
# Keys typed by tmux arrive at once, so the TUI takes them for a paste and an Enter
# soon after for a newline in it: the prompt was never sent (1 CI run; 4 of 4 with Enter
# at once). Off, each key is a key.
disable_paste_burst = true

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"

[mcp_servers.ask-user]
command = {command}
args = [{args}]
env = {{ {env} }}
default_tools_approval_mode = "approve"

[projects.{work}]
trust_level = "trusted"
"#,
        // `never` also declines every form at once, in the TUI too: the TUI asks.
        approval = match mode {
            Mode::Headless => "\"never\"",
            Mode::Interactive => "\"on-request\"",
        },
        command = toml_string(&server.command),
        args = args.join(", "),
        env = env.join(", "),
        work = toml_string(&dir.join("work").display().to_string()),
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    match mode {
        Mode::Headless => command.args(["exec", "--skip-git-repo-check", PROMPT]),
        // The prompt is typed once the TUI is up ([`crate::Session`]). `--no-daemon`: by
        // default the TUI runs its agent in a shared background server, which it first
        // installs by copying 424 MB into CODEX_HOME, then starts detached from the pane,
        // with sockets left in /tmp/codex-daemon-<uid>; until it is up the TUI says "Waiting
        // for startup" and sends nothing (2 tests of one CI run waited there 20 s, the disk
        // busy). Embedded, the TUI is one process in the pane and writes only to the test's
        // directory.
        Mode::Interactive => command.arg("--no-daemon"),
    };
    command
        .env("CODEX_HOME", &codex_home)
        .env("FAKE_MODEL_API_KEY", "fake-key");
}

fn gemini(command: &mut Command, mode: Mode, home: &Path, port: u16, server: &ServerCommand) {
    let settings = home.join(".gemini");
    std::fs::create_dir_all(&settings).unwrap();
    let config = json!({
        "mcpServers": {"ask-user": {
            "command": server.command,
            "args": server.args,
            "env": server.env_object(),
            "trust": true,
        }},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    });
    std::fs::write(settings.join("settings.json"), config.to_string()).unwrap();
    match mode {
        Mode::Headless => command.args(["-p", PROMPT]),
        Mode::Interactive => command.args(["--prompt-interactive", PROMPT]),
    };
    command
        .args(["--model", "gemini-2.5-flash"])
        .env("GEMINI_API_KEY", "fake-key")
        .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
}

/// The text a host's model reads in one recorded tool result, by host format: Claude Code's
/// `tool_result.content` (a string, or text blocks joined), Codex's `function_call_output`
/// parts (joined with a newline; the first is Codex's own `Wall time: … seconds\nOutput:`),
/// Gemini's `functionResponse.response` (its `output` text, or for an `isError` result its
/// `error` text, which quotes the call and the whole MCP result; else the JSON).
pub fn tool_text(host: Host, result: &Value) -> String {
    let parts = |value: &Value| -> String {
        match value {
            Value::String(text) => text.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        }
    };
    match host {
        Host::ClaudeCode => parts(&result["content"]),
        Host::Codex => parts(&result["output"]),
        Host::Gemini => {
            let response = &result["functionResponse"]["response"];
            match (response.get("output"), response.get("error")) {
                (Some(Value::String(text)), _) | (_, Some(Value::String(text))) => text.clone(),
                _ => response.to_string(),
            }
        }
    }
}
