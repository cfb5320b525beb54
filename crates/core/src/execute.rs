//! One tool call from raw arguments to an [`Outcome`] (docs/contract.md §1, §4, §5): decode, validate,
//! guard the caller, ask through the seam under an optional budget, normalise.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::answer::Answers;
use crate::decision::{Decide, Decision, Offer, RecordOutcome, Settled};
use crate::decode::{Arguments, decode};
use crate::interaction::{AskError, UserInteraction, ask_catching_panics};
use crate::outcome::Outcome;
use crate::request::AskUserQuestionRequest;
use crate::validate::Limits;

/// How long answerers get to withdraw a question after a timeout or an abort.
pub(crate) const WITHDRAW_GRACE: Duration = Duration::from_secs(2);

/// Who is calling the tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Caller {
    /// The agent that talks with the human (the default).
    #[default]
    Agent,
    /// A sub-agent owned by another agent; refused before any human is asked.
    Delegated {
        /// Who delegated, for logs.
        parent: String,
    },
}

/// What the host knows about one call: the turn's cancellation token and the caller.
#[derive(Debug, Clone, Default)]
pub struct ExecutionContext {
    /// Fires when the turn is aborted; the ask is withdrawn and the outcome is
    /// [`Outcome::Aborted`].
    pub cancel: CancellationToken,
    /// Who is calling.
    pub caller: Caller,
}

impl ExecutionContext {
    /// A context for the main agent with this token.
    pub fn new(cancel: CancellationToken) -> Self {
        Self {
            cancel,
            caller: Caller::Agent,
        }
    }

    /// The same context for another caller.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// The outcome of a call that must not go further, decided before the arguments are even
    /// decoded: [`Outcome::DelegatedCaller`] for a delegated caller (first: it could never
    /// ask), then [`Outcome::Aborted`] for a turn already cancelled; `None` otherwise.
    /// [`AskUserQuestionTool::call`] and [`AskUserQuestionTool::ask`] check it first; hosts that
    /// decode themselves check it before decoding to keep the same precedence.
    pub fn refusal(&self) -> Option<Outcome> {
        if matches!(self.caller, Caller::Delegated { .. }) {
            return Some(Outcome::DelegatedCaller);
        }
        self.cancel.is_cancelled().then_some(Outcome::Aborted)
    }
}

/// The `ask_user_question` tool: an answerer (or a [`crate::FirstAnswer`] of several),
/// the caps and an optional time budget.
///
/// ```
/// # use std::sync::Arc;
/// # use ask_user_core::*;
/// # struct Yes;
/// # impl UserInteraction for Yes {
/// #     fn ask_decided<'a>(&'a self, r: &'a AskUserQuestionRequest, _: tokio_util::sync::CancellationToken, _: Decide)
/// #         -> BoxFuture<'a, Result<Answers, AskError>> {
/// #         Box::pin(async move { Ok(Answers { answers: vec![AnswerItem::selected(&r.questions()[0].id, ["Yes"])] }) })
/// #     }
/// # }
/// # tokio_test_block_on(async {
/// let tool = AskUserQuestionTool::new(Arc::new(Yes));
/// let outcome = tool
///     .call(r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#,
///           ExecutionContext::default())
///     .await;
/// assert_eq!(outcome.text(), r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#);
/// # });
/// # fn tokio_test_block_on(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone)]
pub struct AskUserQuestionTool {
    interaction: Arc<dyn UserInteraction>,
    limits: Limits,
    timeout: Option<Duration>,
    recorder: Option<Arc<dyn RecordOutcome>>,
}

impl std::fmt::Debug for AskUserQuestionTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskUserQuestionTool")
            .field("limits", &self.limits)
            .field("timeout", &self.timeout)
            .field("recorder", &self.recorder.is_some())
            .finish_non_exhaustive()
    }
}

impl AskUserQuestionTool {
    /// The tool asking through `interaction`, with default [`Limits`] and no time budget.
    pub fn new(interaction: Arc<dyn UserInteraction>) -> Self {
        Self {
            interaction,
            limits: Limits::default(),
            timeout: None,
            recorder: None,
        }
    }

    /// The same tool recording every outcome through `recorder` inside the decision, before a
    /// human's answer is accepted (and so before any answerer says "sent"); see
    /// [`crate::decision`]. A durable store plugs in here.
    pub fn with_recorder(mut self, recorder: Arc<dyn RecordOutcome>) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The same tool with other caps.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same tool with a time budget per call (`None`: wait for the human indefinitely).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// The caps in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether any answerer can reach a human now; when `false`, a host should leave the tool
    /// out of the model's list.
    pub fn is_available(&self) -> bool {
        self.interaction.is_available()
    }

    /// Runs one call: decode and validate `arguments`, then [`Self::ask`].
    pub async fn call(
        &self,
        arguments: impl Into<Arguments>,
        context: ExecutionContext,
    ) -> Outcome {
        if let Some(refused) = context.refusal() {
            return refused;
        }
        match decode(arguments, &self.limits) {
            Ok(decoded) => self.ask(&decoded.request, context).await,
            Err(invalid) => Outcome::InvalidArguments(invalid),
        }
    }

    /// Asks an already-validated request (for hosts that decode themselves, e.g. to log the
    /// leniencies): the caller guard, the budget, the seam, normalisation.
    ///
    /// Each call runs one race ([`crate::decision`]): the answerer (through
    /// [`UserInteraction::ask_decided`]) offers the human's answer, and the first outcome to
    /// settle the race is the one the model reads. Cancellation (`context.cancel`) or the
    /// budget running out settles it as [`Outcome::Aborted`] or [`Outcome::TimedOut`] and
    /// cancels the answerers — unless an answer was accepted first, which then stands (the
    /// human was told it was sent). An answer that does not fit the request gives
    /// [`Outcome::Failed`], never a partial answer. An answerer that panics gives
    /// [`Outcome::Failed`] too (the host keeps running).
    pub async fn ask(
        &self,
        request: &AskUserQuestionRequest,
        context: ExecutionContext,
    ) -> Outcome {
        if let Some(refused) = context.refusal() {
            return refused;
        }
        if !self.interaction.is_available() {
            return Outcome::NoProvider;
        }
        let decide = Decide::with_recorder(request, self.recorder.clone());
        // Only a budget needs its own token (to cancel the answerers without cancelling the
        // turn); otherwise the turn's token is the answerers' token.
        let asking = match self.timeout {
            Some(_) => context.cancel.child_token(),
            None => context.cancel.clone(),
        };
        let answer = ask_catching_panics(
            self.interaction.as_ref(),
            request,
            asking.clone(),
            decide.clone(),
        );
        tokio::pin!(answer);
        let budget = async {
            match self.timeout {
                Some(budget) => tokio::time::sleep(budget).await,
                None => std::future::pending().await,
            }
        };
        let stopped = tokio::select! {
            result = &mut answer => Ok(result),
            () = budget => Err(Settled::TimedOut(self.timeout.unwrap_or_default())),
            () = context.cancel.cancelled() => Err(Settled::Aborted),
        };
        match stopped {
            Ok(result) => settle(&decide, result, &context).await,
            Err(ending) => {
                // Settle first: an answer accepted a moment ago wins over the ending.
                let settled = decide.close(ending).await;
                // Let the answerers withdraw the question (and restore terminals).
                asking.cancel();
                let _ = tokio::time::timeout(WITHDRAW_GRACE, answer).await;
                outcome_of(settled)
            }
        }
    }
}

/// The outcome once the answerer's future returned `result`: its answer or dismissal is
/// offered to the race on its behalf (refused at once when it offered it itself), and what
/// settled the race is what the model reads. An ask that ended without a human decision
/// closes the race, so later offers are refused — unless one was accepted meanwhile.
async fn settle(
    decide: &Decide,
    result: Result<Answers, AskError>,
    context: &ExecutionContext,
) -> Outcome {
    let offer = match result {
        Ok(answers) => Offer::Answers(answers),
        Err(AskError::Dismissed) if !context.cancel.is_cancelled() => Offer::Dismiss,
        Err(error) => {
            let (ending, outcome) = match error {
                _ if context.cancel.is_cancelled() => (Settled::Aborted, Outcome::Aborted),
                AskError::Cancelled => (Settled::Aborted, Outcome::Aborted),
                AskError::Dismissed => (Settled::Aborted, Outcome::Aborted),
                AskError::Unavailable(_) => (Settled::Withdrawn, Outcome::NoProvider),
                AskError::Failed(message) => (Settled::Withdrawn, Outcome::Failed(message)),
                AskError::StoreGone(message) => (Settled::Withdrawn, Outcome::StoreGone(message)),
            };
            let settled = decide.close(ending).await;
            return if settled.is_human() {
                outcome_of(settled)
            } else {
                outcome
            };
        }
    };
    let failed = match decide.offer(offer).await {
        Decision::Accepted | Decision::Refused(_) => match decide.settled() {
            Some(settled) => return outcome_of(settled),
            None => Outcome::Failed("the answer was lost; ask again".to_owned()),
        },
        Decision::Invalid(invalid) => Outcome::Failed(format!(
            "the answer did not fit the questions ({invalid}); ask again"
        )),
        Decision::NotRecorded(why) => Outcome::Failed(format!(
            "the answer could not be recorded ({why}); ask again"
        )),
    };
    let settled = decide.close(Settled::Withdrawn).await;
    if settled.is_human() {
        outcome_of(settled)
    } else {
        failed
    }
}

/// What the model reads for a settled race. `Withdrawn` is only ever paired with the
/// outcome that withdrew it (see [`settle`]); on its own it reads as a failure.
fn outcome_of(settled: Settled) -> Outcome {
    match settled {
        Settled::Answered { answers, .. } => Outcome::Answered(answers),
        Settled::Dismissed { .. } => Outcome::Dismissed,
        Settled::TimedOut(budget) => Outcome::TimedOut(budget),
        Settled::Aborted => Outcome::Aborted,
        Settled::Withdrawn => {
            Outcome::Failed("the question was withdrawn before the user answered".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::answer::{AnswerItem, Answers};
    use crate::fan_out::FirstAnswer;
    use crate::interaction::BoxFuture;
    use crate::outcome::OutcomeCode;

    const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

    /// Panics while answering (`in_future`) or already while creating its future.
    struct Panics {
        in_future: bool,
    }

    impl UserInteraction for Panics {
        fn ask_decided<'a>(
            &'a self,
            _: &'a AskUserQuestionRequest,
            _: CancellationToken,
            _decide: crate::Decide,
        ) -> BoxFuture<'a, Result<Answers, AskError>> {
            if !self.in_future {
                panic!("no future for you");
            }
            Box::pin(async move {
                tokio::task::yield_now().await;
                panic!("{}", String::from("index out of bounds"))
            })
        }
    }

    /// Answers "Yes" after yielding once.
    struct Yes;

    impl UserInteraction for Yes {
        fn ask_decided<'a>(
            &'a self,
            request: &'a AskUserQuestionRequest,
            _: CancellationToken,
            _decide: crate::Decide,
        ) -> BoxFuture<'a, Result<Answers, AskError>> {
            Box::pin(async move {
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
                Ok(Answers {
                    answers: vec![AnswerItem::selected(&request.questions()[0].id, ["Yes"])],
                })
            })
        }
    }

    async fn call(interaction: Arc<dyn UserInteraction>) -> Outcome {
        AskUserQuestionTool::new(interaction)
            .call(ARGS, ExecutionContext::default())
            .await
    }

    #[tokio::test]
    async fn a_panicking_answerer_is_the_answer_failed_outcome() {
        let outcome = call(Arc::new(Panics { in_future: true })).await;
        assert_eq!(outcome.code(), Some(OutcomeCode::AnswerFailed));
        assert_eq!(
            outcome.text(),
            "Error: the answerer crashed (index out of bounds); ask your question in plain text in your reply instead"
        );
        let outcome = call(Arc::new(Panics { in_future: false })).await;
        assert_eq!(
            outcome.text(),
            "Error: the answerer crashed (no future for you); ask your question in plain text in your reply instead"
        );
    }

    #[tokio::test]
    async fn a_panicking_answerer_does_not_end_the_race() {
        let outcome = call(Arc::new(FirstAnswer::new(vec![
            Arc::new(Panics { in_future: true }),
            Arc::new(Panics { in_future: false }),
            Arc::new(Yes),
        ])))
        .await;
        assert_eq!(
            outcome.text(),
            r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#
        );
        let outcome = call(Arc::new(FirstAnswer::new(vec![Arc::new(Panics {
            in_future: true,
        })])))
        .await;
        assert_eq!(outcome.code(), Some(OutcomeCode::AnswerFailed));
    }
}
