//! Single-use answer tokens (docs/contract.md §10): every button and link carries one, bound to
//! one ask, one channel and one choice; it expires with the ask and answers nothing else.
//!
//! A token is 128 random bits from the operating system, written as 32 lower-case hex
//! characters (short enough for Telegram's 64-byte `callback_data`). Only its SHA-256 is kept,
//! in the store ([`ask_user_store::Store::put_channel_token`]), so any hub replica redeems it
//! and a leaked table answers nothing. Redeeming spends the token atomically in the store
//! *before* the outcome is recorded, so two taps racing on one token record at most one
//! answer; the outcome itself goes through the store's first-outcome-wins compare-and-set.
//! A token's row goes when its ask is purged; until then a late tap is told why the ask closed.

use ask_user_core::{AnswerItem, Answers};
use ask_user_store::{
    AskId, ChannelToken, Closed, Outcome, Recorded, Responder, Spend, Store, Timestamp,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The answerer name stored in [`Responder::answerer`] for an answer given through a channel.
pub const ANSWERER: &str = "channel";

/// What a token answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The question's id.
    pub question: String,
    /// The option label chosen.
    pub label: String,
}

/// The issued tokens, kept hashed in a store.
#[derive(Debug, Clone)]
pub struct Tokens {
    store: Store,
}

/// Why a token answered nothing. The [`std::fmt::Display`] text is what the human sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// No such token (never issued, mistyped, or its ask was purged).
    #[error("This answer link is not valid. Open the question on the page to answer it.")]
    Unknown,
    /// The token was issued for another ask or another channel.
    #[error("This answer link belongs to another question.")]
    OtherAsk,
    /// The token was redeemed before.
    #[error("This answer link was already used.")]
    Replayed,
    /// The ask is closed: it was answered (here or elsewhere), dismissed, withdrawn or timed
    /// out. Carries the outcome that counted, to show the human.
    #[error("{}", closed_text(.0))]
    Closed(Box<Closed>),
}

/// What the human is told about an ask closed with `closed`.
#[must_use]
pub fn closed_text(closed: &Closed) -> String {
    match &closed.outcome {
        Outcome::Answered { answer, by } => {
            let how = answer_summary(answer);
            match &by.channel {
                Some(ch) => format!("This question was already answered ({how}, via {ch})."),
                None => format!("This question was already answered ({how})."),
            }
        }
        Outcome::Dismissed { .. } => "This question was dismissed.".to_owned(),
        Outcome::TimedOut => "This question timed out.".to_owned(),
        Outcome::Withdrawn => "This question was withdrawn by the agent.".to_owned(),
    }
}

/// A short summary of a stored answer (`Answers` JSON): the chosen labels and own answers,
/// quoted, comma-separated; `an answer` when it cannot be read.
#[must_use]
pub fn answer_summary(answer: &serde_json::Value) -> String {
    let Ok(a) = serde_json::from_value::<Answers>(answer.clone()) else {
        return "an answer".to_owned();
    };
    let parts: Vec<String> = a
        .answers
        .iter()
        .flat_map(|i| i.selected.iter().cloned().chain(i.custom.clone()))
        .map(|s| format!("\u{201c}{s}\u{201d}"))
        .collect();
    if parts.is_empty() {
        "skipped".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Errors of [`Tokens::redeem`] and [`Tokens::issue`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedeemError {
    /// The token answered nothing; the text is for the human.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The store failed.
    #[error("the store failed: {0}")]
    Store(#[from] ask_user_store::Error),
    /// The operating system's random source failed.
    #[error("no random source: {0}")]
    Random(String),
}

/// 128 random bits as 32 lower-case hex characters.
fn random_token() -> Result<String, RedeemError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| RedeemError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The SHA-256 of a token, lower-case hex: what the store keeps.
fn hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Tokens {
    /// Tokens kept in `store` (the store the asks live in).
    #[must_use]
    pub fn new(store: Store) -> Tokens {
        Tokens { store }
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Issues a token answering `choice` of `ask` through `channel`; `user` is who will be
    /// recorded as answering when the channel itself cannot tell (an email address). Returns
    /// the token in clear, which is not kept.
    ///
    /// # Errors
    /// [`RedeemError::Random`] or [`RedeemError::Store`].
    pub async fn issue(
        &self,
        ask: AskId,
        channel: &str,
        choice: &Choice,
        user: Option<String>,
    ) -> Result<String, RedeemError> {
        let token = random_token()?;
        self.store
            .put_channel_token(&ChannelToken {
                hash: hash(&token),
                ask,
                channel: channel.to_owned(),
                choice: serde_json::to_string(choice).unwrap_or_default(),
                user,
            })
            .await?;
        Ok(token)
    }

    /// What `token`, presented for `ask` through `channel`, would answer, without spending it
    /// (a confirm page shows this). Same refusals as [`Tokens::redeem`], except that whether
    /// the ask is closed is for the caller to check.
    ///
    /// # Errors
    /// [`Refusal::Unknown`], [`Refusal::OtherAsk`] or [`Refusal::Replayed`];
    /// [`RedeemError::Store`].
    pub async fn peek(
        &self,
        ask: AskId,
        channel: &str,
        token: &str,
    ) -> Result<Choice, RedeemError> {
        let Some((t, used)) = self.store.channel_token(&hash(token)).await? else {
            return Err(Refusal::Unknown.into());
        };
        if t.ask != ask || t.channel != channel {
            return Err(Refusal::OtherAsk.into());
        }
        if used {
            return Err(Refusal::Replayed.into());
        }
        serde_json::from_str(&t.choice).map_err(|_| Refusal::Unknown.into())
    }

    /// Redeems `token`, presented for `ask` through `channel`'s endpoint, and records the
    /// answer (one option of one question) in the store, first outcome wins. `user` is who the
    /// channel says answered (a Telegram or Slack user id); `None` keeps the one given at issue.
    ///
    /// Order of checks: unknown → [`Refusal::Unknown`]; issued for another ask or channel →
    /// [`Refusal::OtherAsk`] (the token stays usable for its own ask); used →
    /// [`Refusal::Replayed`]; then the token is spent, and an ask already closed (or closed by
    /// someone else first) → [`Refusal::Closed`].
    ///
    /// # Errors
    /// [`RedeemError::Refused`] as above; [`RedeemError::Store`] when the store fails (the token
    /// may be spent then: the human answers on the page).
    pub async fn redeem(
        &self,
        ask: AskId,
        channel: &str,
        token: &str,
        user: Option<String>,
    ) -> Result<Choice, RedeemError> {
        let t = match self
            .store
            .spend_channel_token(&hash(token), ask, channel, Timestamp::now())
            .await?
        {
            Spend::Spent(t) => t,
            Spend::Elsewhere => return Err(Refusal::OtherAsk.into()),
            Spend::Used => return Err(Refusal::Replayed.into()),
            Spend::Unknown => return Err(Refusal::Unknown.into()),
        };
        let choice: Choice =
            serde_json::from_str(&t.choice).map_err(|_| RedeemError::from(Refusal::Unknown))?;
        let rec = self.store.get(ask).await?;
        if let Some(closed) = rec.closed {
            return Err(Refusal::Closed(Box::new(closed)).into());
        }
        let answer = Answers {
            answers: vec![AnswerItem::selected(
                choice.question.clone(),
                [choice.label.clone()],
            )],
        };
        let outcome = Outcome::Answered {
            answer: serde_json::to_value(&answer).unwrap_or_default(),
            by: Responder {
                answerer: ANSWERER.to_owned(),
                channel: Some(t.channel),
                user: user.or(t.user),
            },
        };
        match self
            .store
            .record_outcome(ask, &outcome, Timestamp::now())
            .await?
        {
            Recorded::Won => Ok(choice),
            Recorded::Lost(closed) => Err(Refusal::Closed(Box::new(closed)).into()),
        }
    }
}
