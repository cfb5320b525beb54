//! Several answerers at once: the first answer wins (docs/contract.md §4, fan-out).

use std::sync::Arc;

use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::answer::Answers;
use crate::decision::{Decide, Offer};
use crate::execute::WITHDRAW_GRACE;
use crate::interaction::{AskError, BoxFuture, UserInteraction, ask_catching_panics};
use crate::request::AskUserQuestionRequest;

/// Asks every available answerer at once; the first to finish decides.
///
/// - All share one race ([`crate::decision`]): an answer or a dismissal from any answerer
///   (accepted by the race, or returned by an answerer that acknowledges nothing and offered
///   on its behalf) settles it; then the others are cancelled (their tokens fire, so they
///   withdraw the question, and [`Decide::settled`] tells them who won) and awaited for up
///   to 2 s. An answer that loses is refused, never acknowledged.
/// - [`AskError::Unavailable`] answerers are skipped; if all are unavailable the result is
///   `Unavailable` (the "no answerer" outcome).
/// - A failed answerer (also one that panics) does not end the race while others still run;
///   if none answers, the last failure is returned.
/// - When the caller's token fires, all are cancelled and the result is `Cancelled`.
#[derive(Clone, Default)]
pub struct FirstAnswer {
    answerers: Vec<Arc<dyn UserInteraction>>,
}

impl std::fmt::Debug for FirstAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstAnswer")
            .field("answerers", &self.answerers.len())
            .finish()
    }
}

impl FirstAnswer {
    /// A race between these answerers (in priority order for nothing but logs).
    pub fn new(answerers: Vec<Arc<dyn UserInteraction>>) -> Self {
        Self { answerers }
    }

    /// Adds one more answerer.
    pub fn push(&mut self, answerer: Arc<dyn UserInteraction>) {
        self.answerers.push(answerer);
    }

    /// How many answerers take part.
    pub fn len(&self) -> usize {
        self.answerers.len()
    }

    /// Whether no answerer takes part.
    pub fn is_empty(&self) -> bool {
        self.answerers.is_empty()
    }

    async fn race(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> Result<Answers, AskError> {
        let race = cancel.child_token();
        let mut running: FuturesUnordered<_> = self
            .answerers
            .iter()
            .filter(|a| a.is_available())
            .map(|a| {
                // A child that names itself signs the offers made in its name.
                let decide = match a.name() {
                    Some(name) => decide.named(name),
                    None => decide.clone(),
                };
                let asked =
                    ask_catching_panics(a.as_ref(), request, race.child_token(), decide.clone());
                asked.map(move |result| (result, decide))
            })
            .collect();
        if running.is_empty() {
            return Err(AskError::Unavailable(
                "no answerer can reach the user".to_owned(),
            ));
        }
        let mut failure = None;
        let decided = loop {
            let next = tokio::select! {
                next = running.next() => next,
                () = cancel.cancelled() => break Err(AskError::Cancelled),
            };
            let Some((result, decide)) = next else {
                break Err(failure.unwrap_or_else(|| {
                    AskError::Unavailable("no answerer can reach the user".to_owned())
                }));
            };
            match result {
                Ok(answers) => {
                    // Settle the race before the others are cancelled, so they withdraw
                    // saying who won (a refusal: another answer was taken first; an invalid
                    // answer leaves the race open for the caller to fail it).
                    let _ = decide.offer(Offer::Answers(answers.clone())).await;
                    break Ok(answers);
                }
                Err(AskError::Dismissed) => {
                    let _ = decide.offer(Offer::Dismiss).await;
                    break Err(AskError::Dismissed);
                }
                Err(AskError::Unavailable(_)) => {}
                Err(AskError::Cancelled) if cancel.is_cancelled() => {
                    break Err(AskError::Cancelled);
                }
                Err(AskError::Cancelled) => {}
                Err(error) => failure = Some(error),
            }
        };
        race.cancel();
        let drain = async { while running.next().await.is_some() {} };
        let _ = tokio::time::timeout(WITHDRAW_GRACE, drain).await;
        decided
    }
}

impl UserInteraction for FirstAnswer {
    /// Shares the caller's race with every child: the first answer any of them gets accepted
    /// wins, and the others, cancelled, can tell their human where it was answered.
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.race(request, cancel, decide))
    }

    fn is_available(&self) -> bool {
        self.answerers.iter().any(|a| a.is_available())
    }
}
