//! The questions waiting for an answer, shared by every `ask` and every page.
//!
//! One entry per batch (one tool call), holding the ask's race ([`Decide`]). A submission is
//! offered to the race (docs/contract.md §4, "Decided before acknowledged"); only when the race
//! accepts it is the batch taken off the pages and the submitter told "ok". Every change is
//! broadcast to the open pages while the lock is held, so a page's snapshot and the events after
//! it never disagree. How recently closed batches ended is kept (a bounded number), so a late
//! submission is told why it was not taken.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ask_user_core::{AskUserQuestionRequest, Decide, Decision, InvalidAnswer, Offer, Settled};
use tokio::sync::{broadcast, oneshot};

use crate::view::{BatchView, PageEvent, Withdrawal};

/// How many events a slow page may fall behind before it is sent a fresh snapshot.
const EVENT_BUFFER: usize = 256;

/// How many closed batches are remembered, to tell a late submission how its batch ended.
const CLOSED_MEMORY: usize = 256;

/// Why a submission was not taken.
#[derive(Debug)]
pub(crate) enum SubmitError {
    /// The batch is closed; how it ended, when still remembered.
    NotTaken(Option<Settled>),
    /// The answer does not fit the questions; the batch stays open.
    Invalid(InvalidAnswer),
    /// The outcome could not be recorded; the batch stays open.
    NotRecorded(String),
}

struct Entry {
    json: Arc<str>,
    request: AskUserQuestionRequest,
    /// Whether the caller still waits (the page shows a notice when it does not).
    caller_waiting: bool,
    /// When the host's budget runs out (Unix milliseconds), for the page's countdown.
    deadline: Option<u64>,
    decide: Decide,
    /// Tells the waiting `ask` that the race was settled here.
    decided: oneshot::Sender<()>,
    /// The tab whose offer is being decided, if any: when the race settles with this page's
    /// answer, the `ask` may take the batch off the pages before [`Pending::offer`] hears the
    /// decision, and the withdrawal must still name that tab (its card says "sent", not
    /// "answered elsewhere").
    offering: Option<String>,
    /// How many offers of this batch are being decided: meanwhile (and once the race is
    /// settled) the caller's comings and goings are not shown, since the outcome may already
    /// be stored and the call that reads it ends (its caller "goes away") before the batch
    /// is closed here; a refused offer shows the caller's state as it is then.
    deciding: usize,
}

/// `budget` from now, in Unix milliseconds (what the page's clock counts down to).
fn deadline_ms(budget: std::time::Duration) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    now.checked_add(budget)
        .and_then(|t| u64::try_from(t.as_millis()).ok())
        .unwrap_or(u64::MAX)
}

#[derive(Default)]
struct Batches {
    open: BTreeMap<u64, Entry>,
    closed: VecDeque<(u64, Option<Settled>)>,
}

impl Batches {
    fn remember(&mut self, id: u64, settled: Option<Settled>) {
        if self.closed.len() == CLOSED_MEMORY {
            self.closed.pop_front();
        }
        self.closed.push_back((id, settled));
    }
}

/// The pending batches and the event stream of changes.
pub(crate) struct Pending {
    next: AtomicU64,
    batches: Mutex<Batches>,
    events: broadcast::Sender<PageEvent>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("batches", &self.len())
            .finish_non_exhaustive()
    }
}

impl Pending {
    pub(crate) fn new() -> Self {
        Self {
            next: AtomicU64::new(1),
            batches: Mutex::new(Batches::default()),
            events: broadcast::channel(EVENT_BUFFER).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Batches> {
        self.batches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts a batch on every page (with `budget`, counting down to its end), answered through `decide`; returns its number and a
    /// receiver that fires when a submission on the page settled the race.
    pub(crate) fn open(
        &self,
        request: &AskUserQuestionRequest,
        decide: Decide,
        budget: Option<std::time::Duration>,
    ) -> (u64, oneshot::Receiver<()>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let caller_waiting = *decide.caller_waiting().borrow();
        let deadline = budget.map(deadline_ms);
        let json: Arc<str> = BatchView::new(id, request)
            .with_given_before(decide.given_before())
            .with_deadline(deadline)
            .with_caller_waiting(caller_waiting)
            .to_json()
            .into();
        let (decided, receiver) = oneshot::channel();
        let mut batches = self.lock();
        batches.open.insert(
            id,
            Entry {
                json: json.clone(),
                request: request.clone(),
                deadline,
                caller_waiting,
                decide,
                decided,
                offering: None,
                deciding: 0,
            },
        );
        let _ = self.events.send(PageEvent::opened(json));
        drop(batches);
        (id, receiver)
    }

    /// Offers `offer` (answers or a dismissal) for batch `id` to its race. On acceptance the
    /// batch leaves every page (the withdrawal names `by`, the submitting tab) and its `ask`
    /// is woken; otherwise the batch stays as it is and the error says why.
    pub(crate) async fn offer(
        &self,
        id: u64,
        offer: Offer,
        by: Option<&str>,
    ) -> Result<(), SubmitError> {
        let decide = {
            let mut batches = self.lock();
            let ended = self.ended(&batches, id);
            match batches.open.get_mut(&id) {
                Some(entry) => {
                    if entry.offering.is_none() {
                        entry.offering = by.map(str::to_owned);
                    }
                    entry.deciding += 1;
                    entry.decide.clone()
                }
                None => return Err(SubmitError::NotTaken(ended)),
            }
        };
        let decision = decide.offer(offer).await;
        if !matches!(decision, Decision::Accepted)
            && let Some(entry) = self.lock().open.get_mut(&id)
        {
            if entry.offering.as_deref() == by {
                entry.offering = None;
            }
            entry.deciding = entry.deciding.saturating_sub(1);
            let waiting = *entry.decide.caller_waiting().borrow();
            self.show_caller(id, entry, waiting);
        }
        match decision {
            Decision::Accepted => {
                let settled = decide.settled();
                let mut batches = self.lock();
                if let Some(entry) = batches.open.remove(&id) {
                    let _ = entry.decided.send(());
                    let _ =
                        self.events
                            .send(PageEvent::withdrawn(id, &Withdrawal::from(&settled), by));
                    batches.remember(id, settled);
                }
                Ok(())
            }
            Decision::Refused(settled) => Err(SubmitError::NotTaken(Some(settled))),
            Decision::Invalid(why) => Err(SubmitError::Invalid(why)),
            Decision::NotRecorded(why) => Err(SubmitError::NotRecorded(why)),
            _ => Err(SubmitError::NotTaken(None)),
        }
    }

    /// Shows on every page whether the caller of batch `id` still waits (a `caller` event;
    /// later snapshots carry it). Does nothing when the batch is closed or already shows that,
    /// nor while an offer of it is being decided or once its race is settled (the batch is
    /// about to close: a call that ended with its outcome is not a caller gone).
    pub(crate) fn set_caller_waiting(&self, id: u64, waiting: bool) {
        let mut batches = self.lock();
        if let Some(entry) = batches.open.get_mut(&id) {
            self.show_caller(id, entry, waiting);
        }
    }

    fn show_caller(&self, id: u64, entry: &mut Entry, waiting: bool) {
        if entry.caller_waiting != waiting
            && entry.deciding == 0
            && entry.decide.settled().is_none()
        {
            entry.caller_waiting = waiting;
            entry.json = BatchView::new(id, &entry.request)
                .with_given_before(entry.decide.given_before())
                .with_deadline(entry.deadline)
                .with_caller_waiting(waiting)
                .to_json()
                .into();
            let _ = self.events.send(PageEvent::caller(id, waiting));
        }
    }

    fn ended(&self, batches: &Batches, id: u64) -> Option<Settled> {
        batches
            .closed
            .iter()
            .rev()
            .find(|(closed, _)| *closed == id)
            .and_then(|(_, settled)| settled.clone())
    }

    /// Takes the batch off the pages because its ask ended without a decision made here
    /// (another answerer won, timed out, cancelled, dropped); the withdrawal says why, from the
    /// race. Does nothing when it is already closed.
    pub(crate) fn withdraw(&self, id: u64) {
        let mut batches = self.lock();
        if let Some(entry) = batches.open.remove(&id) {
            let settled = entry.decide.settled();
            // Settled by this page's own offer (still being decided): name its tab.
            let own = settled
                .as_ref()
                .is_some_and(|s| s.is_human() && s.by() == entry.decide.name());
            let by = entry.offering.as_deref().filter(|_| own);
            let _ = self
                .events
                .send(PageEvent::withdrawn(id, &Withdrawal::from(&settled), by));
            batches.remember(id, settled);
        }
    }

    /// A receiver of future events and a snapshot of what is pending now, taken together so
    /// nothing falls between them.
    pub(crate) fn subscribe(&self) -> (broadcast::Receiver<PageEvent>, PageEvent) {
        let batches = self.lock();
        let receiver = self.events.subscribe();
        let snapshot = PageEvent::snapshot(batches.open.values().map(|e| &*e.json));
        (receiver, snapshot)
    }

    /// A fresh snapshot (for a page that fell behind).
    pub(crate) fn snapshot(&self) -> PageEvent {
        PageEvent::snapshot(self.lock().open.values().map(|e| &*e.json))
    }

    /// How many batches are pending.
    pub(crate) fn len(&self) -> usize {
        self.lock().open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::WEB_NAME;
    use ask_user_core::{AnswerItem, Answers, Question, QuestionOption};

    fn request() -> AskUserQuestionRequest {
        AskUserQuestionRequest::new(
            vec![Question {
                id: "go".into(),
                question: "Deploy?".into(),
                header: None,
                options: vec![
                    QuestionOption {
                        label: "Yes".into(),
                        description: None,
                    },
                    QuestionOption {
                        label: "No".into(),
                        description: None,
                    },
                ],
                multi_select: false,
            }],
            &ask_user_core::Limits::default(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn the_first_valid_answer_wins_and_an_invalid_one_keeps_the_batch_open() {
        let pending = Pending::new();
        let (mut events, _) = pending.subscribe();
        let decide = Decide::new(&request()).named(WEB_NAME);
        let (id, decided) = pending.open(&request(), decide.clone(), None);
        assert_eq!(events.recv().await.unwrap().name, "opened");

        let bad = Answers {
            answers: vec![AnswerItem::selected("go", ["Maybe"])],
        };
        assert!(matches!(
            pending.offer(id, Offer::Answers(bad), None).await,
            Err(SubmitError::Invalid(InvalidAnswer::UnknownLabel { .. }))
        ));
        assert!(matches!(
            pending
                .offer(id, Offer::Answers(Answers::default()), None)
                .await,
            Err(SubmitError::Invalid(InvalidAnswer::Omitted { .. }))
        ));
        assert_eq!(pending.len(), 1);

        let good = Answers {
            answers: vec![AnswerItem::selected("go", ["Yes"])],
        };
        pending
            .offer(id, Offer::Answers(good.clone()), Some("t1"))
            .await
            .unwrap();
        let won = Settled::Answered {
            answers: good.clone(),
            by: Some(WEB_NAME.to_owned()),
        };
        let Err(SubmitError::NotTaken(Some(settled))) =
            pending.offer(id, Offer::Answers(good), Some("t2")).await
        else {
            panic!("a second answer is not taken")
        };
        assert_eq!(settled, won);
        assert!(matches!(
            pending.offer(id, Offer::Dismiss, None).await,
            Err(SubmitError::NotTaken(Some(_)))
        ));
        decided.await.unwrap();
        assert_eq!(decide.settled(), Some(won));
        let withdrawn = events.recv().await.unwrap();
        assert_eq!(
            &*withdrawn.data,
            format!(r#"{{"batch":{id},"reason":"answered","by":"t1"}}"#)
        );
        pending.withdraw(id);
        assert!(events.try_recv().is_err(), "no second withdrawal");
    }

    #[tokio::test]
    async fn a_batch_closed_by_another_answerer_is_withdrawn_saying_where() {
        let pending = Pending::new();
        let (mut events, _) = pending.subscribe();
        let decide = Decide::new(&request());
        let (id, _decided) = pending.open(&request(), decide.named(WEB_NAME), None);
        let _ = events.recv().await;
        let terminal = decide.named("the terminal");
        let answers = Answers {
            answers: vec![AnswerItem::selected("go", ["No"])],
        };
        assert_eq!(
            terminal.offer(Offer::Answers(answers)).await,
            ask_user_core::Decision::Accepted
        );
        pending.withdraw(id);
        assert_eq!(
            &*events.recv().await.unwrap().data,
            format!(r#"{{"batch":{id},"reason":"answered_elsewhere","where":"the terminal"}}"#)
        );
        let Err(SubmitError::NotTaken(Some(settled))) =
            pending.offer(id, Offer::Dismiss, None).await
        else {
            panic!("a late dismissal is not taken")
        };
        assert_eq!(settled.by(), Some("the terminal"));
    }

    #[tokio::test]
    async fn a_caller_that_stops_waiting_is_shown_live_and_in_later_snapshots() {
        let pending = Pending::new();
        let (mut events, _) = pending.subscribe();
        let decide = Decide::new(&request());
        decide.set_caller_waiting(false);
        let (id, _decided) = pending.open(&request(), decide.clone(), None);
        let opened = events.recv().await.unwrap();
        assert!(
            opened.data.ends_with(r#","caller_waiting":false}"#),
            "{opened:?}"
        );
        pending.set_caller_waiting(id, false);
        pending.set_caller_waiting(id, true);
        let back = events.recv().await.unwrap();
        assert_eq!(back.name, "caller");
        assert_eq!(
            &*back.data,
            format!(r#"{{"batch":{id},"caller_waiting":true}}"#)
        );
        assert!(!pending.snapshot().data.contains("caller_waiting"));
        pending.set_caller_waiting(id, false);
        assert_eq!(
            &*events.recv().await.unwrap().data,
            format!(r#"{{"batch":{id},"caller_waiting":false}}"#)
        );
        assert!(
            pending
                .snapshot()
                .data
                .contains(r#""caller_waiting":false"#)
        );
        pending.withdraw(id);
        let _ = events.recv().await;
        pending.set_caller_waiting(id, true);
        assert!(events.try_recv().is_err(), "nothing for a closed batch");
    }

    /// Holds every decision until `release` is notified (a store that is slow to record).
    struct Held {
        entered: Arc<tokio::sync::Notify>,
        release: Arc<tokio::sync::Notify>,
        refuse: bool,
    }

    impl ask_user_core::RecordOutcome for Held {
        fn record<'a>(
            &'a self,
            _: &'a AskUserQuestionRequest,
            _: &'a ask_user_core::Settled,
        ) -> ask_user_core::BoxFuture<'a, Result<(), ask_user_core::RecordError>> {
            Box::pin(async move {
                self.entered.notify_one();
                self.release.notified().await;
                if self.refuse {
                    Err(ask_user_core::RecordError::Failed("disk full".into()))
                } else {
                    Ok(())
                }
            })
        }
    }

    /// The call that reads the page's answer from the store ends (its caller "goes away")
    /// while the answer is still being decided here: the page hears that the answer was sent,
    /// never that the caller is gone. A refused answer leaves the batch open, showing the
    /// caller's state as it is then.
    #[tokio::test]
    async fn a_caller_that_goes_while_an_answer_is_decided_is_not_announced() {
        for refuse in [false, true] {
            let pending = Arc::new(Pending::new());
            let (mut events, _) = pending.subscribe();
            let (entered, release) = (Arc::default(), Arc::default());
            let held = Held {
                entered: Arc::clone(&entered),
                release: Arc::clone(&release),
                refuse,
            };
            let decide = Decide::with_recorder(&request(), Some(Arc::new(held)));
            let (id, _decided) = pending.open(&request(), decide.named(WEB_NAME), None);
            let _ = events.recv().await;
            let offer = tokio::spawn({
                let pending = Arc::clone(&pending);
                let answers = Answers {
                    answers: vec![AnswerItem::selected("go", ["No"])],
                };
                async move {
                    pending
                        .offer(id, Offer::Answers(answers), Some("t1"))
                        .await
                        .is_ok()
                }
            });
            entered.notified().await;
            decide.set_caller_waiting(false);
            pending.set_caller_waiting(id, false);
            release.notify_one();
            assert_eq!(offer.await.unwrap(), !refuse);
            let next = events.recv().await.unwrap();
            if refuse {
                assert_eq!(next.name, "caller", "{next:?}");
                assert_eq!(
                    &*next.data,
                    format!(r#"{{"batch":{id},"caller_waiting":false}}"#)
                );
            } else {
                assert_eq!(
                    &*next.data,
                    format!(r#"{{"batch":{id},"reason":"answered","by":"t1"}}"#)
                );
            }
            assert!(events.try_recv().is_err(), "{refuse}: nothing else");
        }
    }

    #[tokio::test]
    async fn a_snapshot_lists_what_is_pending() {
        let pending = Pending::new();
        let (a, _ra) = pending.open(&request(), Decide::new(&request()), None);
        let (b, _rb) = pending.open(&request(), Decide::new(&request()), None);
        pending.withdraw(a);
        let (_, snapshot) = pending.subscribe();
        assert!(
            snapshot
                .data
                .starts_with(&format!(r#"{{"batches":[{{"batch":{b},"#))
        );
        assert!(!snapshot.data.contains(&format!(r#""batch":{a},"#)));
    }
}
