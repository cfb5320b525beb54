//! The host flags `--timeout DURATION`, `--journal FILE` and `--notify CMD`, shared by
//! `ask-user ask` and `ask-user mcp` so they read and behave the same.

use std::path::PathBuf;
use std::time::Duration;

use ask_user_core::{
    Arguments, AskUserQuestionTool, Decoded, ExecutionContext, InvalidArguments, Limits, Outcome,
    decode,
};

use crate::journal::{Journal, JournalError};

/// `--timeout DURATION`, `--journal FILE` and `--notify CMD`: plain settings, and with the
/// `clap` feature clap arguments (flatten them into a command).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HostArgs {
    /// Give up after this long (e.g. 90s, 5m, 1h); the model reads "no answer within …".
    ///
    /// The question is withdrawn when the time runs out. No timeout by default: elapsed time is
    /// never approval. Zero and more than 100 years are refused.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DURATION", value_parser = parse_timeout))]
    pub timeout: Option<Duration>,

    /// Append an audit journal to FILE (one JSON line per ask and per outcome).
    ///
    /// Each line holds the time, the call id, the questions, the outcome code and text and the
    /// answers; it is on disk before the model reads the result. Startup fails when FILE cannot
    /// be written.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub journal: Option<PathBuf>,

    /// Run CMD (with `sh -c`) whenever a question opens.
    ///
    /// It gets the questions as JSON on stdin and the first question in `$ASK_USER_QUESTION`,
    /// e.g. `notify-send "Agent asks" "$ASK_USER_QUESTION"`. It is never waited for; its
    /// failures are only logged.
    #[cfg_attr(feature = "clap", arg(long, value_name = "CMD"))]
    pub notify: Option<String>,
}

/// The error text of a zero `--timeout`.
pub const ZERO_TIMEOUT: &str = "the timeout must be longer than zero";

/// Parses a `--timeout` value: a humantime duration (`90s`, `5m`, `1h30m`) longer than zero.
/// A text humantime cannot read fails with humantime's reason; zero fails with
/// [`ZERO_TIMEOUT`] (an ask that times out at once would never reach the human), one over
/// [`ask_user_core::time::MAX_DURATION`] with [`ask_user_core::time::TOO_LONG`].
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let duration = ask_user_core::time::parse_duration(text)?;
    if duration.is_zero() {
        return Err(ZERO_TIMEOUT.to_owned());
    }
    Ok(duration)
}

impl HostArgs {
    /// Opens the journal when `--journal` was given; the error names the file (a startup
    /// error for the host).
    pub fn open_journal(&self) -> Result<Option<Journal>, JournalError> {
        self.journal.as_ref().map(Journal::open).transpose()
    }
}

/// Runs one tool call through `journal` when there is one (`Journal::call`), else like
/// [`AskUserQuestionTool::call`]; either way the arguments are decoded once and each
/// leniency applied is logged ([`decode_logged`]). For [`crate::HostCall`] only.
pub(crate) async fn call(
    journal: Option<&Journal>,
    tool: &AskUserQuestionTool,
    arguments: impl Into<Arguments>,
    context: ExecutionContext,
) -> Outcome {
    if let Some(journal) = journal {
        return journal.call(tool, arguments, context).await;
    }
    if let Some(refused) = context.refusal() {
        return refused;
    }
    match decode_logged(arguments, tool.limits()) {
        Ok(decoded) => tool.ask(&decoded.request, context).await,
        Err(invalid) => Outcome::InvalidArguments(invalid),
    }
}

/// [`decode`] that logs (`tracing` info) each leniency it applied, so hosts report what the
/// model sent differently without decoding twice.
pub fn decode_logged(
    arguments: impl Into<Arguments>,
    limits: &Limits,
) -> Result<Decoded, InvalidArguments> {
    let decoded = decode(arguments, limits)?;
    for leniency in &decoded.leniencies {
        tracing::info!(%leniency, "accepted a variant");
    }
    Ok(decoded)
}
