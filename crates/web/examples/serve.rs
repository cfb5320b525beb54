//! Serves one demo batch of questions on the web page and prints the model-facing result.
//!
//! Run: `cargo run -p ask-user-web --example serve [ADDR] [ARGUMENTS_JSON]`
//! (ADDR defaults to 127.0.0.1:0). The URL and a QR code go to stderr.

use std::sync::Arc;

use ask_user_core::{AskUserQuestionTool, ExecutionContext};
use ask_user_web::{WebAnswerer, WebConfig};

const DEMO: &str = include_str!("demo.json");

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut config = WebConfig::default();
    if let Some(addr) = args.next() {
        config.addr = addr.parse().map_err(std::io::Error::other)?;
    }
    let arguments = args.next().unwrap_or_else(|| DEMO.to_owned());
    let web = WebAnswerer::start(config).await?;
    eprintln!("{}", web.qr_code());
    eprintln!("Answer at {}", web.url());
    let tool = AskUserQuestionTool::new(Arc::new(web));
    let outcome = tool.call(arguments, ExecutionContext::default()).await;
    println!("{}", outcome.text());
    Ok(())
}
