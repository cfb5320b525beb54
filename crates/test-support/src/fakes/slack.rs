//! A FAKE Slack (Web API subset and the interactivity sender), in process on loopback: the
//! real service cannot be reached from here.
//!
//! It follows the documented behaviour this crate relies on (<https://api.slack.com/>):
//! - `POST /api/chat.postMessage` and `/api/chat.update` with `Authorization: Bearer <bot
//!   token>`; failures are HTTP 200 `{"ok":false,"error":…}` (`invalid_auth`,
//!   `message_not_found`, `invalid_blocks`); success returns `channel` and `ts`;
//! - Block Kit limits: `section` text ≤ 3000 characters, ≤ 25 elements in an `actions` block,
//!   `button` text `plain_text` ≤ 75 characters, `value` ≤ 2000, `action_id` unique in the
//!   block; a button has a `value` or a `url` and an optional `style` (`primary`, `danger`);
//!   `block_id` ≤ 255 characters and unique in the message, `action_id` ≤ 255;
//! - `checkboxes` (in an `actions` block): 1–10 options, each with `text` (`plain_text` or
//!   `mrkdwn`) and an optional `description` of ≤ 75 characters, and a unique `value` of
//!   ≤ 75 characters (the stricter of the documented 75 and 150);
//! - `input` blocks (allowed in messages): a `plain_text` `label` of 1–2000 characters, an
//!   `element`; a `plain_text_input` has `max_length` ≤ 3000 and `dispatch_action_config.
//!   trigger_actions_on` ⊆ {`on_enter_pressed`, `on_character_entered`}; `dispatch_action`
//!   is a boolean;
//! - a Done click carries the message's ticked boxes in `state.values[block_id][action_id].
//!   selected_options`; Enter in a `dispatch_action` input sends a `plain_text_input` action
//!   with the input's `block_id` and the typed `value` (≤ its `max_length`): both are built
//!   here from the message as posted, so a click can only name what the message shows;
//! - interactivity: a click is a form POST `payload=<json>` (`type: "block_actions"`), signed
//!   `v0=` + hex HMAC-SHA256(signing secret, `v0:{ts}:{body}`) — computed here by Python's
//!   `hmac` module, independently of the crate's own code — and Slack gives up on an app that
//!   does not answer 200 within 3 seconds (the fake fails the click then);
//! - `response_url` takes the app's reply (recorded here).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The bot token the fake accepts.
pub const BOT_TOKEN: &str = "xoxb-fake-secret-token";
/// The signing secret the fake signs its clicks with.
pub const SIGNING_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

#[derive(Debug, Default)]
struct Inner {
    calls: Vec<(String, Value)>,
    messages: Vec<(String, Value)>,
    responses: Vec<(usize, Value)>,
    next_response: usize,
}

/// A running fake Slack Web API, and the clicks a person makes in Slack.
#[derive(Clone, Debug, Default)]
pub struct FakeSlack {
    /// Its base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Arc<Mutex<Inner>>,
    changed: Arc<Notify>,
}

/// How a click's request is signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signing {
    /// Signed with [`SIGNING_SECRET`], timestamped now.
    Good,
    /// Signed with another secret.
    WrongSecret,
    /// Signed right, timestamped too long ago.
    Stale,
    /// No signature.
    Missing,
}

/// HMAC-SHA256 of `data` under `key`, in hex, computed by Python's `hmac` module (not by the
/// code under test).
pub fn hmac_hex(key: &str, data: &str) -> String {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import hmac,hashlib,sys; print(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())",
            key,
            data,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn plain_ok(t: &Value, max: usize) -> bool {
    t["type"] == "plain_text"
        && t["text"]
            .as_str()
            .is_some_and(|t| (1..=max).contains(&t.chars().count()))
}

fn id_ok(v: &Value) -> bool {
    v.is_null()
        || v.as_str()
            .is_some_and(|s| (1..=255).contains(&s.chars().count()))
}

fn element_error(e: &Value) -> Option<&'static str> {
    if !id_ok(&e["action_id"]) {
        return Some("invalid_blocks");
    }
    match e["type"].as_str() {
        Some("button") => {
            let value_ok = e["value"].as_str().is_some_and(|v| v.len() <= 2000);
            let url_ok = e["url"].as_str().is_some();
            let style_ok =
                e["style"].is_null() || e["style"] == "primary" || e["style"] == "danger";
            if !plain_ok(&e["text"], 75) || !(value_ok || url_ok) || !style_ok {
                return Some("invalid_blocks");
            }
        }
        Some("checkboxes") => {
            let opts = e["options"].as_array()?;
            let mut values: Vec<&str> = Vec::new();
            if opts.is_empty() || opts.len() > 10 {
                return Some("invalid_blocks");
            }
            for o in opts {
                let text_ok = (o["text"]["type"] == "plain_text" || o["text"]["type"] == "mrkdwn")
                    && o["text"]["text"]
                        .as_str()
                        .is_some_and(|t| (1..=75).contains(&t.chars().count()));
                let desc_ok = o["description"].is_null() || plain_ok(&o["description"], 75);
                let Some(v) = o["value"].as_str().filter(|v| (1..=75).contains(&v.len())) else {
                    return Some("invalid_blocks");
                };
                if !text_ok || !desc_ok || values.contains(&v) {
                    return Some("invalid_blocks");
                }
                values.push(v);
            }
        }
        _ => return Some("invalid_blocks"),
    }
    None
}

fn block_error(body: &Value) -> Option<&'static str> {
    body["text"].as_str()?;
    let mut block_ids: Vec<&str> = Vec::new();
    for b in body["blocks"].as_array().into_iter().flatten() {
        if !id_ok(&b["block_id"]) {
            return Some("invalid_blocks");
        }
        if let Some(id) = b["block_id"].as_str() {
            if block_ids.contains(&id) {
                return Some("invalid_blocks");
            }
            block_ids.push(id);
        }
        match b["type"].as_str() {
            Some("section") => {
                if b["text"]["text"]
                    .as_str()
                    .is_none_or(|t| t.chars().count() > 3000)
                {
                    return Some("invalid_blocks");
                }
            }
            Some("actions") => {
                let els = b["elements"].as_array()?;
                let mut ids: Vec<&str> =
                    els.iter().filter_map(|e| e["action_id"].as_str()).collect();
                ids.sort_unstable();
                ids.dedup();
                if els.len() > 25 || ids.len() != els.len() {
                    return Some("invalid_blocks");
                }
                if let Some(e) = els.iter().find_map(element_error) {
                    return Some(e);
                }
            }
            Some("input") => {
                let e = &b["element"];
                let triggers_ok = e["dispatch_action_config"]["trigger_actions_on"]
                    .as_array()
                    .is_none_or(|t| {
                        t.iter()
                            .all(|t| t == "on_enter_pressed" || t == "on_character_entered")
                    });
                let ok = plain_ok(&b["label"], 2000)
                    && (b["dispatch_action"].is_null() || b["dispatch_action"].is_boolean())
                    && e["type"] == "plain_text_input"
                    && id_ok(&e["action_id"])
                    && e["max_length"]
                        .as_u64()
                        .is_none_or(|m| (1..=3000).contains(&m))
                    && triggers_ok;
                if !ok {
                    return Some("invalid_blocks");
                }
            }
            _ => return Some("invalid_blocks"),
        }
    }
    None
}

async fn api(
    State(f): State<FakeSlack>,
    Path(method): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Json<Value> {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    if auth != Some(format!("Bearer {BOT_TOKEN}").as_str()) {
        return Json(json!({"ok": false, "error": "invalid_auth"}));
    }
    if let Some(e) = block_error(&body) {
        return Json(json!({"ok": false, "error": e}));
    }
    let reply = {
        let mut inner = f.inner.lock().unwrap();
        let reply = match method.as_str() {
            "chat.postMessage" => {
                let ts = format!("1700000000.{:06}", inner.messages.len() + 1);
                inner.messages.push((ts.clone(), body.clone()));
                json!({"ok": true, "channel": body["channel"], "ts": ts, "message": body})
            }
            "chat.update" => {
                let ts = body["ts"].as_str().unwrap_or("").to_owned();
                let Some((_, m)) = inner.messages.iter_mut().find(|(t, _)| *t == ts) else {
                    return Json(json!({"ok": false, "error": "message_not_found"}));
                };
                *m = body.clone();
                json!({"ok": true, "channel": body["channel"], "ts": ts})
            }
            _ => return Json(json!({"ok": false, "error": "unknown_method"})),
        };
        inner.calls.push((method, body));
        reply
    };
    f.changed.notify_waiters();
    Json(reply)
}

async fn response(State(f): State<FakeSlack>, Path(n): Path<usize>, Json(body): Json<Value>) {
    f.inner.lock().unwrap().responses.push((n, body));
    f.changed.notify_waiters();
}

impl FakeSlack {
    /// Starts the fake on a fresh loopback port.
    pub async fn start() -> FakeSlack {
        let mut fake = FakeSlack::default();
        let app = axum::Router::new()
            .route("/api/{method}", axum::routing::post(api))
            .route("/response/{n}", axum::routing::post(response))
            .with_state(fake.clone());
        let addr = super::serve(app).await;
        fake.url = format!("http://{addr}");
        fake
    }

    /// Waits until `pred` holds for the accepted calls of `method`; returns them.
    pub async fn wait_for(&self, method: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let notified = self.changed.notified();
            let now: Vec<Value> = {
                let inner = self.inner.lock().unwrap();
                inner
                    .calls
                    .iter()
                    .filter(|(m, _)| m == method)
                    .map(|(_, b)| b.clone())
                    .collect()
            };
            if pred(&now) {
                return now;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("fake slack: timed out waiting on {method}; got {now:#?}");
            }
        }
    }

    /// `user` clicks the button with `value` on message `ts`: Slack's signed POST to the app's
    /// interactivity `endpoint`. Returns the app's status and body, and (for a 200) the text it
    /// then posted to `response_url`.
    pub async fn click(
        &self,
        endpoint: &str,
        user: &str,
        value: &str,
        ts: &str,
        signing: Signing,
    ) -> (u16, String, Option<String>) {
        let action = json!({"type": "button", "action_id": "answer-0", "block_id": "ask-user", "value": value});
        self.send_action(endpoint, user, ts, action, json!({"values": {}}), signing)
            .await
    }

    /// The message `ts` as posted (or last updated).
    pub fn message(&self, ts: &str) -> Value {
        let inner = self.inner.lock().unwrap();
        inner
            .messages
            .iter()
            .find(|(t, _)| t == ts)
            .map(|(_, m)| m.clone())
            .unwrap()
    }

    /// `user` ticks the boxes `ticked` (option indices) of the checkboxes of message `ts`, as
    /// `msg` shows it on their screen, and clicks its Done button: the payload Slack sends.
    pub async fn press_done(
        &self,
        endpoint: &str,
        user: &str,
        (msg, ts): (&Value, &str),
        ticked: &[usize],
        signing: Signing,
    ) -> (u16, String, Option<String>) {
        let blocks = msg["blocks"].as_array().unwrap();
        let (block, boxes) = blocks
            .iter()
            .find_map(|b| {
                let e = b["elements"]
                    .as_array()?
                    .iter()
                    .find(|e| e["type"] == "checkboxes")?;
                Some((b["block_id"].as_str()?.to_owned(), e.clone()))
            })
            .expect("fake slack: the message has no checkboxes");
        let selected: Vec<Value> = ticked
            .iter()
            .map(|&i| boxes["options"][i].clone())
            .collect();
        assert!(selected.iter().all(|o| !o.is_null()), "no such box");
        let done = blocks
            .iter()
            .flat_map(|b| b["elements"].as_array().into_iter().flatten())
            .find(|e| e["action_id"] == "done")
            .expect("fake slack: the message has no Done button")
            .clone();
        let action = json!({"type": "button", "action_id": "done", "block_id": "ask-user", "value": done["value"]});
        let mut values = serde_json::Map::new();
        values.insert(
            block,
            json!({boxes["action_id"].as_str().unwrap(): {"type": "checkboxes", "selected_options": selected}}),
        );
        self.send_action(
            endpoint,
            user,
            ts,
            action,
            json!({"values": values}),
            signing,
        )
        .await
    }

    /// `user` types `text` into the `dispatch_action` input of message `ts`, as `msg` shows it
    /// on their screen, and presses Enter.
    pub async fn type_own(
        &self,
        endpoint: &str,
        user: &str,
        (msg, ts): (&Value, &str),
        text: &str,
        signing: Signing,
    ) -> (u16, String, Option<String>) {
        let input = msg["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "input" && b["dispatch_action"] == true)
            .expect("fake slack: the message has no dispatch_action input")
            .clone();
        let max = input["element"]["max_length"].as_u64().unwrap_or(3000);
        assert!(
            u64::try_from(text.chars().count()).unwrap() <= max,
            "fake slack: Slack does not let more than max_length characters be typed"
        );
        let action = json!({
            "type": "plain_text_input",
            "block_id": input["block_id"],
            "action_id": input["element"]["action_id"],
            "value": text,
        });
        self.send_action(endpoint, user, ts, action, json!({"values": {}}), signing)
            .await
    }

    /// `user` ticks box `i` of the checkboxes of message `ts` (as `msg` shows it): Slack sends
    /// a `block_actions` for the tick itself. Returns the app's status and body (no reply is
    /// awaited: a tick answers nothing).
    pub async fn tick(
        &self,
        endpoint: &str,
        user: &str,
        (msg, ts): (&Value, &str),
        i: usize,
    ) -> (u16, String) {
        let (block, boxes) = msg["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|b| {
                let e = b["elements"]
                    .as_array()?
                    .iter()
                    .find(|e| e["type"] == "checkboxes")?;
                Some((b["block_id"].clone(), e.clone()))
            })
            .expect("fake slack: the message has no checkboxes");
        let option = boxes["options"][i].clone();
        assert!(!option.is_null(), "no such box");
        let action = json!({"type": "checkboxes", "block_id": block, "action_id": boxes["action_id"], "selected_options": [option]});
        let (st, body, _) = self
            .post_action(
                endpoint,
                user,
                ts,
                action,
                json!({"values": {}}),
                Signing::Good,
                false,
            )
            .await;
        (st, body)
    }

    /// Slack's signed `block_actions` POST of `action` (with `state`) on message `ts`.
    pub async fn send_action(
        &self,
        endpoint: &str,
        user: &str,
        ts: &str,
        action: Value,
        state: Value,
        signing: Signing,
    ) -> (u16, String, Option<String>) {
        self.post_action(endpoint, user, ts, action, state, signing, true)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn post_action(
        &self,
        endpoint: &str,
        user: &str,
        ts: &str,
        action: Value,
        state: Value,
        signing: Signing,
        await_reply: bool,
    ) -> (u16, String, Option<String>) {
        let n = {
            let mut inner = self.inner.lock().unwrap();
            inner.next_response += 1;
            inner.next_response
        };
        let payload = json!({
            "type": "block_actions",
            "user": {"id": user, "username": "h"},
            "channel": {"id": "C1"},
            "message": {"ts": ts},
            "state": state,
            "response_url": format!("{}/response/{n}", self.url),
            "actions": [action],
        });
        let body: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("payload", &payload.to_string())
            .finish();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let ts_header = if signing == Signing::Stale {
            now - 301
        } else {
            now
        }
        .to_string();
        let secret = if signing == Signing::WrongSecret {
            "not-the-secret"
        } else {
            SIGNING_SECRET
        };
        let sig = format!("v0={}", hmac_hex(secret, &format!("v0:{ts_header}:{body}")));
        let mut req = reqwest::Client::new()
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if signing != Signing::Missing {
            req = req
                .header("x-slack-request-timestamp", &ts_header)
                .header("x-slack-signature", sig);
        }
        let started = Instant::now();
        let resp = req.send().await.unwrap();
        let (status, text) = (resp.status().as_u16(), resp.text().await.unwrap());
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "fake slack: no acknowledgement within 3 s"
        );
        if status != 200 || !await_reply {
            return (status, text, None);
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let notified = self.changed.notified();
            let got = self
                .inner
                .lock()
                .unwrap()
                .responses
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, b)| b.clone());
            if let Some(b) = got {
                assert_eq!(b["response_type"], "ephemeral");
                return (status, text, b["text"].as_str().map(str::to_owned));
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("fake slack: no reply on response_url");
            }
        }
    }
}
