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
}

impl Faults {
    /// Every fault.
    pub const ALL: Faults = Faults {
        slow_writes: true,
        second_caller: true,
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
            });
        }
        Plan {
            seed,
            keyed,
            calls,
            inbox,
            second_inbox,
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
