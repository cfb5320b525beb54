//! `ask-user mcp`: the MCP server (crate `ask-user-mcp`), over stdio or `--http ADDR`.

use ask_user_mcp::{McpArgs, RunError};

use crate::Ended;

/// Runs the server until the client closes stdio (or, over HTTP, until interrupted).
/// stdout carries the protocol; everything else goes to stderr.
pub(crate) fn run(args: McpArgs) -> Ended {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return failed(&RunError::Io(e)),
    };
    match runtime.block_on(ask_user_mcp::run(args)) {
        Ok(()) => Ended::Printed {
            stdout: String::new(),
            status: 0,
        },
        Err(RunError::Usage(e)) => Ended::Usage(e.to_string()),
        Err(RunError::Store(e) | RunError::Hub(e)) => Ended::Usage(e),
        Err(error) => failed(&error),
    }
}

fn failed(error: &RunError) -> Ended {
    eprintln!("ask-user: {error}");
    Ended::Printed {
        stdout: String::new(),
        status: 1,
    }
}
