//! [`HostCall`]: the one call assembly every host uses (the `ask-user ask` CLI, the MCP
//! server, the agent-host hook), so the order-sensitive rules of docs/contract.md §8 are
//! written once.
//!
//! Built by [`HostCall::builder`], a call's answerers are wrapped, innermost first, in:
//!
//! 1. the attention command ([`Notify`], `--notify`), run when the question opens;
//! 2. the journal's `ask` line (`Journal::shown`), written once the store gave the ask its id
//!    and before any answerer shows it (so both lines carry `store:<id>`);
//! 3. the durable link (`Durable::wrap`): the ask is stored before it is shown, re-attached
//!    or handed back when the same call comes again;
//!
//! and the tool's race records the outcome in the store before it is accepted
//! (`Durable::recorder`, with the builder's [`AroundRecord`] hooks before and after each write
//! when one is set). [`HostCall::call`] runs one tool call through all of this (the
//! journal's `outcome` line is on disk before it returns) and gives an [`Asked`]: the outcome,
//! which the host hands to [`Asked::deliver`]. Delivery is one fixed order:
//!
//! 1. **recorded locally** — done by the time [`Asked`] exists (store and journal);
//! 2. **the model's bytes written** — [`Delivery::write`], the host's own step (stdout, an MCP
//!    result, the hook's JSON); when it fails, nothing below runs and the outcome stays
//!    undelivered, so the same call asked again gets it;
//! 3. **upstream told** — [`Acknowledge`], when the host set one (a hub that holds the ask);
//! 4. **marked delivered** — [`Delivery::mark`], by default [`StoredAsk::mark_delivered`].
//!
//! No host can write before recording, or mark before writing: the parts this assembles
//! (`Durable::wrap`, `Durable::recorder`, `Durable::mark_delivered`, `Journal::shown`, the
//! journal's call) are private to this crate, and the only handle that marks an ask delivered,
//! [`StoredAsk`], is made by [`Asked::deliver`] after the write.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{
    Arguments, AskUserQuestionRequest, AskUserQuestionTool, BoxFuture, ExecutionContext, Limits,
    Outcome, RecordError, RecordOutcome, Settled, UserInteraction,
};

use crate::durable::Durable;
use crate::journal::Journal;
use crate::notify::Notify;

/// A host's step 2 of delivery (see the module doc): writing the model's bytes, and how the
/// ask is then marked delivered.
///
/// Any `FnMut(&Outcome) -> bool + Send` closure is a `Delivery` that writes synchronously and
/// marks with the default.
///
/// A step that never completes stops the delivery there, as a process killed at that point
/// would (the simulation's `kill -9` between writing the model's bytes and marking the ask
/// delivered): nothing after it runs, so the outcome stays undelivered for the retry.
pub trait Delivery: Send {
    /// Writes the outcome where the model reads it; `true` when it was written (the model can
    /// have read it), `false` when it was not (the outcome then stays undelivered).
    fn write<'a>(&'a mut self, outcome: &'a Outcome) -> BoxFuture<'a, bool>;

    /// Marks the stored ask delivered, after [`Delivery::write`] succeeded. The default is
    /// [`StoredAsk::mark_delivered`]; a host whose write can still be taken back (an MCP result
    /// the client cancels) marks through its own bookkeeping ([`StoredAsk::delivery`]).
    fn mark<'a>(&'a mut self, ask: StoredAsk<'a>) -> BoxFuture<'a, ()> {
        Box::pin(ask.mark_delivered())
    }
}

/// The stored ask of a call whose outcome was written, handed to [`Delivery::mark`] by
/// [`Asked::deliver`] (and made nowhere else): what a delivery marks.
#[derive(Debug, Clone, Copy)]
pub struct StoredAsk<'a> {
    durable: &'a Durable,
}

impl StoredAsk<'_> {
    /// Marks the ask delivered: a compare-and-set on the exact outcome this call's race stored
    /// or was handed, never on whatever the store holds now; nothing for a call that was
    /// aborted (its caller is going away: the outcome stays for the retry) or whose race never
    /// reached the store. Errors are logged.
    pub async fn mark_delivered(self) {
        self.durable.mark_delivered().await;
    }

    /// The ask and the exact outcome a mark compare-and-sets on; `None` for a call that was
    /// aborted or whose race never reached the store (then nothing is to be marked).
    pub fn delivery(&self) -> Option<(ask_user_store::AskId, ask_user_store::Outcome)> {
        self.durable.delivery()
    }

    /// The store the ask is in.
    pub fn store(&self) -> &ask_user_store::Store {
        self.durable.store()
    }
}

impl<F: FnMut(&Outcome) -> bool + Send> Delivery for F {
    fn write<'a>(&'a mut self, outcome: &'a Outcome) -> BoxFuture<'a, bool> {
        let written = self(outcome);
        Box::pin(std::future::ready(written))
    }
}

/// Step 3 of delivery (see the module doc): telling whoever holds the ask upstream (a hub)
/// that the model got its outcome. Runs only after the bytes were written; its failures are
/// the implementer's to log.
pub trait Acknowledge: Send + Sync {
    /// The model got `outcome`.
    fn acknowledge<'a>(&'a self, outcome: &'a Outcome) -> BoxFuture<'a, ()>;
}

/// Hooks around the store's write inside the race (see [`HostCallBuilder::around_record`]):
/// they run before and after each write and can delay it (the simulation's busy disk,
/// `crates/sim`), never skip or change it.
pub trait AroundRecord: Send + Sync {
    /// Runs before `settled` is written.
    fn before<'a>(&'a self, _settled: &'a Settled) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// Runs after `settled` was written (or failed to be: `recorded`), before the race hears
    /// the result.
    fn after<'a>(
        &'a self,
        _settled: &'a Settled,
        _recorded: &'a Result<(), RecordError>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// The store's recorder with [`AroundRecord`] hooks.
struct Around {
    recorder: Arc<dyn RecordOutcome>,
    around: Arc<dyn AroundRecord>,
}

impl RecordOutcome for Around {
    fn record<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        settled: &'a Settled,
    ) -> BoxFuture<'a, Result<(), RecordError>> {
        Box::pin(async move {
            self.around.before(settled).await;
            let recorded = self.recorder.record(request, settled).await;
            self.around.after(settled, &recorded).await;
            recorded
        })
    }
}

/// How a [`HostCall`] is put together (see [`HostCall::builder`]).
#[must_use]
pub struct HostCallBuilder {
    answerer: Arc<dyn UserInteraction>,
    around_record: Option<Arc<dyn AroundRecord>>,
    journal: Option<Arc<Journal>>,
    notify: Option<String>,
    durable: Option<Durable>,
    timeout: Option<Duration>,
    limits: Limits,
    acknowledge: Option<Arc<dyn Acknowledge>>,
}

impl std::fmt::Debug for HostCallBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCallBuilder")
            .field("journal", &self.journal.as_ref().map(|j| j.path()))
            .field("notify", &self.notify.is_some())
            .field("durable", &self.durable)
            .field("timeout", &self.timeout)
            .field("around_record", &self.around_record.is_some())
            .finish_non_exhaustive()
    }
}

impl HostCallBuilder {
    /// Journals the call (`--journal`): its `ask` and `outcome` lines are on disk before the
    /// outcome is delivered.
    pub fn journal(self, journal: Option<Arc<Journal>>) -> Self {
        Self { journal, ..self }
    }

    /// Runs the attention command `command` (`--notify`) when the question opens.
    pub fn notify(self, command: Option<String>) -> Self {
        Self {
            notify: command,
            ..self
        }
    }

    /// Keeps the ask in the store through `durable` (docs/contract.md §8); `None`: the ask
    /// lives only as long as its call (scripted answers, a host with no store).
    pub fn durable(self, durable: Option<Durable>) -> Self {
        Self { durable, ..self }
    }

    /// Gives up after `timeout` (`--timeout`); `None` waits for the human.
    pub fn timeout(self, timeout: Option<Duration>) -> Self {
        Self { timeout, ..self }
    }

    /// Caps the model's arguments.
    pub fn limits(self, limits: Limits) -> Self {
        Self { limits, ..self }
    }

    /// Tells `upstream` once the model's bytes were written (step 3 of delivery).
    pub fn acknowledge(self, upstream: Arc<dyn Acknowledge>) -> Self {
        Self {
            acknowledge: Some(upstream),
            ..self
        }
    }

    /// Runs `around` before and after each of the store's writes inside the race (the outcome
    /// written before it is accepted, docs/contract.md §8): it can observe or delay the write
    /// (the simulation's busy disk, `crates/sim`), never skip or change it, nor the order the
    /// call is assembled in. Without a store ([`Self::durable`] `None`) nothing is written and
    /// `around` never runs.
    pub fn around_record(self, around: Arc<dyn AroundRecord>) -> Self {
        Self {
            around_record: Some(around),
            ..self
        }
    }

    /// The call, assembled in the order of the module doc.
    pub fn build(self) -> HostCall {
        let mut answerer = self.answerer;
        if let Some(command) = self.notify {
            answerer = Arc::new(Notify::new(answerer, command));
        }
        let answerer = match (&self.durable, &self.journal) {
            (Some(durable), Some(journal)) => durable.wrap(journal.shown(durable, answerer)),
            (Some(durable), None) => durable.wrap(answerer),
            (None, _) => answerer,
        };
        let mut tool = AskUserQuestionTool::new(answerer)
            .with_timeout(self.timeout)
            .with_limits(self.limits);
        if let Some(durable) = &self.durable {
            let recorder = durable.recorder();
            tool = tool.with_recorder(match self.around_record {
                Some(around) => Arc::new(Around { recorder, around }),
                None => recorder,
            });
        }
        HostCall {
            tool,
            journal: self.journal,
            durable: self.durable,
            acknowledge: self.acknowledge,
        }
    }
}

/// One tool call of a host, assembled once (see the module doc).
pub struct HostCall {
    tool: AskUserQuestionTool,
    journal: Option<Arc<Journal>>,
    durable: Option<Durable>,
    acknowledge: Option<Arc<dyn Acknowledge>>,
}

impl std::fmt::Debug for HostCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCall")
            .field("journal", &self.journal.as_ref().map(|j| j.path()))
            .field("durable", &self.durable)
            .finish_non_exhaustive()
    }
}

impl HostCall {
    /// A call asking `answerer`, with no journal, notification, store or timeout until the
    /// builder adds them.
    pub fn builder(answerer: Arc<dyn UserInteraction>) -> HostCallBuilder {
        HostCallBuilder {
            answerer,
            around_record: None,
            journal: None,
            notify: None,
            durable: None,
            timeout: None,
            limits: Limits::default(),
            acknowledge: None,
        }
    }

    /// The call's link to the store, when it has one.
    pub fn durable(&self) -> Option<&Durable> {
        self.durable.as_ref()
    }

    /// Runs the tool call: the caller guard, decoding (leniencies logged), the ask through the
    /// assembled answerers, the outcome recorded in the store and the journal. The returned
    /// [`Asked`] is delivered with [`Asked::deliver`].
    pub async fn call(
        &self,
        arguments: impl Into<Arguments>,
        context: ExecutionContext,
    ) -> Asked<'_> {
        let outcome = match (&self.journal, &self.durable) {
            (Some(journal), Some(durable)) => {
                journal
                    .call_stored(&self.tool, arguments, context, durable)
                    .await
            }
            (journal, _) => {
                crate::args::call(journal.as_deref(), &self.tool, arguments, context).await
            }
        };
        let outcome = match &self.durable {
            Some(durable) => durable.outcome_to_deliver(outcome),
            None => outcome,
        };
        Asked {
            call: self,
            outcome,
        }
    }
}

/// A call's outcome, recorded and not yet delivered (see the module doc).
#[must_use = "an outcome is delivered with `Asked::deliver`"]
#[derive(Debug)]
pub struct Asked<'c> {
    call: &'c HostCall,
    outcome: Outcome,
}

impl Asked<'_> {
    /// The outcome the model is to read.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Delivers the outcome in the fixed order of the module doc: `delivery` writes it; only
    /// when that succeeded is upstream told and the stored ask marked delivered. Returns the
    /// outcome and whether it was written.
    pub async fn deliver<D: Delivery + ?Sized>(self, delivery: &mut D) -> (Outcome, bool) {
        let written = delivery.write(&self.outcome).await;
        if written {
            if let Some(upstream) = &self.call.acknowledge {
                upstream.acknowledge(&self.outcome).await;
            }
            if let Some(durable) = &self.call.durable {
                delivery.mark(StoredAsk { durable }).await;
            }
        }
        (self.outcome, written)
    }

    /// The outcome, for a host whose model reads nothing of it through a delivery (nothing
    /// is marked delivered and upstream is not told).
    pub fn into_outcome(self) -> Outcome {
        self.outcome
    }
}
