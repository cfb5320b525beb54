//! Who may use the page: the `Host` header, the capability key in the path, and the `Origin`
//! of every state-changing request. Plus the security headers every response carries.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, Response};
use axum::middleware::Next;
use axum::response::IntoResponse;

use crate::refusal::Refusal;
use crate::state::WebState;

/// The Content-Security-Policy of every response: nothing but the page's own script, style
/// and event stream; no inline script, no framing, no form posts elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Which `Host` headers a local server answers to: one policy for the web page and for
/// `ask-user mcp --http`, so both accept and refuse the same hosts.
///
/// A `Host` is accepted when its port is the bound port (80 when absent) and its name is
/// `localhost`, a configured name (case-insensitive), or an IP literal this socket can be
/// reached at: a loopback address, the bound address, or — when bound to all interfaces
/// (`0.0.0.0`, `::`) — any IP literal (the machine's LAN address, for a phone). Any other
/// name is refused, which defeats DNS rebinding (a rebinding page's `Host` is its own name).
#[derive(Debug, Clone)]
pub struct HostPolicy {
    bound: SocketAddr,
    names: Vec<String>,
}

impl HostPolicy {
    /// The policy for a server bound at `bound` (with its real port) that also answers to
    /// `names` (host names without port, e.g. `mybox.local`).
    pub fn new(bound: SocketAddr, names: &[String]) -> Self {
        Self {
            bound,
            names: names.iter().map(|n| n.to_ascii_lowercase()).collect(),
        }
    }

    /// Whether a request whose `Host` header is `headers`' is for us (a missing or non-UTF-8
    /// header is refused).
    pub fn allows_headers(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|host| self.allows(host))
    }

    /// Whether a request with this `Host` header value is for us (see the type's doc).
    pub fn allows(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        if port != self.bound.port() {
            return false;
        }
        let name = name.to_ascii_lowercase();
        if name == "localhost" || self.names.contains(&name) {
            return true;
        }
        match name.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || self.bound.ip().is_unspecified() || ip == self.bound.ip(),
            Err(_) => false,
        }
    }
}

/// Splits a `Host` header value into name and port (80 when absent). IPv6 literals come in
/// brackets; the name returned has them removed.
fn split_host(host: &str) -> Option<(&str, u16)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name, None),
            _ => (name, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return None;
    }
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => 80,
    };
    Some((name, port))
}

/// The first path segment, where the capability key sits.
fn first_segment(path: &str) -> &str {
    let path = path.strip_prefix('/').unwrap_or(path);
    path.split('/').next().unwrap_or("")
}

/// Whether a state-changing request comes from our own page: its `Origin` must be
/// `http://` + the (already checked) `Host`.
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return false;
    };
    origin
        .strip_prefix("http://")
        .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

/// Middleware in front of every route: checks Host, then the key, then (for anything but
/// GET/HEAD) the Origin. The key is compared in constant time.
pub(crate) async fn guard(
    State(state): State<WebState>,
    request: Request,
    next: Next,
) -> Response<axum::body::Body> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !state.hosts().allows(host) {
        return Refusal::Host.into_response();
    }
    if !state.secret().matches(first_segment(request.uri().path())) {
        return Refusal::Key.into_response();
    }
    let reads_only = request.method() == Method::GET || request.method() == Method::HEAD;
    if !reads_only && !same_origin(request.headers(), host) {
        return Refusal::Origin.into_response();
    }
    next.run(request).await
}

/// Adds the security headers to every response (refusals included).
pub(crate) async fn security_headers(
    mut response: Response<axum::body::Body>,
) -> Response<axum::body::Body> {
    let headers = response.headers_mut();
    let fixed = [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    for (name, value) in fixed {
        headers.insert(name, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(bound: &str) -> HostPolicy {
        HostPolicy::new(bound.parse().unwrap(), &["MyBox.local".to_owned()])
    }

    #[test]
    fn loopback_binding_accepts_loopback_names_on_its_port_only() {
        let r = rules("127.0.0.1:8765");
        for ok in [
            "127.0.0.1:8765",
            "localhost:8765",
            "LOCALHOST:8765",
            "[::1]:8765",
            "mybox.local:8765",
        ] {
            assert!(r.allows(ok), "{ok}");
        }
        for bad in [
            "127.0.0.1:8766",
            "127.0.0.1",
            "evil.example:8765",
            "192.168.1.20:8765",
            "",
            ":8765",
            "127.0.0.1:x",
            "[::1",
            "[::1]8765",
            "localhost.:8765",
        ] {
            assert!(!r.allows(bad), "{bad}");
        }
    }

    #[test]
    fn a_lan_binding_accepts_its_own_ip_and_all_interfaces_accept_any_ip_literal() {
        let lan = rules("192.168.1.20:80");
        assert!(lan.allows("192.168.1.20"));
        assert!(lan.allows("192.168.1.20:80"));
        assert!(!lan.allows("192.168.1.21"));
        assert!(!lan.allows("rebind.example"));
        let any = rules("0.0.0.0:9000");
        assert!(any.allows("10.0.0.7:9000"));
        assert!(any.allows("[fe80::1]:9000"));
        assert!(!any.allows("rebind.example:9000"));
    }

    #[test]
    fn the_key_is_the_first_segment() {
        assert_eq!(first_segment("/abc/events"), "abc");
        assert_eq!(first_segment("/abc"), "abc");
        assert_eq!(first_segment("/"), "");
    }
}
