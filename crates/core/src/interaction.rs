//! The seam between the tool and whatever reaches the human (SPEC §4).

use std::future::Future;
use std::pin::Pin;

use thiserror::Error;
use tokio_util::sync::CancellationToken;

use crate::answer::Answers;
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
/// - never return an empty success when no human saw the question.
pub trait UserInteraction: Send + Sync {
    /// Asks the human every question of `request` and waits for the answers.
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>>;

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
