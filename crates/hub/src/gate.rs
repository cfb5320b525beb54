//! Who holds what open (docs/contract.md §9 "Abuse"): every request starts anonymous for the
//! connection loop (closed first when a newcomer needs room), an agent's requests yield to the
//! human's, one token holds at most [`MAX_OPEN_PER_TOKEN`] requests and
//! [`MAX_OPEN_ASKS_PER_TOKEN`] asks open at once, and a
//! revoked token's or signed-out session's waiting requests and event streams end within
//! [`REVOCATION_CHECK`] of the revocation, whichever replica or process revoked it.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use ask_user_serve::{ConnectionStanding, Standing};
use ask_user_store::{Store, Timestamp};
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::auth::{hash_secret, session_cookie};
use crate::refusal::HubRefusal;
use crate::{Hub, KIND_LOGIN, KIND_SESSION, KIND_TOKEN};

/// The most requests one agent token holds open at once on one replica (long-polls included);
/// beyond, 429 `too many requests open at once for this agent's token …`.
pub const MAX_OPEN_PER_TOKEN: usize = 32;

/// The most asks one agent token may have open at once (all replicas: counted in the store);
/// beyond, a new ask is refused with 429 `quota: this agent already has 64 asks open, …`.
pub const MAX_OPEN_ASKS_PER_TOKEN: u64 = 64;

/// How often the secrets behind open long-polls and event streams are checked again: a
/// revocation ends them within this (plus one store round trip).
pub const REVOCATION_CHECK: Duration = Duration::from_millis(400);

/// Lowers every request to [`Standing::Anonymous`] before any route sees it: until a
/// credential checks, the connection is the first the loop closes when the cap is reached.
pub(crate) async fn anonymous(request: Request, next: Next) -> Response {
    set_standing(&request, Standing::Anonymous);
    next.run(request).await
}

fn set_standing(request: &Request, standing: Standing) {
    if let Some(s) = request.extensions().get::<ConnectionStanding>() {
        s.set(standing);
    }
}

/// Raises a request's connection to `standing` (an extractor, once its credential checked).
pub(crate) fn raise(parts: &axum::http::request::Parts, standing: Standing) {
    if let Some(s) = parts.extensions.get::<ConnectionStanding>() {
        s.set(standing);
    }
}

/// The agent API's gate: authenticates the bearer token (401, 429 over its rate) before any
/// byte of the body is read, holds one of the token's [`MAX_OPEN_PER_TOKEN`] slots while the
/// request is served, marks the connection [`Standing::Yielding`] (an agent reconnects), ends
/// the request with 401 [`HubRefusal::Revoked`] when the token is revoked meanwhile, and gives a body over
/// the limit a text a model can act on (413 [`HubRefusal::TooLarge`]).
pub(crate) async fn agents(
    State(hub): State<Arc<Hub>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(request.headers()).map(hash_secret) else {
        return HubRefusal::Unauthorized.into_response();
    };
    let agent = match crate::auth::agent_of(&hub, &token).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let Some(_slot) = hub.open.take(&token) else {
        return HubRefusal::TooManyOpen.into_response();
    };
    set_standing(&request, Standing::Yielding);
    if request.method() == axum::http::Method::POST && request.uri().path() == "/v1/asks" {
        match hub
            .store
            .count_open_in(&ask_user_store::Namespace::hub_token(&token))
            .await
        {
            Ok(n) if n >= MAX_OPEN_ASKS_PER_TOKEN => {
                return HubRefusal::Quota.into_response();
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("agent API: store unavailable: {e}");
                return HubRefusal::NotTaken.into_response();
            }
        }
    }
    let watch = hub
        .revocations
        .watch(KIND_TOKEN, &token, (agent.0.clone(), agent.2));
    let waits = request.uri().query().is_some_and(|q| q.contains("wait="));
    request.extensions_mut().insert(agent);
    let response = tokio::select! {
        response = next.run(request) => response,
        () = watch.token.cancelled() => return HubRefusal::Revoked.into_response(),
        () = hub.stopping.cancelled() => return HubRefusal::Stopping.into_response(),
    };
    // A long-poll that ended with its ask withdrawn (revoking also withdraws the agent's asks,
    // which wakes it before the next check) tells a token revoked during its wait so, not the
    // outcome. Other outcomes need no second read: the watch covers the wait itself.
    if waits
        && response
            .extensions()
            .get::<crate::api::EndedWithdrawn>()
            .is_some()
        && let Ok(None) = hub
            .store
            .check_secret(KIND_TOKEN, &token, Timestamp::now())
            .await
    {
        return HubRefusal::Revoked.into_response();
    }
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return HubRefusal::TooLarge.into_response();
    }
    revocable(response, watch, &hub.stopping)
}

/// The human's routes' gate: a request proving a live session or sign-in link is kept by the
/// connection loop (never closed to make room). The human's event streams end when their
/// session is revoked (sign-out on any page,
/// `ask-user hub revoke-sessions`): every event-stream response to a request with a session
/// cookie is cut within [`REVOCATION_CHECK`] of the revocation.
pub(crate) async fn sessions(
    State(hub): State<Arc<Hub>>,
    mut request: Request,
    next: Next,
) -> Response {
    let session = session_cookie(request.headers()).map(hash_secret);
    // The human's requests are kept from the first byte they prove: a live session (the page,
    // its assets, its answers) or a live sign-in link (the sign-in itself), so a flood that
    // churns connections cannot close them. A session proven here is handed to the route's
    // `Human` extractor, which then needs no second read of the same secret.
    let now = Timestamp::now();
    let mut identity = None;
    let proven = match (&session, request.uri().path().strip_prefix("/login/")) {
        (Some(hash), _) => match hub.store.check_secret(KIND_SESSION, hash, now).await {
            Ok(Some(s)) => {
                identity = Some((s.name.clone(), s.created_at));
                request
                    .extensions_mut()
                    .insert(crate::auth::Human { session: s.name });
                true
            }
            _ => false,
        },
        (None, Some(link)) => matches!(
            hub.store
                .check_secret(KIND_LOGIN, &hash_secret(link), now)
                .await,
            Ok(Some(_))
        ),
        (None, None) => false,
    };
    if proven {
        set_standing(&request, Standing::Kept);
    }
    let response = next.run(request).await;
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    match (session, identity) {
        (Some(hash), Some(identity)) if streams && response.status().is_success() => {
            let watch = hub.revocations.watch(KIND_SESSION, &hash, identity);
            revocable(response, watch, &hub.stopping)
        }
        _ => response,
    }
}

/// The bearer token of a request, if any.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// `response` with a body that ends (cleanly, as if complete) when `watch` or `stopping`
/// fires, and holds the watch until then.
fn revocable(response: Response, watch: Watched, stopping: &CancellationToken) -> Response {
    let (mut parts, body) = response.into_parts();
    if body.is_end_stream() {
        return Response::from_parts(parts, body);
    }
    parts
        .headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    let ended = Box::pin(watch.token.clone().cancelled_owned());
    let stopped = Box::pin(stopping.clone().cancelled_owned());
    Response::from_parts(
        parts,
        Body::new(Revocable {
            body,
            ended,
            stopped,
            _watch: watch,
        }),
    )
}

struct Revocable {
    body: Body,
    ended: Pin<Box<WaitForCancellationFutureOwned>>,
    stopped: Pin<Box<WaitForCancellationFutureOwned>>,
    _watch: Watched,
}

impl HttpBody for Revocable {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.ended.as_mut().poll(cx).is_ready() || self.stopped.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Per-token counts of open requests (this replica).
#[derive(Debug, Default)]
pub(crate) struct OpenRequests {
    counts: Mutex<HashMap<String, Arc<AtomicUsize>>>,
}

/// One open request of a token; gives its slot back when dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl OpenRequests {
    /// One of `token`'s slots, or `None` when it holds [`MAX_OPEN_PER_TOKEN`].
    pub(crate) fn take(&self, token: &str) -> Option<Slot> {
        let count = self
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(token.to_owned())
            .or_default()
            .clone();
        let taken = count.fetch_add(1, Ordering::SeqCst);
        let slot = Slot(count);
        (taken < MAX_OPEN_PER_TOKEN).then_some(slot)
    }
}

/// A watched secret's identity in a list of its kind: its name and when it was made.
pub(crate) type Identity = (String, Timestamp);

/// Per watched secret (kind, hash): the token fired when it is revoked, how many requests
/// watch it, and its identity.
type Watches = HashMap<(&'static str, String), (CancellationToken, usize, Identity)>;

/// The secrets (kind and hash) open requests depend on, checked again every
/// [`REVOCATION_CHECK`] by [`Revocations::run`]; each fires its token when revoked.
#[derive(Debug, Default)]
pub(crate) struct Revocations {
    watched: Mutex<Watches>,
}

/// One request's watch on a secret; unwatches it when dropped.
pub(crate) struct Watched {
    revocations: Arc<Revocations>,
    key: (&'static str, String),
    pub(crate) token: CancellationToken,
}

impl Drop for Watched {
    fn drop(&mut self) {
        let mut watched = self.revocations.lock();
        if let Some((_, n, _)) = watched.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                watched.remove(&self.key);
            }
        }
    }
}

impl Revocations {
    fn lock(&self) -> std::sync::MutexGuard<'_, Watches> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Watches the secret of `kind` with `hash` (named and made as `identity` says) until the
    /// returned guard is dropped.
    pub(crate) fn watch(
        self: &Arc<Self>,
        kind: &'static str,
        hash: &str,
        identity: Identity,
    ) -> Watched {
        let key = (kind, hash.to_owned());
        let mut watched = self.lock();
        let entry = watched
            .entry(key.clone())
            .or_insert_with(|| (CancellationToken::new(), 0, identity));
        entry.1 += 1;
        let token = entry.0.clone();
        drop(watched);
        Watched {
            revocations: self.clone(),
            key,
            token,
        }
    }

    /// Checks every watched secret in `store` each [`REVOCATION_CHECK`] until `stop`, and
    /// fires the token of each one no longer live (revoked, expired). One read per kind
    /// watched, however many requests wait: the kind's live secrets, matched by identity;
    /// only a secret missing from that list is looked up by its hash (which decides). A store
    /// error leaves them watched (checked again next time).
    pub(crate) async fn run(self: Arc<Self>, store: Store, stop: CancellationToken) {
        loop {
            tokio::select! {
                () = tokio::time::sleep(REVOCATION_CHECK) => {}
                () = stop.cancelled() => return,
            }
            self.check(&store).await;
        }
    }

    /// One round of [`Revocations::run`].
    pub(crate) async fn check(&self, store: &Store) {
        let watched: Vec<((&'static str, String), Identity)> = self
            .lock()
            .iter()
            .map(|(key, (_, _, identity))| (key.clone(), identity.clone()))
            .collect();
        let mut kinds: Vec<&'static str> = watched.iter().map(|((kind, _), _)| *kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let now = Timestamp::now();
        let mut live: HashMap<&'static str, std::collections::HashSet<Identity>> = HashMap::new();
        for kind in kinds {
            if let Ok(list) = store.list_secrets(kind).await {
                live.insert(
                    kind,
                    list.into_iter()
                        .filter(|s| s.is_live(now))
                        .map(|s| (s.name, s.created_at))
                        .collect(),
                );
            }
        }
        for ((kind, hash), identity) in watched {
            let listed = live.get(kind).map(|l| l.contains(&identity));
            if listed != Some(false) {
                continue; // live, or the list was not read (checked next time)
            }
            if let Ok(None) = store.check_secret(kind, &hash, now).await
                && let Some((token, _, _)) = self.lock().get(&(kind, hash))
            {
                token.cancel();
            }
        }
    }
}
