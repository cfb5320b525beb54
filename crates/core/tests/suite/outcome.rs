//! Every outcome of docs/contract.md §5 through the tool: text, code and exit status, pinned.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionTool, Caller, CancellationToken,
    ExecutionContext, Outcome, OutcomeCode, UserInteraction, format_duration,
};
use pretty_assertions::assert_eq;

use ask_user_test_support::answerers::{Fixed, Waiting};

const ARGS: &str = r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]},{"id":"name","question":"Name?"}]}"#;

fn tool(answerer: Arc<dyn UserInteraction>) -> AskUserQuestionTool {
    AskUserQuestionTool::new(answerer)
}

/// (text, code, exit status) of one call.
async fn run(
    tool: &AskUserQuestionTool,
    context: ExecutionContext,
) -> (String, Option<&'static str>, i32) {
    let outcome = tool.call(ARGS, context).await;
    (
        outcome.text(),
        outcome.code().map(OutcomeCode::as_str),
        outcome.exit_code(),
    )
}

/// (text, code, exit status) of one call whose answerer fails with `error`.
async fn run_failing(error: AskError) -> (String, Option<&'static str>, i32) {
    let t = tool(Arc::new(Fixed::new(Err(error))));
    run(&t, ExecutionContext::default()).await
}

#[tokio::test]
async fn answered() {
    let answers = Answers {
        answers: vec![
            AnswerItem::selected("db", ["PostgreSQL (Recommended)"]),
            AnswerItem::custom("name", "billing-api"),
        ],
    };
    let t = tool(Arc::new(Fixed::new(Ok(answers))));
    assert_eq!(
        run(&t, ExecutionContext::default()).await,
        (
            r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"name","selected":[],"custom":"billing-api"}]}"#.to_owned(),
            None,
            0
        )
    );
    let outcome = t.call(ARGS, ExecutionContext::default()).await;
    assert!(!outcome.is_error());
    assert_eq!(
        outcome.structured(),
        Some(
            serde_json::json!({"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"name","selected":[],"custom":"billing-api"}]})
        )
    );
}

#[tokio::test]
async fn invalid_arguments_never_reach_the_answerer() {
    let waiting = Arc::new(Waiting::new());
    let t = tool(waiting.clone());
    let outcome = t
        .call(r#"{"questions":[]}"#, ExecutionContext::default())
        .await;
    assert_eq!(
        (
            outcome.text(),
            outcome.code(),
            outcome.exit_code(),
            outcome.structured()
        ),
        (
            "Error: invalid arguments: questions: empty, add at least one question".to_owned(),
            Some(OutcomeCode::InvalidArgs),
            3,
            None
        )
    );
    assert_eq!(waiting.asked(), 0);
}

#[tokio::test]
async fn dismissed() {
    let t = tool(Arc::new(Fixed::new(Err(AskError::Dismissed))));
    assert_eq!(
        run(&t, ExecutionContext::default()).await,
        ("Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on.".to_owned(), Some("ASK_CANCELLED"), 4)
    );
}

#[tokio::test(start_paused = true)]
async fn timed_out_cancels_the_answerer() {
    let waiting = Arc::new(Waiting::new());
    let t = tool(waiting.clone()).with_timeout(Some(Duration::from_secs(300)));
    assert_eq!(
        run(&t, ExecutionContext::default()).await,
        ("Error: no answer within 5m; this is not approval. Do not act as if the user agreed: continue without it, or ask again later.".to_owned(), Some("ASK_TIMED_OUT"), 5)
    );
    assert!(
        waiting.withdrawn(),
        "the question must be withdrawn when the budget runs out"
    );
}

#[tokio::test]
async fn no_provider_when_unavailable() {
    let unavailable = Arc::new(Waiting::new().unavailable());
    let expected = ("Error: no way to ask the user is available; ask your question in plain text in your reply instead.".to_owned(), Some("NO_PROVIDER"), 6);
    assert_eq!(
        run(&tool(unavailable.clone()), ExecutionContext::default()).await,
        expected
    );
    assert_eq!(unavailable.asked(), 0);
    // An answerer that finds out only when asked.
    let late = tool(Arc::new(Fixed::new(Err(AskError::Unavailable(
        "no terminal".into(),
    )))));
    assert_eq!(run(&late, ExecutionContext::default()).await, expected);
}

#[tokio::test]
async fn delegated_caller_is_refused_before_anyone_is_asked() {
    let waiting = Arc::new(Waiting::new());
    let context = ExecutionContext::default().with_caller(Caller::Delegated {
        parent: "planner".into(),
    });
    assert_eq!(
        run(&tool(waiting.clone()), context).await,
        ("Error: sub-agents cannot ask the user; put the question in your final result so the agent that started you can ask it.".to_owned(), Some("DELEGATED_CALLER"), 7)
    );
    assert_eq!(waiting.asked(), 0);
}

#[tokio::test]
async fn aborted_before_the_ask() {
    let waiting = Arc::new(Waiting::new());
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        run(&tool(waiting.clone()), ExecutionContext::new(cancel)).await,
        (
            "Error: ask_user_question was aborted before the user answered".to_owned(),
            Some("ASK_ABORTED"),
            130
        )
    );
    assert_eq!(waiting.asked(), 0);
}

#[tokio::test]
async fn aborted_during_the_ask_withdraws_the_question() {
    let waiting = Arc::new(Waiting::new());
    let cancel = CancellationToken::new();
    let t = tool(waiting.clone());
    let call = tokio::spawn({
        let cancel = cancel.clone();
        async move { t.call(ARGS, ExecutionContext::new(cancel)).await }
    });
    while waiting.asked() == 0 {
        tokio::task::yield_now().await;
    }
    cancel.cancel();
    assert_eq!(call.await.unwrap(), Outcome::Aborted);
    assert!(waiting.withdrawn());
}

#[tokio::test]
async fn answer_failed() {
    assert_eq!(
        run_failing(AskError::Failed("the terminal closed".into())).await,
        (
            "Error: the terminal closed".to_owned(),
            Some("ANSWER_FAILED"),
            1
        )
    );
}

#[tokio::test]
async fn a_store_that_is_gone_has_its_own_code_and_exit_status() {
    assert_eq!(
        run_failing(AskError::StoreGone(
            "store /s.sqlite3: the store file was deleted or replaced while this ask waited, so no inbox can see it any more; ask again".into(),
        ))
        .await,
        (
            "Error: store /s.sqlite3: the store file was deleted or replaced while this ask waited, so no inbox can see it any more; ask again".to_owned(),
            Some("STORE_GONE"),
            8
        )
    );
}

#[tokio::test]
async fn an_answer_that_does_not_fit_is_an_error_not_an_answer() {
    let wrong = Answers {
        answers: vec![AnswerItem::selected("db", ["Oracle"])],
    };
    let t = tool(Arc::new(Fixed::new(Ok(wrong))));
    assert_eq!(
        run(&t, ExecutionContext::default()).await,
        (r#"Error: the answer did not fit the questions ("Oracle" is not one of the options of question "db"); ask again"#.to_owned(), Some("ANSWER_FAILED"), 1)
    );
}

#[test]
fn durations_read_as_people_write_them() {
    let cases = [
        (300_000, "5m"),
        (90_000, "1m30s"),
        (3_600_000, "1h"),
        (3_723_000, "1h2m3s"),
        (1_500, "1.5s"),
        (250, "250ms"),
        (1_234, "1234ms"),
        (30_000, "30s"),
    ];
    for (millis, text) in cases {
        assert_eq!(format_duration(Duration::from_millis(millis)), text);
    }
}
