//! The simulation in the default test run: a few thousand seeds, each checked against every
//! invariant; a failure names its seed and the command that replays it.

use ask_user_sim::plan::Faults;
use ask_user_sim::{replay_command, run_seed_with};

/// Seeds run by the default test run (a few seconds in a debug build).
const SEEDS: u64 = 3000;

/// The faults the default run draws: every one (`scripts/sim` runs more seeds).
const FAULTS: Faults = Faults::ALL;

fn failures(seeds: impl Iterator<Item = u64>, faults: Faults) -> Vec<String> {
    seeds
        .map(|seed| run_seed_with(seed, faults))
        .filter(|r| !r.violations.is_empty())
        .map(|r| {
            let broken: Vec<String> = r.violations.iter().map(ToString::to_string).collect();
            format!(
                "{}\n    {}\n    replay: {}",
                r.plan,
                broken.join("\n    "),
                replay_command(r.plan.seed, faults)
            )
        })
        .collect()
}

fn assert_holds(seeds: impl Iterator<Item = u64>, faults: Faults) {
    let failed = failures(seeds, faults);
    assert!(
        failed.is_empty(),
        "{} seeds broke an invariant:\n{}",
        failed.len(),
        failed.into_iter().take(20).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn thousands_of_seeds_hold_every_invariant() {
    assert_holds(0..SEEDS, FAULTS);
}

#[test]
fn a_seed_replays_the_same_run() {
    for seed in 0..200 {
        let (a, b) = (
            run_seed_with(seed, Faults::ALL),
            run_seed_with(seed, Faults::ALL),
        );
        let sketch = |r: &ask_user_sim::Report| {
            let runs: Vec<_> = r
                .runs
                .iter()
                .map(|run| {
                    (
                        run.caller,
                        run.retry,
                        run.ask,
                        run.opened,
                        run.printed.clone(),
                        run.ended,
                    )
                })
                .collect();
            (runs, r.acks.clone(), r.violations.clone())
        };
        assert_eq!(sketch(&a), sketch(&b), "seed {seed} ran two ways");
    }
}

/// An answer stored while the budget's own write waits wins: it is printed, not the timeout
/// (the timeout used to be printed and the answer marked delivered, so the retry asked again).
#[test]
fn seed_71_the_answer_that_won_the_store_beats_the_budget() {
    assert_holds([71, 58].into_iter(), Faults::ALL);
}

/// The same with SIGTERM: the answer stays undelivered for the retry.
#[test]
fn seed_5_the_answer_that_won_the_store_beats_sigterm() {
    assert_holds([5].into_iter(), Faults::ALL);
}

/// The budget runs out while the answer is being stored: the call ends within its bound.
#[test]
fn seed_63_a_budget_during_the_answer_write_does_not_hang() {
    assert_holds([63].into_iter(), Faults::ALL);
}

/// The process's own answerer stores an answer that the store's follower sees first: no
/// deadlock between the two.
#[test]
fn seed_59_an_answer_seen_twice_does_not_hang() {
    assert_holds([59].into_iter(), Faults::ALL);
}

/// Two live callers with the same question in one scope are two asks.
#[test]
fn seed_6_two_live_callers_are_never_merged() {
    assert_holds([6].into_iter(), Faults::ALL);
}

/// A caller killed with `kill -9` while it waits, answered after: its immediate retry (same
/// identity, same question, within the dead caller's lease) collects the answer (the dead
/// caller's lease made its ask look live, so the retry asked again).
#[test]
fn seed_431_a_killed_callers_retry_collects_its_answer() {
    assert_holds([431].into_iter(), FAULTS);
}

/// SIGTERM while the detach write is slow and an answer arrives: the process going away prints
/// `ASK_ABORTED` and leaves the answer to the retry (it printed the answer, left it
/// undelivered, and a second caller of the same identity printed it again).
#[test]
fn seed_1168_a_call_going_away_never_prints_the_answer_its_retry_gets() {
    assert_holds([1168, 31012, 38882].into_iter(), FAULTS);
}
