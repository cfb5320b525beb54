//! The integration tests of the `ask-user` binary that run in seconds, in one test binary (the
//! real agent hosts and the chaos runs are in `slow.rs`). Among them:
//!
//! - `cli`: everything that needs no terminal, run without a controlling terminal (`setsid`):
//!   `schema` bytes, `check` output and leniencies, every exit status and error text that
//!   can be reached without a human, `--answers`, no terminal → NO_PROVIDER;
//! - `terminal`: the question as a person uses it, in a real pseudo-terminal (tmux): keys,
//!   several questions, timeout, Ctrl-C, SIGTERM, hostile text, stdout holding only the answer,
//!   the terminal restored afterwards;
//! - `web`: `--via web` and `--via terminal,web` with the page in real headless Chromium (the
//!   web crate's browser scenarios), `--web-addr`;
//! - `exactly_once*`: an answer reaches the call it was given to, once, through kills and
//!   re-runs;
//! - `hub*`: the hub as it runs — real `hub serve` processes, real Postgres, real Chromium,
//!   channels against fakes of ntfy, Slack and Telegram.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

mod suite;
