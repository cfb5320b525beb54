//! The ask-user hub (docs/contract.md §9): one inbox for every agent on every machine.
//!
//! # Overview
//!
//! The hub serves a [`Store`] over HTTP to two kinds of client:
//!
//! - **Agents** (`/v1/…`, JSON, a bearer token each): post an ask (the model's tool-call
//!   arguments, the caller's context and an optional call key), wait for its outcome by
//!   long-poll, re-attach by posting the same ask again (same key, same request: the store hands
//!   back the same ask, or its undelivered answer), acknowledge delivery, or withdraw it with
//!   `DELETE`. Each token is its own namespace: another agent's ask is "not found", exactly like
//!   one that does not exist. See [`api`](crate#agent-api).
//! - **The human** (`/`, a session cookie): the inbox page with every open ask across agents,
//!   newest first, grouped by agent; live updates over server-sent events; the history of
//!   closed asks. Sign-in by a single-use link ([`login_link`]) valid 15 minutes, exchanged for
//!   a session cookie (HttpOnly, SameSite=Lax, Secure under TLS), revocable
//!   ([`revoke_sessions`]).
//!
//! Answers go through the store's first-outcome-wins [`Store::record_outcome`]: the page says
//! "sent" only when this answer won; otherwise it gets 409 with the outcome that counted. Every
//! replica on one Postgres serves one inbox: the page and the waiting agents follow the store's
//! change feed, so an answer given on any replica reaches an agent waiting on any other.
//!
//! Every bearer secret (agent tokens, login links, sessions) is 256 random bits, shown once, and
//! stored as its SHA-256 ([`ask_user_store::NewSecret`]).
//!
//! # Agent API
//!
//! | Request | Answer |
//! |---|---|
//! | `POST /v1/asks` [`PostAsk`](ask_user_hub_wire::PostAsk) `{"arguments": …, "context": {"project","host","session"}, "key"?: "…", "deadline"?: MS}` | 200 [`AskView`] (new, re-attached or undelivered); 422 with the model-facing refusal when the arguments are invalid |
//! | `GET /v1/asks/{id}?wait=SECONDS` | 200 [`AskView`] once closed or after `wait` (at most [`MAX_WAIT`]) |
//! | `POST /v1/asks/{id}/delivered` | 204: the model has read the outcome |
//! | `DELETE /v1/asks/{id}[?reason=timed_out]` | 200 [`AskView`]: withdrawn (timed out with that reason), or the outcome that counted first |
//!
//! The bodies are the wire crate's (`ask-user-hub-wire`), shared with the client; an ask's
//! state is an [`AskState`].
//!
//! Without a valid token: 401 `{"error": …}`; an ask that is not this agent's: 404, the same
//! text as a missing one.
//!
//! # Limits
//!
//! Header-read and keep-alive idle timeouts, a cap on open connections (the oldest idle one is
//! closed to make room, so a flood of silent connections never locks the human out), body
//! limits ([`BODY_LIMIT`]), per-token rate limits (60 requests at once, 20 a second, per
//! replica; 429 beyond). The human's routes check `Host` (DNS rebinding) and, when they
//! change state, `Origin`; every response carries a strict Content-Security-Policy with no
//! inline script.
#![deny(missing_docs)]

mod api;
mod auth;
mod deadline;
mod gate;
mod inbox;
mod refusal;
mod revoke;
#[cfg(test)]
mod unit_tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ask_user_store::{AskRecord, NewSecret, Outcome, Store, Timestamp};
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use ask_user_serve::CONTENT_SECURITY_POLICY;
pub use auth::{hash_secret, new_secret};
pub use gate::{MAX_OPEN_ASKS_PER_TOKEN, MAX_OPEN_PER_TOKEN, REVOCATION_CHECK};
pub(crate) use revoke::RevokedTokens;
pub use revoke::revoke_token;

/// The longest a single long-poll waits before answering "still open" (the agent polls again).
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// The largest request body accepted, in bytes (an ask's arguments or an answer).
pub const BODY_LIMIT: usize = 256 * 1024;

/// How long a login link stays valid (docs/contract.md §9).
pub const LOGIN_LINK_TTL: Duration = Duration::from_secs(15 * 60);

/// How long a session cookie stays valid.
pub const SESSION_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// Secret kinds in the store.
pub(crate) const KIND_TOKEN: &str = "hub-token";
pub(crate) const KIND_LOGIN: &str = "hub-login";
pub(crate) const KIND_SESSION: &str = "hub-session";
/// A revoked token's mark (name: the token's id; made when it was revoked), so the page tells
/// its asks closed by the revocation as revoked ([`AskState::Revoked`]). Never a credential:
/// its hash is derived from the token's id, not secret.
pub(crate) const KIND_REVOKED: &str = "hub-revoked-token";

/// How a hub serves: its store, its public address, and its limits.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// The store the hub serves (every replica of one inbox opens the same Postgres).
    pub store: Store,
    /// The URL the human's browser uses (`--public-url`, behind a reverse proxy), e.g.
    /// `https://hub.example.com`. Its host is accepted in `Host`, its origin in `Origin`, and
    /// `https` marks the session cookie `Secure`. `None`: the listen address.
    pub public_url: Option<String>,
    /// TLS this process terminates itself ([`HubTls::load`]); cookies are then `Secure`.
    pub tls: Option<HubTls>,
    /// Each connection must send a complete request head this soon after connecting or after
    /// its previous response (also the keep-alive idle limit).
    pub header_read_timeout: Duration,
    /// At most this many connections are open at once (at most half the open-files limit;
    /// the crate `ask-user-serve` states the eviction rule).
    pub max_connections: usize,
    /// Routes served beside the hub's own, e.g. the channels' answer endpoints
    /// (docs/contract.md §10). They bring their own authentication (single-use tokens, request
    /// signatures) and their own response headers: the hub's Host/Origin checks, security
    /// headers and body limit do not apply to them. Their paths must not overlap the hub's.
    pub extra_routes: Option<Router>,
    /// The secrets open requests depend on ([`serve`] checks them again every
    /// [`REVOCATION_CHECK`]); shared by the routers made from this configuration.
    revocations: Arc<gate::Revocations>,
    /// Fired by [`serve`] when its stop fires (see `Hub::stopping`).
    stopping: CancellationToken,
}

impl HubConfig {
    /// A configuration with the default limits (10 s header read, 1,024 connections).
    #[must_use]
    pub fn new(store: Store) -> HubConfig {
        HubConfig {
            store,
            public_url: None,
            tls: None,
            header_read_timeout: Duration::from_secs(10),
            max_connections: 1024,
            extra_routes: None,
            revocations: Arc::default(),
            stopping: CancellationToken::new(),
        }
    }
}

/// The state every route shares.
#[derive(Debug)]
pub(crate) struct Hub {
    pub(crate) store: Store,
    pub(crate) hosts: ask_user_serve::HostPolicy,
    pub(crate) origin: String,
    pub(crate) secure_cookies: bool,
    pub(crate) rate: auth::RateLimits,
    pub(crate) open: gate::OpenRequests,
    pub(crate) revocations: Arc<gate::Revocations>,
    /// The agents' deadlines, for the page's countdown (this replica's memory).
    pub(crate) deadlines: deadline::Deadlines,
    /// Fires when [`serve`]'s stop does: waiting polls answer 503 and event streams end, so
    /// the drain is prompt.
    pub(crate) stopping: CancellationToken,
}

/// Why the hub cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// A non-loopback listen address over plain HTTP without `--insecure-http`.
    #[error(
        "refusing to serve the hub over plain HTTP on {0}, which is not a loopback address: anyone on the network could read its tokens and answers; give --tls-cert and --tls-key, or put it behind a TLS reverse proxy and pass --insecure-http (with --public-url https://…)"
    )]
    PlainHttpNotLoopback(SocketAddr),
    /// `--public-url http://…` for a host that is not loopback, without `--insecure-http`.
    #[error(
        "refusing --public-url `{0}`: over plain http the human's session cookie and sign-in links travel in clear; give the https:// address (a TLS reverse proxy), or pass --insecure-http if you really mean it"
    )]
    PlainPublicUrl(String),
    /// `--insecure-http` on a non-loopback address without `--public-url`.
    #[error(
        "--insecure-http serves plain HTTP for a TLS reverse proxy: give --public-url https://… (the address browsers reach through the proxy)"
    )]
    InsecureWithoutPublicUrl,
    /// `--public-url` is not an `http(s)://host[:port]` URL.
    #[error("--public-url `{0}` is not understood: give http(s)://HOST[:PORT], without a path")]
    BadPublicUrl(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ask_user_store::Error),
    /// `--tls-cert` / `--tls-key` unusable.
    #[error("TLS: {file}: {detail}")]
    Tls {
        /// The file.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// The listen socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Refuses a non-loopback `addr` over plain HTTP unless `insecure_http` (docs/contract.md §9
/// "Transport"). `tls`: this process terminates TLS.
///
/// # Errors
/// [`HubError::PlainHttpNotLoopback`].
pub fn check_transport(addr: SocketAddr, tls: bool, insecure_http: bool) -> Result<(), HubError> {
    if tls || insecure_http || addr.ip().is_loopback() {
        Ok(())
    } else {
        Err(HubError::PlainHttpNotLoopback(addr))
    }
}

/// Refuses a `--public-url` that sends the human's cookie in clear, and plain HTTP on a
/// non-loopback address without one (docs/contract.md §9 "Operations"): `http://` is accepted
/// only for a loopback host or with `insecure_http`; `insecure_http` on a non-loopback
/// `addr` without TLS needs a public URL (the TLS proxy's address).
///
/// # Errors
/// [`HubError::PlainPublicUrl`], [`HubError::InsecureWithoutPublicUrl`],
/// [`HubError::BadPublicUrl`].
pub fn check_public_url(
    addr: SocketAddr,
    public_url: Option<&str>,
    tls: bool,
    insecure_http: bool,
) -> Result<(), HubError> {
    match public_url {
        None if insecure_http && !tls && !addr.ip().is_loopback() => {
            Err(HubError::InsecureWithoutPublicUrl)
        }
        None => Ok(()),
        Some(url) => {
            let (_, host, https) = auth::parse_public_url(url)?;
            let loopback = host.as_deref().is_some_and(auth::is_loopback_host);
            if https || loopback || insecure_http {
                Ok(())
            } else {
                Err(HubError::PlainPublicUrl(url.to_owned()))
            }
        }
    }
}

/// The hub's routes for `config`, as served at `bound` (the listener's real address).
///
/// # Errors
/// [`HubError::BadPublicUrl`].
pub fn router(config: &HubConfig, bound: SocketAddr) -> Result<Router, HubError> {
    let hub = hub_state(config, bound)?;
    let agents = api::routes().route_layer(axum::middleware::from_fn_with_state(
        hub.clone(),
        gate::agents,
    ));
    let human = inbox::routes(hub.clone()).layer(axum::middleware::from_fn_with_state(
        hub.clone(),
        gate::sessions,
    ));
    let app = Router::new()
        .merge(agents)
        .merge(human)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(hub);
    let app = match &config.extra_routes {
        Some(extra) => app.merge(extra.clone()),
        None => app,
    };
    // Every response, the channels' and the 404 included, gets the security headers; every
    // request starts anonymous for the connection loop until a credential checks.
    Ok(app
        .layer(axum::middleware::from_fn(auth::security_headers))
        .layer(axum::middleware::from_fn(gate::anonymous)))
}

/// The state every route of `config`'s hub at `bound` shares.
fn hub_state(config: &HubConfig, bound: SocketAddr) -> Result<Arc<Hub>, HubError> {
    let (origin, public_host, https) = match &config.public_url {
        Some(url) => auth::parse_public_url(url)?,
        None => {
            let scheme = if config.tls.is_some() {
                "https"
            } else {
                "http"
            };
            (format!("{scheme}://{bound}"), None, config.tls.is_some())
        }
    };
    let hub = Arc::new(Hub {
        store: config.store.clone(),
        hosts: ask_user_serve::HostPolicy::new(bound).public(public_host),
        origin,
        secure_cookies: https || config.tls.is_some(),
        rate: auth::RateLimits::default(),
        open: gate::OpenRequests::default(),
        revocations: config.revocations.clone(),
        deadlines: deadline::Deadlines::default(),
        stopping: config.stopping.clone(),
    });
    Ok(hub)
}

/// Serves the hub on `listener` until `stop` fires, over TLS when [`HubConfig::tls`] is set,
/// else plain HTTP (behind a reverse proxy, or on loopback), with the connection loop of
/// `ask-user-serve`. Raises the open-files soft limit first and keeps the connection cap under
/// half of it, so the cap, not the operating system, is what a flood meets.
///
/// # Errors
/// [`HubError::BadPublicUrl`]; reading the listener's address.
pub async fn serve(
    listener: TcpListener,
    config: HubConfig,
    stop: CancellationToken,
) -> Result<(), HubError> {
    let limits = ask_user_serve::Limits {
        header_read_timeout: config.header_read_timeout,
        max_connections: config.max_connections,
    }
    .fit_open_files();
    let bound = listener.local_addr().map_err(|source| HubError::Listen {
        addr: "the listener".to_owned(),
        source,
    })?;
    let app = router(&config, bound)?;
    let sweeper = tokio::spawn(sweep_periodically(config.store.clone(), stop.clone()));
    let (stop_seen, stopping) = (stop.clone(), config.stopping.clone());
    tokio::spawn(async move {
        stop_seen.cancelled().await;
        stopping.cancel();
    });
    let revocations = tokio::spawn(
        config
            .revocations
            .clone()
            .run(config.store.clone(), stop.clone()),
    );
    match &config.tls {
        Some(tls) => {
            let acceptor = tokio_rustls::TlsAcceptor::from(tls.0.clone());
            ask_user_serve::serve_tls(listener, app, stop, limits, acceptor).await;
        }
        None => ask_user_serve::serve(listener, app, stop, limits).await,
    }
    sweeper.abort();
    revocations.abort();
    Ok(())
}

/// Runs the store's retention when the hub starts and every half [`ask_user_store::lease`]
/// until `stop` (docs/contract.md §8 "Liveness"): an agent that stopped polling (killed, or on
/// a replica that was killed) has its ask marked detached on the page within about a lease;
/// detached asks past their grace are withdrawn, old closed asks purged. A failure is logged
/// and retried at the next tick. Every replica sweeps; the store makes concurrent sweeps safe.
async fn sweep_periodically(store: ask_user_store::Store, stop: CancellationToken) {
    let every = ask_user_store::lease() / 2;
    loop {
        match store
            .sweep(
                ask_user_store::Timestamp::now(),
                ask_user_store::Retention::default(),
            )
            .await
        {
            Ok(swept) => tracing::debug!(?swept, "store retention"),
            Err(error) => tracing::warn!("store retention did not run: {error}"),
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
    }
}

/// A TLS server configuration (rustls with ring) loaded from PEM files.
#[derive(Clone)]
pub struct HubTls(Arc<tokio_rustls::rustls::ServerConfig>);

impl std::fmt::Debug for HubTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HubTls")
    }
}

impl HubTls {
    /// Loads the certificate chain `cert` and private key `key` (PEM; `--tls-cert`,
    /// `--tls-key`). HTTP/1.1 only.
    ///
    /// # Errors
    /// [`HubError::Tls`] naming the file and what is wrong with it.
    pub fn load(cert: &std::path::Path, key: &std::path::Path) -> Result<HubTls, HubError> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let tls_err = |file: &std::path::Path, detail: String| HubError::Tls {
            file: file.display().to_string(),
            detail,
        };
        let certs = CertificateDer::pem_file_iter(cert)
            .map_err(|e| tls_err(cert, e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| tls_err(cert, e.to_string()))?;
        if certs.is_empty() {
            return Err(tls_err(cert, "no certificate in it".to_owned()));
        }
        check_key_mode(key).map_err(|detail| tls_err(key, detail))?;
        let private = PrivateKeyDer::from_pem_file(key).map_err(|e| tls_err(key, e.to_string()))?;
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_err(cert, e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, private)
            .map_err(|e| tls_err(key, format!("does not go with the certificate: {e}")))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(HubTls(Arc::new(config)))
    }
}

/// Refuses a private key file others may read or write (`chmod 600` it), as ssh does.
fn check_key_mode(key: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(key)
        .map_err(|e| e.to_string())?
        .permissions()
        .mode();
    if mode & 0o077 == 0 {
        Ok(())
    } else {
        Err(format!(
            "the private key is readable by others (mode {:o}): chmod 600 it",
            mode & 0o777
        ))
    }
}

pub use ask_user_hub_wire::{AskState, AskView};

/// The wire state of a store outcome (an open ask: [`AskState::Open`]).
pub(crate) fn state_of(outcome: Option<&Outcome>) -> AskState {
    match outcome {
        None => AskState::Open,
        Some(Outcome::Answered { .. }) => AskState::Answered,
        Some(Outcome::Dismissed { .. }) => AskState::Dismissed,
        Some(Outcome::TimedOut) => AskState::TimedOut,
        Some(Outcome::Withdrawn) => AskState::Withdrawn,
    }
}

/// What an agent (and the page) sees of ask `rec` ([`AskView`]).
pub(crate) fn view_of(rec: &AskRecord) -> AskView {
    let outcome = rec.closed.as_ref().map(|c| &c.outcome);
    let (answers, by) = match outcome {
        Some(Outcome::Answered { answer, by }) => (Some(answer.clone()), Some(responder(by))),
        Some(Outcome::Dismissed { by }) => (None, Some(responder(by))),
        _ => (None, None),
    };
    AskView {
        id: rec.id.0,
        state: state_of(outcome),
        attached: rec.attached,
        answers,
        by,
    }
}

fn responder(by: &ask_user_store::Responder) -> ask_user_hub_wire::Responder {
    ask_user_hub_wire::Responder {
        answerer: by.answerer.clone(),
        channel: by.channel.clone(),
        user: by.user.clone(),
    }
}

/// Adds an agent token named `name` and returns the token (shown once; only its hash is
/// stored). Refuses a name that already has a live token.
///
/// # Errors
/// [`AdminError::NameTaken`], [`AdminError::BadName`]; the store's errors.
pub async fn add_token(store: &Store, name: &str) -> Result<String, AdminError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err(AdminError::BadName(name.to_owned()));
    }
    if store
        .list_secrets(KIND_TOKEN)
        .await?
        .iter()
        .any(|s| s.name == name)
    {
        return Err(AdminError::NameTaken(name.to_owned()));
    }
    let token = new_secret("auh_");
    store
        .add_secret(&NewSecret {
            kind: KIND_TOKEN.to_owned(),
            name: name.to_owned(),
            hash: hash_secret(&token),
            created_at: Timestamp::now(),
            expires_at: None,
        })
        .await?;
    Ok(token)
}

/// The names of the agents with a live token and when each was made, by name.
///
/// # Errors
/// The store's errors.
pub async fn list_tokens(store: &Store) -> Result<Vec<(String, Timestamp)>, AdminError> {
    Ok(store
        .list_secrets(KIND_TOKEN)
        .await?
        .into_iter()
        .map(|s| (s.name, s.created_at))
        .collect())
}

/// A new single-use sign-in link under `base_url` (the hub's public URL), valid
/// [`LOGIN_LINK_TTL`].
///
/// # Errors
/// The store's errors.
pub async fn login_link(store: &Store, base_url: &str) -> Result<String, AdminError> {
    let secret = new_secret("");
    let now = Timestamp::now();
    store
        .add_secret(&NewSecret {
            kind: KIND_LOGIN.to_owned(),
            name: "login".to_owned(),
            hash: hash_secret(&secret),
            created_at: now,
            expires_at: Some(now.plus(LOGIN_LINK_TTL)),
        })
        .await?;
    Ok(format!("{}/login/{secret}", base_url.trim_end_matches('/')))
}

/// Signs every browser out: revokes every session and every unused login link. Returns how
/// many were revoked.
///
/// # Errors
/// The store's errors.
pub async fn revoke_sessions(store: &Store) -> Result<u64, AdminError> {
    let now = Timestamp::now();
    Ok(store.revoke_secrets(KIND_SESSION, None, now).await?
        + store.revoke_secrets(KIND_LOGIN, None, now).await?)
}

/// Why a token or login-link command failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// `token add` with a name that has a live token.
    #[error(
        "an agent named `{0}` already has a token; revoke it first (ask-user hub token revoke {0})"
    )]
    NameTaken(String),
    /// A name that is empty, too long or has characters other than letters, digits, `-_.`.
    #[error("`{0}` is not a usable agent name: use 1 to 64 letters, digits, '-', '_' or '.'")]
    BadName(String),
    /// `token revoke` of a name without a live token.
    #[error("no agent named `{0}` has a token")]
    NoSuchToken(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ask_user_store::Error),
}
