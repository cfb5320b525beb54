//! Figures for the web answerer, printed, not asserted: run `bench/web-figures`.
//!
//! 1. Open pages: how many live event streams (SSE clients) one server holds while a question
//!    is pending (default 1,000; `WEB_PAGES=N`), and the memory per open page.
//! 2. Memory per pending question: RSS growth while 10,000 asks wait (`WEB_PENDING=N`).
//! 3. Withdrawal latency: with every page open, time from the answer POST until the first and
//!    the last of the other pages has read the `withdrawn` event (20 rounds; median and max).
//!
//! Clients are raw TCP connections in this same process (loopback), so memory per open page
//! counts both ends of the connection: an upper bound for the server's share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_core::{AskUserQuestionRequest, CancellationToken, Limits, UserInteraction, decode};
use ask_user_web::{WebAnswerer, WebConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const QUESTION: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)","description":"Runs in production already."},{"label":"SQLite","description":"One file."}]}]}"#;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_bytes() -> usize {
    usize::try_from(ask_user_test_support::rss_kib()).unwrap_or(0) * 1024
}

fn request() -> AskUserQuestionRequest {
    decode(QUESTION, &Limits::default()).unwrap().request
}

/// Host and path of a capability URL.
fn split(url: &str) -> (String, String) {
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap();
    (host.to_owned(), format!("/{path}"))
}

#[derive(Debug, Clone, Copy)]
enum Seen {
    Opened,
    Withdrawn(Instant),
}

/// One open page: reads the event stream and reports `opened` and `withdrawn` events.
async fn page(host: String, path: String, report: mpsc::UnboundedSender<Seen>) {
    let mut stream = TcpStream::connect(&host).await.unwrap();
    let req =
        format!("GET {path}events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 1024];
    let mut text = String::new();
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let now = Instant::now();
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
        for (needle, seen) in [
            ("event: opened\n", Seen::Opened),
            ("event: withdrawn\n", Seen::Withdrawn(now)),
        ] {
            let count = text.matches(needle).count();
            for _ in 0..count {
                let _ = report.send(seen);
            }
        }
        // Keep a tail shorter than either event name: it may hold the start of a split
        // name but never a whole one, so nothing is counted twice.
        let mut cut = text.len().saturating_sub("event: withdrawn\n".len() - 1);
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text.drain(..cut);
    }
}

async fn post_answer(host: &str, path: &str, batch: u64) {
    let body = format!(r#"{{"batch":{batch},"answers":[{{"id":"db","selected":["SQLite"]}}]}}"#);
    let req = format!(
        "POST {path}answer HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(host).await.unwrap();
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

fn fmt_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn pages_and_latency(pages: usize, rounds: usize) {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let (host, path) = split(web.url());
    let (tx, mut rx) = mpsc::unbounded_channel();

    // A question pending while the pages open.
    let asker = web.clone();
    let first = tokio::spawn(async move { asker.ask(&request(), CancellationToken::new()).await });
    while web.state().pending() == 0 {
        tokio::task::yield_now().await;
    }

    let before = rss_bytes();
    let started = Instant::now();
    for _ in 0..pages {
        tokio::spawn(page(host.clone(), path.clone(), tx.clone()));
    }
    while web.state().open_pages() < pages {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let open_time = started.elapsed();
    let after = rss_bytes();
    println!(
        "open pages: {pages} event streams held with a question pending (all connected in {:.0} ms)",
        open_time.as_secs_f64() * 1000.0
    );
    // RSS moves in pages of memory: a figure for a handful of connections is noise.
    if pages >= 100 {
        println!(
            "memory per open page: {} (RSS +{} for {pages}; both ends of each loopback connection)",
            fmt_bytes((after - before) as f64 / pages as f64),
            fmt_bytes((after - before) as f64)
        );
    }

    // Round 0 answers the question pending since the start; later rounds open a new one.
    let mut first_seen = Vec::new();
    let mut last_seen = Vec::new();
    let mut pending_first = Some(first);
    for round in 0..rounds {
        let batch = round as u64 + 1;
        let call = match pending_first.take() {
            Some(call) => call,
            None => {
                let asker = web.clone();
                let call =
                    tokio::spawn(
                        async move { asker.ask(&request(), CancellationToken::new()).await },
                    );
                let mut opened = 0;
                while opened < pages {
                    if let Some(Seen::Opened) = rx.recv().await {
                        opened += 1;
                    }
                }
                call
            }
        };
        let t0 = Instant::now();
        post_answer(&host, &path, batch).await;
        let mut withdrawn = Vec::with_capacity(pages);
        while withdrawn.len() < pages {
            if let Some(Seen::Withdrawn(at)) = rx.recv().await {
                withdrawn.push(at.duration_since(t0));
            }
        }
        call.await.unwrap().unwrap();
        first_seen.push(*withdrawn.iter().min().unwrap());
        last_seen.push(*withdrawn.iter().max().unwrap());
    }
    first_seen.sort();
    last_seen.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "answer POST -> withdrawal on the other pages ({rounds} rounds, {pages} pages): first page median {:.2} ms, last page median {:.2} ms, last page max {:.2} ms",
        ms(percentile(&first_seen, 0.5)),
        ms(percentile(&last_seen, 0.5)),
        ms(*last_seen.last().unwrap())
    );
}

async fn pending_memory(n: usize) {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let web = Arc::new(web);
    let request = Arc::new(request());
    let before = rss_bytes();
    let cancel = CancellationToken::new();
    let mut calls = Vec::with_capacity(n);
    for _ in 0..n {
        let (web, request, cancel) = (web.clone(), request.clone(), cancel.clone());
        calls.push(tokio::spawn(async move { web.ask(&request, cancel).await }));
    }
    while web.state().pending() < n {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let after = rss_bytes();
    println!(
        "memory per pending question: {} (RSS +{} while {n} asks wait; includes each ask's task)",
        fmt_bytes((after - before) as f64 / n as f64),
        fmt_bytes((after - before) as f64)
    );
    cancel.cancel();
    for call in calls {
        let _ = call.await;
    }
    assert_eq!(web.state().pending(), 0);
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let pages = env_or("WEB_PAGES", 1000);
    let pending = env_or("WEB_PENDING", 10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        pending_memory(pending).await;
        pages_and_latency(1, 20).await;
        pages_and_latency(pages, 20).await;
    });
}
