//! All integration tests of ask-user-core, in one binary.
//!
//! - `decode`: every leniency and every violation text, input → exact result (table tests);
//! - `normalise`: the answer rules of docs/contract.md §4;
//! - `outcome`: every model-facing outcome text and code, through the tool;
//! - `definition`: the definition and its provider exports, byte for byte against golden files,
//!   and the strict exports against each provider's documented strict-mode rules;
//! - `strict`: arguments a strict-mode model emits decode to the same request as the lenient
//!   form;
//! - `fan_out`: first answer wins, losers withdrawn, unavailable skipped, timeouts;
//! - `properties`: proptest over decode, normalise and render.
//!
//! These need Rust alone. The tests that need Node or the Python venv (the differential test
//! against the published reference, docs/tool-catalog.md and its token counts, the exports
//! checked with the providers' SDKs) live in `crates/conformance`.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
