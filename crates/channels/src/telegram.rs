//! Telegram (docs/contract.md §10): the Bot API, answered by inline-keyboard buttons taken in
//! by long polling.
//!
//! Documented API used (<https://core.telegram.org/bots/api>): `sendMessage` with
//! `reply_markup.inline_keyboard` (`callback_data` 1–64 bytes, `text` 1–4096 characters),
//! `getUpdates` long polling (`offset` = last `update_id` + 1 confirms the earlier ones;
//! `allowed_updates: ["callback_query"]`), `answerCallbackQuery` (the little notice the
//! tapping user sees), `editMessageText` without `reply_markup` to remove the buttons once the
//! ask closed. No `parse_mode` is ever sent, so model text shows verbatim: no entity it types
//! can format or link anything.
//!
//! A reply to the question's message is the own answer (`message.reply_to_message`; the bot
//! must see replies: in groups, a reply to the bot's own message reaches it even in privacy
//! mode). It answers an ask with one question; several questions are answered on the page.
//! The replied-to message (chat id and message id) is looked up among the message references
//! the dispatcher stored ([`ask_user_store::Store::channel_message_ask`]), so whichever
//! replica polls, and a restarted hub, takes the reply; a message with buttons also names its
//! ask in its keyboard (used when the reference is not stored yet).
//!
//! A button's `callback_data` is `{ask}:{token}` (at most 19 + 1 + 32 bytes). A tap counts only
//! from a chat in [`TelegramConfig::chats`] and, when [`TelegramConfig::allowed_users`] is not
//! empty, from one of those users.
//!
//! A multi-select (one question with options) shows one toggle button per option, `☐ label`
//! or `✓ label`, and a Done button. A toggle's `callback_data` is `{ask}:+{i}` (choose option
//! `i`) or `{ask}:-{i}` (un-choose it): it carries no token and spends nothing; a tap edits the
//! keyboard (`editMessageReplyMarkup`). The chosen set lives in the message's own keyboard,
//! which Telegram hands back with every tap (`callback_query.message.reply_markup`), so any
//! replica can take the next tap. Done's `callback_data` is `{ask}:{token}` with a
//! [`crate::ChoiceKind::Set`] token: it answers with the options whose buttons show `✓`
//! (read from `callback_data`, never from the label, which is model text) and is single-use.
//!
//! With several hub replicas, [`Telegram::poll_leased`] makes one of them poll (the Bot API
//! refuses a second concurrent `getUpdates` with HTTP 409): a lease in the store
//! ([`ask_user_store::Store::acquire_lease`]) names the poller; the others wait and take over
//! once its lease runs out.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{AnswerItem, Answers, Secret};
use ask_user_store::{AskId, Closed, Outcome, Recorded, Responder, Store, Timestamp};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::MountError;
use crate::channel::{Channel, ChannelError, MessageRef, Notice};
use crate::config::Invalid;
use crate::registry::{ChannelConfig, Mounting};
use crate::text;
use crate::token::{ChoiceKind, Given, RedeemError, Tokens};

const NAME: &str = "telegram";

/// The Bot API's limit on a message's text, in characters.
pub const MAX_TEXT_CHARS: usize = 4096;

/// What a user outside the allow-list is told when tapping a button.
pub const NOT_ALLOWED: &str = "You may not answer this question.";

/// How the bot is reached. `Debug` shows no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The Bot API base URL (`https://api.telegram.org`).
    pub api_base: String,
    /// The bot's token from @BotFather; never logged (it is part of every request path).
    pub bot_token: Secret,
    /// The chats the questions go to; taps count only from these.
    pub chats: Vec<i64>,
    /// The users whose taps count; empty: anyone in [`TelegramConfig::chats`].
    pub allowed_users: Vec<i64>,
    /// The long-poll timeout of `getUpdates`, in seconds (Telegram allows up to 50).
    pub poll_timeout_secs: u64,
}

/// The `[telegram]` section as written (see [`crate::config`]).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelegramToml {
    /// `token` (or `ASK_USER_TELEGRAM_TOKEN`); required.
    pub token: Option<Secret>,
    /// `chats`; required, not empty.
    pub chats: Option<Vec<i64>>,
    /// `allowed_users`; default: anyone in `chats`.
    pub allowed_users: Option<Vec<i64>>,
    /// `api_base`; default `https://api.telegram.org`.
    pub api_base: Option<String>,
    /// `poll_timeout`, seconds, 0 to 50; default 30.
    pub poll_timeout: Option<i64>,
}

/// How long a replica holds the Telegram poll lease: three 30 s long polls.
const POLL_LEASE: Duration = Duration::from_secs(90);

impl TryFrom<TelegramToml> for TelegramConfig {
    type Error = Invalid;

    fn try_from(raw: TelegramToml) -> Result<TelegramConfig, Invalid> {
        let poll_timeout_secs = u64::try_from(raw.poll_timeout.unwrap_or(30))
            .ok()
            .filter(|p| *p <= 50)
            .ok_or(Invalid::Range {
                key: "poll_timeout",
                expected: "a number of seconds from 0 to 50",
            })?;
        Ok(TelegramConfig {
            api_base: raw
                .api_base
                .unwrap_or_else(|| "https://api.telegram.org".to_owned()),
            bot_token: raw
                .token
                .filter(|t| !t.is_empty())
                .ok_or(Invalid::Missing {
                    key: "token",
                    hint: " (or ASK_USER_TELEGRAM_TOKEN)",
                })?,
            chats: raw
                .chats
                .filter(|c| !c.is_empty())
                .ok_or(Invalid::Missing {
                    key: "chats",
                    hint: " (the chat ids the questions go to)",
                })?,
            allowed_users: raw.allowed_users.unwrap_or_default(),
            poll_timeout_secs,
        })
    }
}

impl ChannelConfig for TelegramConfig {
    type Toml = TelegramToml;
    const SECRET_ENV: &'static [(&'static str, &'static str)] =
        &[("ASK_USER_TELEGRAM_TOKEN", "token")];

    /// The channel, and its poller: one replica polls at a time (the Bot API allows one
    /// `getUpdates` consumer); the lease is three long-poll timeouts, so a stopped replica is
    /// replaced within it.
    fn mount(&self, mounting: &mut Mounting) -> Result<(), MountError> {
        let telegram = Arc::new(Telegram::new(self.clone()));
        mounting.channels.push(telegram.clone());
        let polling = telegram.poll_leased(mounting.tokens.clone(), PollLease::new(POLL_LEASE));
        mounting.tasks.push(Box::pin(polling));
        Ok(())
    }
}

/// The Telegram channel.
#[derive(Debug, Clone)]
pub struct Telegram {
    config: TelegramConfig,
    http: reqwest::Client,
}

/// What a tap on a toggle or Done gets when Telegram did not send the message with it (too old).
pub const MESSAGE_UNREADABLE: &str =
    "This message is too old to read the choices; answer on the page (the Open button).";

/// The mark of an option not chosen on a multi-select keyboard.
pub const UNCHOSEN: &str = "\u{2610}";

/// The mark of a chosen option on a multi-select keyboard.
pub const CHOSEN: &str = "\u{2713}";

/// The text of the button that answers a multi-select with the chosen options.
pub const DONE: &str = "Done";

/// How [`Telegram::poll_leased`] shares the polling among replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollLease {
    /// This replica's name in the lease; unique per running poller.
    pub holder: String,
    /// How long a taken or renewed lease lasts. A poller renews it before every `getUpdates`,
    /// whose long-poll timeout is kept to a third of it, so a replica that stops polling (it
    /// crashed, or its task was dropped) is replaced within one `ttl`, after its last request
    /// ended.
    pub ttl: Duration,
}

impl PollLease {
    /// A lease of `ttl` held under a random holder name (128 bits from the operating system,
    /// with the process id).
    #[must_use]
    pub fn new(ttl: Duration) -> PollLease {
        let mut bytes = [0u8; 16];
        let _ = getrandom::fill(&mut bytes);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        PollLease {
            holder: format!("{}-{hex}", std::process::id()),
            ttl,
        }
    }
}

/// A toggle button of a multi-select keyboard: option `i` of `ask`, chosen or not.
fn toggle_button(ask: AskId, i: usize, label: &str, chosen: bool) -> Value {
    let (mark, sign) = if chosen {
        (CHOSEN, '-')
    } else {
        (UNCHOSEN, '+')
    };
    let label = text::label(label);
    json!({"text": format!("{mark} {label}"), "callback_data": format!("{ask}:{sign}{i}")})
}

/// The option indices whose toggles are chosen (`{ask}:-{i}`) on an inline keyboard.
fn chosen_on(keyboard: &Value, ask: AskId) -> Vec<usize> {
    let prefix = format!("{ask}:-");
    keyboard
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row.as_array().into_iter().flatten())
        .filter_map(|b| {
            b["callback_data"]
                .as_str()?
                .strip_prefix(&prefix)?
                .parse()
                .ok()
        })
        .collect()
}

/// What a reply to a question too long for one message gets: it was cut, so it is answered
/// on the page only.
pub const CUT_QUESTION: &str =
    "This question was too long to show here whole: answer it on the page (Open to answer).";

/// What a reply to the question of an ask with several questions gets.
pub const SEVERAL_QUESTIONS: &str =
    "This question has several parts: answer it on the page (the Open button).";

/// Whether `s` fits one message ([`MAX_TEXT_CHARS`] characters).
fn fits(s: &str) -> bool {
    s.chars().count() <= MAX_TEXT_CHARS
}

/// The text of the open ask's message: who asks, the heading, every question and option;
/// cut (and saying so) when it does not fit.
fn open_text(notice: &Notice) -> text::Fitted {
    text::fit(
        &format!("{}\n\n{}", text::title(notice), text::body(notice)),
        fits,
    )
}

/// Cuts `s` to [`MAX_TEXT_CHARS`] characters, ending with `…` when cut.
fn fit(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT_CHARS {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(MAX_TEXT_CHARS - 1).collect();
    t.push('\u{2026}');
    t
}

impl Telegram {
    /// A channel with `config`.
    #[must_use]
    pub fn new(config: TelegramConfig) -> Telegram {
        let http = crate::http_client()
            .timeout(Duration::from_secs(config.poll_timeout_secs + 15))
            .build()
            .unwrap_or_default();
        Telegram { config, http }
    }

    /// Calls a Bot API method; the `result` on success. Errors never carry the URL (it holds
    /// the bot token).
    async fn call(&self, method: &str, body: &Value) -> Result<Value, ChannelError> {
        let url = format!(
            "{}/bot{}/{method}",
            self.config.api_base.trim_end_matches('/'),
            self.config.bot_token.expose()
        );
        let resp =
            self.http
                .post(url)
                .json(body)
                .send()
                .await
                .map_err(|e| ChannelError::Unreachable {
                    channel: NAME,
                    detail: e.without_url().to_string(),
                })?;
        let status = resp.status().as_u16();
        let reply: Value = resp.json().await.map_err(|e| ChannelError::BadReply {
            channel: NAME,
            detail: e.without_url().to_string(),
        })?;
        if reply["ok"] != json!(true) {
            let desc = reply["description"].as_str().unwrap_or("no description");
            return Err(ChannelError::Refused {
                channel: NAME,
                status,
                detail: format!("{method}: {}", text::truncate(desc, 200)),
            });
        }
        Ok(reply["result"].clone())
    }

    /// The `sendMessage` body for `chat`: one button per option of a single-select, or a
    /// toggle per option and Done for a multi-select ([`Notice::done`]), then Open. A
    /// question that does not fit [`MAX_TEXT_CHARS`] whole is cut, says so, and gets only
    /// "Open to answer".
    #[must_use]
    pub fn open_message(notice: &Notice, chat: i64) -> Value {
        let message = open_text(notice);
        if message.cut {
            // A cut question is answered on the page only.
            return json!({
                "chat_id": chat,
                "text": message.text,
                "reply_markup": {"inline_keyboard": [[{"text": text::OPEN_TO_ANSWER, "url": notice.page_url}]]},
            });
        }
        let mut rows: Vec<Value> = notice
            .choices
            .iter()
            .map(|c| {
                json!([{
                    "text": text::label(&c.label),
                    "callback_data": format!("{}:{}", notice.ask, c.token),
                }])
            })
            .collect();
        if let (Some(done), [q]) = (&notice.done, notice.questions.as_slice()) {
            for (i, o) in q.options.iter().enumerate() {
                rows.push(json!([toggle_button(notice.ask, i, &o.label, false)]));
            }
            rows.push(json!([{"text": DONE, "callback_data": format!("{}:{done}", notice.ask)}]));
        }
        if let Some(again) = &notice.again {
            rows.push(json!([{
                "text": text::SAME_ANSWER_AGAIN,
                "callback_data": format!("{}:{}", notice.ask, again.token),
            }]));
        }
        rows.push(json!([{"text": "Open", "url": notice.page_url}]));
        json!({
            "chat_id": chat,
            "text": message.text,
            "reply_markup": {"inline_keyboard": rows},
        })
    }

    fn allowed(&self, chat: Option<i64>, user: Option<i64>) -> bool {
        let chat_ok = chat.is_some_and(|c| self.config.chats.contains(&c));
        let user_ok = self.config.allowed_users.is_empty()
            || user.is_some_and(|u| self.config.allowed_users.contains(&u));
        chat_ok && user_ok
    }

    /// Takes in button taps by long polling until the task is dropped: each tap from an
    /// allow-listed chat and user redeems its token (into the tokens' store); every tap gets an
    /// `answerCallbackQuery` saying what happened. Only one poller per bot may run (the Bot
    /// API allows one `getUpdates` consumer); with several replicas use
    /// [`Telegram::poll_leased`].
    pub async fn poll(self: Arc<Self>, tokens: Tokens) {
        let mut offset: i64 = 0;
        loop {
            self.poll_once(&tokens, &mut offset, self.config.poll_timeout_secs)
                .await;
        }
    }

    /// [`Telegram::poll`], by one replica at a time: polls only while holding the store's
    /// lease `telegram:{bot id}` (renewed before every `getUpdates`); otherwise tries to take
    /// it every third of [`PollLease::ttl`]. Runs until the task is dropped; the lease then
    /// runs out and another replica takes over. Store failures are logged and count as not
    /// holding the lease.
    pub async fn poll_leased(self: Arc<Self>, tokens: Tokens, lease: PollLease) {
        let store = tokens.store().clone();
        let name = self.lease_name();
        let third = lease.ttl / 3;
        let timeout = self.config.poll_timeout_secs.min(third.as_secs());
        let mut holding = false;
        let mut offset: i64 = 0;
        loop {
            let now = Timestamp::now();
            let held = if holding {
                store
                    .renew_lease(&name, &lease.holder, now, lease.ttl)
                    .await
            } else {
                store
                    .acquire_lease(&name, &lease.holder, now, lease.ttl)
                    .await
            };
            match held {
                Ok(true) => {
                    if !holding {
                        tracing::info!(holder = %lease.holder, "telegram: this replica polls getUpdates");
                        // Updates not confirmed by the previous poller come again.
                        offset = 0;
                    }
                    holding = true;
                }
                Ok(false) => {
                    holding = false;
                    tokio::time::sleep(third).await;
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "telegram: the poll lease could not be read");
                    holding = false;
                    tokio::time::sleep(third).await;
                    continue;
                }
            }
            self.poll_once(&tokens, &mut offset, timeout).await;
        }
    }

    /// The name of this bot's poll lease: `telegram:` and the bot's id (the token's part
    /// before `:`, which is public; never the secret part).
    #[must_use]
    pub fn lease_name(&self) -> String {
        let id = self
            .config
            .bot_token
            .expose()
            .split_once(':')
            .map_or("bot", |(id, _)| id);
        format!("telegram:{id}")
    }

    /// One `getUpdates` round with a long-poll `timeout` (seconds), handling what came.
    async fn poll_once(&self, tokens: &Tokens, offset: &mut i64, timeout: u64) {
        let body = json!({
            "offset": *offset,
            "timeout": timeout,
            "allowed_updates": ["callback_query", "message"],
        });
        let updates = match self.call("getUpdates", &body).await {
            Ok(u) => u,
            Err(e) => {
                tracing::warn!(error = %e, "telegram: getUpdates failed; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
                return;
            }
        };
        for u in updates.as_array().into_iter().flatten() {
            if let Some(id) = u["update_id"].as_i64() {
                *offset = (*offset).max(id + 1);
            }
            if u["callback_query"].is_object() {
                self.on_tap(&u["callback_query"], tokens).await;
            } else if u["message"]["reply_to_message"].is_object() {
                self.on_reply(&u["message"], tokens.store()).await;
            }
        }
    }

    /// A reply to one of the bot's question messages is the human's own answer (the answer
    /// is the allow-listed chat and user, which Telegram vouches for; no token involved).
    /// Replies from outside the allow-list, and to messages that are not the bot's questions,
    /// are ignored without a word; a reply to a question already closed is told so.
    async fn on_reply(&self, m: &Value, store: &Store) {
        let chat = m["chat"]["id"].as_i64();
        let user = m["from"]["id"].as_i64();
        let replied = m["reply_to_message"]["message_id"].as_i64();
        let text = m["text"].as_str().map(str::trim).unwrap_or("");
        let (Some(chat), Some(replied)) = (chat, replied) else {
            return;
        };
        if !self.allowed(Some(chat), user) || text.is_empty() {
            return;
        }
        let stored = match store
            .channel_message_ask(NAME, &format!("{chat}:{replied}"))
            .await
        {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "telegram: the replied-to message could not be looked up");
                None
            }
        };
        let Some(ask) = stored.or_else(|| self.ask_of_keyboard(&m["reply_to_message"])) else {
            return;
        };
        let Some(question) = only_question(ask, store).await else {
            return;
        };
        let reply = match question {
            Replied::Cut => CUT_QUESTION.to_owned(),
            Replied::Several => SEVERAL_QUESTIONS.to_owned(),
            Replied::Only(q) => {
                let answer = Answers {
                    answers: vec![AnswerItem::custom(q, text)],
                };
                let outcome = Outcome::Answered {
                    answer: serde_json::to_value(&answer).unwrap_or_default(),
                    by: Responder {
                        answerer: crate::ANSWERER.to_owned(),
                        channel: Some(NAME.to_owned()),
                        user: user.map(|u| u.to_string()),
                        submission: None,
                    },
                };
                match store.record_outcome(ask, &outcome, Timestamp::now()).await {
                    Ok(Recorded::Won) => format!("Answer recorded: \u{201c}{text}\u{201d}."),
                    Ok(Recorded::Lost(c)) => crate::closed_text(&c),
                    Err(e) => {
                        tracing::warn!(error = %e, "telegram: the answer could not be stored");
                        "The answer could not be stored. Try again, or answer on the page."
                            .to_owned()
                    }
                }
            }
        };
        let body = json!({
            "chat_id": chat,
            "text": fit(&reply),
            "reply_parameters": {"message_id": m["message_id"]},
        });
        if let Err(e) = self.call("sendMessage", &body).await {
            tracing::warn!(error = %e, "telegram: the reply could not be sent");
        }
    }

    /// The ask of one of the bot's question messages, read from its keyboard's
    /// `callback_data` (`{ask}:…`), which Telegram hands back with the replied-to message.
    /// `None` for a message without such buttons (a free-text question's), or not from this
    /// bot.
    fn ask_of_keyboard(&self, m: &Value) -> Option<AskId> {
        let bot: Option<i64> = self
            .config
            .bot_token
            .expose()
            .split_once(':')
            .and_then(|(id, _)| id.parse().ok());
        if m["from"]["id"].as_i64().is_some_and(|f| Some(f) != bot) {
            return None;
        }
        m["reply_markup"]["inline_keyboard"]
            .as_array()?
            .iter()
            .flat_map(|row| row.as_array().into_iter().flatten())
            .filter_map(|b| b["callback_data"].as_str()?.split_once(':')?.0.parse().ok())
            .next()
            .map(AskId)
    }

    async fn on_tap(&self, q: &Value, tokens: &Tokens) {
        let Some(query_id) = q["id"].as_str() else {
            return;
        };
        let chat = q["message"]["chat"]["id"].as_i64();
        let user = q["from"]["id"].as_i64();
        let reply = if self.allowed(chat, user) {
            let data = q["data"].as_str().unwrap_or("");
            let parsed = data
                .split_once(':')
                .and_then(|(a, t)| Some((AskId(a.parse().ok()?), t)));
            match parsed {
                None => crate::Refusal::Unknown.to_string(),
                Some((ask, rest)) if rest.starts_with(['+', '-']) => {
                    self.on_toggle(q, ask, data, tokens.store()).await
                }
                Some((ask, token)) => {
                    // A Done (set) token answers with the options chosen on the keyboard as
                    // Telegram sent it with the tap.
                    let keyboard = &q["message"]["reply_markup"]["inline_keyboard"];
                    let is_set = matches!(
                        tokens.peek(ask, NAME, token).await,
                        Ok(c) if c.kind == ChoiceKind::Set
                    );
                    let given = if !is_set {
                        Given::Tap
                    } else if keyboard.is_array() {
                        Given::Set(chosen_on(keyboard, ask))
                    } else {
                        return self.answer_query(query_id, MESSAGE_UNREADABLE).await;
                    };
                    let who = user.map(|u| u.to_string());
                    match tokens.redeem_with(ask, NAME, token, who, given).await {
                        Ok((_, summary)) => format!("Answer recorded: {summary}."),
                        Err(RedeemError::Refused(r)) => r.to_string(),
                        Err(e) => {
                            tracing::warn!(error = %e, "telegram: the answer could not be stored");
                            "The answer could not be stored. Try again, or answer on the page."
                                .to_owned()
                        }
                    }
                }
            }
        } else {
            NOT_ALLOWED.to_owned()
        };
        self.answer_query(query_id, &reply).await;
    }

    /// Tells the tapping user `reply` (`answerCallbackQuery`, which also ends the button's
    /// spinner).
    async fn answer_query(&self, query_id: &str, reply: &str) {
        let body = json!({"callback_query_id": query_id, "text": text::truncate(reply, 200)});
        if let Err(e) = self.call("answerCallbackQuery", &body).await {
            tracing::warn!(error = %e, "telegram: answerCallbackQuery failed");
        }
    }

    /// A toggle tap (`data` = `{ask}:+{i}` or `{ask}:-{i}`): flips that option on the
    /// message's keyboard, spending nothing. Returns what the tapping user is told.
    async fn on_toggle(&self, q: &Value, ask: AskId, data: &str, store: &Store) -> String {
        let rec = match store.get(ask).await {
            Ok(rec) => rec,
            Err(ask_user_store::Error::NotFound(_)) => return crate::Refusal::Unknown.to_string(),
            Err(e) => {
                tracing::warn!(error = %e, "telegram: the ask could not be read");
                return "The choice could not be changed. Try again, or answer on the page."
                    .to_owned();
            }
        };
        if let Some(closed) = &rec.closed {
            return crate::closed_text(closed);
        }
        let m = &q["message"];
        let (Some(chat), Some(id), Some(rows)) = (
            m["chat"]["id"].as_i64(),
            m["message_id"].as_i64(),
            m["reply_markup"]["inline_keyboard"].as_array(),
        ) else {
            return MESSAGE_UNREADABLE.to_owned();
        };
        let labels: Vec<String> = serde_json::from_str::<StoredQuestions>(&rec.request)
            .ok()
            .and_then(|r| r.questions.into_iter().next())
            .map(|q| q.options.into_iter().map(|o| o.label).collect())
            .unwrap_or_default();
        // `{ask}:+{i}` chooses option i, `{ask}:-{i}` un-chooses it.
        let rest = data.split_once(':').map_or("", |(_, r)| r);
        let flip = rest
            .get(1..)
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| Some((i, labels.get(i)?, rest.starts_with('+'))));
        let mut found = false;
        let rows: Vec<Value> = rows
            .iter()
            .map(|row| {
                let buttons: Vec<Value> = row
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| {
                        if b["callback_data"].as_str() != Some(data) {
                            return b.clone();
                        }
                        match flip {
                            Some((i, label, choose)) => {
                                found = true;
                                toggle_button(ask, i, label, choose)
                            }
                            None => b.clone(),
                        }
                    })
                    .collect();
                Value::Array(buttons)
            })
            .collect();
        if !found {
            return crate::Refusal::Unknown.to_string();
        }
        let keyboard = Value::Array(rows);
        let chosen: Vec<String> = chosen_on(&keyboard, ask)
            .into_iter()
            .filter_map(|i| labels.get(i))
            .map(|l| format!("\u{201c}{l}\u{201d}"))
            .collect();
        let body = json!({
            "chat_id": chat,
            "message_id": id,
            "reply_markup": {"inline_keyboard": keyboard},
        });
        if let Err(e) = self.call("editMessageReplyMarkup", &body).await {
            tracing::warn!(error = %e, "telegram: the keyboard could not be edited");
            return "The choice could not be changed. Try again, or answer on the page.".to_owned();
        }
        if chosen.is_empty() {
            "Nothing chosen yet.".to_owned()
        } else {
            format!("Chosen: {}. Tap Done to answer.", chosen.join(", "))
        }
    }
}

/// What a reply to an ask's message can answer.
enum Replied {
    /// The ask's only question, by id.
    Only(String),
    /// Nothing: the ask has several questions.
    Several,
    /// Nothing: its message was cut, so the human never saw the whole question.
    Cut,
}

/// What a reply to `ask`'s message answers, read from the store; `None` when the ask or its
/// request cannot be read.
async fn only_question(ask: AskId, store: &Store) -> Option<Replied> {
    let rec = store.get(ask).await.ok()?;
    let req: StoredQuestions = serde_json::from_str(&rec.request).ok()?;
    let sent = Notice {
        ask,
        asker: rec.asker.clone(),
        questions: req.questions.clone(),
        page_url: String::new(),
        public_url: String::new(),
        choices: Vec::new(),
        done: None,
        own: None,
        again: None,
    };
    if open_text(&sent).cut {
        return Some(Replied::Cut);
    }
    Some(match req.questions.as_slice() {
        [q] => Replied::Only(q.id.clone()),
        _ => Replied::Several,
    })
}

/// The part of a stored request a toggle reads: the questions.
#[derive(serde::Deserialize)]
struct StoredQuestions {
    questions: Vec<ask_user_core::Question>,
}

impl Channel for Telegram {
    fn name(&self) -> &'static str {
        NAME
    }

    fn takes_chosen_sets(&self) -> bool {
        true
    }

    fn notify<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<MessageRef, ChannelError>> {
        async move {
            let mut refs = Vec::new();
            for &chat in &self.config.chats {
                let sent = self
                    .call("sendMessage", &Telegram::open_message(notice, chat))
                    .await?;
                let id = sent["message_id"].as_i64().ok_or(ChannelError::BadReply {
                    channel: NAME,
                    detail: "sendMessage returned no message_id".to_owned(),
                })?;
                refs.push(format!("{chat}:{id}"));
            }
            Ok(MessageRef(refs.join(",")))
        }
        .boxed()
    }

    fn closed<'a>(
        &'a self,
        notice: &'a Notice,
        closed: &'a Closed,
        reference: &'a MessageRef,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        async move {
            let text = text::fit(
                &format!(
                    "{}\n\n{}\n\n{}",
                    crate::ntfy::closed_line(closed),
                    text::title(notice),
                    text::body(notice)
                ),
                fits,
            )
            .text;
            for r in reference.0.split(',') {
                let Some((chat, id)) = r.split_once(':') else {
                    continue;
                };
                let (Ok(chat), Ok(id)) = (chat.parse::<i64>(), id.parse::<i64>()) else {
                    continue;
                };
                let body = json!({"chat_id": chat, "message_id": id, "text": text});
                self.call("editMessageText", &body).await?;
            }
            Ok(())
        }
        .boxed()
    }
}
