//! Faults around an ask: an answerer that panics, a timeout that fires while a batch is half
//! answered. (The terminal's restore on signals and panics is tested in a real pty by the
//! terminal crate; these use stand-in answerers because the fault is in the core's handling.)

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, ExecutionContext, FirstAnswer, OneStep, Outcome, UserInteraction,
};
use ask_user_host::{Entry, HostCall, Journal, read};
use ask_user_scripted::PickRecommended;
use pretty_assertions::assert_eq;

const BATCH: &str = r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]},{"id":"name","question":"Service name?"},{"id":"go","question":"Deploy now?","options":["Yes","No"]}]}"#;

/// What the half-answering human did.
#[derive(Default)]
struct HalfAnswered {
    answered_first: AtomicBool,
    withdrawn: AtomicBool,
}

/// A human who answers the first question of a batch after a minute, then stops (walked away):
/// the partial answer stays inside the answerer, as in a real UI, until the batch is done.
fn half_answering(seen: &Arc<HalfAnswered>) -> Arc<dyn UserInteraction> {
    let seen = seen.clone();
    Arc::new(OneStep::new(move |request, cancel| {
        let seen = seen.clone();
        Box::pin(async move {
            let mut partial = Vec::new();
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(60)) => {
                    let q = &request.questions()[0];
                    partial.push(AnswerItem::selected(&q.id, [q.options[0].label.clone()]));
                    seen.answered_first.store(true, Ordering::SeqCst);
                }
                () = cancel.cancelled() => {}
            }
            cancel.cancelled().await;
            seen.withdrawn.store(true, Ordering::SeqCst);
            drop(partial);
            Err(AskError::Cancelled)
        })
    }))
}

#[tokio::test(start_paused = true)]
async fn a_timeout_while_a_batch_is_half_answered_is_timed_out_not_a_partial_answer() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(Journal::open(dir.path().join("j.jsonl")).unwrap());
    let human = Arc::new(HalfAnswered::default());
    let call = HostCall::builder(half_answering(&human))
        .journal(Some(journal))
        .timeout(Some(Duration::from_secs(90)))
        .build();
    let outcome = call
        .call(BATCH, ExecutionContext::default())
        .await
        .into_outcome();
    assert!(
        human.answered_first.load(Ordering::SeqCst),
        "the first answer came in"
    );
    assert!(
        human.withdrawn.load(Ordering::SeqCst),
        "the batch is withdrawn"
    );
    assert_eq!(outcome, Outcome::TimedOut(Duration::from_secs(90)));
    assert_eq!(
        outcome.text(),
        "Error: no answer within 1m30s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later."
    );
    // The journal shows the whole batch asked and no answer given.
    let entries = read(dir.path().join("j.jsonl")).unwrap();
    assert!(
        matches!(&entries[..], [Entry::Ask { questions, .. }, Entry::Outcome { code, answers: None, .. }]
        if questions.len() == 3 && code == "ASK_TIMED_OUT")
    );
}

/// Panics in the middle of an ask, counting in `asked` how often it was asked.
fn panicking(asked: &Arc<AtomicUsize>) -> Arc<dyn UserInteraction> {
    let asked = asked.clone();
    Arc::new(OneStep::new(move |_, _| {
        let asked = asked.clone();
        Box::pin(async move {
            asked.fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            let empty: Vec<u8> = Vec::new();
            Ok(Answers {
                answers: vec![AnswerItem::skipped(format!("{}", empty[0]))],
            })
        })
    }))
}

#[tokio::test]
async fn an_answerer_that_panics_is_answer_failed_and_the_host_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(Journal::open(dir.path().join("j.jsonl")).unwrap());
    let asked = Arc::new(AtomicUsize::new(0));
    let panicking = panicking(&asked);
    let call = HostCall::builder(panicking.clone())
        .journal(Some(journal.clone()))
        .build();
    let outcome = call
        .call(BATCH, ExecutionContext::default())
        .await
        .into_outcome();
    assert_eq!(outcome.code().unwrap().as_str(), "ANSWER_FAILED");
    assert_eq!(
        outcome.text(),
        "Error: the answerer crashed (index out of bounds: the len is 0 but the index is 0); ask your question in plain text in your reply instead"
    );
    // The same host asks again; beside a working answerer the panicking one loses nothing.
    let call = HostCall::builder(Arc::new(FirstAnswer::new(vec![
        panicking.clone(),
        Arc::new(PickRecommended),
    ])))
    .journal(Some(journal))
    .build();
    let outcome = call
        .call(BATCH, ExecutionContext::default())
        .await
        .into_outcome();
    assert_eq!(outcome.code(), None, "{}", outcome.text());
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    let codes: Vec<String> = read(dir.path().join("j.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|e| match e {
            Entry::Outcome { code, .. } => Some(code),
            _ => None,
        })
        .collect();
    assert_eq!(codes, ["ANSWER_FAILED", "ANSWERED"]);
}
