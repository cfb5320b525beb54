//! The chaos harness's short runs (see `chaos_harness/mod.rs`): real agents, a real hub — on
//! SQLite, and two replicas on a throwaway Postgres cluster — a scripted human over HTTP,
//! `kill -9` of agents and of hub replicas, `pg_ctl restart -m immediate`, SIGTERM, timeouts
//! around the answer. Nothing acknowledged may be lost, misdelivered or asked twice; nothing may
//! hang. The long run by hand: `scripts/chaos`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

#[path = "../../store/tests/suite/common.rs"]
#[allow(dead_code)]
mod pg;

mod chaos_harness;
use chaos_harness as chaos;

use std::sync::Arc;
use std::time::Duration;

fn check(config: &chaos::Config, restart: Option<Arc<dyn Fn() + Send + Sync>>) {
    let (counts, latencies, ledger) = chaos::run(config, restart);
    let text = chaos::report(config, &counts, &latencies, &ledger);
    println!("{text}");
    assert_eq!(
        (
            counts.lost,
            counts.misdelivered,
            counts.asked_twice,
            counts.hung
        ),
        (0, 0, 0, 0),
        "{text}\n  replay: CHAOS_SEED={} scripts/chaos",
        config.seed
    );
}

// The full runs find answers lost while these faults are still open (docs/hardening.md; the
// known cases): a `--timeout` or SIGTERM landing at the human's answer prints the timeout or
// "aborted" although the hub said "sent", and the retry asks again (chaos seed 3, agent 29;
// Postgres seed 1, agent 3); an agent started while the hub restarts exits 6 after its question
// reached the hub (seed 3, agent 31); an agent hangs past its `--timeout` while replicas and
// Postgres restart (Postgres seed 1, agent 1). Until they are fixed the default run leaves those
// faults out; `scripts/chaos` (and `cargo test -p ask-user --test chaos -- --ignored`) runs
// them all.

#[test]
fn a_short_chaos_run_on_sqlite_loses_nothing() {
    check(&chaos::Config::from_env().without_open_findings(), None);
}

#[test]
fn a_short_chaos_run_on_two_postgres_replicas_loses_nothing() {
    let cluster = pg::Cluster::start();
    let mut config = chaos::Config::from_env().without_open_findings();
    config.postgres = Some(cluster.url.clone());
    // One replica at a time is killed -9 and restarted; agents know both.
    config.kill_hub_every = Some(Duration::from_secs(3));
    check(&config, None);
}

#[test]
#[ignore = "finds the open findings named above; run by scripts/chaos"]
fn every_fault_on_sqlite() {
    check(&chaos::Config::from_env(), None);
}

#[test]
#[ignore = "finds the open findings named above; run by scripts/chaos"]
fn every_fault_on_two_postgres_replicas() {
    let cluster = Arc::new(pg::Cluster::start());
    let mut config = chaos::Config::from_env();
    config.postgres = Some(cluster.url.clone());
    config.restart_postgres_every = Some(Duration::from_secs(4));
    let restart: Arc<dyn Fn() + Send + Sync> = {
        let cluster = cluster.clone();
        Arc::new(move || cluster.restart_with("immediate"))
    };
    check(&config, Some(restart));
}
