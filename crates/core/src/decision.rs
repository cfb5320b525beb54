//! Decided before acknowledged (docs/contract.md §4): the one place where an ask's outcome is
//! decided, so an answerer tells the human "sent" only for the answer that counts.
//!
//! Every ask run by [`crate::AskUserQuestionTool`] has one race, reached through [`Decide`]
//! handles. An answerer that acknowledges the human (a page, a channel, an inbox)
//! [`offers`](Decide::offer) what the human gave and hears a [`Decision`]:
//!
//! - [`Decision::Accepted`]: the answer (or dismissal) is the outcome; now say "sent";
//! - [`Decision::Invalid`]: it does not fit the questions ([`crate::normalise`]); say why and
//!   keep the question open — the race is still open;
//! - [`Decision::Refused`]: the race was already settled — another answer won, the human
//!   dismissed elsewhere, the ask timed out, was aborted or withdrawn; the [`Settled`] value
//!   says which, so the human can be told it was not taken and why;
//! - [`Decision::NotRecorded`]: the outcome could not be recorded (see [`RecordOutcome`]); the
//!   race stays open and the human may try again.
//!
//! When the recorder reports that its store was settled another way first (an answer given in
//! another process won the store's compare-and-set, [`RecordError::Settled`]), that outcome
//! becomes the race's: the offer is refused saying so, and the tool's own closing (budget,
//! signal) yields it instead of its ending. Every decision runs to its end on its own task,
//! even when the future that asked for it is dropped, so none waits on a lock held by a
//! future nobody polls.
//!
//! The first outcome wins: offers and the tool's own closing (budget ran out, turn aborted,
//! every answerer failed) are serialised, and whichever settles the race first is final. What
//! the model reads is taken from the settled race, never from a future that happened to
//! finish first, so an acknowledged answer is never dropped by a timeout or a fan-out losing
//! the `select!`.
//!
//! A host that keeps outcomes (a durable store) plugs a [`RecordOutcome`] into the tool; the
//! race calls it inside the decision, after the answer is checked and before it is accepted,
//! so nothing is acknowledged that was not recorded. The core itself does no I/O.
//!
//! **An answerer whose human decides elsewhere** (a hub: its store takes the human's answer by
//! its own compare-and-set, and tells the human "sent" there) registers that other side with
//! [`Decide::add_remote`]. Before the race is closed without a human (the budget ran out, the
//! ask was withdrawn) each remote side is closed first ([`RemoteOutcome::close`]); when one
//! reports that its human had already answered or dismissed, that outcome settles the race
//! instead of the ending — the call prints what the other side told its human was sent
//! (docs/contract.md §8 "Exactly once, made precise").
//!
//! **Whether the caller still waits** (docs/contract.md §8) is a fact about the race too: a
//! host that keeps an ask open after its caller went away (a durable store: the ask is
//! *detached*) says so with [`Decide::set_caller_waiting`], and an answerer that shows the
//! question follows [`Decide::caller_waiting`] to tell the human "the agent stopped waiting;
//! your answer is kept". It is a flag in memory, shared by every handle of the race; a fresh
//! race starts with its caller waiting.
//!
//! **The same answer again** (docs/contract.md §8, "No answer the human did not give to this
//! call"): an identical question asked after the human's answer to an earlier one was delivered
//! is a new question; a host that knows that earlier answer hands it to the race's handles
//! ([`Decide::with_given_before`]) and a surface may offer it beside the question, "Send the
//! same answer again (given 10:42: Yes)". Only the human's own act sends it — through
//! [`Decide::offer`], like any answer, after they saw all of it; nothing here sends it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use crate::answer::{Answers, InvalidAnswer, normalise};
use crate::interaction::BoxFuture;
use crate::request::AskUserQuestionRequest;

/// What an answerer offers as the outcome of an ask.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Offer {
    /// The human's answers, as submitted (the race normalises them).
    Answers(Answers),
    /// The human dismissed the whole batch.
    Dismiss,
}

/// How a race ended. Once settled it never changes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Settled {
    /// The human answered; `answers` are normalised. `by` names where, when the answerer gave
    /// its name (e.g. `"the terminal"`, `"the web page"`; see [`crate::UserInteraction::name`]).
    Answered {
        /// The normalised answers the model reads.
        answers: Answers,
        /// Where the human answered, when known.
        by: Option<String>,
    },
    /// The human dismissed the batch (`by` as above).
    Dismissed {
        /// Where the human dismissed, when known.
        by: Option<String>,
    },
    /// The host's time budget ran out before a human decided.
    TimedOut(Duration),
    /// The caller's turn was cancelled before a human decided.
    Aborted,
    /// The ask ended without a human decision for another reason (every answerer failed or
    /// was unavailable, an invalid single-step answer, the answerer stopped).
    Withdrawn,
}

impl Settled {
    /// Whether a human decided this (answered or dismissed), rather than the ask ending.
    pub fn is_human(&self) -> bool {
        matches!(self, Self::Answered { .. } | Self::Dismissed { .. })
    }

    /// Where the human answered or dismissed, when the answerer named itself.
    pub fn by(&self) -> Option<&str> {
        match self {
            Self::Answered { by, .. } | Self::Dismissed { by } => by.as_deref(),
            _ => None,
        }
    }
}

/// The answer to an [`Offer`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// The offer is the outcome (recorded, when a recorder is set). Tell the human "sent".
    Accepted,
    /// The race was settled before this offer; the value says how. Tell the human the answer
    /// was not taken and why.
    Refused(Settled),
    /// The answers do not fit the questions; the race stays open. Show the reason and keep the
    /// question open.
    Invalid(InvalidAnswer),
    /// The recorder failed (the message says why); the race stays open.
    NotRecorded(String),
}

/// Persists an outcome inside the decision, before it is accepted (a durable store's hook,
/// docs/contract.md §8). Called once per race, with the race's lock held, for the outcome
/// that settles it: a human's answer or dismissal and also the tool's own closing (timed out,
/// aborted, withdrawn).
///
/// - `Ok(())`: `settled` is recorded; it is the race's outcome.
/// - [`RecordError::Settled`]: the store had already settled the ask another way (an answer
///   given in another process won its compare-and-set): that outcome becomes the race's, for
///   an offer (refused, saying why) and for the tool's closing alike — a budget or a signal
///   that loses to a stored answer yields the answer.
/// - [`RecordError::Failed`]: nothing was recorded. An offer is refused with
///   [`Decision::NotRecorded`] and the race stays open; the tool's closing cannot reopen the
///   ask, so it settles the race anyway (the implementation logs the failure).
pub trait RecordOutcome: Send + Sync {
    /// Records `settled` as the outcome of `request`; see the trait doc for what an error
    /// means.
    fn record<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        settled: &'a Settled,
    ) -> BoxFuture<'a, Result<(), RecordError>>;
}

/// Why a [`RecordOutcome`] did not record an outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// The ask was already settled as this (first outcome wins in the store too): it is the
    /// race's outcome.
    Settled(Settled),
    /// The outcome could not be recorded; the text says why (shown to the human).
    Failed(String),
}

impl From<String> for RecordError {
    fn from(why: String) -> Self {
        Self::Failed(why)
    }
}

/// The other side of an answerer whose human decides elsewhere (see the module doc and
/// [`Decide::add_remote`]).
pub trait RemoteOutcome: Send + Sync {
    /// Closes the remote side with `ending` (timed out, withdrawn; never called for
    /// [`Settled::Aborted`]: a caller that went away leaves the remote ask for its retry).
    /// `Some(offer)`: the remote side had already been settled by its human with `offer`,
    /// which then settles the race. `None`: closed (or unreachable: the ending stands).
    /// Bounded: the race waits for it.
    fn close<'a>(&'a self, ending: &'a Settled) -> BoxFuture<'a, Option<Offer>>;
}

/// A registered remote side and the name its outcomes are signed with.
type Remote = (Arc<dyn RemoteOutcome>, Option<String>);

struct Race {
    request: AskUserQuestionRequest,
    recorder: Option<Arc<dyn RecordOutcome>>,
    /// Remote sides closed before an ending settles the race, each with the name its offers
    /// are signed with.
    remotes: Mutex<Vec<Remote>>,
    /// Serialises decisions, held across the recorder's await.
    deciding: futures::lock::Mutex<()>,
    /// `None` while open; read without waiting for a decision in flight.
    settled: Mutex<Option<Settled>>,
    /// Whether the caller still waits for the outcome (see the module doc).
    caller: tokio::sync::watch::Sender<bool>,
}

/// A handle on an ask's race (see the module doc). Cheap to clone; every clone offers into the
/// same race. [`Decide::named`] gives a clone that signs its offers with where the human is.
#[derive(Clone)]
pub struct Decide {
    race: Arc<Race>,
    by: Option<Arc<str>>,
    again: Option<Arc<GivenBefore>>,
}

/// An answer the human gave before to the same question (the same namespace and request),
/// delivered to its call: what a surface may offer beside a fresh ask of that question as one
/// act of the human's (see the module doc). The answers fit the request (it is the same one);
/// [`Decide::offer`] checks them again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenBefore {
    /// The answers given then, in the output shape.
    pub answers: Answers,
    /// When they were given.
    pub given_at: SystemTime,
}

impl std::fmt::Debug for Decide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decide")
            .field("by", &self.by)
            .field("settled", &self.settled())
            .finish_non_exhaustive()
    }
}

impl Decide {
    /// A fresh, open race for `request`, with no recorder. [`crate::AskUserQuestionTool`]
    /// makes one per call; an answerer asked on its own makes its own.
    pub fn new(request: &AskUserQuestionRequest) -> Self {
        Self::with_recorder(request, None)
    }

    /// A fresh race whose outcome `recorder` persists before it is accepted.
    pub fn with_recorder(
        request: &AskUserQuestionRequest,
        recorder: Option<Arc<dyn RecordOutcome>>,
    ) -> Self {
        Self {
            race: Arc::new(Race {
                request: request.clone(),
                recorder,
                remotes: Mutex::new(Vec::new()),
                deciding: futures::lock::Mutex::new(()),
                settled: Mutex::new(None),
                caller: tokio::sync::watch::Sender::new(true),
            }),
            by: None,
            again: None,
        }
    }

    /// The same race, its handles offering `given` to the human as "the same answer again"
    /// ([`Decide::given_before`]); handles made from it ([`Decide::named`]) carry it too.
    #[must_use]
    pub fn with_given_before(self, given: GivenBefore) -> Self {
        Self {
            again: Some(Arc::new(given)),
            ..self
        }
    }

    /// The answer the human gave before to the same question, when the host found one: a
    /// surface may offer it beside the question, and sends it (through [`Decide::offer`]) only
    /// when the human chose it, having seen all of it.
    pub fn given_before(&self) -> Option<&GivenBefore> {
        self.again.as_deref()
    }

    /// A handle on the same race whose offers are signed `by` (where the human is, e.g.
    /// `"the web page"`); a later `named` replaces the name.
    pub fn named(&self, by: &str) -> Self {
        Self {
            race: self.race.clone(),
            by: Some(by.into()),
            again: self.again.clone(),
        }
    }

    /// The name this handle signs with.
    pub fn name(&self) -> Option<&str> {
        self.by.as_deref()
    }

    /// Tells every answerer of this race whether its caller still waits for the outcome:
    /// `false` when the host keeps the ask open after the caller went away (detached), `true`
    /// again when a retry re-attached. Changes nothing in the race itself: the question stays
    /// answerable either way. Setting the value it already has wakes nobody.
    pub fn set_caller_waiting(&self, waiting: bool) {
        self.race.caller.send_if_modified(|now| {
            let changed = *now != waiting;
            *now = waiting;
            changed
        });
    }

    /// Follows whether the caller still waits ([`Decide::set_caller_waiting`]); the receiver
    /// holds the current value (`true` for a fresh race) and wakes on each change.
    pub fn caller_waiting(&self) -> tokio::sync::watch::Receiver<bool> {
        self.race.caller.subscribe()
    }

    /// Registers `remote`, the other side of an answerer whose human decides elsewhere (see
    /// the module doc): before an ending (timed out, withdrawn) settles the race, `remote` is
    /// closed, and an answer or dismissal it reports settles the race instead, signed with
    /// this handle's name.
    pub fn add_remote(&self, remote: Arc<dyn RemoteOutcome>) {
        self.race
            .remotes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((remote, self.by.as_deref().map(str::to_owned)));
    }

    /// How the race ended, or `None` while it is open (a decision in flight counts as open).
    pub fn settled(&self) -> Option<Settled> {
        self.lock().clone()
    }

    /// Offers a human's answer or dismissal as the outcome; see [`Decision`]. Answers are
    /// normalised first (an invalid one leaves the race open); the recorder, if any, runs
    /// before the race is settled.
    ///
    /// The decision runs to its end even when this future is dropped (a `select!` that
    /// stopped polling the answerer): it runs on its own task when a Tokio runtime is there,
    /// so no other decision ever waits on a lock held by a future nobody polls.
    pub async fn offer(&self, offer: Offer) -> Decision {
        let by = self.by.as_deref().map(str::to_owned);
        let proposed = match offer {
            Offer::Answers(answers) => match normalise(&self.race.request, answers) {
                Ok(answers) => Settled::Answered { answers, by },
                Err(invalid) => return Decision::Invalid(invalid),
            },
            Offer::Dismiss => Settled::Dismissed { by },
        };
        match self.decide(proposed, true).await {
            Step::Won(_) => Decision::Accepted,
            Step::Already(settled) => Decision::Refused(settled),
            Step::Failed(why) => Decision::NotRecorded(why),
        }
    }

    /// Settles the race with `ending` (timed out, aborted, withdrawn) unless it is settled
    /// already, and returns how it ended: `ending`, or the outcome that came first — an answer
    /// accepted just before the budget ran out, or one the recorder reports was stored first
    /// ([`RecordError::Settled`]) — which then stands. Waits for a decision in flight (which
    /// runs on its own, see [`Decide::offer`]); a recorder failure is ignored here (see
    /// [`RecordOutcome`]).
    pub async fn close(&self, ending: Settled) -> Settled {
        match self.decide(ending.clone(), false).await {
            Step::Won(settled) | Step::Already(settled) => settled,
            // Only a crashed decision task gets here: settle as asked unless settled since.
            Step::Failed(_) => self.lock().get_or_insert(ending).clone(),
        }
    }

    /// Runs one decision on its own task (see [`Decide::offer`]), inline without a runtime.
    async fn decide(&self, proposed: Settled, human: bool) -> Step {
        let deciding = decide(self.race.clone(), proposed, human);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime.spawn(deciding).await.unwrap_or_else(|crashed| {
                Step::Failed(format!("the decision did not finish ({crashed})"))
            }),
            Err(_) => deciding.await,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Settled>> {
        self.race
            .settled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// What one decision did.
enum Step {
    /// The proposal settled the race.
    Won(Settled),
    /// The race was settled already (in memory, or in the store as the recorder said).
    Already(Settled),
    /// The recorder failed on a human's offer; the race stays open.
    Failed(String),
}

/// One decision, serialised with every other of the race: an open race takes `proposed` once
/// the recorder kept it (see [`RecordOutcome`] for its answers; `human` says whether a failure
/// refuses the proposal or is ignored). An ending (`human` false) closes the remote sides
/// first; a human's outcome one of them reports replaces it ([`RemoteOutcome`]) — unless the
/// recorder cannot keep it, then the ending stands.
async fn decide(race: Arc<Race>, mut proposed: Settled, human: bool) -> Step {
    let _deciding = race.deciding.lock().await;
    let settled = |race: &Race| {
        race.settled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    };
    if let Some(settled) = settled(&race) {
        return Step::Already(settled);
    }
    // The ending as asked, kept when a remote's outcome cannot be recorded here.
    let ending = proposed.clone();
    if !human && !matches!(proposed, Settled::Aborted) {
        let remotes = race
            .remotes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for (remote, by) in remotes {
            let taken = match remote.close(&proposed).await {
                Some(Offer::Answers(answers)) => normalise(&race.request, answers)
                    .ok()
                    .map(|answers| Settled::Answered { answers, by }),
                Some(Offer::Dismiss) => Some(Settled::Dismissed { by }),
                None => None,
            };
            if let Some(taken) = taken {
                proposed = taken;
                break;
            }
        }
    }
    let outcome = match &race.recorder {
        Some(recorder) => match recorder.record(&race.request, &proposed).await {
            Ok(()) => Step::Won(proposed),
            Err(RecordError::Settled(first)) => Step::Already(first),
            Err(RecordError::Failed(why)) if human => return Step::Failed(why),
            // A remote side's answer that could not be recorded here is not printed (the
            // remote keeps it, undelivered, for the retry): the ending stands.
            Err(RecordError::Failed(_)) => Step::Won(ending),
        },
        None => Step::Won(proposed),
    };
    if let Step::Won(s) | Step::Already(s) = &outcome {
        *race.settled.lock().unwrap_or_else(PoisonError::into_inner) = Some(s.clone());
    }
    outcome
}

#[cfg(test)]
mod caller_tests {
    use super::*;
    use crate::request::{Question, QuestionOption};

    fn request() -> AskUserQuestionRequest {
        AskUserQuestionRequest::new(
            vec![Question {
                id: "go".into(),
                question: "Deploy?".into(),
                header: None,
                options: vec![QuestionOption {
                    label: "Yes".into(),
                    description: None,
                }],
                multi_select: false,
            }],
            &crate::Limits::default(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn the_answer_given_before_goes_with_every_named_handle_and_is_only_an_offer() {
        let given = GivenBefore {
            answers: Answers {
                answers: vec![crate::AnswerItem::selected("go", ["Yes"])],
            },
            given_at: std::time::UNIX_EPOCH,
        };
        let decide = Decide::new(&request());
        assert_eq!(decide.given_before(), None);
        let decide = decide.with_given_before(given.clone());
        assert_eq!(decide.named("the terminal").given_before(), Some(&given));
        assert_eq!(decide.settled(), None, "carrying it decides nothing");
    }

    #[tokio::test]
    async fn every_handle_of_a_race_follows_whether_its_caller_waits() {
        let decide = Decide::new(&request());
        let page = decide.named("the web page");
        let mut follows = page.caller_waiting();
        assert!(*follows.borrow_and_update(), "a fresh race's caller waits");
        decide.set_caller_waiting(true);
        assert!(
            !follows.has_changed().unwrap(),
            "the same value wakes nobody"
        );
        decide.set_caller_waiting(false);
        follows.changed().await.unwrap();
        assert!(!*follows.borrow_and_update());
        // A handle taken later sees the value now.
        assert!(!*decide.named("x").caller_waiting().borrow());
        decide.set_caller_waiting(true);
        follows.changed().await.unwrap();
        assert!(*follows.borrow());
        // Another race is not affected.
        assert!(*Decide::new(&request()).caller_waiting().borrow());
    }
}
