//! Telling the hub "delivered" last (docs/contract.md §8 "Exactly once, made precise"): store
//! locally → write the model's bytes → then `POST /v1/asks/{id}/delivered`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ask_user_core::{Answers, Outcome};
use ask_user_hub_wire::{AskState, Delivered};

/// How long telling the hub may take before the host gives up on it (the hub then hands the
/// outcome to the retry again: at least once).
const DELIVERED_TIMEOUT: Duration = Duration::from_secs(3);

/// An outcome read from the hub, not yet confirmed delivered.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) http: reqwest::Client,
    /// The ask's `/delivered` URL on the hub it was read from.
    pub(crate) url: String,
    pub(crate) token: ask_user_core::Secret,
    /// The answers, or `None` for a dismissal.
    pub(crate) answers: Option<Answers>,
}

impl Pending {
    /// Whether the model read this outcome.
    fn is(&self, printed: &Outcome) -> bool {
        match (printed, &self.answers) {
            (Outcome::Answered(read), Some(mine)) => read == mine,
            (Outcome::Dismissed, None) => true,
            _ => false,
        }
    }
}

/// Where the hub answerer leaves the outcome it read until the host delivered it (part of
/// [`crate::HubClientConfig`]; clones share it). `Debug` never shows the token.
#[derive(Clone, Default)]
pub struct Upstream {
    pending: Arc<Mutex<Vec<Pending>>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Upstream").field("pending", &n).finish()
    }
}

impl Upstream {
    pub(crate) fn leave(&self, pending: Pending) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(pending);
    }

    /// Whether an outcome read from the hub waits to be confirmed.
    #[must_use]
    pub fn is_pending(&self) -> bool {
        !self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Tells the hub that `printed` — what the model read, after the host stored it and wrote
    /// it out — was delivered: `POST /delivered` naming that outcome (the hub marks it only
    /// when it holds exactly that one). An outcome read from the hub that is not what the model
    /// read (another answerer won) is not confirmed. Bounded; failures are logged (the hub
    /// then hands the outcome to the retry again).
    pub async fn delivered(&self, printed: &Outcome) {
        let pending =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        for p in pending.into_iter().filter(|p| p.is(printed)) {
            let body = match &p.answers {
                Some(answers) => Delivered {
                    state: AskState::Answered,
                    answers: serde_json::to_value(answers).ok(),
                },
                None => Delivered {
                    state: AskState::Dismissed,
                    answers: None,
                },
            };
            let body = serde_json::to_string(&body).unwrap_or_default();
            let sent = p
                .http
                .post(&p.url)
                .bearer_auth(p.token.expose())
                .header("content-type", "application/json")
                .body(body)
                .timeout(DELIVERED_TIMEOUT)
                .send()
                .await;
            match sent {
                Ok(resp) if resp.status().is_success() => {}
                Ok(resp) => tracing::warn!(
                    "the hub did not take the delivery ({}); its retry gets the outcome again",
                    resp.status()
                ),
                Err(e) => tracing::warn!(
                    "cannot tell the hub the outcome was delivered ({e}); its retry gets it again"
                ),
            }
        }
    }
}
