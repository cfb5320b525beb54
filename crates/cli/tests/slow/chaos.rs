//! The chaos harness's short runs (see `chaos_harness/mod.rs`): real agents, a real hub — on
//! SQLite, and two replicas on a throwaway Postgres cluster — a scripted human over HTTP,
//! `kill -9` of agents and of hub replicas, `pg_ctl restart -m immediate`, SIGTERM, timeouts
//! around the answer. Nothing acknowledged may be lost, misdelivered or asked twice; nothing may
//! hang. The long run by hand: `scripts/chaos`.

use ask_user_test_support::postgres as pg;

use super::chaos_harness as chaos;

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
            counts.hung,
            counts.told_sent_printed_else
        ),
        (0, 0, 0, 0, 0),
        "{text}\n  replay: CHAOS_SEED={} scripts/chaos",
        config.seed
    );
}

// The short runs draw every fault (`Config::short`): agents killed -9 and sent SIGTERM, the hub
// (or one replica at a time) killed -9 and restarted, `--timeout`s expiring around the human's
// answers, and on Postgres `pg_ctl restart -m immediate`. The long run: `scripts/chaos`.

#[test]
fn a_short_chaos_run_on_sqlite_loses_nothing() {
    check(&chaos::Config::from_env(), None);
}

#[test]
fn a_short_chaos_run_on_two_postgres_replicas_loses_nothing() {
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
