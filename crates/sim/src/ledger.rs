//! What happened in one run, as the people involved saw it: what the human was told was sent,
//! what each process printed (the model's bytes), how each process ended; and the invariants
//! checked against it and the store (docs/contract.md §8 "Exactly once, made precise").

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use ask_user_store::{AskId, AskRecord, Outcome};

/// An answer the human was told was sent ("200 sent", the terminal's "sent").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The ask it answered.
    pub ask: AskId,
    /// The option the human chose.
    pub label: String,
    /// Where the human answered.
    pub via: &'static str,
}

/// What a process printed on stdout, reduced to what the invariants compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Printed {
    /// An answer choosing this option.
    Answered(String),
    /// `ASK_TIMED_OUT`.
    TimedOut,
    /// `ASK_ABORTED`.
    Aborted,
    /// Anything else (the text).
    Other(String),
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It returned (its outcome delivered, or not written).
    Exited,
    /// `kill -9`: while it waited, or between the steps of delivery.
    Killed,
    /// It did not end within its bound (budget or signal, plus the withdraw grace and the
    /// store delays): a hang.
    Hung,
}

/// One process's run.
#[derive(Debug, Clone)]
pub struct Run {
    /// The logical caller.
    pub caller: u32,
    /// Whether this is the retry the harness makes after the first run.
    pub retry: bool,
    /// The ask it opened, once it did.
    pub ask: Option<AskId>,
    /// How the store found its key: `created`, `reattached`, `undelivered`.
    pub opened: Option<&'static str>,
    /// What it printed, when it got that far.
    pub printed: Option<Printed>,
    /// How it ended.
    pub ended: Ended,
    /// Its ask as the store held it when the process ended (what the printed outcome is
    /// compared with: a later retry may mark it delivered).
    pub stored: Option<AskRecord>,
    /// When it started (ms of simulated time).
    pub started: u64,
    /// When it ended (ms); `u64::MAX` for a process that hung (it still runs).
    pub finished: u64,
}

/// Whether `run` may print the outcome of `ask`: it is the question of `run`'s caller, or
/// `run` took the ask over once every earlier process holding it had ended or let it go
/// without printing an answer (a signal detached the ask; an unkeyed call
/// re-attaches to a detached ask of its scope: by the contract, a caller of the same identity
/// and question after the first went away is that call's retry). Two live callers of one ask
/// never pass.
fn holds(run: &Run, ask: AskId, owner: Option<u32>, runs: &[Run]) -> bool {
    if run.ask != Some(ask) {
        return false;
    }
    if owner == Some(run.caller) {
        return true;
    }
    runs.iter()
        .filter(|r| r.ask == Some(ask) && !std::ptr::eq(*r, run) && r.started <= run.started)
        .all(|r| r.finished <= run.started || !matches!(r.printed, Some(Printed::Answered(_))))
}

/// The shared ledger of one seed's run.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    inner: Arc<Mutex<Book>>,
}

#[derive(Debug, Default)]
struct Book {
    acks: Vec<Ack>,
    runs: Vec<Run>,
    before_sweep: Vec<AskRecord>,
}

impl Ledger {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The human was told `label` was sent for `ask`.
    pub fn ack(&self, ask: AskId, label: &str, via: &'static str) {
        self.book().acks.push(Ack {
            ask,
            label: label.to_owned(),
            via,
        });
    }

    /// What the store held just before a process swept it (see [`check`]: an ask it purged is
    /// checked as it was).
    pub fn before_sweep(&self, held: Vec<AskRecord>) {
        self.book().before_sweep = held;
    }

    /// A process ended.
    pub fn run(&self, run: Run) {
        self.book().runs.push(run);
    }

    /// Every acknowledgement so far.
    pub fn acks(&self) -> Vec<Ack> {
        self.book().acks.clone()
    }

    /// Every run so far.
    pub fn runs(&self) -> Vec<Run> {
        self.book().runs.clone()
    }
}

/// One broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// The human was told "sent" for an answer the store does not hold as the outcome.
    AckNotStored {
        /// The acknowledgement.
        ack: String,
        /// What the store holds.
        stored: String,
    },
    /// A process printed an outcome other than the one its ask holds in the store.
    PrintedNotStored {
        /// The caller.
        caller: u32,
        /// What it printed.
        printed: String,
        /// What the store holds.
        stored: String,
    },
    /// An answer the human was told was sent never reached its caller, not even on a retry.
    Lost {
        /// The acknowledgement.
        ack: String,
    },
    /// A process printed an answer given to another caller's question (or to none).
    Misdelivered {
        /// The caller that printed it.
        caller: u32,
        /// What it printed.
        printed: String,
    },
    /// A retry showed the question again although an answer to it was waiting.
    AskedTwice {
        /// The caller.
        caller: u32,
    },
    /// A process did not end within its bound.
    Hung {
        /// The caller.
        caller: u32,
    },
    /// The store's retention removed an answer (or a dismissal) the human gave and its caller
    /// never received.
    Purged {
        /// The ask.
        ask: AskId,
        /// What it held.
        held: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AckNotStored { ack, stored } => {
                write!(
                    f,
                    "the human was told {ack} was sent, the store holds {stored}"
                )
            }
            Self::PrintedNotStored {
                caller,
                printed,
                stored,
            } => write!(
                f,
                "caller {caller} printed {printed}, the store holds {stored}"
            ),
            Self::Lost { ack } => write!(f, "lost: {ack} never reached its caller"),
            Self::Misdelivered { caller, printed } => write!(
                f,
                "misdelivered: caller {caller} printed {printed}, an answer to another caller's question"
            ),
            Self::AskedTwice { caller } => write!(
                f,
                "asked twice: caller {caller}'s retry showed the question again although its answer was waiting"
            ),
            Self::Hung { caller } => write!(f, "caller {caller} hung past its bound"),
            Self::Purged { ask, held } => {
                write!(
                    f,
                    "purged: ask {ask} ({held}) was removed before its caller got it"
                )
            }
        }
    }
}

/// What the store holds for one ask, for messages.
pub fn describe(rec: Option<&AskRecord>) -> String {
    let Some(rec) = rec else {
        return "nothing".to_owned();
    };
    let delivered = if rec.delivered_at.is_some() {
        ", delivered"
    } else {
        ""
    };
    match rec.closed.as_ref().map(|c| &c.outcome) {
        None if rec.attached => "an open, attached ask".to_owned(),
        None => "an open, detached ask".to_owned(),
        Some(Outcome::Answered { answer, .. }) => {
            format!(
                "answered {}{delivered}",
                label_of(answer).unwrap_or_default()
            )
        }
        Some(other) => format!("{}{delivered}", other.state_name()),
    }
}

/// The option an answer JSON (`{"answers":[{"id":..,"selected":[label]}]}`) chose.
pub fn label_of(answer: &serde_json::Value) -> Option<String> {
    answer
        .pointer("/answers/0/selected/0")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

fn ack_text(ack: &Ack) -> String {
    format!("{:?} (ask {}, in {})", ack.label, ack.ask, ack.via)
}

/// Checks every invariant over the ledger and the store's final state (`asks`: every ask the
/// run touched, by id). `card_of` maps an ask to the caller whose question it is. An ask the
/// store no longer holds because a sweep purged it is checked as it was before the sweep; its
/// purge is a violation when it held a human's decision never delivered.
pub fn check(ledger: &Ledger, asks: &BTreeMap<AskId, AskRecord>) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut asks = asks.clone();
    for rec in ledger.book().before_sweep.clone() {
        if asks.contains_key(&rec.id) {
            continue;
        }
        let undelivered = rec.delivered_at.is_none()
            && rec
                .closed
                .as_ref()
                .is_some_and(|c| c.outcome.is_human_decision());
        if undelivered {
            found.push(Violation::Purged {
                ask: rec.id,
                held: describe(Some(&rec)),
            });
        }
        asks.insert(rec.id, rec);
    }
    let asks = &asks;
    let acks = ledger.acks();
    let runs = ledger.runs();
    let card_of = |ask: AskId| asks.get(&ask).and_then(|r| r.asker.pid);
    for ack in &acks {
        let rec = asks.get(&ack.ask);
        let stored = rec
            .and_then(|r| r.closed.as_ref())
            .and_then(|c| match &c.outcome {
                Outcome::Answered { answer, .. } => label_of(answer),
                _ => None,
            });
        if stored.as_deref() != Some(ack.label.as_str()) {
            found.push(Violation::AckNotStored {
                ack: ack_text(ack),
                stored: describe(rec),
            });
        }
    }
    for run in &runs {
        if run.ended == Ended::Hung {
            found.push(Violation::Hung { caller: run.caller });
        }
        let (Some(printed), Some(ask)) = (&run.printed, run.ask) else {
            continue;
        };
        let rec = run.stored.as_ref().or_else(|| asks.get(&ask));
        let closed = rec.and_then(|r| r.closed.as_ref()).map(|c| &c.outcome);
        let agrees = match (printed, closed) {
            (Printed::Answered(l), Some(Outcome::Answered { answer, .. })) => {
                label_of(answer).as_deref() == Some(l.as_str())
            }
            (Printed::TimedOut, Some(Outcome::TimedOut)) => true,
            // An aborted call detaches: the ask stays open, or an answer stays undelivered
            // for the retry.
            (Printed::Aborted, None) => true,
            // (or its grace ran out by the clock of a process sweeping the store, which may be
            // weeks ahead: withdrawn, and the retry asks anew; nothing the human gave is lost).
            (Printed::Aborted, Some(Outcome::Withdrawn)) => true,
            // (or the process that took the detached ask over has printed it meanwhile).
            (Printed::Aborted, Some(Outcome::Answered { .. } | Outcome::Dismissed { .. })) => {
                rec.is_some_and(|r| r.delivered_at.is_none())
                    || runs.iter().any(|r| {
                        !std::ptr::eq(r, run)
                            && r.ask == Some(ask)
                            && matches!(r.printed, Some(Printed::Answered(_)))
                    })
            }
            (Printed::Other(_), _) => true,
            _ => false,
        };
        if !agrees {
            found.push(Violation::PrintedNotStored {
                caller: run.caller,
                printed: format!("{printed:?}"),
                stored: describe(rec),
            });
        }
        if let Printed::Answered(label) = printed {
            let own = acks
                .iter()
                .any(|a| &a.label == label && holds(run, a.ask, card_of(a.ask), &runs))
                // An answer stored before the human was told (its terminal was killed first),
                // printed by the process that holds the ask.
                || (closed.is_some_and(|c| matches!(c, Outcome::Answered { answer, .. } if label_of(answer).as_deref() == Some(label.as_str())))
                    && holds(run, ask, card_of(ask), &runs));
            if !own {
                found.push(Violation::Misdelivered {
                    caller: run.caller,
                    printed: format!("{label:?}"),
                });
            }
        }
    }
    for ack in &acks {
        let owner = card_of(ack.ask);
        if owner.is_none() {
            continue;
        }
        let reached = runs.iter().any(|r| {
            r.printed == Some(Printed::Answered(ack.label.clone()))
                && (owner == Some(r.caller) || holds(r, ack.ask, owner, &runs))
        });
        // Only the answer that counted must arrive (a second "sent" is already reported as
        // not stored).
        let counted = asks
            .get(&ack.ask)
            .and_then(|r| r.closed.as_ref())
            .is_some_and(|c| matches!(&c.outcome, Outcome::Answered { answer, .. } if label_of(answer).as_deref() == Some(ack.label.as_str())));
        if counted && !reached {
            found.push(Violation::Lost { ack: ack_text(ack) });
        }
    }
    for run in runs.iter().filter(|r| r.retry) {
        if run.opened == Some("created") {
            found.push(Violation::AskedTwice { caller: run.caller });
        }
    }
    found
}
