//! The agent API under `/v1/` (docs/contract.md §9 "Agents"); see the crate doc's table.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{Limits, decode};
use ask_user_hub_wire::{Delivered, PostAsk};
use ask_user_store::{
    AskId, AskRecord, Asker, Namespace, NewAsk, Outcome, Recorded, Scope, Store, Timestamp,
};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::auth::Agent;
use crate::refusal::{HubRefusal, store_error};
use crate::{Hub, MAX_WAIT, view_of};

pub(crate) fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/v1/asks", post(post_ask))
        .route("/v1/asks/{id}", get(get_ask).delete(delete_ask))
        .route("/v1/asks/{id}/delivered", post(delivered))
}

/// Caps a context field so a caller cannot fill the human's page.
pub(crate) fn cap(s: Option<String>) -> Option<String> {
    s.map(|s| s.chars().take(200).collect::<String>())
        .filter(|s| !s.trim().is_empty())
}

/// The namespace of an agent's asks: its token, by id.
fn namespace(token_id: &str) -> Namespace {
    Namespace::hub_token(token_id)
}

async fn post_ask(
    State(hub): State<Arc<Hub>>,
    Agent(agent, token, _): Agent,
    body: Result<axum::Json<PostAsk>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let axum::Json(body) = match body {
        Ok(b) => b,
        Err(e) => return HubRefusal::Unreadable(e.status(), e.body_text()).into_response(),
    };
    let decoded = match decode(body.arguments, &Limits::default()) {
        Ok(d) => d,
        Err(e) => return HubRefusal::Invalid(e.to_string()).into_response(),
    };
    // Each token its own namespace (by id: two tokens of one name never share an ask).
    let scope = match body.key.filter(|k| !k.is_empty()) {
        Some(key) => Scope::HostKey(key),
        None => Scope::Caller(String::new()),
    };
    let asker = Asker {
        agent: Some(agent),
        project: cap(body.context.project),
        host: cap(body.context.host),
        session: cap(body.context.session),
        pid: None,
        process: None,
    };
    let ask = NewAsk::new(&scope, decoded.request.to_canonical_json(), asker)
        .in_namespace(&namespace(&token));
    match hub.store.open_ask(&ask).await {
        Ok(opened) => {
            let rec = opened.record();
            if rec.is_open() {
                hub.deadlines.set(rec.id, body.deadline, Timestamp::now());
            }
            axum::Json(view_of(rec)).into_response()
        }
        Err(e) => store_error(&e),
    }
}

/// The ask if it is this token's (its namespace; an ask stored before namespaces, in the
/// unnamed one, by the agent's name as then); otherwise the same 404 as a missing one.
async fn own(store: &Store, agent: &Agent, id: i64) -> Result<AskRecord, Response> {
    let Agent(name, token, _) = agent;
    let mine = |rec: &AskRecord| match rec.key.namespace().as_str() {
        "" => rec.asker.agent.as_deref() == Some(name.as_str()),
        _ => *rec.key.namespace() == namespace(token),
    };
    match store.get(AskId(id)).await {
        Ok(rec) if mine(&rec) => Ok(rec),
        Ok(_) => Err(HubRefusal::NoSuchAsk.into_response()),
        Err(e) => Err(store_error(&e)),
    }
}

#[derive(Debug, Deserialize)]
struct Wait {
    #[serde(default)]
    wait: Option<f64>,
}

/// Detaches the ask when the waiting request goes away before its answer (the agent's
/// connection broke): the ask stays open for the human for its grace.
struct DetachOnDrop {
    store: Store,
    id: AskId,
    armed: bool,
}

impl Drop for DetachOnDrop {
    fn drop(&mut self) {
        if self.armed {
            let (store, id) = (self.store.clone(), self.id);
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let _ = store.set_attached(id, false, Timestamp::now()).await;
                });
            }
        }
    }
}

/// How long a `?wait=SECONDS` long-poll waits: at most [`MAX_WAIT`]; none for a missing,
/// non-positive or non-finite value.
pub(crate) fn wait_of(seconds: Option<f64>) -> Duration {
    seconds
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::ZERO, |s| {
            Duration::try_from_secs_f64(s.min(MAX_WAIT.as_secs_f64())).unwrap_or(MAX_WAIT)
        })
}

async fn get_ask(
    State(hub): State<Arc<Hub>>,
    agent: Agent,
    Path(id): Path<i64>,
    Query(w): Query<Wait>,
) -> Response {
    let rec = match own(&hub.store, &agent, id).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let wait = wait_of(w.wait);
    if !rec.is_open() || wait.is_zero() {
        return axum::Json(view_of(&rec)).into_response();
    }
    // The agent waits: its ask is attached with a fresh lease (docs/contract.md §8
    // "Liveness"), renewed while this request waits. An agent that stops polling (killed, or
    // its replica killed) stops renewing, and the sweep marks its ask detached.
    // (`renew` is false when a sweep detached it meanwhile: attach it again.)
    let renewed = if rec.attached {
        hub.store.renew(rec.id, Timestamp::now()).await
    } else {
        Ok(false)
    };
    let attached = match renewed {
        Ok(true) => Ok(()),
        Ok(false) => hub.store.set_attached(rec.id, true, Timestamp::now()).await,
        Err(e) => Err(e),
    };
    if let Err(e) = attached {
        return store_error(&e);
    }
    // Only the id is kept while waiting (the request's text is not held per waiting agent).
    let id = rec.id;
    drop(rec);
    let mut guard = DetachOnDrop {
        store: hub.store.clone(),
        id,
        armed: true,
    };
    let waiting = async {
        tokio::select! {
            out = hub.store.wait_outcome(id) => out,
            () = keep_lease(&hub.store, id) => std::future::pending().await,
        }
    };
    let out = match tokio::time::timeout(wait, waiting).await {
        Ok(Ok(rec)) => rec,
        Ok(Err(e)) => return store_error(&e),
        Err(_) => match hub.store.get(id).await {
            Ok(r) => r,
            Err(e) => return store_error(&e),
        },
    };
    guard.armed = false;
    let withdrawn = matches!(
        out.closed.as_ref().map(|c| &c.outcome),
        Some(Outcome::Withdrawn)
    );
    let mut response = axum::Json(view_of(&out)).into_response();
    if withdrawn {
        response.extensions_mut().insert(EndedWithdrawn);
    }
    response
}

/// Marks a long-poll's response whose wait ended with the ask withdrawn: revoking a token
/// withdraws its asks (which wakes its waits before the next revocation check), so the gate
/// checks the token again before handing such an outcome out. Any other outcome (an answer,
/// above all) goes out without another store read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EndedWithdrawn;

/// [`Store::keep_lease`] with each renewal boxed while it runs: a waiting poll holds a timer,
/// not the largest store backend's renewal state (about 2.5 KiB per waiting agent).
async fn keep_lease(store: &Store, id: AskId) {
    let every = ask_user_store::lease() / 3;
    loop {
        tokio::time::sleep(every).await;
        match Box::pin(store.renew(id, Timestamp::now())).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => tracing::warn!("cannot renew the lease of ask {id}: {e}"),
        }
    }
    std::future::pending::<()>().await;
}

/// `POST /v1/asks/{id}/delivered`: the agent printed the outcome it read. The body may name
/// that outcome (`{"state": …, "answers": …}` as the ask's view gave it); the mark is a
/// compare-and-set on it (409 when the ask holds another outcome). Without a body, the outcome
/// the ask holds now is the one marked, as older clients expect.
async fn delivered(
    State(hub): State<Arc<Hub>>,
    agent: Agent,
    Path(id): Path<i64>,
    body: Option<axum::Json<Delivered>>,
) -> Response {
    let rec = match own(&hub.store, &agent, id).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let Some(closed) = &rec.closed else {
        return HubRefusal::StillOpen.into_response();
    };
    if let Some(axum::Json(printed)) = body
        && !delivered_matches(&printed, &closed.outcome)
    {
        return HubRefusal::OtherOutcome.into_response();
    }
    match hub
        .store
        .mark_delivered(rec.id, &closed.outcome, Timestamp::now())
        .await
    {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => HubRefusal::OtherOutcome.into_response(),
        Err(e) => store_error(&e),
    }
}

/// Whether the outcome an agent says it delivered is `outcome`.
pub(crate) fn delivered_matches(printed: &Delivered, outcome: &Outcome) -> bool {
    printed.state == crate::state_of(Some(outcome))
        && match outcome {
            Outcome::Answered { answer, .. } => printed.answers.as_ref() == Some(answer),
            _ => true,
        }
}

/// `DELETE /v1/asks/{id}?reason=timed_out`: why the agent withdraws. `timed_out` (its own
/// budget ran out) closes the ask as timed out, so the page says so; anything else, or none,
/// as withdrawn.
#[derive(Debug, Deserialize)]
struct Withdraw {
    #[serde(default)]
    reason: Option<String>,
}

async fn delete_ask(
    State(hub): State<Arc<Hub>>,
    agent: Agent,
    Path(id): Path<i64>,
    Query(why): Query<Withdraw>,
) -> Response {
    let rec = match own(&hub.store, &agent, id).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let outcome = match why.reason.as_deref() {
        Some("timed_out") => Outcome::TimedOut,
        _ => Outcome::Withdrawn,
    };
    match hub
        .store
        .record_outcome(rec.id, &outcome, Timestamp::now())
        .await
    {
        Ok(Recorded::Won | Recorded::Lost(_)) => match hub.store.get(rec.id).await {
            Ok(r) => axum::Json(view_of(&r)).into_response(),
            Err(e) => store_error(&e),
        },
        Err(e) => store_error(&e),
    }
}
