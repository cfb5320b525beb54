//! Load correctness (the figures are in `benches/load.rs`): many concurrent asks through one
//! `FirstAnswer`, several answerers with pseudo-random delays; each call gets exactly its own
//! answer and every losing answerer's ask ends. Paused time: the delays cost nothing.

#[path = "../../benches/support/load.rs"]
mod scenario;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use ask_user_core::{CancellationToken, ExecutionContext, Outcome};

const ASKS: usize = 2_000;

#[tokio::test(start_paused = true)]
async fn every_concurrent_call_gets_exactly_its_own_answer() {
    let scripted: Vec<Arc<scenario::Answerer>> = (0..4)
        .map(|i| scenario::Answerer::new(&format!("answerer-{i}"), 7 + i, 20))
        .collect();
    let names: Vec<String> = scripted.iter().map(|a| a.name.clone()).collect();
    let tool = scenario::first_answer_tool(&scripted);
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..ASKS {
        let tool = tool.clone();
        calls.spawn(async move {
            let outcome = tool
                .call(scenario::arguments(n), ExecutionContext::default())
                .await;
            (n, outcome.text())
        });
    }
    let mut seen = vec![false; ASKS];
    while let Some(joined) = calls.join_next().await {
        let (n, text) = joined.unwrap();
        assert!(!seen[n], "call {n} returned twice");
        seen[n] = true;
        assert!(
            scenario::is_own_answer(n, &text, &names),
            "call {n} got {text}"
        );
    }
    assert!(seen.iter().all(|s| *s), "a call was lost");
    let asked: usize = scripted
        .iter()
        .map(|a| a.asked.load(Ordering::SeqCst))
        .sum();
    let ended: usize = scripted.iter().map(|a| a.ended()).sum();
    assert_eq!((asked, ended), (ASKS * 4, ASKS * 4));
    let withdrawn: usize = scripted
        .iter()
        .map(|a| a.withdrawn.load(Ordering::SeqCst))
        .sum();
    assert!(withdrawn > 0, "losers must be withdrawn, not left to run");
}

#[tokio::test(start_paused = true)]
async fn pending_asks_all_end_when_their_turns_are_cancelled() {
    let waiting: Vec<Arc<scenario::Waiting>> =
        (0..3).map(|_| Arc::new(scenario::Waiting::new())).collect();
    let tool = scenario::first_answer_tool(&waiting);
    let turn = CancellationToken::new();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..ASKS {
        let (tool, cancel) = (tool.clone(), turn.child_token());
        calls.spawn(async move {
            tool.call(scenario::arguments(n), ExecutionContext::new(cancel))
                .await
        });
    }
    let pending = || waiting.iter().map(|w| w.asked()).sum::<usize>();
    // A generous deadline only turns a hang into a failure.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while pending() < ASKS * 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "gave up waiting for {} asks ({} asked)",
            ASKS * 3,
            pending()
        );
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    turn.cancel();
    while let Some(outcome) = calls.join_next().await {
        assert_eq!(outcome.unwrap(), Outcome::Aborted);
    }
    let withdrawn: usize = waiting.iter().map(|w| w.withdrawals()).sum();
    assert_eq!(withdrawn, ASKS * 3);
}
