//! Exactly once at the edges (docs/contract.md §8 "Exactly once, made precise"): a budget or a
//! signal that loses the store's compare-and-set to an answer yields the answer, and no
//! closing waits on a decision held by a future nobody polls. Paused clock: the "store" is a
//! fake recorder whose writes take a set time.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskUserQuestionTool, CancellationToken, Decision, ExecutionContext,
    FirstAnswer, Outcome, Settled,
};
use ask_user_test_support::answerers::{Fixed, Offering, Recorder, Submits, Waiting};
use pretty_assertions::assert_eq;

const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
const NO: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;

fn answer(label: &str) -> Answers {
    Answers {
        answers: vec![AnswerItem::selected("go", [label])],
    }
}

/// Generous: a hang shows as this deadline passing on the paused clock.
const HANG: Duration = Duration::from_secs(3600);

/// A page that offers `label` after `after_ms`, then stays pending until cancelled (as if it
/// lost every `select!` from then on); it remembers what the race told it.
fn page(after_ms: u64, label: &str) -> Arc<Offering> {
    Arc::new(
        Offering::new(
            answer(label),
            Submits::After(Duration::from_millis(after_ms)),
        )
        .named("the web page"),
    )
}

fn stored_no() -> Settled {
    Settled::Answered {
        answers: answer("No"),
        by: Some("the inbox".to_owned()),
    }
}

async fn bounded(call: impl Future<Output = Outcome>) -> Outcome {
    tokio::time::timeout(HANG, call)
        .await
        .expect("the call hung: its closing waited on a decision nobody drives")
}

#[tokio::test(start_paused = true)]
async fn a_budget_that_loses_the_stores_compare_and_set_to_an_answer_yields_the_answer() {
    let store = Arc::new(
        Recorder::new()
            .writing_for(Duration::ZERO)
            .settled_elsewhere(stored_no()),
    );
    let outcome = bounded(
        AskUserQuestionTool::new(Arc::new(Waiting::new()))
            .with_timeout(Some(Duration::from_millis(50)))
            .with_recorder(store)
            .call(ARGS, ExecutionContext::default()),
    )
    .await;
    assert_eq!(outcome.text(), NO, "the stored answer, not the timeout");
}

#[tokio::test(start_paused = true)]
async fn a_signal_that_loses_the_stores_compare_and_set_to_an_answer_yields_the_answer() {
    let store = Arc::new(
        Recorder::new()
            .writing_for(Duration::ZERO)
            .settled_elsewhere(stored_no()),
    );
    let cancel = CancellationToken::new();
    let signal = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        signal.cancel();
    });
    let outcome = bounded(
        AskUserQuestionTool::new(Arc::new(Waiting::new()))
            .with_recorder(store)
            .call(ARGS, ExecutionContext::new(cancel)),
    )
    .await;
    assert_eq!(outcome.text(), NO, "the stored answer, not aborted");
}

#[tokio::test(start_paused = true)]
async fn an_offer_refused_by_the_store_says_which_outcome_counted_and_that_one_is_read() {
    let store = Arc::new(
        Recorder::new()
            .writing_for(Duration::ZERO)
            .settled_elsewhere(stored_no()),
    );
    let page = page(10, "Yes");
    let outcome = bounded(
        AskUserQuestionTool::new(page.clone())
            .with_timeout(Some(Duration::from_millis(50)))
            .with_recorder(store)
            .call(ARGS, ExecutionContext::default()),
    )
    .await;
    assert_eq!(page.heard(), Some(Decision::Refused(stored_no())));
    assert_eq!(outcome.text(), NO);
}

#[tokio::test(start_paused = true)]
async fn the_budget_running_out_while_the_answer_is_being_stored_waits_for_it_and_yields_it() {
    // The page offers at 40 ms; storing takes 100 ms; the budget ends at 50 ms, while the
    // page's future (holding the decision in flight) is no longer polled.
    let store = Arc::new(Recorder::new().writing_for(Duration::from_millis(100)));
    let page = page(40, "No");
    let outcome = bounded(
        AskUserQuestionTool::new(page.clone())
            .with_timeout(Some(Duration::from_millis(50)))
            .with_recorder(store.clone())
            .call(ARGS, ExecutionContext::default()),
    )
    .await;
    assert_eq!(outcome.text(), NO, "the answer was stored first: it stands");
    assert_eq!(
        store.kept(),
        vec![Settled::Answered {
            answers: answer("No"),
            by: None,
        }],
        "stored once; the timeout was never written over it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_signal_while_the_answer_is_being_stored_does_not_hang_the_call() {
    let store = Arc::new(Recorder::new().writing_for(Duration::from_millis(100)));
    let cancel = CancellationToken::new();
    let signal = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        signal.cancel();
    });
    let outcome = bounded(
        AskUserQuestionTool::new(page(40, "No"))
            .with_recorder(store)
            .call(ARGS, ExecutionContext::new(cancel)),
    )
    .await;
    assert_eq!(outcome.text(), NO);
}

#[tokio::test(start_paused = true)]
async fn in_a_fan_out_a_terminal_answer_does_not_wait_on_a_page_answer_being_stored() {
    // The page offers at 10 ms and storing takes 100 ms; the terminal returns at 20 ms and the
    // fan-out offers its answer while the page's future is not polled.
    let store = Arc::new(Recorder::new().writing_for(Duration::from_millis(100)));
    let page = page(10, "No");
    let outcome = bounded(
        AskUserQuestionTool::new(Arc::new(FirstAnswer::new(vec![
            page.clone(),
            Arc::new(Fixed::new(answer("Yes")).after(Duration::from_millis(20))),
        ])))
        .with_recorder(store)
        .call(ARGS, ExecutionContext::default()),
    )
    .await;
    assert_eq!(page.heard(), Some(Decision::Accepted));
    assert_eq!(outcome.text(), NO);
}
