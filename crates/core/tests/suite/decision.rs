//! Decided before acknowledged (docs/contract.md §4): an answerer that tells the human "sent"
//! hears the decision first, the first outcome wins, and an answer that was accepted is never
//! dropped by the budget, the turn's cancel or a fan-out.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, AskUserQuestionTool, BoxFuture,
    CancellationToken, Decide, Decision, ExecutionContext, FirstAnswer, Limits, Offer, Outcome,
    RemoteOutcome, Settled, UserInteraction, decode,
};
use ask_user_test_support::answerers::{Fixed, Offering, Recorder, Reply, Submits};
use pretty_assertions::assert_eq;

const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
const YES: &str = r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#;

fn request() -> AskUserQuestionRequest {
    decode(ARGS, &Limits::default()).unwrap().request
}

fn yes() -> Answers {
    Answers {
        answers: vec![AnswerItem::selected("go", ["Yes"])],
    }
}

fn no() -> Answers {
    Answers {
        answers: vec![AnswerItem::selected("go", ["No"])],
    }
}

/// A page-like answerer: offers "No" through the race when the human `submits`, and remembers
/// what it was told, and what the race said when its question was withdrawn.
fn acknowledging(submits: Submits) -> Arc<Offering> {
    Arc::new(Offering::new(no(), submits).named("the web page"))
}

/// A terminal-like answerer: acknowledges nothing, answers "Yes" after `millis`.
fn terminal(millis: u64) -> Arc<Fixed> {
    Arc::new(
        Fixed::new(yes())
            .after(Duration::from_millis(millis))
            .named("the terminal"),
    )
}

fn tool(answerer: Arc<dyn UserInteraction>, budget_ms: u64) -> AskUserQuestionTool {
    AskUserQuestionTool::new(answerer).with_timeout(Some(Duration::from_millis(budget_ms)))
}

fn no_answer() -> String {
    r#"{"answers":[{"id":"go","selected":["No"]}]}"#.to_owned()
}

#[tokio::test(start_paused = true)]
async fn an_answer_accepted_before_the_budget_ran_out_is_the_outcome_even_if_its_future_lost_the_select()
 {
    let page = acknowledging(Submits::After(Duration::from_millis(90)));
    let outcome = tool(page.clone(), 100)
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(page.heard(), Some(Decision::Accepted));
    assert_eq!(
        outcome.text(),
        no_answer(),
        "the human was told it was sent"
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_accepted_before_the_turn_was_cancelled_is_the_outcome() {
    let page = acknowledging(Submits::After(Duration::from_millis(10)));
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        later.cancel();
    });
    let outcome = AskUserQuestionTool::new(page.clone())
        .call(ARGS, ExecutionContext::new(cancel))
        .await;
    assert_eq!(page.heard(), Some(Decision::Accepted));
    assert_eq!(outcome.text(), no_answer());
}

#[tokio::test(start_paused = true)]
async fn an_answer_arriving_after_the_budget_ran_out_is_refused_with_the_reason() {
    let page = acknowledging(Submits::OnCancel);
    let outcome = tool(page.clone(), 100)
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(outcome, Outcome::TimedOut(Duration::from_millis(100)));
    let timed_out = Settled::TimedOut(Duration::from_millis(100));
    assert_eq!(page.heard(), Some(Decision::Refused(timed_out.clone())));
    assert_eq!(page.withdrawn_because(), Some(Some(timed_out)));
}

#[tokio::test(start_paused = true)]
async fn in_a_fan_out_the_losing_page_is_told_the_terminal_answered() {
    let page = acknowledging(Submits::OnCancel);
    let outcome =
        AskUserQuestionTool::new(Arc::new(FirstAnswer::new(vec![page.clone(), terminal(10)])))
            .call(ARGS, ExecutionContext::default())
            .await;
    assert_eq!(outcome.text(), YES);
    let won = Settled::Answered {
        answers: yes(),
        by: Some("the terminal".to_owned()),
    };
    assert_eq!(page.heard(), Some(Decision::Refused(won.clone())));
    assert_eq!(page.withdrawn_because(), Some(Some(won)));
}

#[tokio::test(start_paused = true)]
async fn in_a_fan_out_an_accepted_page_answer_beats_a_terminal_answer_that_returns_first() {
    // The page's answer is accepted at 10 ms but its future never completes; the terminal
    // returns at 20 ms. The page's answer settled the race, so it is the outcome.
    let page = acknowledging(Submits::After(Duration::from_millis(10)));
    let outcome =
        AskUserQuestionTool::new(Arc::new(FirstAnswer::new(vec![page.clone(), terminal(20)])))
            .call(ARGS, ExecutionContext::default())
            .await;
    assert_eq!(page.heard(), Some(Decision::Accepted));
    assert_eq!(outcome.text(), no_answer());
}

#[tokio::test]
async fn the_first_offer_wins_an_invalid_one_leaves_the_race_open() {
    let decide = Decide::new(&request());
    let page = decide.named("the web page");
    let invalid = Answers {
        answers: vec![AnswerItem::selected("go", ["Maybe"])],
    };
    let Decision::Invalid(why) = page.offer(Offer::Answers(invalid)).await else {
        panic!("an unknown label is invalid")
    };
    assert_eq!(
        why.to_string(),
        r#""Maybe" is not one of the options of question "go""#
    );
    let Decision::Invalid(why) = page.offer(Offer::Answers(Answers::default())).await else {
        panic!("an empty submission is invalid")
    };
    assert_eq!(
        why.to_string(),
        r#"question "go" is not answered; answer it, or skip it explicitly (nothing selected, no own answer)"#
    );
    assert_eq!(decide.settled(), None);

    let (first, second) = futures::join!(
        page.offer(Offer::Answers(yes())),
        decide.offer(Offer::Dismiss)
    );
    let won = Settled::Answered {
        answers: yes(),
        by: Some("the web page".to_owned()),
    };
    assert_eq!(first, Decision::Accepted);
    assert_eq!(second, Decision::Refused(won.clone()));
    assert_eq!(decide.close(Settled::Aborted).await, won, "settled stays");
}

#[tokio::test]
async fn a_dismissal_offered_through_the_race_is_the_dismissed_outcome() {
    let dismisses = Arc::new(
        Offering::new(Reply::Dismiss, Submits::AtOnce).returning(Err(AskError::Dismissed)),
    );
    let outcome = AskUserQuestionTool::new(dismisses.clone())
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(dismisses.heard(), Some(Decision::Accepted));
    assert_eq!(outcome, Outcome::Dismissed);
}

#[tokio::test]
async fn the_recorder_keeps_the_outcome_before_it_is_accepted() {
    let store = Arc::new(Recorder::new().failing(1));
    let decide = Decide::with_recorder(&request(), Some(store.clone()));
    assert_eq!(
        decide.offer(Offer::Answers(yes())).await,
        Decision::NotRecorded("disk full".to_owned())
    );
    assert_eq!(decide.settled(), None, "not recorded, not taken");
    assert_eq!(
        decide.offer(Offer::Answers(yes())).await,
        Decision::Accepted
    );
    let won = Settled::Answered {
        answers: yes(),
        by: None,
    };
    assert_eq!(store.kept(), vec![won.clone()]);
    assert_eq!(decide.settled(), Some(won));
}

#[tokio::test(start_paused = true)]
async fn the_tool_records_a_timeout_and_a_single_step_answer() {
    let store = Arc::new(Recorder::new());
    let page = acknowledging(Submits::OnCancel);
    let outcome = tool(page, 50)
        .with_recorder(store.clone())
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(outcome, Outcome::TimedOut(Duration::from_millis(50)));
    let outcome = AskUserQuestionTool::new(terminal(1))
        .with_recorder(store.clone())
        .call(ARGS, ExecutionContext::default())
        .await;
    assert_eq!(outcome.text(), YES);
    assert_eq!(
        store.kept(),
        vec![
            Settled::TimedOut(Duration::from_millis(50)),
            Settled::Answered {
                answers: yes(),
                by: None
            }
        ]
    );
}

/// A remote side (a hub) whose human answered "No" before the ending reached it; records the
/// endings it was closed with.
#[derive(Default)]
struct AnsweredRemotely {
    closed_with: Mutex<Vec<Settled>>,
}

impl RemoteOutcome for AnsweredRemotely {
    fn close<'a>(&'a self, ending: &'a Settled) -> BoxFuture<'a, Option<Offer>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.closed_with.lock().unwrap().push(ending.clone());
            Some(Offer::Answers(no()))
        })
    }
}

/// docs/contract.md §8 "Exactly once, made precise": an ending that loses the remote side's
/// compare-and-set to the human's answer yields that answer (recorded, signed with the
/// registering handle's name); a caller that went away (aborted) leaves the remote alone.
#[tokio::test]
async fn an_ending_that_loses_to_a_remote_answer_yields_it() {
    let store = Arc::new(Recorder::new());
    let remote = Arc::new(AnsweredRemotely::default());
    let decide = Decide::with_recorder(&request(), Some(store.clone()));
    decide.named("the hub").add_remote(remote.clone());
    let settled = decide
        .close(Settled::TimedOut(Duration::from_secs(2)))
        .await;
    let taken = Settled::Answered {
        answers: no(),
        by: Some("the hub".to_owned()),
    };
    assert_eq!(settled, taken);
    assert_eq!(store.kept(), vec![taken]);
    assert_eq!(
        *remote.closed_with.lock().unwrap(),
        vec![Settled::TimedOut(Duration::from_secs(2))]
    );

    let remote = Arc::new(AnsweredRemotely::default());
    let decide = Decide::new(&request());
    decide.add_remote(remote.clone());
    assert_eq!(decide.close(Settled::Aborted).await, Settled::Aborted);
    assert!(remote.closed_with.lock().unwrap().is_empty());
}

/// A remote answer the local store cannot keep is not printed: the ending stands (the remote
/// keeps the answer, undelivered, for the retry).
#[tokio::test]
async fn a_remote_answer_that_cannot_be_recorded_leaves_the_ending() {
    let store = Arc::new(Recorder::new().failing(1));
    let decide = Decide::with_recorder(&request(), Some(store.clone()));
    decide.add_remote(Arc::new(AnsweredRemotely::default()));
    let ending = Settled::TimedOut(Duration::from_secs(2));
    assert_eq!(decide.close(ending.clone()).await, ending);
}
