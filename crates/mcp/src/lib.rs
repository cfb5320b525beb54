//! # ask-user-mcp
//!
//! The MCP server host for `ask_user_question` (docs/contract.md §7): one tool, served over stdio or
//! streamable HTTP with the official Rust SDK (rmcp), for any MCP host (Claude Code, Codex,
//! Gemini CLI, Cursor, …).
//!
//! - [`AskUserServer`] is the `ServerHandler`: `tools/list` carries the core's schema bytes
//!   with an `outputSchema`; `tools/call` decodes with the core, asks, and returns the
//!   model-facing text plus `structuredContent`, errors as `isError` results.
//! - Routing ([`Routing`]): a client that declares elicitation is asked through its own form —
//!   `elicitation/create` pushed during the call (protocol 2025-11-25 and earlier), or an
//!   input-required result (2026-07-28); otherwise the fallback answerers (web page, terminal,
//!   scripted), else the no-answerer outcome.
//! - [`serve_stdio`] and [`serve_http`] run it; [`McpArgs`] and [`run`] are the command line
//!   shared by `ask-user mcp` and the standalone `ask-user-mcp` binary.
//!
//! Depends on the core, the elicitation answerer and the other answerers; nothing depends on it
//! but the CLI.
#![deny(missing_docs)]

mod args;
mod clients;
mod delivery;
mod durable;
mod fallback;
mod input_required;
mod or_else;
mod serve;
mod server;
mod session;
mod stdio;
mod tool;

pub use args::{McpArgs, RunError, run};
pub use clients::{CODEX, GEMINI_CLI, MARGIN, STILL_OPEN_TEXT, call_limit, form_style, hard_limit};
pub use durable::caller_scope;
pub use fallback::NO_BROWSER_TEXT;
pub use input_required::INPUT_KEY;
pub use serve::{FOREIGN_HOST_TEXT, SESSION_IDLE, http_router, serve_http, serve_stdio};
pub use server::{AskUserServer, PROGRESS_INTERVAL, PROGRESS_MESSAGE, Routing};
pub use session::{CLOSE_GRACE, Linked, LinkedSessions, SessionLink};
pub use stdio::{Lines, MAX_LINE};
pub use tool::{call_result, tool};
