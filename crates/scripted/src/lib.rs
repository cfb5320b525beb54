//! # ask-user-scripted
//!
//! Answerers that need no human, for tests, automation and unattended runs:
//!
//! - [`Scripted`]: fixed answers from data (`{"answers":[…]}`, the output shape) or a closure;
//! - [`PickRecommended`]: every question answered with its `(Recommended)` option. A host must
//!   opt in explicitly; it is never a default, because it answers without a human.
//!
//! Their answers go through the core's normalisation like any other answerer's, so a script
//! that names an unknown id or label, or leaves a question out, makes the call fail rather
//! than reach the model. Data must name every question; a skip is explicit
//! (`{"id":"x","selected":[]}`), so `{"answers":[]}` is never an answer.
//!
//! ```
//! use std::sync::Arc;
//! use ask_user_core::{AskUserQuestionTool, ExecutionContext};
//! use ask_user_scripted::Scripted;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let script = Scripted::from_json(r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#).unwrap();
//! let tool = AskUserQuestionTool::new(Arc::new(script));
//! let outcome = tool
//!     .call(r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#,
//!           ExecutionContext::default())
//!     .await;
//! assert_eq!(outcome.text(), r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#);
//! # });
//! ```
#![deny(missing_docs)]

use std::fmt;
use std::sync::Arc;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken,
    UserInteraction,
};

type Script = dyn Fn(&AskUserQuestionRequest) -> Result<Answers, AskError> + Send + Sync;

/// Answers from data or a closure, without a human.
#[derive(Clone)]
pub struct Scripted {
    script: Arc<Script>,
}

impl fmt::Debug for Scripted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scripted").finish_non_exhaustive()
    }
}

impl Scripted {
    /// Always answers with these answers (normalised against each request by the core: an
    /// item for every question, a skip written as `"selected":[]`).
    pub fn from_answers(answers: Answers) -> Self {
        Self::from_fn(move |_| Ok(answers.clone()))
    }

    /// Reads answers in the output shape, `{"answers":[{"id","selected","custom"?}]}`.
    ///
    /// Fails with serde_json's message when the text is not of that shape.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        Ok(Self::from_answers(serde_json::from_str(text)?))
    }

    /// Answers by calling `script` with each request; its error is the ask's error.
    pub fn from_fn<F>(script: F) -> Self
    where
        F: Fn(&AskUserQuestionRequest) -> Result<Answers, AskError> + Send + Sync + 'static,
    {
        Self {
            script: Arc::new(script),
        }
    }
}

impl UserInteraction for Scripted {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(AskError::Cancelled);
            }
            (self.script)(request)
        })
    }
}

/// Answers every question with its recommended option; a question without one (or a
/// free-text question) is skipped. For unattended runs where the host opted in explicitly.
#[derive(Debug, Clone, Copy, Default)]
pub struct PickRecommended;

impl PickRecommended {
    /// The answers this answerer gives for `request`.
    pub fn answers(request: &AskUserQuestionRequest) -> Answers {
        let answers = request
            .questions()
            .iter()
            .map(|q| match q.recommended() {
                Some(i) => AnswerItem::selected(&q.id, [q.options[i].label.clone()]),
                None => AnswerItem::skipped(&q.id),
            })
            .collect();
        Answers { answers }
    }
}

impl UserInteraction for PickRecommended {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(AskError::Cancelled);
            }
            Ok(Self::answers(request))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_user_core::{AskUserQuestionTool, ExecutionContext};
    use pretty_assertions::assert_eq;

    const ARGS: &str = r#"{"questions":[{"id":"db","question":"Which?","options":["SQLite","PostgreSQL (Recommended)"]},{"id":"name","question":"Name?"},{"id":"tags","question":"Tags?","multi_select":true,"options":["a","b"]}]}"#;

    fn call(answerer: impl UserInteraction + 'static) -> String {
        let tool = AskUserQuestionTool::new(Arc::new(answerer));
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(tool.call(ARGS, ExecutionContext::default()))
            .text()
    }

    #[test]
    fn pick_recommended_picks_it_wherever_it_stands_and_skips_the_rest() {
        assert_eq!(
            call(PickRecommended),
            r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"name","selected":[]},{"id":"tags","selected":[]}]}"#
        );
    }

    #[test]
    fn scripted_answers_are_normalised_by_the_core() {
        let script = Scripted::from_json(
            r#"{"answers":[{"id":"tags","selected":["b","a"],"custom":" c "},{"id":"name","selected":[]},{"id":"db","selected":["SQLite"]}]}"#,
        )
        .unwrap();
        assert_eq!(
            call(script),
            r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"name","selected":[]},{"id":"tags","selected":["a","b"],"custom":"c"}]}"#
        );
    }

    #[test]
    fn a_script_that_does_not_fit_fails_the_call() {
        let script = Scripted::from_json(r#"{"answers":[{"id":"nope","selected":[]}]}"#).unwrap();
        assert_eq!(
            call(script),
            r#"Error: the answer did not fit the questions (the answer names an unknown question id "nope"); ask again"#
        );
    }

    /// A question left out is not a skip; data must skip explicitly.
    #[test]
    fn a_script_that_omits_a_question_fails_the_call() {
        let cases = [
            (r#"{"answers":[]}"#, "db"),
            (
                r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"tags","selected":[]}]}"#,
                "name",
            ),
        ];
        for (data, omitted) in cases {
            assert_eq!(
                call(Scripted::from_json(data).unwrap()),
                format!(
                    r#"Error: the answer did not fit the questions (question "{omitted}" is not answered; answer it, or skip it explicitly (nothing selected, no own answer)); ask again"#
                ),
                "{data}"
            );
        }
    }

    #[test]
    fn a_closure_sees_the_request() {
        let script = Scripted::from_fn(|request| {
            let mut answers = PickRecommended::answers(request);
            answers.answers[1] = AnswerItem::custom(&request.questions()[1].id, "from closure");
            Ok(answers)
        });
        assert!(call(script).contains(r#"{"id":"name","selected":[],"custom":"from closure"}"#));
        assert_eq!(
            call(Scripted::from_fn(|_| Err(AskError::Dismissed))),
            ask_user_core::DISMISSED_TEXT
        );
    }

    #[test]
    fn answers_that_are_not_in_the_output_shape_are_refused() {
        let err = Scripted::from_json(r#"{"answers":[{"selected":[]}]}"#).unwrap_err();
        assert_eq!(err.to_string(), "missing field `id` at line 1 column 27");
    }
}
