//! A complete agent loop against an OpenAI-compatible chat-completions endpoint (DeepSeek's
//! API by default) whose `ask_user_question` calls are asked on this terminal.
//!
//! ```sh
//! DEEPSEEK_API_KEY=sk-… cargo run -p ask-user-rig --example agent_loop -- "Plan my deploy"
//! # any other endpoint: AGENT_BASE_URL=https://api.openai.com/v1 AGENT_API_KEY=… AGENT_MODEL=…
//! ```
//!
//! The loop itself is `ask_user_rig::agent_loop` (the code the end-to-end tests run); this file
//! only wires the terminal answerer and the environment.
use std::sync::Arc;

use ask_user_core::{AskUserQuestionTool, ExecutionContext};
use ask_user_rig::agent_loop::{AgentLoop, Endpoint};
use ask_user_terminal::Terminal;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = match args.join(" ") {
        task if task.trim().is_empty() => {
            "Help me set up a new web service. Ask me what you need to know first.".to_owned()
        }
        task => task,
    };
    let endpoint = Endpoint::from_env()?;
    let tool = AskUserQuestionTool::new(Arc::new(Terminal::new()));
    let messages = vec![
        json!({"role": "system", "content": "You are a helpful agent. When you need a decision or a fact from the user, call ask_user_question."}),
        json!({"role": "user", "content": task}),
    ];
    let finished = AgentLoop::new(endpoint, tool)
        .run(messages, &ExecutionContext::default())
        .await?;
    for message in &finished.messages {
        if message["role"] == "tool" {
            eprintln!(
                "tool result: {}",
                message["content"].as_str().unwrap_or_default()
            );
        }
    }
    println!("{}", finished.answer);
    Ok(())
}
