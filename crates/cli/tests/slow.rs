//! The integration tests of the `ask-user` binary that take minutes, in one test binary:
//!
//! - `hosts`, `hosts_tui`: the real agent hosts (Claude Code, Codex, Gemini CLI from npm) in a
//!   network namespace with only loopback, against a fake model API, with `ask-user mcp` as
//!   their MCP server — headless and in their interactive terminal UIs;
//! - `hooks`, `hooks_human`: `ask-user hook` answering the hosts' own prompts, with the human
//!   in `ask-user inbox` in a real terminal;
//! - `chaos`: the chaos harness's short runs (real processes killed and restarted around the
//!   human's answers).
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

#[path = "slow/mod.rs"]
mod suite;
