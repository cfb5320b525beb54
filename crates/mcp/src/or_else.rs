//! [`OrElse`]: the client's form first, the other answerers when it cannot be shown
//! (docs/contract.md §6, MCP elicitation: fallback).

use std::sync::Arc;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};

/// Asks `first`; when it is unavailable — it could not reach the human, e.g. the MCP client
/// refused or failed to show its form — asks `then` with the same request and token, so the
/// question stays open and only moves. Every other result of `first` (an answer, a dismissal,
/// a cancellation, a failure) is the result.
///
/// When `then` is unavailable too, the result is `then`'s [`AskError::Unavailable`] (the
/// no-answerer outcome: a short text telling the model to ask in plain text).
#[derive(Clone)]
pub(crate) struct OrElse {
    first: Arc<dyn UserInteraction>,
    then: Arc<dyn UserInteraction>,
}

impl std::fmt::Debug for OrElse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrElse").finish_non_exhaustive()
    }
}

impl OrElse {
    pub(crate) fn new(first: Arc<dyn UserInteraction>, then: Arc<dyn UserInteraction>) -> Self {
        Self { first, then }
    }

    async fn ask_in_turn(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> Result<Answers, AskError> {
        match self.first.ask(request, cancel.clone()).await {
            Err(AskError::Unavailable(reason)) => {
                tracing::info!(%reason, "asking the next answerer");
                self.then.ask(request, cancel).await
            }
            decided => decided,
        }
    }
}

impl UserInteraction for OrElse {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.ask_in_turn(request, cancel))
    }

    fn is_available(&self) -> bool {
        self.first.is_available() || self.then.is_available()
    }
}
