//! What one seed runs: a [`Plan`] drawn from the seed — the callers, their budgets, the human's
//! answers, the signals, the kills and the slow store writes — before anything runs.
//!
//! Every instant is in simulated milliseconds from the start. Events are drawn on a grid that
//! keeps any two of them (and the ends of the store delays after them) on different
//! milliseconds, so no two timers fire in the same tick and the run does not depend on the
//! order in which `select!` polls its branches: the seed alone decides the run.

use std::fmt;

use crate::rng::Rng;

/// The grid step: every drawn instant is `GRID * k + lane`, every delay `GRID * k + GRID / 2`.
const GRID: u64 = 16;

/// A minute, in milliseconds.
const MINUTE: i64 = 60_000;
/// A day, in milliseconds.
const DAY: i64 = 24 * 60 * MINUTE;

/// A caller's clock: right more often than not, else minutes or a month behind, or minutes
/// ahead. (Not further ahead: a retry whose own clock runs more than the unkeyed redelivery
/// window ahead of the answer's asks anew, knowingly — docs/decisions.md "No clock decides
/// across processes" — and the ledger would count that as lost.)
fn skew(rng: &mut Rng) -> i64 {
    match rng.below(10) {
        0 => -MINUTE * 10,
        1 => -DAY * 31,
        2 => MINUTE * 2,
        3 => MINUTE * 5,
        _ => 0,
    }
}

/// Where a caller's process is killed (`kill -9`: nothing after that point runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// Not killed.
    Never,
    /// Killed while it waits, at this instant.
    Waiting(u64),
    /// Killed after the outcome was stored, before stdout was written.
    BeforeStdout,
    /// Killed after stdout was written, before the store was told "delivered".
    BeforeDelivered,
}

/// One asking process.
#[derive(Debug, Clone)]
pub struct Call {
    /// The logical caller (a retry of the same caller has the same number).
    pub caller: u32,
    /// When the process starts.
    pub start: u64,
    /// Its `--timeout`.
    pub budget: u64,
    /// A SIGTERM (or the host's cancel) at this instant.
    pub signal: Option<u64>,
    /// Where it is killed.
    pub kill: Kill,
    /// The human answers "No" in this process's own answerer (a terminal) at this instant.
    pub terminal: Option<u64>,
    /// A slow store write: every outcome this process records waits this long before the write
    /// and this long after it (a busy disk, a lock held elsewhere).
    pub record_delay: (u64, u64),
    /// The process is stopped (SIGSTOP) at the first instant and continued (SIGCONT) at the
    /// second: nothing of it runs in between, and it is still alive.
    pub stopped: Option<(u64, u64)>,
    /// How far its clock is off, in milliseconds (ahead when positive): every time it writes
    /// in the store is its own clock's. Its retry runs on the same machine, with the same clock.
    pub clock: i64,
}

/// One seed's run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The seed it was drawn from.
    pub seed: u64,
    /// Whether the callers pass a host key (`--key`); else they are scoped by their identity.
    pub keyed: bool,
    /// The first process of each logical caller (caller 1, then maybe caller 2: another live
    /// caller asking the same question in the same scope).
    pub calls: Vec<Call>,
    /// The human answers "Yes" in the inbox (through the store) to caller 1's open ask at this
    /// instant.
    pub inbox: Option<u64>,
    /// The human answers caller 1's ask a second time, in another inbox, at this instant (two
    /// answerers racing).
    pub second_inbox: Option<u64>,
    /// Another process opens the store at this instant (an `ask-user` run, the inbox), which
    /// runs the store's retention by its own clock, this many milliseconds off.
    pub sweep: Option<(u64, i64)>,
}

/// Which faults a run may draw (all by default). The same seed with fewer faults draws the
/// same values and drops the faults switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// Slow store writes inside the race (the window where a budget or signal meets an answer
    /// being stored).
    pub slow_writes: bool,
    /// A second live caller asking the same question in the same scope.
    pub second_caller: bool,
    /// A caller stopped (SIGSTOP) for a while, then continued.
    pub stops: bool,
    /// Processes whose clocks are wrong (callers, and a process sweeping the store).
    pub clocks: bool,
}

impl Faults {
    /// Every fault.
    pub const ALL: Faults = Faults {
        slow_writes: true,
        second_caller: true,
        stops: true,
        clocks: true,
    };
}

impl Default for Faults {
    fn default() -> Self {
        Self::ALL
    }
}

impl Plan {
    /// The plan seed `seed` names, with every fault.
    #[must_use]
    pub fn draw(seed: u64) -> Self {
        Self::draw_with(seed, Faults::ALL)
    }

    /// The plan seed `seed` names, with only `faults`.
    #[must_use]
    pub fn draw_with(seed: u64, faults: Faults) -> Self {
        let mut plan = Self::draw_all(seed);
        if !faults.slow_writes {
            for c in &mut plan.calls {
                c.record_delay = (0, 0);
            }
        }
        if !faults.second_caller {
            plan.calls.truncate(1);
        }
        if !faults.stops {
            for c in &mut plan.calls {
                c.stopped = None;
            }
        }
        if !faults.clocks {
            for c in &mut plan.calls {
                c.clock = 0;
            }
            plan.sweep = None;
        }
        plan
    }

    fn draw_all(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut lanes = 0..GRID / 2;
        let mut at = |rng: &mut Rng, below: u64| -> u64 {
            let lane = lanes.next().unwrap_or(GRID / 2 - 1);
            GRID * (1 + rng.below(below / GRID)) + lane
        };
        let delay = |rng: &mut Rng| -> u64 {
            if rng.chance(40) {
                0
            } else {
                GRID * rng.below(8) + GRID / 2
            }
        };
        let keyed = rng.chance(50);
        let budget = at(&mut rng, 1200) + 12 * GRID;
        // The human's answer lands around the budget more often than not: that is where the
        // races are.
        let near = |rng: &mut Rng, budget: u64, lane: u64| -> u64 {
            let off = rng.below(24) * GRID;
            let centre = budget - budget % GRID;
            (centre + off).saturating_sub(12 * GRID).max(GRID) + lane
        };
        let inbox = rng.chance(80).then(|| near(&mut rng, budget, 1));
        let second_inbox = rng.chance(15).then(|| near(&mut rng, budget, 2));
        let terminal = rng.chance(25).then(|| near(&mut rng, budget, 3));
        let signal = rng.chance(20).then(|| near(&mut rng, budget, 4));
        let kill = match rng.below(10) {
            0 => Kill::Waiting(near(&mut rng, budget, 5)),
            1 => Kill::BeforeStdout,
            2 => Kill::BeforeDelivered,
            _ => Kill::Never,
        };
        let first = Call {
            caller: 1,
            start: 0,
            budget,
            signal,
            kill,
            terminal,
            record_delay: (delay(&mut rng), delay(&mut rng)),
            stopped: None,
            clock: 0,
        };
        let mut calls = vec![first];
        // Two live callers merged into one ask is only wrong when nothing tells them apart:
        // without a host key (a keyed retry with the same key is the same call by contract).
        if !keyed && rng.chance(30) {
            calls.push(Call {
                caller: 2,
                start: at(&mut rng, 400) + 6,
                budget: at(&mut rng, 1200) + 12 * GRID,
                signal: None,
                kill: Kill::Never,
                terminal: None,
                record_delay: (delay(&mut rng), 0),
                stopped: None,
                clock: 0,
            });
        }
        // Drawn after everything above, so a seed's other values stay what they were before
        // stops and clocks existed.
        if rng.chance(15) {
            // SIGSTOP around the budget, for up to 90 s (an agent stopped in a debugger, a
            // laptop lid): the human's answer, the budget and a second caller may all fall
            // inside it.
            let from = near(&mut rng, budget, 6);
            let length = GRID * (128 + rng.below(90_000 / GRID - 128));
            calls[0].stopped = Some((from, from + length));
            // The second caller asks just before the first is continued (past its lease of
            // 60 s when the stop was long: it is still alive, so the two must not be merged).
            if let Some(second) = calls.get_mut(1)
                && rng.chance(50)
            {
                second.start = from + length - GRID * (1 + rng.below(64)) + 1;
            }
            // Of the process's own events (its budget, its terminal's answer, the signal it is
            // sent) only the first to fall inside the stop is kept: two of them would both be
            // due at SIGCONT, and which one the process sees first would be the scheduler's
            // choice, not the seed's.
            let first = &mut calls[0];
            let inside = |t: u64| (from..from + length).contains(&t);
            let budget_end = first.start + first.budget;
            let mut due: Vec<u64> = [Some(budget_end), first.terminal, first.signal]
                .into_iter()
                .flatten()
                .filter(|t| inside(*t))
                .collect();
            due.sort_unstable();
            if let Some(&kept) = due.first() {
                if first.terminal.is_some_and(|t| inside(t) && t != kept) {
                    first.terminal = None;
                }
                if first.signal.is_some_and(|t| inside(t) && t != kept) {
                    first.signal = None;
                }
                if inside(budget_end) && budget_end != kept {
                    // The budget cannot be left out: the earlier event is.
                    first.terminal = first.terminal.filter(|t| !inside(*t));
                    first.signal = first.signal.filter(|t| !inside(*t));
                }
            }
        }
        for c in &mut calls {
            c.clock = skew(&mut rng);
        }
        let sweep = rng.chance(30).then(|| {
            let at = near(&mut rng, budget, 7) + GRID * 2;
            let off = match rng.below(4) {
                0 => MINUTE * 2,
                1 => MINUTE * 10,
                2 => DAY * 31,
                _ => -DAY * 31,
            };
            // Not while caller 1 is stopped: a withdrawal and its budget would both be due at
            // SIGCONT (see above).
            let at = match calls[0].stopped {
                Some((from, until)) if (from..until).contains(&at) => until + 2 * GRID + 1,
                _ => at,
            };
            (at, off)
        });
        Plan {
            seed,
            keyed,
            calls,
            inbox,
            second_inbox,
            sweep,
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {}: {}",
            self.seed,
            if self.keyed { "keyed" } else { "unkeyed" }
        )?;
        if let Some(t) = self.inbox {
            write!(f, ", inbox answers at {t} ms")?;
        }
        if let Some(t) = self.second_inbox {
            write!(f, ", a second inbox answers at {t} ms")?;
        }
        if let Some((t, off)) = self.sweep {
            write!(
                f,
                ", a process with its clock {:+} s off sweeps the store at {t} ms",
                off / 1000
            )?;
        }
        for c in &self.calls {
            write!(
                f,
                "; caller {} starts at {} ms, --timeout {} ms",
                c.caller, c.start, c.budget
            )?;
            if let Some(t) = c.signal {
                write!(f, ", SIGTERM at {t} ms")?;
            }
            if let Some(t) = c.terminal {
                write!(f, ", its terminal answers at {t} ms")?;
            }
            match c.kill {
                Kill::Never => {}
                Kill::Waiting(t) => write!(f, ", kill -9 at {t} ms")?,
                Kill::BeforeStdout => write!(f, ", kill -9 before stdout")?,
                Kill::BeforeDelivered => write!(f, ", kill -9 before /delivered")?,
            }
            if let Some((from, to)) = c.stopped {
                write!(f, ", SIGSTOP at {from} ms, SIGCONT at {to} ms")?;
            }
            if c.clock != 0 {
                write!(f, ", its clock {:+} s off", c.clock / 1000)?;
            }
            if c.record_delay != (0, 0) {
                write!(
                    f,
                    ", store writes wait {} ms + {} ms",
                    c.record_delay.0, c.record_delay.1
                )?;
            }
        }
        Ok(())
    }
}
