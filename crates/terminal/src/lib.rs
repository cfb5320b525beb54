//! # ask-user-terminal
//!
//! The terminal answerer of `ask_user_question` (work in progress).
#![deny(missing_docs)]

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};

/// Asks on the controlling terminal (`/dev/tty`).
#[derive(Debug, Clone, Default)]
pub struct Terminal {}

impl Terminal {
    /// A terminal answerer for the controlling terminal.
    pub fn new() -> Self {
        Self {}
    }
}

impl UserInteraction for Terminal {
    fn ask<'a>(
        &'a self,
        _request: &'a AskUserQuestionRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async { Err(AskError::Unavailable("not built yet".to_owned())) })
    }
}
