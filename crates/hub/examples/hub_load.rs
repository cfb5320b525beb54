//! The hub benches' load generator (bench/hub-throughput, bench/hub-memory); not a test.
//!
//! Built only by those scripts (`cargo build --release -p ask-user-hub --example hub_load`);
//! one process, tokio with one worker per core, hyper's HTTP/1.1 client on kept-alive
//! connections. Three modes, each reading its job as JSON on stdin and writing its result as
//! JSON on stdout:
//!
//! - `instant`: a server that replies at once, the client's own ceiling. Prints its address on
//!   the first line, serves until stdin closes. `GET …?wait=` holds until `POST …/ID/answer`
//!   for the same ask id (the last path segment before `?`, or before `/answer`) arrives; a
//!   `GET` without `wait` is refused with 429 while its token holds [`HELD_PER_TOKEN`] waits
//!   (the hub's gate does the same); everything else gets `{"id": N}` at once.
//! - `post`: `{"addrs": ["127.0.0.1:PORT", …], "connections": C, "requests": [{"method",
//!   "path", "headers": [[NAME, VALUE], …], "body"}]}`: C connections (spread over `addrs`)
//!   take the next request as soon as their previous response is read in full. Result:
//!   `{"seconds", "cpu_seconds", "statuses", "bodies"}` (in the requests' order).
//! - `deliver`: `{"addr", "answer_addr"?, "connections": C, "polls": [{"token", "id"}], "answer_headers",
//!   "answer_body"}`: one connection per poll sends `GET /v1/asks/ID?wait=60`; then, per
//!   token, `GET /v1/asks/ID` is repeated until refused with 429 (the hub holds all of that
//!   token's waits: the polls are waiting, not on their way); then C connections answer every
//!   ask through the inbox (`POST /inbox/asks/ID/answer`, on `answer_addr` when given). Result: `{"seconds"` (first answer
//!   sent → last poll answered)`, "latencies_ms"` (each answer sent → its poll's response read),
//!   `"answered"` (polls whose response says `"state":"answered"`)`, "answer_statuses",
//!   "probes", "cpu_seconds"}`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::error::Error;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Request, Response, StatusCode};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// How many waits one token may hold at the hub at once (`MAX_OPEN_PER_TOKEN`).
const HELD_PER_TOKEN: usize = ask_user_hub::MAX_OPEN_PER_TOKEN;

type Failure = Box<dyn Error + Send + Sync>;

#[derive(Debug, Deserialize)]
struct Job {
    method: String,
    path: String,
    #[serde(default)]
    headers: Vec<(String, String)>,
    #[serde(default)]
    body: String,
}

#[derive(Debug, Deserialize)]
struct PostJob {
    addrs: Vec<String>,
    connections: usize,
    requests: Vec<Job>,
}

#[derive(Debug, Deserialize)]
struct Poll {
    token: String,
    id: String,
}

#[derive(Debug, Deserialize)]
struct DeliverJob {
    addr: String,
    /// Where the answers go (another replica); `addr` when absent.
    #[serde(default)]
    answer_addr: Option<String>,
    connections: usize,
    polls: Vec<Poll>,
    answer_headers: Vec<(String, String)>,
    answer_body: String,
}

fn main() -> Result<(), Failure> {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let out = match mode.as_str() {
        "instant" => return runtime.block_on(instant()),
        "post" => runtime.block_on(post(serde_json::from_reader(std::io::stdin())?))?,
        "deliver" => runtime.block_on(deliver(serde_json::from_reader(std::io::stdin())?))?,
        _ => return Err("usage: hub_load instant|post|deliver (the job as JSON on stdin)".into()),
    };
    println!("{out}");
    Ok(())
}

/// CPU seconds (user + system) this process has used so far.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let Some((_, fields)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let f: Vec<&str> = fields.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the name; in clock
    // ticks, 100 a second on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

/// A kept-alive connection to one server, and the `Host` its requests carry.
struct Connection {
    send: SendRequest<Body>,
    host: String,
}

async fn connect(addr: &str) -> Result<Connection, Failure> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(Connection {
        send,
        host: addr.to_owned(),
    })
}

/// Sends `job` on `conn` and reads the whole response: its status and body.
async fn send(conn: &mut Connection, job: &Job) -> Result<(u16, Bytes), Failure> {
    let mut request = Request::builder()
        .method(job.method.as_str())
        .uri(job.path.as_str())
        .header("host", conn.host.as_str());
    for (k, v) in &job.headers {
        request = request.header(k.as_str(), v.as_str());
    }
    if !job.body.is_empty() {
        request = request.header("content-type", "application/json");
    }
    let request = request.body(Body::from(job.body.clone()))?;
    conn.send.ready().await?;
    let response = conn.send.send_request(request).await?;
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(Body::new(response.into_body()), usize::MAX).await?;
    Ok((status, body))
}

async fn post(job: PostJob) -> Result<serde_json::Value, Failure> {
    let requests = Arc::new(job.requests);
    let next = Arc::new(AtomicUsize::new(0));
    let results = Arc::new(Mutex::new(vec![(0u16, Bytes::new()); requests.len()]));
    let mut senders = Vec::new();
    for k in 0..job.connections.max(1) {
        senders.push(connect(&job.addrs[k % job.addrs.len()]).await?);
    }
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for mut sender in senders {
        let (requests, next, results) = (requests.clone(), next.clone(), results.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = requests.get(i) else {
                    return Ok::<(), Failure>(());
                };
                let got = send(&mut sender, job).await?;
                results.lock().unwrap_or_else(PoisonError::into_inner)[i] = got;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let results = std::mem::take(&mut *results.lock().unwrap_or_else(PoisonError::into_inner));
    let (statuses, bodies): (Vec<u16>, Vec<String>) = results
        .into_iter()
        .map(|(s, b)| (s, String::from_utf8_lossy(&b).into_owned()))
        .unzip();
    Ok(json!({"seconds": seconds, "cpu_seconds": cpu, "statuses": statuses, "bodies": bodies}))
}

async fn deliver(job: DeliverJob) -> Result<serde_json::Value, Failure> {
    let n = job.polls.len();
    // 1. The polls, one connection each.
    let mut polls = Vec::with_capacity(n);
    for p in &job.polls {
        let mut sender = connect(&job.addr).await?;
        let wait = Job {
            method: "GET".into(),
            path: format!("/v1/asks/{}?wait=60", p.id),
            headers: vec![("authorization".into(), format!("Bearer {}", p.token))],
            body: String::new(),
        };
        polls.push(tokio::spawn(async move {
            let (status, body) = send(&mut sender, &wait).await?;
            let at = Instant::now();
            let answered = status == 200
                && serde_json::from_slice::<serde_json::Value>(&body)
                    .is_ok_and(|v| v["state"] == "answered");
            Ok::<_, Failure>((at, answered))
        }));
    }
    // 2. Every token's waits are held by the server: a request more is refused.
    let mut first_of: Vec<(&str, &str)> = Vec::new();
    for p in &job.polls {
        if !first_of.iter().any(|(t, _)| *t == p.token) {
            first_of.push((&p.token, &p.id));
        }
    }
    let mut probes = 0;
    for (token, id) in first_of {
        let mut sender = connect(&job.addr).await?;
        let probe = Job {
            method: "GET".into(),
            path: format!("/v1/asks/{id}"),
            headers: vec![("authorization".into(), format!("Bearer {token}"))],
            body: String::new(),
        };
        loop {
            probes += 1;
            let (status, _) = send(&mut sender, &probe).await?;
            if status == StatusCode::TOO_MANY_REQUESTS.as_u16() {
                break;
            }
            if probes > 40 * n.max(1) {
                return Err(format!("the server never held all waits of token {token}").into());
            }
            // Not all held yet: the polls are still on their way (a bench, not a test).
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    // 3. The answers, at full speed.
    let answers: Arc<Vec<Job>> = Arc::new(
        job.polls
            .iter()
            .map(|p| Job {
                method: "POST".into(),
                path: format!("/inbox/asks/{}/answer", p.id),
                headers: job.answer_headers.clone(),
                body: job.answer_body.clone(),
            })
            .collect(),
    );
    let next = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(Mutex::new(vec![(Instant::now(), 0u16); n]));
    let mut senders = Vec::new();
    let answer_addr = job.answer_addr.as_deref().unwrap_or(&job.addr);
    for _ in 0..job.connections.max(1) {
        senders.push(connect(answer_addr).await?);
    }
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for mut sender in senders {
        let (answers, next, sent) = (answers.clone(), next.clone(), sent.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(answer) = answers.get(i) else {
                    return Ok::<(), Failure>(());
                };
                let at = Instant::now();
                let (status, _) = send(&mut sender, answer).await?;
                sent.lock().unwrap_or_else(PoisonError::into_inner)[i] = (at, status);
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let mut delivered = Vec::with_capacity(n);
    for p in polls {
        delivered.push(p.await??);
    }
    let cpu = cpu_seconds() - cpu0;
    let sent = std::mem::take(&mut *sent.lock().unwrap_or_else(PoisonError::into_inner));
    let last = delivered.iter().map(|(at, _)| *at).max().unwrap_or(t0);
    let latencies: Vec<f64> = sent
        .iter()
        .zip(&delivered)
        .map(|((s, _), (d, _))| d.saturating_duration_since(*s).as_secs_f64() * 1000.0)
        .collect();
    Ok(json!({
        "seconds": last.saturating_duration_since(t0).as_secs_f64(),
        "cpu_seconds": cpu,
        "latencies_ms": latencies,
        "answered": delivered.iter().filter(|(_, a)| *a).count(),
        "answer_statuses": sent.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
        "probes": probes,
    }))
}

/// The instant server's state: held waits by ask id, and how many each token holds.
#[derive(Default)]
struct Held {
    waits: HashMap<String, oneshot::Sender<()>>,
    per_token: HashMap<String, usize>,
    ids: usize,
}

async fn instant() -> Result<(), Failure> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on {}", listener.local_addr()?);
    let held = Arc::new(Mutex::new(Held::default()));
    // Serves until stdin closes (the bench script ends, even killed: no server left behind).
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    });
    let accept = async {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let held = held.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |r| reply(held.clone(), r));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    };
    tokio::select! {
        _ = stdin_closed => Ok(()),
        () = accept => Ok(()),
    }
}

async fn reply(
    held: Arc<Mutex<Held>>,
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Body>, Infallible> {
    let path = request.uri().path().to_owned();
    let waits = request.uri().query().is_some_and(|q| q.contains("wait="));
    let token = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    // The body is read whole, as a server would.
    let _ = axum::body::to_bytes(Body::new(request.into_body()), usize::MAX).await;
    let respond = |status: StatusCode, body: String| {
        let mut r = Response::new(Body::from(body));
        *r.status_mut() = status;
        Ok(r)
    };
    let segments: Vec<&str> = path.split('/').collect();
    if let ["", "inbox", "asks", id, "answer"] = segments.as_slice() {
        let waiter = held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .waits
            .remove(*id);
        if let Some(w) = waiter {
            let _ = w.send(());
        }
        return respond(StatusCode::OK, "{}".into());
    }
    if let ["", "v1", "asks", id] = segments.as_slice() {
        if waits {
            let (tx, rx) = oneshot::channel();
            {
                let mut h = held.lock().unwrap_or_else(PoisonError::into_inner);
                h.waits.insert((*id).to_owned(), tx);
                *h.per_token.entry(token.clone()).or_default() += 1;
            }
            let _ = rx.await;
            if let Some(n) = held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .per_token
                .get_mut(&token)
            {
                *n -= 1;
            }
            return respond(StatusCode::OK, r#"{"state":"answered"}"#.into());
        }
        let full = held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .per_token
            .get(&token)
            .is_some_and(|n| *n >= HELD_PER_TOKEN);
        if full {
            return respond(StatusCode::TOO_MANY_REQUESTS, "{}".into());
        }
        return respond(StatusCode::OK, "{}".into());
    }
    let id = {
        let mut h = held.lock().unwrap_or_else(PoisonError::into_inner);
        h.ids += 1;
        h.ids
    };
    respond(StatusCode::OK, format!(r#"{{"id":{id}}}"#))
}
