//! The seam's shape (docs/contract.md §4): one required method, forwarding pointers, the
//! one-step adapter, and the provided `ask` in a race of its own.

use std::sync::{Arc, Mutex};

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, AskUserQuestionTool, BoxFuture,
    CancellationToken, Decide, Decision, ExecutionContext, OneStep, Settled, UserInteraction,
};
use ask_user_test_support::answerers::selected;

const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

fn request() -> AskUserQuestionRequest {
    ask_user_core::decode(ARGS, &ask_user_core::Limits::default())
        .unwrap()
        .request
}

fn yes() -> Answers {
    selected("go", "Yes")
}

/// Offers "Yes" signed with its name and remembers what it heard; says it is unavailable.
#[derive(Default)]
struct Signs {
    heard: Mutex<Option<Decision>>,
}

impl UserInteraction for Signs {
    fn ask_decided<'a>(
        &'a self,
        _: &'a AskUserQuestionRequest,
        _: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            let decision = decide
                .named("the page")
                .offer(ask_user_core::Offer::Answers(yes()))
                .await;
            *self.heard.lock().unwrap() = Some(decision);
            Ok(yes())
        })
    }

    fn name(&self) -> Option<&str> {
        Some("the page")
    }

    fn is_available(&self) -> bool {
        false
    }
}

/// The caller's race, as an answerer behind `answerer` settled it.
async fn race_through(answerer: &dyn UserInteraction) -> Option<Settled> {
    let request = request();
    let decide = Decide::new(&request);
    let result = answerer
        .ask_decided(&request, CancellationToken::new(), decide.clone())
        .await;
    assert_eq!(result, Ok(yes()));
    decide.settled()
}

fn answered_in_the_page() -> Option<Settled> {
    Some(Settled::Answered {
        answers: yes(),
        by: Some("the page".into()),
    })
}

#[tokio::test]
async fn arc_box_and_references_forward_the_race_the_name_and_availability() {
    let inner = Arc::new(Signs::default());
    let by_arc: Arc<Signs> = inner.clone();
    let by_box: Box<dyn UserInteraction> = Box::new(Signs::default());
    let by_ref: &Signs = &inner;
    let nested: Box<Arc<dyn UserInteraction>> = Box::new(inner.clone());
    let pointers: [&dyn UserInteraction; 4] = [&by_arc, &by_box, &by_ref, &nested];
    for pointer in pointers {
        assert_eq!(pointer.name(), Some("the page"));
        assert!(!pointer.is_available());
        assert_eq!(race_through(pointer).await, answered_in_the_page());
    }
    assert_eq!(*inner.heard.lock().unwrap(), Some(Decision::Accepted));
}

#[tokio::test]
async fn the_provided_ask_runs_the_answerer_in_a_race_of_its_own() {
    let signs = Signs::default();
    let answers = signs
        .ask(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(answers, yes());
    assert_eq!(*signs.heard.lock().unwrap(), Some(Decision::Accepted));
}

#[tokio::test]
async fn a_one_step_closure_is_an_answerer_whose_answer_the_tool_offers() {
    let asked = Arc::new(Mutex::new(0));
    let counted = asked.clone();
    let yes_sayer = OneStep::new(move |request: &AskUserQuestionRequest, _| {
        *counted.lock().unwrap() += 1;
        let id = request.questions()[0].id.clone();
        Box::pin(async move {
            Ok(Answers {
                answers: vec![AnswerItem::selected(&id, ["Yes"])],
            })
        })
    })
    .named("the script");
    assert_eq!(yes_sayer.name(), Some("the script"));
    assert!(yes_sayer.is_available());
    let tool = AskUserQuestionTool::new(Arc::new(yes_sayer));
    let outcome = tool.call(ARGS, ExecutionContext::default()).await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#
    );
    assert_eq!(*asked.lock().unwrap(), 1);
}
