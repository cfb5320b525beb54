//! Stand-in answerers (feature `answerers`): no UI, so what the core and the hosts do with an
//! answer, a dismissal, a silence, an unreachable human or an acknowledged offer can be
//! observed exactly. Each records what a test asserts about it (how often it was asked,
//! whether it withdrew, what the race told it).
//!
//! [`Fixed`] gives one reply and acknowledges nothing (a terminal, scripted data); [`Waiting`]
//! waits to be cancelled, or released (a human who is away, or answers later); [`Unavailable`]
//! reaches nobody; [`Offering`] offers through the race ([`Decide`]) and reports the decision
//! (a page that says "sent" only once its answer was taken); [`Holding`] holds many asks at
//! once. [`Recorder`] stands in for the store an outcome is recorded in.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    Decision, Offer, RecordError, RecordOutcome, Settled, UserInteraction,
};
use tokio::sync::Notify;

/// Answers with `label` selected for the question `id`.
pub fn selected(id: &str, label: &str) -> Answers {
    Answers {
        answers: vec![AnswerItem::selected(id, [label])],
    }
}

/// Answers the first question of `request` with its first option.
pub fn first_option(request: &AskUserQuestionRequest) -> Answers {
    let q = &request.questions()[0];
    selected(&q.id, &q.options[0].label)
}

/// Answers every question of `request`: its first option, or "free text" when it has none.
pub fn stand_in(request: &AskUserQuestionRequest) -> Answers {
    let answers = request
        .questions()
        .iter()
        .map(|q| match q.options.first() {
            Some(first) => AnswerItem::selected(&q.id, [first.label.clone()]),
            None => AnswerItem::custom(&q.id, "free text"),
        })
        .collect();
    Answers { answers }
}

/// What a stand-in gives the human's side of the call.
#[derive(Debug, Clone)]
pub enum Reply {
    /// These answers.
    Answers(Answers),
    /// Answers made from the request (e.g. [`first_option`]).
    From(fn(&AskUserQuestionRequest) -> Answers),
    /// The human dismissed the batch.
    Dismiss,
    /// The answerer failed with this error.
    Error(AskError),
}

impl Reply {
    fn result(&self, request: &AskUserQuestionRequest) -> Result<Answers, AskError> {
        match self {
            Self::Answers(answers) => Ok(answers.clone()),
            Self::From(make) => Ok(make(request)),
            Self::Dismiss => Err(AskError::Dismissed),
            Self::Error(error) => Err(error.clone()),
        }
    }

    fn offer(&self, request: &AskUserQuestionRequest) -> Offer {
        match self.result(request) {
            Ok(answers) => Offer::Answers(answers),
            Err(AskError::Dismissed) => Offer::Dismiss,
            Err(error) => panic!("an error is not offered: {error}"),
        }
    }
}

impl From<Answers> for Reply {
    fn from(answers: Answers) -> Self {
        Self::Answers(answers)
    }
}

impl From<Result<Answers, AskError>> for Reply {
    fn from(result: Result<Answers, AskError>) -> Self {
        match result {
            Ok(answers) => Self::Answers(answers),
            Err(AskError::Dismissed) => Self::Dismiss,
            Err(error) => Self::Error(error),
        }
    }
}

/// Gives one reply and acknowledges nothing (the caller offers it): at once, or after a delay
/// it sleeps through without watching its token (a terminal whose human answers then).
#[derive(Debug)]
pub struct Fixed {
    reply: Reply,
    after: Option<Duration>,
    name: Option<&'static str>,
    asked: AtomicUsize,
}

impl Fixed {
    /// Gives `reply` at once; no name, available.
    pub fn new(reply: impl Into<Reply>) -> Self {
        Self {
            reply: reply.into(),
            after: None,
            name: None,
            asked: AtomicUsize::new(0),
        }
    }

    /// Gives the reply only after `delay`.
    pub fn after(self, delay: Duration) -> Self {
        Self {
            after: Some(delay),
            ..self
        }
    }

    /// Names where it reaches the human ([`UserInteraction::name`]).
    pub fn named(self, name: &'static str) -> Self {
        Self {
            name: Some(name),
            ..self
        }
    }

    /// How many asks started.
    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

impl UserInteraction for Fixed {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        _: CancellationToken,
        _: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if let Some(delay) = self.after {
                tokio::time::sleep(delay).await;
            }
            self.reply.result(request)
        })
    }

    fn name(&self) -> Option<&str> {
        self.name
    }
}

/// When a [`Waiting`] answerer's human answers.
#[derive(Debug)]
enum Release {
    After(Duration),
    On(Arc<Notify>),
}

/// Waits until cancelled, then withdraws (a human who is away, or answering elsewhere); or,
/// released first ([`Waiting::answering_after`], [`Waiting::answering_when`]), gives its reply.
/// Acknowledges nothing.
#[derive(Debug, Default)]
pub struct Waiting {
    asked: AtomicUsize,
    withdrawn: AtomicUsize,
    unavailable: bool,
    name: Option<&'static str>,
    release: Option<(Release, Reply)>,
}

impl Waiting {
    /// Never answers; available, no name.
    pub fn new() -> Self {
        Self::default()
    }

    /// Says it is unavailable ([`UserInteraction::is_available`]) yet waits when asked.
    pub fn unavailable(self) -> Self {
        Self {
            unavailable: true,
            ..self
        }
    }

    /// Names where it reaches the human ([`UserInteraction::name`]).
    pub fn named(self, name: &'static str) -> Self {
        Self {
            name: Some(name),
            ..self
        }
    }

    /// Gives `reply` after `delay`, unless cancelled first.
    pub fn answering_after(self, delay: Duration, reply: impl Into<Reply>) -> Self {
        Self {
            release: Some((Release::After(delay), reply.into())),
            ..self
        }
    }

    /// Gives `reply` once `go` is notified, unless cancelled first.
    pub fn answering_when(self, go: Arc<Notify>, reply: impl Into<Reply>) -> Self {
        Self {
            release: Some((Release::On(go), reply.into())),
            ..self
        }
    }

    /// How many asks started.
    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }

    /// Whether it saw its token fire and withdrew.
    pub fn withdrawn(&self) -> bool {
        self.withdrawals() > 0
    }

    /// How many asks it withdrew because their token fired.
    pub fn withdrawals(&self) -> usize {
        self.withdrawn.load(Ordering::SeqCst)
    }
}

impl UserInteraction for Waiting {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            self.asked.fetch_add(1, Ordering::SeqCst);
            let released = async {
                match &self.release {
                    Some((Release::After(delay), reply)) => {
                        tokio::time::sleep(*delay).await;
                        reply
                    }
                    Some((Release::On(go), reply)) => {
                        go.notified().await;
                        reply
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                reply = released => reply.result(request),
                () = cancel.cancelled() => {
                    self.withdrawn.fetch_add(1, Ordering::SeqCst);
                    Err(AskError::Cancelled)
                }
            }
        })
    }

    fn name(&self) -> Option<&str> {
        self.name
    }

    fn is_available(&self) -> bool {
        !self.unavailable
    }
}

/// Reaches nobody: says so ([`UserInteraction::is_available`] is false) and, asked anyway,
/// fails at once with [`AskError::Unavailable`] and this reason.
#[derive(Debug, Clone, Copy)]
pub struct Unavailable(pub &'static str);

impl UserInteraction for Unavailable {
    fn ask_decided<'a>(
        &'a self,
        _: &'a AskUserQuestionRequest,
        _: CancellationToken,
        _: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(std::future::ready(Err(AskError::Unavailable(
            self.0.to_owned(),
        ))))
    }

    fn is_available(&self) -> bool {
        false
    }
}

/// When an [`Offering`] answerer's human submits.
#[derive(Debug, Clone, Copy)]
pub enum Submits {
    /// As soon as it is asked.
    AtOnce,
    /// After this long, unless the question is withdrawn first.
    After(Duration),
    /// Just as the question is being withdrawn (the click arrives with the withdrawal).
    OnCancel,
}

/// A page-like answerer that acknowledges: offers its reply through the race ([`Decide`])
/// and remembers what it was told, then (unless it returns at once, [`Offering::returning`])
/// stays pending, as if it lost every `select!` from then on, until cancelled, and remembers
/// what the race said when its question was withdrawn.
#[derive(Debug)]
pub struct Offering {
    reply: Reply,
    submits: Submits,
    returns: Option<Result<Answers, AskError>>,
    name: Option<&'static str>,
    heard: Mutex<Option<Decision>>,
    withdrawn_because: Mutex<Option<Option<Settled>>>,
}

impl Offering {
    /// Offers `reply` (answers or a dismissal) when the human `submits`; no name.
    pub fn new(reply: impl Into<Reply>, submits: Submits) -> Self {
        Self {
            reply: reply.into(),
            submits,
            returns: None,
            name: None,
            heard: Mutex::new(None),
            withdrawn_because: Mutex::new(None),
        }
    }

    /// Names where it reaches the human ([`UserInteraction::name`]).
    pub fn named(self, name: &'static str) -> Self {
        Self {
            name: Some(name),
            ..self
        }
    }

    /// Returns `result` right after offering instead of waiting to be cancelled.
    pub fn returning(self, result: Result<Answers, AskError>) -> Self {
        Self {
            returns: Some(result),
            ..self
        }
    }

    /// What the race answered its offer, once it offered.
    pub fn heard(&self) -> Option<Decision> {
        self.heard.lock().unwrap().clone()
    }

    /// What [`Decide::settled`] said when its question was withdrawn, once it was.
    pub fn withdrawn_because(&self) -> Option<Option<Settled>> {
        self.withdrawn_because.lock().unwrap().clone()
    }

    async fn offer(&self, request: &AskUserQuestionRequest, decide: &Decide) {
        let decision = decide.offer(self.reply.offer(request)).await;
        *self.heard.lock().unwrap() = Some(decision);
    }
}

impl UserInteraction for Offering {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            match self.submits {
                Submits::AtOnce => self.offer(request, &decide).await,
                Submits::After(delay) => tokio::select! {
                    () = tokio::time::sleep(delay) => self.offer(request, &decide).await,
                    () = cancel.cancelled() => {}
                },
                Submits::OnCancel => {}
            }
            if let Some(result) = &self.returns {
                return result.clone();
            }
            cancel.cancelled().await;
            *self.withdrawn_because.lock().unwrap() = Some(decide.settled());
            if let Submits::OnCancel = self.submits {
                self.offer(request, &decide).await;
            }
            Err(AskError::Cancelled)
        })
    }

    fn name(&self) -> Option<&str> {
        self.name
    }
}

/// Holds every ask until released, then answers each question of it with the question's own
/// text (a custom answer): many concurrent asks, each answer telling which ask it was.
///
/// Released all at once when `release_at` asks have started (the last one does not wait), or
/// by [`Holding::release`], after which every ask is answered at once; 0 means only by
/// [`Holding::release`]. [`Holding::all_pending`] waits until `release_at` asks are pending at
/// once.
#[derive(Debug, Default)]
pub struct Holding {
    release_at: usize,
    releases_itself: bool,
    pending_file: Option<PathBuf>,
    asked: AtomicUsize,
    pending: AtomicUsize,
    withdrawn: AtomicUsize,
    released: Notify,
    done: AtomicBool,
    all_pending: Notify,
}

impl Holding {
    /// Releases every ask once `release_at` have started (0: only by [`Holding::release`]);
    /// writes "pending" to `pending_file`, when given, as each ask starts.
    pub fn new(release_at: usize, pending_file: Option<PathBuf>) -> Self {
        Self {
            release_at,
            releases_itself: true,
            pending_file,
            ..Self::default()
        }
    }

    /// Holds every ask until [`Holding::release`]; [`Holding::all_pending`] returns once
    /// `count` are pending.
    pub fn until_released(count: usize) -> Self {
        Self {
            release_at: count,
            ..Self::default()
        }
    }

    /// Answers every held ask, and every later one at once.
    pub fn release(&self) {
        self.done.store(true, Ordering::SeqCst);
        self.released.notify_waiters();
    }

    /// Returns once `release_at` asks are pending at once.
    pub async fn all_pending(&self) {
        self.all_pending.notified().await;
    }

    /// How many asks started.
    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }

    /// How many asks it withdrew because their token fired.
    pub fn withdrawals(&self) -> usize {
        self.withdrawn.load(Ordering::SeqCst)
    }
}

impl UserInteraction for Holding {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            let started = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
            if self.pending.fetch_add(1, Ordering::SeqCst) + 1 == self.release_at {
                self.all_pending.notify_one();
            }
            if let Some(file) = &self.pending_file {
                std::fs::write(file, "pending").unwrap();
            }
            if self.releases_itself && self.release_at > 0 && started >= self.release_at {
                self.release();
            } else {
                tokio::select! {
                    () = released => {}
                    () = async {}, if self.done.load(Ordering::SeqCst) => {}
                    () = cancel.cancelled() => {
                        self.pending.fetch_sub(1, Ordering::SeqCst);
                        self.withdrawn.fetch_add(1, Ordering::SeqCst);
                        return Err(AskError::Cancelled);
                    }
                }
            }
            let question = &request.questions()[0];
            Ok(Answers {
                answers: vec![AnswerItem::custom(&question.id, &question.question)],
            })
        })
    }
}

/// A stand-in store for outcomes ([`RecordOutcome`]): keeps every outcome it is given, after
/// a write that takes a set time (none: it yields once); or fails the first writes ("disk
/// full"); or, when an outcome was already stored elsewhere (another process's answer), refuses
/// every write with it.
#[derive(Debug, Default)]
pub struct Recorder {
    write: Option<Duration>,
    fail: Mutex<usize>,
    elsewhere: Option<Settled>,
    kept: Mutex<Vec<Settled>>,
}

impl Recorder {
    /// Keeps every outcome; each write yields once.
    pub fn new() -> Self {
        Self::default()
    }

    /// Each write takes `write`.
    pub fn writing_for(self, write: Duration) -> Self {
        Self {
            write: Some(write),
            ..self
        }
    }

    /// The first `count` writes fail with "disk full".
    pub fn failing(self, count: usize) -> Self {
        Self {
            fail: Mutex::new(count),
            ..self
        }
    }

    /// `first` was already stored elsewhere: every write loses to it.
    pub fn settled_elsewhere(self, first: Settled) -> Self {
        Self {
            elsewhere: Some(first),
            ..self
        }
    }

    /// The outcomes kept, in order.
    pub fn kept(&self) -> Vec<Settled> {
        self.kept.lock().unwrap().clone()
    }
}

impl RecordOutcome for Recorder {
    fn record<'a>(
        &'a self,
        _: &'a AskUserQuestionRequest,
        settled: &'a Settled,
    ) -> BoxFuture<'a, Result<(), RecordError>> {
        Box::pin(async move {
            match self.write {
                Some(write) => tokio::time::sleep(write).await,
                None => tokio::task::yield_now().await,
            }
            if let Some(first) = &self.elsewhere {
                return Err(RecordError::Settled(first.clone()));
            }
            let mut fail = self.fail.lock().unwrap();
            if *fail > 0 {
                *fail -= 1;
                return Err("disk full".to_owned().into());
            }
            self.kept.lock().unwrap().push(settled.clone());
            Ok(())
        })
    }
}
