//! A seeded, deterministic simulation of the ask lifecycle (docs/contract.md §8 "Exactly once,
//! made precise"): each simulated agent runs the real call assembly
//! ([`ask_user_host::HostCall`]: the core race inside [`ask_user_core::AskUserQuestionTool`],
//! the store link [`ask_user_host::durable`], the delivery order stdout → "delivered") on the
//! memory store or a SQLite file ([`Backend`]), and the human answers in an inbox or a terminal —
//! on tokio's paused clock, with the faults a [`Plan`] draws from a seed: budgets expiring at
//! every point of an answer's path, signals, `kill -9` while waiting and between the steps of
//! delivery, slow store writes, two answerers at once, and two live callers asking the same
//! question. The faults enter through `HostCall`'s own seams (see [`agent`]).
//!
//! [`run_seed`] runs one seed and checks every invariant ([`ledger::check`]):
//! the outcome printed is the outcome stored; the human is told "sent" only for that outcome;
//! no acknowledged answer is lost (a retry gets it); no answer reaches the wrong caller; no
//! question is asked twice; no process hangs past its bound.
//!
//! ```
//! let report = ask_user_sim::run_seed(1);
//! println!("{}", report.plan);
//! assert_eq!(report.plan.seed, 1);
//! ```
#![deny(missing_docs)]

pub mod agent;
pub mod ledger;
pub mod plan;
pub mod rng;

use std::collections::BTreeMap;

pub use ledger::{Ledger, Violation};
pub use plan::Plan;

use agent::World;
use ask_user_store::Store;

/// One seed's result.
#[derive(Debug, Clone)]
pub struct Report {
    /// What ran.
    pub plan: Plan,
    /// Every broken invariant (empty: the run held).
    pub violations: Vec<Violation>,
    /// Answers the human was told were sent.
    pub acknowledged: usize,
    /// Processes run (first runs and retries).
    pub processes: usize,
    /// Every process's run, in the order they ended.
    pub runs: Vec<ledger::Run>,
    /// Every "sent" the human saw.
    pub acks: Vec<ledger::Ack>,
}

/// The command that replays `seed` (with only `faults`, on `backend`) with its plan and ledger printed.
#[must_use]
pub fn replay_command(seed: u64, faults: plan::Faults, backend: Backend) -> String {
    let mut command = format!("scripts/sim --seed {seed}");
    if backend == Backend::Sqlite {
        command.push_str(" --store sqlite");
    }
    if !faults.slow_writes {
        command.push_str(" --without slow-writes");
    }
    if !faults.second_caller {
        command.push_str(" --without second-caller");
    }
    if !faults.stops {
        command.push_str(" --without stops");
    }
    if !faults.clocks {
        command.push_str(" --without clocks");
    }
    command
}

/// Runs the plan `seed` names (see the crate doc) on a fresh paused-clock runtime.
///
/// # Panics
/// When the runtime cannot be built (out of threads or memory).
#[must_use]
pub fn run_seed(seed: u64) -> Report {
    run_seed_with(seed, plan::Faults::ALL)
}

/// [`run_seed`] with only `faults` (see [`plan::Faults`]).
///
/// # Panics
/// When the runtime cannot be built (out of threads or memory).
#[must_use]
#[allow(clippy::expect_used)]
pub fn run_seed_with(seed: u64, faults: plan::Faults) -> Report {
    run_seed_on(seed, faults, Backend::Memory)
}

/// The store a run keeps its asks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The memory store.
    Memory,
    /// A SQLite file in a fresh temporary directory, on a tmpfs when the machine has one
    /// (removed after the run).
    Sqlite,
}

/// [`run_seed_with`] on `backend`.
///
/// # Panics
/// When the runtime cannot be built, or the SQLite store cannot be opened in a fresh
/// directory.
#[must_use]
#[allow(clippy::expect_used)]
pub fn run_seed_on(seed: u64, faults: plan::Faults, backend: Backend) -> Report {
    let plan = Plan::draw_with(seed, faults);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    let dir = match backend {
        Backend::Memory => None,
        Backend::Sqlite => Some(sqlite_dir(seed)),
    };
    let report = runtime.block_on(async {
        let store = match &dir {
            None => Store::memory(),
            Some(dir) => Store::open_sqlite(&dir.join("store.sqlite3"))
                .await
                .expect("a SQLite store"),
        };
        run_plan(plan, store).await
    });
    drop(runtime);
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    report
}

/// A fresh directory of its own for one SQLite run: on the machine's tmpfs (`/dev/shm`) when it has one,
/// else in the temporary directory. On a tmpfs a commit's `fsync` returns at once (it was most
/// of a seed's wall time on a disk: 20 s instead of 5 s for 400 seeds); the store runs the same
/// code either way (WAL, full sync, group commit, the writer thread, the file follower). A
/// power loss is not simulated.
///
/// # Panics
/// When neither can hold a directory.
#[allow(clippy::expect_used)]
fn sqlite_dir(seed: u64) -> std::path::PathBuf {
    // Unique per run: two runs of one seed may run at once (tests run in parallel).
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("ask-user-sim-{}-{run}-seed-{seed}", std::process::id());
    let shm = std::path::Path::new("/dev/shm").join(&name);
    if std::fs::create_dir_all(&shm).is_ok() {
        return shm;
    }
    let dir = std::env::temp_dir().join(name);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

async fn run_plan(plan: Plan, store: Store) -> Report {
    let processes = agent::Processes::default();
    let world = World {
        start: tokio::time::Instant::now(),
        store: store.with_liveness(std::sync::Arc::new(processes.clone())),
        ledger: Ledger::default(),
        keyed: plan.keyed,
        processes,
    };
    // The first run: every caller's process and the human, at once.
    let mut first = Vec::new();
    for call in &plan.calls {
        first.push(Box::pin(agent::process(world.clone(), call.clone(), false))
            as std::pin::Pin<Box<dyn Future<Output = ()> + Send>>);
    }
    if let Some(at) = plan.inbox {
        first.push(Box::pin(agent::inbox(
            world.clone(),
            at,
            "Yes",
            "the inbox",
        )));
    }
    if let Some(at) = plan.second_inbox {
        first.push(Box::pin(agent::inbox(
            world.clone(),
            at,
            "Later",
            "another inbox",
        )));
    }
    if let Some((at, off)) = plan.sweep {
        first.push(Box::pin(agent::sweep(world.clone(), at, off)));
    }
    join_all(first).await;
    // The retry: a caller whose acknowledged answer it did not print runs the same call again,
    // with nobody answering; it must get the answer from the store.
    let now = elapsed_ms(&world);
    for call in &plan.calls {
        if waiting_answer(&world, call.caller).await {
            let retry = plan::Call {
                caller: call.caller,
                start: now + 16,
                budget: 512,
                signal: None,
                kill: plan::Kill::Never,
                terminal: None,
                record_delay: (0, 0),
                stopped: None,
                clock: call.clock,
            };
            agent::process(world.clone(), retry, true).await;
        }
    }
    let mut asks = BTreeMap::new();
    if let Ok(open) = world.store.list_open().await {
        for rec in open {
            asks.insert(rec.id, rec);
        }
    }
    let runs = world.ledger.runs();
    let acks = world.ledger.acks();
    let ids = runs
        .iter()
        .filter_map(|r| r.ask)
        .chain(acks.iter().map(|a| a.ask));
    for id in ids {
        if let Ok(rec) = world.store.get(id).await {
            asks.insert(id, rec);
        }
    }
    Report {
        violations: ledger::check(&world.ledger, &asks),
        acknowledged: acks.len(),
        processes: runs.len(),
        runs,
        acks,
        plan,
    }
}

fn elapsed_ms(world: &World) -> u64 {
    u64::try_from(world.start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Whether `caller` has an answer the human was told was sent, stored as the outcome, that no
/// run of it printed.
async fn waiting_answer(world: &World, caller: u32) -> bool {
    let runs = world.ledger.runs();
    for ack in world.ledger.acks() {
        let Ok(rec) = world.store.get(ack.ask).await else {
            continue;
        };
        if rec.asker.pid != Some(caller) {
            continue;
        }
        // Printed by the caller, or by the process that took its ask over once it went away.
        let printed = runs.iter().any(|r| {
            (r.caller == caller || r.ask == Some(ack.ask))
                && r.printed == Some(ledger::Printed::Answered(ack.label.clone()))
        });
        if !printed {
            return true;
        }
    }
    false
}

async fn join_all(futures: Vec<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>) {
    let mut set = tokio::task::JoinSet::new();
    for f in futures {
        set.spawn(f);
    }
    while set.join_next().await.is_some() {}
}
