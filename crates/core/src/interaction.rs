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
/// One method is required, [`UserInteraction::ask_decided`]: the ask inside its race
/// ([`crate::decision`]). [`UserInteraction::ask`] (the ask on its own, in a race of its own),
/// [`UserInteraction::name`] and [`UserInteraction::is_available`] are provided. `&T`,
/// `Box<T>` and `Arc<T>` are answerers when `T` is, forwarding all four methods; a wrapper
/// written by hand forwards all four too (docs/contract.md §4). [`OneStep`] turns a closure
/// into an answerer that acknowledges nothing.
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
/// - an answerer that tells the human "sent" (a page, a channel, an inbox) says "sent" only
///   after [`Decide::offer`] accepted the answer (docs/contract.md §4, "Decided before
///   acknowledged").
pub trait UserInteraction: Send + Sync {
    /// Asks the human every question of `request` inside the ask's race: `decide` is where
    /// this answerer offers the human's answer or dismissal and hears whether it was taken
    /// ([`crate::decision`]). [`crate::AskUserQuestionTool`] and [`crate::FirstAnswer`] call
    /// this method.
    ///
    /// An answerer that acknowledges nothing (a terminal UI that simply closes, scripted
    /// data) ignores `decide` and returns its answer; the caller offers it on its behalf.
    ///
    /// An answerer that acknowledges: offer before acknowledging; after
    /// [`crate::Decision::Accepted`] return promptly (`Ok(answers)` or
    /// `Err(AskError::Dismissed)`; the outcome is taken from the race either way); on
    /// [`crate::Decision::Refused`] tell the human it was not taken and why. When `cancel`
    /// fires, [`Decide::settled`] says why the question is being withdrawn (another answerer
    /// won, the budget ran out, …) so the screen can say so.
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>>;

    /// Asks the human every question of `request` on its own and waits for the answers: the
    /// default runs [`UserInteraction::ask_decided`] in a fresh race of its own
    /// ([`Decide::new`]), where an acknowledging answerer's valid offer is accepted.
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        self.ask_decided(request, cancel, Decide::new(request))
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

/// Forwards every method of [`UserInteraction`] to the answerer behind the pointer.
macro_rules! forward_user_interaction {
    ($($pointer:ty),+) => {$(
        impl<T: UserInteraction + ?Sized> UserInteraction for $pointer {
            fn ask_decided<'a>(
                &'a self,
                request: &'a AskUserQuestionRequest,
                cancel: CancellationToken,
                decide: Decide,
            ) -> BoxFuture<'a, Result<Answers, AskError>> {
                (**self).ask_decided(request, cancel, decide)
            }

            fn ask<'a>(
                &'a self,
                request: &'a AskUserQuestionRequest,
                cancel: CancellationToken,
            ) -> BoxFuture<'a, Result<Answers, AskError>> {
                (**self).ask(request, cancel)
            }

            fn name(&self) -> Option<&str> {
                (**self).name()
            }

            fn is_available(&self) -> bool {
                (**self).is_available()
            }
        }
    )+};
}

forward_user_interaction!(&T, Box<T>, std::sync::Arc<T>);

/// An answerer made of one closure that asks and returns the answers, acknowledging nothing
/// (the caller offers the answer on its behalf; see [`UserInteraction::ask_decided`]).
///
/// ```
/// use ask_user_core::{AnswerItem, Answers, OneStep, UserInteraction};
///
/// let yes = OneStep::new(|request, _cancel| {
///     Box::pin(async move {
///         let id = &request.questions()[0].id;
///         Ok(Answers { answers: vec![AnswerItem::selected(id, ["Yes"])] })
///     })
/// })
/// .named("the script");
/// assert_eq!(yes.name(), Some("the script"));
/// ```
pub struct OneStep<F> {
    ask: F,
    name: Option<String>,
}

impl<F> OneStep<F>
where
    F: for<'a> Fn(
            &'a AskUserQuestionRequest,
            CancellationToken,
        ) -> BoxFuture<'a, Result<Answers, AskError>>
        + Send
        + Sync,
{
    /// An answerer that asks with `ask`; it has no name and is always available.
    pub fn new(ask: F) -> Self {
        Self { ask, name: None }
    }

    /// The same answerer, naming where it reaches the human ([`UserInteraction::name`]).
    pub fn named(self, name: &str) -> Self {
        Self {
            name: Some(name.to_owned()),
            ..self
        }
    }
}

impl<F> std::fmt::Debug for OneStep<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneStep")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<F> UserInteraction for OneStep<F>
where
    F: for<'a> Fn(
            &'a AskUserQuestionRequest,
            CancellationToken,
        ) -> BoxFuture<'a, Result<Answers, AskError>>
        + Send
        + Sync,
{
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        (self.ask)(request, cancel)
    }

    fn name(&self) -> Option<&str> {
        self.name.as_deref()
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
    /// The store the question waited in is gone (a SQLite file deleted or replaced): no
    /// answerer can see it any more. The message is shown to the model after `Error: `
    /// ([`crate::Outcome::StoreGone`]).
    #[error("{0}")]
    StoreGone(String),
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
