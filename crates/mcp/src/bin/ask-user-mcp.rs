//! `ask-user-mcp`: the MCP server alone (the same as `ask-user mcp`), for hosts and tests that
//! want only the server. Logs go to stderr; stdout carries the protocol.

use clap::Parser;

/// Serve the ask_user_question tool to an MCP client over stdio or streamable HTTP.
#[derive(Debug, Parser)]
#[command(name = "ask-user-mcp", version)]
struct Cli {
    #[command(flatten)]
    args: ask_user_mcp::McpArgs,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Colours only for a person reading a terminal: a log file or a test's pipe gets plain
    // text. `NO_COLOR` (non-empty) turns them off too.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ASK_USER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    match ask_user_mcp::run(Cli::parse().args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(
            error @ (ask_user_mcp::RunError::Usage(_)
            | ask_user_mcp::RunError::Store(_)
            | ask_user_mcp::RunError::Hub(_)),
        ) => {
            eprintln!("ask-user-mcp: {error}");
            std::process::ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("ask-user-mcp: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
