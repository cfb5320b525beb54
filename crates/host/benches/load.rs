//! Load figures for the core's fan-out: 10,000 concurrent asks through one
//! `FirstAnswer` of several scripted answerers with small random delays — every call must get
//! exactly its own answer — and the memory held per pending ask.
//!
//! Run with `bench/load-figures` (or `cargo bench -p ask-user-host --bench load`). Prints
//! figures; exits non-zero if any answer was lost or misrouted. `LOAD_ASKS` overrides the
//! number of asks (default 10,000).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/load.rs"]
mod load;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ask_user_core::{CancellationToken, ExecutionContext, Outcome};

const ANSWERERS: usize = 3;
const MAX_DELAY_MS: u64 = 20;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

async fn memory_per_pending_ask(asks: usize) {
    let waiting: Vec<Arc<load::Waiting>> = (0..ANSWERERS)
        .map(|_| Arc::new(load::Waiting::new()))
        .collect();
    let tool = load::first_answer_tool(&waiting);
    let arguments: Vec<String> = (0..asks).map(load::arguments).collect();
    let turn = CancellationToken::new();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let before = ask_user_test_support::rss_kib();

    let mut calls = tokio::task::JoinSet::new();
    for args in arguments {
        let (tool, cancel) = (tool.clone(), turn.child_token());
        calls.spawn(async move { tool.call(args, ExecutionContext::new(cancel)).await });
    }
    let pending = || waiting.iter().map(|w| w.asked()).sum::<usize>();
    while pending() < asks * ANSWERERS {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let during = ask_user_test_support::rss_kib();

    turn.cancel();
    let mut aborted = 0;
    while let Some(outcome) = calls.join_next().await {
        aborted += usize::from(outcome.unwrap() == Outcome::Aborted);
    }
    let withdrawn: usize = waiting.iter().map(|w| w.withdrawals()).sum();
    let per_ask = (during.saturating_sub(before)) as f64 * 1024.0 / asks as f64;
    println!("pending asks held:            {asks} (each on {ANSWERERS} waiting answerers)");
    println!("RSS before / holding:         {before} KiB / {during} KiB");
    println!("memory per pending ask:       {per_ask:.0} bytes (RSS delta / asks)");
    println!(
        "aborted when the turn ended:  {aborted}/{asks}; questions withdrawn: {withdrawn}/{}",
        asks * ANSWERERS
    );
    assert_eq!(aborted, asks, "every pending ask must end as aborted");
    assert_eq!(withdrawn, asks * ANSWERERS, "every answerer must withdraw");
}

async fn concurrent_asks(asks: usize) -> bool {
    let scripted: Vec<Arc<load::Answerer>> = (0..ANSWERERS)
        .map(|i| load::Answerer::new(&format!("answerer-{i}"), 0x5EED + i as u64, MAX_DELAY_MS))
        .collect();
    let names: Arc<Vec<String>> = Arc::new(scripted.iter().map(|a| a.name.clone()).collect());
    let tool = load::first_answer_tool(&scripted);

    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..asks {
        let tool = tool.clone();
        calls.spawn(async move {
            let began = Instant::now();
            let outcome = tool
                .call(load::arguments(n), ExecutionContext::default())
                .await;
            (n, outcome.text(), began.elapsed())
        });
    }
    let mut seen = vec![false; asks];
    let (mut own, mut misrouted, mut lost) = (0, 0, 0);
    let mut latencies = Vec::with_capacity(asks);
    while let Some(joined) = calls.join_next().await {
        let Ok((n, text, latency)) = joined else {
            lost += 1;
            continue;
        };
        latencies.push(latency);
        if std::mem::replace(&mut seen[n], true) {
            misrouted += 1;
        } else if load::is_own_answer(n, &text, &names) {
            own += 1;
        } else {
            misrouted += 1;
            eprintln!("call {n} got: {text}");
        }
    }
    let wall = started.elapsed();
    lost += seen.iter().filter(|s| !**s).count();
    latencies.sort();
    let asked: usize = scripted
        .iter()
        .map(|a| a.asked.load(Ordering::SeqCst))
        .sum();
    let ended: usize = scripted.iter().map(|a| a.ended()).sum();
    let wins: Vec<String> = scripted
        .iter()
        .map(|a| format!("{} {}", a.name, a.answered.load(Ordering::SeqCst)))
        .collect();
    println!(
        "concurrent asks:              {asks} through FirstAnswer of {ANSWERERS} scripted answerers (delays 0-{MAX_DELAY_MS} ms)"
    );
    println!("own answer / misrouted / lost: {own} / {misrouted} / {lost}");
    println!("answerer asks started / ended: {asked} / {ended} (losers withdrawn or finished)");
    println!("answers given (incl. late):   {}", wins.join(", "));
    println!(
        "wall time:                    {:.1} ms ({:.0} asks/s)",
        wall.as_secs_f64() * 1e3,
        asks as f64 / wall.as_secs_f64()
    );
    println!(
        "latency p50 / p99 / max:      {:.1} / {:.1} / {:.1} ms (the fastest answerer's delay is 0-{MAX_DELAY_MS} ms)",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
    own == asks && misrouted == 0 && lost == 0 && asked == ended && asked == asks * ANSWERERS
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let asks = std::env::var("LOAD_ASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(memory_per_pending_ask(asks));
    let ok = runtime.block_on(concurrent_asks(asks));
    if !ok {
        eprintln!("load: FAILED (see above)");
        std::process::exit(1);
    }
    println!("load: ok");
}
