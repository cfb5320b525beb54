//! `ask_user_question` as a rig tool (rig-core 0.44's [`rig_core::tool::Tool`]).
//!
//! The definition is the core's (name, description, parameters byte for byte); the arguments
//! reach the core's lenient decoding as the JSON value rig parsed; an answer is the tool's
//! output text and every error outcome is a rig tool error whose model-visible text is exactly
//! the core's `Error: …` line (docs/contract.md §5), with the outcome code beside it.

use std::fmt;
use std::sync::Arc;

use ask_user_core::definition::{DESCRIPTION, NAME, PARAMETERS};
use ask_user_core::{AskUserQuestionTool, ExecutionContext, Outcome, OutcomeCode, UserInteraction};
use rig_core::tool::{Tool, ToolContext, ToolErrorKind, ToolExecutionError};

/// The `ask_user_question` tool for a rig agent: `AgentBuilder::new(model).tool(AskUser::new(answerer))`.
///
/// Each call runs [`AskUserQuestionTool::call`] with an [`ExecutionContext`]: the one the run
/// attached to rig's tool context as a scope (`ToolContext::with_scope(Arc::new(context))`,
/// for the turn's cancellation token or a delegated caller), else a fresh default one.
/// Dropping the call (rig cancelling the run) drops the ask with it (the terminal answerer
/// restores the terminal on drop); to withdraw a question explicitly, cancel the context's
/// token. When nobody can answer here (`AskUser::core().is_available()` is `false`), leave the
/// tool out of the agent; a call would read the `NO_PROVIDER` text.
///
/// A human answers one batch at a time: when rig runs calls concurrently
/// (`tool_concurrency(n)`), the asks of this tool (and of its clones) still wait for each
/// other, in the order they started.
#[derive(Debug, Clone)]
pub struct AskUser {
    tool: AskUserQuestionTool,
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl AskUser {
    /// The tool asking through `answerer`, with the core's default limits and no time budget.
    pub fn new(answerer: impl UserInteraction + 'static) -> Self {
        Self::from_tool(AskUserQuestionTool::new(Arc::new(answerer)))
    }

    /// The tool as configured in the core (limits, time budget, a `FirstAnswer` of several
    /// answerers).
    pub fn from_tool(tool: AskUserQuestionTool) -> Self {
        Self {
            tool,
            one_at_a_time: Arc::default(),
        }
    }

    /// The core tool behind this adapter.
    pub fn core(&self) -> &AskUserQuestionTool {
        &self.tool
    }
}

impl From<AskUserQuestionTool> for AskUser {
    fn from(tool: AskUserQuestionTool) -> Self {
        Self::from_tool(tool)
    }
}

/// An outcome the model reads as an error (every [`Outcome`] but an answer).
///
/// Its display is exactly the model-facing text ([`Outcome::text`]); rig shows that text to
/// the model as the tool result, flagged as an error, with [`OutcomeCode`] as the error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskUserError {
    outcome: Outcome,
}

impl AskUserError {
    /// The outcome, e.g. [`Outcome::Dismissed`].
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Its code, e.g. `ASK_CANCELLED`.
    pub fn code(&self) -> OutcomeCode {
        // Only error outcomes become an AskUserError; `AnswerFailed` is never reached.
        self.outcome.code().unwrap_or(OutcomeCode::AnswerFailed)
    }

    /// The rig error kind the outcome maps to (for rig's policy and telemetry; the model reads
    /// the text, not the kind).
    pub fn kind(&self) -> ToolErrorKind {
        match self.code() {
            OutcomeCode::InvalidArgs => ToolErrorKind::InvalidArgs,
            OutcomeCode::AskCancelled | OutcomeCode::AskAborted => ToolErrorKind::Cancelled,
            OutcomeCode::AskTimedOut => ToolErrorKind::Timeout,
            OutcomeCode::NoProvider => ToolErrorKind::NotFound,
            OutcomeCode::DelegatedCaller => ToolErrorKind::PermissionDenied,
            _ => ToolErrorKind::Other,
        }
    }
}

impl fmt::Display for AskUserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.outcome.text())
    }
}

impl std::error::Error for AskUserError {}

impl From<AskUserError> for ToolExecutionError {
    /// The model-visible text is the outcome's text verbatim; the code travels beside it.
    fn from(error: AskUserError) -> Self {
        ToolExecutionError::new(error.kind(), error.to_string())
            .with_code(error.code().as_str())
            .with_retryable(false)
    }
}

impl Tool for AskUser {
    const NAME: &'static str = NAME;
    /// Any JSON: the core decodes leniently (docs/contract.md §3) and refuses with its own text.
    type Args = serde_json::Value;
    /// The answer as compact JSON ([`ask_user_core::render`]), sent as literal text.
    type Output = String;
    type Error = AskUserError;

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn parameters(&self) -> serde_json::Value {
        // The core's constant schema; a failure to parse it would be a core bug caught by the
        // tests, so the fallback is never reached.
        serde_json::from_str(PARAMETERS).unwrap_or_default()
    }

    fn map_error(&self, error: Self::Error) -> ToolExecutionError {
        error.into()
    }

    async fn call(
        &self,
        context: &mut ToolContext,
        args: Self::Args,
    ) -> Result<Self::Output, Self::Error> {
        let execution = context
            .scope::<ExecutionContext>()
            .map(|context| context.as_ref().clone())
            .unwrap_or_default();
        let _turn = self.one_at_a_time.lock().await;
        match self.tool.call(args, execution).await {
            outcome @ Outcome::Answered(_) => Ok(outcome.text()),
            outcome => Err(AskUserError { outcome }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ask_user_core::definition::{ProviderFormat, definition};
    use ask_user_core::{
        Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, InvalidArguments,
    };
    use pretty_assertions::assert_eq;
    use rig_core::tool::{ErasedTool, ToolResult, tool_definition};

    use super::*;

    const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

    /// Ends every ask with `error`.
    struct Fails(fn() -> AskError);

    impl UserInteraction for Fails {
        fn ask_decided<'a>(
            &'a self,
            _: &'a AskUserQuestionRequest,
            _: CancellationToken,
            _decide: ask_user_core::Decide,
        ) -> BoxFuture<'a, Result<Answers, AskError>> {
            let error = (self.0)();
            Box::pin(async move { Err(error) })
        }
    }

    /// Never answers.
    struct Silent;

    impl UserInteraction for Silent {
        fn ask_decided<'a>(
            &'a self,
            _: &'a AskUserQuestionRequest,
            _: CancellationToken,
            _decide: ask_user_core::Decide,
        ) -> BoxFuture<'a, Result<Answers, AskError>> {
            Box::pin(std::future::pending())
        }
    }

    async fn execute(tool: &AskUser, arguments: &str, context: &mut ToolContext) -> ToolResult {
        ErasedTool::execute(tool, arguments.to_owned(), context).await
    }

    #[test]
    fn the_definition_is_the_cores() {
        let tool = AskUser::new(Silent);
        let rig = tool_definition(&tool);
        let chat = serde_json::json!({"type": "function", "function": {
            "name": rig.name.to_string(), "description": rig.description, "parameters": rig.parameters}});
        assert_eq!(chat.to_string(), definition(ProviderFormat::OpenAiChat));
    }

    /// Every error outcome: rig's model-visible text is the core's text, with kind and code.
    #[tokio::test(start_paused = true)]
    async fn every_error_outcome_is_a_rig_error_with_the_exact_text() {
        let cases: Vec<(AskUser, &str, ToolContext, ToolErrorKind, &str, String)> = vec![
            (
                AskUser::new(Silent),
                r#"{"questions":[]}"#,
                ToolContext::new(),
                ToolErrorKind::InvalidArgs,
                "INVALID_ARGS",
                "Error: invalid arguments: questions: empty, add at least one question".to_owned(),
            ),
            (
                AskUser::new(Fails(|| AskError::Dismissed)),
                ARGS,
                ToolContext::new(),
                ToolErrorKind::Cancelled,
                "ASK_CANCELLED",
                ask_user_core::DISMISSED_TEXT.to_owned(),
            ),
            (
                AskUser::from_tool(
                    AskUserQuestionTool::new(Arc::new(Silent))
                        .with_timeout(Some(Duration::from_secs(90))),
                ),
                ARGS,
                ToolContext::new(),
                ToolErrorKind::Timeout,
                "ASK_TIMED_OUT",
                "Error: no answer within 1m30s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later.".to_owned(),
            ),
            (
                AskUser::new(Fails(|| AskError::Unavailable("no tty".to_owned()))),
                ARGS,
                ToolContext::new(),
                ToolErrorKind::NotFound,
                "NO_PROVIDER",
                ask_user_core::NO_PROVIDER_TEXT.to_owned(),
            ),
            (
                AskUser::new(Silent),
                ARGS,
                ToolContext::new().with_scope(Arc::new(ExecutionContext::default().with_caller(
                    ask_user_core::Caller::Delegated { parent: "p".to_owned() },
                ))),
                ToolErrorKind::PermissionDenied,
                "DELEGATED_CALLER",
                ask_user_core::DELEGATED_CALLER_TEXT.to_owned(),
            ),
            (
                AskUser::new(Silent),
                ARGS,
                {
                    let cancel = CancellationToken::new();
                    cancel.cancel();
                    ToolContext::new().with_scope(Arc::new(ExecutionContext::new(cancel)))
                },
                ToolErrorKind::Cancelled,
                "ASK_ABORTED",
                ask_user_core::ABORTED_TEXT.to_owned(),
            ),
            (
                AskUser::new(Fails(|| AskError::Failed("the page closed".to_owned()))),
                ARGS,
                ToolContext::new(),
                ToolErrorKind::Other,
                "ANSWER_FAILED",
                "Error: the page closed".to_owned(),
            ),
        ];
        for (tool, arguments, mut context, kind, code, text) in cases {
            let result = execute(&tool, arguments, &mut context).await;
            assert!(result.is_error(), "{code}");
            let error = result.error().unwrap();
            assert_eq!(
                (
                    error.kind(),
                    error.code(),
                    error.model_feedback(),
                    error.message()
                ),
                (kind, Some(code), Some(text.as_str()), text.as_str())
            );
            assert_eq!(error.retryable(), Some(false));
        }
    }

    /// Answers "Yes" after a while, recording which question it asked and how many asks were
    /// in flight at once.
    #[derive(Default)]
    struct Slow {
        in_flight: std::sync::Mutex<(usize, usize, Vec<String>)>,
    }

    impl UserInteraction for Slow {
        fn ask_decided<'a>(
            &'a self,
            request: &'a AskUserQuestionRequest,
            _: CancellationToken,
            _decide: ask_user_core::Decide,
        ) -> BoxFuture<'a, Result<Answers, AskError>> {
            Box::pin(async move {
                let id = request.questions()[0].id.clone();
                {
                    let mut state = self.in_flight.lock().unwrap();
                    state.0 += 1;
                    state.1 = state.1.max(state.0);
                    state.2.push(id.clone());
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.in_flight.lock().unwrap().0 -= 1;
                Ok(Answers {
                    answers: vec![ask_user_core::AnswerItem::selected(&id, ["Yes"])],
                })
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_calls_are_asked_one_at_a_time_in_order() {
        let slow = Arc::new(Slow::default());
        let tool = AskUser::from_tool(AskUserQuestionTool::new(slow.clone()));
        let clone = tool.clone();
        let (mut a, mut b) = (ToolContext::new(), ToolContext::new());
        let (first, second) = tokio::join!(
            execute(&tool, ARGS, &mut a),
            execute(
                &clone,
                r#"{"questions":[{"id":"again","question":"Sure?","options":["Yes","No"]}]}"#,
                &mut b
            ),
        );
        assert!(first.is_success() && second.is_success());
        let state = slow.in_flight.lock().unwrap();
        assert_eq!(
            (state.1, state.2.clone()),
            (1, vec!["go".to_owned(), "again".to_owned()])
        );
    }

    #[tokio::test]
    async fn an_answer_is_the_output_text_and_a_direct_call_keeps_the_outcome() {
        let tool = AskUser::new(
            ask_user_scripted::Scripted::from_json(
                r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#,
            )
            .unwrap(),
        );
        let result = execute(&tool, ARGS, &mut ToolContext::new()).await;
        assert!(result.is_success());
        assert_eq!(
            result.output().as_text(),
            Some(r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#)
        );

        let error = Tool::call(
            &tool,
            &mut ToolContext::new(),
            serde_json::json!({"questions": []}),
        )
        .await
        .unwrap_err();
        assert!(matches!(
            error.outcome(),
            Outcome::InvalidArguments(InvalidArguments { .. })
        ));
        assert_eq!(error.code(), OutcomeCode::InvalidArgs);
    }
}
