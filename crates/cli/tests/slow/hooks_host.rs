//! The real hosts running `ask-user hook` (tests/slow/hooks.rs): Claude Code (`claude -p`) and Codex
//! (`codex exec`), pinned in tools/hosts, each run in a network namespace with only loopback
//! against the FAKE model API (tools/hosts/fake-model-api.mjs, a script), which calls the host's
//! own tool (`$FAKE_TOOL`) and records the exact tool result the host hands its model.
//!
//! A [`Lab`] is one test's temporary HOME, state directory (the default store and the away
//! switch live there, as for a user), work directory and Codex home. Every process gets a
//! cleared environment; every host run is its own process group, killed when dropped.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use ask_user_hosts_e2e::{DEADLINE, Host, Netns, host_bin, tool_text, workspace_root};
use ask_user_test_support::TmuxPane;
use serde_json::{Value, json};

/// The ask-user binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_ask-user");

/// The prompt of every run (the fake model ignores it).
const PROMPT: &str = "Do what you need to do.";

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// One test's HOME, state directory, work directory and Codex home.
pub(crate) struct Lab {
    dir: tempfile::TempDir,
    runs: std::cell::Cell<u32>,
}

impl Lab {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "state", "work", "codex"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Self {
            dir,
            runs: std::cell::Cell::new(0),
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` to the lab file `name` and returns its path.
    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `ask-user ARGS` as the user of this lab (cleared environment); its stdout, or a panic
    /// with its stderr when it fails.
    pub(crate) fn ask_user(&self, args: &[&str]) -> String {
        let out = self
            .user_env(&mut ask_user_test_support::tool(BIN))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "ask-user {args:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    }

    fn user_env<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        command
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", self.path("home"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("CODEX_HOME", self.path("codex"))
            .current_dir(self.path("work"))
    }

    /// The shell command a host runs as the hook: `ask-user hook HOST FLAGS`, its log in
    /// `hook.log`.
    pub(crate) fn hook(&self, host: &str, flags: &str) -> String {
        format!(
            "'{BIN}' hook {host} {flags} 2>>'{}'",
            self.path("hook.log").display()
        )
    }

    /// `ask-user hook claude-code --always --answers FILE`, answering with `answers`.
    pub(crate) fn scripted_hook(&self, answers: Value) -> String {
        let file = self.write("answers.json", &answers.to_string());
        self.hook(
            "claude-code",
            &format!("--always --answers '{}'", file.display()),
        )
    }

    /// A Claude Code settings file whose hooks for `event` (matching `matcher`) run `command`
    /// with a `timeout` of `timeout` seconds.
    pub(crate) fn settings(
        &self,
        event: &str,
        matcher: &str,
        command: &str,
        timeout: u64,
    ) -> PathBuf {
        let hooks = json!({"hooks": {event: [{"matcher": matcher, "hooks": [
            {"type": "command", "command": command, "timeout": timeout},
        ]}]}});
        self.write("settings.json", &hooks.to_string())
    }

    /// An MCP config with `ask-user mcp --via none` (the permission prompt tool of `-p`
    /// runs; the hooks answer first, so it is never called) and, when `form` is given, the FAKE
    /// form server (tools/hosts/form-server.mjs) named `deployer`, asking for that schema.
    pub(crate) fn mcp_config(&self, form: Option<&Value>) -> PathBuf {
        let store = format!("sqlite:{}", self.path("mcp.sqlite3").display());
        let mut servers = json!({"ask-user": {
            "type": "stdio", "command": BIN, "args": ["mcp", "--via", "none", "--store", store],
            "env": {"HOME": self.path("home"), "XDG_STATE_HOME": self.path("state")},
        }});
        if let Some(schema) = form {
            servers["deployer"] = json!({
                "type": "stdio", "command": "node",
                "args": [workspace_root().join("tools/hosts/form-server.mjs")],
                "env": {"FORM_SCHEMA": schema.to_string(), "PATH": PATH},
            });
        }
        self.write("mcp.json", &json!({ "mcpServers": servers }).to_string())
    }

    /// `ask-user inbox` in a tmux pane, as this lab's user (the default store).
    pub(crate) fn inbox(&self) -> TmuxPane {
        let pane = tempfile::tempdir().unwrap();
        let script = format!(
            "cd '{work}' && exec env -i PATH='{PATH}' TERM=\"$TERM\" HOME='{home}' XDG_STATE_HOME='{state}' '{BIN}' inbox 2> inbox.err\n",
            work = self.path("work").display(),
            home = self.path("home").display(),
            state = self.path("state").display(),
        );
        TmuxPane::start(pane, &script, 110, 32, "inbox.err")
    }

    /// The hook's log so far.
    pub(crate) fn hook_log(&self) -> String {
        std::fs::read_to_string(self.path("hook.log")).unwrap_or_default()
    }

    fn next_run(&self) -> PathBuf {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let dir = self.path(&format!("run-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

/// `ask-user hub serve` on `store`, inside `ns` (the hosts' loopback-only namespace), as the
/// lab's user; the hub and the URL it serves on.
pub(crate) struct LabHub {
    _child: Group,
    pub(crate) url: String,
    store: String,
}

impl Lab {
    /// Starts a hub on the lab's `hub.sqlite3` in `ns`, with an agent token `name` written to
    /// `hub.token` (mode 0600; hooks read it with `--hub-token-file`, never argv).
    pub(crate) fn hub(&self, ns: &Netns, name: &str) -> LabHub {
        let store = format!("sqlite:{}", self.path("hub.sqlite3").display());
        let token = self.ask_user(&["hub", "token", "add", name, "--store", &store]);
        let file = self.write("hub.token", token.trim());
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let mut command = ns.command(BIN);
        self.user_env(&mut command)
            .args(["hub", "serve", "--listen", "127.0.0.1:0", "--store", &store])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = Group(command.spawn().unwrap());
        let mut reader = BufReader::new(child.0.stderr.take().unwrap());
        let mut line = String::new();
        let url = loop {
            line.clear();
            assert!(
                reader.read_line(&mut line).unwrap() > 0,
                "the hub ended before serving"
            );
            if let Some(i) = line.find("serving on ") {
                break line[i + 11..].split(' ').next().unwrap().trim().to_owned();
            }
        };
        // The rest of its log is drained so the hub never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        LabHub {
            _child: child,
            url,
            store,
        }
    }
}

impl LabHub {
    /// The human on the hub's inbox, over the page's own endpoints (with `curl` inside `ns`,
    /// the only place the hub can be reached): signs in with a fresh login link, waits for one
    /// open ask, and answers it with `answers`; the ask as the inbox showed it and the reply.
    pub(crate) fn human_answers(&self, lab: &Lab, ns: &Netns, answers: Value) -> (Value, Value) {
        let link = lab.ask_user(&[
            "hub",
            "login-link",
            "--store",
            &self.store,
            "--url",
            &self.url,
        ]);
        let curl = |args: &[&str]| {
            let out = ns
                .command("curl")
                .env("PATH", PATH)
                .args(["-sS", "--max-time", "30"])
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "curl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        let origin = format!("Origin: {}", self.url);
        let signed_in = curl(&["-i", "-X", "POST", "-H", &origin, link.trim()]);
        let cookie = signed_in
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .starts_with("set-cookie:")
                    .then(|| l[11..].trim())
            })
            .and_then(|c| c.split(';').next())
            .unwrap_or_else(|| panic!("no session cookie: {signed_in}"))
            .to_owned();
        let cookie = format!("Cookie: {cookie}");
        let start = Instant::now();
        let ask = loop {
            let state: Value = serde_json::from_str(&curl(&[
                "-H",
                &cookie,
                &format!("{}/inbox/state", self.url),
            ]))
            .unwrap();
            if let Some(ask) = state["open"].as_array().and_then(|o| o.first()) {
                break ask.clone();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "no ask reached the hub: {state}"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        let reply = curl(&[
            "-X",
            "POST",
            "-H",
            &cookie,
            "-H",
            &origin,
            "-H",
            "Content-Type: application/json",
            "--data",
            &json!({ "answers": answers }).to_string(),
            &format!("{}/inbox/asks/{}/answer", self.url, ask["id"]),
        ]);
        (ask, serde_json::from_str(&reply).unwrap())
    }
}

/// What the fake model does: call `tool` with `arguments`; when a result holds `still_open`,
/// call it again, up to `retries` times.
pub(crate) struct Turn {
    pub(crate) tool: &'static str,
    pub(crate) arguments: Value,
    pub(crate) still_open: Option<&'static str>,
    pub(crate) retries: u32,
}

impl Turn {
    pub(crate) fn call(tool: &'static str, arguments: Value) -> Self {
        Self {
            tool,
            arguments,
            still_open: None,
            retries: 0,
        }
    }
}

/// A process group killed (SIGKILL) and reaped on drop: the host and every hook it started.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        ask_user_test_support::signal_group(self.0.id(), ask_user_test_support::Signal::KILL);
        let _ = self.0.wait();
    }
}

/// A host run under way (see [`Running::finish`]).
pub(crate) struct Running {
    host: Host,
    dir: PathBuf,
    child: Group,
    _fake: Group,
    _ns: Netns,
}

/// What a host run left: the tool results the fake model received, in order, and the logs.
#[derive(Debug)]
pub(crate) struct HostRun {
    pub(crate) host: Host,
    pub(crate) records: Vec<Value>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl HostRun {
    /// The text the model read from each tool result.
    pub(crate) fn texts(&self) -> Vec<String> {
        self.records
            .iter()
            .map(|r| tool_text(self.host, &r["result"]))
            .collect()
    }
}

impl Running {
    /// The network namespace the host runs in.
    pub(crate) fn ns(&self) -> &Netns {
        &self._ns
    }

    /// Waits until the fake model has received `n` tool results (the host is still running).
    pub(crate) fn wait_records(&self, n: usize) {
        let start = Instant::now();
        while read(&self.dir.join("record.jsonl")).lines().count() < n {
            assert!(
                start.elapsed() < DEADLINE,
                "{:?} sent no {n} tool results within {DEADLINE:?}: {}",
                self.host,
                read(&self.dir.join("host.err"))
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Waits for the host to end (at most [`DEADLINE`]) and reads what the fake recorded.
    pub(crate) fn finish(mut self) -> HostRun {
        let start = Instant::now();
        while self.child.0.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < DEADLINE,
                "{:?} did not finish within {DEADLINE:?}: {}",
                self.host,
                read(&self.dir.join("host.err"))
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let records = read(&self.dir.join("record.jsonl"))
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        HostRun {
            host: self.host,
            records,
            stdout: read(&self.dir.join("host.out")),
            stderr: read(&self.dir.join("host.err")),
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The fake model API inside `ns`, for `turn`; returns it and its port.
fn fake_model(ns: &Netns, dir: &Path, turn: &Turn) -> (Group, u16) {
    let mut command = ns.command("node");
    command
        .arg(workspace_root().join("tools/hosts/fake-model-api.mjs"))
        .env("PATH", PATH)
        .env("FAKE_TOOL", turn.tool)
        .env("FAKE_TOOL_ARGS", turn.arguments.to_string())
        .env("FAKE_RECORD", dir.join("record.jsonl"))
        .env("FAKE_LOG", dir.join("fake.log"))
        .env("FAKE_RETRIES", turn.retries.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0);
    if let Some(words) = turn.still_open {
        command.env("FAKE_STILL_OPEN", words);
    }
    let mut child = Group(command.spawn().unwrap());
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the fake model API did not start: {line:?}"));
    (child, port)
}

fn start_in(
    lab: &Lab,
    ns: Netns,
    host: Host,
    turn: &Turn,
    configure: impl FnOnce(&mut Command, u16),
) -> Running {
    let dir = lab.next_run();
    let (fake, port) = fake_model(&ns, &dir, turn);
    let mut command = ns.command(host_bin(host));
    lab.user_env(&mut command)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("host.out")).unwrap())
        .stderr(std::fs::File::create(dir.join("host.err")).unwrap())
        .process_group(0);
    configure(&mut command, port);
    Running {
        host,
        child: Group(command.spawn().unwrap()),
        dir,
        _fake: fake,
        _ns: ns,
    }
}

/// Starts `claude -p` with `flags` for `turn` (the user's settings are the lab's HOME).
pub(crate) fn claude(lab: &Lab, turn: &Turn, flags: &[impl AsRef<std::ffi::OsStr>]) -> Running {
    claude_in(lab, Netns::new(), turn, flags)
}

/// [`claude`] in `ns` (where a hub of the test already runs).
pub(crate) fn claude_in(
    lab: &Lab,
    ns: Netns,
    turn: &Turn,
    flags: &[impl AsRef<std::ffi::OsStr>],
) -> Running {
    start_in(lab, ns, Host::ClaudeCode, turn, |command, port| {
        command
            .args(["-p", PROMPT, "--output-format", "text"])
            .args(flags)
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "sk-ant-fake-key")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("ENABLE_TOOL_SEARCH", "false");
    })
}

/// Codex's config.toml for the fake model at `port` (the lab's `$CODEX_HOME`), keeping the
/// tables another writer (`ask-user setup codex`) added.
fn codex_config(lab: &Lab, port: u16) {
    let file = lab.path("codex/config.toml");
    let kept = read(&file)
        .split_once("[mcp_servers.ask-user]")
        .map(|(_, table)| format!("\n[mcp_servers.ask-user]{table}"))
        .unwrap_or_default();
    let config = format!(
        r#"model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

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
{kept}"#
    );
    std::fs::write(file, config).unwrap();
}

/// Starts `codex exec` for `turn` with its approvals on (`--approve-for-me`: a command asking
/// for escalation is a permission request, which the `PermissionRequest` hooks of
/// `$CODEX_HOME/hooks.json` decide first) and hook trust bypassed for this run.
pub(crate) fn codex(lab: &Lab, turn: &Turn) -> Running {
    codex_in(lab, Netns::new(), turn)
}

/// [`codex`] in `ns` (where a hub of the test already runs).
pub(crate) fn codex_in(lab: &Lab, ns: Netns, turn: &Turn) -> Running {
    start_in(lab, ns, Host::Codex, turn, |command, port| {
        codex_config(lab, port);
        command
            .args([
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-hook-trust",
                "--approve-for-me",
                PROMPT,
            ])
            .env("FAKE_MODEL_API_KEY", "fake-key");
    })
}

/// Whether a line of Claude Code's `screen` has its pointer `❯` (followed by a no-break space)
/// before `text`: its prompt, or the option its dialog points at.
pub(crate) fn pointed(screen: &str, text: &str) -> bool {
    screen.lines().any(|line| {
        line.trim_start()
            .strip_prefix('❯')
            .is_some_and(|rest| rest.trim_start_matches([' ', '\u{a0}']).starts_with(text))
    })
}

/// Claude Code interactive, in a tmux pane (a real terminal), against the fake model.
pub(crate) struct Tui {
    pub(crate) pane: TmuxPane,
    dir: PathBuf,
    _fake: Group,
    _ns: Netns,
}

impl Tui {
    /// The namespace Claude Code runs in.
    pub(crate) fn ns(&self) -> &Netns {
        &self._ns
    }

    /// The text the model read from each tool result, once there are `n` (the screen shows an
    /// answer before the host has sent it to the model).
    pub(crate) fn texts(&self, n: usize) -> Vec<String> {
        let start = Instant::now();
        while read(&self.dir.join("record.jsonl")).lines().count() < n {
            assert!(
                start.elapsed() < DEADLINE,
                "the model got no {n} tool results: {}",
                self.pane.screen()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        read(&self.dir.join("record.jsonl"))
            .lines()
            .map(|line| {
                let record: Value = serde_json::from_str(line).unwrap();
                tool_text(Host::ClaudeCode, &record["result"])
            })
            .collect()
    }
}

/// Starts `claude` (interactive) in a tmux pane for `turn`, onboarding done and the work
/// directory trusted (in the lab's `~/.claude.json`, keeping what is there), and sends `prompt`
/// once its prompt shows.
pub(crate) fn claude_tui(lab: &Lab, turn: &Turn, prompt: &str) -> Tui {
    claude_tui_in(lab, Netns::new(), turn, prompt, false)
}

/// [`claude_tui`] in the namespace `ns` (where a [`LabHub`] may listen); with `mcp_first`, the
/// prompt is typed only once `/mcp` lists ask-user's tool (a model turn that starts sooner is
/// offered no MCP tool).
pub(crate) fn claude_tui_in(
    lab: &Lab,
    ns: Netns,
    turn: &Turn,
    prompt: &str,
    mcp_first: bool,
) -> Tui {
    let dir = lab.next_run();
    let (fake, port) = fake_model(&ns, &dir, turn);
    let key = "sk-ant-fake-key-for-the-hook-tests";
    let config = lab.path("home/.claude.json");
    let mut state: Value = serde_json::from_str(&read(&config)).unwrap_or_else(|_| json!({}));
    state["hasCompletedOnboarding"] = json!(true);
    state["theme"] = json!("dark");
    state["customApiKeyResponses"] = json!({"approved": [&key[key.len() - 20..]], "rejected": []});
    let work = lab.path("work").display().to_string();
    state["projects"][&work] =
        json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true});
    std::fs::write(&config, state.to_string()).unwrap();
    // `ip netns exec NAME` as the namespace's own command line has it. `ENABLE_TOOL_SEARCH`
    // off: MCP tools straight in the tool list, not behind the ToolSearch tool the fake model
    // does not call.
    let probe = ns.command("true");
    let netns: Vec<String> = probe
        .get_args()
        .take(3)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let script = format!(
        "cd '{work}' && exec ip {netns} env -i PATH='{PATH}' TERM=xterm-256color HOME='{home}' XDG_STATE_HOME='{state}' ANTHROPIC_BASE_URL=http://127.0.0.1:{port} ANTHROPIC_API_KEY={key} DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 ENABLE_TOOL_SEARCH=false '{claude}' 2> host.err\n",
        netns = netns.join(" "),
        home = lab.path("home").display(),
        state = lab.path("state").display(),
        claude = host_bin(Host::ClaudeCode).display(),
    );
    let pane = TmuxPane::start(tempfile::tempdir().unwrap(), &script, 120, 40, "host.err");
    // Its footer once ready: the permission mode it started in (auto by default). Started in
    // the default mode, it first offers to make auto mode the default, which would take
    // permission prompts away from the hook: the person keeps manual mode, as `doctor` advises.
    const OFFER: &str = "Make auto mode your default permission mode?";
    let ready = |s: &str| s.contains("auto mode on") || s.contains("? for shortcuts");
    pane.wait_for("claude ready", |s| ready(s) || s.contains(OFFER));
    if pane.screen().contains(OFFER) {
        pane.keys(&["Down"]);
        pane.wait_for("the pointer on manual mode", |s| {
            pointed(s, "No, keep manual mode")
        });
        // Its dialog drops a key that comes the moment it redrew (hooks_human.rs).
        std::thread::sleep(std::time::Duration::from_millis(1500));
        pane.keys(&["Enter"]);
        pane.wait_for("claude ready", ready);
    }
    if mcp_first {
        ask_user_hosts_e2e::claude_mcp_connected(&pane);
    }
    // Keys typed before its input is ready are dropped: type until the text shows, then Enter
    // (typed with the text, Enter is taken as part of a paste).
    let start = Instant::now();
    'typed: loop {
        pane.type_text(prompt);
        let typed = Instant::now();
        while typed.elapsed() < std::time::Duration::from_secs(2) {
            if pointed(&pane.screen(), prompt) {
                break 'typed;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            start.elapsed() < ask_user_test_support::DEADLINE,
            "claude took no input: {}",
            pane.screen()
        );
        pane.keys(&["C-u"]);
    }
    pane.keys(&["Enter"]);
    Tui {
        pane,
        dir,
        _fake: fake,
        _ns: ns,
    }
}
