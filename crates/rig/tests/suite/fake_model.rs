//! A local OpenAI-compatible chat-completions server, scripted like a model: the only fake in
//! these tests (no model runs here). It serves `POST /v1/chat/completions`, records every
//! request (raw bytes, parsed body, `Authorization`), and replies with what the script returns
//! for the request, wrapped in a `chat.completion` envelope.

// Without the loop (`--no-default-features`) only the rig suite uses it.
#![cfg_attr(not(feature = "agent-loop"), allow(dead_code))]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the fake model replies to one request.
pub enum Reply {
    /// An assistant message (`{"role":"assistant",…}`).
    Message(Value),
    /// An HTTP error with this body.
    Status(u16, &'static str),
    /// An HTTP error with this body and a `Retry-After` header (seconds).
    RetryAfter(u16, &'static str, u64),
    /// An assistant message whose choice ends with this `finish_reason` (e.g. `length`).
    Finished(Value, &'static str),
}

type Script = dyn Fn(usize, &Value) -> Reply + Send + Sync;

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub raw: String,
    pub body: Value,
    pub authorization: Option<String>,
}

#[derive(Clone)]
struct Shared {
    script: Arc<Script>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

pub struct FakeModel {
    /// The base URL clients are pointed at (`http://127.0.0.1:PORT/v1`).
    pub base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeModel {
    /// Serves `script(round, request body)` on a free local port.
    pub async fn start(script: impl Fn(usize, &Value) -> Reply + Send + Sync + 'static) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            script: Arc::new(script),
            seen: seen.clone(),
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            base_url: format!("http://{addr}/v1"),
            seen,
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn complete(State(shared): State<Shared>, headers: HeaderMap, raw: String) -> Response {
    let body: Value = serde_json::from_str(&raw).unwrap();
    let round = {
        let mut seen = shared.seen.lock().unwrap();
        seen.push(Seen {
            raw: raw.clone(),
            body: body.clone(),
            authorization: headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned()),
        });
        seen.len() - 1
    };
    match (shared.script)(round, &body) {
        Reply::Status(status, text) => {
            (StatusCode::from_u16(status).unwrap(), text).into_response()
        }
        Reply::RetryAfter(status, text, seconds) => (
            StatusCode::from_u16(status).unwrap(),
            [("retry-after", seconds.to_string())],
            text,
        )
            .into_response(),
        Reply::Finished(message, finish) => completion(round, &body, message, finish),
        Reply::Message(message) => {
            let finish = if message.get("tool_calls").is_some() {
                "tool_calls"
            } else {
                "stop"
            };
            completion(round, &body, message, finish)
        }
    }
}

/// A `chat.completion` envelope around `message`.
fn completion(round: usize, body: &Value, message: Value, finish: &str) -> Response {
    axum::Json(json!({
        "id": format!("chatcmpl-fake-{round}"),
        "object": "chat.completion",
        "created": 1_764_460_800,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }))
    .into_response()
}

/// An assistant message calling `ask_user_question` once per `(id, arguments)`, as DeepSeek
/// writes it (empty content, arguments as a JSON string).
pub fn tool_calls(calls: &[(&str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, arguments)| {
            json!({"id": id, "type": "function",
                   "function": {"name": "ask_user_question", "arguments": arguments}})
        })
        .collect();
    json!({"role": "assistant", "content": "", "tool_calls": calls})
}

/// A final assistant message.
pub fn text(content: &str) -> Value {
    json!({"role": "assistant", "content": content})
}

/// The tool messages that end the request's conversation (those answering the last
/// assistant message), in order.
pub fn last_tool_messages(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    let mut tail: Vec<Value> = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] == "tool")
        .cloned()
        .collect();
    tail.reverse();
    tail
}

/// The final message of a model that quotes every tool result it received.
pub fn quote(body: &Value) -> Value {
    let quoted: Vec<String> = last_tool_messages(body)
        .iter()
        .map(|m| {
            let content = &m["content"];
            // rig may send a tool result as text parts; join them as the model would read them.
            match content.as_str() {
                Some(text) => text.to_owned(),
                None => content.to_string(),
            }
        })
        .collect();
    text(&format!("I received: {}", quoted.join(" | ")))
}

/// A model that calls `ask_user_question` with `calls` first, then quotes what it received.
pub fn ask_then_quote(
    calls: &'static [(&'static str, &'static str)],
) -> impl Fn(usize, &Value) -> Reply + Send + Sync + 'static {
    move |round, body| match round {
        0 => Reply::Message(tool_calls(calls)),
        _ => Reply::Message(quote(body)),
    }
}
