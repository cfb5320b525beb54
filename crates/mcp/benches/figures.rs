//! MCP server figures (run by `bench/mcp-figures`; prints figures, asserts nothing timed):
//!
//! 1. Pending questions one streamable HTTP server holds: N clients (default 10,000,
//!    `MCP_PENDING=N`) each send one `tools/call` (protocol 2026-07-28 stateless requests, then
//!    2025-11-25 sessions: initialize, then the call; one TCP connection per request) to a
//!    server in a child process whose answerer holds every question
//!    until all N are pending, then answers each with its own question text; every caller must
//!    get exactly its own answer. Reports the server's RSS growth per pending question. Then
//!    the same with a SQLite store (`MCP_PENDING_STORE`, default 1,000): every call goes
//!    through the durable link and the page's shower. `MCP_RUNS` picks figures.
//! 2. Round trip of one `tools/call` over stdio to `ask-user-mcp --answers FILE` (scripted
//!    answerer): initialize once, then `MCP_CALLS` (default 2,000) sequential calls.

// A bench is test code: a setup that cannot fail is allowed to panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_core::CancellationToken;
use ask_user_mcp::{AskUserServer, Routing, serve_http};
use ask_user_test_support::answerers::Holding;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--serve") {
        let count: usize = args[at + 1].parse().unwrap();
        serve(count, args.get(at + 2).cloned());
        return;
    }
    let pending: usize = env("MCP_PENDING", 10_000);
    let calls: usize = env("MCP_CALLS", 2_000);
    println!(
        "ask-user MCP server figures (release build, {} cores)",
        cores()
    );
    // MCP_PENDING_STORE=N: the pending figures with the default store kind (SQLite; default
    // 1,000: every ask is one synced write).
    let stored: usize = env("MCP_PENDING_STORE", 1_000);
    // MCP_RUNS=session-store,stdio (say): only these figures.
    let runs = std::env::var("MCP_RUNS").unwrap_or_default();
    let run = |name: &str| runs.is_empty() || runs.split(',').any(|r| r == name);
    for (name, count, era, stored) in [
        ("stateless", pending, Era::Stateless, false),
        ("session", pending, Era::Session, false),
        ("stateless-store", stored, Era::Stateless, true),
        ("session-store", stored, Era::Session, true),
    ] {
        if run(name) {
            pending_figures(count, era, stored);
        }
    }
    if !run("stdio") {
        return;
    }
    stdio_figures(calls);
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Child process: the server (with the SQLite store at `store`, a path, when given). Prints
/// `port P`, then `rss BEFORE AT` once all are pending.
fn serve(count: usize, store: Option<String>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Holds every question until all are pending, then answers each with its own text.
        let hold = Arc::new(Holding::until_released(count));
        let store = match store {
            Some(path) => Some(
                ask_user_store::Store::open_sqlite(std::path::Path::new(&path))
                    .await
                    .unwrap(),
            ),
            None => None,
        };
        let routing = Routing {
            fallback: vec![hold.clone()],
            store,
            ..Routing::default()
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shutdown = CancellationToken::new();
        tokio::spawn(serve_http(AskUserServer::new(routing), listener, shutdown));
        tokio::time::sleep(Duration::from_millis(200)).await;
        let before = ask_user_test_support::rss_kib();
        println!("port {port}");
        std::io::stdout().flush().unwrap();
        hold.all_pending().await;
        let at = ask_user_test_support::rss_kib();
        println!("rss {before} {at}");
        std::io::stdout().flush().unwrap();
        // Let the figure be read before the answers flow.
        tokio::time::sleep(Duration::from_millis(100)).await;
        hold.release();
        // Serve until the parent closes our stdin.
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 1];
        let _ = stdin.read(&mut buf).await;
    });
}

/// The protocol era of the load's clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    /// 2025-11-25: initialize, a session (`Mcp-Session-Id`), then the call on it.
    Session,
    /// 2026-07-28: one stateless request per call.
    Stateless,
}

fn call_body(i: usize, era: Era) -> String {
    let mut body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "ask_user_question",
            "arguments": {"questions": [{"id": "q", "question": format!("caller {i}")}]},
        }
    });
    if era == Era::Stateless {
        body["params"]["_meta"] = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "figures", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
    }
    body.to_string()
}

/// One POST on its own connection; returns the whole response (head and body).
async fn post(
    port: u16,
    headers: &str,
    body: &str,
    connect: &Semaphore,
) -> std::io::Result<String> {
    let permit = connect.acquire().await.map_err(std::io::Error::other)?;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Connection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    drop(permit);
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    if response.is_empty() {
        return Err(std::io::ErrorKind::ConnectionReset.into());
    }
    Ok(String::from_utf8_lossy(&response).into_owned())
}

/// One call; a connection the loaded server's accept queue dropped is tried again.
async fn one_call(port: u16, i: usize, connect: Arc<Semaphore>, era: Era) -> bool {
    for _ in 0..20 {
        match try_call(port, i, &connect, era).await {
            Ok(ok) => return ok,
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    false
}

async fn try_call(port: u16, i: usize, connect: &Semaphore, era: Era) -> std::io::Result<bool> {
    let headers = match era {
        Era::Stateless => {
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: ask_user_question\r\n"
                .to_owned()
        }
        Era::Session => {
            let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"figures","version":"0"}}}"#;
            let response = post(port, "", initialize, connect).await?;
            let session = response
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("mcp-session-id")
                        .then(|| value.trim().to_owned())
                })
                .ok_or_else(|| std::io::Error::other("no session id"))?;
            let headers =
                format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
            let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            post(port, &headers, initialized, connect).await?;
            headers
        }
    };
    let response = post(port, &headers, &call_body(i, era), connect).await?;
    let own = format!(r#"\"custom\":\"caller {i}\"}}]}}"#);
    let ok = response.contains(&own);
    if !ok {
        eprintln!("caller {i} got: {response}");
    }
    Ok(ok)
}

fn pending_figures(count: usize, era: Era, stored: bool) {
    let exe = std::env::current_exe().unwrap();
    // MCP_SERVE_WRAP="heaptrack -o /tmp/mcp" runs the server child under a heap profiler, to
    // see where the memory per pending question goes.
    let wrap = std::env::var("MCP_SERVE_WRAP").unwrap_or_default();
    let mut wrap = wrap.split_whitespace();
    let mut command = match wrap.next() {
        Some(program) => {
            let mut command = Command::new(program);
            command.args(wrap).arg(&exe);
            command
        }
        None => Command::new(&exe),
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    command.args(["--serve", &count.to_string()]);
    if stored {
        command.arg(&store);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // A wrapper (MCP_SERVE_WRAP) may print lines of its own first.
    let port: u16 = lines
        .by_ref()
        .map(Result::unwrap)
        .find_map(|l| l.strip_prefix("port ").map(|p| p.parse().unwrap()))
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let results = runtime.block_on(async {
        let connect = Arc::new(Semaphore::new(64));
        let tasks: Vec<_> = (0..count)
            .map(|i| tokio::spawn(one_call(port, i, connect.clone(), era)))
            .collect();
        let mut ok = 0;
        for task in tasks {
            ok += usize::from(task.await.unwrap());
        }
        ok
    });
    let elapsed = started.elapsed();
    let rss = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|l| l.starts_with("rss "))
        .unwrap();
    let mut parts = rss
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse::<u64>().unwrap());
    let (before, at) = (parts.next().unwrap(), parts.next().unwrap());
    drop(child.stdin.take());
    let _ = child.wait();
    let per = (at.saturating_sub(before) as f64) * 1024.0 / count as f64;
    let how = match era {
        Era::Stateless => "2026-07-28 stateless calls, one connection each",
        Era::Session => "2025-11-25 sessions, one call and one connection each",
    };
    let store = if stored { "SQLite store" } else { "no store" };
    println!("HTTP: {count} pending questions held at once by one server ({how}; {store})");
    println!("  answers reaching their own caller: {results}/{count}");
    println!(
        "  server RSS: {:.1} MiB idle -> {:.1} MiB with all pending: {:.1} KiB per pending question",
        before as f64 / 1024.0,
        at as f64 / 1024.0,
        per / 1024.0
    );
    println!(
        "  all {count} asked, held and answered in {:.2} s",
        elapsed.as_secs_f64()
    );
    assert_eq!(results, count, "an answer was lost or misrouted");
}

fn stdio_figures(calls: usize) {
    let dir = std::env::temp_dir().join(format!("ask-user-mcp-figures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    std::fs::write(&answers, r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ask-user-mcp"))
        .arg("--answers")
        .arg(&answers)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |line: String| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"figures","version":"0"}}}"#.to_owned());
    lines.next().unwrap().unwrap();
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned());
    let mut times = Vec::with_capacity(calls);
    for id in 1..=calls {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ask_user_question","arguments":{{"questions":[{{"id":"go","question":"Deploy?","options":["Yes","No"]}}]}}}}}}"#
        );
        let started = Instant::now();
        send(call);
        let line = lines.next().unwrap().unwrap();
        times.push(started.elapsed());
        assert!(line.contains(r#"\"selected\":[\"Yes\"]"#), "{line}");
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    times.sort();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = times.iter().map(|d| micros(*d)).sum::<f64>() / calls as f64;
    println!("stdio: tools/call round trip with a scripted answerer ({calls} sequential calls)");
    println!(
        "  mean {:.0} µs, p50 {:.0} µs, p99 {:.0} µs",
        mean,
        micros(times[calls / 2]),
        micros(times[calls * 99 / 100])
    );
}
