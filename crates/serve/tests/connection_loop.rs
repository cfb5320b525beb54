//! The connection loop against real sockets on loopback: the eviction rule, the header
//! deadline, `Content-Length` on bodies of known size, stopping.
#![allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure

use std::time::Duration;

use ask_user_serve::{Limits, serve};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Generous: the machine running the tests may be loaded.
const DEADLINE: Duration = Duration::from_secs(20);

fn app() -> Router {
    Router::new()
        .route("/small", get(|| async { "hello" }))
        .route(
            "/stream",
            get(|| async {
                // An endless event stream: a chunk every 50 ms.
                let ticks = futures::stream::unfold(0u64, |n| async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Some((
                        Ok::<_, std::io::Error>(Bytes::from(format!("tick {n}\n"))),
                        n + 1,
                    ))
                });
                Body::from_stream(ticks)
            }),
        )
        .layer(axum::middleware::from_fn(refuse))
}

/// A layer answering `/refused` itself, as the pages' access checks do: its response does not
/// pass through the router's own `Content-Length` step.
async fn refuse(request: Request, next: Next) -> Response {
    if request.uri().path() == "/refused" {
        return (StatusCode::FORBIDDEN, "refused").into_response();
    }
    next.run(request).await
}

struct Server {
    addr: String,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

async fn start(limits: Limits) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = CancellationToken::new();
    let task = tokio::spawn(serve(listener, app(), stop.clone(), limits));
    Server { addr, stop, task }
}

/// Reads until `needle` has arrived; the text so far on EOF.
async fn read_until(stream: &mut TcpStream, needle: &str) -> Result<String, String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(DEADLINE, async {
        loop {
            if String::from_utf8_lossy(&seen).contains(needle) {
                return Ok(String::from_utf8_lossy(&seen).into_owned());
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return Err(String::from_utf8_lossy(&seen).into_owned()),
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{needle:?} did not arrive"))
}

/// Whether the server closes `stream` within the deadline (reads drain anything pending).
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    tokio::time::timeout(DEADLINE, async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

async fn request(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    tokio::time::timeout(DEADLINE, stream.read_to_string(&mut response))
        .await
        .expect("no response")
        .unwrap();
    response
}

/// [`request`] for a connection the server may refuse: `None` when it was closed unserved
/// (nothing read, or reset by the server's close).
async fn try_request(addr: &str, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).await.ok()?;
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.ok()?;
    let mut response = String::new();
    tokio::time::timeout(DEADLINE, stream.read_to_string(&mut response))
        .await
        .expect("no response")
        .ok()?;
    (!response.is_empty()).then_some(response)
}

/// A header deadline long enough that a connection closed within [`DEADLINE`] was evicted.
const NO_TIMEOUT: Duration = Duration::from_secs(600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_the_oldest_idle_connection_is_evicted_never_a_live_stream() {
    let server = start(Limits {
        header_read_timeout: NO_TIMEOUT,
        max_connections: 3,
    })
    .await;
    let addr = &server.addr;

    // The oldest connection is a live event stream.
    let mut page = TcpStream::connect(addr).await.unwrap();
    page.write_all(format!("GET /stream HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_until(&mut page, "tick 0").await.unwrap();

    // Two idle ones: silent, and half a request head.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /small HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();

    // A newcomer at the cap is served: the oldest idle one (`silent`) made room for it. It
    // stays open (keep-alive) and idle.
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(format!("GET /small HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let response = read_until(&mut kept, "hello").await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(
        closed_by_server(&mut silent).await,
        "the oldest idle connection stayed open"
    );

    // The next newcomer evicts `half`, the oldest idle one now: the stream is older but
    // serving, `kept` is idle but newer.
    let response = request(addr, "/small").await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(
        closed_by_server(&mut half).await,
        "the half-sent connection stayed open"
    );
    kept.write_all(format!("GET /small HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let again = read_until(&mut kept, "hello").await;
    assert!(
        again.is_ok(),
        "the newer idle connection was closed: {again:?}"
    );

    // The stream survived both evictions and still delivers.
    let later = read_until(&mut page, "tick 5").await;
    assert!(later.is_ok(), "the live stream was closed: {later:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_every_connection_is_serving_a_newcomer_is_refused() {
    let server = start(Limits {
        header_read_timeout: NO_TIMEOUT,
        max_connections: 1,
    })
    .await;
    let addr = &server.addr;
    let mut page = TcpStream::connect(addr).await.unwrap();
    page.write_all(format!("GET /stream HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_until(&mut page, "tick 0").await.unwrap();

    let mut newcomer = TcpStream::connect(addr).await.unwrap();
    let _ = newcomer
        .write_all(format!("GET /small HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(DEADLINE, newcomer.read_to_end(&mut answer))
        .await
        .expect("the refused connection stayed open");
    assert!(
        read.is_err() || answer.is_empty(),
        "the newcomer was served: {}",
        String::from_utf8_lossy(&answer)
    );
    let later = read_until(&mut page, "tick 3").await;
    assert!(later.is_ok(), "the live stream was closed: {later:?}");

    // Once the stream ends, its connection is idle and a newcomer gets in. The server learns
    // of the close only when its next tick fails to write, so a newcomer that comes first is
    // still refused — closed at once, which the kernel may turn into a reset (the newcomer's
    // request unread): either way it was not served, and the next newcomer tries.
    drop(page);
    let response = tokio::time::timeout(DEADLINE, async {
        loop {
            if let Some(response) = try_request(addr, "/small").await {
                return response;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("no newcomer got in after the stream ended");
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_of_known_size_keeps_its_content_length_a_stream_is_chunked() {
    let server = start(Limits {
        header_read_timeout: NO_TIMEOUT,
        max_connections: 8,
    })
    .await;
    let small = request(&server.addr, "/small").await.to_ascii_lowercase();
    assert!(small.contains("\r\ncontent-length: 5\r\n"), "{small}");
    assert!(!small.contains("transfer-encoding"), "{small}");
    assert!(small.ends_with("\r\n\r\nhello"), "{small}");
    let refused = request(&server.addr, "/refused").await.to_ascii_lowercase();
    assert!(
        refused.starts_with("http/1.1 403 forbidden\r\n"),
        "{refused}"
    );
    assert!(refused.contains("\r\ncontent-length: 7\r\n"), "{refused}");
    assert!(!refused.contains("transfer-encoding"), "{refused}");

    let mut page = TcpStream::connect(&server.addr).await.unwrap();
    page.write_all(format!("GET /stream HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr).as_bytes())
        .await
        .unwrap();
    let head = read_until(&mut page, "\r\n\r\n")
        .await
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        head.contains("\r\ntransfer-encoding: chunked\r\n"),
        "{head}"
    );
    assert!(!head.contains("content-length"), "{head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_keep_alive_connections_are_closed_after_the_header_deadline() {
    let server = start(Limits {
        header_read_timeout: Duration::from_secs(1),
        max_connections: 8,
    })
    .await;
    let addr = &server.addr;
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(format!("GET /small HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_until(&mut kept, "hello").await.unwrap();
    assert!(
        closed_by_server(&mut silent).await,
        "the silent connection stayed open"
    );
    assert!(
        closed_by_server(&mut kept).await,
        "the idle keep-alive connection stayed open"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_closes_idle_connections_and_returns() {
    let server = start(Limits {
        header_read_timeout: NO_TIMEOUT,
        max_connections: 8,
    })
    .await;
    let mut kept = TcpStream::connect(&server.addr).await.unwrap();
    kept.write_all(format!("GET /small HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr).as_bytes())
        .await
        .unwrap();
    read_until(&mut kept, "hello").await.unwrap();
    server.stop.cancel();
    tokio::time::timeout(DEADLINE, server.task)
        .await
        .expect("serve did not return after stop")
        .unwrap();
    assert!(closed_by_server(&mut kept).await);
    assert!(
        TcpStream::connect(&server.addr).await.is_err(),
        "still listening"
    );
}

#[test]
fn fit_open_files_caps_the_connections_at_half_the_soft_limit() {
    let wanted = Limits {
        header_read_timeout: NO_TIMEOUT,
        max_connections: usize::MAX,
    };
    let fitted = wanted.fit_open_files();
    let soft = ask_user_serve::raise_open_files_limit();
    match soft {
        Some(soft) => assert_eq!(fitted.max_connections as u64, soft / 2),
        None => assert_eq!(fitted, wanted),
    }
    assert_eq!(fitted.header_read_timeout, NO_TIMEOUT);
    let small = Limits {
        max_connections: 3,
        ..wanted
    };
    assert_eq!(small.fit_open_files(), small);
}
