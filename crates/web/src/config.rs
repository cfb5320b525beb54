//! How the web answerer listens and whom it lets in.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

/// Where the page is served and which extra host names it answers to.
///
/// The default listens on `127.0.0.1:0` (loopback, a free port): only this machine can open
/// the page. To answer from a phone, listen on a LAN address (`192.168.1.20:8765`) or on all
/// interfaces (`0.0.0.0:8765`); the capability URL then names that address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// The socket address to bind. Port `0` picks a free port.
    pub addr: SocketAddr,
    /// Extra host names (without port) the `Host` header may carry, e.g. `mybox.local`.
    /// IP literals matching the listening address and `localhost` are always accepted;
    /// other names are refused so a DNS-rebinding page cannot reach the server.
    pub allowed_hosts: Vec<String>,
    /// The host written into [`crate::WebAnswerer::url`] instead of the bound IP (for example a
    /// name from `allowed_hosts`). When `None` the URL uses the bound IP, or, when listening on
    /// all interfaces, this machine's primary LAN address.
    pub public_host: Option<String>,
    /// How long a connection may take to send a complete request head, counted from when it
    /// connects and again from the end of each response (so also the keep-alive idle limit).
    /// A connection that sends nothing, or half a request, is closed then. Default 10 s.
    pub header_read_timeout: Duration,
    /// How many connections may be open at once. A new connection at the cap closes the
    /// oldest one that is not serving a request (see the crate docs). Default 256 (capped to
    /// half the process's open-files limit).
    pub max_connections: usize,
    /// The host's time budget per ask, if it has one: each card then counts down to its
    /// deadline (the page shows it; the host still enforces the budget). Default `None`.
    pub timeout: Option<Duration>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            allowed_hosts: Vec::new(),
            public_host: None,
            header_read_timeout: Duration::from_secs(10),
            max_connections: 256,
            timeout: None,
        }
    }
}

impl WebConfig {
    /// The default configuration listening on `addr`.
    pub fn at(addr: SocketAddr) -> Self {
        Self {
            addr,
            ..Self::default()
        }
    }
}
