//! The human's side (docs/contract.md §9 "The human's inbox"): sign-in by link, the inbox
//! page and its assets, its state and live events, and answering.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::text::display_line;
use ask_user_core::{Answers, Limits, decode, normalise};
use ask_user_store::{
    AskId, AskRecord, Change, HistoryPage, NewSecret, OpenPage, Outcome, Recorded, Responder,
    Timestamp,
};
use ask_user_web::cards::{PreviousAnswer, ShownQuestion, shown_answers};
use axum::Router;
use axum::extract::{FromRequestParts, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use futures::Stream;
use serde::{Deserialize, Serialize};

use crate::auth::{COOKIE, Human, check_page_request, hash_secret, new_secret};
use crate::refusal::HubRefusal;
use crate::{AskView, Hub, KIND_LOGIN, KIND_SESSION, RevokedTokens, SESSION_TTL};

const PAGE_HTML: &str = include_str!("assets/inbox.html");
const SIGNED_OUT: &str = include_str!("assets/signed-out.html");
const LOGIN: &str = include_str!("assets/login.html");
const SCRIPT: &str = include_str!("assets/inbox.js");
const STYLE: &str = include_str!("assets/inbox.css");

/// The inbox page with the local page's card templates in place (one card implementation:
/// `ask_user_web::cards`).
static PAGE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| ask_user_web::cards::with_card_templates(PAGE_HTML));

/// How many closed asks the page shows.
const HISTORY_LEN: u32 = 50;

/// The text when an answer lost the race.
pub(crate) const ALREADY_CLOSED: &str =
    "not sent: this question was already closed elsewhere; the outcome that counted is shown";

pub(crate) fn routes(_hub: Arc<Hub>) -> Router<Arc<Hub>> {
    Router::new()
        .route("/", get(page))
        .route("/assets/inbox.js", get(script))
        .route("/assets/inbox.css", get(style))
        .route("/assets/cards.js", get(card_script))
        .route("/assets/app.css", get(card_style))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/login/{secret}", get(login_page).post(login))
        .route("/logout", post(logout))
        .route("/inbox/state", get(state))
        .route("/inbox/events", get(events))
        .route("/inbox/asks/{id}", get(one))
        .route("/inbox/asks/{id}/answer", post(answer))
        .route("/inbox/asks/{id}/dismiss", post(dismiss))
}

fn html(status: StatusCode, body: &str) -> Response {
    (status, Html(body.to_owned())).into_response()
}

async fn page(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    match Human::from_request_parts(&mut parts, &hub).await {
        Ok(_) => html(StatusCode::OK, PAGE.as_str()),
        Err(HubRefusal::SignedOut) => html(StatusCode::UNAUTHORIZED, SIGNED_OUT),
        Err(other) => other.into_response(),
    }
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

async fn card_script() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        ask_user_web::cards::CARD_SCRIPT,
    )
}

async fn card_style() -> Response {
    asset("text/css; charset=utf-8", ask_user_web::cards::CARD_STYLE)
}

/// The link itself only shows a button: a link previewer fetching it does not use it up.
async fn login_page(State(hub): State<Arc<Hub>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    if let Err(r) = check_page_request(&hub, &parts) {
        return r.into_response();
    }
    html(StatusCode::OK, LOGIN)
}

/// The text of a refused sign-in: used, expired or revoked look the same.
pub(crate) const LINK_REFUSED: &str = "This sign-in link was already used, has expired or was revoked. Print a new one with: ask-user hub login-link";

async fn login(
    State(hub): State<Arc<Hub>>,
    Path(secret): Path<String>,
    request: Request,
) -> Response {
    let (parts, _) = request.into_parts();
    if let Err(r) = check_page_request(&hub, &parts) {
        return r.into_response();
    }
    let now = Timestamp::now();
    match hub
        .store
        .consume_secret(KIND_LOGIN, &hash_secret(&secret), now)
        .await
    {
        Ok(Some(_)) => {}
        Ok(None) => return (StatusCode::FORBIDDEN, LINK_REFUSED).into_response(),
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    }
    let session = new_secret("");
    let hash = hash_secret(&session);
    let name = format!("session-{}", &hash[..12]);
    if let Err(e) = hub
        .store
        .add_secret(&NewSecret {
            kind: KIND_SESSION.to_owned(),
            name,
            hash,
            created_at: now,
            expires_at: Some(now.plus(SESSION_TTL)),
        })
        .await
    {
        return crate::refusal::store_down(&e).into_response();
    }
    let secure = if hub.secure_cookies { "; Secure" } else { "" };
    let cookie = format!(
        "{COOKIE}={session}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        SESSION_TTL.as_secs()
    );
    let mut resp = Redirect::to("/").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

async fn logout(State(hub): State<Arc<Hub>>, human: Human) -> Response {
    if let Err(e) = hub
        .store
        .revoke_secrets(KIND_SESSION, Some(&human.session), Timestamp::now())
        .await
    {
        return crate::refusal::store_down(&e).into_response();
    }
    let mut resp = StatusCode::NO_CONTENT.into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("ask_user_hub=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"),
    );
    resp
}

/// The questions of a stored request as the shared card reads them (`ask_user_web::cards`, the
/// local page's batch view): `{"id","question","header"?,"options":[{"label","description"?}],
/// "multi_select","recommended","shown"}` with `recommended` the index of the `(Recommended)`
/// option or `null` and `shown` the text as the card shows it (the shared rule, applied here:
/// [`ShownQuestion`]). An unreadable request shows no questions.
fn card_questions(request: &str) -> serde_json::Value {
    let Ok(decoded) = decode(request, &Limits::default()) else {
        return serde_json::Value::Array(Vec::new());
    };
    decoded
        .request
        .questions()
        .iter()
        .map(|q| {
            let mut v = serde_json::json!({
                "id": q.id,
                "question": q.question,
                "options": q.options,
                "multi_select": q.multi_select,
                "recommended": q.recommended(),
            });
            if let Some(h) = &q.header {
                v["header"] = serde_json::Value::String(h.clone());
            }
            v["shown"] = serde_json::to_value(ShownQuestion::of(q)).unwrap_or_default();
            v
        })
        .collect()
}

/// One ask as the page shows it.
#[derive(Debug, Serialize)]
struct Card {
    id: i64,
    agent: Option<String>,
    project: Option<String>,
    host: Option<String>,
    session: Option<String>,
    created_at: i64,
    closed_at: Option<i64>,
    questions: serde_json::Value,
    /// When the agent's budget runs out (Unix ms), while open: the page counts down to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline: Option<i64>,
    /// The idempotency id of the submission that closed it, when it came with one: the page
    /// whose own submission it was says "sent", even when it never got the response.
    #[serde(skip_serializing_if = "Option::is_none")]
    submission: Option<String>,
    /// While open: the answer given to the same question before, offered to send again.
    #[serde(skip_serializing_if = "Option::is_none")]
    previous: Option<PreviousAnswer>,
    #[serde(flatten)]
    view: AskView,
    /// Who asks, who answered and what, as the page shows them (the shared rule, applied
    /// here: the page has no text rule of its own).
    shown: CardShown,
}

/// The caller's and the answer's text of a [`Card`] as the page shows it (docs/contract.md §6
/// "Text safety"): each on one line by [`ask_user_core::text::display_line`].
#[derive(Debug, Serialize)]
struct CardShown {
    agent: Option<String>,
    project: Option<String>,
    host: Option<String>,
    session: Option<String>,
    /// The answerer that closed the ask (`hub` is the inbox itself).
    by: Option<String>,
    /// `[{"id","selected":[label…],"custom"?}]` with each label as its option shows it.
    answers: Option<serde_json::Value>,
}

impl CardShown {
    fn of(rec: &AskRecord, view: &AskView) -> Self {
        let line = |s: &Option<String>| s.as_deref().map(display_line);
        let answers = view.answers.as_ref().and_then(shown_answers);
        CardShown {
            agent: line(&rec.asker.agent),
            project: line(&rec.asker.project),
            host: line(&rec.asker.host),
            session: line(&rec.asker.session),
            by: view.by.as_ref().map(|b| display_line(&b.answerer)),
            answers,
        }
    }
}

/// What the page needs beside an ask's record to show it: the revoked tokens and the agents'
/// deadlines.
struct Shown<'a> {
    revoked: RevokedTokens,
    hub: &'a Hub,
    /// The newest answer delivered for each (namespace, request hash) among the recent closed
    /// asks: what an identical question's card offers to send again.
    previous: std::collections::HashMap<(String, String), PreviousAnswer>,
}

impl Shown<'_> {
    async fn of(hub: &Hub) -> Result<Shown<'_>, Response> {
        let revoked = match RevokedTokens::load(&hub.store).await {
            Ok(revoked) => revoked,
            Err(e) => return Err(crate::refusal::store_down(&e).into_response()),
        };
        // Only the keys and answers of the lookback, never its requests: a state read holds
        // one page of whole asks, however large the recent ones were.
        let given = match hub
            .store
            .given_answers(ask_user_store::SAME_ANSWER_LOOKBACK)
            .await
        {
            Ok(given) => given,
            Err(e) => return Err(crate::refusal::store_down(&e).into_response()),
        };
        let mut previous = std::collections::HashMap::new();
        for given in given {
            let key = (given.namespace.as_str().to_owned(), given.request_hash);
            if previous.contains_key(&key) {
                // Newest first: the first seen is the latest given.
                continue;
            }
            if let Some(offer) = PreviousAnswer::of(given.closed_at.0, given.answer) {
                previous.insert(key, offer);
            }
        }
        Ok(Shown {
            revoked,
            hub,
            previous,
        })
    }

    fn card(&self, rec: &AskRecord) -> Card {
        let mut card = card(rec, self.revoked.view(rec));
        if rec.is_open() {
            card.deadline = self.hub.deadlines.get(rec.id);
            card.previous = self
                .previous
                .get(&(
                    rec.key.namespace().as_str().to_owned(),
                    rec.key.request_hash().to_owned(),
                ))
                .cloned();
        }
        card
    }
}

fn card(rec: &AskRecord, view: AskView) -> Card {
    let questions = card_questions(&rec.request);
    let shown = CardShown::of(rec, &view);
    Card {
        id: rec.id.0,
        agent: rec.asker.agent.clone(),
        project: rec.asker.project.clone(),
        host: rec.asker.host.clone(),
        session: rec.asker.session.clone(),
        created_at: rec.created_at.0,
        closed_at: rec.closed.as_ref().map(|c| c.at.0),
        questions,
        deadline: None,
        submission: rec.closed.as_ref().and_then(|c| match &c.outcome {
            Outcome::Answered { by, .. } | Outcome::Dismissed { by } => by.submission.clone(),
            _ => None,
        }),
        previous: None,
        view,
        shown,
    }
}

/// How many open asks one state read returns unless the page asks for another number.
pub(crate) const OPEN_PAGE: u32 = 50;

/// The most open asks one state read returns, whatever the page asks for: a read costs the
/// same with 100 or 100,000 open asks.
pub(crate) const OPEN_PAGE_MAX: u32 = 500;

/// The most request text one list of a state read carries (the open asks, the history): a
/// page stops early (`more` says older asks remain) rather than holding and sending hundreds
/// of the largest asks at once. At least one ask is always listed.
pub(crate) const PAGE_BYTES: usize = 1 << 20;

/// Keeps the newest asks of `records` whose requests fit in [`PAGE_BYTES`] together (at least
/// one); says whether any were left out.
pub(crate) fn within_page_bytes(records: &mut Vec<AskRecord>) -> bool {
    let mut bytes = 0;
    let fits = records
        .iter()
        .position(|r| {
            bytes += r.request.len();
            bytes > PAGE_BYTES
        })
        .map_or(records.len(), |over| over.max(1));
    let cut = fits < records.len();
    records.truncate(fits);
    cut
}

/// A state read's answer, serialized from the cards as they are (no JSON tree in between).
#[derive(Serialize)]
struct StatePage {
    open: Vec<Card>,
    #[serde(skip_serializing_if = "Option::is_none")]
    open_total: Option<u64>,
    more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<Vec<Card>>,
}

/// The query of a state read: `limit` open asks (default [`OPEN_PAGE`], at most
/// [`OPEN_PAGE_MAX`]) older than ask `before` (none: from the newest).
#[derive(Debug, Deserialize)]
struct StateQuery {
    before: Option<i64>,
    limit: Option<u32>,
}

/// One page of the inbox (docs/contract.md §9): `open` (newest first) and `more` (older open
/// asks remain after this page); on the first page (no `before`) also `open_total` (every open
/// ask: a count the store keeps, one read whatever the number) and `history` (the newest closed
/// asks).
async fn state(
    State(hub): State<Arc<Hub>>,
    _human: Human,
    query: Result<Query<StateQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Query(query) = match query {
        Ok(q) => q,
        Err(e) => {
            return HubRefusal::Unreadable(StatusCode::BAD_REQUEST, e.body_text()).into_response();
        }
    };
    let limit = query.limit.unwrap_or(OPEN_PAGE).clamp(1, OPEN_PAGE_MAX);
    // One more than asked tells whether older asks remain, without a second read.
    let mut open = match hub
        .store
        .list_open_page(OpenPage {
            before: query.before.map(AskId),
            limit: limit + 1,
        })
        .await
    {
        Ok(o) => o,
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    };
    let mut more = open.len() > limit as usize;
    open.truncate(limit as usize);
    more |= within_page_bytes(&mut open);
    let shown = match Shown::of(&hub).await {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    let open = open.iter().map(|r| shown.card(r)).collect();
    if query.before.is_some() {
        // An older page ("Show more"): no count and no history; the page keeps those of its
        // first read.
        return axum::Json(StatePage {
            open,
            open_total: None,
            more,
            history: None,
        })
        .into_response();
    }
    let total = match hub.store.count_open().await {
        Ok(n) => n,
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    };
    let mut history = match hub
        .store
        .history(HistoryPage {
            after: None,
            limit: HISTORY_LEN,
        })
        .await
    {
        Ok(h) => h,
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    };
    within_page_bytes(&mut history);
    axum::Json(StatePage {
        open,
        open_total: Some(total),
        more,
        history: Some(history.iter().map(|r| shown.card(r)).collect()),
    })
    .into_response()
}

/// `GET /inbox/asks/{id}`: the one ask a live change named, as the page shows it (`ask`: a
/// card, open or closed), and `open_total` (every open ask): what the page needs to apply that
/// change without re-reading its whole window. 404 once purged.
async fn one(State(hub): State<Arc<Hub>>, _human: Human, Path(id): Path<i64>) -> Response {
    let rec = match hub.store.get(AskId(id)).await {
        Ok(r) => r,
        Err(ask_user_store::Error::NotFound(_)) => {
            return HubRefusal::NoSuchCard.into_response();
        }
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    };
    let shown = match Shown::of(&hub).await {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    let total = match hub.store.count_open().await {
        Ok(n) => n,
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    };
    axum::Json(serde_json::json!({ "ask": shown.card(&rec), "open_total": total })).into_response()
}

/// `change` whenever the store changes (any replica), naming the ask (`all` when changes may
/// have been missed, `ready` once connected): the page reads that one ask, or its whole
/// window for `all` and `ready`.
async fn events(
    State(hub): State<Arc<Hub>>,
    _human: Human,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Response> {
    let feed = hub
        .store
        .subscribe()
        .await
        .map_err(|e| crate::refusal::store_down(&e).into_response())?;
    let stream = futures::stream::unfold((feed, true), |(mut feed, first)| async move {
        if first {
            return Some((
                Ok(Event::default().event("change").data("ready")),
                (feed, false),
            ));
        }
        match feed.next().await {
            Some(Change::Ask(id)) => Some((
                Ok(Event::default().event("change").data(id.0.to_string())),
                (feed, false),
            )),
            Some(Change::Rescan) => Some((
                Ok(Event::default().event("change").data("all")),
                (feed, false),
            )),
            None => None,
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

#[derive(Debug, Deserialize)]
struct AnswerBody {
    answers: Vec<ask_user_core::AnswerItem>,
}

/// Records `outcome` for ask `id`: 200 `{"sent": true}` only when it won — or when what the
/// store holds is this very submission, taken by an earlier try of it whose response was lost
/// (same idempotency id, same decision: [`Outcome::is_submission_of`]) — 409 with the outcome
/// that counted otherwise.
async fn record(hub: &Hub, id: AskId, outcome: Outcome) -> Response {
    let sent = || axum::Json(serde_json::json!({ "sent": true })).into_response();
    match hub
        .store
        .record_outcome(id, &outcome, Timestamp::now())
        .await
    {
        Ok(Recorded::Won) => sent(),
        Ok(Recorded::Lost(closed)) if closed.outcome.is_submission_of(&outcome) => {
            tracing::info!("ask {id}: a retried submission that was taken before");
            sent()
        }
        Ok(Recorded::Lost(_)) => match hub.store.get(id).await {
            Ok(rec) => {
                let counted = match RevokedTokens::load(&hub.store).await {
                    Ok(revoked) => revoked.view(&rec),
                    Err(_) => crate::view_of(&rec),
                };
                (
                    StatusCode::CONFLICT,
                    axum::Json(serde_json::json!({
                        "error": ALREADY_CLOSED,
                        "counted": counted,
                    })),
                )
                    .into_response()
            }
            Err(e) => crate::refusal::store_down(&e).into_response(),
        },
        Err(ask_user_store::Error::NotFound(_)) => HubRefusal::NoSuchCard.into_response(),
        Err(e) => crate::refusal::store_down(&e).into_response(),
    }
}

/// The header a submission's idempotency id comes in (one id per act of the human's, the
/// same on each retry of it).
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The longest idempotency id taken.
const MAX_IDEMPOTENCY_KEY: usize = 128;

/// The submission's idempotency id ([`IDEMPOTENCY_KEY`]), when given; a 400 when it is not
/// 1–128 visible ASCII characters.
fn submission(headers: &axum::http::HeaderMap) -> Result<Option<String>, Box<Response>> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    let key = value.as_bytes();
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY || !key.iter().all(u8::is_ascii_graphic) {
        return Err(Box::new(HubRefusal::BadIdempotencyKey.into_response()));
    }
    Ok(Some(String::from_utf8_lossy(key).into_owned()))
}

fn responder(submission: Option<String>) -> Responder {
    Responder {
        answerer: "hub".to_owned(),
        channel: None,
        user: None,
        submission,
    }
}

async fn answer(
    State(hub): State<Arc<Hub>>,
    _human: Human,
    Path(id): Path<i64>,
    headers: axum::http::HeaderMap,
    body: Result<axum::Json<AnswerBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let submission = match submission(&headers) {
        Ok(s) => s,
        Err(refused) => return *refused,
    };
    let axum::Json(body) = match body {
        Ok(b) => b,
        Err(e) => return HubRefusal::Unreadable(e.status(), e.body_text()).into_response(),
    };
    let rec = match hub.store.get(AskId(id)).await {
        Ok(r) => r,
        Err(ask_user_store::Error::NotFound(_)) => {
            return HubRefusal::NoSuchCard.into_response();
        }
        Err(e) => return crate::refusal::store_down(&e).into_response(),
    };
    let request = match decode(rec.request.as_str(), &Limits::default()) {
        Ok(d) => d.request,
        Err(e) => return HubRefusal::Damaged(e.to_string()).into_response(),
    };
    let answers = match normalise(
        &request,
        Answers {
            answers: body.answers,
        },
    ) {
        Ok(a) => a,
        Err(e) => return HubRefusal::Invalid(e.to_string()).into_response(),
    };
    let answer = serde_json::to_value(&answers).unwrap_or_default();
    record(
        &hub,
        rec.id,
        Outcome::Answered {
            answer,
            by: responder(submission),
        },
    )
    .await
}

async fn dismiss(
    State(hub): State<Arc<Hub>>,
    _human: Human,
    Path(id): Path<i64>,
    headers: axum::http::HeaderMap,
) -> Response {
    let submission = match submission(&headers) {
        Ok(s) => s,
        Err(refused) => return *refused,
    };
    record(
        &hub,
        AskId(id),
        Outcome::Dismissed {
            by: responder(submission),
        },
    )
    .await
}
