//! Who may do what: agent bearer tokens, the human's session cookie, `Host` and `Origin`
//! checks, and the security headers of every response (docs/contract.md §9).

use std::net::IpAddr;
use std::sync::Arc;

use ask_user_store::Timestamp;
use axum::extract::{FromRequestParts, Request};
use axum::http::Method;
use axum::http::header::{self, HeaderMap};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::refusal::HubRefusal;
use crate::{Hub, HubError, KIND_SESSION, KIND_TOKEN};

/// The session cookie's name.
pub(crate) const COOKIE: &str = "ask_user_hub";

/// A new secret: `prefix` + 256 random bits in lower-case hex.
///
/// # Panics
/// When the operating system's random source fails (nothing safe can be made then).
#[must_use]
pub fn new_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    let mut out = String::with_capacity(prefix.len() + 64);
    out.push_str(prefix);
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The stored form of a secret: its SHA-256, lower-case hex.
#[must_use]
pub fn hash_secret(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Parses `--public-url`: its origin, its `Host` (with port when given) and whether it is https.
pub(crate) fn parse_public_url(url: &str) -> Result<(String, Option<String>, bool), HubError> {
    let bad = || HubError::BadPublicUrl(url.to_owned());
    let trimmed = url.trim_end_matches('/');
    let (https, rest) = if let Some(r) = trimmed.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = trimmed.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(bad());
    };
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return Err(bad());
    }
    let host = rest.to_ascii_lowercase();
    Ok((trimmed.to_ascii_lowercase(), Some(host), https))
}

/// Whether `host` (`name[:port]`, as in a URL) names this machine: `localhost` or a loopback
/// address.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.parse::<u16>().is_ok() => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Adds the security headers to every response: the pages' one rule
/// ([`ask_user_serve::security_headers`]), with `same-origin` referrers (the sign-in posts an
/// HTML form, and its link carries a secret in its path).
pub(crate) async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    ask_user_serve::security_headers(response.headers_mut(), ask_user_serve::Referrer::SameOrigin);
    response
}

/// Per-token rate limits (docs/contract.md §9 "Limits"), per replica: a token bucket per
/// agent name, [`RateLimits::BURST`] requests at once, refilled at [`RateLimits::PER_SECOND`].
/// A waiting agent long-polls (one request per 25 s), so only a misbehaving one meets it.
#[derive(Debug, Default)]
pub(crate) struct RateLimits {
    buckets: std::sync::Mutex<std::collections::HashMap<String, (f64, std::time::Instant)>>,
}

impl RateLimits {
    pub(crate) const BURST: f64 = 60.0;
    pub(crate) const PER_SECOND: f64 = 20.0;

    /// Takes one request from `agent`'s bucket; false when it is empty.
    pub(crate) fn allow(&self, agent: &str) -> bool {
        let now = std::time::Instant::now();
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (tokens, at) = buckets
            .entry(agent.to_owned())
            .or_insert((Self::BURST, now));
        *tokens =
            (*tokens + now.duration_since(*at).as_secs_f64() * Self::PER_SECOND).min(Self::BURST);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// An agent authenticated by its bearer token: its name (shown to the human), the token's
/// id (the stored hash of the token: its asks' namespace; names are never identity) and when
/// the token was made (with the name, how the revocation check finds it in a list of tokens).
#[derive(Debug, Clone)]
pub(crate) struct Agent(pub(crate) String, pub(crate) String, pub(crate) Timestamp);

impl FromRequestParts<Arc<Hub>> for Agent {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, hub: &Arc<Hub>) -> Result<Agent, Response> {
        // The agent API's gate (crate::gate::agents) authenticated it already.
        if let Some(agent) = parts.extensions.get::<Agent>() {
            return Ok(agent.clone());
        }
        let Some(token) = crate::gate::bearer(&parts.headers) else {
            return Err(HubRefusal::Unauthorized.into_response());
        };
        let agent = agent_of(hub, &hash_secret(token)).await?;
        crate::gate::raise(parts, ask_user_serve::Standing::Yielding);
        Ok(agent)
    }
}

/// The agent whose token hashes to `hash` (its namespace is that hash), taking one request from
/// its rate: 401 unknown or revoked, 429 over its rate, 503 the store failed.
pub(crate) async fn agent_of(hub: &Hub, hash: &str) -> Result<Agent, Response> {
    match hub
        .store
        .check_secret(KIND_TOKEN, hash, Timestamp::now())
        .await
    {
        Ok(Some(s)) if hub.rate.allow(&s.name) => Ok(Agent(s.name, hash.to_owned(), s.created_at)),
        Ok(Some(_)) => Err(HubRefusal::RateLimited.into_response()),
        Ok(None) => Err(HubRefusal::Unauthorized.into_response()),
        Err(e) => {
            tracing::warn!("agent API: cannot check a token: {e}");
            Err(HubRefusal::NotTaken.into_response())
        }
    }
}

/// The session secret from a request's cookies.
pub(crate) fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
}

/// The signed-in human: a request on the human's routes that passed the `Host` check, the
/// `Origin` check (when it changes state) and carries a live session cookie.
#[derive(Debug, Clone)]
pub(crate) struct Human {
    /// The session's name (for sign-out).
    pub(crate) session: String,
}

/// The `Host` and (for anything but GET/HEAD) `Origin` checks of the human's routes.
pub(crate) fn check_page_request(hub: &Hub, parts: &Parts) -> Result<(), HubRefusal> {
    let host_ok = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| hub.hosts.allows(h));
    if !host_ok {
        return Err(HubRefusal::WrongHost);
    }
    if parts.method != Method::GET && parts.method != Method::HEAD {
        let origin = parts
            .headers
            .get(header::ORIGIN)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase);
        let host = parts
            .headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        // Under https (TLS here, or an https public URL) an http:// origin is another site.
        let same = origin.as_deref().is_some_and(|o| {
            o == hub.origin
                || o == format!("https://{host}")
                || (!hub.secure_cookies && o == format!("http://{host}"))
        });
        if !same {
            return Err(HubRefusal::ForeignOrigin);
        }
    }
    Ok(())
}

impl FromRequestParts<Arc<Hub>> for Human {
    type Rejection = HubRefusal;

    async fn from_request_parts(parts: &mut Parts, hub: &Arc<Hub>) -> Result<Human, HubRefusal> {
        check_page_request(hub, parts)?;
        // The human's gate (crate::gate::sessions) proved the session already.
        if let Some(human) = parts.extensions.get::<Human>() {
            return Ok(human.clone());
        }
        let Some(secret) = session_cookie(&parts.headers) else {
            return Err(HubRefusal::SignedOut);
        };
        match hub
            .store
            .check_secret(KIND_SESSION, &hash_secret(secret), Timestamp::now())
            .await
        {
            Ok(Some(s)) => {
                // A signed-in human's connection is never closed to make room.
                crate::gate::raise(parts, ask_user_serve::Standing::Kept);
                Ok(Human { session: s.name })
            }
            Ok(None) => Err(HubRefusal::SignedOut),
            Err(e) => Err(crate::refusal::store_down(&e)),
        }
    }
}
