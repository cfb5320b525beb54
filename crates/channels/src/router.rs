//! The answer endpoints a hub mounts (docs/contract.md §9, §10): each checks the token it
//! carries instead of a session cookie.

use ask_user_store::{AskId, Store};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::token::{RedeemError, Refusal, Tokens};

/// What the answer endpoints need: the store the outcome goes to and the token table the
/// dispatcher issues into.
#[derive(Debug, Clone)]
pub struct AnswerState {
    /// The store.
    pub store: Store,
    /// The tokens.
    pub tokens: Tokens,
}

/// The answer endpoints, to be merged into the hub's router:
///
/// - `POST /channels/{ask}/ntfy/{token}`: ntfy's `http` action (the phone sends it when the
///   button is tapped; the body is ignored).
///
/// Replies are plain text for the human: `200 Answer recorded: “label”.`; `404` unknown token
/// or unknown ask; `403` a token of another ask or channel; `410` a token used before; `409`
/// the ask is closed (with how); `500` the store failed (no detail).
pub fn answer_router(state: AnswerState) -> Router {
    Router::new()
        .route("/channels/{ask}/ntfy/{token}", post(ntfy_answer))
        .with_state(state)
}

async fn ntfy_answer(
    State(state): State<AnswerState>,
    Path((ask, token)): Path<(i64, String)>,
) -> Response {
    answer(&state, AskId(ask), "ntfy", &token, None).await
}

async fn answer(
    state: &AnswerState,
    ask: AskId,
    channel: &str,
    token: &str,
    user: Option<String>,
) -> Response {
    match state
        .tokens
        .redeem(&state.store, ask, channel, token, user)
        .await
    {
        Ok(choice) => (
            StatusCode::OK,
            format!("Answer recorded: \u{201c}{}\u{201d}.", choice.label),
        )
            .into_response(),
        Err(RedeemError::Refused(r)) => (refusal_status(&r), r.to_string()).into_response(),
        Err(RedeemError::Store(ask_user_store::Error::NotFound(_))) => {
            (StatusCode::NOT_FOUND, Refusal::Unknown.to_string()).into_response()
        }
        Err(RedeemError::Store(e)) => {
            tracing::warn!(ask = %ask, error = %e, "channels: the answer could not be stored");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "The answer could not be stored. Try again, or answer on the page.",
            )
                .into_response()
        }
    }
}

/// The HTTP status of a refusal.
#[must_use]
pub fn refusal_status(r: &Refusal) -> StatusCode {
    match r {
        Refusal::Unknown => StatusCode::NOT_FOUND,
        Refusal::OtherAsk => StatusCode::FORBIDDEN,
        Refusal::Replayed => StatusCode::GONE,
        Refusal::Closed(_) => StatusCode::CONFLICT,
    }
}
