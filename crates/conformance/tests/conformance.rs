//! The tests of ask-user-core that need more than Rust, in one binary:
//!
//! - `differential`: rendering and validation against the published TypeScript reference
//!   (Node, `tools/node`);
//! - `sdk`: every provider export validated with the provider's own SDK types (PyPI
//!   `openai`, `anthropic`, `google-genai`, `mcp`, pinned in `tools/requirements.txt`), and
//!   strict-mode arguments against the strict schemas with `jsonschema`;
//! - `catalog`: docs/tool-catalog.md generated from the definition with token counts
//!   (DeepSeek-V3 tokenizer in the venv, o200k via tiktoken-rs), and the token budget.
//! - `harness_ts`: the TypeScript binding (`bindings/node`) as the `userQuestions` provider of
//!   the published harness tool, through a real hub and Chromium (Node, `bindings/node`).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
