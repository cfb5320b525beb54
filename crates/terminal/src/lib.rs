//! # ask-user-terminal
//!
//! The terminal answerer of `ask_user_question` (docs/contract.md §6 Terminal): [`Terminal`] implements
//! the core's [`UserInteraction`] seam by drawing the questions on the controlling terminal
//! (`/dev/tty`) — never on stdout, so stdout can carry the answer or a protocol — with
//! ratatui and crossterm, in an inline viewport below what is already on screen.
//!
//! What the human sees and can do is described in the `state` module's doc and the README:
//! header chip, question, options with wrapped descriptions, the recommended option marked
//! and pre-selected, an always-present row for their own answer, digits, Space, Enter, Esc
//! (skip one), Ctrl-C (dismiss all), progress and a way back, the bell when the batch opens.
//! Model text is shown inert ([`sanitize`]). The terminal is restored on every way out.
//!
//! Inside: `state` (the pure state machine and key handling), `layout` (lines for a width),
//! `render` (a function of state and area), `tty` (the I/O: `/dev/tty`, raw mode, viewport,
//! restore guard), and the loop here.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ask_user_core::{AskUserQuestionTool, ExecutionContext};
//! use ask_user_terminal::Terminal;
//!
//! # async fn run() {
//! let tool = AskUserQuestionTool::new(Arc::new(Terminal::new()));
//! let outcome = tool
//!     .call(r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#,
//!           ExecutionContext::default())
//!     .await;
//! println!("{}", outcome.text());
//! # }
//! ```
//!
//! Hosts should turn SIGTERM and SIGHUP into cancellation of the call's token (the `ask-user`
//! CLI does): the question is then withdrawn and the terminal restored. A library does not
//! install signal handlers of its own.
#![deny(missing_docs)]

mod layout;
mod render;
mod sanitize;
mod state;
mod tty;

pub use sanitize::{sanitize, sanitize_line};

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};
use crossterm::event::{Event, EventStream};
use futures::StreamExt;

use crate::layout::Theme;
use crate::state::{AskState, Step};
use crate::tty::Session;

/// Asks on the controlling terminal (`/dev/tty`).
///
/// - No controlling terminal: [`AskError::Unavailable`] at once, and
///   [`UserInteraction::is_available`] is `false`.
/// - Ctrl-C: [`AskError::Dismissed`]; the cancellation token firing:
///   [`AskError::Cancelled`] after the question is cleared from the screen.
/// - A terminal that breaks while asking: [`AskError::Failed`].
#[derive(Debug, Clone)]
pub struct Terminal {
    color: bool,
}

impl Default for Terminal {
    fn default() -> Self {
        Self::new()
    }
}

impl Terminal {
    /// A terminal answerer; colours are off when `NO_COLOR` is set to a non-empty value.
    pub fn new() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self { color: !no_color }
    }

    /// The same answerer with colours on or off (without colour the view uses bold, dim and
    /// reverse video only).
    pub fn with_color(mut self, color: bool) -> Self {
        self.color = color;
        self
    }

    async fn run(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> Result<Answers, AskError> {
        let tty = tty::open().map_err(|e| AskError::Unavailable(format!("no terminal: {e}")))?;
        if cancel.is_cancelled() {
            return Err(AskError::Cancelled);
        }
        let failed = |e: std::io::Error| AskError::Failed(format!("the terminal failed: {e}"));
        let mut state = AskState::new(request);
        let mut session =
            Session::start(tty, &state, Theme { color: self.color }).map_err(failed)?;
        let mut events = EventStream::new();
        loop {
            session.draw(&state).map_err(failed)?;
            let event = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(AskError::Cancelled),
                event = events.next() => event,
            };
            match event {
                Some(Ok(Event::Key(key))) => match state.handle_key(key) {
                    Step::Stay => {}
                    Step::Done(answers) => return Ok(answers),
                    Step::Dismissed => return Err(AskError::Dismissed),
                },
                Some(Ok(Event::Paste(text))) => state.paste(&text),
                Some(Ok(Event::Resize(..))) => session.resize(&state).map_err(failed)?,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(failed(e)),
                None => return Err(AskError::Failed("the terminal closed".to_owned())),
            }
        }
    }
}

impl UserInteraction for Terminal {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.run(request, cancel))
    }

    /// Whether the process has a controlling terminal (`/dev/tty` opens).
    fn is_available(&self) -> bool {
        tty::open().is_ok()
    }

    /// `"the terminal"`: a page that lost the race says "answered in the terminal".
    fn name(&self) -> Option<&str> {
        Some("the terminal")
    }
}
