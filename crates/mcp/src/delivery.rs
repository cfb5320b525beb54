//! Delivered, or not after all (docs/contract.md §8, docs/decisions.md "Delivered over MCP"):
//! a result counts as delivered when it went to a request that was not cancelled **and the
//! client showed it is still there**.
//!
//! - **A client that drops a request silently** (no `notifications/cancelled`, e.g. its Esc):
//!   the result is sent but held undelivered until the session's next request that is not a
//!   ping. That request, when it is the same call again (`ask_user_question` with arguments
//!   that canonicalise to the same request), is the retry of a dropped request: the held ask
//!   is detached, so the retry collects the answer at once. Any other request marks the held
//!   results delivered (the model moved on, having read them). A session that ends with a
//!   result still held leaves it undelivered (detached): a retry within the redelivery window
//!   gets it again — at least once.
//! - **A cancellation that crosses our result on the wire** takes the delivery back
//!   ([`Store::unmark_delivered`]) and detaches the ask; the same call retried gets it at
//!   once. A client that did read the result and cancels anyway gets the answer twice.
//! - Marking is a compare-and-set on the exact outcome the call read.
//!
//! [`Deliveries`] is per session (request ids are the client's, unique within its session) and
//! sees every incoming message before rmcp does (the session's transport reports it), so no
//! order of the events is missed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ask_user_core::{Limits, decode};
use ask_user_store::{AskId, Outcome, Store, Timestamp};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, RequestId,
};

/// How many requests of a session are remembered (the latest ones).
const REMEMBERED: usize = 256;

#[derive(Debug)]
enum State {
    /// The client cancelled the request.
    Cancelled,
    /// The result's delivery is being marked.
    Marking,
    /// The result was marked delivered at this time.
    Marked(Store, AskId, Timestamp),
    /// The result (this exact outcome of that ask, for this canonical request) was sent; it is
    /// delivered once the client shows it is still there.
    Held(Store, AskId, Outcome, String),
}

/// What an incoming message says about held results.
enum Heard<'a> {
    /// `notifications/cancelled` for this request.
    Cancelled(&'a RequestId),
    /// `tools/call` of `ask_user_question` with these arguments (canonical request, when they
    /// decode).
    Ask(Option<String>),
    /// A request that shows the client is there (not a ping).
    Moved,
    /// Anything else (pings, other notifications, responses).
    Nothing,
}

fn heard(message: &ClientJsonRpcMessage) -> Heard<'_> {
    match message {
        JsonRpcMessage::Notification(n) => match &n.notification {
            ClientNotification::CancelledNotification(c) => match c.params.request_id.as_ref() {
                Some(id) => Heard::Cancelled(id),
                None => Heard::Nothing,
            },
            _ => Heard::Nothing,
        },
        JsonRpcMessage::Request(r) => match &r.request {
            ClientRequest::PingRequest(_) => Heard::Nothing,
            ClientRequest::CallToolRequest(call)
                if call.params.name == ask_user_core::definition::NAME =>
            {
                let arguments =
                    serde_json::Value::Object(call.params.arguments.clone().unwrap_or_default());
                Heard::Ask(
                    decode(arguments, &Limits::default())
                        .ok()
                        .map(|d| d.request.to_canonical_json()),
                )
            }
            _ => Heard::Moved,
        },
        _ => Heard::Nothing,
    }
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

    /// Every message the client sends, before rmcp reads it (see the module doc).
    pub(crate) async fn heard(&self, message: &ClientJsonRpcMessage) {
        match heard(message) {
            Heard::Cancelled(request) => self.cancelled(request).await,
            Heard::Ask(request) => self.settle_held(request.as_deref()).await,
            Heard::Moved => self.settle_held(None).await,
            Heard::Nothing => {}
        }
    }

    /// The session ended: results still held stay undelivered, their asks detached (the
    /// caller is gone; a retry may collect them).
    pub(crate) async fn ended(&self) {
        let held: Vec<_> = {
            let mut recent = self.lock();
            recent
                .iter_mut()
                .filter_map(|(_, state)| match state {
                    State::Held(..) => match std::mem::replace(state, State::Cancelled) {
                        State::Held(store, id, ..) => Some((store, id)),
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        };
        for (store, id) in held {
            detach(&store, id).await;
        }
    }

    /// Marks every held result delivered, except one for `retry` (the same call again: its
    /// ask is detached so the retry collects it).
    async fn settle_held(&self, retry: Option<&str>) {
        let held: Vec<_> = {
            let mut recent = self.lock();
            recent
                .iter_mut()
                .filter_map(|(asked, state)| {
                    if !matches!(state, State::Held(..)) {
                        return None;
                    }
                    match std::mem::replace(state, State::Marking) {
                        State::Held(store, id, outcome, request) => {
                            let again = retry == Some(request.as_str());
                            if again {
                                *state = State::Cancelled;
                            }
                            Some((asked.clone(), store, id, outcome, again))
                        }
                        _ => None,
                    }
                })
                .collect()
        };
        for (asked, store, id, outcome, again) in held {
            if again {
                tracing::info!("ask {id}: the same call again; its answer goes to the retry");
                detach(&store, id).await;
                continue;
            }
            let at = Timestamp::now();
            let marked = mark(&store, id, &outcome, at).await;
            let taken = {
                let mut recent = self.lock();
                match recent.iter_mut().find(|(r, _)| *r == asked) {
                    Some((_, state @ State::Marking)) if marked => {
                        *state = State::Marked(store.clone(), id, at);
                        false
                    }
                    Some((_, state @ State::Marking)) => {
                        *state = State::Cancelled;
                        false
                    }
                    // Cancelled while the mark was being stored: take it back.
                    _ => marked,
                }
            };
            if taken {
                unmark(store, id, at).await;
            }
        }
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
        match taken {
            State::Marked(store, id, at) => unmark(store, id, at).await,
            State::Held(store, id, ..) => detach(&store, id).await,
            _ => {}
        }
    }

    /// The result for `request` (the outcome of ask `id`) is being sent: unless the client
    /// cancelled the request, it is held until the client shows it is still there (see the
    /// module doc).
    pub(crate) async fn deliver(
        &self,
        request: &RequestId,
        store: &Store,
        (id, outcome): (AskId, Outcome),
    ) {
        let asked = match store.get(id).await {
            Ok(rec) => rec.request,
            Err(e) => {
                tracing::warn!("cannot read ask {id}: {e}");
                String::new()
            }
        };
        let mut recent = self.lock();
        if recent
            .iter()
            .any(|(r, state)| r == request && matches!(state, State::Cancelled))
        {
            return;
        }
        Self::remember(
            &mut recent,
            request.clone(),
            State::Held(store.clone(), id, outcome, asked),
        );
    }
}

/// Marks the delivery (compare-and-set on `outcome`); whether it was marked.
async fn mark(store: &Store, id: AskId, outcome: &Outcome, at: Timestamp) -> bool {
    match store.mark_delivered(id, outcome, at).await {
        Ok(true) => true,
        Ok(false) => {
            tracing::warn!("ask {id}: the stored outcome changed; not marked delivered");
            false
        }
        Err(e) => {
            tracing::warn!("cannot mark ask {id} delivered: {e}");
            false
        }
    }
}

async fn detach(store: &Store, id: AskId) {
    if let Err(e) = store.set_attached(id, false, Timestamp::now()).await {
        tracing::warn!("cannot mark ask {id} detached: {e}");
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
    detach(&store, id).await;
}

#[cfg(test)]
mod tests {
    use ask_user_store::{Asker, NewAsk, Opened, Responder, Scope};

    use super::*;

    const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

    async fn answered(store: &Store) -> ((AskId, Outcome), NewAsk) {
        let request = decode(ARGS, &Limits::default()).unwrap().request;
        let ask = NewAsk::new(
            &Scope::Caller("test".into()),
            request.to_canonical_json(),
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

    fn message(v: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(v).unwrap()
    }

    fn call(id: i64, arguments: &str) -> ClientJsonRpcMessage {
        let arguments: serde_json::Value = serde_json::from_str(arguments).unwrap();
        message(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "ask_user_question", "arguments": arguments}}),
        )
    }

    fn list_tools(id: i64) -> ClientJsonRpcMessage {
        message(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
    }

    fn ping(id: i64) -> ClientJsonRpcMessage {
        message(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    }

    fn cancel(id: i64) -> ClientJsonRpcMessage {
        message(
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}}),
        )
    }

    async fn delivered(store: &Store, id: AskId) -> bool {
        store.get(id).await.unwrap().delivered_at.is_some()
    }

    #[tokio::test]
    async fn a_result_is_delivered_once_the_client_moves_on_not_before() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        let (delivery, _) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(3), &store, delivery)
            .await;
        assert!(
            !delivered(&store, id).await,
            "held until the client shows it is there"
        );
        deliveries.heard(&ping(4)).await;
        assert!(
            !delivered(&store, id).await,
            "a ping is not the model moving on"
        );
        deliveries.heard(&list_tools(5)).await;
        assert!(delivered(&store, id).await);
    }

    #[tokio::test]
    async fn a_request_dropped_silently_gives_its_answer_to_the_same_call_again() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        let (delivery, ask) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(3), &store, delivery)
            .await;
        // No notifications/cancelled: the client's next message is the same call again.
        deliveries.heard(&call(4, ARGS)).await;
        assert!(!delivered(&store, id).await);
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id),
            "the retry collects the answer"
        );
        // Another question is the model moving on.
        let store = Store::memory();
        let (delivery, _) = answered(&store).await;
        let other = delivery.0;
        deliveries
            .deliver(&RequestId::Number(6), &store, delivery)
            .await;
        deliveries
            .heard(&call(
                7,
                r#"{"questions":[{"question":"Other?","options":["a"]}]}"#,
            ))
            .await;
        assert!(delivered(&store, other).await);
    }

    #[tokio::test]
    async fn a_session_that_ends_with_a_held_result_leaves_it_for_the_retry() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        let (delivery, ask) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(3), &store, delivery)
            .await;
        deliveries.ended().await;
        assert!(!delivered(&store, id).await);
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id)
        );
    }

    #[tokio::test]
    async fn a_cancel_before_during_or_after_the_result_leaves_it_undelivered() {
        let store = Store::memory();
        let deliveries = Deliveries::default();
        // After the result was delivered: the mark is taken back.
        let (delivery, ask) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(3), &store, delivery)
            .await;
        deliveries.heard(&list_tools(4)).await;
        assert!(delivered(&store, id).await);
        deliveries.heard(&cancel(3)).await;
        assert!(!delivered(&store, id).await);
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id)
        );

        // Before: never marked.
        let store = Store::memory();
        let (delivery, _) = answered(&store).await;
        let id = delivery.0;
        deliveries.heard(&cancel(8)).await;
        deliveries
            .deliver(&RequestId::Number(8), &store, delivery)
            .await;
        deliveries.heard(&list_tools(9)).await;
        assert!(!delivered(&store, id).await);

        // While held: never marked.
        let store = Store::memory();
        let (delivery, _) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(10), &store, delivery)
            .await;
        deliveries.heard(&cancel(10)).await;
        deliveries.heard(&list_tools(11)).await;
        assert!(!delivered(&store, id).await);

        // Another request's cancel changes nothing.
        let store = Store::memory();
        let (delivery, _) = answered(&store).await;
        let id = delivery.0;
        deliveries
            .deliver(&RequestId::Number(12), &store, delivery)
            .await;
        deliveries.heard(&cancel(13)).await;
        deliveries.heard(&list_tools(14)).await;
        assert!(delivered(&store, id).await);
    }
}
