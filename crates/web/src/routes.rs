//! The HTTP surface: the page, its two static assets, the live event stream, and the two
//! state-changing requests (answer, dismiss). Everything lives under `/<secret>/`.
//!
//! | method and path | does |
//! | --- | --- |
//! | `GET /<secret>` | redirects to `/<secret>/` |
//! | `GET /<secret>/` | the page (`index.html`) |
//! | `GET /<secret>/app.js`, `/<secret>/cards.js`, `/<secret>/app.css`, `/<secret>/favicon.svg` | its scripts (the card, [`crate::cards`], and the page), style and icon |
//! | `GET /<secret>/events` | server-sent events, see [`crate::view`] docs |
//! | `POST /<secret>/answer` | `{"batch":N,"answers":[{"id","selected","custom"?}],"tab"?}` → 200 `ok`, 409, 422, 503 |
//! | `POST /<secret>/dismiss` | `{"batch":N,"tab"?}` → 200 `ok`, 409, 503 |
//!
//! `200 ok` means the submission is the outcome of the ask (docs/contract.md §4, "Decided
//! before acknowledged"); 409 says why it was not taken (answered in the terminal, timed out,
//! …); 422 refuses an answer that does not fit (every question must be answered or skipped
//! explicitly) and keeps the questions open; 503 means it could not be recorded.

use std::convert::Infallible;
use std::time::Duration;

use ask_user_core::{AnswerItem, Answers, Offer};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::middleware;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use futures::{Stream, StreamExt, stream};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::broadcast::error::RecvError;

use crate::access::{guard, security_headers};
use crate::pending::SubmitError;
use crate::refusal::{BODY_LIMIT, Refusal};
use crate::state::WebState;
use crate::view::PageEvent;

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = crate::cards::CARD_STYLE;

/// The page with the shared card templates in place.
static PAGE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::cards::with_card_templates(INDEX_HTML));
const FAVICON_SVG: &str = include_str!("assets/favicon.svg");

/// How long a page waits before reconnecting a dropped event stream.
const RECONNECT: Duration = Duration::from_secs(1);

/// The longest tab id echoed to other pages.
const TAB_ID_MAX: usize = 64;

/// The whole HTTP application for `state`: routes, the access guard (Host, key, Origin), the
/// body limit and the security headers. Bind it yourself with `axum::serve`, or call it
/// in-process (`tower::ServiceExt::oneshot`) in tests; [`crate::WebAnswerer::start`] does the
/// former.
pub fn router(state: WebState) -> Router {
    Router::new()
        .route("/{key}", get(redirect_to_page))
        .route("/{key}/", get(page))
        .route("/{key}/app.js", get(script))
        .route("/{key}/cards.js", get(card_script))
        .route("/{key}/app.css", get(style))
        .route("/{key}/favicon.svg", get(favicon))
        .route("/{key}/events", get(events))
        .route("/{key}/answer", post(answer))
        .route("/{key}/dismiss", post(dismiss))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(middleware::map_response(security_headers))
        .with_state(state)
}

async fn redirect_to_page(Path(key): Path<String>) -> Redirect {
    // The guard has checked the key: it is our secret, plain hex.
    Redirect::permanent(&format!("/{key}/"))
}

async fn page() -> Html<&'static str> {
    Html(PAGE.as_str())
}

async fn script() -> Response {
    ([(CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS).into_response()
}

async fn card_script() -> Response {
    (
        [(CONTENT_TYPE, "text/javascript; charset=utf-8")],
        crate::cards::CARD_SCRIPT,
    )
        .into_response()
}

async fn style() -> Response {
    ([(CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response()
}

async fn favicon() -> Response {
    ([(CONTENT_TYPE, "image/svg+xml")], FAVICON_SVG).into_response()
}

async fn not_found() -> Refusal {
    Refusal::NotFound
}

fn sse_event(event: PageEvent) -> Result<Event, Infallible> {
    Ok(Event::default().event(event.name).data(&*event.data))
}

async fn events(
    State(state): State<WebState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (receiver, snapshot) = state.pending_batches().subscribe();
    let count = state.page_opened();
    let first = stream::once(async move {
        Ok(Event::default()
            .event(snapshot.name)
            .data(&*snapshot.data)
            .retry(RECONNECT))
    });
    // Ends when the server shuts down, but only once the queued events (a last withdrawal)
    // are sent: `biased` takes events before looking at the shutdown. The last event is
    // `ended`, so the page says it is done instead of reconnecting to a server that is gone.
    let live = stream::unfold(Some((receiver, state.clone(), count)), |open| async move {
        let (mut receiver, state, count) = open?;
        let shutdown = state.shutdown_token().clone();
        let event = tokio::select! {
            biased;
            received = receiver.recv() => match received {
                Ok(event) => event,
                Err(RecvError::Lagged(_)) => state.pending_batches().snapshot(),
                Err(RecvError::Closed) => return Some((PageEvent::ended(), None)),
            },
            () = shutdown.cancelled() => return Some((PageEvent::ended(), None)),
        };
        Some((event, Some((receiver, state, count))))
    })
    .map(sse_event);
    Sse::new(first.chain(live)).keep_alive(KeepAlive::default())
}

/// A submitted answer.
#[derive(Debug, Deserialize)]
struct Submission {
    batch: u64,
    #[serde(default)]
    answers: Vec<AnswerItem>,
    #[serde(default)]
    tab: Option<String>,
}

/// A dismissal.
#[derive(Debug, Deserialize)]
struct Dismissal {
    batch: u64,
    #[serde(default)]
    tab: Option<String>,
}

fn parse<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, Refusal> {
    let body = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => Refusal::TooLarge,
        _ => Refusal::BadRequest(rejection.body_text()),
    })?;
    serde_json::from_slice(&body).map_err(|e| Refusal::BadRequest(e.to_string()))
}

/// The tab id, when it is short; a long one is dropped rather than echoed to every page.
fn tab(tab: &Option<String>) -> Option<&str> {
    tab.as_deref().filter(|t| t.len() <= TAB_ID_MAX)
}

fn submitted(result: Result<(), SubmitError>) -> Result<&'static str, Refusal> {
    match result {
        Ok(()) => Ok("ok"),
        Err(SubmitError::NotTaken(settled)) => Err(Refusal::NotTaken(settled)),
        Err(SubmitError::Invalid(why)) => Err(Refusal::Invalid(why)),
        Err(SubmitError::NotRecorded(why)) => Err(Refusal::NotRecorded(why)),
    }
}

async fn answer(
    State(state): State<WebState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<&'static str, Refusal> {
    let submission: Submission = parse(body)?;
    let answers = Answers {
        answers: submission.answers,
    };
    submitted(
        state
            .pending_batches()
            .offer(
                submission.batch,
                Offer::Answers(answers),
                tab(&submission.tab),
            )
            .await,
    )
}

async fn dismiss(
    State(state): State<WebState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<&'static str, Refusal> {
    let dismissal: Dismissal = parse(body)?;
    submitted(
        state
            .pending_batches()
            .offer(dismissal.batch, Offer::Dismiss, tab(&dismissal.tab))
            .await,
    )
}
