//! Reaching the human where they are (docs/contract.md §10): channels that push an open ask to
//! a phone or a chat, and answer endpoints that take the tap back.
//!
//! # Overview
//!
//! - [`Channel`] is the seam: [`Channel::notify`] when an ask opens (returns a [`MessageRef`]),
//!   [`Channel::closed`] when it closes, so the message no longer invites an answer.
//! - [`Dispatcher`] follows a [`ask_user_store::Store`]'s change feed and calls every channel:
//!   each open ask once, each sent message updated on close.
//! - [`Tokens`] issues the single-use answer tokens every button carries (128 random bits,
//!   stored hashed, bound to one ask, one channel and one choice); [`answer_router`] is the
//!   axum router a hub mounts to redeem them into the store, first outcome wins.
//! - Channels: [`ntfy::Ntfy`]. Email, Telegram and Slack follow (see the README).
//!
//! Model text is untrusted: each channel escapes it for its own markup (ntfy: plain text, no
//! Markdown flag; action labels are JSON strings).
#![deny(missing_docs)]

mod channel;
mod dispatch;
pub mod email;
pub mod ntfy;
mod router;
pub mod slack;
pub mod telegram;
pub mod text;
mod token;

pub use channel::{Channel, ChannelError, MessageRef, Notice, OfferedChoice};
pub use dispatch::{Dispatcher, EscalationError, PageUrl, delays_for, parse_escalation};
pub use router::{AnswerState, answer_router, refusal_status};
pub use token::{
    ANSWERER, Choice, KEEP_CLOSED, RedeemError, Refusal, Tokens, answer_summary, closed_text,
};
