//! Fan-out (docs/contract.md §4): the first answer wins, the others withdraw, unavailable answerers are
//! skipped, all unavailable is "no answerer".

use std::sync::Arc;

use ask_user_core::{
    AskError, AskUserQuestionTool, ExecutionContext, FirstAnswer, Outcome, UserInteraction,
};
use pretty_assertions::assert_eq;

use ask_user_test_support::answerers::{Fixed, Reply, Waiting, first_option};

/// Answers the first question with its first option after `millis`, unless cancelled first.
fn delayed(millis: u64) -> Arc<Waiting> {
    Arc::new(Waiting::new().answering_after(
        std::time::Duration::from_millis(millis),
        Reply::From(first_option),
    ))
}

const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

async fn call(answerers: Vec<Arc<dyn UserInteraction>>) -> Outcome {
    AskUserQuestionTool::new(Arc::new(FirstAnswer::new(answerers)))
        .call(ARGS, ExecutionContext::default())
        .await
}

#[tokio::test(start_paused = true)]
async fn the_first_answer_wins_and_the_others_withdraw() {
    let slow = delayed(5_000);
    let waiting = Arc::new(Waiting::new());
    let fast = delayed(10);
    let outcome = call(vec![slow.clone(), waiting.clone(), fast.clone()]).await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#
    );
    assert!(waiting.withdrawn(), "a loser must withdraw its question");
    assert!(slow.withdrawn());
}

/// An answerer unavailable before asking (`is_available` false), and one that finds out
/// only when asked.
fn unavailables() -> (Arc<Waiting>, Arc<Fixed>) {
    let unavailable = Arc::new(Waiting::new().unavailable());
    let late_unavailable = Arc::new(Fixed::new(Err(AskError::Unavailable("no tty".into()))));
    (unavailable, late_unavailable)
}

#[tokio::test]
async fn unavailable_answerers_are_skipped() {
    let (unavailable, late_unavailable) = unavailables();
    let outcome = call(vec![unavailable.clone(), late_unavailable, delayed(1)]).await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#
    );
    assert_eq!(unavailable.asked(), 0);
}

#[tokio::test]
async fn all_unavailable_is_no_provider() {
    let (unavailable, late_unavailable) = unavailables();
    assert_eq!(call(vec![unavailable.clone()]).await, Outcome::NoProvider);
    assert_eq!(call(vec![late_unavailable]).await, Outcome::NoProvider);
    assert_eq!(call(vec![]).await, Outcome::NoProvider);
    assert!(!FirstAnswer::new(vec![unavailable]).is_available());
}

#[tokio::test]
async fn a_dismissal_ends_the_race() {
    let waiting = Arc::new(Waiting::new());
    let outcome = call(vec![
        waiting.clone(),
        Arc::new(Fixed::new(Err(AskError::Dismissed))),
    ])
    .await;
    assert_eq!(outcome, Outcome::Dismissed);
    assert!(waiting.withdrawn());
}

#[tokio::test(start_paused = true)]
async fn a_failure_does_not_end_the_race_while_others_run() {
    let failing = Arc::new(Fixed::new(Err(AskError::Failed("page crashed".into()))));
    let outcome = call(vec![failing.clone(), delayed(50)]).await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#
    );
    // When nobody else answers, the failure is the outcome.
    assert_eq!(
        call(vec![failing]).await,
        Outcome::Failed("page crashed".into())
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_withdraws_every_answerer() {
    let a = Arc::new(Waiting::new());
    let b = Arc::new(Waiting::new());
    let outcome = AskUserQuestionTool::new(Arc::new(FirstAnswer::new(vec![a.clone(), b.clone()])))
        .with_timeout(Some(std::time::Duration::from_secs(30)))
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(
        outcome,
        Outcome::TimedOut(std::time::Duration::from_secs(30))
    );
    assert!(a.withdrawn() && b.withdrawn());
}
