//! `ask-user hook HOST` and `ask-user away on|off|status` (docs/contract.md §7 "Host hooks"):
//! an agent host's own questions (Claude Code's AskUserQuestion and plan approvals, permission
//! prompts of Claude Code and Codex) answered through ask-user's answerers, durable like every
//! ask, built on the same call assembly as `ask` ([`ask_user_host::HostCall`]).
//!
//! - The hook event comes on stdin; [`crate::hook_map`] turns it into a request and the outcome
//!   into the host's JSON on stdout (exit 0). An event it does not answer falls through: nothing
//!   is printed and the host shows its own dialog.
//! - **Away switch**: the hook asks only while the human is away (`ask-user away on`, a file in
//!   the state directory) or with `--always` (a headless `claude -p` run); otherwise it falls
//!   through at once and the human answers in the host's own dialog.
//! - **Durable**: the call key is the host, the session id and the tool-use id (or the tool and
//!   its input), so a hook killed at its timeout leaves the question open and the same event
//!   asked again gets the answer given meanwhile.
//! - Never the terminal: the host owns it (`--via terminal` is refused).
//! - Who asks: the host's name (`claude-code`, `codex`) and its session id, so the inbox groups
//!   the question under the host instead of "unnamed agent".

use std::path::PathBuf;
use std::sync::Arc;

use ask_user_core::{CancellationToken, ExecutionContext, FirstAnswer, Outcome};
use ask_user_host::HostCall;

use crate::hook_map::{self, HookHost};
use crate::{Ended, ask, durable, input, web};

/// The refusal of `--via terminal` for a hook.
pub(crate) const NO_TERMINAL: &str =
    "hook: --via terminal is not allowed: the agent host owns this terminal";

/// Options of `ask-user hook`.
#[derive(Debug, clap::Args)]
pub(crate) struct HookArgs {
    /// The agent host whose hook event is on stdin.
    #[arg(value_enum)]
    host: HookHost,
    /// Ask even when the away switch is off (for headless runs such as `claude -p`).
    #[arg(long)]
    always: bool,
    /// Print the host's settings entries that run this hook (to merge into
    /// ~/.claude/settings.json) instead of reading a hook event.
    #[arg(long)]
    settings: bool,
    /// Who asks, comma-separated; the first answer wins (never `terminal`).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "inbox"
    )]
    via: Vec<String>,
    /// Answer from FILE (`{"answers":[…]}`, the output shape; the ids are the hook's own: `q1`,
    /// `q2`… for AskUserQuestion, `plan`, `permission`, `f1`… for a form) instead of a human: for
    /// tests and scripted runs. Nothing is stored; `--via` is not used.
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,
    /// Stop waiting after this long and leave the question open (the ask is detached, as when
    /// the host kills the hook): the model reads a deny saying it is still open, and asking
    /// again gets the human's answer given meanwhile. Set it inside the host's hook timeout.
    #[arg(long, value_name = "DURATION", value_parser = ask_user_host::parse_timeout)]
    wait: Option<std::time::Duration>,
    /// Where `--via web` listens.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    web_addr: std::net::SocketAddr,
    /// `--timeout DURATION`, `--journal FILE` and `--notify CMD`.
    #[command(flatten)]
    host_args: ask_user_host::HostArgs,
    /// `--store URL` (the call key comes from the hook event).
    #[command(flatten)]
    store: ask_user_host::durable::StoreArgs,
    /// `--hub URL` and `--hub-token`.
    #[command(flatten)]
    hub: crate::hub::HubAskArgs,
}

/// `ask-user away on|off|status`.
#[derive(Debug, clap::Args)]
pub(crate) struct AwayArgs {
    /// `on`: hooks ask through ask-user; `off`: the host's own dialogs; `status`: print which.
    #[arg(value_enum, default_value = "status")]
    switch: Switch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
    Status,
}

/// The away switch's file: `away` beside the default store, in the state directory.
fn away_file() -> Result<PathBuf, String> {
    ask_user_store::default_sqlite_path()
        .map(|path| path.with_file_name("away"))
        .map_err(|e| e.to_string())
}

pub(crate) fn is_away() -> bool {
    away_file().is_ok_and(|path| path.exists())
}

/// Runs `ask-user away`.
pub(crate) fn away(args: &AwayArgs) -> Ended {
    let path = match away_file() {
        Ok(path) => path,
        Err(message) => return Ended::Usage(message),
    };
    let result = match args.switch {
        Switch::On => path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, "")),
        Switch::Off => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        Switch::Status => Ok(()),
    };
    if let Err(e) = result {
        return Ended::Usage(format!("away: {}: {e}", path.display()));
    }
    let now = if is_away() {
        "away: on (hooks ask through ask-user)\n"
    } else {
        "away: off (hooks fall through to the host's own dialogs)\n"
    };
    Ended::Printed {
        stdout: now.to_owned(),
        status: 0,
    }
}

/// How long the host lets the hook run (seconds): Claude Code's default is 600 s; a hook it
/// kills loses the reply it was about to give, so the settings give a human an hour.
pub(crate) const HOOK_TIMEOUT_SECS: u64 = 3600;
/// The hook's `--wait` inside [`HOOK_TIMEOUT_SECS`]: it stops waiting first and tells the model
/// the question is still open (a retry gets the answer), instead of being killed mid-reply.
pub(crate) const HOOK_WAIT: &str = "59m";

/// The hook entries of a host's settings that run `binary` as this hook (what `ask-user hook
/// HOST --settings` prints): every hook the host has, asking in `ask-user inbox`.
pub(crate) fn settings_entries(host: HookHost, binary: &std::path::Path) -> serde_json::Value {
    use crate::setup::HookSet;
    settings_entries_for(
        host,
        binary,
        &[HookSet::Questions, HookSet::Plans, HookSet::Permissions],
        &[],
        "ask-user: waiting for your answer in `ask-user inbox`",
    )
}

/// Single-quotes `word` for `sh`.
fn shell_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The hook entries that run `binary` as this hook for the chosen `hooks` (those the host
/// has), with `flags` after `--wait` (e.g. the hub's); Claude Code shows `waiting` while one
/// runs (its `statusMessage`), so its screen says where the question is.
pub(crate) fn settings_entries_for(
    host: HookHost,
    binary: &std::path::Path,
    hooks: &[crate::setup::HookSet],
    flags: &[String],
    waiting: &str,
) -> serde_json::Value {
    use crate::setup::HookSet;
    let mut line = format!(
        "{} hook {} --wait {HOOK_WAIT}",
        shell_quoted(&binary.display().to_string()),
        host.name()
    );
    for flag in flags {
        line.push(' ');
        line.push_str(&shell_quoted(flag));
    }
    let mut handler = serde_json::json!({
        "type": "command",
        "command": line,
        "timeout": HOOK_TIMEOUT_SECS,
    });
    if host == HookHost::ClaudeCode {
        handler["statusMessage"] = serde_json::Value::String(waiting.to_owned());
    }
    let group =
        |matcher: &str| serde_json::json!([{"matcher": matcher, "hooks": [handler.clone()]}]);
    let mut events = serde_json::Map::new();
    if host == HookHost::ClaudeCode {
        let tools: Vec<&str> = [
            (HookSet::Questions, "AskUserQuestion"),
            (HookSet::Plans, "ExitPlanMode"),
        ]
        .into_iter()
        .filter(|(set, _)| hooks.contains(set))
        .map(|(_, tool)| tool)
        .collect();
        if !tools.is_empty() {
            events.insert("PreToolUse".to_owned(), group(&tools.join("|")));
        }
    }
    if hooks.contains(&HookSet::Permissions) {
        events.insert("PermissionRequest".to_owned(), group("*"));
    }
    serde_json::json!({"hooks": events})
}

/// Runs `ask-user hook HOST`.
pub(crate) fn run(args: HookArgs) -> Ended {
    if args.settings {
        let binary = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("ask-user"));
        let entries = settings_entries(args.host, &binary);
        return Ended::Printed {
            stdout: format!("{entries:#}\n"),
            status: 0,
        };
    }
    let text = match input::read(None) {
        Ok(text) => text,
        Err(message) => return Ended::Usage(message),
    };
    let ask = match hook_map::parse(args.host, &text) {
        Ok(Some(ask)) => ask,
        Ok(None) => return fall_through(),
        Err(message) => return Ended::Usage(format!("hook: {message}")),
    };
    if !args.always && !is_away() {
        return fall_through();
    }
    if args.via.iter().any(|v| v.trim() == "terminal") {
        return Ended::Usage(NO_TERMINAL.to_owned());
    }
    let journal = match args.host_args.open_journal() {
        Ok(journal) => journal.map(Arc::new),
        Err(e) => return Ended::Usage(e.to_string()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Ended::Usage(format!("cannot start: {e}")),
    };
    // The host kills a hook at its timeout (SIGTERM): the ask is detached, not lost. The
    // handlers are in place before the store is opened (which can wait on a lock).
    let cancel = CancellationToken::new();
    ask::cancel_on_signals(cancel.clone());
    let call = match &args.answers {
        // Scripted answers involve no human and keep nothing: no store (as `ask --answers`).
        Some(path) => match ask_user_via::answers_file(path) {
            Ok(scripted) => HostCall::builder(scripted)
                .notify(args.host_args.notify.clone())
                .journal(journal)
                .timeout(args.host_args.timeout)
                .build(),
            Err(e) => return Ended::Usage(e.to_string()),
        },
        None => match asking_call(&args, &ask, journal, &runtime, &cancel) {
            Ok(Some(call)) => call,
            Ok(None) => {
                // A signal while the store opened: nothing was stored or asked.
                runtime.shutdown_background();
                return Ended::Written { status: 130 };
            }
            Err(message) => return Ended::Usage(message),
        },
    };
    runtime.block_on(async {
        let asked = call.call(
            ask.arguments.as_str(),
            ExecutionContext::new(cancel.clone()),
        );
        let (asked, stopped) = waiting(asked, args.wait, &cancel).await;
        if stopped && matches!(asked.outcome(), Outcome::Aborted) {
            // Detached and undelivered: the model's retry re-attaches and gets the answer.
            tracing::info!("hook stopped waiting; the question stays open");
            let _ = crate::write_stdout(hook_map::still_open(&ask));
            return;
        }
        if let Some(code) = asked.outcome().code() {
            tracing::info!(code = code.as_str(), "hook ask ended without an answer");
        }
        let mut stdout =
            |outcome: &Outcome| crate::write_stdout(hook_map::reply(&ask, outcome)).is_ok();
        let _ = asked.deliver(&mut stdout).await;
    });
    Ended::Written { status: 0 }
}

/// Awaits `asked`, cancelling it (the ask is detached, still open) after `wait`; says whether
/// the wait ran out.
async fn waiting<F: std::future::Future>(
    asked: F,
    wait: Option<std::time::Duration>,
    cancel: &CancellationToken,
) -> (F::Output, bool) {
    let Some(wait) = wait else {
        return (asked.await, false);
    };
    tokio::pin!(asked);
    tokio::select! {
        done = &mut asked => (done, false),
        () = tokio::time::sleep(wait) => {
            cancel.cancel();
            (asked.await, true)
        }
    }
}

/// The call asking a human through `--via` (and the hub), durable in the store.
fn asking_call(
    args: &HookArgs,
    ask: &hook_map::HookAsk,
    journal: Option<Arc<ask_user_host::Journal>>,
    runtime: &tokio::runtime::Runtime,
    cancel: &CancellationToken,
) -> Result<Option<HostCall>, String> {
    let hub = crate::hub::client_config(&args.hub, Some(&ask.key))?;
    let via = crate::hub::via_names(hub.is_some(), &args.via);
    let show = |page, addr| web::show(page, addr, false);
    let mut options = ask_user_via::Options::new(args.web_addr).with_show_web(&show);
    options.durable = true;
    options.timeout = args.host_args.timeout;
    // As `ask`: through a hub, the local ask is in the token's namespace, and the hub hears
    // "delivered" only after the host's reply was written (HostCall's order).
    let through_hub = hub.is_some();
    let namespace = match &hub {
        Some(hub) => ask_user_store::Namespace::of_hub_token(hub.token.expose()),
        None => ask_user_host::durable::local_namespace(),
    };
    let upstream = hub.as_ref().map(|h| h.upstream.clone());
    options.hub = hub;
    let answerers = ask_user_via::build(&via, &options).map_err(|e| e.to_string())?;
    let mut store = args.store.clone();
    store.key = Some(ask.key.clone());
    // Who asks, in the inbox and on the hub: the agent host and its session, not "unnamed".
    let mut asker = ask_user_host::durable::local_asker(Some(args.host.name().to_owned()));
    if asker.session.is_none() {
        asker.session.clone_from(&ask.session);
    }
    let opening = durable::open_as(&store, &via, through_hub, namespace, asker);
    let Some(durable) = runtime.block_on(ask::until_cancelled(cancel, opening)) else {
        return Ok(None);
    };
    let durable = durable?;
    let mut call = HostCall::builder(Arc::new(FirstAnswer::new(answerers)))
        .notify(args.host_args.notify.clone())
        .journal(journal)
        .durable(Some(durable))
        .timeout(args.host_args.timeout);
    if let Some(upstream) = upstream {
        call = call.acknowledge(Arc::new(ask::HubDelivered(upstream)));
    }
    Ok(Some(call.build()))
}

/// Nothing printed, exit 0: the host goes on with its own dialog.
fn fall_through() -> Ended {
    Ended::Printed {
        stdout: String::new(),
        status: 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_run_the_hook_by_absolute_path_with_a_budget_inside_the_hooks_timeout() {
        let entries = settings_entries(
            HookHost::ClaudeCode,
            std::path::Path::new("/opt/it's/ask-user"),
        );
        let command = "'/opt/it'\\''s/ask-user' hook claude-code --wait 59m";
        let handler = serde_json::json!({"type": "command", "command": command, "timeout": 3600,
            "statusMessage": "ask-user: waiting for your answer in `ask-user inbox`"});
        assert_eq!(
            entries,
            serde_json::json!({"hooks": {
                "PreToolUse": [{"matcher": "AskUserQuestion|ExitPlanMode", "hooks": [handler]}],
                "PermissionRequest": [{"matcher": "*", "hooks": [handler]}],
            }})
        );
        assert!(
            ask_user_core::time::parse_duration(HOOK_WAIT)
                .unwrap()
                .as_secs()
                < HOOK_TIMEOUT_SECS
        );
    }
}
