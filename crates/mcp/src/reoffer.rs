//! Results a client may have dropped without a word (docs/contract.md §8 "Delivered"): an MCP
//! client can abandon a request without `notifications/cancelled` (Gemini CLI's Esc does), so
//! the result the server then sends, and marks delivered, may reach nobody. MCP gives a server
//! no acknowledgement of a result, so such a delivery stays **unconfirmed**.
//!
//! The rule: **the same client's identical call** (same scope and canonical request, over any
//! session of this server) **that arrives within [`REOFFER_WINDOW`] of the delivery gets that
//! outcome once more**: the delivery is taken back ([`Store::unmark_delivered`]) and the ask
//! detached before the call opens its ask, so the store hands the outcome to it
//! ([`ask_user_store::Opened::Undelivered`]) and nothing is shown to the human. Bounds, for a
//! model that asks the identical question again on purpose after reading the answer:
//! - at most once per ask (the re-offered delivery is not re-offered again);
//! - only within the window after the delivery, and only while the store's redelivery window
//!   ([`UNKEYED_REDELIVERY_WINDOW`] after the answer) still hands it out;
//! - only while that delivery stands as this server marked it (another delivery or a
//!   take-back since ends it).
//!
//! After that the identical call asks the human anew. The re-offered result is the outcome's
//! usual result, byte for byte: the human answered that exact question moments ago.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ask_user_store::{AskId, CallKey, Store, Timestamp, UNKEYED_REDELIVERY_WINDOW};

/// How long after a delivery the same client's identical call gets that outcome again.
pub(crate) const REOFFER_WINDOW: Duration = Duration::from_secs(5 * 60);

/// **Test only** (read in builds with the store's `test-knobs` feature): the re-offer window in
/// milliseconds instead of [`REOFFER_WINDOW`].
pub(crate) const REOFFER_TEST_ENV: &str = "ASK_USER_TEST_REOFFER_MS";

/// How many deliveries are remembered (the latest ones).
const REMEMBERED: usize = 256;

/// One delivery this server marked.
#[derive(Debug)]
struct Sent {
    key: CallKey,
    store: Store,
    id: AskId,
    /// The delivery time stored.
    at: Timestamp,
    /// When it was marked, on this process's clock.
    when: Instant,
    /// Re-offered already (its later deliveries are not remembered).
    spent: bool,
}

/// The recent deliveries of this server's calls (shared by every session; cheap to clone; see
/// the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Reoffers {
    recent: Arc<Mutex<VecDeque<Sent>>>,
    window: Duration,
}

impl Default for Reoffers {
    fn default() -> Self {
        let window = ask_user_store::knobs::var(REOFFER_TEST_ENV)
            .and_then(|ms| ms.parse().ok())
            .map_or(REOFFER_WINDOW, Duration::from_millis);
        Self {
            recent: Arc::default(),
            window,
        }
    }
}

impl Reoffers {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Sent>> {
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether no delivery is remembered (a call need not compute its key then).
    pub(crate) fn is_empty(&self) -> bool {
        let mut recent = self.lock();
        let window = self.window;
        recent.retain(|sent| sent.when.elapsed() < window);
        recent.is_empty()
    }

    /// The outcome of ask `id`, asked as `key`, was marked delivered at `at` in `store`.
    pub(crate) fn delivered(&self, key: CallKey, store: &Store, id: AskId, at: Timestamp) {
        let mut recent = self.lock();
        if let Some(sent) = recent.iter().find(|sent| sent.id == id && sent.spent) {
            tracing::debug!("ask {}: re-offered once already", sent.id);
            return;
        }
        recent.retain(|sent| sent.key != key);
        if recent.len() == REMEMBERED {
            recent.pop_front();
        }
        recent.push_back(Sent {
            key,
            store: store.clone(),
            id,
            at,
            when: Instant::now(),
            spent: false,
        });
    }

    /// Before a call asked as `key` opens its ask: when an unconfirmed delivery of the same
    /// key is within the window, takes it back and detaches its ask (stored when this
    /// returns), so the call is handed that outcome. Returns the ask re-offered.
    pub(crate) async fn reoffer(&self, key: &CallKey) -> Option<AskId> {
        let (store, id, at) = {
            let mut recent = self.lock();
            let sent = recent
                .iter_mut()
                .rev()
                .find(|sent| &sent.key == key && !sent.spent)?;
            if sent.when.elapsed() >= self.window {
                return None;
            }
            sent.spent = true;
            (sent.store.clone(), sent.id, sent.at)
        };
        let rec = match store.get(id).await {
            Ok(rec) => rec,
            Err(e) => {
                tracing::warn!("cannot read ask {id} to offer its outcome again: {e}");
                return None;
            }
        };
        // Delivered since by another call, or taken back: not ours to re-offer. Answered too
        // long ago: the store would not hand it out.
        let handed = rec
            .closed
            .as_ref()
            .is_some_and(|c| c.at.plus(UNKEYED_REDELIVERY_WINDOW) > Timestamp::now());
        if rec.delivered_at != Some(at) || !handed {
            return None;
        }
        if let Err(e) = store.unmark_delivered(id, at).await {
            tracing::warn!("cannot take back the delivery of ask {id}: {e}");
            return None;
        }
        if let Err(e) = store.set_attached(id, false, Timestamp::now()).await {
            tracing::warn!("cannot mark ask {id} detached: {e}");
        }
        tracing::info!(
            "ask {id}: the same call again soon after its result was sent (the client may have \
             dropped that request); its outcome is offered once more"
        );
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use ask_user_store::{Asker, NewAsk, Opened, Outcome, Responder, Scope};

    use super::*;

    async fn delivered(store: &Store) -> (NewAsk, AskId, Timestamp) {
        let ask = NewAsk::new(&Scope::Caller("t".into()), r#"{"q":1}"#, Asker::default());
        let Opened::Created(rec) = store.open_ask(&ask).await.unwrap() else {
            panic!()
        };
        let outcome = Outcome::Answered {
            answer: serde_json::json!({"answers": []}),
            by: Responder::default(),
        };
        let now = Timestamp::now();
        store.record_outcome(rec.id, &outcome, now).await.unwrap();
        assert!(store.mark_delivered(rec.id, &outcome, now).await.unwrap());
        (ask, rec.id, now)
    }

    #[tokio::test]
    async fn offered_again_once_within_the_window_and_never_after_a_take_back() {
        let store = Store::memory();
        let reoffers = Reoffers::default();
        let (ask, id, at) = delivered(&store).await;
        reoffers.delivered(ask.key.clone(), &store, id, at);
        assert!(!reoffers.is_empty());
        assert_eq!(reoffers.reoffer(&ask.key).await, Some(id));
        assert!(
            matches!(store.open_ask(&ask).await.unwrap(), Opened::Undelivered(r) if r.id == id)
        );
        // Delivered again: not remembered, not offered a second time.
        let at = Timestamp(at.0 + 1);
        let outcome = store.get(id).await.unwrap().closed.unwrap().outcome;
        assert!(store.mark_delivered(id, &outcome, at).await.unwrap());
        reoffers.delivered(ask.key.clone(), &store, id, at);
        assert_eq!(reoffers.reoffer(&ask.key).await, None);

        // A delivery taken back meanwhile (a cancellation) is not re-offered.
        let store = Store::memory();
        let (ask, id, at) = delivered(&store).await;
        reoffers.delivered(ask.key.clone(), &store, id, at);
        store.unmark_delivered(id, at).await.unwrap();
        assert_eq!(reoffers.reoffer(&ask.key).await, None);

        // Past the window: not offered.
        let expired = Reoffers {
            window: Duration::ZERO,
            ..Reoffers::default()
        };
        let store = Store::memory();
        let (ask, id, at) = delivered(&store).await;
        expired.delivered(ask.key.clone(), &store, id, at);
        assert!(expired.is_empty());
        assert_eq!(expired.reoffer(&ask.key).await, None);
    }
}
