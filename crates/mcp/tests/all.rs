//! Integration tests of the MCP server with real third-party clients (one test binary).
//!
//! - `suite::python`: PyPI `mcp` 2.3.0 (`.venv`, made by `scripts/setup`) in `legacy` mode
//!   (initialize handshake, protocol 2025-11-25: `elicitation/create` pushed during the call)
//!   and `auto` mode (`server/discover`, protocol 2026-07-28: an input-required result), over
//!   stdio and streamable HTTP;
//! - `suite::inspector`: npm `@modelcontextprotocol/inspector` CLI (`tools/node`);
//! - `suite::concurrent`: 100 HTTP sessions each holding a pending question;
//! - `suite::listing`: the tool listing's bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
