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
//! deliverable; one while the delivery is being marked is applied once the mark is stored; one
//! after takes the mark back.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ask_user_store::{AskId, Outcome, Store, Timestamp};
use rmcp::model::RequestId;

/// How many requests of a session are remembered (the latest ones).
const REMEMBERED: usize = 256;

#[derive(Debug)]
enum State {
    /// The client cancelled the request.
    Cancelled,
    /// The result's delivery is being marked.
    Marking,
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

    /// The client cancelled `request` (`notifications/cancelled`): a delivery already marked
    /// for it is taken back (stored when this returns).
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
        if let State::Marked(store, id, at) = taken {
            unmark(store, id, at).await;
        }
    }

    /// Marks the outcome of ask `id` delivered for `request`, unless the client cancelled the
    /// request; a cancellation that arrives meanwhile or later takes it back.
    pub(crate) async fn deliver(
        &self,
        request: &RequestId,
        store: &Store,
        (id, outcome): (AskId, Outcome),
    ) {
        {
            let mut recent = self.lock();
            if recent
                .iter()
                .any(|(r, state)| r == request && matches!(state, State::Cancelled))
            {
                return;
            }
            Self::remember(&mut recent, request.clone(), State::Marking);
        }
        let at = Timestamp::now();
        match store.mark_delivered(id, &outcome, at).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("ask {id}: the stored outcome changed; not marked delivered");
                return;
            }
            Err(e) => {
                tracing::warn!("cannot mark ask {id} delivered: {e}");
                return;
            }
        }
        let kept = {
            let mut recent = self.lock();
            match recent.iter_mut().find(|(r, _)| r == request) {
                Some((_, state @ State::Marking)) => {
                    *state = State::Marked(store.clone(), id, at);
                    true
                }
                _ => false,
            }
        };
        // Cancelled while the mark was being stored (or forgotten: a session with more than
        // REMEMBERED requests since): take it back.
        if !kept {
            unmark(store.clone(), id, at).await;
        }
    }
}

async fn unmark(store: Store, id: AskId, at: Timestamp) {
    tracing::info!(
        "ask {id}: the client cancelled the request its result went to; kept for its retry"
    );
    if let Err(e) = store.unmark_delivered(id, at).await {
        tracing::warn!("cannot take back the delivery of ask {id}: {e}");
    }
    // Its caller is gone: an unkeyed retry may collect it (docs/contract.md §8).
    if let Err(e) = store.set_attached(id, false, Timestamp::now()).await {
        tracing::warn!("cannot mark ask {id} detached: {e}");
    }
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
}
