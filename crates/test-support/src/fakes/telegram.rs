//! A FAKE Telegram Bot API, in process on loopback: the real service cannot be reached from
//! here.
//!
//! It follows the documented subset this crate uses (<https://core.telegram.org/bots/api>):
//! - every method is `POST /bot<token>/<method>` with a JSON body; a wrong token gets
//!   `{"ok":false,"error_code":401,"description":"Unauthorized"}`; results are
//!   `{"ok":true,"result":…}`;
//! - `sendMessage`: `text` 1–4096 characters; `inline_keyboard` buttons carry `text` and
//!   exactly one of `callback_data` (1–64 bytes) or `url`; refused with 400 otherwise;
//! - `editMessageText`: the message must exist ("message to edit not found"), and a text
//!   equal to the current one with no markup change is refused ("message is not modified");
//! - `getUpdates`: updates with `update_id >= offset`, waiting up to `timeout` seconds when
//!   there are none; an `offset` confirms every earlier update (they are not sent again);
//! - `answerCallbackQuery`: `text` 0–200 characters;
//! - `editMessageReplyMarkup`: replaces a message's inline keyboard (same button checks as
//!   `sendMessage`); "message to edit not found", "message is not modified" as above;
//! - a `callback_query` carries the message its button is on as it is now (text and
//!   `reply_markup`), and a reply's `reply_to_message` the replied-to message likewise, with
//!   `from` the bot;
//! - only one `getUpdates` may run at a time: a new one terminates the one in flight, which
//!   gets 409 "Conflict: terminated by other getUpdates request; make sure that only one bot
//!   instance is running" (counted in [`FakeTelegram::conflicts`]).
//!
//! Not documented, this crate's own rule, also refused: any `parse_mode` or `entities`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The bot token the fake accepts.
pub const BOT_TOKEN: &str = "123456:ABC-secret-bot-token";

/// The message `body` names (`chat_id`, `message_id`): its key and its current body.
fn named_message<'a>(inner: &'a mut Inner, body: &Value) -> Option<((i64, i64), &'a mut Value)> {
    let key = (
        body["chat_id"].as_i64().unwrap_or(0),
        body["message_id"].as_i64().unwrap_or(0),
    );
    inner
        .messages
        .iter_mut()
        .find(|(k, _)| *k == key)
        .map(|(_, current)| (key, current))
}

#[derive(Debug, Default)]
struct Inner {
    /// Every accepted call: (method, body).
    calls: Vec<(String, Value)>,
    /// Current messages: (chat, message_id) → body of the last send or edit.
    messages: Vec<((i64, i64), Value)>,
    updates: Vec<Value>,
    next_update: i64,
    next_message: i64,
    /// The generation of the `getUpdates` in flight (a newer one terminates it).
    poll_generation: u64,
    /// `getUpdates` requests terminated by a concurrent one (409).
    conflicts: usize,
    /// `getUpdates` requests answered.
    polls: usize,
}

/// A running fake Telegram Bot API, and the taps and replies a person makes in Telegram.
#[derive(Clone, Debug, Default)]
pub struct FakeTelegram {
    /// Its base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Arc<Mutex<Inner>>,
    changed: Arc<Notify>,
}

type Reply = (StatusCode, Json<Value>);

/// An error as the Bot API sends it: the HTTP status is the `error_code`.
fn err(code: u16, description: &str) -> Reply {
    let status = StatusCode::from_u16(code).unwrap();
    (
        status,
        Json(json!({"ok": false, "error_code": code, "description": description})),
    )
}

impl FakeTelegram {
    /// Starts the fake on a fresh loopback port.
    pub async fn start() -> FakeTelegram {
        let mut fake = FakeTelegram::default();
        let app = axum::Router::new()
            .route("/{bot}/{method}", axum::routing::post(call))
            .with_state(fake.clone());
        let addr = super::serve(app).await;
        fake.url = format!("http://{addr}");
        fake
    }

    /// The accepted calls of `method` so far, their bodies.
    pub fn calls(&self, method: &str) -> Vec<Value> {
        let inner = self.inner.lock().unwrap();
        inner
            .calls
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// Waits (up to 30 s) until `pred` holds for the accepted calls of `method`.
    pub async fn wait_for(&self, method: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let notified = self.changed.notified();
            let now = self.calls(method);
            if pred(&now) {
                return now;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("fake telegram: timed out waiting on {method}; got {now:#?}");
            }
        }
    }

    /// `getUpdates` requests terminated by a concurrent one (409) so far.
    pub fn conflicts(&self) -> usize {
        self.inner.lock().unwrap().conflicts
    }

    /// `getUpdates` requests answered so far.
    pub fn polls(&self) -> usize {
        self.inner.lock().unwrap().polls
    }

    /// The message `message_id` in `chat` as Telegram would hand it with an update: its id,
    /// chat, the bot as sender, and its current text and keyboard when it exists.
    fn message_json(inner: &Inner, chat: i64, message_id: i64) -> Value {
        let mut m = json!({"message_id": message_id, "chat": {"id": chat, "type": "private"}, "date": 1_700_000_000});
        if let Some((_, body)) = inner
            .messages
            .iter()
            .find(|(k, _)| *k == (chat, message_id))
        {
            let bot_id: i64 = BOT_TOKEN.split(':').next().unwrap().parse().unwrap();
            m["from"] = json!({"id": bot_id, "is_bot": true, "first_name": "Bot"});
            m["text"] = body["text"].clone();
            if let Some(k) = body.get("reply_markup") {
                m["reply_markup"] = k.clone();
            }
        }
        m
    }

    /// The message `message_id` in `chat` as it is now (its last send or edit body).
    pub fn message(&self, chat: i64, message_id: i64) -> Value {
        let inner = self.inner.lock().unwrap();
        inner
            .messages
            .iter()
            .find(|(k, _)| *k == (chat, message_id))
            .map(|(_, b)| b.clone())
            .unwrap()
    }

    /// Queues the next update (numbered `n`): `update_id` 1000 + n and the fields `make`
    /// gives; wakes the long polls. Returns `n`.
    fn push_update(&self, make: impl FnOnce(&Inner, i64) -> Value) -> i64 {
        let n = {
            let mut inner = self.inner.lock().unwrap();
            inner.next_update += 1;
            let n = inner.next_update;
            let mut update = json!({"update_id": 1000 + n});
            if let Value::Object(fields) = make(&inner, n) {
                update.as_object_mut().unwrap().extend(fields);
            }
            inner.updates.push(update);
            n
        };
        self.changed.notify_waiters();
        n
    }

    /// A user taps an inline button: a `callback_query` update. Returns its id.
    pub fn tap(&self, chat: i64, user: i64, message_id: i64, data: &str) -> String {
        let n = self.push_update(|inner, n| {
            json!({"callback_query": {
                "id": format!("cq{n}"),
                "from": {"id": user, "is_bot": false, "first_name": "H"},
                "message": Self::message_json(inner, chat, message_id),
                "chat_instance": "x",
                "data": data,
            }})
        });
        format!("cq{n}")
    }

    /// The message id the fake gave the message sent with `body` (before any edit).
    pub fn message_id_of(&self, body: &Value) -> i64 {
        let inner = self.inner.lock().unwrap();
        inner
            .messages
            .iter()
            .find(|(_, b)| b == body)
            .map(|((_, id), _)| *id)
            .unwrap()
    }

    /// A user replies to message `reply_to` with `text`: a `message` update. Returns the new
    /// message's id.
    pub fn reply(&self, chat: i64, user: i64, reply_to: i64, text: &str) -> i64 {
        let n = self.push_update(|inner, n| {
            json!({"message": {
                "message_id": 10_000 + n,
                "from": {"id": user, "is_bot": false, "first_name": "H"},
                "chat": {"id": chat, "type": "private"},
                "date": 1_700_000_000,
                "text": text,
                "reply_to_message": Self::message_json(inner, chat, reply_to),
            }})
        });
        10_000 + n
    }

    /// Replies and waits for the bot's `sendMessage` replying to it; returns its text.
    pub async fn reply_and_read(&self, chat: i64, user: i64, reply_to: i64, text: &str) -> String {
        let id = self.reply(chat, user, reply_to, text);
        let calls = self
            .wait_for("sendMessage", |c| {
                c.iter().any(|b| b["reply_parameters"]["message_id"] == id)
            })
            .await;
        let b = calls
            .iter()
            .find(|b| b["reply_parameters"]["message_id"] == id)
            .unwrap();
        b["text"].as_str().unwrap_or("").to_owned()
    }

    /// Taps and waits for the bot's `answerCallbackQuery`; returns its text.
    pub async fn tap_and_read(&self, chat: i64, user: i64, message_id: i64, data: &str) -> String {
        let id = self.tap(chat, user, message_id, data);
        let calls = self
            .wait_for("answerCallbackQuery", |c| {
                c.iter().any(|b| b["callback_query_id"] == id.as_str())
            })
            .await;
        let b = calls
            .iter()
            .find(|b| b["callback_query_id"] == id.as_str())
            .unwrap();
        b["text"].as_str().unwrap_or("").to_owned()
    }
}

fn check_send(body: &Value) -> Result<(), &'static str> {
    if body.get("parse_mode").is_some() || body.get("entities").is_some() {
        return Err("fake: parse_mode and entities must not be used");
    }
    let n = body["text"].as_str().map_or(0, |t| t.chars().count());
    if n == 0 || n > 4096 {
        return Err("Bad Request: message text is empty or too long");
    }
    for row in body["reply_markup"]["inline_keyboard"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for b in row.as_array().into_iter().flatten() {
            let has_text = b["text"].as_str().is_some_and(|t| !t.is_empty());
            let data = b["callback_data"].as_str();
            let url = b["url"].as_str();
            if !has_text || data.is_some() == url.is_some() {
                return Err("Bad Request: can't parse inline keyboard button");
            }
            if data.is_some_and(|d| d.is_empty() || d.len() > 64) {
                return Err("Bad Request: BUTTON_DATA_INVALID");
            }
        }
    }
    Ok(())
}

async fn call(
    State(f): State<FakeTelegram>,
    Path((bot, method)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Reply {
    if bot != format!("bot{BOT_TOKEN}") {
        return err(401, "Unauthorized");
    }
    if method == "getUpdates" {
        let offset = body["offset"].as_i64().unwrap_or(0);
        let timeout = Duration::from_secs(body["timeout"].as_u64().unwrap_or(0));
        let deadline = tokio::time::Instant::now() + timeout;
        let generation = {
            let mut inner = f.inner.lock().unwrap();
            inner.poll_generation += 1;
            inner.poll_generation
        };
        f.changed.notify_waiters();
        loop {
            let notified = f.changed.notified();
            let ready: Vec<Value> = {
                let mut inner = f.inner.lock().unwrap();
                if inner.poll_generation != generation {
                    inner.conflicts += 1;
                    return err(
                        409,
                        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
                    );
                }
                inner
                    .updates
                    .retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
                inner.updates.clone()
            };
            if !ready.is_empty() || tokio::time::timeout_at(deadline, notified).await.is_err() {
                f.inner.lock().unwrap().polls += 1;
                return (StatusCode::OK, Json(json!({"ok": true, "result": ready})));
            }
        }
    }
    let result = {
        let mut inner = f.inner.lock().unwrap();
        let result = match method.as_str() {
            "sendMessage" => {
                if let Err(e) = check_send(&body) {
                    return err(400, e);
                }
                let Some(chat) = body["chat_id"].as_i64() else {
                    return err(400, "Bad Request: chat not found");
                };
                inner.next_message += 1;
                let id = inner.next_message;
                inner.messages.push(((chat, id), body.clone()));
                json!({"message_id": id, "chat": {"id": chat}, "text": body["text"]})
            }
            "editMessageText" => {
                if let Err(e) = check_send(&body) {
                    return err(400, e);
                }
                let Some((key, current)) = named_message(&mut inner, &body) else {
                    return err(400, "Bad Request: message to edit not found");
                };
                if current["text"] == body["text"]
                    && current.get("reply_markup") == body.get("reply_markup")
                {
                    return err(400, "Bad Request: message is not modified");
                }
                *current = body.clone();
                json!({"message_id": key.1, "chat": {"id": key.0}, "text": body["text"]})
            }
            "editMessageReplyMarkup" => {
                if let Err(e) =
                    check_send(&json!({"text": "x", "reply_markup": body["reply_markup"]}))
                {
                    return err(400, e);
                }
                let Some((key, current)) = named_message(&mut inner, &body) else {
                    return err(400, "Bad Request: message to edit not found");
                };
                if current.get("reply_markup") == body.get("reply_markup") {
                    return err(400, "Bad Request: message is not modified");
                }
                current["reply_markup"] = body["reply_markup"].clone();
                json!({"message_id": key.1, "chat": {"id": key.0}, "text": current["text"]})
            }
            "answerCallbackQuery" => {
                if body["text"]
                    .as_str()
                    .is_some_and(|t| t.chars().count() > 200)
                {
                    return err(400, "Bad Request: text is too long");
                }
                json!(true)
            }
            _ => return err(404, "Not Found"),
        };
        inner.calls.push((method.clone(), body));
        result
    };
    f.changed.notify_waiters();
    (StatusCode::OK, Json(json!({"ok": true, "result": result})))
}
