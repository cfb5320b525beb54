//! Integration tests of ask-user-channels, one binary (see `suite/`):
//! - `fake_ntfy`: a FAKE ntfy server (documented API subset), not a test;
//! - `support`: loopback servers, a store with an ask, waiting with deadlines;
//! - `ntfy`: the ntfy channel end to end: dispatcher → fake ntfy → tap → store;
//! - `tokens`: the token table on its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

mod suite;
