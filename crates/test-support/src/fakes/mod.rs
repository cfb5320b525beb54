//! FAKES of the chat services the channels talk to — ntfy, Slack, Telegram — in process on
//! loopback: the real services cannot be reached from here. Each follows the documented subset
//! of its service's API that ask-user uses, named at the top of its module, and refuses what
//! the service would refuse. The channel crate's tests and the hub's end-to-end tests share
//! them (feature `fakes`).

pub mod ntfy;
pub mod slack;
pub mod telegram;

use std::net::SocketAddr;

/// Serves `app` on a fresh loopback port, in the background of the current runtime.
pub async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}
