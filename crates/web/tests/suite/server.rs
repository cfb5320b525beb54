//! The real server on a loopback socket: the URL it prints, its QR code, raw HTTP, shutdown.

use ask_user_web::{WebAnswerer, WebConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn raw(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_url_holds_a_128_bit_key_and_serves_the_page() {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let url = web.url().to_owned();
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, path) = rest.split_once('/').unwrap();
    let key = path.strip_suffix('/').unwrap();
    assert_eq!(key.len(), 32);
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
    let addr = format!("127.0.0.1:{port}");
    let page = raw(
        &addr,
        &format!("GET /{key}/ HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
    assert!(page.contains("<title>ask-user</title>"));
    let refused = raw(
        &addr,
        &format!(
            "GET /{key}/ HTTP/1.1\r\nHost: rebind.example:{port}\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(
        refused.starts_with("HTTP/1.1 403 Forbidden\r\n"),
        "{refused}"
    );

    let other = WebAnswerer::start(WebConfig::default()).await.unwrap();
    assert_ne!(
        other.url(),
        web.url(),
        "each server has its own port and key"
    );
    assert!(!web.qr_code().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_clone_stops_the_server() {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let addr = web
        .url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let state = web.state().clone();
    let clone = web.clone();
    drop(web);
    assert!(ask_user_core::UserInteraction::is_available(&clone));
    drop(clone);
    assert!(!ask_user_core::UserInteraction::is_available(&state));
    // The listener closes once the serving task sees the shutdown.
    while TcpStream::connect(&addr).await.is_ok() {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_a_used_port_fails() {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let addr = web
        .url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let error = WebAnswerer::start(WebConfig::at(addr)).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse);
}

#[test]
fn bind_needs_no_runtime_and_the_first_ask_starts_serving() {
    let web = WebAnswerer::bind(WebConfig::default()).unwrap();
    assert_eq!(
        web.serve().unwrap_err().to_string(),
        "the web answerer must be served from within a tokio runtime"
    );
    let addr = web
        .url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let path = format!("/{}", web.url().splitn(4, '/').nth(3).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        // A browser that connects before serving starts waits in the backlog.
        let early = tokio::spawn({
            let (addr, path) = (addr.clone(), path.clone());
            async move {
                raw(
                    &addr,
                    &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
                )
                .await
            }
        });
        let request = ask_user_core::decode(super::support::DB, &ask_user_core::Limits::default())
            .unwrap()
            .request;
        let cancel = ask_user_core::CancellationToken::new();
        let asker = web.clone();
        let token = cancel.clone();
        let call = tokio::spawn(async move {
            ask_user_core::UserInteraction::ask(&asker, &request, token).await
        });
        assert!(early.await.unwrap().starts_with("HTTP/1.1 200 OK\r\n"));
        cancel.cancel();
        assert_eq!(call.await.unwrap(), Err(ask_user_core::AskError::Cancelled));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shut_down_sends_the_last_withdrawal_then_ends_the_streams() {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let addr = web
        .url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let path = format!("/{}", web.url().splitn(4, '/').nth(3).unwrap());
    let request = ask_user_core::decode(super::support::DB, &ask_user_core::Limits::default())
        .unwrap()
        .request;
    let cancel = ask_user_core::CancellationToken::new();
    let asker = web.clone();
    let token = cancel.clone();
    let call =
        tokio::spawn(
            async move { ask_user_core::UserInteraction::ask(&asker, &request, token).await },
        );
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(format!("GET {path}events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    while web.state().open_pages() == 0 || web.state().pending() == 0 {
        tokio::task::yield_now().await;
    }
    cancel.cancel();
    assert_eq!(call.await.unwrap(), Err(ask_user_core::AskError::Cancelled));
    web.shut_down().await;
    let mut events = String::new();
    stream.read_to_string(&mut events).await.unwrap();
    assert!(
        events.contains("event: withdrawn\ndata: {\"batch\":1,\"reason\":\"cancelled\"}\n"),
        "{events}"
    );
    assert!(
        events.ends_with("0\r\n\r\n"),
        "the stream ended cleanly: {events:?}"
    );
    assert!(
        TcpStream::connect(&addr).await.is_err(),
        "the socket is closed"
    );
}
