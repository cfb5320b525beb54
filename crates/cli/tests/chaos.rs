//! The chaos harness's short run (see `chaos_harness/mod.rs`): real agents, a real hub on SQLite, a
//! scripted human over HTTP, `kill -9` of agents and of the hub, SIGTERM, timeouts around the
//! answer. Nothing acknowledged may be lost, misdelivered or asked twice; nothing may hang.
//! The long run by hand: `scripts/chaos` (more agents, more seeds).

mod chaos_harness;
use chaos_harness as chaos;

#[test]
fn a_short_chaos_run_loses_nothing() {
    let config = chaos::Config::from_env();
    let (counts, latencies, ledger) = chaos::run(&config);
    let text = chaos::report(&config, &counts, &latencies, &ledger);
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
