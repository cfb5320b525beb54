//! `ask-user`: ask the human a question from any agent (docs/contract.md §7).
//!
//! This file only parses the command line (clap derive) and maps every result to an exit
//! status in one place ([`exit_status`]); each subcommand lives in its own module:
//!
//! - [`ask`]: one tool call, asked through the answerers chosen with `--via` (or `--answers`);
//! - [`check`]: decode and validate without asking anyone;
//! - [`schema`]: the model-facing definition, optionally wrapped for a provider;
//! - [`generated`]: shell completions and the man page, generated from this command line.
//!
//! `--via` names and `--answers` files are turned into answerers by `ask-user-via` (the
//! registry both hosts share); `--timeout`, `--journal` and `--notify` come from
//! `ask-user-host`.

mod ask;
mod check;
mod config_file;
mod doctor;
mod durable;
mod generated;
mod history;
mod hook;
mod hook_elicit;
mod hook_map;
mod hub;
mod hub_channels;
mod hub_url;
mod inbox;
mod inbox_view;
mod input;
mod install_route;
mod mcp;
mod schema;
mod setup;
mod web;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use schema::SchemaArgs;

const EXAMPLES: &str = "\
Examples:
  ask-user ask examples/deploy.json           ask in this terminal; the answer goes to stdout
  echo '{\"questions\":[{\"id\":\"go\",\"question\":\"Deploy now?\",\"options\":[\"Yes (Recommended)\",\"No\"]}]}' | ask-user ask
  ask-user ask --timeout 5m q.json > answer.json
  ask-user ask --answers answers.json q.json  answer from data instead of a human
  ask-user check q.json                       validate; print the canonical request
  ask-user schema --format anthropic          the tool definition for a provider

Exit status of `ask`: 0 answered, 1 answerer failed, 2 usage error, 3 invalid arguments,
4 dismissed, 5 timed out, 6 nobody can answer here, 7 sub-agent caller (--delegated-by),
130 aborted (SIGINT, SIGTERM, SIGHUP).
stdout carries only the model-facing text; logs and the question UI never touch it.";

/// Command line of `ask-user`.
#[derive(Debug, Parser)]
#[command(
    name = "ask-user",
    version,
    about = "Ask the human a question from any agent: the ask_user_question tool as a command.",
    after_help = EXAMPLES,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ask the human: run one ask_user_question call from JSON arguments and print exactly the
    /// model-facing text (the answer JSON or one `Error: …` line) on stdout.
    Ask(AskArgs),
    /// Decode and validate arguments without asking anyone: print the canonical request on
    /// stdout and each leniency applied on stderr (exit 0), or the model-facing error (exit 3).
    Check(CheckArgs),
    /// Print the tool definition: the canonical `{"name","description","parameters"}`
    /// (golden bytes) or wrapped for a provider.
    Schema(SchemaArgs),
    /// Serve ask_user_question to an MCP client (Claude Code, Codex, Gemini CLI, Cursor, …)
    /// over stdio, or streamable HTTP with --http; asks through the client's elicitation form,
    /// else the web page (or --via terminal).
    Mcp(ask_user_mcp::McpArgs),
    /// List the asks of the store, newest first: open ones, then closed ones (answered,
    /// dismissed, timed out, withdrawn).
    History(history::HistoryArgs),
    /// Answer, in this terminal, the questions agents asked elsewhere (`ask --via inbox`, or
    /// a caller that stopped waiting): the store's open asks, updated live.
    Inbox(inbox::InboxArgs),
    /// The hub: one inbox for every agent on every machine (serve, token, login-link).
    Hub(hub::HubArgs),
    /// Register `ask-user mcp` with an agent host (claude-code, codex, gemini, cursor): the
    /// absolute path of this binary, the host's timeouts and trust flags, keeping the user's
    /// other settings; `--print` shows instead of writing.
    Setup(setup::SetupArgs),
    /// Show what each configured agent host will see: its entry for ask-user, its trust
    /// flags, and the server started the way that host starts it (exit 1 on a problem).
    Doctor(doctor::DoctorArgs),
    /// Answer an agent host's own questions through ask-user (a hook command): reads the hook
    /// event on stdin (Claude Code: AskUserQuestion, ExitPlanMode, PermissionRequest,
    /// Elicitation; Codex: PermissionRequest) and prints the host's JSON; falls through unless
    /// `away` is on.
    Hook(hook::HookArgs),
    /// Whether hooks ask through ask-user (`on`: you are away) or fall through to the host's
    /// own dialogs (`off`).
    Away(hook::AwayArgs),
    /// Print a shell completion script: `ask-user completions bash > ~/.local/share/bash-completion/completions/ask-user`.
    Completions(CompletionsArgs),
    /// Print the man page (roff): `ask-user man > ~/.local/share/man/man1/ask-user.1`.
    Man,
}

/// Options of `ask-user completions`.
#[derive(Debug, clap::Args)]
struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Options of `ask-user ask`.
#[derive(Debug, clap::Args)]
struct AskArgs {
    /// File with the tool-call arguments (JSON); `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// Who asks, comma-separated; the first answer wins (names from `ask-user-via`).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "terminal",
        help = ask_user_via::help(VIA_LEAD),
        long_help = ask_user_via::long_help(VIA_LEAD),
    )]
    via: Vec<String>,
    /// Where `--via web` listens: a free loopback port by default; a LAN address (e.g.
    /// 0.0.0.0:8765 or 192.168.1.20:8765) lets a phone on the same network answer.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    web_addr: std::net::SocketAddr,
    /// Also print the web page's address on stderr. Without it the address goes only to the
    /// terminal (/dev/tty), never to stderr, which a harness may show to the model (whoever
    /// has the address can answer); with no terminal the page opens in the desktop's browser.
    #[arg(long)]
    print_url: bool,
    /// Answer from data instead of a human: a file holding {"answers":[…]} (the output shape).
    #[arg(long, value_name = "FILE", conflicts_with = "via")]
    answers: Option<PathBuf>,
    /// The caller is a sub-agent started by PARENT: refused before anyone is asked (exit 7).
    /// A harness sets ASK_USER_DELEGATED_BY in its sub-agents' environment.
    #[arg(long, value_name = "PARENT", env = "ASK_USER_DELEGATED_BY")]
    delegated_by: Option<String>,
    /// `--timeout DURATION`, `--journal FILE` (audit journal) and `--notify CMD` (attention
    /// command).
    #[command(flatten)]
    host: ask_user_host::HostArgs,
    /// `--store URL` and `--key KEY` (durable asks).
    #[command(flatten)]
    store: ask_user_host::durable::StoreArgs,
    /// `--hub URL` (env ASK_USER_HUB) and `--hub-token-file` (or env ASK_USER_HUB_TOKEN).
    #[command(flatten)]
    hub: hub::HubAskArgs,
}

/// The lead of the `--via` help, before the registry's names.
const VIA_LEAD: &str = "Who asks, comma-separated; the first answer wins";

/// Options of `ask-user check`.
#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// File with the tool-call arguments (JSON); `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
}

/// How a subcommand ended; [`exit_status`] turns it into the process's exit status.
#[derive(Debug)]
enum Ended {
    /// Text for stdout (no trailing newline added) and the exit status that goes with it.
    Printed { stdout: String, status: u8 },
    /// Stdout was already written (and flushed) by the subcommand; only the exit status is left.
    Written { status: u8 },
    /// A usage problem the human must fix (exit 2), e.g. an unknown `--via` name or an
    /// unreadable file; the message goes to stderr.
    Usage(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs();
    let ended = match cli.command {
        Command::Ask(args) => ask::run(args),
        Command::Check(args) => check::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Mcp(args) => mcp::run(args),
        Command::History(args) => history::run(&args),
        Command::Inbox(args) => inbox::run(&args),
        Command::Hub(args) => hub::run(args),
        Command::Setup(args) => setup::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Hook(args) => hook::run(args),
        Command::Away(args) => hook::away(&args),
        Command::Completions(args) => generated::completions(Cli::command(), args.shell),
        Command::Man => generated::man(Cli::command()),
    };
    exit_status(ended)
}

/// The one place where results become exit statuses (and stdout bytes).
fn exit_status(ended: Ended) -> ExitCode {
    match ended {
        Ended::Printed { stdout, status } => {
            // A closed stdout (e.g. `| head -c0`) is not our failure: the status still tells.
            let _ = write_stdout(stdout);
            ExitCode::from(status)
        }
        Ended::Written { status } => ExitCode::from(status),
        Ended::Usage(message) => {
            eprintln!("ask-user: {message}");
            ExitCode::from(2)
        }
    }
}

/// Writes `stdout` and flushes it: exactly the model-facing bytes when redirected; a person
/// reading a terminal also gets a line break so the shell prompt starts on its own line.
pub(crate) fn write_stdout(mut stdout: String) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if std::io::IsTerminal::is_terminal(&out) && !stdout.ends_with('\n') {
        stdout.push('\n');
    }
    out.write_all(stdout.as_bytes()).and_then(|()| out.flush())
}

/// Logs go to stderr (stdout carries the answer): `RUST_LOG` filters, default `warn`;
/// `NO_COLOR` turns colours off.
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color_enabled() && std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .try_init();
}

/// Whether colours are allowed: `NO_COLOR` set to anything non-empty turns them off
/// (<https://no-color.org>).
pub(crate) fn color_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
