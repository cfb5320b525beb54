//! `ask-user setup <host>`: registers `ask-user mcp` with an agent host — the absolute path of
//! this binary, the timeouts and trust flags that host needs — and the host's hooks (its own
//! questions, plans and permission prompts asked through ask-user), both wired to the same
//! answerers (`--hub URL`: the phone path), idempotently, keeping every other setting of the
//! user's files (docs/contract.md §7 "Setup", "The phone path in one command", "Setup never
//! harms a config").
//!
//! One function per host ([`entries`]) says which files and which entries; reading and
//! writing the files safely is [`crate::config_file`]; merging is shared. Every file is read
//! and every entry applied in memory before any file is written, so a refusal changes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::Ended;
use crate::config_file;
use crate::hook_map::HookHost;

/// The server's name in every host's config (Claude Code's tool is then
/// `mcp__ask-user__ask_user_question`).
pub(crate) const SERVER_NAME: &str = "ask-user";

/// The agent hosts `setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SetupHost {
    /// Claude Code: `~/.claude.json` (`mcpServers`) and `~/.claude/settings.json` (the tool
    /// allowed without a prompt, and the hooks).
    ClaudeCode,
    /// Codex CLI: `$CODEX_HOME/config.toml` (`~/.codex`), `[mcp_servers.ask-user]`, and the
    /// permission hook in `$CODEX_HOME/hooks.json`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json` (`mcpServers`, `trust`, `timeout`).
    Gemini,
    /// Cursor: `~/.cursor/mcp.json` (`mcpServers`).
    Cursor,
}

impl SetupHost {
    /// Every host, in the order `doctor` reports them.
    pub(crate) const ALL: [SetupHost; 4] = [
        SetupHost::ClaudeCode,
        SetupHost::Codex,
        SetupHost::Gemini,
        SetupHost::Cursor,
    ];

    /// The host's name as typed on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SetupHost::ClaudeCode => "claude-code",
            SetupHost::Codex => "codex",
            SetupHost::Gemini => "gemini",
            SetupHost::Cursor => "cursor",
        }
    }
}

/// Which of a host's own prompts ask through ask-user (`--hooks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub(crate) enum HookSet {
    /// Claude Code's AskUserQuestion (PreToolUse hook).
    Questions,
    /// Claude Code's plan approval, ExitPlanMode (PreToolUse hook).
    Plans,
    /// Every permission prompt (PermissionRequest hook, matcher "*"; Claude Code and Codex).
    Permissions,
    /// No hooks: setup removes ask-user's hook entries.
    None,
}

/// Options of `ask-user setup`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Hooks installed by default: Claude Code: PreToolUse \"AskUserQuestion|ExitPlanMode\" (its questions and plan approvals) and PermissionRequest \"*\" (every permission prompt); Codex: PermissionRequest \"*\" in hooks.json. They ask through ask-user only while `ask-user away on`; choose with --hooks questions,plans,permissions or --hooks none.\n\nThe phone path: `ask-user setup claude-code --hub URL` puts the MCP tool and the hooks on the hub; the token is read from a file of mode 0600 (--hub-token-file, else ~/.config/ask-user/hub-token, written from ASK_USER_HUB_TOKEN when missing), never written into the host's config."
)]
pub(crate) struct SetupArgs {
    /// The host to register with.
    #[arg(value_enum)]
    host: SetupHost,
    /// Show the files and entries instead of writing them.
    #[arg(long)]
    print: bool,
    /// Ask through this ask-user hub — the MCP tool and the hooks alike (the phone path).
    #[arg(long, value_name = "URL")]
    hub: Option<String>,
    /// The file holding the agent's hub token (mode 0600; default
    /// ~/.config/ask-user/hub-token, created from ASK_USER_HUB_TOKEN when missing).
    #[arg(long, value_name = "FILE")]
    hub_token_file: Option<PathBuf>,
    /// Which of the host's own prompts ask through ask-user: questions (AskUserQuestion),
    /// plans (ExitPlanMode), permissions (PermissionRequest "*"), comma-separated; `none`
    /// removes the hooks. Default: all the host has.
    #[arg(long, value_enum, value_name = "LIST", value_delimiter = ',')]
    hooks: Option<Vec<HookSet>>,
    /// Flags for `ask-user mcp` in the host's entry (after `--`), e.g. `-- --via web,inbox`;
    /// they replace the same flags of an earlier setup and keep the others.
    #[arg(last = true, value_name = "MCP FLAGS")]
    mcp_args: Vec<String>,
}

/// One change to one file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// In a JSON file: ask-user's server entry at this key path (objects along the way
    /// created): these keys set, every other key of an existing entry (its `env`, the user's
    /// own) kept.
    Json {
        /// The file.
        file: PathBuf,
        /// The keys from the top.
        path: Vec<String>,
        /// The keys set there.
        value: Value,
    },
    /// In a JSON file: make sure this string is in the array at this key path.
    JsonListItem {
        /// The file.
        file: PathBuf,
        /// The keys from the top to the array.
        path: Vec<String>,
        /// The string added when missing.
        item: String,
    },
    /// In a JSON settings file: every `ask-user hook HOST` handler removed from `hooks` (a
    /// group left empty by that goes too), then these entries merged in (each event's list of
    /// `{matcher, hooks}` groups): the group with the same matcher gets ours beside the
    /// user's; a missing group is added.
    JsonHooks {
        /// The file.
        file: PathBuf,
        /// The host, as `ask-user hook HOST` names it (identifies our handlers).
        host: &'static str,
        /// `{EVENT: [{matcher, hooks: [handler]}]}`.
        hooks: Value,
    },
    /// In a TOML file: these keys set in the table at this dotted path, every other key and
    /// comment of the table kept.
    TomlTable {
        /// The file.
        file: PathBuf,
        /// The table's keys from the top, e.g. `["mcp_servers", "ask-user"]`.
        path: Vec<String>,
        /// The keys and values set (strings, integers, string arrays).
        values: Vec<(String, Value)>,
    },
}

impl Entry {
    fn file(&self) -> &Path {
        match self {
            Entry::Json { file, .. }
            | Entry::JsonListItem { file, .. }
            | Entry::JsonHooks { file, .. }
            | Entry::TomlTable { file, .. } => file,
        }
    }
}

/// Where the user's config files live: `$HOME`, and `$CODEX_HOME` for Codex.
#[derive(Debug, Clone)]
pub(crate) struct Homes {
    pub(crate) home: PathBuf,
    pub(crate) codex_home: PathBuf,
}

impl Homes {
    /// From the environment (`HOME`, `CODEX_HOME`).
    pub(crate) fn from_env() -> Result<Self, String> {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or("HOME is not set: cannot find the host's config files")?;
        let codex_home = std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"));
        Ok(Self { home, codex_home })
    }

    /// The folder a config file is checked below (a symlinked folder between it and the file
    /// is refused): `$CODEX_HOME` for Codex's files, else HOME.
    fn root_of(&self, file: &Path) -> PathBuf {
        if file.starts_with(&self.codex_home) {
            self.codex_home.clone()
        } else {
            self.home.clone()
        }
    }
}

fn keys(path: &[&str]) -> Vec<String> {
    path.iter().map(|k| (*k).to_owned()).collect()
}

/// The server entry's file and key path in `host`'s config.
pub(crate) fn server_file(host: SetupHost, homes: &Homes) -> PathBuf {
    match host {
        SetupHost::ClaudeCode => homes.home.join(".claude.json"),
        SetupHost::Codex => homes.codex_home.join("config.toml"),
        SetupHost::Gemini => homes.home.join(".gemini/settings.json"),
        SetupHost::Cursor => homes.home.join(".cursor/mcp.json"),
    }
}

/// What `setup` writes for one host: the command (the absolute `binary`), the complete
/// `ask-user mcp` arguments (`mcp` first), and the hooks with their flags.
#[derive(Debug, Clone)]
pub(crate) struct Wiring {
    /// The binary the host starts.
    pub(crate) binary: PathBuf,
    /// `ask-user mcp`'s arguments, `mcp` first.
    pub(crate) mcp_args: Vec<String>,
    /// The hooks asked through ask-user (empty: none).
    pub(crate) hooks: Vec<HookSet>,
    /// Flags after `ask-user hook HOST --wait …` (the hub's).
    pub(crate) hook_flags: Vec<String>,
    /// Where the hooks' questions go, for the host's own screen while one waits.
    pub(crate) waiting_where: String,
}

/// What registering `wiring` with `host` writes.
pub(crate) fn entries(host: SetupHost, wiring: &Wiring, homes: &Homes) -> Vec<Entry> {
    let command = wiring.binary.display().to_string();
    let args = wiring.mcp_args.clone();
    match host {
        SetupHost::ClaudeCode => vec![
            Entry::Json {
                file: server_file(host, homes),
                path: keys(&["mcpServers", SERVER_NAME]),
                value: json!({"type": "stdio", "command": command, "args": args, "env": {}}),
            },
            // Every host asks approval on a tool's first use; asking the user a question
            // needs none.
            Entry::JsonListItem {
                file: homes.home.join(".claude/settings.json"),
                path: keys(&["permissions", "allow"]),
                item: format!("mcp__{SERVER_NAME}__ask_user_question"),
            },
            Entry::JsonHooks {
                file: homes.home.join(".claude/settings.json"),
                host: "claude-code",
                hooks: hooks_of(HookHost::ClaudeCode, wiring),
            },
        ],
        SetupHost::Codex => vec![
            Entry::TomlTable {
                file: server_file(host, homes),
                path: keys(&["mcp_servers", SERVER_NAME]),
                values: vec![
                    ("command".into(), json!(command)),
                    ("args".into(), json!(args)),
                    ("startup_timeout_sec".into(), json!(20)),
                    // Codex's hard limit on a call; ask-user ends its calls 30 s before it
                    // with "still open; call again" (the retry re-attaches).
                    ("tool_timeout_sec".into(), json!(300)),
                    ("default_tools_approval_mode".into(), json!("approve")),
                ],
            },
            // Codex reads Claude Code's hook shape from `hooks.json` beside its config.
            Entry::JsonHooks {
                file: homes.codex_home.join("hooks.json"),
                host: "codex",
                hooks: hooks_of(HookHost::Codex, wiring),
            },
        ],
        SetupHost::Gemini => vec![Entry::Json {
            file: server_file(host, homes),
            path: keys(&["mcpServers", SERVER_NAME]),
            // Without `trust`, `gemini -p` drops the tool (it cannot ask for approval);
            // 600 000 ms is Gemini's own ceiling, which ask-user's calls end before.
            value: json!({"command": command, "args": args, "trust": true, "timeout": 600_000}),
        }],
        SetupHost::Cursor => vec![Entry::Json {
            file: server_file(host, homes),
            path: keys(&["mcpServers", SERVER_NAME]),
            value: json!({"command": command, "args": args}),
        }],
    }
}

/// The `hooks` object for `host` and the chosen hooks.
fn hooks_of(host: HookHost, wiring: &Wiring) -> Value {
    crate::hook::settings_entries_for(
        host,
        &wiring.binary,
        &wiring.hooks,
        &wiring.hook_flags,
        &wiring.waiting_where,
    )
    .get("hooks")
    .cloned()
    .unwrap_or(Value::Null)
}

/// The new text of `entry`'s file given its current text (`None`: no such file). Other
/// settings are kept (JSON key order and number text, TOML comments and layout); applying it
/// twice changes nothing the second time.
pub(crate) fn apply(entry: &Entry, current: Option<&str>) -> Result<String, String> {
    let file = entry.file().display();
    match entry {
        Entry::Json { path, value, .. } => {
            let mut root = json_root(current, &file)?;
            let slot = json_slot(&mut root, path, &file)?;
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            if let (Value::Object(present), Value::Object(ours)) = (slot, value) {
                for (key, value) in ours {
                    // The user's `env` is theirs (e.g. a token file): only created when missing.
                    if key == "env" && present.contains_key("env") {
                        continue;
                    }
                    present.insert(key.clone(), value.clone());
                }
            }
            Ok(config_file::json::text(&root))
        }
        Entry::JsonListItem { path, item, .. } => {
            let mut root = json_root(current, &file)?;
            let slot = json_slot(&mut root, path, &file)?;
            if slot.is_null() {
                *slot = Value::Array(Vec::new());
            }
            let Value::Array(items) = slot else {
                return Err(format!(
                    "{file}: {} is not a list; nothing was changed",
                    path.join(".")
                ));
            };
            if !items.iter().any(|i| i.as_str() == Some(item)) {
                items.push(Value::String(item.clone()));
            }
            Ok(config_file::json::text(&root))
        }
        Entry::JsonHooks { host, hooks, .. } => {
            let mut root = json_root(current, &file)?;
            merge_hooks(&mut root, host, hooks, &file)?;
            Ok(config_file::json::text(&root))
        }
        Entry::TomlTable { path, values, .. } => {
            let mut doc: toml_edit::DocumentMut = current
                .unwrap_or_default()
                .parse()
                .map_err(|e| format!("{file} is not valid TOML ({e}); nothing was changed"))?;
            let mut table = doc.as_table_mut();
            for key in path {
                let item = table
                    .entry(key)
                    .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
                if let Some(t) = item.as_table_mut() {
                    t.set_implicit(true);
                }
                table = item
                    .as_table_mut()
                    .ok_or_else(|| format!("{file}: {key} is not a table; nothing was changed"))?;
            }
            table.set_implicit(false);
            for (key, value) in values {
                let mut new = toml_value(value);
                match table.get_mut(key).and_then(toml_edit::Item::as_value_mut) {
                    // In place: the comments around the value stay.
                    Some(old) => {
                        *new.decor_mut() = old.decor().clone();
                        *old = new;
                    }
                    None => {
                        table.insert(key, toml_edit::Item::Value(new));
                    }
                }
            }
            Ok(doc.to_string())
        }
    }
}

/// Removes every `ask-user hook HOST` handler from `root.hooks`, then merges `hooks` in (see
/// [`Entry::JsonHooks`]).
fn merge_hooks(
    root: &mut Value,
    host: &str,
    hooks: &Value,
    file: &impl std::fmt::Display,
) -> Result<(), String> {
    let ours = |handler: &Value| {
        handler
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_our_hook(c, host))
    };
    if let Some(Value::Object(events)) = root.get_mut("hooks") {
        for (event, groups) in events.iter_mut() {
            let Value::Array(groups) = groups else {
                return Err(format!(
                    "{file}: hooks.{event} is not a list; nothing was changed"
                ));
            };
            let mut emptied = false;
            for group in groups.iter_mut() {
                if let Some(Value::Array(handlers)) = group.get_mut("hooks") {
                    let before = handlers.len();
                    handlers.retain(|h| !ours(h));
                    emptied |= handlers.is_empty() && before > 0;
                }
            }
            if emptied {
                groups.retain(|g| {
                    g.get("hooks")
                        .and_then(Value::as_array)
                        .is_none_or(|h| !h.is_empty())
                });
            }
        }
        events.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    }
    let Some(events) = hooks.as_object() else {
        return Ok(());
    };
    for (event, groups) in events {
        let slot = json_slot(root, &["hooks".to_owned(), event.clone()], file)?;
        if slot.is_null() {
            *slot = Value::Array(Vec::new());
        }
        let Value::Array(present) = slot else {
            return Err(format!(
                "{file}: hooks.{event} is not a list; nothing was changed"
            ));
        };
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group.get("matcher");
            let handlers = group.get("hooks").and_then(Value::as_array);
            let same = present.iter_mut().find(|g| g.get("matcher") == matcher);
            let Some(same) = same else {
                present.push(group.clone());
                continue;
            };
            let Some(Value::Array(theirs)) = same.get_mut("hooks") else {
                return Err(format!(
                    "{file}: a hooks.{event} group's hooks is not a list; nothing was changed"
                ));
            };
            theirs.extend(handlers.into_iter().flatten().cloned());
        }
    }
    Ok(())
}

/// Whether a hook's command runs `ask-user hook HOST` (ours, replaced on setup).
fn is_our_hook(command: &str, host: &str) -> bool {
    let needle = format!(" hook {host}");
    command.contains("ask-user")
        && command.match_indices(&needle).any(|(at, _)| {
            matches!(
                command[at + needle.len()..].chars().next(),
                None | Some(' ')
            )
        })
}

fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::Number(n) => n.as_i64().map_or_else(|| n.to_string().into(), Into::into),
        Value::Bool(b) => (*b).into(),
        Value::Array(items) => {
            let array: toml_edit::Array = items.iter().map(toml_value).collect();
            array.into()
        }
        Value::String(s) => s.as_str().into(),
        other => other.to_string().into(),
    }
}

fn json_root(current: Option<&str>, file: &impl std::fmt::Display) -> Result<Value, String> {
    match current {
        None => Ok(Value::Object(Map::new())),
        Some(text) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(text) => {
            let value = config_file::json::parse(text)
                .map_err(|e| format!("{file} is not valid JSON ({e}); nothing was changed"))?;
            if value.is_object() {
                Ok(value)
            } else {
                Err(format!(
                    "{file} does not hold a JSON object; nothing was changed"
                ))
            }
        }
    }
}

fn json_slot<'a>(
    root: &'a mut Value,
    path: &[String],
    file: &impl std::fmt::Display,
) -> Result<&'a mut Value, String> {
    let mut slot = root;
    for key in path {
        if slot.is_null() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(map) = slot else {
            return Err(format!(
                "{file}: the value above {key} is not an object; nothing was changed"
            ));
        };
        slot = map.entry(key.clone()).or_insert(Value::Null);
    }
    Ok(slot)
}

/// Command-line flags as groups: a flag (`--name` or `--name=value`) with the values after
/// it; what comes before the first flag (the subcommand) is the group named "".
fn flag_groups(args: &[String]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
    for arg in args {
        if let Some(flag) = arg.strip_prefix("--") {
            let name = flag.split('=').next().unwrap_or_default();
            groups.push((format!("--{name}"), vec![arg.clone()]));
        } else if let Some(last) = groups.last_mut() {
            last.1.push(arg.clone());
        }
    }
    groups
}

/// `ask-user mcp`'s arguments: `ours` (subcommand first) over an earlier entry's `theirs`: a
/// flag given now replaces the same flag, the user's other flags stay in place.
pub(crate) fn merged_args(theirs: &[String], ours: &[String]) -> Vec<String> {
    let new = flag_groups(ours);
    let mut out: Vec<String> = new[0].1.clone();
    let mut used = vec![false; new.len()];
    for (name, tokens) in flag_groups(theirs).into_iter().skip(1) {
        match new.iter().position(|(n, _)| *n == name) {
            Some(at) if !used[at] => {
                used[at] = true;
                out.extend(new[at].1.iter().cloned());
            }
            Some(_) => {}
            None => out.extend(tokens),
        }
    }
    for (at, (_, tokens)) in new.iter().enumerate().skip(1) {
        if !used[at] {
            out.extend(tokens.iter().cloned());
        }
    }
    out
}

/// The value of `--name VALUE` or `--name=VALUE` in `args` (the last one).
fn flag_value(args: &[String], name: &str) -> Option<String> {
    flag_groups(args)
        .into_iter()
        .rev()
        .find(|(n, _)| n == name)
        .and_then(|(_, tokens)| {
            let first = tokens.first()?;
            match first.split_once('=') {
                Some((_, value)) => Some(value.to_owned()),
                None => tokens.get(1).cloned(),
            }
        })
}

/// `args` without the groups of the flags `names`.
fn without_flags(args: &[String], names: &[&str]) -> Vec<String> {
    flag_groups(args)
        .into_iter()
        .filter(|(n, _)| !names.contains(&n.as_str()))
        .flat_map(|(_, tokens)| tokens)
        .collect()
}

/// The `args` of ask-user's server entry in `text` (the server file's), if any.
fn existing_args(host: SetupHost, text: &str) -> Vec<String> {
    let strings = |value: Option<&Value>| -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    if host == SetupHost::Codex {
        let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
            return Vec::new();
        };
        doc.get("mcp_servers")
            .and_then(|t| t.get(SERVER_NAME))
            .and_then(|t| t.get("args"))
            .and_then(toml_edit::Item::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        let Ok(root) = config_file::json::parse(text) else {
            return Vec::new();
        };
        strings(
            root.get("mcpServers")
                .and_then(|s| s.get(SERVER_NAME))
                .and_then(|e| e.get("args")),
        )
    }
}

/// The default hub token file: `$XDG_CONFIG_HOME/ask-user/hub-token`, else
/// `~/.config/ask-user/hub-token`.
fn default_token_file(homes: &Homes) -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    xdg.unwrap_or_else(|| homes.home.join(".config"))
        .join("ask-user/hub-token")
}

/// The token file setup names in the entries: checked (a regular file, no access for group or
/// others), or to be created from `ASK_USER_HUB_TOKEN` (the token returned).
fn token_file(given: Option<&Path>, homes: &Homes) -> Result<(PathBuf, Option<String>), String> {
    let file = given.map_or_else(|| default_token_file(homes), Path::to_path_buf);
    let file = if file.is_absolute() {
        file
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot resolve {}: {e}", file.display()))?
            .join(file)
    };
    match file.symlink_metadata() {
        Ok(meta) => {
            use std::os::unix::fs::PermissionsExt;
            if !meta.is_file() {
                return Err(format!(
                    "{}: the hub token file is not a regular file; nothing was changed",
                    file.display()
                ));
            }
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "{}: the hub token file is readable by others (mode {mode:o}): run `chmod 600 {}`; nothing was changed",
                    file.display(),
                    file.display()
                ));
            }
            Ok((file, None))
        }
        Err(_) => {
            let token = std::env::var(ask_user_via::hub_args::HUB_TOKEN_ENV).unwrap_or_default();
            let token = token.trim();
            if token.is_empty() {
                return Err(format!(
                    "--hub needs the agent's token (`ask-user hub token add NAME` prints one): put it in {} (mode 0600) or in ASK_USER_HUB_TOKEN while running setup, or name another file with --hub-token-file; nothing was changed",
                    file.display()
                ));
            }
            Ok((file, Some(token.to_owned())))
        }
    }
}

/// Creates the token file with mode 0600 (never replacing a file).
fn write_token_file(file: &Path, token: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = file.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .and_then(|mut out| out.write_all(format!("{token}\n").as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// Runs `ask-user setup`.
pub(crate) fn run(args: &SetupArgs) -> Ended {
    match setup(args) {
        Ok(report) => Ended::Printed {
            stdout: report,
            status: 0,
        },
        Err(message) => Ended::Usage(message),
    }
}

/// The refusal of a hub token among the MCP flags (it would be written into the host's
/// config, readable by other users and backed up in plain text).
const TOKEN_IN_CONFIG: &str = "setup: --hub-token would write the token into the host's config file: put it in a file of mode 0600 and give --hub-token-file FILE (or set ASK_USER_HUB_TOKEN while running setup --hub URL); nothing was changed";

/// The hooks `host` gets for the `--hooks` choice (`None`: all it has).
fn chosen_hooks(host: SetupHost, chosen: Option<&[HookSet]>) -> Result<Vec<HookSet>, String> {
    let offered: &[HookSet] = match host {
        SetupHost::ClaudeCode => &[HookSet::Questions, HookSet::Plans, HookSet::Permissions],
        SetupHost::Codex => &[HookSet::Permissions],
        SetupHost::Gemini | SetupHost::Cursor => &[],
    };
    let Some(chosen) = chosen else {
        return Ok(offered.to_vec());
    };
    let mut hooks: Vec<HookSet> = chosen
        .iter()
        .copied()
        .filter(|h| *h != HookSet::None)
        .collect();
    hooks.sort_unstable();
    hooks.dedup();
    if let Some(missing) = hooks.iter().find(|h| !offered.contains(h)) {
        let name = format!("{missing:?}").to_lowercase();
        return Err(format!(
            "setup {}: --hooks {name}: this host has no such hook (it has: {})",
            host.name(),
            if offered.is_empty() {
                "none".to_owned()
            } else {
                offered
                    .iter()
                    .map(|h| format!("{h:?}").to_lowercase())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    Ok(hooks)
}

fn setup(args: &SetupArgs) -> Result<String, String> {
    let binary = written_binary()?;
    let homes = Homes::from_env()?;
    let hooks = chosen_hooks(args.host, args.hooks.as_deref())?;
    if flag_groups(&args.mcp_args)
        .iter()
        .any(|(name, _)| name == "--hub-token")
    {
        return Err(TOKEN_IN_CONFIG.to_owned());
    }
    // `--hub` and its token file after `--` mean the same as before it: the hooks ask there too.
    let hub = args
        .hub
        .clone()
        .or_else(|| flag_value(&args.mcp_args, "--hub"));
    let given_token_file = args
        .hub_token_file
        .clone()
        .or_else(|| flag_value(&args.mcp_args, "--hub-token-file").map(PathBuf::from));
    let mut flags = without_flags(&args.mcp_args, &["--hub", "--hub-token-file"]);

    // Read every file first: a refusal leaves all of them as they were.
    let mut files: BTreeMap<PathBuf, config_file::Found> = BTreeMap::new();
    let probe = Wiring {
        binary: binary.clone(),
        mcp_args: Vec::new(),
        hooks: hooks.clone(),
        hook_flags: Vec::new(),
        waiting_where: String::new(),
    };
    for entry in entries(args.host, &probe, &homes) {
        let file = entry.file().to_path_buf();
        if let std::collections::btree_map::Entry::Vacant(slot) = files.entry(file) {
            let found = config_file::read(&homes.root_of(slot.key()), slot.key())?;
            slot.insert(found);
        }
    }
    let server = server_file(args.host, &homes);
    let theirs = files
        .get(&server)
        .and_then(|f| f.text.as_deref())
        .map(|text| existing_args(args.host, text))
        .unwrap_or_default();
    let dropped_token = flag_groups(&theirs).iter().any(|(n, _)| n == "--hub-token");
    let theirs = without_flags(&theirs, &["--hub-token"]);

    let mut token_to_write = None;
    if let Some(url) = &hub {
        let (file, token) = token_file(given_token_file.as_deref(), &homes)?;
        flags.extend([
            "--hub".to_owned(),
            url.clone(),
            "--hub-token-file".to_owned(),
            file.display().to_string(),
        ]);
        token_to_write = token.map(|t| (file, t));
    }
    let mut ours = vec!["mcp".to_owned()];
    ours.extend(flags);
    let mcp_args = merged_args(&theirs, &ours);
    let mut hook_flags = Vec::new();
    for name in ["--hub", "--hub-token-file"] {
        if let Some(value) = flag_value(&mcp_args, name) {
            hook_flags.extend([name.to_owned(), value]);
        }
    }
    let waiting_where = match flag_value(&mcp_args, "--hub") {
        Some(url) => format!("ask-user: waiting for your answer on the hub ({url})"),
        None => "ask-user: waiting for your answer in `ask-user inbox`".to_owned(),
    };
    let wiring = Wiring {
        binary: binary.clone(),
        mcp_args,
        hooks: hooks.clone(),
        hook_flags,
        waiting_where,
    };

    let mut next: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    let mut report = String::new();
    // The command that survives the install route (npx/uvx: not their cache path).
    let launch = crate::install_route::for_binary(&binary);
    let list =
        crate::install_route::relaunch(entries(args.host, &wiring, &homes), &binary, &launch);
    for entry in &list {
        let file = entry.file().to_path_buf();
        let current = match next.get(&file) {
            Some(text) => text.clone(),
            None => files.get(&file).and_then(|f| f.text.clone()),
        };
        let text = apply(entry, current.as_deref())?;
        if args.print {
            report.push_str(&format!("# {}\n{}\n", file.display(), shown(entry)));
        }
        next.insert(file, Some(text));
    }
    if args.print {
        return Ok(report);
    }
    // Every file checked and every entry applied: now write.
    if let Some((file, token)) = &token_to_write {
        write_token_file(file, token)?;
        report.push_str(&format!(
            "stored the hub token from ASK_USER_HUB_TOKEN in {} (mode 0600)\n",
            file.display()
        ));
    }
    let mut warnings: Vec<String> = Vec::new();
    for (file, text) in &next {
        let Some(text) = text else { continue };
        let found = files.get(file);
        for warning in found.into_iter().flat_map(|f| &f.warnings) {
            if !warnings.contains(warning) {
                warnings.push(warning.clone());
            }
        }
        if found.and_then(|f| f.text.as_deref()) == Some(text.as_str()) {
            report.push_str(&format!("unchanged: {}\n", file.display()));
            continue;
        }
        config_file::write(file, text, found.and_then(|f| f.mode))?;
        report.push_str(&format!("updated: {}\n", file.display()));
    }
    report.push_str(&format!(
        "{} will start {} {}; `ask-user doctor` shows what it will see.\n",
        args.host.name(),
        launch.shell_words(),
        wiring.mcp_args.join(" ")
    ));
    report.push_str(&hooks_note(args.host, &wiring));
    if dropped_token {
        warnings.push(format!(
            "removed --hub-token from {}: a token there is readable in the file; setup --hub URL reads it from a file of mode 0600",
            server.display()
        ));
    }
    if args.host == SetupHost::Codex
        && let Some(warning) = crate::doctor::codex_never_warning(&homes)
    {
        warnings.push(warning);
    }
    for warning in warnings {
        report.push_str(&format!("warning: {warning}\n"));
    }
    Ok(report)
}

/// The binary the host's entries start: this one, by its absolute path.
fn written_binary() -> Result<PathBuf, String> {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find this binary's path: {e}"))
}

/// What the user needs to know about the hook entries just written: which, where they ask,
/// and how to change them.
fn hooks_note(host: SetupHost, wiring: &Wiring) -> String {
    let (all, installed): (&[HookSet], Vec<&str>) = match host {
        SetupHost::ClaudeCode => (
            &[HookSet::Questions, HookSet::Plans, HookSet::Permissions],
            wiring
                .hooks
                .iter()
                .map(|h| match h {
                    HookSet::Questions => "questions (PreToolUse AskUserQuestion)",
                    HookSet::Plans => "plan approvals (PreToolUse ExitPlanMode)",
                    _ => "permission prompts (PermissionRequest \"*\": every tool)",
                })
                .collect(),
        ),
        SetupHost::Codex => (
            &[HookSet::Permissions],
            wiring
                .hooks
                .iter()
                .map(|_| "permission prompts (PermissionRequest \"*\" in hooks.json)")
                .collect(),
        ),
        SetupHost::Gemini | SetupHost::Cursor => return String::new(),
    };
    let name = host.name();
    let mut note = if installed.is_empty() {
        format!(
            "Hooks: none (its own prompts stay in its own dialogs); `ask-user setup {name}` installs them.\n"
        )
    } else {
        format!(
            "Hooks: its {} ask through ask-user while `ask-user away on` (else its own dialogs).\n",
            installed.join(", ")
        )
    };
    if !installed.is_empty() {
        let answered = match flag_value(&wiring.mcp_args, "--hub") {
            Some(url) => format!(
                "Answers: on the hub at {url} (the token read from {}), for the tool and the hooks alike.\n",
                flag_value(&wiring.mcp_args, "--hub-token-file").unwrap_or_default()
            ),
            None => format!(
                "Answers: the hooks ask in `ask-user inbox` on this machine; `ask-user setup {name} --hub URL` puts them (and the tool) on your phone.\n"
            ),
        };
        note.push_str(&answered);
        let names: Vec<String> = all
            .iter()
            .map(|h| format!("{h:?}").to_lowercase())
            .collect();
        note.push_str(&format!(
            "Change: `ask-user setup {name} --hooks {}` (any of them) or `--hooks none`.\n",
            names.join(",")
        ));
    }
    match host {
        SetupHost::ClaudeCode if !installed.is_empty() => note.push_str("In auto mode Claude Code keeps permission prompts in its own dialogs and they never reach the hook: start it with `--permission-mode default` (`ask-user doctor` says when the mode is set in its settings). In `claude -p`, AskUserQuestion needs `--permission-prompt-tool mcp__ask-user__ask_user_question`, and that tool then also takes the permission prompts (and refuses them).\n"),
        SetupHost::Codex if !installed.is_empty() => note.push_str("Codex runs a new hook only once you trust it (`/hooks` in codex).\n"),
        _ => {}
    }
    note
}

/// The entry alone, as it appears in its file.
fn shown(entry: &Entry) -> String {
    match entry {
        Entry::Json { path, value, .. } => {
            let text = serde_json::to_string_pretty(value).unwrap_or_default();
            format!("{}: {text}", path.join("."))
        }
        Entry::JsonListItem { path, item, .. } => format!("{}: [… {item:?}]", path.join(".")),
        Entry::JsonHooks { hooks, .. } => {
            let text = serde_json::to_string_pretty(hooks).unwrap_or_default();
            format!("hooks (merged by matcher): {text}")
        }
        Entry::TomlTable { file, .. } => {
            apply(entry, None).unwrap_or_else(|e| format!("{}: {e}", file.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn homes() -> Homes {
        Homes {
            home: PathBuf::from("/home/u"),
            codex_home: PathBuf::from("/home/u/.codex"),
        }
    }

    fn bin() -> PathBuf {
        PathBuf::from("/opt/ask-user/bin/ask-user")
    }

    /// The wiring of a plain `setup` (every hook, asking in the inbox) with these MCP flags.
    fn wiring(flags: &[&str]) -> Wiring {
        let mut mcp_args = vec!["mcp".to_owned()];
        mcp_args.extend(flags.iter().map(|f| (*f).to_owned()));
        Wiring {
            binary: bin(),
            mcp_args,
            hooks: vec![HookSet::Questions, HookSet::Plans, HookSet::Permissions],
            hook_flags: Vec::new(),
            waiting_where: "ask-user: waiting for your answer in `ask-user inbox`".to_owned(),
        }
    }

    #[test]
    fn codex_keeps_the_users_settings_and_comments_and_is_idempotent() {
        let entry = &entries(SetupHost::Codex, &wiring(&[]), &homes())[0];
        let before = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[mcp_servers.ask-user]\ncommand = \"ask-user\"\n";
        let once = apply(entry, Some(before)).unwrap();
        assert_eq!(
            once,
            "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[mcp_servers.ask-user]\ncommand = \"/opt/ask-user/bin/ask-user\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\ntool_timeout_sec = 300\ndefault_tools_approval_mode = \"approve\"\n"
        );
        assert_eq!(apply(entry, Some(&once)).unwrap(), once);
        let fresh = apply(entry, None).unwrap();
        assert!(fresh.starts_with("[mcp_servers.ask-user]\n"), "{fresh}");
    }

    #[test]
    fn json_hosts_keep_other_keys_in_order_and_are_idempotent() {
        let list = entries(
            SetupHost::ClaudeCode,
            &wiring(&["--via", "inbox"]),
            &homes(),
        );
        let before = r#"{"theme":"dark","mcpServers":{"other":{"command":"x"}},"z":1}"#;
        let once = apply(&list[0], Some(before)).unwrap();
        let parsed: Value = serde_json::from_str(&once).unwrap();
        let keys: Vec<&String> = parsed.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["theme", "mcpServers", "z"]);
        assert_eq!(
            parsed["mcpServers"]["ask-user"],
            json!({"type":"stdio","command":"/opt/ask-user/bin/ask-user","args":["mcp","--via","inbox"],"env":{}})
        );
        assert_eq!(parsed["mcpServers"]["other"], json!({"command":"x"}));
        assert_eq!(apply(&list[0], Some(&once)).unwrap(), once);
        let allow = apply(&list[1], Some(r#"{"permissions":{"allow":["Bash(ls)"]}}"#)).unwrap();
        let twice = apply(&list[1], Some(&allow)).unwrap();
        assert_eq!(twice, allow);
        let parsed: Value = serde_json::from_str(&twice).unwrap();
        assert_eq!(
            parsed["permissions"]["allow"],
            json!(["Bash(ls)", "mcp__ask-user__ask_user_question"])
        );
    }

    #[test]
    fn hook_entries_merge_by_matcher_keep_the_users_hooks_and_are_idempotent() {
        let list = entries(SetupHost::ClaudeCode, &wiring(&[]), &homes());
        let entry = &list[2];
        let ours = "'/opt/ask-user/bin/ask-user' hook claude-code --wait 59m";
        let before = json!({"model": "opus", "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash"}]},
                {"matcher": "AskUserQuestion|ExitPlanMode", "hooks": [
                    {"type": "command", "command": "notify-me"},
                    {"type": "command", "command": "/old/ask-user hook claude-code --timeout 55m", "timeout": 600},
                ]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        }});
        let once = apply(entry, Some(&before.to_string())).unwrap();
        let parsed: Value = serde_json::from_str(&once).unwrap();
        let handler = json!({"type": "command", "command": ours, "timeout": 3600,
            "statusMessage": "ask-user: waiting for your answer in `ask-user inbox`"});
        assert_eq!(
            parsed,
            json!({"model": "opus", "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash"}]},
                    {"matcher": "AskUserQuestion|ExitPlanMode", "hooks": [
                        {"type": "command", "command": "notify-me"},
                        handler,
                    ]},
                ],
                "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
                "PermissionRequest": [{"matcher": "*", "hooks": [handler]}],
            }})
        );
        assert_eq!(apply(entry, Some(&once)).unwrap(), once);
        let error = apply(entry, Some(r#"{"hooks":{"PreToolUse":{}}}"#)).unwrap_err();
        assert!(error.contains("hooks.PreToolUse is not a list"), "{error}");
        assert!(!is_our_hook("/x/ask-user hook claude-codex", "claude-code"));
        assert!(is_our_hook("/x/ask-user hook codex", "codex"));

        let codex = entries(SetupHost::Codex, &wiring(&[]), &homes());
        let Entry::JsonHooks { file, .. } = &codex[1] else {
            panic!("{codex:?}")
        };
        assert_eq!(file, &PathBuf::from("/home/u/.codex/hooks.json"));
        let fresh: Value = serde_json::from_str(&apply(&codex[1], None).unwrap()).unwrap();
        assert_eq!(
            fresh,
            crate::hook::settings_entries(HookHost::Codex, &bin())
        );
    }

    #[test]
    fn choosing_fewer_hooks_removes_the_others_and_none_removes_all() {
        let all = entries(SetupHost::ClaudeCode, &wiring(&[]), &homes());
        let once = apply(
            &all[2],
            Some(r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}"#),
        )
        .unwrap();
        let mut only = wiring(&[]);
        only.hooks = vec![HookSet::Questions];
        only.hook_flags = vec!["--hub".into(), "https://hub.example".into()];
        let fewer = apply(
            &entries(SetupHost::ClaudeCode, &only, &homes())[2],
            Some(&once),
        )
        .unwrap();
        let parsed: Value = serde_json::from_str(&fewer).unwrap();
        assert_eq!(
            parsed["hooks"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["Stop", "PreToolUse"]
        );
        assert_eq!(
            parsed["hooks"]["PreToolUse"][0]["matcher"],
            "AskUserQuestion"
        );
        assert_eq!(
            parsed["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "'/opt/ask-user/bin/ask-user' hook claude-code --wait 59m '--hub' 'https://hub.example'"
        );
        only.hooks = Vec::new();
        let none = apply(
            &entries(SetupHost::ClaudeCode, &only, &homes())[2],
            Some(&fewer),
        )
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&none).unwrap(),
            json!({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}})
        );
    }

    #[test]
    fn new_flags_replace_the_same_flags_and_keep_the_users_others() {
        let theirs: Vec<String> = [
            "mcp",
            "--via",
            "web",
            "--session-title",
            "laptop",
            "--no-open",
        ]
        .map(String::from)
        .to_vec();
        let ours: Vec<String> = ["mcp", "--via=inbox", "--hub", "https://h"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            merged_args(&theirs, &ours),
            [
                "mcp",
                "--via=inbox",
                "--session-title",
                "laptop",
                "--no-open",
                "--hub",
                "https://h"
            ]
        );
        assert_eq!(merged_args(&[], &ours), ours);
        assert_eq!(flag_value(&ours, "--via").as_deref(), Some("inbox"));
        assert_eq!(flag_value(&ours, "--hub").as_deref(), Some("https://h"));
    }

    #[test]
    fn gemini_trusts_the_server_and_a_broken_file_is_left_alone() {
        let entry = &entries(SetupHost::Gemini, &wiring(&[]), &homes())[0];
        let text = apply(entry, None).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["mcpServers"]["ask-user"]["trust"], true);
        assert_eq!(parsed["mcpServers"]["ask-user"]["timeout"], 600_000);
        let error = apply(entry, Some("{not json")).unwrap_err();
        assert!(error.contains("nothing was changed"), "{error}");
    }
}
