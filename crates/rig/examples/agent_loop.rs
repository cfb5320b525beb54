//! A complete agent loop against an OpenAI-compatible chat-completions endpoint (DeepSeek's
//! API by default) whose `ask_user_question` calls are asked on this terminal.
//!
//! ```sh
//! DEEPSEEK_API_KEY=sk-… cargo run -p ask-user-rig --example agent_loop -- "Plan my deploy"
//! # any other endpoint: AGENT_BASE_URL=https://api.openai.com/v1 AGENT_API_KEY=… AGENT_MODEL=…
//! ```
//!
//! Transient failures are retried; when the loop stops anyway, the conversation so far (with
//! the answers you gave) is saved to a file whose name is printed, and
//! `AGENT_RESUME=that-file cargo run … --example agent_loop` goes on from there.
//!
//! The loop itself is `ask_user_rig::agent_loop` (the code the end-to-end tests run); this file
//! only wires the terminal answerer and the environment.
use std::process::ExitCode;
use std::sync::Arc;

use ask_user_core::{AskUserQuestionTool, ExecutionContext};
use ask_user_rig::agent_loop::{AgentLoop, Endpoint};
use ask_user_terminal::Terminal;
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("agent_loop: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let endpoint = Endpoint::from_env().map_err(|e| e.to_string())?;
    let messages = match std::env::var_os("AGENT_RESUME") {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.to_string_lossy()))?;
            serde_json::from_str::<Vec<Value>>(&text).map_err(|e| {
                format!(
                    "{} is not a saved conversation: {e}",
                    path.to_string_lossy()
                )
            })?
        }
        None => first_messages(),
    };
    let tool = AskUserQuestionTool::new(Arc::new(Terminal::new()));
    match AgentLoop::new(endpoint, tool)
        .run(messages, &ExecutionContext::default())
        .await
    {
        Ok(finished) => {
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
        Err(stopped) => {
            // A new file only its user can read: the conversation holds the answers given.
            let saved = ask_user_rig::agent_loop::save_conversation(
                &std::env::temp_dir(),
                &stopped.messages,
            )
            .map_err(|e| e.to_string());
            Err(match saved {
                Ok(path) => format!(
                    "{stopped}\nthe conversation so far (with your answers) is saved in {}; \
                     run again with AGENT_RESUME={} to go on",
                    path.display(),
                    path.display()
                ),
                Err(why) => format!("{stopped}\n(the conversation could not be saved: {why})"),
            })
        }
    }
}

fn first_messages() -> Vec<Value> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = match args.join(" ") {
        task if task.trim().is_empty() => {
            "Help me set up a new web service. Ask me what you need to know first.".to_owned()
        }
        task => task,
    };
    vec![
        json!({"role": "system", "content": "You are a helpful agent. When you need a decision or a fact from the user, call ask_user_question."}),
        json!({"role": "user", "content": task}),
    ]
}
