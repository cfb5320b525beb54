//! One asking process as `ask-user ask` runs it (`crates/cli/src/ask.rs`): the real call
//! assembly ([`HostCall`]: the core tool and race, the store link [`Durable`] on the shared
//! store) and its delivery in the real order (stdout, then "delivered") — with the plan's
//! faults injected through the seams `HostCall` offers: a slow store write inside the race
//! ([`ask_user_host::HostCallBuilder::around_record`]), a `kill -9` between the steps of
//! delivery (a [`Delivery`] whose step never completes), a SIGTERM and a `kill -9` while
//! waiting, and a terminal answerer of its own. The other answerer, the inbox, is the human
//! writing to the store ([`inbox`]).

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    Decision, ExecutionContext, Offer, Outcome, Settled, UserInteraction,
};
use ask_user_host::durable::{Clock, Durable};
use ask_user_host::{AroundRecord, Delivery, HostCall, StoredAsk};
use ask_user_store::{AskId, Asker, Recorded, Responder, Retention, Scope, Store, Timestamp};
use tokio::time::{Instant, sleep, sleep_until};

use crate::ledger::{Ended, Ledger, Printed, Run};
use crate::plan::{Call, Kill};

/// The question every caller asks.
pub const ARGS: &str =
    r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No","Later"]}]}"#;

/// How long past its budget (or its signal) a process may take before it counts as hung: the
/// core's withdraw grace (2 s), the store delays, and slack.
const BOUND_SLACK: Duration = Duration::from_millis(4000);

/// The request [`ARGS`] decodes to (decoded once).
///
/// # Panics
/// Never: [`ARGS`] is valid.
#[must_use]
pub fn request() -> &'static AskUserQuestionRequest {
    static REQUEST: std::sync::OnceLock<AskUserQuestionRequest> = std::sync::OnceLock::new();
    REQUEST.get_or_init(
        || match ask_user_core::decode(ARGS, &ask_user_core::Limits::default()) {
            Ok(decoded) => decoded.request,
            Err(e) => unreachable!("the simulation's question is valid: {e}"),
        },
    )
}

/// The human's answer choosing `label`.
#[must_use]
pub fn answers(label: &str) -> Answers {
    Answers {
        answers: vec![AnswerItem::selected("go", [label])],
    }
}

/// Where the run is: its start instant and the shared store and ledger.
#[derive(Debug, Clone)]
pub struct World {
    /// The simulated instant 0.
    pub start: Instant,
    /// The shared store (the SQLite file every process opens).
    pub store: Store,
    /// The ledger.
    pub ledger: Ledger,
    /// Whether callers pass a host key.
    pub keyed: bool,
    /// The processes running now (what the store's [`ask_user_store::Liveness`] asks).
    pub processes: Processes,
}

/// The simulated processes that run now, by identity ([`Asker::process`]): the store's probe
/// of whether an ask's caller ended (the machine's `/proc`, simulated). A retry is a new
/// process with the same pid (a reused pid), so it is told apart by its identity.
#[derive(Debug, Clone, Default)]
pub struct Processes(Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>);

impl Processes {
    fn set(&self, identity: &str, running: bool) {
        let mut live = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if running {
            live.insert(identity.to_owned());
        } else {
            live.remove(identity);
        }
    }
}

impl ask_user_store::Liveness for Processes {
    fn is_gone(&self, asker: &Asker) -> bool {
        let live = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        asker.process.as_ref().is_some_and(|p| !live.contains(p))
    }
}

/// The simulated wall clock at instant 0 (a right clock reads this plus the simulated time).
const EPOCH: i64 = 2_000_000_000_000;

/// The most asks one run makes (callers, retries): what [`sweep`] looks at.
const MOST_ASKS: i64 = 16;

impl World {
    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// A process's clock, `off` milliseconds off the simulated time.
    fn clock(&self, off: i64) -> Clock {
        let start = self.start;
        Arc::new(move || {
            let elapsed = i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX);
            Timestamp(EPOCH.saturating_add(elapsed).saturating_add(off))
        })
    }

    fn scope(&self) -> Scope {
        if self.keyed {
            Scope::HostKey("call-1".to_owned())
        } else {
            Scope::Caller("session=\ncwd=/sim\nuser=sim".to_owned())
        }
    }
}

/// A store write that waits before and after (a busy disk), around the real one.
struct Slow {
    delay: (u64, u64),
}

/// Waits `ms` simulated milliseconds (at once for 0).
fn wait(ms: u64) -> BoxFuture<'static, ()> {
    if ms == 0 {
        return Box::pin(std::future::ready(()));
    }
    Box::pin(sleep(Duration::from_millis(ms)))
}

impl AroundRecord for Slow {
    fn before<'a>(&'a self, _: &'a Settled) -> BoxFuture<'a, ()> {
        wait(self.delay.0)
    }

    fn after<'a>(
        &'a self,
        _: &'a Settled,
        _: &'a Result<(), ask_user_core::RecordError>,
    ) -> BoxFuture<'a, ()> {
        wait(self.delay.1)
    }
}

/// The process's own answerer (a terminal): the human chooses "No" at `at`, if ever.
struct Terminal {
    at: Option<Instant>,
    durable: Durable,
    ledger: Ledger,
}

impl UserInteraction for Terminal {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        self.ask_decided(request, cancel, Decide::new(request))
    }

    fn ask_decided<'a>(
        &'a self,
        _request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            let Some(at) = self.at else {
                cancel.cancelled().await;
                return Err(AskError::Cancelled);
            };
            tokio::select! {
                () = cancel.cancelled() => return Err(AskError::Cancelled),
                () = sleep_until(at) => {}
            }
            let given = answers("No");
            match decide.offer(Offer::Answers(given.clone())).await {
                Decision::Accepted => {
                    if let Some(ask) = self.durable.ask_id() {
                        self.ledger.ack(ask, "No", "the terminal");
                    }
                    Ok(given)
                }
                _ => {
                    cancel.cancelled().await;
                    Err(AskError::Cancelled)
                }
            }
        })
    }

    fn name(&self) -> Option<&str> {
        Some("the terminal")
    }
}

fn printed(outcome: &Outcome) -> Printed {
    match outcome {
        Outcome::Answered(a) => Printed::Answered(
            a.answers
                .first()
                .and_then(|i| i.selected.first())
                .cloned()
                .unwrap_or_default(),
        ),
        Outcome::TimedOut(_) => Printed::TimedOut,
        Outcome::Aborted => Printed::Aborted,
        other => Printed::Other(other.text()),
    }
}

/// The process's stdout and its "delivered", as `ask-user ask` hands them to
/// [`ask_user_host::Asked::deliver`] — with the plan's `kill -9` between the steps: a step the
/// process is killed at never completes (the kill ends the process there), and says so on
/// `killed`.
struct Stdout<'a> {
    kill: Kill,
    killed: Arc<tokio::sync::Notify>,
    shown: &'a mut Option<Printed>,
}

impl Stdout<'_> {
    fn killed_here<'a, T: Send + 'a>(&self) -> BoxFuture<'a, T> {
        self.killed.notify_one();
        Box::pin(std::future::pending())
    }
}

impl Delivery for Stdout<'_> {
    fn write<'a>(&'a mut self, outcome: &'a Outcome) -> BoxFuture<'a, bool> {
        if self.kill == Kill::BeforeStdout {
            return self.killed_here();
        }
        *self.shown = Some(printed(outcome));
        Box::pin(std::future::ready(true))
    }

    fn mark<'a>(&'a mut self, ask: StoredAsk<'a>) -> BoxFuture<'a, ()> {
        if self.kill == Kill::BeforeDelivered {
            return self.killed_here();
        }
        Box::pin(ask.mark_delivered())
    }
}

/// Runs one process of `call` to its end and writes it in the ledger: the real
/// [`HostCall`] — its answerer the process's terminal, its store the shared one, its
/// `--timeout` the plan's budget, its store writes slowed by the plan — delivered to
/// the process's stdout (a [`Delivery`] that stops where the plan kills it).
pub async fn process(world: World, call: Call, retry: bool) {
    sleep_until(world.at(call.start)).await;
    let identity = format!(
        "caller {} {}",
        call.caller,
        if retry { "retry" } else { "first run" }
    );
    world.processes.set(&identity, true);
    let durable = Durable::new(
        world.store.clone(),
        ask_user_store::Namespace::local_user(1000),
        world.scope(),
        Asker {
            agent: Some(format!("caller {}", call.caller)),
            pid: Some(call.caller),
            process: Some(identity.clone()),
            ..Asker::default()
        },
    )
    .with_clock(world.clock(call.clock));
    let terminal = Terminal {
        at: call.terminal.map(|t| world.at(t)),
        durable: durable.clone(),
        ledger: world.ledger.clone(),
    };
    let delay = call.record_delay;
    let host = HostCall::builder(Arc::new(terminal))
        .durable(Some(durable.clone()))
        .timeout(Some(Duration::from_millis(call.budget)))
        .around_record(Arc::new(Slow { delay }))
        .build();
    let cancel = CancellationToken::new();
    let killed = Arc::new(tokio::sync::Notify::new());
    let mut shown: Option<Printed> = None;
    let mut stdout = Stdout {
        kill: call.kill,
        killed: killed.clone(),
        shown: &mut shown,
    };
    let work = async {
        let asked = host.call(ARGS, ExecutionContext::new(cancel.clone())).await;
        let _ = asked.deliver(&mut stdout).await;
    };
    let stopped = call
        .stopped
        .map(|(from, until)| (world.at(from), world.at(until)));
    let work = Stoppable::new(work, stopped);
    let signal = async {
        if let Some(t) = call.signal {
            sleep_until(world.at(t)).await;
            cancel.cancel();
        }
        std::future::pending::<()>().await;
    };
    let kill = async {
        match call.kill {
            Kill::Waiting(t) => sleep_until(world.at(t)).await,
            Kill::BeforeStdout | Kill::BeforeDelivered => killed.notified().await,
            Kill::Never => std::future::pending().await,
        }
    };
    let ends_by = call.start + call.budget.min(call.signal.unwrap_or(u64::MAX));
    let stop = call.stopped.map_or(0, |(from, until)| until - from);
    let bound = world.at(ends_by + stop) + BOUND_SLACK;
    let ended = tokio::select! {
        () = work => Ended::Exited,
        () = kill => Ended::Killed,
        () = sleep_until(bound) => Ended::Hung,
        () = signal => Ended::Hung,
    };
    // A process that exited or was killed is gone (a hung one still runs).
    if ended != Ended::Hung {
        world.processes.set(&identity, false);
    }
    let stored = match durable.ask_id() {
        Some(id) => world.store.get(id).await.ok(),
        None => None,
    };
    world.ledger.run(Run {
        caller: call.caller,
        retry,
        ask: durable.ask_id(),
        opened: durable.opened(),
        printed: shown,
        ended,
        stored,
        started: call.start,
        finished: if ended == Ended::Hung {
            u64::MAX
        } else {
            u64::try_from(world.start.elapsed().as_millis()).unwrap_or(u64::MAX)
        },
    });
}

/// The human answering caller 1's open ask in an inbox (through the store, first outcome
/// wins) at `at` with `label`: told "sent" only when the store took it.
pub async fn inbox(world: World, at: u64, label: &'static str, via: &'static str) {
    sleep_until(world.at(at)).await;
    let Ok(open) = world.store.list_open().await else {
        return;
    };
    let Some(card) = open.iter().find(|r| r.asker.pid == Some(1)) else {
        return;
    };
    let Ok(normalised) = ask_user_core::normalise(request(), answers(label)) else {
        return;
    };
    let outcome = ask_user_store::Outcome::Answered {
        answer: serde_json::to_value(&normalised).unwrap_or_default(),
        by: Responder {
            answerer: via.to_owned(),
            ..Responder::default()
        },
    };
    let now = (world.clock(0))();
    if let Ok(Recorded::Won) = world.store.record_outcome(card.id, &outcome, now).await {
        world.ledger.ack(card.id, label, via);
    }
}

/// Another process opening the store at `at` (as every `ask-user` run and the inbox do): it
/// runs the store's retention by its own clock, `off` milliseconds off. What the store held just
/// before is kept in the ledger, so an ask it purged can still be checked.
pub async fn sweep(world: World, at: u64, off: i64) {
    sleep_until(world.at(at)).await;
    let mut held = Vec::new();
    for id in 1..=MOST_ASKS {
        if let Ok(rec) = world.store.get(AskId(id)).await {
            held.push(rec);
        }
    }
    world.ledger.before_sweep(held);
    let now = (world.clock(off))();
    let _ = world.store.sweep(now, Retention::default()).await;
}

/// A process's work that SIGSTOP halts from the first instant to the second: it is not polled
/// in between (its timers fire late, what it waits for waits), and it is still alive.
struct Stoppable<F> {
    work: std::pin::Pin<Box<F>>,
    stopped: Option<(Instant, Instant)>,
    resume: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl<F: Future<Output = ()>> Stoppable<F> {
    fn new(work: F, stopped: Option<(Instant, Instant)>) -> Self {
        let until = stopped.map_or_else(Instant::now, |(_, until)| until);
        Self {
            work: Box::pin(work),
            stopped,
            resume: Box::pin(sleep_until(until)),
        }
    }
}

impl<F: Future<Output = ()>> Future for Stoppable<F> {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if let Some((from, until)) = self.stopped {
            let now = Instant::now();
            if now >= from && now < until {
                // Woken again at SIGCONT.
                return match self.resume.as_mut().poll(cx) {
                    std::task::Poll::Ready(()) => self.work.as_mut().poll(cx),
                    std::task::Poll::Pending => std::task::Poll::Pending,
                };
            }
        }
        self.work.as_mut().poll(cx)
    }
}
