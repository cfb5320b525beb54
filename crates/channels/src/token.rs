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
    /// The option label chosen ([`ChoiceKind::Option`]); empty for the other kinds.
    pub label: String,
    /// What the token answers with; tokens stored before kinds existed are options.
    #[serde(default, skip_serializing_if = "ChoiceKind::is_option")]
    pub kind: ChoiceKind,
    /// The answers a [`ChoiceKind::Again`] token sends (the answer given before to the same
    /// question, every question of it); `None` for the other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Answers>,
}

/// What a token answers with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChoiceKind {
    /// The option [`Choice::label`] (one button or link per option): [`Given::Tap`].
    #[default]
    Option,
    /// The options the human chose on the message (multi-select toggles or checkboxes, then
    /// Done): [`Given::Set`].
    Set,
    /// A typed own answer (Slack's text input): [`Given::Own`].
    Own,
    /// The answer given before to the same question, sent again as this ask's answer
    /// ([`Choice::answers`], docs/contract.md §8 "The same answer again"): [`Given::Tap`].
    Again,
}

impl ChoiceKind {
    fn is_option(&self) -> bool {
        *self == ChoiceKind::Option
    }
}

/// What the human gave with a token, for [`Tokens::redeem_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Given {
    /// Just the tap: the token's own option ([`ChoiceKind::Option`]).
    Tap,
    /// The chosen options of the token's question, by index in the request
    /// ([`ChoiceKind::Set`]).
    Set(Vec<usize>),
    /// A typed answer ([`ChoiceKind::Own`]).
    Own(String),
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
    /// A Done button was used with no option chosen (the token stays usable).
    #[error("Choose at least one option first, then Done.")]
    NothingChosen,
    /// An own answer was sent empty (the token stays usable).
    #[error("Type an answer first.")]
    NothingTyped,
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
        self.redeem_with(ask, channel, token, user, Given::Tap)
            .await
            .map(|(choice, _)| choice)
    }

    /// Like [`Tokens::redeem`], for every kind of token: `given` must match the token's
    /// [`ChoiceKind`] (otherwise [`Refusal::Unknown`], nothing spent). A [`Given::Set`] with no
    /// option is [`Refusal::NothingChosen`] and a blank [`Given::Own`] is
    /// [`Refusal::NothingTyped`], both before the token is spent; an index outside the
    /// question's options is [`Refusal::Unknown`]. Returns the token's choice and a summary of
    /// the answer recorded (the chosen labels or the own answer, quoted:
    /// [`answer_summary`]).
    ///
    /// # Errors
    /// As [`Tokens::redeem`], and the refusals above.
    pub async fn redeem_with(
        &self,
        ask: AskId,
        channel: &str,
        token: &str,
        user: Option<String>,
        given: Given,
    ) -> Result<(Choice, String), RedeemError> {
        // What would be answered, checked before the token is spent (a wrong kind or an empty
        // answer leaves it usable).
        let pending = self.peek(ask, channel, token).await?;
        let item = match (pending.kind, &given) {
            (ChoiceKind::Option, Given::Tap) => {
                AnswerItem::selected(pending.question.clone(), [pending.label.clone()])
            }
            (ChoiceKind::Again, Given::Tap) => match &pending.answers {
                Some(answers) => {
                    return self
                        .spend_and_record(ask, channel, token, user, answers.clone())
                        .await;
                }
                None => return Err(Refusal::Unknown.into()),
            },
            (ChoiceKind::Set, Given::Set(chosen)) => {
                if chosen.is_empty() {
                    return Err(Refusal::NothingChosen.into());
                }
                let labels = self.labels(ask, &pending.question, chosen).await?;
                AnswerItem::selected(pending.question.clone(), labels)
            }
            (ChoiceKind::Own, Given::Own(text)) => {
                if text.trim().is_empty() {
                    return Err(Refusal::NothingTyped.into());
                }
                AnswerItem::custom(pending.question.clone(), text.trim())
            }
            _ => return Err(Refusal::Unknown.into()),
        };
        self.spend_and_record(
            ask,
            channel,
            token,
            user,
            Answers {
                answers: vec![item],
            },
        )
        .await
    }

    /// Spends `token` and records `answers` as the ask's outcome (first outcome wins); returns
    /// the token's choice and a summary of the answer recorded.
    async fn spend_and_record(
        &self,
        ask: AskId,
        channel: &str,
        token: &str,
        user: Option<String>,
        answers: Answers,
    ) -> Result<(Choice, String), RedeemError> {
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
        let answer = serde_json::to_value(&answers).unwrap_or_default();
        let summary = answer_summary(&answer);
        let outcome = Outcome::Answered {
            answer,
            by: Responder {
                answerer: ANSWERER.to_owned(),
                channel: Some(t.channel),
                user: user.or(t.user),
                submission: None,
            },
        };
        match self
            .store
            .record_outcome(ask, &outcome, Timestamp::now())
            .await?
        {
            Recorded::Won => Ok((choice, summary)),
            Recorded::Lost(closed) => Err(Refusal::Closed(Box::new(closed)).into()),
        }
    }

    /// The labels of `question`'s options at `chosen` (deduplicated, in the request's order),
    /// read from the ask's stored request; [`Refusal::Unknown`] for an index out of range.
    async fn labels(
        &self,
        ask: AskId,
        question: &str,
        chosen: &[usize],
    ) -> Result<Vec<String>, RedeemError> {
        #[derive(Deserialize)]
        struct Request {
            questions: Vec<ask_user_core::Question>,
        }
        let rec = self.store.get(ask).await?;
        let req: Request =
            serde_json::from_str(&rec.request).map_err(|_| RedeemError::from(Refusal::Unknown))?;
        let q = req
            .questions
            .into_iter()
            .find(|q| q.id == question)
            .ok_or(Refusal::Unknown)?;
        let mut idx: Vec<usize> = chosen.to_vec();
        idx.sort_unstable();
        idx.dedup();
        idx.iter()
            .map(|&i| {
                q.options
                    .get(i)
                    .map(|o| o.label.clone())
                    .ok_or_else(|| Refusal::Unknown.into())
            })
            .collect()
    }
}

/// Issues the [`crate::Notice::done`] and [`crate::Notice::own`] tokens `channel` takes for the
/// ask of `notice` (see [`crate::Channel::takes_chosen_sets`],
/// [`crate::Channel::takes_typed_answers`]). A failure leaves them out (the page still answers).
pub(crate) async fn issue_extra(
    tokens: &Tokens,
    channel: &dyn crate::Channel,
    notice: &mut crate::Notice,
) {
    let [q] = notice.questions.as_slice() else {
        return;
    };
    let mut wanted = Vec::new();
    if channel.takes_chosen_sets() && q.multi_select && !q.options.is_empty() {
        wanted.push(ChoiceKind::Set);
    }
    if channel.takes_typed_answers() {
        wanted.push(ChoiceKind::Own);
    }
    let question = q.id.clone();
    for kind in wanted {
        let choice = Choice {
            question: question.clone(),
            label: String::new(),
            kind,
            answers: None,
        };
        match tokens
            .issue(notice.ask, channel.name(), &choice, channel.default_user())
            .await
        {
            Ok(t) if kind == ChoiceKind::Set => notice.done = Some(t),
            Ok(t) => notice.own = Some(t),
            Err(e) => tracing::warn!(error = %e, "channels: no answer token; the page only"),
        }
    }
}

/// Issues the [`crate::Notice::again`] token of `notice` for `channel`: the answer `given`
/// before to the same question, sent again by one tap (docs/contract.md §8). Its choice's label
/// says what it sends (a confirm page shows it). A failure leaves it out (the page offers it).
pub(crate) async fn issue_again(
    tokens: &Tokens,
    channel: &dyn crate::Channel,
    notice: &mut crate::Notice,
    given: &ask_user_core::GivenBefore,
) {
    let answers = given.answers.clone();
    // What it sends, as the confirm page and the reply name it: each question's answer.
    let said = answers
        .answers
        .iter()
        .map(|item| {
            let parts: Vec<&str> = item
                .selected
                .iter()
                .chain(item.custom.iter())
                .map(String::as_str)
                .collect();
            if parts.is_empty() {
                "skipped".to_owned()
            } else {
                parts.join(", ")
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let choice = Choice {
        question: notice
            .questions
            .first()
            .map(|q| q.id.clone())
            .unwrap_or_default(),
        label: said,
        kind: ChoiceKind::Again,
        answers: Some(answers),
    };
    match tokens
        .issue(notice.ask, channel.name(), &choice, channel.default_user())
        .await
    {
        Ok(token) => {
            notice.again = Some(crate::OfferedAgain {
                given: given.clone(),
                token,
            });
        }
        Err(e) => tracing::warn!(error = %e, "channels: no answer token; the page only"),
    }
}
