//! Single-use answer tokens (docs/contract.md §10): every button and link carries one, bound to
//! one ask, one channel and one choice; it expires with the ask and answers nothing else.
//!
//! A token is 128 random bits from the operating system, written as 32 lower-case hex
//! characters (short enough for Telegram's 64-byte `callback_data`). Only its SHA-256 is kept,
//! so a leaked table answers nothing. Redeeming marks the token used *before* the outcome is
//! recorded, so two taps racing on one token record at most one answer; the outcome itself
//! goes through the store's first-outcome-wins compare-and-set.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ask_user_core::{AnswerItem, Answers};
use ask_user_store::{AskId, Closed, Outcome, Recorded, Responder, Store, Timestamp};
use sha2::{Digest, Sha256};

/// The answerer name stored in [`Responder::answerer`] for an answer given through a channel.
pub const ANSWERER: &str = "channel";

/// What a token answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The question's id.
    pub question: String,
    /// The option label chosen.
    pub label: String,
}

#[derive(Debug, Clone)]
struct Entry {
    ask: AskId,
    channel: &'static str,
    choice: Choice,
    user: Option<String>,
    used: bool,
    /// When the dispatcher saw the ask close; the entry is dropped [`KEEP_CLOSED`] later.
    closed_at: Option<Instant>,
}

/// How long the tokens of a closed ask are kept, so a late tap is told why the ask closed
/// ([`Refusal::Closed`]) rather than that the link is unknown.
pub const KEEP_CLOSED: Duration = Duration::from_secs(24 * 60 * 60);

/// The issued tokens of one process, stored hashed.
///
/// This first slice keeps them in memory: a restart invalidates outstanding buttons (a tap then
/// gets [`Refusal::Unknown`] and the human answers on the page). Moving them into the store
/// (so any hub replica redeems them) is the next step; see the crate README.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    inner: Arc<Mutex<HashMap<[u8; 32], Entry>>>,
}

/// Why a token answered nothing. The [`std::fmt::Display`] text is what the human sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// No such token (never issued, mistyped, or issued before a restart).
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

/// Errors of [`Tokens::redeem`] that are not the human's doing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedeemError {
    /// The token answered nothing; the text is for the human.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The store failed.
    #[error("the store failed: {0}")]
    Store(#[from] ask_user_store::Error),
}

/// 128 random bits as 32 lower-case hex characters.
fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Tokens {
    /// An empty table.
    #[must_use]
    pub fn new() -> Tokens {
        Tokens::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<[u8; 32], Entry>> {
        // Each write is one insert or one flag: a poisoned map is still consistent.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Issues a token answering `choice` of `ask` through `channel`; `user` is who will be
    /// recorded as answering when the channel itself cannot tell (an email address). Returns
    /// the token in clear, which is not kept.
    ///
    /// # Errors
    /// The operating system's random source failed.
    pub fn issue(
        &self,
        ask: AskId,
        channel: &'static str,
        choice: Choice,
        user: Option<String>,
    ) -> std::io::Result<String> {
        let token = random_token()?;
        let mut map = self.lock();
        map.retain(|_, e| e.closed_at.is_none_or(|at| at.elapsed() < KEEP_CLOSED));
        map.insert(
            hash(&token),
            Entry {
                ask,
                channel,
                choice,
                user,
                used: false,
                closed_at: None,
            },
        );
        Ok(token)
    }

    /// Notes that `ask` closed: its tokens answer nothing from now on (the store says so
    /// anyway) and are dropped [`KEEP_CLOSED`] later, at a later [`Tokens::issue`].
    pub fn ask_closed(&self, ask: AskId) {
        let now = Instant::now();
        for e in self.lock().values_mut().filter(|e| e.ask == ask) {
            e.closed_at.get_or_insert(now);
        }
    }

    /// How many tokens are held (for tests and metrics).
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no token is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What `token`, presented for `ask` through `channel`, would answer, without spending it
    /// (a confirm page shows this). Same refusals as [`Tokens::redeem`], except that whether
    /// the ask is closed is for the caller to check.
    ///
    /// # Errors
    /// [`Refusal::Unknown`], [`Refusal::OtherAsk`] or [`Refusal::Replayed`].
    pub fn peek(&self, ask: AskId, channel: &str, token: &str) -> Result<Choice, Refusal> {
        let map = self.lock();
        let entry = map.get(&hash(token)).ok_or(Refusal::Unknown)?;
        if entry.ask != ask || entry.channel != channel {
            return Err(Refusal::OtherAsk);
        }
        if entry.used {
            return Err(Refusal::Replayed);
        }
        Ok(entry.choice.clone())
    }

    /// Redeems `token`, presented for `ask` through `channel`'s endpoint, and records the
    /// answer (one option of one question) in `store`, first outcome wins. `user` is who the
    /// channel says answered (a Telegram or Slack user id); `None` keeps the one given at issue.
    ///
    /// Order of checks: unknown → [`Refusal::Unknown`]; issued for another ask or channel →
    /// [`Refusal::OtherAsk`] (the token stays usable for its own ask); used →
    /// [`Refusal::Replayed`]; then the token is spent, and an ask already closed (or closed by
    /// someone else first) → [`Refusal::Closed`].
    ///
    /// # Errors
    /// [`RedeemError::Refused`] as above; [`RedeemError::Store`] when the store fails (the token
    /// is spent then: the human answers on the page).
    pub async fn redeem(
        &self,
        store: &Store,
        ask: AskId,
        channel: &str,
        token: &str,
        user: Option<String>,
    ) -> Result<Choice, RedeemError> {
        let entry = {
            let mut map = self.lock();
            let entry = map.get_mut(&hash(token)).ok_or(Refusal::Unknown)?;
            if entry.ask != ask || entry.channel != channel {
                return Err(Refusal::OtherAsk.into());
            }
            if entry.used {
                return Err(Refusal::Replayed.into());
            }
            entry.used = true;
            entry.clone()
        };
        let rec = store.get(ask).await?;
        if let Some(closed) = rec.closed {
            return Err(Refusal::Closed(Box::new(closed)).into());
        }
        let answer = Answers {
            answers: vec![AnswerItem::selected(
                entry.choice.question.clone(),
                [entry.choice.label.clone()],
            )],
        };
        let outcome = Outcome::Answered {
            answer: serde_json::to_value(&answer).unwrap_or_default(),
            by: Responder {
                answerer: ANSWERER.to_owned(),
                channel: Some(entry.channel.to_owned()),
                user: user.or(entry.user),
            },
        };
        match store
            .record_outcome(ask, &outcome, Timestamp::now())
            .await?
        {
            Recorded::Won => Ok(entry.choice),
            Recorded::Lost(closed) => Err(Refusal::Closed(Box::new(closed)).into()),
        }
    }
}
