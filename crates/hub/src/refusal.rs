//! Every refusal the hub answers with, in one place: its status and its text, written as the
//! wire's [`ErrorBody`] (`{"error": TEXT}`), which the hub client reads back. A text says what
//! went wrong and what to do, for the agent's developer, its model or the human; never a
//! store's or driver's error (those go to the hub's log). One answer is more than a refusal:
//! the page's 409 for an ask already closed also carries the ask as counted (crate::inbox).

use ask_user_hub_wire::ErrorBody;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why the hub refused a request (the variant's doc gives its status).
#[derive(Debug)]
pub(crate) enum HubRefusal {
    /// 401: no token, or one the hub does not know.
    Unauthorized,
    /// 401: the token was revoked while the request waited.
    Revoked,
    /// 429: the token sent too many requests.
    RateLimited,
    /// 429: too many of the token's requests are open at once.
    TooManyOpen,
    /// 429: the token already has the most open asks one token may.
    Quota,
    /// 413: the ask is over the body limit.
    TooLarge,
    /// 503: an agent's request the store could not take now (the agent retries).
    NotTaken,
    /// 503: the hub is stopping.
    Stopping,
    /// 404: no such ask for this agent (also an ask of another token's).
    NoSuchAsk,
    /// 409: a delivery reported for an ask still open.
    StillOpen,
    /// 409: a delivery reported for another outcome than the ask holds.
    OtherOutcome,
    /// 421: a human's request for a `Host` this hub does not answer to.
    WrongHost,
    /// 403: a human's state change that did not come from the hub's own page.
    ForeignOrigin,
    /// 401: a human's request without a live session.
    SignedOut,
    /// 503: a human's request the store cannot serve now.
    StoreDown,
    /// 404: the human's page asked for an ask that is not in the store (purged).
    NoSuchCard,
    /// 400: an answer's idempotency id is not 1–128 visible ASCII characters.
    BadIdempotencyKey,
    /// A body or query the hub cannot read: the extractor's own status and text.
    Unreadable(StatusCode, String),
    /// 422: arguments or answers that are not valid (the validator's text).
    Invalid(String),
    /// 500: a stored request this hub cannot decode any more.
    Damaged(String),
}

impl HubRefusal {
    /// The response's status and text: one row per refusal.
    fn parts(&self) -> (StatusCode, &str) {
        match self {
            Self::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "unauthorized: this request needs a valid agent token (Authorization: Bearer …; ask-user hub token add NAME makes one)",
            ),
            Self::Revoked => (
                StatusCode::UNAUTHORIZED,
                "unauthorized: this agent's token was revoked while the request waited (ask-user hub token add NAME makes a new one)",
            ),
            Self::RateLimited => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate limited: this agent's token sent too many requests; slow down and retry",
            ),
            Self::TooManyOpen => (
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests open at once for this agent's token (at most 32 on one hub): wait for an earlier request to finish, or withdraw asks you no longer need, then retry",
            ),
            Self::Quota => (
                StatusCode::TOO_MANY_REQUESTS,
                "quota: this agent already has 64 asks open, the most one token may; wait for their answers or withdraw the ones no longer needed (DELETE /v1/asks/ID), then ask again",
            ),
            Self::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "request too large: an ask (its arguments and context) must fit in 256 KiB; shorten the questions, options or descriptions and retry",
            ),
            Self::NotTaken => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the hub's store is unavailable; not taken, try again",
            ),
            Self::Stopping => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the hub is stopping: not taken, retry (another replica, or this one once it is back, answers)",
            ),
            Self::NoSuchAsk => (StatusCode::NOT_FOUND, "no such ask for this agent"),
            Self::StillOpen => (
                StatusCode::CONFLICT,
                "the ask is still open; nothing to deliver",
            ),
            Self::OtherOutcome => (
                StatusCode::CONFLICT,
                "the ask holds another outcome than the one delivered",
            ),
            Self::WrongHost => (
                StatusCode::MISDIRECTED_REQUEST,
                "this hub does not answer to that Host name",
            ),
            Self::ForeignOrigin => (
                StatusCode::FORBIDDEN,
                "refused: this request did not come from the hub's own page",
            ),
            Self::SignedOut => (
                StatusCode::UNAUTHORIZED,
                "signed out: open a sign-in link (ask-user hub login-link prints one)",
            ),
            Self::StoreDown => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the inbox's store is unavailable right now; try again in a moment (an answer already taken stays taken)",
            ),
            Self::NoSuchCard => (StatusCode::NOT_FOUND, "no such ask"),
            Self::BadIdempotencyKey => (
                StatusCode::BAD_REQUEST,
                "Idempotency-Key must be 1 to 128 visible ASCII characters",
            ),
            Self::Unreadable(status, text) => (*status, text),
            Self::Invalid(text) => (StatusCode::UNPROCESSABLE_ENTITY, text),
            Self::Damaged(text) => (StatusCode::INTERNAL_SERVER_ERROR, text),
        }
    }
}

impl IntoResponse for HubRefusal {
    fn into_response(self) -> Response {
        let (status, text) = self.parts();
        let body = ErrorBody {
            error: text.to_owned(),
        };
        (status, axum::Json(body)).into_response()
    }
}

/// [`HubRefusal::StoreDown`] (503) for a human's request; `why` goes to the hub's log only.
pub(crate) fn store_down(why: &dyn std::fmt::Display) -> HubRefusal {
    tracing::warn!("inbox: store unavailable: {why}");
    HubRefusal::StoreDown
}

/// An agent's request the store failed: 404 [`HubRefusal::NoSuchAsk`] for a missing ask, else
/// 503 [`HubRefusal::NotTaken`] (the store's error goes to the log).
pub(crate) fn store_error(e: &ask_user_store::Error) -> Response {
    match e {
        ask_user_store::Error::NotFound(_) => HubRefusal::NoSuchAsk.into_response(),
        other => {
            tracing::warn!("agent API: store unavailable: {other}");
            HubRefusal::NotTaken.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every refusal's body is the wire's `ErrorBody` holding exactly its text (pinned here),
    /// under its status.
    #[tokio::test]
    async fn every_refusal_is_an_error_body_with_its_pinned_text_under_its_status() {
        let all = [
            (
                HubRefusal::Unauthorized,
                401,
                "unauthorized: this request needs a valid agent token (Authorization: Bearer …; ask-user hub token add NAME makes one)",
            ),
            (
                HubRefusal::Revoked,
                401,
                "unauthorized: this agent's token was revoked while the request waited (ask-user hub token add NAME makes a new one)",
            ),
            (
                HubRefusal::RateLimited,
                429,
                "rate limited: this agent's token sent too many requests; slow down and retry",
            ),
            (
                HubRefusal::TooManyOpen,
                429,
                "too many requests open at once for this agent's token (at most 32 on one hub): wait for an earlier request to finish, or withdraw asks you no longer need, then retry",
            ),
            (
                HubRefusal::Quota,
                429,
                "quota: this agent already has 64 asks open, the most one token may; wait for their answers or withdraw the ones no longer needed (DELETE /v1/asks/ID), then ask again",
            ),
            (
                HubRefusal::TooLarge,
                413,
                "request too large: an ask (its arguments and context) must fit in 256 KiB; shorten the questions, options or descriptions and retry",
            ),
            (
                HubRefusal::NotTaken,
                503,
                "the hub's store is unavailable; not taken, try again",
            ),
            (
                HubRefusal::Stopping,
                503,
                "the hub is stopping: not taken, retry (another replica, or this one once it is back, answers)",
            ),
            (HubRefusal::NoSuchAsk, 404, "no such ask for this agent"),
            (
                HubRefusal::StillOpen,
                409,
                "the ask is still open; nothing to deliver",
            ),
            (
                HubRefusal::OtherOutcome,
                409,
                "the ask holds another outcome than the one delivered",
            ),
            (
                HubRefusal::WrongHost,
                421,
                "this hub does not answer to that Host name",
            ),
            (
                HubRefusal::ForeignOrigin,
                403,
                "refused: this request did not come from the hub's own page",
            ),
            (
                HubRefusal::SignedOut,
                401,
                "signed out: open a sign-in link (ask-user hub login-link prints one)",
            ),
            (
                HubRefusal::StoreDown,
                503,
                "the inbox's store is unavailable right now; try again in a moment (an answer already taken stays taken)",
            ),
            (HubRefusal::NoSuchCard, 404, "no such ask"),
            (
                HubRefusal::BadIdempotencyKey,
                400,
                "Idempotency-Key must be 1 to 128 visible ASCII characters",
            ),
            (
                HubRefusal::Unreadable(StatusCode::BAD_REQUEST, "bad json".into()),
                400,
                "bad json",
            ),
            (
                HubRefusal::Invalid("no questions".into()),
                422,
                "no questions",
            ),
            (HubRefusal::Damaged("unreadable".into()), 500, "unreadable"),
        ];
        for (refusal, status, text) in all {
            let response = refusal.into_response();
            assert_eq!(response.status().as_u16(), status, "{text}");
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let decoded: ErrorBody = serde_json::from_slice(&body).unwrap();
            assert_eq!(decoded.error, text);
        }
    }
}
