//! All integration tests of ask-user-core, in one binary.
//!
//! - `decode`: every leniency and every violation text, input → exact result (table tests);
//! - `normalise`: the answer rules of docs/contract.md §4;
//! - `outcome`: every model-facing outcome text and code, through the tool;
//! - `definition`: the definition and its provider exports, byte for byte against golden files;
//! - `fan_out`: first answer wins, losers withdrawn, unavailable skipped, timeouts;
//! - `differential`: rendering byte parity with the published reference (node);
//! - `properties`: proptest over decode, normalise and render;
//! - `catalog`: docs/tool-catalog.md is generated from the definition and kept fresh.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
