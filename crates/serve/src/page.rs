//! What every page of ask-user answers to and sends back, one rule for the local web answerer
//! (and `ask-user mcp --http`) and the hub: which `Host` headers are for this server
//! ([`HostPolicy`]) and the security headers of every response ([`security_headers`]).

use std::net::{IpAddr, SocketAddr};

use axum::http::header::{self, HeaderMap, HeaderValue};

/// The Content-Security-Policy of every response that sets none of its own: nothing but the
/// page's own script, style and event stream; no inline script, no framing, no form posts
/// elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Which `Host` headers a server answers to: one policy for every page, so all accept and
/// refuse the same hosts.
///
/// A `Host` is accepted when it is the server's public host exactly (as in its public URL,
/// [`HostPolicy::public`]), or when its port is the bound port (80 when absent) and its name
/// is `localhost`, a configured name (case-insensitive, [`HostPolicy::named`]), or an IP
/// literal this socket can be reached at: a loopback address, the bound address, or — when
/// bound to all interfaces (`0.0.0.0`, `::`) — any IP literal (the machine's LAN address, for
/// a phone). Any other name is refused, which defeats DNS rebinding (a rebinding page's `Host`
/// is its own name).
///
/// ```
/// use ask_user_serve::HostPolicy;
///
/// let policy = HostPolicy::new("127.0.0.1:8765".parse().unwrap());
/// assert!(policy.allows("localhost:8765"));
/// assert!(!policy.allows("rebind.example:8765"));
/// ```
#[derive(Debug, Clone)]
pub struct HostPolicy {
    bound: SocketAddr,
    names: Vec<String>,
    public: Option<String>,
}

impl HostPolicy {
    /// The policy for a server bound at `bound` (with its real port).
    pub fn new(bound: SocketAddr) -> Self {
        Self {
            bound,
            names: Vec::new(),
            public: None,
        }
    }

    /// The same policy also answering to `names` on the bound port (host names without port,
    /// e.g. `mybox.local`).
    pub fn named(mut self, names: &[String]) -> Self {
        self.names = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        self
    }

    /// The same policy also answering to `host` exactly (`name` or `name:port`, as in the
    /// public URL a proxy in front of the server is reached at), whatever the bound port.
    pub fn public(mut self, host: Option<String>) -> Self {
        self.public = host.map(|h| h.to_ascii_lowercase());
        self
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
        let host = host.to_ascii_lowercase();
        if self.public.as_deref() == Some(host.as_str()) {
            return true;
        }
        let Some((name, port)) = split_host(&host) else {
            return false;
        };
        if port != self.bound.port() {
            return false;
        }
        if name == "localhost" || self.names.iter().any(|n| n == name) {
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

/// What a page's responses say about where their address may go, as `Referrer-Policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Referrer {
    /// `no-referrer`: a page whose address is its secret and whose scripts post with
    /// `fetch` (the local web answerer).
    Never,
    /// `same-origin`: a page that posts HTML forms (the hub's sign-in) — under `no-referrer`
    /// a browser sends `Origin: null` with a form post, which the Origin check refuses — and
    /// whose addresses may carry a secret (the sign-in link), never sent to another site.
    SameOrigin,
}

/// Adds the security headers to a response's `headers`: the [`CONTENT_SECURITY_POLICY`], the
/// `Referrer-Policy` of `referrer` and `Cache-Control: no-store` unless the route set its own
/// (a channel's confirm page, a cached asset), and always `nosniff` and `X-Frame-Options:
/// DENY`.
pub fn security_headers(headers: &mut HeaderMap, referrer: Referrer) {
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::REFERRER_POLICY)
        .or_insert(HeaderValue::from_static(match referrer {
            Referrer::Never => "no-referrer",
            Referrer::SameOrigin => "same-origin",
        }));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(bound: &str) -> HostPolicy {
        HostPolicy::new(bound.parse().unwrap()).named(&["MyBox.local".to_owned()])
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
    fn the_public_host_is_accepted_exactly_whatever_the_bound_port() {
        let behind_a_proxy = HostPolicy::new("127.0.0.1:8780".parse().unwrap())
            .public(Some("Inbox.Example.com".to_owned()));
        assert!(behind_a_proxy.allows("inbox.example.com"));
        assert!(behind_a_proxy.allows("INBOX.example.com"));
        assert!(behind_a_proxy.allows("localhost:8780"));
        assert!(!behind_a_proxy.allows("inbox.example.com:8780"));
        assert!(!behind_a_proxy.allows("inbox.example.com:443"));
        assert!(!behind_a_proxy.allows("evil.inbox.example.com"));
    }

    #[test]
    fn a_routes_own_policy_is_kept_and_the_fixed_headers_are_always_set() {
        let mut own = HeaderMap::new();
        own.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'self'"),
        );
        own.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        own.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("ALLOW"));
        security_headers(&mut own, Referrer::SameOrigin);
        assert_eq!(own[header::CONTENT_SECURITY_POLICY], "default-src 'self'");
        assert_eq!(own[header::CACHE_CONTROL], "no-cache");
        assert_eq!(own[header::X_FRAME_OPTIONS], "DENY");
        assert_eq!(own[header::REFERRER_POLICY], "same-origin");
        assert_eq!(own[header::X_CONTENT_TYPE_OPTIONS], "nosniff");

        let mut none = HeaderMap::new();
        security_headers(&mut none, Referrer::Never);
        assert_eq!(
            none[header::CONTENT_SECURITY_POLICY],
            CONTENT_SECURITY_POLICY
        );
        assert_eq!(none[header::CACHE_CONTROL], "no-store");
        assert_eq!(none[header::REFERRER_POLICY], "no-referrer");
    }
}
