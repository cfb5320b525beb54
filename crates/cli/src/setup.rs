//! `ask-user setup <host>`: registers `ask-user mcp` with an agent host — the absolute path of
//! this binary, the timeouts and trust flags that host needs — idempotently, keeping every
//! other setting of the user's file (docs/contract.md §7 "Setup").
//!
//! One function per host ([`entries`]) says which files and which entries; writing, printing
//! and merging are shared. A host gains an entry (e.g. its hooks) by returning one more
//! [`Entry`].

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::Ended;
use crate::hook_map::HookHost;

/// The server's name in every host's config (Claude Code's tool is then
/// `mcp__ask-user__ask_user_question`).
pub(crate) const SERVER_NAME: &str = "ask-user";

/// The agent hosts `setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SetupHost {
    /// Claude Code: `~/.claude.json` (`mcpServers`) and `~/.claude/settings.json` (the tool
    /// allowed without a prompt).
    ClaudeCode,
    /// Codex CLI: `$CODEX_HOME/config.toml` (`~/.codex`), `[mcp_servers.ask-user]`.
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

/// Options of `ask-user setup`.
#[derive(Debug, clap::Args)]
pub(crate) struct SetupArgs {
    /// The host to register with.
    #[arg(value_enum)]
    host: SetupHost,
    /// Show the files and entries instead of writing them.
    #[arg(long)]
    print: bool,
    /// Flags for `ask-user mcp` in the host's entry (after `--`), e.g. `-- --via web,inbox`.
    #[arg(last = true, value_name = "MCP FLAGS")]
    mcp_args: Vec<String>,
}

/// One change to one file: a JSON object merged at `path` (object keys, created as needed),
/// or a TOML table at `path`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// In a JSON file: set the value at this key path (objects along the way created).
    Json {
        /// The file.
        file: PathBuf,
        /// The keys from the top.
        path: Vec<String>,
        /// The value put there.
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
    /// In a JSON settings file: `ask-user hook` entries merged into `hooks` (each event's list
    /// of `{matcher, hooks}` groups): the group with the same matcher gets ours in place of a
    /// previous `ask-user hook` handler, or beside the user's; a missing group is added.
    JsonHooks {
        /// The file.
        file: PathBuf,
        /// The host, as `ask-user hook HOST` names it (identifies our handlers).
        host: &'static str,
        /// `{EVENT: [{matcher, hooks: [handler]}]}`, as `ask-user hook HOST --settings` prints.
        hooks: Value,
    },
    /// In a TOML file: the table at this dotted path, replaced by these keys.
    TomlTable {
        /// The file.
        file: PathBuf,
        /// The table's keys from the top, e.g. `["mcp_servers", "ask-user"]`.
        path: Vec<String>,
        /// The table's keys and values (strings, integers, string arrays).
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
}

fn keys(path: &[&str]) -> Vec<String> {
    path.iter().map(|k| (*k).to_owned()).collect()
}

/// What registering `ask-user mcp <mcp_args>` (at the absolute `binary`) with `host` writes.
pub(crate) fn entries(
    host: SetupHost,
    binary: &Path,
    mcp_args: &[String],
    homes: &Homes,
) -> Vec<Entry> {
    let command = binary.display().to_string();
    let mut args = vec!["mcp".to_owned()];
    args.extend(mcp_args.iter().cloned());
    match host {
        SetupHost::ClaudeCode => vec![
            Entry::Json {
                file: homes.home.join(".claude.json"),
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
                hooks: hooks_of(HookHost::ClaudeCode, binary),
            },
        ],
        SetupHost::Codex => vec![
            Entry::TomlTable {
                file: homes.codex_home.join("config.toml"),
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
                hooks: hooks_of(HookHost::Codex, binary),
            },
        ],
        SetupHost::Gemini => vec![Entry::Json {
            file: homes.home.join(".gemini/settings.json"),
            path: keys(&["mcpServers", SERVER_NAME]),
            // Without `trust`, `gemini -p` drops the tool (it cannot ask for approval);
            // 600 000 ms is Gemini's own ceiling, which ask-user's calls end before.
            value: json!({"command": command, "args": args, "trust": true, "timeout": 600_000}),
        }],
        SetupHost::Cursor => vec![Entry::Json {
            file: homes.home.join(".cursor/mcp.json"),
            path: keys(&["mcpServers", SERVER_NAME]),
            value: json!({"command": command, "args": args}),
        }],
    }
}

/// The new text of `entry`'s file given its current text (`None`: no such file). Other
/// settings are kept (JSON key order, TOML comments and layout); applying it twice changes
/// nothing the second time.
pub(crate) fn apply(entry: &Entry, current: Option<&str>) -> Result<String, String> {
    let file = entry.file().display();
    match entry {
        Entry::Json { path, value, .. } => {
            let mut root = json_root(current, &file)?;
            *json_slot(&mut root, path, &file)? = value.clone();
            Ok(json_text(&root))
        }
        Entry::JsonListItem { path, item, .. } => {
            let mut root = json_root(current, &file)?;
            let slot = json_slot(&mut root, path, &file)?;
            if slot.is_null() {
                *slot = Value::Array(Vec::new());
            }
            let Value::Array(items) = slot else {
                return Err(format!("{file}: {} is not a list", path.join(".")));
            };
            if !items.iter().any(|i| i.as_str() == Some(item)) {
                items.push(Value::String(item.clone()));
            }
            Ok(json_text(&root))
        }
        Entry::JsonHooks { host, hooks, .. } => {
            let mut root = json_root(current, &file)?;
            merge_hooks(&mut root, host, hooks, &file)?;
            Ok(json_text(&root))
        }
        Entry::TomlTable { path, values, .. } => {
            let mut doc: toml_edit::DocumentMut = current
                .unwrap_or_default()
                .parse()
                .map_err(|e| format!("{file} is not valid TOML: {e}"))?;
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
                    .ok_or_else(|| format!("{file}: {key} is not a table"))?;
            }
            table.set_implicit(false);
            table.clear();
            for (key, value) in values {
                table.insert(key, toml_edit::value(toml_value(value)));
            }
            Ok(doc.to_string())
        }
    }
}

/// `ask-user hook HOST --settings`'s `hooks` object.
fn hooks_of(host: HookHost, binary: &Path) -> Value {
    crate::hook::settings_entries(host, binary)
        .get("hooks")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Merges `hooks` into `root.hooks` (see [`Entry::JsonHooks`]).
fn merge_hooks(
    root: &mut Value,
    host: &str,
    hooks: &Value,
    file: &impl std::fmt::Display,
) -> Result<(), String> {
    let Some(events) = hooks.as_object() else {
        return Ok(());
    };
    let ours = |handler: &Value| {
        handler
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| is_our_hook(c, host))
    };
    for (event, groups) in events {
        let slot = json_slot(root, &["hooks".to_owned(), event.clone()], file)?;
        if slot.is_null() {
            *slot = Value::Array(Vec::new());
        }
        let Value::Array(present) = slot else {
            return Err(format!("{file}: hooks.{event} is not a list"));
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
                    "{file}: a hooks.{event} group's hooks is not a list"
                ));
            };
            theirs.retain(|h| !ours(h));
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
            let value: Value = serde_json::from_str(text)
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
            return Err(format!("{file}: the value above {key} is not an object"));
        };
        slot = map.entry(key.clone()).or_insert(Value::Null);
    }
    Ok(slot)
}

fn json_text(root: &Value) -> String {
    let mut text = serde_json::to_string_pretty(root).unwrap_or_default();
    text.push('\n');
    text
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

fn setup(args: &SetupArgs) -> Result<String, String> {
    let binary = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find this binary's path: {e}"))?;
    let homes = Homes::from_env()?;
    let mut report = String::new();
    // The command that survives the install route (npx/uvx: not their cache path).
    let launch = crate::install_route::for_binary(&binary);
    let entries = entries(args.host, &binary, &args.mcp_args, &homes);
    for entry in crate::install_route::relaunch(entries, &binary, &launch) {
        let file = entry.file().to_path_buf();
        let current = match std::fs::read_to_string(&file) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        let next = apply(&entry, current.as_deref())?;
        if args.print {
            report.push_str(&format!("# {}\n{}\n", file.display(), shown(&entry)));
            continue;
        }
        if current.as_deref() == Some(next.as_str()) {
            report.push_str(&format!("unchanged: {}\n", file.display()));
            continue;
        }
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&file, next).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        report.push_str(&format!("updated: {}\n", file.display()));
    }
    if !args.print {
        report.push_str(&format!(
            "{} will start {} mcp; `ask-user doctor` shows what it will see.\n",
            args.host.name(),
            launch.shell_words()
        ));
        report.push_str(hooks_note(args.host));
        if args.host == SetupHost::Codex
            && let Some(warning) = crate::doctor::codex_never_warning(&homes)
        {
            report.push_str(&format!("warning: {warning}\n"));
        }
    }
    Ok(report)
}

/// What the user needs to know about the hook entries just written.
fn hooks_note(host: SetupHost) -> &'static str {
    match host {
        SetupHost::ClaudeCode => {
            "Its own questions, plan approvals and permission prompts ask through ask-user while `ask-user away on` (else its own dialogs). In `claude -p`, AskUserQuestion needs `--permission-prompt-tool mcp__ask-user__ask_user_question`, and that tool then also takes the permission prompts (and refuses them).\n"
        }
        SetupHost::Codex => {
            "Its permission prompts ask through ask-user while `ask-user away on`; Codex runs a new hook only once you trust it (`/hooks` in codex).\n"
        }
        SetupHost::Gemini | SetupHost::Cursor => "",
    }
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

    #[test]
    fn codex_keeps_the_users_settings_and_comments_and_is_idempotent() {
        let entry = &entries(SetupHost::Codex, &bin(), &[], &homes())[0];
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
            &bin(),
            &["--via".into(), "inbox".into()],
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
        let list = entries(SetupHost::ClaudeCode, &bin(), &[], &homes());
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
        let handler = json!({"type": "command", "command": ours, "timeout": 3600});
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

        let codex = entries(SetupHost::Codex, &bin(), &[], &homes());
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
    fn gemini_trusts_the_server_and_a_broken_file_is_left_alone() {
        let entry = &entries(SetupHost::Gemini, &bin(), &[], &homes())[0];
        let text = apply(entry, None).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["mcpServers"]["ask-user"]["trust"], true);
        assert_eq!(parsed["mcpServers"]["ask-user"]["timeout"], 600_000);
        let error = apply(entry, Some("{not json")).unwrap_err();
        assert!(error.contains("nothing was changed"), "{error}");
    }
}
