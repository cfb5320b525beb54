//! The answer endpoints a hub mounts (docs/contract.md §9, §10): each checks the token it
//! carries instead of a session cookie.

use ask_user_store::AskId;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::email::escape_html;
use crate::token::{RedeemError, Refusal, Tokens};

/// What the answer endpoints need: the tokens the dispatcher issues (and, through them, the
/// store the outcome goes to).
#[derive(Debug, Clone)]
pub struct AnswerState {
    /// The tokens.
    pub tokens: Tokens,
}

/// The answer endpoints, to be merged into the hub's router:
///
/// - `POST /channels/{ask}/ntfy/{token}`: ntfy's `http` action (the phone sends it when the
///   button is tapped; the body is ignored).
///
/// - `GET /channels/{ask}/email/{token}`: the confirm page of a mail link: the question, the
///   choice and one button; it answers nothing (a scanner may prefetch it).
/// - `POST /channels/{ask}/email/{token}`: that button: answers, and shows how it went.
///
/// ntfy replies are plain text for the human: `200 Answer recorded: “label”.`; `404` unknown token
/// or unknown ask; `403` a token of another ask or channel; `410` a token used before; `409`
/// the ask is closed (with how); `500` the store failed (no detail).
pub fn answer_router(state: AnswerState) -> Router {
    Router::new()
        .route("/channels/{ask}/ntfy/{token}", post(ntfy_answer))
        .route(
            "/channels/{ask}/email/{token}",
            get(email_confirm).post(email_answer),
        )
        .with_state(state)
}

async fn ntfy_answer(
    State(state): State<AnswerState>,
    Path((ask, token)): Path<(i64, String)>,
) -> Response {
    answer(&state, AskId(ask), "ntfy", &token, None).await
}

/// The headers of every confirm or result page: nothing cached, no referrer (the URL holds a
/// token), no script, forms only to this origin, never framed.
fn page(status: StatusCode, title: &str, body_html: &str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title></head><body>{body_html}</body></html>",
        escape_html(title)
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
            ),
        ],
        html,
    )
        .into_response()
}

async fn email_confirm(
    State(state): State<AnswerState>,
    Path((ask, token)): Path<(i64, String)>,
) -> Response {
    let ask = AskId(ask);
    let choice = match state.tokens.peek(ask, "email", &token).await {
        Ok(c) => c,
        Err(RedeemError::Refused(r)) => {
            return page(refusal_status(&r), "Not answered", &para(&r.to_string()));
        }
        Err(_) => {
            let r = Refusal::Unknown;
            return page(refusal_status(&r), "Not answered", &para(&r.to_string()));
        }
    };
    let rec = match state.tokens.store().get(ask).await {
        Ok(rec) => rec,
        Err(_) => {
            let r = Refusal::Unknown;
            return page(refusal_status(&r), "Not answered", &para(&r.to_string()));
        }
    };
    if let Some(closed) = rec.closed {
        let r = Refusal::Closed(Box::new(closed));
        return page(refusal_status(&r), "Not answered", &para(&r.to_string()));
    }
    let question = serde_json::from_str::<serde_json::Value>(&rec.request)
        .ok()
        .and_then(|v| {
            v["questions"]
                .as_array()?
                .iter()
                .find(|q| q["id"] == choice.question.as_str())?["question"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let body = format!(
        "<p style=\"white-space:pre-wrap\">{}</p><form method=\"post\"><button type=\"submit\">Answer \u{201c}{}\u{201d}</button></form>",
        escape_html(&crate::text::question(&question)),
        escape_html(&crate::text::label(&choice.label))
    );
    page(StatusCode::OK, "Confirm your answer", &body)
}

async fn email_answer(
    State(state): State<AnswerState>,
    Path((ask, token)): Path<(i64, String)>,
) -> Response {
    let reply = answer(&state, AskId(ask), "email", &token, None).await;
    let status = reply.status();
    let text = match axum::body::to_bytes(reply.into_body(), 64 * 1024).await {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => String::new(),
    };
    let title = if status.is_success() {
        "Answered"
    } else {
        "Not answered"
    };
    page(status, title, &para(&text))
}

fn para(text: &str) -> String {
    format!("<p>{}</p>", escape_html(text))
}

async fn answer(
    state: &AnswerState,
    ask: AskId,
    channel: &str,
    token: &str,
    user: Option<String>,
) -> Response {
    match state.tokens.redeem(ask, channel, token, user).await {
        Ok(choice) => (
            StatusCode::OK,
            format!(
                "Answer recorded: \u{201c}{}\u{201d}.",
                crate::text::label(&choice.label)
            ),
        )
            .into_response(),
        Err(RedeemError::Refused(r)) => (refusal_status(&r), r.to_string()).into_response(),
        Err(RedeemError::Store(ask_user_store::Error::NotFound(_))) => {
            (StatusCode::NOT_FOUND, Refusal::Unknown.to_string()).into_response()
        }
        Err(e) => {
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
        Refusal::NothingChosen | Refusal::NothingTyped => StatusCode::BAD_REQUEST,
    }
}
