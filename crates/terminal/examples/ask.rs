//! Asks the questions of a JSON file on this terminal and prints what the model would read.
//!
//! ```sh
//! cargo run -p ask-user-terminal --example ask -- examples/deploy.json
//! ```
use std::sync::Arc;

use ask_user_core::{AskUserQuestionTool, CancellationToken, ExecutionContext};
use ask_user_terminal::Terminal;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: ask FILE.json")?;
    let arguments = std::fs::read_to_string(path)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tool = AskUserQuestionTool::new(Arc::new(Terminal::new()));
    let outcome =
        runtime.block_on(tool.call(arguments, ExecutionContext::new(CancellationToken::new())));
    println!("{}", outcome.text());
    std::process::exit(outcome.exit_code());
}
