//! # ask-user-serve
//!
//! The connection loop shared by ask-user's two pages, the local web answerer (`ask-user-web`)
//! and the hub's inbox (`ask-user-hub`): who gets a connection, and for how long
//! (docs/contract.md §9 "Limits").
//!
//! A page must stay reachable for its human even when someone without the secret or a
//! credential opens many connections and sends nothing, half a request, or a header every few
//! seconds. [`serve`] (plain HTTP/1.1) and `serve_tls` (feature `tls`: rustls with ring)
//! guarantee, for the [`Router`] they serve:
//!
//! - **Header deadline.** Each connection must send a complete request head within
//!   [`Limits::header_read_timeout`] of connecting, and again of finishing a response (that is
//!   also the keep-alive idle limit); otherwise it is closed. With TLS, the handshake is held
//!   to the same deadline.
//! - **Connection cap, eviction rule.** At most [`Limits::max_connections`] (at least 1) are
//!   open at once. When a new one arrives at the cap, the *oldest* connection that is not
//!   serving a request right now (silent, half a head, idle keep-alive, an unfinished TLS
//!   handshake) is closed to make room. A connection is serving from the moment its request
//!   head is read until its response body has been taken to the end or dropped, so a live
//!   event stream is never closed for this — unless the app lowered the request's
//!   [`Standing`] through the [`ConnectionStanding`] in its extensions: an idle connection
//!   whose last request was lowered goes first; then the oldest serving a
//!   [`Standing::Yielding`] request (a client that reconnects, such as an agent's long-poll)
//!   is closed, then the oldest of the fresh connections (no request yet) and those serving an
//!   [`Standing::Anonymous`] one (no credential checked yet: perhaps the human signing in,
//!   perhaps a slow body from anyone), and last the oldest *proven* one: a connection on which
//!   a request finished kept (the signed-in human's keep-alive), idle or serving a request
//!   lowered while its credential is checked. Its client may be sending its next request on it
//!   at that instant, and closing it then loses that request.
//!   When every open connection is serving a [`Standing::Kept`] request (the default), the
//!   new one is refused (closed at once).
//! - **Per address.** One peer address holds at most a quarter of the cap in *unproven*
//!   connections (idle, or serving an anonymous request); at the cap, a newcomer from an
//!   address over that share closes its own address's oldest unproven one, so a flood from
//!   one address competes only with itself. Kept and yielding requests do not count.
//! - **Bodies keep their length.** A response body of known size keeps it: it is written
//!   with `Content-Length`, not chunked encoding. A response counts as serving until hyper has
//!   taken its body's last chunk (a body of known size usually at once; a stream when it ends)
//!   or dropped it.
//! - **Open files.** [`raise_open_files_limit`] lifts the process's soft limit of open files to
//!   its hard limit, and [`Limits::fit_open_files`] caps the connections at half of it, so the
//!   cap, not the operating system, is what a flood meets.
//! - **Stopping.** When the [`CancellationToken`] fires, the loop stops accepting, open
//!   connections finish their current response (an event stream is expected to end on the same
//!   signal), and the future returns when all are closed. [`stop_on_signals`] fires it on
//!   SIGINT or SIGTERM, for every server of ask-user (the hub, `mcp --http`).
//!
//! Every page also applies one rule to a request's `Host` ([`HostPolicy`]) and to its
//! response's security headers ([`security_headers`]). The routes, keys, sessions and body
//! limits are the caller's.
//!
//! ## Example
//!
//! ```no_run
//! use std::time::Duration;
//! use ask_user_serve::{Limits, serve};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn run(app: axum::Router) -> std::io::Result<()> {
//! let limits = Limits {
//!     header_read_timeout: Duration::from_secs(10),
//!     max_connections: 256,
//! }
//! .fit_open_files();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let stop = CancellationToken::new();
//! serve(listener, app, stop, limits).await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod connections;
mod held;
mod limits;
mod page;
mod signals;

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

pub use connections::{ConnectionStanding, Standing};
pub use limits::{Limits, raise_open_files_limit};
pub use page::{CONTENT_SECURITY_POLICY, HostPolicy, Referrer, security_headers};
pub use signals::stop_on_signals;

use connections::{Admitted, Busy, Connections};

/// How long to wait before accepting again when accepting failed (out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `app` over plain HTTP/1.1 on `listener` with `limits` (the crate docs state the
/// rules) until `stop` fires, then lets open connections finish their current response and
/// returns when all are closed. Upgrades (`Connection: upgrade`) are supported.
pub async fn serve(listener: TcpListener, app: Router, stop: CancellationToken, limits: Limits) {
    accept_loop(listener, app, stop, limits, Handshake::Plain).await;
}

/// Like [`serve`], over TLS: each accepted connection first completes a handshake with
/// `tls`, within [`Limits::header_read_timeout`]; until it does, it counts as idle (the cap
/// may close it). A failed or late handshake closes the connection.
#[cfg(feature = "tls")]
pub async fn serve_tls(
    listener: TcpListener,
    app: Router,
    stop: CancellationToken,
    limits: Limits,
    tls: tokio_rustls::TlsAcceptor,
) {
    accept_loop(listener, app, stop, limits, Handshake::Tls(tls)).await;
}

/// What happens on a connection before HTTP.
#[derive(Clone)]
enum Handshake {
    Plain,
    #[cfg(feature = "tls")]
    Tls(tokio_rustls::TlsAcceptor),
}

async fn accept_loop(
    listener: TcpListener,
    app: Router,
    stop: CancellationToken,
    limits: Limits,
    handshake: Handshake,
) {
    let table = Connections::new(limits.max_connections);
    let (closed_tx, closed_rx) = watch::channel(());
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let (stream, peer) = match accepted {
            Ok((stream, peer)) => (stream, peer.ip()),
            Err(error) => {
                tracing::debug!(%error, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(admitted) = table.admit_from(Some(peer)) else {
            tracing::debug!("every connection is busy; refusing a new one");
            continue;
        };
        let app = app.clone();
        let stop = stop.clone();
        let closed_rx = closed_rx.clone();
        let handshake = handshake.clone();
        tokio::spawn(async move {
            start(
                stream,
                handshake,
                app,
                stop,
                admitted,
                limits.header_read_timeout,
            )
            .await;
            drop(closed_rx);
        });
    }
    drop(listener);
    drop(closed_rx);
    closed_tx.closed().await;
}

/// Runs the handshake, if any, then serves HTTP on the connection.
async fn start(
    stream: TcpStream,
    handshake: Handshake,
    app: Router,
    stop: CancellationToken,
    admitted: Admitted,
    header_read_timeout: Duration,
) {
    match handshake {
        Handshake::Plain => connection(stream, app, stop, admitted, header_read_timeout).await,
        // Boxed: a TLS connection's state (the handshake, the rustls session) is several KiB,
        // and unboxed it would make every plain connection's task as large (5 KiB instead of
        // 1.4 KiB per connection, each waiting agent on a hub without TLS in process).
        #[cfg(feature = "tls")]
        Handshake::Tls(acceptor) => {
            Box::pin(tls(
                stream,
                acceptor,
                app,
                stop,
                admitted,
                header_read_timeout,
            ))
            .await;
        }
    }
}

/// The TLS handshake, within the header deadline, then HTTP on the connection.
#[cfg(feature = "tls")]
async fn tls(
    stream: TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    app: Router,
    stop: CancellationToken,
    admitted: Admitted,
    header_read_timeout: Duration,
) {
    // The handshake is held to the same deadline as a request head, and an
    // unfinished handshake is an idle connection the cap may close.
    let evicted = admitted.evicted();
    let handshake = tokio::select! {
        r = tokio::time::timeout(header_read_timeout, acceptor.accept(stream)) => r,
        () = evicted.cancelled() => return,
        () = stop.cancelled() => return,
    };
    match handshake {
        Ok(Ok(stream)) => {
            connection(stream, app, stop, admitted, header_read_timeout).await;
        }
        Ok(Err(error)) => tracing::debug!(%error, "TLS handshake failed"),
        Err(_) => tracing::debug!("TLS handshake timed out"),
    }
}

/// Serves HTTP/1.1 on one admitted connection until it ends, is evicted, or `stop` fires
/// (then the current response is finished first).
async fn connection<S>(
    stream: S,
    app: Router,
    stop: CancellationToken,
    admitted: Admitted,
    header_read_timeout: Duration,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let busy = admitted.serving();
    let standing = admitted.standing();
    let served = admitted.served();
    let service = tower::service_fn(move |request: Request<hyper::body::Incoming>| {
        let app = app.clone();
        let busy = Busy::new(&busy);
        served.store(true, std::sync::atomic::Ordering::SeqCst);
        standing.set(Standing::Kept);
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(standing.clone());
        async move {
            let response = app.oneshot(request).await?;
            Ok::<_, Infallible>(held::hold_until_sent(response, busy))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let conn = builder
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service))
        .with_upgrades();
    tokio::pin!(conn);
    let evicted = admitted.evicted();
    tokio::select! {
        result = conn.as_mut() => {
            if let Err(error) = result {
                tracing::trace!(%error, "connection ended");
            }
            return;
        }
        () = evicted.cancelled() => return,
        () = stop.cancelled() => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}
