//! Delivered, or not after all (docs/contract.md §8): a result counts as delivered when it is
//! sent for a request that was not cancelled. A client whose own timeout fires sends
//! `notifications/cancelled` and drops whatever comes back for that request; when that
//! notification crosses our result on the wire, the result was sent (and marked delivered)
//! but the model never reads it.
//!
//! The rule: **a cancellation that arrives for a request whose result was already sent takes
//! the delivery back** ([`Store::unmark_delivered`]). The outcome stays in the store, so the
//! same call retried within the redelivery window gets it at once, and nothing is shown again.
//! Delivery is at least once: a client that did read the result and cancels anyway (it should
//! not: MCP says a cancellation for a finished request is ignored) gets the answer twice.
//!
//! [`Deliveries`] is per session (request ids are the client's, unique within its session) and
//! sees every incoming cancellation before rmcp does (the session's transport reports it), so
//! no order of the two events is missed: a cancellation before the result makes it not
//! deliverable; one while the delivery is being marked waits until the mark is stored and taken
//! back; one after takes the mark back. Either way the take-back is stored before the
//! cancellation counts as read, so a retry read after it re-attaches to the ask.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ask_user_store::{AskId, Outcome, Store, Timestamp};
use rmcp::model::RequestId;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How many requests of a session are remembered (the latest ones).
const REMEMBERED: usize = 256;

#[derive(Debug)]
enum State {
    /// The call's result is on its way to the transport: its delivery is marked once the
    /// transport wrote it ([`Deliveries::written`]), never before.
    Pending(Store, AskId, Outcome),
    /// The client cancelled the request.
    Cancelled,
    /// The result's delivery is being marked; the token fires once the mark is stored, or
    /// taken back when the client cancelled meanwhile.
    Marking(CancellationToken),
    /// The result (this exact outcome of that ask) was marked delivered at this time.
    Marked(Store, AskId, Timestamp),
}

/// The recent requests of one session whose result was (or is being) delivered or which the
/// client cancelled (cheap to clone; see the module doc).
#[derive(Debug, Clone, Default)]
pub(crate) struct Deliveries {
    recent: Arc<Mutex<VecDeque<(RequestId, State)>>>,
}

impl Deliveries {
    fn lock(&self) -> MutexGuard<'_, VecDeque<(RequestId, State)>> {
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn remember(recent: &mut VecDeque<(RequestId, State)>, request: RequestId, state: State) {
        if recent.len() == REMEMBERED {
            recent.pop_front();
        }
        recent.push_back((request, state));
    }

    /// A new request `request` arrived: what was remembered of an earlier request with the
    /// same id is forgotten (a client may use an id again once its request finished, and a
    /// cancellation read from now on names the new one).
    pub(crate) fn forget(&self, request: &RequestId) {
        self.lock().retain(|(id, _)| id != request);
    }

    /// The client cancelled `request` (`notifications/cancelled`): a delivery already marked
    /// for it is taken back, and one being marked is taken back once its mark is stored;
    /// either way the take-back is stored when this returns (a retry read after it sees it).
    pub(crate) async fn cancelled(&self, request: &RequestId) {
        let taken = {
            let mut recent = self.lock();
            match recent.iter().position(|(id, _)| id == request) {
                Some(at) => std::mem::replace(&mut recent[at].1, State::Cancelled),
                None => {
                    Self::remember(&mut recent, request.clone(), State::Cancelled);
                    return;
                }
            }
        };
        match taken {
            // Not written yet: it will not be marked (the client drops it); its caller is gone,
            // so the retry collects it.
            State::Pending(store, id, _) => detach(store, id).await,
            State::Marked(store, id, at) => unmark(store, id, at).await,
            // The delivery sees the cancellation when its mark is stored, takes it back, and
            // only then fires the token.
            State::Marking(done) => done.cancelled().await,
            State::Cancelled => {}
        }
    }

    /// The call of `request` hands its result (the outcome of ask `id`) to the transport: its
    /// delivery is marked by [`Deliveries::written`] once the transport wrote it (docs/contract.md
    /// §8: record → write the model's bytes → mark delivered). Nothing is kept when the client
    /// cancelled the request already.
    pub(crate) fn pending(&self, request: &RequestId, store: &Store, delivery: (AskId, Outcome)) {
        let mut recent = self.lock();
        if recent
            .iter()
            .any(|(r, state)| r == request && matches!(state, State::Cancelled))
        {
            return;
        }
        recent.retain(|(r, _)| r != request);
        let (id, outcome) = delivery;
        Self::remember(
            &mut recent,
            request.clone(),
            State::Pending(store.clone(), id, outcome),
        );
    }

    /// The transport is about to write the response to `request`: the delivery to mark once
    /// it is written ([`Deliveries::complete`]), if the call left one ([`Deliveries::pending`]).
    /// From now on a cancellation waits for that mark and takes it back, as for
    /// [`Deliveries::deliver`].
    pub(crate) fn written(&self, request: &RequestId) -> Option<Written> {
        let mut recent = self.lock();
        let (_, state) = recent
            .iter_mut()
            .find(|(r, state)| r == request && matches!(state, State::Pending(..)))?;
        let done = CancellationToken::new();
        match std::mem::replace(state, State::Marking(done.clone())) {
            State::Pending(store, id, outcome) => Some(Written {
                marking: done.drop_guard(),
                store,
                delivery: (id, outcome),
            }),
            _ => None,
        }
    }

    /// Marks the outcome of ask `id` delivered for `request` as the transport does for a
    /// result it wrote ([`Deliveries::pending`], [`Deliveries::written`],
    /// [`Deliveries::complete`]), unless the client cancelled the request; a cancellation that
    /// arrives meanwhile or later takes it back. Returns the delivery's time when it stands.
    #[cfg(test)]
    pub(crate) async fn deliver(
        &self,
        request: &RequestId,
        store: &Store,
        delivery: (AskId, Outcome),
    ) -> Option<Timestamp> {
        self.pending(request, store, delivery);
        let written = self.written(request)?;
        self.complete(written.marking, request, &written.store, written.delivery)
            .await
    }

    /// Once a result was written ([`Deliveries::written`], whose `marking` holds the request's
    /// place): stores the
    /// mark and keeps it, or takes it back when the client cancelled meanwhile.
    pub(crate) async fn complete(
        &self,
        marking: DropGuard,
        request: &RequestId,
        store: &Store,
        (id, outcome): (AskId, Outcome),
    ) -> Option<Timestamp> {
        let at = Timestamp::now();
        let marked = match store.mark_delivered(id, &outcome, at).await {
            Ok(true) => true,
            Ok(false) => {
                tracing::warn!("ask {id}: the stored outcome changed; not marked delivered");
                false
            }
            Err(e) => {
                tracing::warn!("cannot mark ask {id} delivered: {e}");
                false
            }
        };
        self.finish(marking, request, marked.then_some((store, id, at)))
            .await
    }

    /// The last step of [`Deliveries::deliver`], once the mark (`marked`: where and when)
    /// was stored or failed: keeps it, or takes it back when the client cancelled meanwhile;
    /// then `marking` is dropped, which releases that cancellation.
    async fn finish(
        &self,
        marking: DropGuard,
        request: &RequestId,
        marked: Option<(&Store, AskId, Timestamp)>,
    ) -> Option<Timestamp> {
        let (store, id, at) = marked?;
        let kept = {
            let mut recent = self.lock();
            match recent.iter_mut().find(|(r, _)| r == request) {
                Some((_, state @ State::Marking(_))) => {
                    *state = State::Marked(store.clone(), id, at);
                    true
                }
                _ => false,
            }
        };
        // Cancelled while the mark was being stored (or forgotten: a session with more than
        // REMEMBERED requests since): take it back before the cancellation is released.
        if !kept {
            unmark(store.clone(), id, at).await;
        }
        drop(marking);
        kept.then_some(at)
    }
}

async fn unmark(store: Store, id: AskId, at: Timestamp) {
    tracing::info!(
        "ask {id}: the client cancelled the request its result went to; kept for its retry"
    );
    if let Err(e) = store.unmark_delivered(id, at).await {
        tracing::warn!("cannot take back the delivery of ask {id}: {e}");
    }
    detach(store, id).await;
}

/// The caller of ask `id` is gone: an unkeyed retry may collect its outcome (docs/contract.md §8).
async fn detach(store: Store, id: AskId) {
    if let Err(e) = store.set_attached(id, false, Timestamp::now()).await {
        tracing::warn!("cannot mark ask {id} detached: {e}");
    }
}

/// A result being written ([`Deliveries::written`]): its delivery is marked once it is.
pub(crate) struct Written {
    /// Releases a cancellation that waits for the mark.
    pub(crate) marking: DropGuard,
    pub(crate) store: Store,
    pub(crate) delivery: (AskId, Outcome),
}

#[cfg(test)]
mod tests {
    use ask_user_store::{Asker, NewAsk, Opened, Responder, Scope};

    use super::*;

    async fn answered(store: &Store) -> ((AskId, Outcome), NewAsk) {
        let ask = NewAsk::new(
            &Scope::Caller("test".into()),
            r#"{"q":1}"#,
            Asker::default(),
        );
        let Opened::Created(rec) = store.open_ask(&ask).await.unwrap() else {
            panic!()
        };
        let outcome = Outcome::Answered {
            answer: serde_json::json!({"answers": []}),
            by: Responder::default(),
        };
        store
            .record_outcome(rec.id, &outcome, Timestamp::now())
            .await
            .unwrap();
        ((rec.id, outcome), ask)
    }

    #[tokio::test]
    async fn a_cancel_before_during_or_after_the_result_leaves_it_undelivered() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        // After: the mark is taken back.
        let (delivery, ask) = answered(&store).await;
        let id = delivery.0;
        let request = RequestId::Number(3);
        deliveries.deliver(&request, &store, delivery).await;
        assert!(store.get(id).await.unwrap().delivered_at.is_some());
        deliveries.cancelled(&request).await;
        assert_eq!(store.get(id).await.unwrap().delivered_at, None);
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id)
        );

        // Before: never marked.
        let store = Store::memory();
        let (delivery, _) = answered(&store).await;
        let id = delivery.0;
        let request = RequestId::String("a".into());
        deliveries.cancelled(&request).await;
        deliveries.deliver(&request, &store, delivery).await;
        assert_eq!(store.get(id).await.unwrap().delivered_at, None);

        // Another request's cancel changes nothing.
        let store = Store::memory();
        let (delivery, _) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(4), &store, delivery)
            .await;
        deliveries.cancelled(&RequestId::Number(5)).await;
        assert!(store.get(id).await.unwrap().delivered_at.is_some());
    }

    /// A cancellation read before the result was written: nothing is marked, and the ask is
    /// detached so the retry collects the answer.
    #[tokio::test(flavor = "current_thread")]
    async fn a_cancel_before_the_write_marks_nothing_and_leaves_the_answer_for_the_retry() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        let ((id, outcome), ask) = answered(&store).await;
        let request = RequestId::Number(8);
        deliveries.pending(&request, &store, (id, outcome));
        deliveries.cancelled(&request).await;
        assert!(deliveries.written(&request).is_none(), "nothing to mark");
        let rec = store.get(id).await.unwrap();
        assert_eq!((rec.delivered_at, rec.attached), (None, false));
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id)
        );
    }

    /// A cancellation that arrives while the delivery is being marked returns only once the
    /// mark is stored and taken back (the session reads its next message, a retry, only
    /// then): the retry finds the answer undelivered and the ask detached.
    #[tokio::test(flavor = "current_thread")]
    async fn a_cancel_while_the_mark_is_stored_returns_after_the_take_back() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        let ((id, outcome), ask) = answered(&store).await;
        let request = RequestId::Number(7);
        // The result is being written: its delivery is pending, then being marked.
        deliveries.pending(&request, &store, (id, outcome.clone()));
        let marking = deliveries.written(&request).unwrap().marking;
        let cancel = tokio::spawn({
            let deliveries = deliveries.clone();
            let request = request.clone();
            async move { deliveries.cancelled(&request).await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!cancel.is_finished(), "returned before the take-back");
        let at = Timestamp::now();
        assert!(store.mark_delivered(id, &outcome, at).await.unwrap());
        assert_eq!(
            deliveries
                .finish(marking, &request, Some((&store, id, at)))
                .await,
            None
        );
        cancel.await.unwrap();
        let rec = store.get(id).await.unwrap();
        assert_eq!(rec.delivered_at, None);
        assert!(!rec.attached);
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id)
        );
    }
}
