//! A FAKE ntfy server, in process on loopback: the real service cannot be reached from here.
//!
//! It follows the documented subset this crate uses (<https://docs.ntfy.sh/publish/>):
//! - "Publish as JSON": `POST /` with a JSON object whose `topic` is required; the reply is the
//!   message as JSON with its `id`;
//! - "Access tokens": with a token configured, a request without `Authorization: Bearer <it>`
//!   is refused with 401 (ntfy answers 401/403 for a missing or wrong token);
//! - "Action buttons": at most 3 actions, each `view`, `http` or `broadcast` with a `label`
//!   and (view/http) a `url`; more or other is refused with 400;
//! - the default `message-size-limit` (4096 bytes): a longer message is refused here (ntfy
//!   would turn it into an attachment, which the human would not read on the lock screen);
//! - "Updating notifications": a publish with a `sequence_id` seen before replaces that
//!   notification (ntfy ≥ 2.16).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::Notify;

#[derive(Clone, Debug, Default)]
struct Inner {
    published: Arc<Mutex<Vec<Value>>>,
    changed: Arc<Notify>,
    token: Option<String>,
}

/// A running fake ntfy server.
#[derive(Clone, Debug)]
pub struct FakeNtfy {
    /// Its base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Inner,
}

impl FakeNtfy {
    /// Starts a fake requiring `token` (when given) as a bearer token.
    pub async fn start(token: Option<&str>) -> FakeNtfy {
        let inner = Inner {
            token: token.map(str::to_owned),
            ..Inner::default()
        };
        let app = axum::Router::new()
            .route("/", post(publish))
            .with_state(inner.clone());
        let addr: SocketAddr = super::serve(app).await;
        FakeNtfy {
            url: format!("http://{addr}"),
            inner,
        }
    }

    /// Every accepted publish, in order.
    pub fn published(&self) -> Vec<Value> {
        self.inner.published.lock().unwrap().clone()
    }

    /// Waits (up to 30 s) until `pred` holds for the accepted publishes; returns them.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let notified = self.inner.changed.notified();
            let now = self.published();
            if pred(&now) {
                return now;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("fake ntfy: timed out waiting for {what}; got {now:#?}");
            }
        }
    }
}

fn refuse(status: StatusCode, error: &str) -> Response {
    (
        status,
        Json(json!({"code": status.as_u16() * 100, "http": status.as_u16(), "error": error})),
    )
        .into_response()
}

async fn publish(State(s): State<Inner>, headers: HeaderMap, body: String) -> Response {
    if let Some(t) = &s.token {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
        if auth != Some(format!("Bearer {t}").as_str()) {
            return refuse(StatusCode::UNAUTHORIZED, "unauthorized");
        }
    }
    let Ok(msg) = serde_json::from_str::<Value>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid request: body must be JSON",
        );
    };
    if msg
        .get("topic")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return refuse(StatusCode::BAD_REQUEST, "invalid request: topic missing");
    }
    if msg.get("markdown").is_some() {
        // Not a documented limit: this client must never turn Markdown on (model text).
        return refuse(
            StatusCode::BAD_REQUEST,
            "fake: markdown must not be enabled",
        );
    }
    let actions = msg
        .get("actions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if actions.len() > 3 {
        return refuse(StatusCode::BAD_REQUEST, "invalid request: too many actions");
    }
    for a in &actions {
        let kind = a.get("action").and_then(Value::as_str).unwrap_or("");
        let has_label = a
            .get("label")
            .and_then(Value::as_str)
            .is_some_and(|l| !l.is_empty());
        let has_url = a.get("url").and_then(Value::as_str).is_some();
        let ok = match kind {
            "view" | "http" => has_label && has_url,
            "broadcast" => has_label,
            _ => false,
        };
        if !ok {
            return refuse(StatusCode::BAD_REQUEST, "invalid request: action invalid");
        }
    }
    let len = msg
        .get("message")
        .and_then(Value::as_str)
        .map_or(0, str::len);
    if len > 4096 {
        return refuse(
            StatusCode::BAD_REQUEST,
            "fake: message above message-size-limit",
        );
    }
    let id = {
        let mut p = s.published.lock().unwrap();
        p.push(msg.clone());
        format!("msg{}", p.len())
    };
    s.changed.notify_waiters();
    Json(json!({
        "id": id,
        "time": 1_700_000_000,
        "event": "message",
        "topic": msg["topic"],
        "title": msg.get("title"),
        "message": msg.get("message"),
    }))
    .into_response()
}
