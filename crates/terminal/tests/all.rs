//! Integration tests of ask-user-terminal, in one binary.
//!
//! - `pty`: the answerer used as a library in a real pseudo-terminal (tmux): the test binary
//!   runs itself in a tmux pane in "child" mode (`ASK_USER_TERMINAL_CHILD`), and the parent
//!   drives it. Covers what the CLI tests cannot reach: a panic while the question is shown,
//!   and the cancellation token withdrawing the question.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

mod suite;
