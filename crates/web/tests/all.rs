//! Integration tests of ask-user-web, one binary:
//!
//! - `suite::http`: the router in-process (`oneshot`): access checks, headers, every refusal
//!   text, answering, dismissing, withdrawing, the event stream;
//! - `suite::server`: the real server on a socket: URL, QR code, shutdown;
//! - `suite::browser`: the page in real headless Chromium driven by `tests/browser/*.cjs`.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
