//! # ask-user-rig
//!
//! `ask_user_question` from any Rust agent, with no glue of your own:
//!
//! - [`AskUser`]: the tool for a [rig](https://docs.rs/rig-core/0.44) agent (rig-core 0.44's
//!   `Tool`). An answer is the tool's output; every error outcome is a rig tool error whose
//!   model-visible text is exactly the core's `Error: …` line ([`AskUserError`]).
//! - [`agent_loop`] (feature `agent-loop`, on by default): a complete, minimal loop against an
//!   OpenAI-compatible chat-completions endpoint (DeepSeek's API by default) over reqwest,
//!   which `examples/agent_loop.rs` runs with the terminal answerer.
//!
//! ```no_run
//! use ask_user_rig::AskUser;
//! use ask_user_terminal::Terminal;
//! use rig_agent::AgentBuilder;
//! use rig_core::providers::openai::OpenAIConfig;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAIConfig::new("sk-…").connect(rig_reqwest::shared()).chat("gpt-5.2");
//! let agent = AgentBuilder::new(model).tool(AskUser::new(Terminal::new())).build();
//! println!("{}", agent.prompt("Set up the database for me").max_turns(4).await?);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

#[cfg(feature = "agent-loop")]
pub mod agent_loop;
mod tool;

pub use tool::{AskUser, AskUserError};
