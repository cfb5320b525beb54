//! The simulation in the default test run: ten thousand seeds on the memory store and a few
//! hundred on a SQLite file, each checked against every invariant; a failure names its seed
//! and the command that replays it.

use ask_user_sim::plan::Faults;
use ask_user_sim::{Backend, replay_command, run_seed_on, run_seed_with};

/// Seeds run on the memory store by the default test run (about a millisecond each in a debug
/// build).
const SEEDS: u64 = 10_000;

/// Seeds run on a SQLite file by the default test run (each opens its own file in a temporary
/// directory: about ten times a memory seed, most of it opening the file).
const SQLITE_SEEDS: u64 = 400;

/// The faults the default run draws: every one (`scripts/sim` runs more seeds).
const FAULTS: Faults = Faults::ALL;

fn failures(seeds: impl Iterator<Item = u64>, faults: Faults, backend: Backend) -> Vec<String> {
    seeds
        .map(|seed| run_seed_on(seed, faults, backend))
        .filter(|r| !r.violations.is_empty())
        .map(|r| {
            let broken: Vec<String> = r.violations.iter().map(ToString::to_string).collect();
            format!(
                "{}\n    {}\n    replay: {}",
                r.plan,
                broken.join("\n    "),
                replay_command(r.plan.seed, faults, backend)
            )
        })
        .collect()
}

fn assert_holds(seeds: impl Iterator<Item = u64>, faults: Faults) {
    assert_holds_on(seeds, faults, Backend::Memory);
}

fn assert_holds_on(seeds: impl Iterator<Item = u64>, faults: Faults, backend: Backend) {
    let failed = failures(seeds, faults, backend);
    assert!(
        failed.is_empty(),
        "{} seeds broke an invariant:\n{}",
        failed.len(),
        failed.into_iter().take(20).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn ten_thousand_seeds_hold_every_invariant() {
    assert_holds(0..SEEDS, FAULTS);
}

/// The same plans with the asks in a SQLite file (its writer thread, its group commit, its
/// follower), not the memory store.
#[test]
fn seeds_on_a_sqlite_file_hold_every_invariant() {
    assert_holds_on(0..SQLITE_SEEDS, FAULTS, Backend::Sqlite);
}

/// What a run did, for comparing two runs of one seed: each process's run (in the order of
/// their callers: on SQLite two processes ending at one simulated instant may be recorded in
/// either order, as the store's threads finish), what the human was told, what broke.
fn sketch(r: &ask_user_sim::Report) -> impl PartialEq + std::fmt::Debug + use<> {
    let mut runs: Vec<_> = r
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
    runs.sort_by_key(|run| (run.0, run.1));
    (runs, r.acks.clone(), r.violations.clone())
}

#[test]
fn a_seed_replays_the_same_run() {
    for seed in 0..200 {
        let (a, b) = (
            run_seed_with(seed, Faults::ALL),
            run_seed_with(seed, Faults::ALL),
        );
        assert_eq!(sketch(&a), sketch(&b), "seed {seed} ran two ways");
    }
}

/// On SQLite too: a commit takes no simulated time (the store awaits its writer from the
/// blocking pool, which holds a paused clock), so the seed alone decides what every process
/// does.
#[test]
fn a_seed_replays_the_same_run_on_sqlite() {
    for seed in 0..40 {
        let (a, b) = (
            run_seed_on(seed, Faults::ALL, Backend::Sqlite),
            run_seed_on(seed, Faults::ALL, Backend::Sqlite),
        );
        assert_eq!(sketch(&a), sketch(&b), "seed {seed} ran two ways on SQLite");
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
