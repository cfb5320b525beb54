//! The seam between the tool and whatever reaches the human (docs/contract.md §4).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use futures::FutureExt;

use thiserror::Error;
use tokio_util::sync::CancellationToken;

use crate::answer::Answers;
use crate::decision::Decide;
use crate::request::AskUserQuestionRequest;

/// A boxed, `Send` future: what [`UserInteraction::ask`] returns, so the trait stays
/// `dyn`-compatible and `Arc<dyn UserInteraction>` works.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Anything that can put a validated request in front of a human and bring back the answers:
/// a terminal UI, a web page, an MCP client's elicitation form, scripted data.
///
/// Contract for implementers:
/// - return the human's answers in the output shape; the core normalises and checks them
///   ([`crate::normalise`]), so an answerer need not sort or dedupe, but an interactive
///   answerer should refuse a submission that `normalise` would refuse and keep asking;
/// - return [`AskError::Unavailable`] at once, without waiting, when no human can be reached
///   (no terminal, no client support), so fan-out can skip it;
/// - when `cancel` fires, withdraw the question from the screen and return
///   [`AskError::Cancelled`] promptly;
/// - never return an empty success when no human saw the question;
/// - an answerer that tells the human "sent" (a page, a channel, an inbox) implements
///   [`UserInteraction::ask_decided`] and says "sent" only after [`Decide::offer`] accepted
///   the answer (docs/contract.md §4, "Decided before acknowledged").
pub trait UserInteraction: Send + Sync {
    /// Asks the human every question of `request` and waits for the answers.
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>>;

    /// Asks like [`UserInteraction::ask`], inside the ask's race: `decide` is where this
    /// answerer offers the human's answer or dismissal and hears whether it was taken
    /// ([`crate::decision`]). [`crate::AskUserQuestionTool`] and [`crate::FirstAnswer`] call
    /// this method.
    ///
    /// Contract for an answerer that overrides it: offer before acknowledging; after
    /// [`crate::Decision::Accepted`] return promptly (`Ok(answers)` or
    /// `Err(AskError::Dismissed)`; the outcome is taken from the race either way); on
    /// [`crate::Decision::Refused`] tell the human it was not taken and why. When `cancel`
    /// fires, [`Decide::settled`] says why the question is being withdrawn (another answerer
    /// won, the budget ran out, …) so the screen can say so.
    ///
    /// The default calls [`UserInteraction::ask`]: an answerer that acknowledges nothing (a
    /// terminal UI that simply closes, scripted data) returns its answer and the caller offers
    /// it on its behalf.
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        let _ = decide;
        self.ask(request, cancel)
    }

    /// Where this answerer reaches the human, as a short phrase that completes "answered in
    /// …" (`"the terminal"`, `"the web page"`), so the answerers that lost a race can say
    /// where the human answered. Defaults to `None` (the others then say "elsewhere").
    fn name(&self) -> Option<&str> {
        None
    }

    /// Whether this answerer can reach a human right now (a terminal, a page, an eliciting
    /// client). Hosts use it to leave the tool out of the model's list when nobody can answer.
    /// Must be cheap and must not block. Defaults to `true`.
    fn is_available(&self) -> bool {
        true
    }
}

/// Why an answerer returned no answers.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AskError {
    /// The human dismissed the whole batch (Ctrl-C, a decline, a dismiss button).
    #[error("the user dismissed the questions")]
    Dismissed,
    /// This answerer cannot reach a human now; the reason is for logs.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The ask was cancelled through its token (turn aborted, timeout, another answerer won).
    #[error("cancelled")]
    Cancelled,
    /// The answerer broke; the message is shown to the model after `Error: `.
    #[error("{0}")]
    Failed(String),
}

/// Asks `interaction` in the race `decide` ([`UserInteraction::ask_decided`]), turning a panic (while creating or polling its future) into
/// [`AskError::Failed`], so a broken answerer gives the answer-failed outcome instead of
/// tearing down the host. Unwinding has already run the answerer's destructors (which restore
/// terminals and withdraw questions) by the time this returns.
pub(crate) fn ask_catching_panics<'a>(
    interaction: &'a dyn UserInteraction,
    request: &'a AskUserQuestionRequest,
    cancel: CancellationToken,
    decide: Decide,
) -> BoxFuture<'a, Result<Answers, AskError>> {
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| {
        interaction.ask_decided(request, cancel, decide)
    })) {
        Ok(future) => future,
        Err(panic) => return Box::pin(std::future::ready(Err(crashed(panic.as_ref())))),
    };
    Box::pin(
        AssertUnwindSafe(future)
            .catch_unwind()
            .map(|result| result.unwrap_or_else(|panic| Err(crashed(panic.as_ref())))),
    )
}

/// The failure for a panicked answerer, with the panic message when it has one.
fn crashed(panic: &(dyn std::any::Any + Send)) -> AskError {
    let detail = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    AskError::Failed(format!(
        "the answerer crashed ({detail}); ask your question in plain text in your reply instead"
    ))
}
