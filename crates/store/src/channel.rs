//! What channels keep in the store (docs/contract.md §10): single-use answer tokens, stored
//! hashed, and per ask and channel the message sent, so that with several hub replicas each
//! notification is sent once and each message is updated once when the ask closes. Plain data.

use crate::model::AskId;

/// One answer token as stored: only its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelToken {
    /// The token's hash (the caller's choice of hash, e.g. SHA-256 in hex); the token itself
    /// is never stored.
    pub hash: String,
    /// The ask it answers.
    pub ask: AskId,
    /// The channel it was issued for (`ntfy`, `email`, …).
    pub channel: String,
    /// What it answers, opaque to the store (the channel crate's JSON).
    pub choice: String,
    /// Who is recorded as answering when the channel cannot tell (an email address).
    pub user: Option<String>,
}

/// What [`crate::Store::spend_channel_token`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spend {
    /// The token was unused and is now spent (atomically: one caller gets this).
    Spent(ChannelToken),
    /// No such token (never issued, or its ask was purged).
    Unknown,
    /// The token belongs to another ask or channel; it stays unused.
    Elsewhere,
    /// The token was spent before.
    Used,
}
