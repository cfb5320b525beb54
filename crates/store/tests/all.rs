//! All integration tests of ask-user-store, in one binary:
//! - `conformance`: the one suite every backend (memory, SQLite, Postgres) must pass;
//! - `exactly_once`: the exactly-once rules (delivery compare-and-set, namespaces, scopes) on
//!   every backend;
//! - `sqlite`: the SQLite file itself — permissions, faults and their messages, crash recovery,
//!   schema versions;
//! - `processes`: many processes on one store (races, lock contention, cross-process waiting);
//! - `postgres`: the Postgres listener's reconnect and re-scan;
//! - `deleted`: a store file deleted or replaced under waiting asks;
//! - `errors`: messages that do not depend on a backend;
//! - `child`: the entry point of the child processes the others start.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

#[path = "suite/child.rs"]
mod child;
#[path = "suite/common.rs"]
#[macro_use]
mod common;
#[path = "suite/conformance.rs"]
mod conformance;
#[path = "suite/deleted.rs"]
mod deleted;
#[path = "suite/errors.rs"]
mod errors;
#[path = "suite/exactly_once.rs"]
mod exactly_once;
#[path = "suite/postgres.rs"]
mod postgres;
#[path = "suite/processes.rs"]
mod processes;
#[path = "suite/sqlite.rs"]
mod sqlite;
