//! Reaching the human where they are (docs/contract.md §10): channels that push an open ask to
//! a phone or a chat, and answer endpoints that take the tap back.
//!
//! # Overview
//!
//! - [`Channel`] is the seam: [`Channel::notify`] when an ask opens (returns a [`MessageRef`]),
//!   [`Channel::closed`] when it closes, so the message no longer invites an answer.
//! - [`Dispatcher`] follows a [`ask_user_store::Store`]'s change feed and calls every channel:
//!   each open ask once, each sent message updated on close; one ask's channels are called
//!   in turn, each claimed in the store first, so several replicas send each message once.
//! - [`Tokens`] issues the single-use answer tokens every button carries (128 random bits,
//!   stored hashed, bound to one ask, one channel and one choice); [`answer_router`] is the
//!   axum router a hub mounts to redeem them into the store, first outcome wins.
//! - Channels, all four built: [`ntfy::Ntfy`] (publish with action buttons), [`email::Email`]
//!   (SMTP with STARTTLS; links open a confirm page), [`telegram::Telegram`] (inline keyboard,
//!   replies as the own answer, polled by one replica under a store lease) and
//!   [`slack::Slack`] (Block Kit and a signed interactivity endpoint). Telegram replies are
//!   matched to their ask through the message references kept in the store, so any replica
//!   takes them.
//! - [`config::ChannelsConfig`] reads the hub's configuration file (`ask-user hub serve
//!   --config`); [`start`] runs what it configures (the dispatcher with its escalation
//!   ladder, the leased Telegram poller) and returns the routes to mount. [`CHANNELS`] is the
//!   registry's list: one entry per channel makes its section, its name and its start.
//!
//! Model text is untrusted: each channel escapes it for its own markup (ntfy: plain text, no
//! Markdown flag; email: HTML-escaped; Telegram: no parse mode; Slack: `plain_text` blocks and
//! escaped mrkdwn).
//!
//! # Example: what a hub wires up
//!
//! ```no_run
//! # async fn hub() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use ask_user_channels::ntfy::{Ntfy, NtfyConfig};
//! use ask_user_channels::{AnswerState, Channel, Dispatcher, Tokens, answer_router};
//! use ask_user_store::Store;
//!
//! let store = Store::open("sqlite:/var/lib/ask-user/store.sqlite3").await?;
//! let tokens = Tokens::new(store.clone());
//! let ntfy = Ntfy::new(NtfyConfig {
//!     server: "https://ntfy.example.org".into(),
//!     topic: "asks".into(),
//!     access_token: Some(std::env::var("NTFY_TOKEN")?.into()),
//!     allow_public_topic: false,
//! })?;
//! let public = "https://hub.example.org";
//! let dispatcher = Dispatcher::new(
//!     tokens.clone(),
//!     vec![Arc::new(ntfy) as Arc<dyn Channel>],
//!     public,
//!     Arc::new(move |id| format!("{public}/inbox#ask-{id}")),
//! );
//! tokio::spawn(dispatcher.run());
//! // Merge into the hub's own router, behind its public URL.
//! let _routes: axum::Router = answer_router(AnswerState { tokens });
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod channel;
pub mod config;
mod dispatch;
mod mount;
mod registry;
mod router;
pub mod text;
mod token;

// The channels. Adding one: its module here and its entry in `registry!` below (see
// `registry.rs`); the configuration file's section, the names `--escalate` accepts and what
// `start` runs all follow from that entry.
pub mod email;
pub mod ntfy;
pub mod slack;
pub mod telegram;

registry::registry! {
    ntfy: ntfy::NtfyConfig,
    telegram: telegram::TelegramConfig,
    slack: slack::SlackConfig,
    email: email::EmailConfig,
}

pub use channel::{Channel, ChannelError, MessageRef, Notice, OfferedAgain, OfferedChoice};
pub use dispatch::{Dispatcher, EscalationError, PageUrl, delays_for, parse_escalation};
pub use mount::{MountError, Running, start, start_until};
pub use router::{AnswerState, answer_router, refusal_status};
pub use token::{
    ANSWERER, Choice, ChoiceKind, Given, RedeemError, Refusal, Tokens, answer_summary, closed_text,
};

/// A reqwest client builder whose TLS uses ring, the workspace's one crypto provider (installed
/// as rustls's process default; a provider installed before is kept).
pub(crate) fn http_client() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}
