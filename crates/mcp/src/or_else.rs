//! [`OrElse`]: the client's form first, the other answerers when it cannot be shown
//! (docs/contract.md §6, MCP elicitation: fallback).

use std::sync::Arc;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    UserInteraction,
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
        decide: Decide,
    ) -> Result<Answers, AskError> {
        match self
            .first
            .ask_decided(request, cancel.clone(), decide.clone())
            .await
        {
            Err(AskError::Unavailable(reason)) => {
                tracing::info!(%reason, "asking the next answerer");
                self.then.ask_decided(request, cancel, decide).await
            }
            decided => decided,
        }
    }
}

impl UserInteraction for OrElse {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.ask_in_turn(request, cancel, decide))
    }

    /// Where the first answerer reaches the human, else where the next one does.
    fn name(&self) -> Option<&str> {
        self.first.name().or_else(|| self.then.name())
    }

    fn is_available(&self) -> bool {
        self.first.is_available() || self.then.is_available()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use ask_user_core::{AnswerItem, Offer, OneStep, Settled};

    use super::*;

    fn request() -> AskUserQuestionRequest {
        ask_user_core::decode(
            r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#,
            &ask_user_core::Limits::default(),
        )
        .unwrap()
        .request
    }

    fn yes() -> Answers {
        Answers {
            answers: vec![AnswerItem::selected("go", ["Yes"])],
        }
    }

    /// A page that offers "Yes" into the race it is given.
    struct Page;

    impl UserInteraction for Page {
        fn ask_decided<'a>(
            &'a self,
            _: &'a AskUserQuestionRequest,
            _: CancellationToken,
            decide: Decide,
        ) -> BoxFuture<'a, Result<Answers, AskError>> {
            Box::pin(async move {
                let _ = decide
                    .named("the web page")
                    .offer(Offer::Answers(yes()))
                    .await;
                Ok(yes())
            })
        }

        fn name(&self) -> Option<&str> {
            Some("the web page")
        }
    }

    #[tokio::test]
    async fn the_next_answerer_offers_into_the_callers_race_and_names_itself() {
        let form = OneStep::new(|_: &AskUserQuestionRequest, _| {
            Box::pin(async { Err(AskError::Unavailable("no form".into())) })
        });
        let or_else = OrElse::new(Arc::new(form), Arc::new(Page));
        assert_eq!(or_else.name(), Some("the web page"));
        let request = request();
        let decide = Decide::new(&request);
        let result = or_else
            .ask_decided(&request, CancellationToken::new(), decide.clone())
            .await;
        assert_eq!(result, Ok(yes()));
        assert_eq!(
            decide.settled(),
            Some(Settled::Answered {
                answers: yes(),
                by: Some("the web page".into()),
            })
        );
    }
}
