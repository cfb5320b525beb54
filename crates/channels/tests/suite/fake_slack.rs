//! A FAKE Slack (Web API subset and the interactivity sender), in process on loopback: the
//! real service cannot be reached from here.
//!
//! It follows the documented behaviour this crate relies on (<https://api.slack.com/>):
//! - `POST /api/chat.postMessage` and `/api/chat.update` with `Authorization: Bearer <bot
//!   token>`; failures are HTTP 200 `{"ok":false,"error":…}` (`invalid_auth`,
//!   `message_not_found`, `invalid_blocks`); success returns `channel` and `ts`;
//! - Block Kit limits: `section` text ≤ 3000 characters, ≤ 25 elements in an `actions` block,
//!   `button` text `plain_text` ≤ 75 characters, `value` ≤ 2000, `action_id` unique in the
//!   block; a button has a `value` or a `url`;
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

pub(crate) const BOT_TOKEN: &str = "xoxb-fake-secret-token";
pub(crate) const SIGNING_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

#[derive(Default)]
struct Inner {
    calls: Vec<(String, Value)>,
    messages: Vec<(String, Value)>,
    responses: Vec<(usize, Value)>,
    next_response: usize,
}

#[derive(Clone, Default)]
pub(crate) struct FakeSlack {
    pub(crate) url: String,
    inner: Arc<Mutex<Inner>>,
    changed: Arc<Notify>,
}

/// How a click's request is signed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signing {
    Good,
    WrongSecret,
    Stale,
    Missing,
}

pub(crate) fn hmac_hex(key: &str, data: &str) -> String {
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

fn block_error(body: &Value) -> Option<&'static str> {
    body["text"].as_str()?;
    for b in body["blocks"].as_array().into_iter().flatten() {
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
                for e in els {
                    let text_ok = e["text"]["type"] == "plain_text"
                        && e["text"]["text"]
                            .as_str()
                            .is_some_and(|t| (1..=75).contains(&t.chars().count()));
                    let value_ok = e["value"].as_str().is_some_and(|v| v.len() <= 2000);
                    let url_ok = e["url"].as_str().is_some();
                    if !text_ok || !(value_ok || url_ok) {
                        return Some("invalid_blocks");
                    }
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
    pub(crate) async fn start() -> FakeSlack {
        let mut fake = FakeSlack::default();
        let app = axum::Router::new()
            .route("/api/{method}", axum::routing::post(api))
            .route("/response/{n}", axum::routing::post(response))
            .with_state(fake.clone());
        let addr = super::support::serve(app).await;
        fake.url = format!("http://{addr}");
        fake
    }

    pub(crate) async fn wait_for(
        &self,
        method: &str,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
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
    pub(crate) async fn click(
        &self,
        endpoint: &str,
        user: &str,
        value: &str,
        ts: &str,
        signing: Signing,
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
            "response_url": format!("{}/response/{n}", self.url),
            "actions": [{"type": "button", "action_id": "answer-0", "block_id": "ask-user", "value": value}],
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
        if status != 200 {
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
