//! `ask-user doctor`: for each agent host `setup` knows, what that host will see — its entry
//! for `ask-user`, whether the command resolves, its trust flags, and the server started the
//! way the host starts it (its command, arguments and environment), greeted with the host's
//! own `initialize` (client name, protocol version, elicitation), then `tools/list`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::Ended;
use crate::setup::{Homes, SERVER_NAME, SetupHost};

/// How long the started server may take to answer `initialize` and `tools/list`.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// Options of `ask-user doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {}

/// The server entry a host's config holds for `ask-user`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) file: PathBuf,
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    /// The host's trust/approval setting for the tool, as text, when one is set.
    pub(crate) trust: Option<String>,
}

/// How `host` greets a server: `clientInfo`, protocol version, capabilities.
fn greeting(host: SetupHost) -> Value {
    let (name, version, protocol, elicitation) = match host {
        SetupHost::ClaudeCode => ("claude-code", "2.1.332", "2025-11-25", true),
        SetupHost::Codex => ("codex-mcp-client", "0.171.0", "2025-06-18", true),
        SetupHost::Gemini => ("gemini-cli-mcp-client", "0.61.0", "2025-06-18", false),
        SetupHost::Cursor => ("cursor-vscode", "1.0.0", "2025-06-18", true),
    };
    let mut capabilities = json!({});
    if elicitation {
        capabilities["elicitation"] = json!({"form": {}});
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": protocol, "capabilities": capabilities,
        "clientInfo": {"name": name, "version": version}}})
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn env_pairs(value: &Value) -> Vec<(String, String)> {
    value
        .as_object()
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// The `ask-user` entry of `host`'s config, if any (`Err`: the file does not parse).
pub(crate) fn find(host: SetupHost, homes: &Homes) -> Result<Option<Found>, String> {
    let file = match host {
        SetupHost::ClaudeCode => homes.home.join(".claude.json"),
        SetupHost::Codex => homes.codex_home.join("config.toml"),
        SetupHost::Gemini => homes.home.join(".gemini/settings.json"),
        SetupHost::Cursor => homes.home.join(".cursor/mcp.json"),
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    let shown = file.display();
    let entry: Value = if host == SetupHost::Codex {
        let doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e| format!("{shown} is not valid TOML: {e}"))?;
        let Some(table) = doc
            .get("mcp_servers")
            .and_then(|t| t.get(SERVER_NAME))
            .and_then(toml_edit::Item::as_table_like)
        else {
            return Ok(None);
        };
        let mut entry = serde_json::Map::new();
        for (key, item) in table.iter() {
            let value = match item.as_value() {
                Some(toml_edit::Value::String(s)) => json!(s.value()),
                Some(toml_edit::Value::Array(a)) => json!(
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect::<Vec<_>>()
                ),
                Some(toml_edit::Value::InlineTable(t)) => json!(
                    t.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.to_owned(), json!(v))))
                        .collect::<serde_json::Map<_, _>>()
                ),
                Some(other) => json!(other.to_string().trim()),
                None => continue,
            };
            entry.insert(key.to_owned(), value);
        }
        Value::Object(entry)
    } else {
        let root: Value =
            serde_json::from_str(&text).map_err(|e| format!("{shown} is not valid JSON: {e}"))?;
        match root.get("mcpServers").and_then(|s| s.get(SERVER_NAME)) {
            Some(entry) => entry.clone(),
            None => return Ok(None),
        }
    };
    let trust = match host {
        SetupHost::Codex => entry["default_tools_approval_mode"]
            .as_str()
            .map(|m| format!("default_tools_approval_mode = {m:?}")),
        SetupHost::Gemini => entry.get("trust").map(|t| format!("\"trust\": {t}")),
        SetupHost::ClaudeCode => {
            let settings = std::fs::read_to_string(homes.home.join(".claude/settings.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            let tool = format!("mcp__{SERVER_NAME}__ask_user_question");
            settings
                .filter(|s| strings(&s["permissions"]["allow"]).contains(&tool))
                .map(|_| format!("{tool} allowed in ~/.claude/settings.json"))
        }
        SetupHost::Cursor => None,
    };
    Ok(Some(Found {
        file,
        command: entry["command"].as_str().unwrap_or_default().to_owned(),
        args: strings(&entry["args"]),
        env: env_pairs(&entry["env"]),
        trust,
    }))
}

/// The warning for a Codex config whose approval policy is `"never"` (at the top, or in the
/// profile `profile = "…"` selects, or in another profile, used with `--profile`), if any:
/// Codex then declines every question form within milliseconds, so the question goes to
/// ask-user's next answerers (`--via`) instead of Codex's own form.
pub(crate) fn codex_never_warning(homes: &Homes) -> Option<String> {
    let file = homes.codex_home.join("config.toml");
    let doc: toml_edit::DocumentMut = std::fs::read_to_string(&file).ok()?.parse().ok()?;
    let never = |t: &dyn toml_edit::TableLike| {
        t.get("approval_policy").and_then(toml_edit::Item::as_str) == Some("never")
    };
    let profiles = doc.get("profiles").and_then(toml_edit::Item::as_table_like);
    let profile_of = |name: &str| {
        profiles
            .and_then(|p| p.get(name))
            .and_then(toml_edit::Item::as_table_like)
    };
    let selected = doc.get("profile").and_then(toml_edit::Item::as_str);
    let effective = match selected.and_then(profile_of) {
        Some(p) if p.contains_key("approval_policy") => never(p),
        _ => never(doc.as_table()),
    };
    let mut others: Vec<&str> = profiles
        .into_iter()
        .flat_map(toml_edit::TableLike::iter)
        .filter(|(name, item)| Some(*name) != selected && item.as_table_like().is_some_and(&never))
        .map(|(name, _)| name)
        .collect();
    others.sort_unstable();
    let shown = file.display();
    let why = "Codex declines every question form at once, so questions skip its own form and go to ask-user's other answerers (--via: the page, the hub); set approval_policy = \"on-request\" to answer in Codex";
    if effective {
        Some(format!("approval_policy = \"never\" in {shown}: {why}"))
    } else if !others.is_empty() {
        Some(format!(
            "approval_policy = \"never\" in {shown} for --profile {}: with it, {why}",
            others.join(", ")
        ))
    } else {
        None
    }
}

/// `command` split into words as `sh` would for the quoting setup writes (single quotes,
/// `'\''` for a quote inside).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '\'') => quoted = false,
            (true, c) => word.get_or_insert_with(String::new).push(c),
            (false, '\'') => {
                quoted = true;
                word.get_or_insert_with(String::new);
            }
            (false, '\\') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            (false, c) if c.is_whitespace() => words.extend(word.take()),
            (false, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The hooks setup installed for `host` (ask-user's handlers in its settings), where they ask
/// and whether they ask now (the away switch); `None` when there are none.
fn hooks_line(host: SetupHost, homes: &Homes) -> Option<String> {
    let (file, name) = match host {
        SetupHost::ClaudeCode => (homes.home.join(".claude/settings.json"), "claude-code"),
        SetupHost::Codex => (homes.codex_home.join("hooks.json"), "codex"),
        SetupHost::Gemini | SetupHost::Cursor => return None,
    };
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    let mut installed = Vec::new();
    let mut hub = None;
    for (event, groups) in settings["hooks"].as_object()? {
        for group in groups.as_array().into_iter().flatten() {
            let ours = group["hooks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|h| h["command"].as_str())
                .map(shell_words)
                .find(|words| {
                    words.first().is_some_and(|w| w.contains("ask-user"))
                        && words.get(1).map(String::as_str) == Some("hook")
                        && words.get(2).map(String::as_str) == Some(name)
                });
            let Some(words) = ours else { continue };
            let matcher = group["matcher"].as_str().unwrap_or_default();
            installed.push(format!("{event} {matcher:?}"));
            if let Some(at) = words.iter().position(|w| w == "--hub") {
                hub = words.get(at + 1).cloned().or(hub);
            }
        }
    }
    if installed.is_empty() {
        return None;
    }
    let place = match hub {
        Some(url) => format!("through the hub at {url}"),
        None => "in `ask-user inbox`".to_owned(),
    };
    let now = if crate::hook::is_away() {
        "now on"
    } else {
        "now off: the host's own dialogs"
    };
    Some(format!(
        "  hooks: {}; they ask {place} while `ask-user away on` ({now})\n",
        installed.join(", ")
    ))
}

/// Claude Code's permission mode, when ask-user's PermissionRequest hook is installed: a
/// warning for a mode in which Claude Code decides permission prompts itself (they never reach
/// the hook, so never the phone), with the fix; else the mode, one line.
fn claude_permission_mode(homes: &Homes) -> Option<String> {
    let file = homes.home.join(".claude/settings.json");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&file).ok()?).ok()?;
    let hooked = settings["hooks"]["PermissionRequest"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
        .filter_map(|handler| handler["command"].as_str())
        .any(|command| command.contains("ask-user") && command.contains(" hook claude-code"));
    if !hooked {
        return None;
    }
    let shown = file.display();
    let fix =
        "set \"defaultMode\": \"default\" there, or start claude with --permission-mode default";
    Some(match settings["permissions"]["defaultMode"].as_str() {
        None => format!(
            "  warning: no permissions.defaultMode in {shown}: Claude Code may start in auto mode, where it decides permission prompts itself and they never reach ask-user's PermissionRequest hook; {}\n",
            fix.replace(
                "set \"defaultMode\": \"default\" there",
                "set \"permissions\": {\"defaultMode\": \"default\"}"
            )
        ),
        Some(mode @ ("auto" | "bypassPermissions" | "dontAsk")) => format!(
            "  warning: permission mode {mode:?} (permissions.defaultMode in {shown}): Claude Code decides permission prompts itself, so they never reach ask-user's PermissionRequest hook; {fix}\n"
        ),
        Some(mode) => format!("  permission mode: {mode:?}: permission prompts reach the hook\n"),
    })
}

/// What the host will see when it starts `found`: the server's own line about the
/// connection and the tools it lists, or why it did not get that far.
fn probe(host: SetupHost, found: &Found, homes: &Homes) -> Result<(String, Vec<String>), String> {
    let mut command = Command::new(&found.command);
    command
        .args(&found.args)
        .env_clear()
        .env("HOME", &homes.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("RUST_LOG", "ask_user_mcp=info")
        .envs(found.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", found.command))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err("no pipes to the server".to_owned());
    };
    let (lines, from_server) = mpsc::channel();
    let errors = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send((true, line));
        }
    });
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = errors.send((false, line));
        }
    });
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut connected = String::new();
    let mut tools = None;
    let written = writeln!(stdin, "{}", greeting(host)).and_then(|()| stdin.flush());
    let mut sent_list = false;
    while written.is_ok() && tools.is_none() {
        let Ok((is_stdout, line)) = from_server.recv_timeout(ANSWER_WITHIN) else {
            break;
        };
        if !is_stdout {
            if let Some(at) = line.find("connected (protocol") {
                let start = line[..at].rfind(": ").map_or(0, |i| i + 2);
                connected = line[start..].trim().to_owned();
            }
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["id"] == 1 && !sent_list {
            sent_list = true;
            let _ = writeln!(stdin, "{initialized}\n{list}").and_then(|()| stdin.flush());
        } else if message["id"] == 2 {
            tools = Some(
                message["result"]["tools"]
                    .as_array()
                    .map(|t| {
                        t.iter()
                            .filter_map(|t| t["name"].as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            );
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    match tools {
        Some(tools) => Ok((connected, tools)),
        None => Err("the server did not answer initialize and tools/list".to_owned()),
    }
}

/// The report for one host; whether it has a problem.
pub(crate) fn report(host: SetupHost, homes: &Homes) -> (String, bool) {
    let name = host.name();
    let found = match find(host, homes) {
        Err(error) => return (format!("{name}: {error}\n"), true),
        Ok(None) => {
            return (
                format!("{name}: not set up (`ask-user setup {name}` registers the server)\n"),
                false,
            );
        }
        Ok(Some(found)) => found,
    };
    let mut out = format!("{name}: {}\n", found.file.display());
    let mut problem = false;
    out.push_str(&format!(
        "  command: {} {}\n",
        found.command,
        found.args.join(" ")
    ));
    if !Path::new(&found.command).is_absolute() {
        problem = true;
        out.push_str("  problem: the command is not an absolute path; the host looks it up on its own PATH (Codex then shows nothing and the model has no tool): run `ask-user setup` again\n");
    }
    match (&found.trust, host) {
        (Some(trust), _) => out.push_str(&format!("  trust: {trust}\n")),
        (None, SetupHost::Gemini) => {
            problem = true;
            out.push_str("  problem: no \"trust\": true; `gemini -p` drops the tool\n");
        }
        (None, SetupHost::Cursor) => {}
        (None, _) => out.push_str("  note: the host asks approval before the first question\n"),
    }
    if host == SetupHost::Codex
        && let Some(warning) = codex_never_warning(homes)
    {
        out.push_str(&format!("  warning: {warning}\n"));
    }
    if let Some(line) = hooks_line(host, homes) {
        out.push_str(&line);
    }
    if host == SetupHost::ClaudeCode
        && let Some(line) = claude_permission_mode(homes)
    {
        out.push_str(&line);
    }
    match probe(host, &found, homes) {
        Ok((connected, tools)) => {
            if !connected.is_empty() {
                out.push_str(&format!("  started as {name} would: {connected}\n"));
            }
            if tools.iter().any(|t| t == "ask_user_question") {
                out.push_str("  tools/list: ask_user_question\n");
            } else {
                problem = true;
                out.push_str("  problem: tools/list is empty: nobody could answer this host's questions (check --via)\n");
            }
        }
        Err(error) => {
            problem = true;
            out.push_str(&format!("  problem: {error}\n"));
        }
    }
    let limit = match host {
        SetupHost::Codex => Some(("300 s", "270 s")),
        SetupHost::Gemini => Some(("600 s", "570 s")),
        _ => None,
    };
    if let Some((hard, ends)) = limit {
        out.push_str(&format!(
            "  long waits: {name} cuts calls at {hard}; ask-user ends them at {ends} with \"still open; call again\"\n"
        ));
    }
    (out, problem)
}

/// Runs `ask-user doctor`: exit 0 when no configured host has a problem, else 1.
pub(crate) fn run(_args: &DoctorArgs) -> Ended {
    let homes = match Homes::from_env() {
        Ok(homes) => homes,
        Err(message) => return Ended::Usage(message),
    };
    let mut stdout = crate::install_route::doctor_line();
    let mut any = false;
    for host in SetupHost::ALL {
        let (text, problem) = report(host, &homes);
        stdout.push_str(&text);
        any |= problem;
    }
    Ended::Printed {
        stdout,
        status: u8::from(any),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_commands_split_as_sh_splits_them() {
        assert_eq!(
            shell_words("'/opt/it'\\''s/ask-user' hook claude-code --wait 59m '--hub' 'https://h'"),
            [
                "/opt/it's/ask-user",
                "hook",
                "claude-code",
                "--wait",
                "59m",
                "--hub",
                "https://h"
            ]
        );
        assert_eq!(shell_words("  a\\ b ''  c"), ["a b", "", "c"]);
    }
}
