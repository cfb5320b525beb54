//! The questions waiting for an answer, shared by every `ask` and every page.
//!
//! One entry per batch (one tool call). The first valid answer or dismissal takes the entry out
//! under the lock, so exactly one submission wins; every change is broadcast to the open pages
//! while the lock is held, so a page's snapshot and the events after it never disagree.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ask_user_core::{Answers, AskUserQuestionRequest, InvalidAnswer, normalise};
use tokio::sync::{broadcast, oneshot};

use crate::view::{BatchView, PageEvent, Withdrawal};

/// How many events a slow page may fall behind before it is sent a fresh snapshot.
const EVENT_BUFFER: usize = 256;

/// What the human decided for a batch.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A valid answer, already normalised.
    Answered(Answers),
    /// The human dismissed the batch.
    Dismissed,
}

/// Why a submission was refused.
#[derive(Debug)]
pub(crate) enum SubmitError {
    /// The batch is no longer pending (answered elsewhere, dismissed, or cancelled).
    Gone,
    /// The answer does not fit the questions; the batch stays open.
    Invalid(InvalidAnswer),
}

struct Entry {
    request: AskUserQuestionRequest,
    json: Arc<str>,
    reply: oneshot::Sender<Reply>,
}

/// The pending batches and the event stream of changes.
pub(crate) struct Pending {
    next: AtomicU64,
    batches: Mutex<BTreeMap<u64, Entry>>,
    events: broadcast::Sender<PageEvent>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("batches", &self.lock().len())
            .finish_non_exhaustive()
    }
}

impl Pending {
    pub(crate) fn new() -> Self {
        Self {
            next: AtomicU64::new(1),
            batches: Mutex::new(BTreeMap::new()),
            events: broadcast::channel(EVENT_BUFFER).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.batches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts a batch on every page; returns its number and where the decision arrives.
    pub(crate) fn open(&self, request: &AskUserQuestionRequest) -> (u64, oneshot::Receiver<Reply>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let json: Arc<str> = BatchView::new(id, request).to_json().into();
        let (reply, receiver) = oneshot::channel();
        let mut batches = self.lock();
        batches.insert(
            id,
            Entry {
                request: request.clone(),
                json: json.clone(),
                reply,
            },
        );
        let _ = self.events.send(PageEvent::opened(json));
        drop(batches);
        (id, receiver)
    }

    /// Checks `answers` with the core's normalisation; when valid, closes the batch with them.
    /// `by` names the submitting tab, echoed in the withdrawal event.
    pub(crate) fn answer(
        &self,
        id: u64,
        answers: Answers,
        by: Option<&str>,
    ) -> Result<(), SubmitError> {
        let mut batches = self.lock();
        let entry = batches.get(&id).ok_or(SubmitError::Gone)?;
        let answers = normalise(&entry.request, answers).map_err(SubmitError::Invalid)?;
        let entry = batches.remove(&id).ok_or(SubmitError::Gone)?;
        entry
            .reply
            .send(Reply::Answered(answers))
            .map_err(|_| SubmitError::Gone)?;
        let _ = self
            .events
            .send(PageEvent::withdrawn(id, Withdrawal::Answered, by));
        Ok(())
    }

    /// Closes the batch as dismissed by the human.
    pub(crate) fn dismiss(&self, id: u64, by: Option<&str>) -> Result<(), SubmitError> {
        let mut batches = self.lock();
        let entry = batches.remove(&id).ok_or(SubmitError::Gone)?;
        entry
            .reply
            .send(Reply::Dismissed)
            .map_err(|_| SubmitError::Gone)?;
        let _ = self
            .events
            .send(PageEvent::withdrawn(id, Withdrawal::Dismissed, by));
        Ok(())
    }

    /// Takes the batch off the pages because its ask ended without a human decision
    /// (cancelled, timed out, dropped). Does nothing when it is already closed.
    pub(crate) fn withdraw(&self, id: u64) {
        let mut batches = self.lock();
        if batches.remove(&id).is_some() {
            let _ = self
                .events
                .send(PageEvent::withdrawn(id, Withdrawal::Cancelled, None));
        }
    }

    /// A receiver of future events and a snapshot of what is pending now, taken together so
    /// nothing falls between them.
    pub(crate) fn subscribe(&self) -> (broadcast::Receiver<PageEvent>, PageEvent) {
        let batches = self.lock();
        let receiver = self.events.subscribe();
        let snapshot = PageEvent::snapshot(batches.values().map(|e| &*e.json));
        (receiver, snapshot)
    }

    /// A fresh snapshot (for a page that fell behind).
    pub(crate) fn snapshot(&self) -> PageEvent {
        PageEvent::snapshot(self.lock().values().map(|e| &*e.json))
    }

    /// How many batches are pending.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_user_core::{AnswerItem, Question, QuestionOption};

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
        let (id, reply) = pending.open(&request());
        assert_eq!(events.recv().await.unwrap().name, "opened");

        let bad = Answers {
            answers: vec![AnswerItem::selected("go", ["Maybe"])],
        };
        assert!(matches!(
            pending.answer(id, bad, None),
            Err(SubmitError::Invalid(InvalidAnswer::UnknownLabel { .. }))
        ));
        assert_eq!(pending.len(), 1);

        let good = Answers {
            answers: vec![AnswerItem::selected("go", ["Yes"])],
        };
        pending.answer(id, good.clone(), Some("t1")).unwrap();
        assert!(matches!(
            pending.answer(id, good, Some("t2")),
            Err(SubmitError::Gone)
        ));
        assert!(matches!(pending.dismiss(id, None), Err(SubmitError::Gone)));
        let Reply::Answered(answers) = reply.await.unwrap() else {
            panic!("expected an answer")
        };
        assert_eq!(answers.answers, vec![AnswerItem::selected("go", ["Yes"])]);
        let withdrawn = events.recv().await.unwrap();
        assert_eq!(
            &*withdrawn.data,
            format!(r#"{{"batch":{id},"reason":"answered","by":"t1"}}"#)
        );
        pending.withdraw(id);
        assert!(events.try_recv().is_err(), "no second withdrawal");
    }

    #[tokio::test]
    async fn a_snapshot_lists_what_is_pending() {
        let pending = Pending::new();
        let (a, _ra) = pending.open(&request());
        let (b, _rb) = pending.open(&request());
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
