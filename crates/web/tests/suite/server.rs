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

/// The server's address (`host:port`) in `web`'s URL.
fn addr_of(web: &WebAnswerer) -> String {
    web.url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

/// The page's path (`/KEY/`) in `web`'s URL.
fn path_of(web: &WebAnswerer) -> String {
    format!("/{}", web.url().splitn(4, '/').nth(3).unwrap())
}

/// Asks the DB question on `web` in a task of its own, withdrawn when `cancel` fires.
fn spawn_ask(
    web: &WebAnswerer,
    cancel: &ask_user_core::CancellationToken,
) -> tokio::task::JoinHandle<Result<ask_user_core::Answers, ask_user_core::AskError>> {
    let request = ask_user_core::decode(super::support::DB, &ask_user_core::Limits::default())
        .unwrap()
        .request;
    let (asker, token) = (web.clone(), cancel.clone());
    tokio::spawn(async move { ask_user_core::UserInteraction::ask(&asker, &request, token).await })
}

/// Reads `conn` until the server closes it (or 20 s pass: `Err`).
async fn closed_by_the_server(conn: &mut TcpStream) -> Result<(), tokio::time::error::Elapsed> {
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        let mut buf = [0u8; 1024];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await
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
    let addr = addr_of(&web);
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
    let addr = addr_of(&web).parse().unwrap();
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
    let addr = addr_of(&web);
    let path = path_of(&web);
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
        let cancel = ask_user_core::CancellationToken::new();
        let call = spawn_ask(&web, &cancel);
        assert!(early.await.unwrap().starts_with("HTTP/1.1 200 OK\r\n"));
        cancel.cancel();
        assert_eq!(call.await.unwrap(), Err(ask_user_core::AskError::Cancelled));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shut_down_sends_the_last_withdrawal_then_ends_the_streams() {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let addr = addr_of(&web);
    let path = path_of(&web);
    let cancel = ask_user_core::CancellationToken::new();
    let call = spawn_ask(&web, &cancel);
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

/// Reads from `stream` until `needle` shows up; `Err` with what was read if it closes first.
async fn read_until(stream: &mut TcpStream, needle: &str) -> Result<String, String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(String::from_utf8_lossy(&seen).into_owned());
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if text.contains(needle) {
            return Ok(text.into_owned());
        }
    }
}

/// Connections that send nothing, half a
/// request head, or a header now and then, without the secret, no longer lock the human out.
/// The cap is small here (16) so a bounded number of connections (120) exceeds it many times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_half_sent_connections_do_not_lock_the_human_out() {
    let config = WebConfig {
        max_connections: 16,
        header_read_timeout: std::time::Duration::from_secs(2),
        ..WebConfig::default()
    };
    let web = WebAnswerer::start(config).await.unwrap();
    let url = web.url().to_owned();
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    let (addr, path) = (addr.to_owned(), format!("/{path}"));

    // The human's page is already open: its event stream must survive the flood, and the
    // header timeout (it is a request in progress, not an idle connection).
    let mut page = TcpStream::connect(&addr).await.unwrap();
    page.write_all(format!("GET {path}events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_until(&mut page, "event: snapshot").await.unwrap();

    let mut flood = Vec::new();
    for i in 0..120 {
        let mut conn = TcpStream::connect(&addr).await.unwrap();
        match i % 3 {
            0 => {}
            1 => conn.write_all(b"GET /").await.unwrap(),
            _ => conn
                .write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-A: 1\r\n").as_bytes())
                .await
                .unwrap(),
        }
        flood.push(conn);
    }

    // The human's GET is answered while the flood holds its connections.
    let human = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        raw(
            &addr,
            &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        ),
    )
    .await
    .expect("the human's GET timed out");
    assert!(human.starts_with("HTTP/1.1 200 OK\r\n"), "{human}");

    // Every flooding connection is closed by the server: evicted, or after the header timeout.
    for conn in &mut flood {
        let closed = closed_by_the_server(conn).await;
        assert!(closed.is_ok(), "a flooding connection stayed open");
    }

    // The page's stream still works after all that: a new question reaches it.
    let _call = super::support::ask(&web, super::support::DB);
    let opened = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        read_until(&mut page, "event: opened"),
    )
    .await
    .expect("the open page heard nothing");
    assert!(
        opened.is_ok(),
        "the page's event stream was closed: {opened:?}"
    );
}

/// An idle keep-alive connection (a full request answered, then nothing) is
/// closed after the header timeout too, so idle connections cannot pile up either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let config = WebConfig {
        header_read_timeout: std::time::Duration::from_secs(1),
        ..WebConfig::default()
    };
    let web = WebAnswerer::start(config).await.unwrap();
    let rest = web.url().strip_prefix("http://").unwrap().to_owned();
    let (addr, path) = rest.split_once('/').unwrap();
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(format!("GET /{path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_until(&mut conn, "</html>").await.unwrap();
    let closed = closed_by_the_server(&mut conn).await;
    assert!(closed.is_ok(), "the idle connection stayed open");
}
