//! The connection loop: who gets a connection, and for how long (docs/contract.md §9 "Limits").
//! The same loop as the local page's (crates/web `serve.rs`, issue 9), kept in this crate so
//! the hub does not depend on the web answerer.
//!
//! The inbox must stay reachable for its human even when anyone on the network (without a
//! credential) opens many connections and sends nothing, half a request, or a header every few
//! seconds. So:
//!
//! - each connection must send a complete request head within
//!   [`crate::HubConfig::header_read_timeout`] of connecting, and again of finishing a
//!   response (that is also the keep-alive idle limit); otherwise it is closed;
//! - at most [`crate::HubConfig::max_connections`] are open at once; when a new one arrives
//!   at the cap, the oldest connection that is not serving a request right now (silent, half a
//!   head, idle keep-alive) is closed to make room; a live event stream is a request in
//!   progress and is never closed for this; when every connection is busy, the new one is
//!   refused (closed at once);
//! - [`raise_open_files_limit`] lifts the process's soft limit of open files to its hard
//!   limit, so the cap, not the operating system, is what a flood meets.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures::StreamExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long to wait before accepting again when accepting failed (out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Lifts the soft limit of open files (`RLIMIT_NOFILE`) to the hard limit, once per process,
/// and returns the soft limit now in force (`None`: unlimited). Called by [`crate::serve`].
pub(crate) fn raise_open_files_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        let limit = getrlimit(Resource::Nofile);
        // `None` is unlimited.
        let below = match (limit.current, limit.maximum) {
            (Some(current), Some(maximum)) => current < maximum,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if below {
            let raised = rustix::process::Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            };
            if let Err(error) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!(%error, "cannot raise the open files limit");
            }
        }
    });
    getrlimit(Resource::Nofile).current
}

/// The open connections, oldest first, and how many requests each is serving.
#[derive(Debug)]
struct Connections {
    cap: usize,
    next: Mutex<(u64, BTreeMap<u64, Slot>)>,
}

#[derive(Debug, Clone)]
struct Slot {
    busy: Arc<AtomicUsize>,
    evict: CancellationToken,
}

/// One admitted connection; leaves the table when dropped.
struct Admitted {
    table: Arc<Connections>,
    id: u64,
    slot: Slot,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.table.lock().1.remove(&self.id);
    }
}

/// Counts a request in progress on its connection until the response body is dropped.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Connections {
    fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap: cap.max(1),
            next: Mutex::new((0, BTreeMap::new())),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, BTreeMap<u64, Slot>)> {
        self.next.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a new connection, closing the oldest idle one when at the cap; `None` when every
    /// open connection is serving a request.
    fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut guard = self.lock();
        let (next, open) = &mut *guard;
        if open.len() >= self.cap {
            let idle = open
                .iter()
                .find(|(_, slot)| slot.busy.load(Ordering::SeqCst) == 0)
                .map(|(id, _)| *id)?;
            if let Some(slot) = open.remove(&idle) {
                slot.evict.cancel();
            }
        }
        let id = *next;
        *next += 1;
        let slot = Slot {
            busy: Arc::new(AtomicUsize::new(0)),
            evict: CancellationToken::new(),
        };
        open.insert(id, slot.clone());
        Some(Admitted {
            table: self.clone(),
            id,
            slot,
        })
    }
}

/// Serves `app` on `listener` until `stop` fires, then lets open connections finish (their
/// event streams end on the same signal) and returns when all are closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    stop: CancellationToken,
    header_read_timeout: Duration,
    max_connections: usize,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let table = Connections::new(max_connections);
    let (closed_tx, closed_rx) = watch::channel(());
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::debug!(%error, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(admitted) = table.admit() else {
            tracing::debug!("every connection is busy; refusing a new one");
            continue;
        };
        let app = app.clone();
        let stop = stop.clone();
        let closed_rx = closed_rx.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => connection(stream, app, stop, admitted, header_read_timeout).await,
                Some(acceptor) => {
                    // The handshake is held to the same deadline as a request head, and an
                    // unfinished handshake is an idle connection the cap may close.
                    let evicted = admitted.slot.evict.clone();
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
            }
            drop(closed_rx);
        });
    }
    drop(listener);
    drop(closed_rx);
    closed_tx.closed().await;
}

async fn connection<S>(
    stream: S,
    app: Router,
    stop: CancellationToken,
    admitted: Admitted,
    header_read_timeout: Duration,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let busy = admitted.slot.busy.clone();
    let service = tower::service_fn(move |request: Request<hyper::body::Incoming>| {
        let app = app.clone();
        let busy = Busy::new(&busy);
        async move {
            let response = app.oneshot(request.map(Body::new)).await?;
            Ok::<_, Infallible>(hold_until_sent(response, busy))
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
    let evicted = admitted.slot.evict.clone();
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

/// The response with its body holding `busy`, so the connection counts as serving until the
/// body is sent or dropped (an event stream: as long as the page listens).
fn hold_until_sent(response: Response, busy: Busy) -> Response {
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _held = &busy;
            chunk
        });
        Body::from_stream(stream)
    })
}
