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
//!
//! A button's `callback_data` is `{ask}:{token}` (at most 19 + 1 + 32 bytes). A tap counts only
//! from a chat in [`TelegramConfig::chats`] and, when [`TelegramConfig::allowed_users`] is not
//! empty, from one of those users.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ask_user_core::{AnswerItem, Answers};
use ask_user_store::{AskId, Closed, Outcome, Recorded, Responder, Store, Timestamp};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::channel::{Channel, ChannelError, MessageRef, Notice};
use crate::text;
use crate::token::{RedeemError, Tokens};

const NAME: &str = "telegram";

/// The Bot API's limit on a message's text, in characters.
pub const MAX_TEXT_CHARS: usize = 4096;

/// What a user outside the allow-list is told when tapping a button.
pub const NOT_ALLOWED: &str = "You may not answer this question.";

/// How the bot is reached.
#[derive(Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The Bot API base URL (`https://api.telegram.org`).
    pub api_base: String,
    /// The bot's token from @BotFather; never logged (it is part of every request path).
    pub bot_token: String,
    /// The chats the questions go to; taps count only from these.
    pub chats: Vec<i64>,
    /// The users whose taps count; empty: anyone in [`TelegramConfig::chats`].
    pub allowed_users: Vec<i64>,
    /// The long-poll timeout of `getUpdates`, in seconds (Telegram allows up to 50).
    pub poll_timeout_secs: u64,
}

impl std::fmt::Debug for TelegramConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelegramConfig")
            .field("api_base", &self.api_base)
            .field("bot_token", &"<redacted>")
            .field("chats", &self.chats)
            .field("allowed_users", &self.allowed_users)
            .finish_non_exhaustive()
    }
}

/// The Telegram channel.
#[derive(Debug, Clone)]
pub struct Telegram {
    config: TelegramConfig,
    http: reqwest::Client,
    /// The messages of open asks, for replies: (chat, message id) → (ask, the id of its only
    /// question; `None` when it has several).
    open: Arc<Mutex<OpenMessages>>,
}

/// (chat, message id) → (ask, the id of its only question, `None` when it has several).
type OpenMessages = HashMap<(i64, i64), (AskId, Option<String>)>;

/// What a reply to the question of an ask with several questions gets.
pub const SEVERAL_QUESTIONS: &str =
    "This question has several parts: answer it on the page (the Open button).";

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
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.poll_timeout_secs + 15))
            .build()
            .unwrap_or_default();
        Telegram {
            config,
            http,
            open: Arc::default(),
        }
    }

    fn open_map(&self) -> std::sync::MutexGuard<'_, OpenMessages> {
        // Each write is one insert or remove: a poisoned map is still consistent.
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Calls a Bot API method; the `result` on success. Errors never carry the URL (it holds
    /// the bot token).
    async fn call(&self, method: &str, body: &Value) -> Result<Value, ChannelError> {
        let url = format!(
            "{}/bot{}/{method}",
            self.config.api_base.trim_end_matches('/'),
            self.config.bot_token
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

    /// The `sendMessage` body for `chat`.
    #[must_use]
    pub fn open_message(notice: &Notice, chat: i64) -> Value {
        let mut rows: Vec<Value> = notice
            .choices
            .iter()
            .map(|c| {
                json!([{
                    "text": c.label,
                    "callback_data": format!("{}:{}", notice.ask, c.token),
                }])
            })
            .collect();
        rows.push(json!([{"text": "Open", "url": notice.page_url}]));
        json!({
            "chat_id": chat,
            "text": fit(&format!("{}\n\n{}", text::title(notice), text::body(notice))),
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
    /// API allows one `getUpdates` consumer).
    pub async fn poll(self: Arc<Self>, tokens: Tokens) {
        let store = tokens.store().clone();
        let mut offset: i64 = 0;
        loop {
            let body = json!({
                "offset": offset,
                "timeout": self.config.poll_timeout_secs,
                "allowed_updates": ["callback_query", "message"],
            });
            let updates = match self.call("getUpdates", &body).await {
                Ok(u) => u,
                Err(e) => {
                    tracing::warn!(error = %e, "telegram: getUpdates failed; retrying");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    continue;
                }
            };
            for u in updates.as_array().into_iter().flatten() {
                if let Some(id) = u["update_id"].as_i64() {
                    offset = offset.max(id + 1);
                }
                if u["callback_query"].is_object() {
                    self.on_tap(&u["callback_query"], &tokens).await;
                } else if u["message"]["reply_to_message"].is_object() {
                    self.on_reply(&u["message"], &store).await;
                }
            }
        }
    }

    /// A reply to one of the bot's question messages is the human's own answer (the answer
    /// is the allow-listed chat and user, which Telegram vouches for; no token involved).
    /// Replies from outside the allow-list, and to messages that are not open questions, are
    /// ignored without a word.
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
        let Some((ask, question)) = self.open_map().get(&(chat, replied)).cloned() else {
            return;
        };
        let reply = match question {
            None => SEVERAL_QUESTIONS.to_owned(),
            Some(q) => {
                let answer = Answers {
                    answers: vec![AnswerItem::custom(q, text)],
                };
                let outcome = Outcome::Answered {
                    answer: serde_json::to_value(&answer).unwrap_or_default(),
                    by: Responder {
                        answerer: crate::ANSWERER.to_owned(),
                        channel: Some(NAME.to_owned()),
                        user: user.map(|u| u.to_string()),
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

    async fn on_tap(&self, q: &Value, tokens: &Tokens) {
        let Some(query_id) = q["id"].as_str() else {
            return;
        };
        let chat = q["message"]["chat"]["id"].as_i64();
        let user = q["from"]["id"].as_i64();
        let reply = if !self.allowed(chat, user) {
            NOT_ALLOWED.to_owned()
        } else {
            let data = q["data"].as_str().unwrap_or("");
            let parsed = data
                .split_once(':')
                .and_then(|(a, t)| Some((AskId(a.parse().ok()?), t)));
            match parsed {
                None => crate::Refusal::Unknown.to_string(),
                Some((ask, token)) => {
                    let who = user.map(|u| u.to_string());
                    match tokens.redeem(ask, NAME, token, who).await {
                        Ok(c) => format!("Answer recorded: \u{201c}{}\u{201d}.", c.label),
                        Err(RedeemError::Refused(r)) => r.to_string(),
                        Err(e) => {
                            tracing::warn!(error = %e, "telegram: the answer could not be stored");
                            "The answer could not be stored. Try again, or answer on the page."
                                .to_owned()
                        }
                    }
                }
            }
        };
        let body = json!({"callback_query_id": query_id, "text": text::truncate(&reply, 200)});
        if let Err(e) = self.call("answerCallbackQuery", &body).await {
            tracing::warn!(error = %e, "telegram: answerCallbackQuery failed");
        }
    }
}

impl Channel for Telegram {
    fn name(&self) -> &'static str {
        NAME
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
                let question = match notice.questions.as_slice() {
                    [q] => Some(q.id.clone()),
                    _ => None,
                };
                self.open_map().insert((chat, id), (notice.ask, question));
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
            let text = fit(&format!(
                "{}\n\n{}\n\n{}",
                crate::ntfy::closed_line(closed),
                text::title(notice),
                text::body(notice)
            ));
            for r in reference.0.split(',') {
                let Some((chat, id)) = r.split_once(':') else {
                    continue;
                };
                let (Ok(chat), Ok(id)) = (chat.parse::<i64>(), id.parse::<i64>()) else {
                    continue;
                };
                self.open_map().remove(&(chat, id));
                let body = json!({"chat_id": chat, "message_id": id, "text": text});
                self.call("editMessageText", &body).await?;
            }
            Ok(())
        }
        .boxed()
    }
}
