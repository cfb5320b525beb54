//! The channel seam (docs/contract.md §10): what the dispatcher hands a channel when an ask
//! opens, and when it closes.

use ask_user_core::Question;
use ask_user_store::{AskId, Asker, Closed};
use futures::future::BoxFuture;

/// One choice a channel may offer as a button or link, with the single-use token that answers
/// it (see [`crate::Tokens`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedChoice {
    /// The option's label, exactly as in the request (model text: escape it for the markup).
    pub label: String,
    /// The token, in clear: it goes into the button or link only, never into a log.
    pub token: String,
}

/// An open ask as a channel shows it. Every text in it comes from the model or the caller and
/// is untrusted: each channel escapes it for its own markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The store's id of the ask.
    pub ask: AskId,
    /// Who asks (docs/contract.md §9 "Who asks").
    pub asker: Asker,
    /// The questions, in the model's order.
    pub questions: Vec<Question>,
    /// The page that shows this ask (the hub's inbox at this ask): every channel links it.
    pub page_url: String,
    /// The hub's public base URL, without a trailing `/`; the answer endpoints hang below it.
    pub public_url: String,
    /// One-tap choices, offered only when the ask is one single-select question with options;
    /// empty otherwise (and in the notice given to [`Channel::closed`]).
    pub choices: Vec<OfferedChoice>,
    /// The token of a Done (submit) button that answers with the options chosen on the
    /// message ([`crate::ChoiceKind::Set`]): only when the ask is one multi-select question
    /// with options and the channel [`Channel::takes_chosen_sets`]; `None` otherwise.
    pub done: Option<String>,
    /// The token of a typed own answer to the ask's only question ([`crate::ChoiceKind::Own`]):
    /// only when the ask has one question and the channel [`Channel::takes_typed_answers`];
    /// `None` otherwise.
    pub own: Option<String>,
    /// The answer given before to the same question (same agent, same request), offered as
    /// one tap that sends it again as this ask's answer ([`crate::ChoiceKind::Again`]); shown
    /// whole in [`crate::text::body`], so a channel offers its button only where it offers
    /// the other answers (the message is not cut). `None` when there is none.
    pub again: Option<OfferedAgain>,
}

/// The answer given before to the same question, with the single-use token that sends it
/// again (docs/contract.md §8 "The same answer again").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedAgain {
    /// The answers given then, and when.
    pub given: ask_user_core::GivenBefore,
    /// The token, in clear: it goes into the button or link only, never into a log.
    pub token: String,
}

impl Notice {
    /// The URL that answers with `token` through `channel`'s endpoint of
    /// [`crate::answer_router`]: `{public_url}/channels/{ask}/{channel}/{token}`.
    #[must_use]
    pub fn answer_url(&self, channel: &str, token: &str) -> String {
        format!(
            "{}/channels/{}/{}/{}",
            self.public_url, self.ask, channel, token
        )
    }
}

/// What a channel keeps to find its message again when the ask closes (a message id, a
/// sequence id, a chat id and message id…), opaque to the dispatcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRef(pub String);

/// Why a channel could not send or update a message. The text never carries a secret (no
/// access token, no answer token, no URL with a token in it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChannelError {
    /// The service could not be reached or did not answer in time.
    #[error("{channel}: the server could not be reached: {detail}")]
    Unreachable {
        /// The channel's name.
        channel: &'static str,
        /// What the HTTP client said (its URL stripped).
        detail: String,
    },
    /// The service refused the request.
    #[error("{channel}: the server refused the message: HTTP {status}: {detail}")]
    Refused {
        /// The channel's name.
        channel: &'static str,
        /// The HTTP status.
        status: u16,
        /// The service's own error text, cut to 200 characters.
        detail: String,
    },
    /// The service answered with something this client cannot read.
    #[error("{channel}: unexpected answer from the server: {detail}")]
    BadReply {
        /// The channel's name.
        channel: &'static str,
        /// What was wrong.
        detail: String,
    },
}

/// A place where the human may be reached: ntfy, email, Telegram, Slack. No channel knows
/// another; the [`crate::Dispatcher`] calls each one.
pub trait Channel: Send + Sync + std::fmt::Debug {
    /// The channel's name as used in answer URLs and in [`ask_user_store::Responder::channel`]
    /// (`ntfy`, `email`, …): lower-case ASCII.
    fn name(&self) -> &'static str;

    /// Who is recorded as answering through this channel when the answer endpoint cannot tell
    /// (email: the configured address); `None` by default.
    fn default_user(&self) -> Option<String> {
        None
    }

    /// Whether the channel shows a multi-select as toggles with a Done button, answered with
    /// [`Notice::done`] (Telegram, Slack); `false` by default (no token is issued for it).
    fn takes_chosen_sets(&self) -> bool {
        false
    }

    /// Whether the channel takes a typed own answer with the [`Notice::own`] token (Slack's
    /// text input); `false` by default (no token is issued for it).
    fn takes_typed_answers(&self) -> bool {
        false
    }

    /// Sends the open ask; returns what identifies the message for [`Channel::closed`].
    fn notify<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<MessageRef, ChannelError>>;

    /// Updates the message sent for `notice` once the ask closed with `closed` (answered here
    /// or elsewhere, dismissed, withdrawn, timed out), so its buttons no longer invite an
    /// answer.
    fn closed<'a>(
        &'a self,
        notice: &'a Notice,
        closed: &'a Closed,
        reference: &'a MessageRef,
    ) -> BoxFuture<'a, Result<(), ChannelError>>;
}
