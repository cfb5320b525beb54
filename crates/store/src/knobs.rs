//! Test knobs: environment variables that let tests with real processes shorten the lease
//! ([`crate::LEASE_TEST_ENV`]), switch the kernel file watch off ([`crate::WATCH_TEST_ENV`]),
//! lengthen the wait for the checkpoint at close ([`crate::CLOSE_WAIT_TEST_ENV`]),
//! set or switch off SQLite's safety scan ([`crate::SAFETY_SCAN_TEST_ENV`]) or make a process
//! abort at a named point ([`FAILPOINT_ENV`]).
//!
//! They are read only in builds with this crate's `test-knobs` cargo feature. The workspace's
//! tests turn it on through their dev-dependencies (a `cargo test` build), so the binary
//! `cargo install` or `cargo build --release` makes never reads them: there, [`var`] is `None`
//! and [`failpoint`] is `false`, and neither the names nor the code that reads them are in it.

/// **Test only** (feature `test-knobs`): `ASK_USER_TEST_FAILPOINT=NAME` makes the process abort
/// at the failpoint `NAME` ([`failpoint`]); e.g. `before-stdout` in `ask-user ask`, after the
/// outcome is stored and before it is printed.
pub const FAILPOINT_ENV: &str = "ASK_USER_TEST_FAILPOINT";

/// Whether this build reads the test knobs (the `test-knobs` feature).
pub const ENABLED: bool = cfg!(feature = "test-knobs");

/// The test knob `name`'s value: the environment variable, in a build with the `test-knobs`
/// feature; always `None` otherwise.
#[cfg(feature = "test-knobs")]
#[must_use]
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The test knob `name`'s value: always `None` in this build (no `test-knobs` feature).
#[cfg(not(feature = "test-knobs"))]
#[inline(always)]
#[must_use]
pub fn var(_name: &str) -> Option<String> {
    None
}

/// Whether the failpoint `name` is switched on ([`FAILPOINT_ENV`] names it), in a build with
/// the `test-knobs` feature; always `false` otherwise. The caller aborts (or fails) there.
#[inline(always)]
#[must_use]
pub fn failpoint(name: &str) -> bool {
    var(FAILPOINT_ENV).is_some_and(|v| v == name)
}
