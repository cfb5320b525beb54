//! Outcomes: exactly what the model reads (docs/contract.md §5).

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::answer::Answers;
use crate::render::render;
use crate::validate::InvalidArguments;

/// How one tool call ended. Each variant has one model-facing text ([`Outcome::text`]) and,
/// for errors, one [`OutcomeCode`] that travels beside the text, never inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The human answered (some items may be skipped).
    Answered(Answers),
    /// The arguments were refused before any human saw them.
    InvalidArguments(InvalidArguments),
    /// The human dismissed the whole batch.
    Dismissed,
    /// No answer within the host's budget.
    TimedOut(Duration),
    /// No answerer can reach a human here.
    NoProvider,
    /// A delegated caller (a sub-agent) asked; refused before any human was asked.
    DelegatedCaller,
    /// The turn was cancelled before the human answered.
    Aborted,
    /// An answerer failed; the message follows `Error: `.
    Failed(String),
    /// The store the question waited in is gone (its file deleted or replaced): no answerer
    /// can see the question any more. The message follows `Error: `.
    StoreGone(String),
}

/// The machine-readable code of an error outcome (for hosts and logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutcomeCode {
    /// `INVALID_ARGS`
    InvalidArgs,
    /// `ASK_CANCELLED`: the human dismissed the batch.
    AskCancelled,
    /// `ASK_TIMED_OUT`
    AskTimedOut,
    /// `NO_PROVIDER`
    NoProvider,
    /// `DELEGATED_CALLER`
    DelegatedCaller,
    /// `ASK_ABORTED`
    AskAborted,
    /// `ANSWER_FAILED`
    AnswerFailed,
    /// `STORE_GONE`: the store the question waited in is gone.
    StoreGone,
}

impl OutcomeCode {
    /// The code as written in logs and structured results, e.g. `ASK_TIMED_OUT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgs => "INVALID_ARGS",
            Self::AskCancelled => "ASK_CANCELLED",
            Self::AskTimedOut => "ASK_TIMED_OUT",
            Self::NoProvider => "NO_PROVIDER",
            Self::DelegatedCaller => "DELEGATED_CALLER",
            Self::AskAborted => "ASK_ABORTED",
            Self::AnswerFailed => "ANSWER_FAILED",
            Self::StoreGone => "STORE_GONE",
        }
    }

    /// The exit status of `ask-user ask` for this code.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::InvalidArgs => 3,
            Self::AskCancelled => 4,
            Self::AskTimedOut => 5,
            Self::NoProvider => 6,
            Self::DelegatedCaller => 7,
            Self::AskAborted => 130,
            Self::AnswerFailed => 1,
            Self::StoreGone => 8,
        }
    }
}

impl fmt::Display for OutcomeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text of a dismissal.
pub const DISMISSED_TEXT: &str = "Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on.";
/// The text when nobody can answer.
pub const NO_PROVIDER_TEXT: &str = "Error: no way to ask the user is available; ask your question in plain text in your reply instead.";
/// The text for a delegated caller.
pub const DELEGATED_CALLER_TEXT: &str = "Error: sub-agents cannot ask the user; put the question in your final result so the agent that started you can ask it.";
/// The text of an aborted turn (the reference's wording).
pub const ABORTED_TEXT: &str = "Error: ask_user_question was aborted before the user answered";

impl Outcome {
    /// The code that travels beside the text; `None` for an answer.
    pub fn code(&self) -> Option<OutcomeCode> {
        Some(match self {
            Self::Answered(_) => return None,
            Self::InvalidArguments(_) => OutcomeCode::InvalidArgs,
            Self::Dismissed => OutcomeCode::AskCancelled,
            Self::TimedOut(_) => OutcomeCode::AskTimedOut,
            Self::NoProvider => OutcomeCode::NoProvider,
            Self::DelegatedCaller => OutcomeCode::DelegatedCaller,
            Self::Aborted => OutcomeCode::AskAborted,
            Self::Failed(_) => OutcomeCode::AnswerFailed,
            Self::StoreGone(_) => OutcomeCode::StoreGone,
        })
    }

    /// Whether the model reads an error.
    pub fn is_error(&self) -> bool {
        self.code().is_some()
    }

    /// `ask-user ask`'s exit status: 0 for an answer, else [`OutcomeCode::exit_code`].
    pub fn exit_code(&self) -> i32 {
        self.code().map_or(0, OutcomeCode::exit_code)
    }

    /// Exactly what the model reads: the compact JSON answer ([`render`]) or one `Error: …`
    /// line. No trailing newline.
    pub fn text(&self) -> String {
        match self {
            Self::Answered(answers) => render(answers),
            Self::InvalidArguments(invalid) => invalid.to_string(),
            Self::Dismissed => DISMISSED_TEXT.to_owned(),
            Self::TimedOut(budget) => format!(
                "Error: no answer within {}; this is not approval. Do not act as if the user agreed: continue without it, or ask again later.",
                format_duration(*budget)
            ),
            Self::NoProvider => NO_PROVIDER_TEXT.to_owned(),
            Self::DelegatedCaller => DELEGATED_CALLER_TEXT.to_owned(),
            Self::Aborted => ABORTED_TEXT.to_owned(),
            Self::Failed(message) | Self::StoreGone(message) => format!("Error: {message}"),
        }
    }

    /// The structured value beside the text (MCP `structuredContent`): the answers as JSON,
    /// `None` for errors.
    pub fn structured(&self) -> Option<Value> {
        match self {
            Self::Answered(answers) => serde_json::to_value(answers).ok(),
            _ => None,
        }
    }
}

/// A budget as people write it: `90s` → `1m30s`, `300s` → `5m`, `1500ms` → `1.5s`.
pub fn format_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1_000 || !millis.is_multiple_of(1_000) {
        if millis >= 1_000 && millis.is_multiple_of(100) {
            return format!("{}.{}s", millis / 1_000, (millis % 1_000) / 100);
        }
        return format!("{millis}ms");
    }
    let seconds = millis / 1_000;
    let (h, m, s) = (seconds / 3_600, (seconds / 60) % 60, seconds % 60);
    let mut out = String::new();
    for (value, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if value > 0 {
            out.push_str(&format!("{value}{unit}"));
        }
    }
    out
}
