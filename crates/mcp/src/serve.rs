//! Transports: stdio and streamable HTTP (on axum).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ask_user_serve::HostPolicy;
use axum::response::IntoResponse;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::server::AskUserServer;
use crate::session::{Linked, LinkedSessions};
use crate::stdio::Lines;

/// How long calls still running when the client went away get to withdraw their question
/// (after rmcp cancelled them) before the process may exit.
const FINISH_GRACE: Duration = Duration::from_secs(5);

/// Serves one client over stdin/stdout until it closes the stream, then lets the calls still
/// running end (cancelled at once: the question withdrawn from every UI, the journal
/// written). A line that is not JSON gets a `-32700` reply; the server's own requests are
/// numbered from 1. Logs belong on stderr.
pub async fn serve_stdio(server: AskUserServer) -> std::io::Result<()> {
    let running = server
        .clone()
        .serve(Linked::new(Lines::stdio()))
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    if !server.finish_calls(FINISH_GRACE).await {
        tracing::warn!("a call did not end in time after the client went away");
    }
    Ok(())
}

/// How long a 2025-era HTTP session may go without a message before it is closed (and its
/// pending questions cancelled). rmcp's default, 5 minutes, counts a tool call waiting for the
/// human as idle, so a human slower than that would lose the question; a disconnected client
/// may also resume its stream, so a dropped connection alone does not cancel (MCP streamable
/// HTTP). A client that vanishes without ending its session is cleaned up after this long.
pub const SESSION_IDLE: Duration = Duration::from_secs(24 * 60 * 60);

/// The text of the 403 for a request whose `Host` the [`HostPolicy`] refuses.
pub const FOREIGN_HOST_TEXT: &str = "Forbidden: Host header is not allowed";

/// The streamable HTTP endpoint as an axum router: `POST/GET/DELETE /mcp`, one session per
/// client (legacy sessions for 2025-11-25 and earlier, stateless requests for 2026-07-28),
/// `Host` checked by `hosts`, the same policy as the web page's (a foreign `Host` gets 403
/// [`FOREIGN_HOST_TEXT`]). Cancelling `shutdown` ends every session (and so every pending
/// question). A `DELETE` ends the session's calls before it is answered (withdrawing their
/// questions, or with a store detaching their asks); the server's own requests are numbered
/// from 1.
pub fn http_router(
    server: AskUserServer,
    hosts: HostPolicy,
    shutdown: CancellationToken,
) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    config.cancellation_token = shutdown;
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    let sessions = Arc::new(LinkedSessions::new(sessions));
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    let hosts = Arc::new(hosts);
    axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let allowed = hosts.allows_headers(request.headers());
                async move {
                    if allowed {
                        next.run(request).await
                    } else {
                        (axum::http::StatusCode::FORBIDDEN, FOREIGN_HOST_TEXT).into_response()
                    }
                }
            },
        ))
}

/// Serves streamable HTTP on `listener` (endpoint `/mcp`) until `shutdown` is cancelled.
pub async fn serve_http(
    server: AskUserServer,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let addr: SocketAddr = listener.local_addr()?;
    let router = http_router(server, HostPolicy::new(addr), shutdown.clone());
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
