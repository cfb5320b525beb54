//! Figures for the store at scale, printed beside their floors; not a test. Run through
//! `bench/store-scale` (a release build): `cargo run --release -p ask-user-store --example
//! store_scale`. Backends: memory, SQLite (a fresh file on the temp disk), and Postgres when
//! `ASK_USER_BENCH_PG` holds a URL (the script starts a throwaway cluster).
//!
//! 1. **1,000 waiters** (`ASK_USER_BENCH_WAITERS`): that many open asks, each with a task
//!    waiting in `Store::wait_outcome` in this process; 200 of them answered one at a time; the
//!    time from just before `record_outcome` to the waiter's return, p50/p99. Beside it the same
//!    with waiters that each follow the whole change feed (what `wait_outcome` did before the
//!    per-ask registry: every change woke every waiter, which re-read its ask when it was its
//!    own), and the floor: `record_outcome` of an ask nobody waits on, just before each timed
//!    answer (paired, so the shared disk's swings hit both alike).
//! 2. **Throughput**: 64 tasks (`ASK_USER_BENCH_TASKS`) open 2,000 asks (`ASK_USER_BENCH_ASKS`)
//!    at once: asks taken in per second; then each ask has a waiting task and the 64 tasks
//!    answer them all: answers delivered per second (the last waiter's return). Floor: fsyncs
//!    per second of one file on the same disk, one writer.
//!
//! `ASK_USER_BENCH_ONLY=memory|sqlite|postgres` runs one backend; `=alone` times lone SQLite
//! writes beside one raw SQLite commit on the same disk (the floor of a lone write).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a failure aborts it

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_store::{AskId, Asker, Change, NewAsk, Outcome, Responder, Scope, Store, Timestamp};

const REQUEST: &str = r#"{"questions":[{"question":"Deploy now?","header":"Deploy","options":[{"label":"Yes"},{"label":"No"}],"multiSelect":false}]}"#;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn answer(i: usize) -> Outcome {
    Outcome::Answered {
        answer: serde_json::json!({ "Deploy now?": "Yes", "i": i }),
        by: Responder {
            answerer: "bench".into(),
            ..Responder::default()
        },
    }
}

async fn open(store: &Store, tag: &str, i: usize) -> AskId {
    let asker = Asker {
        agent: Some("bench".into()),
        ..Asker::default()
    };
    // Keys of this run only: a Postgres database may hold an earlier run's asks.
    let ask = NewAsk::new(
        &Scope::HostKey(format!("{}-{tag}{i}", run_id())),
        REQUEST,
        asker,
    );
    store.open_ask(&ask).await.unwrap().record().id
}

/// The waiter of before the registry: follows the whole feed, re-reads on its own id.
async fn wait_by_feed(store: &Store, id: AskId) {
    let mut feed = store.subscribe().await.unwrap();
    loop {
        if !store.get(id).await.unwrap().is_open() {
            return;
        }
        loop {
            match feed.next().await {
                Some(Change::Ask(other)) if other != id => {}
                _ => break,
            }
        }
    }
}

fn run_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| format!("{}-{}", std::process::id(), Timestamp::now().0))
}

/// `a / b` as `N.NNx`, or `-` when the floor is below what the clock resolves here.
fn ratio(a: f64, b: f64) -> String {
    if b < 0.005 {
        "-".to_owned()
    } else {
        format!("{:.2}x", a / b)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// p50/p99 of answer → waiter with `waiters` waiting, each by `by_feed` or the registry, and
/// p50/p99 of the paired floor: right before each timed answer, `record_outcome` of an ask
/// nobody waits on (the same write at the same moment, so the disk's swings cancel out).
async fn answer_latency(
    store: &Store,
    tag: &str,
    waiters: usize,
    by_feed: bool,
) -> ((f64, f64), (f64, f64)) {
    let mut ids = Vec::with_capacity(waiters);
    for i in 0..waiters {
        ids.push(open(store, tag, i).await);
    }
    let rounds = waiters.min(200);
    let mut alone = Vec::with_capacity(rounds);
    for i in 0..rounds {
        alone.push(open(store, &format!("{tag}-alone"), i).await);
    }
    let mut done = Vec::with_capacity(waiters);
    for &id in &ids {
        let (tx, rx) = tokio::sync::oneshot::channel::<Instant>();
        let s = store.clone();
        tokio::spawn(async move {
            if by_feed {
                wait_by_feed(&s, id).await;
            } else {
                s.wait_outcome(id).await.unwrap();
            }
            let _ = tx.send(Instant::now());
        });
        done.push(rx);
    }
    // Every waiter is in its wait once the runtime is idle again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut lat = Vec::with_capacity(rounds);
    let mut floor = Vec::with_capacity(rounds);
    for (i, (id, rx)) in ids.iter().zip(done.iter_mut()).take(rounds).enumerate() {
        let t0 = Instant::now();
        store
            .record_outcome(alone[i], &answer(i), Timestamp::now())
            .await
            .unwrap();
        floor.push(ms(t0.elapsed()));
        let t0 = Instant::now();
        store
            .record_outcome(*id, &answer(i), Timestamp::now())
            .await
            .unwrap();
        let t1 = rx.await.unwrap();
        lat.push(ms(t1 - t0));
    }
    // The rest, so no task stays behind.
    for (i, id) in ids.iter().enumerate().skip(rounds) {
        store
            .record_outcome(*id, &answer(i), Timestamp::now())
            .await
            .unwrap();
    }
    lat.sort_by(f64::total_cmp);
    floor.sort_by(f64::total_cmp);
    (
        (percentile(&lat, 0.5), percentile(&lat, 0.99)),
        (percentile(&floor, 0.5), percentile(&floor, 0.99)),
    )
}

/// p50/p99 of `record_outcome` with nobody waiting.
async fn record_alone(store: &Store, tag: &str, rounds: usize) -> (f64, f64) {
    let mut lat = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let id = open(store, tag, i).await;
        let t0 = Instant::now();
        store
            .record_outcome(id, &answer(i), Timestamp::now())
            .await
            .unwrap();
        lat.push(ms(t0.elapsed()));
    }
    lat.sort_by(f64::total_cmp);
    (percentile(&lat, 0.5), percentile(&lat, 0.99))
}

/// Asks in per second, then answers delivered per second, with `tasks` at once.
async fn throughput(store: &Store, tag: &str, asks: usize, tasks: usize) -> (f64, f64) {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ids = Arc::new(std::sync::Mutex::new(Vec::with_capacity(asks)));
    let t0 = Instant::now();
    let mut joins = Vec::new();
    for _ in 0..tasks {
        let (s, next, ids, tag) = (store.clone(), next.clone(), ids.clone(), tag.to_owned());
        joins.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= asks {
                    return;
                }
                let id = open(&s, &tag, i).await;
                ids.lock().unwrap().push(id);
            }
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    let asks_per_s = asks as f64 / t0.elapsed().as_secs_f64();
    let ids: Vec<AskId> = std::mem::take(&mut *ids.lock().unwrap());
    let mut waiting = Vec::with_capacity(ids.len());
    for &id in &ids {
        let s = store.clone();
        waiting.push(tokio::spawn(
            async move { s.wait_outcome(id).await.unwrap() },
        ));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let queue = Arc::new(std::sync::Mutex::new(ids));
    let t0 = Instant::now();
    let mut joins = Vec::new();
    for _ in 0..tasks {
        let (s, queue) = (store.clone(), queue.clone());
        joins.push(tokio::spawn(async move {
            loop {
                let Some(id) = queue.lock().unwrap().pop() else {
                    return;
                };
                s.record_outcome(id, &answer(0), Timestamp::now())
                    .await
                    .unwrap();
            }
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    for w in waiting {
        w.await.unwrap();
    }
    let answers_per_s = asks as f64 / t0.elapsed().as_secs_f64();
    (asks_per_s, answers_per_s)
}

/// fsyncs per second of one file in `dir`, one writer, 1 s.
fn fsync_floor(dir: &std::path::Path) -> f64 {
    let f = std::fs::File::create(dir.join("fsync-floor")).unwrap();
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < Duration::from_secs(1) {
        f.write_at(&n.to_le_bytes(), 0).unwrap();
        f.sync_data().unwrap();
        n += 1;
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

async fn run(name: &str, store: &Store, waiters: usize, asks: usize, tasks: usize) {
    let ((op50, op99), (of50, of99)) = answer_latency(store, "feed", waiters, true).await;
    let ((rp50, rp99), (rf50, rf99)) = answer_latency(store, "reg", waiters, false).await;
    println!(
        "{name}: answer -> waiter with {waiters} waiting: p50 {rp50:.2} ms, p99 {rp99:.2} ms \
         (floor, the same write with nobody waiting, paired: p50 {rf50:.2} ms, p99 {rf99:.2} ms; \
         {} / {})",
        ratio(rp50, rf50),
        ratio(rp99, rf99),
    );
    println!(
        "{name}:   the same with every waiter on the whole feed: p50 {op50:.2} ms, p99 {op99:.2} ms \
         (floor p50 {of50:.2} ms, p99 {of99:.2} ms; {} / {})",
        ratio(op50, of50),
        ratio(op99, of99),
    );
    let (a, d) = throughput(store, "tp", asks, tasks).await;
    println!(
        "{name}: {tasks} tasks, {asks} asks: {a:.0} asks/s taken in, {d:.0} answers/s delivered"
    );
    std::io::stdout().flush().unwrap();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let waiters = env_usize("ASK_USER_BENCH_WAITERS", 1000);
    let asks = env_usize("ASK_USER_BENCH_ASKS", 2000);
    let tasks = env_usize("ASK_USER_BENCH_TASKS", 64);
    let dir = tempfile::tempdir().unwrap();
    let floor = fsync_floor(dir.path());
    println!("floor: {floor:.0} fsyncs/s of one file on the store's disk, one writer");
    if std::env::var("ASK_USER_BENCH_ONLY").is_ok_and(|v| v == "alone") {
        // Lone writes only (for strace/perf): 3 rounds of 200 on one SQLite file.
        let path = dir.path().join("alone.sqlite3");
        let s = Store::open(&format!("sqlite:{}", path.display()))
            .await
            .unwrap();
        let raw = rusqlite::Connection::open(dir.path().join("raw.sqlite3")).unwrap();
        raw.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; \
             CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        )
        .unwrap();
        for round in 0..3 {
            let (p50, p99) = record_alone(&s, &format!("a{round}-"), 200).await;
            let mut lat = Vec::new();
            for i in 0..200 {
                let t0 = Instant::now();
                raw.execute_batch("BEGIN IMMEDIATE").unwrap();
                raw.execute("INSERT INTO t (v) VALUES (?1)", [format!("{i}")])
                    .unwrap();
                raw.execute_batch("COMMIT").unwrap();
                lat.push(ms(t0.elapsed()));
            }
            lat.sort_by(f64::total_cmp);
            println!(
                "sqlite lone record_outcome, round {round}: p50 {p50:.2} ms, p99 {p99:.2} ms; \
                 floor (one raw SQLite commit, same disk): p50 {:.2} ms, p99 {:.2} ms",
                percentile(&lat, 0.5),
                percentile(&lat, 0.99)
            );
        }
        return;
    }
    let only = std::env::var("ASK_USER_BENCH_ONLY").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only == name;
    if wanted("memory") {
        run("memory", &Store::memory(), waiters, asks, tasks).await;
    }
    if wanted("sqlite") {
        let path = dir.path().join("store.sqlite3");
        let sqlite = Store::open(&format!("sqlite:{}", path.display()))
            .await
            .unwrap();
        run("sqlite", &sqlite, waiters, asks, tasks).await;
    }
    if let (true, Ok(url)) = (wanted("postgres"), std::env::var("ASK_USER_BENCH_PG")) {
        let pg = Store::open(&url).await.unwrap();
        run("postgres", &pg, waiters, asks, tasks).await;
    }
}
