//! `ask-user-sim`: runs the simulation over a range of seeds, or replays one.
//!
//! ```text
//! ask-user-sim [--seeds N] [--from SEED]   run N seeds (default 2000) from SEED (default 0)
//! ask-user-sim --seed SEED                 replay one seed: its plan, its ledger, its verdict
//! ... --without slow-writes|second-caller|stops|clocks   leave a fault out (repeatable)
//! ... --store sqlite                        keep the asks in a SQLite file (default: memory)
//! ```
//! Exits 1 when any seed broke an invariant, printing each failing seed and its replay command.

use std::collections::BTreeMap;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut seeds: u64 = 2000;
    let mut from: u64 = 0;
    let mut one: Option<u64> = None;
    let mut faults = ask_user_sim::plan::Faults::ALL;
    let mut backend = ask_user_sim::Backend::Memory;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        let number = value.as_deref().and_then(|v| v.parse::<u64>().ok());
        match (arg.as_str(), number, value.as_deref()) {
            ("--seeds", Some(v), _) => seeds = v,
            ("--from", Some(v), _) => from = v,
            ("--seed", Some(v), _) => one = Some(v),
            ("--without", _, Some("slow-writes")) => faults.slow_writes = false,
            ("--without", _, Some("second-caller")) => faults.second_caller = false,
            ("--without", _, Some("stops")) => faults.stops = false,
            ("--without", _, Some("clocks")) => faults.clocks = false,
            ("--store", _, Some("sqlite")) => backend = ask_user_sim::Backend::Sqlite,
            ("--store", _, Some("memory")) => backend = ask_user_sim::Backend::Memory,
            _ => {
                eprintln!(
                    "usage: ask-user-sim [--seeds N] [--from SEED] | --seed SEED; [--without slow-writes|second-caller|stops|clocks] [--store memory|sqlite]"
                );
                return ExitCode::from(2);
            }
        }
    }
    if let Some(seed) = one {
        let report = ask_user_sim::run_seed_on(seed, faults, backend);
        println!("{}", report.plan);
        for ack in &report.acks {
            println!("  sent: {:?} for ask {} in {}", ack.label, ack.ask, ack.via);
        }
        for run in &report.runs {
            println!(
                "  caller {}{}: ask {:?} ({}), printed {:?}, {:?}",
                run.caller,
                if run.retry { " (retry)" } else { "" },
                run.ask,
                run.opened.unwrap_or("not opened"),
                run.printed,
                run.ended
            );
        }
        if report.violations.is_empty() {
            println!("held");
            return ExitCode::SUCCESS;
        }
        for v in &report.violations {
            println!("  VIOLATED: {v}");
        }
        return ExitCode::FAILURE;
    }
    let started = std::time::Instant::now();
    let mut kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut processes, mut acks, mut failed) = (0usize, 0usize, 0u64);
    for seed in from..from.saturating_add(seeds) {
        let report = ask_user_sim::run_seed_on(seed, faults, backend);
        processes += report.processes;
        acks += report.acknowledged;
        if report.violations.is_empty() {
            continue;
        }
        failed += 1;
        for v in &report.violations {
            *kinds.entry(kind(v)).or_default() += 1;
        }
        if failed <= 20 {
            println!("FAILED {}", report.plan);
            for v in &report.violations {
                println!("  {v}");
            }
            println!(
                "  replay: {}",
                ask_user_sim::replay_command(seed, faults, backend)
            );
        }
    }
    println!(
        "{seeds} seeds from {from}: {processes} processes, {acks} answers acknowledged, {failed} seeds failed, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (k, n) in &kinds {
        println!("  {k}: {n}");
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn kind(v: &ask_user_sim::Violation) -> &'static str {
    use ask_user_sim::Violation::*;
    match v {
        AckNotStored { .. } => "told sent, not stored",
        PrintedNotStored { .. } => "printed is not stored",
        Lost { .. } => "lost",
        Misdelivered { .. } => "misdelivered",
        AskedTwice { .. } => "asked twice",
        Hung { .. } => "hung",
        Purged { .. } => "purged undelivered",
    }
}
