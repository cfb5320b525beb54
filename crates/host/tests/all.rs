//! All integration tests of ask-user-host, in one binary.
//!
//! - `args`: the shared `--journal` and `--notify` flags;
//! - `journal`: the audit journal's lines, byte shapes, every outcome, write failures;
//! - `notify`: the attention command gets the request, never blocks the ask, is logged;
//! - `load`: many concurrent asks through fan-out each get their own answer (paused time);
//! - `faults`: an answerer that panics, a timeout while a batch is half answered.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
