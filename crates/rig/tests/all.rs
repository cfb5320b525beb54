//! Integration tests of ask-user-rig, one binary. Every test runs a whole agent turn over
//! real HTTP against `suite::fake_model`, an in-process OpenAI-compatible chat-completions
//! server scripted like a model. That server is the only fake (no model can run here); the
//! human's answers come from the real scripted answerer (`ask-user-scripted`) or, for the
//! example, real keys in a real terminal; the HTTP clients, the loop and rig's agent runtime
//! are the real ones.
//!
//! - `suite::agent_loop`: `ask_user_rig::agent_loop` (the code `examples/agent_loop.rs` runs);
//! - `suite::rig`: `AskUser` in a rig agent with rig's OpenAI chat-completions client;
//! - `suite::example`: the built `examples/agent_loop.rs` in a real terminal (tmux), answered
//!   with real keys by the terminal answerer.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
