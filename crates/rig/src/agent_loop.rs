//! A complete, minimal agent loop against an OpenAI-compatible chat-completions endpoint
//! (DeepSeek's API by default), with `ask_user_question` as its one tool.
//!
//! One round: `POST {base_url}/chat/completions` with the conversation and the tool
//! definition ([`ProviderFormat::OpenAiChat`], the core's bytes); when the reply calls tools,
//! the assistant message goes back into the conversation as received, then one
//! `{"role":"tool","tool_call_id":…,"content":…}` message per call, in the order of the calls,
//! each asked one after the other (a human answers one batch at a time); `content` is exactly
//! what the core renders (the answer's compact JSON or one `Error: …` line). A reply without
//! tool calls ends the loop with its text.
//!
//! `examples/agent_loop.rs` runs it with the terminal answerer.

use std::fmt;

use ask_user_core::definition::{NAME, ProviderFormat, definition};
use ask_user_core::{Arguments, AskUserQuestionTool, ExecutionContext};
use serde::Deserialize;
use serde_json::{Value, json};

/// DeepSeek's API, the default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.deepseek.com";
/// The default model (DeepSeek's chat model).
pub const DEFAULT_MODEL: &str = "deepseek-chat";
/// How many model calls [`AgentLoop::run`] makes at most by default.
pub const DEFAULT_MAX_ROUNDS: usize = 8;

/// Where the model is: base URL (without `/chat/completions`), API key and model name.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// e.g. `https://api.deepseek.com` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …`.
    pub api_key: String,
    /// The `model` field of each request.
    pub model: String,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint from its three parts.
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: api_key.into(),
            model: model.into(),
        }
    }

    /// From the environment: `AGENT_BASE_URL` (default [`DEFAULT_BASE_URL`]), `AGENT_API_KEY`
    /// or else `DEEPSEEK_API_KEY` (required), `AGENT_MODEL` (default [`DEFAULT_MODEL`]).
    pub fn from_env() -> Result<Self, LoopError> {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// [`Self::from_env`] reading variables through `lookup` (tests never change the process
    /// environment).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, LoopError> {
        let api_key = lookup("AGENT_API_KEY")
            .or_else(|| lookup("DEEPSEEK_API_KEY"))
            .ok_or(LoopError::NoApiKey)?;
        Ok(Self {
            base_url: lookup("AGENT_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            api_key,
            model: lookup("AGENT_MODEL").unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
        })
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

/// Why a loop stopped without a final answer. These texts are for the person running the
/// agent; the model never reads them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoopError {
    /// Neither `AGENT_API_KEY` nor `DEEPSEEK_API_KEY` is set.
    #[error("set AGENT_API_KEY (or DEEPSEEK_API_KEY) to the endpoint's API key")]
    NoApiKey,
    /// The request could not be sent or its reply not read.
    #[error("the request to {url} failed: {source}")]
    Http {
        /// The chat-completions URL.
        url: String,
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
    /// The endpoint answered with an error status.
    #[error("the endpoint answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: reqwest::StatusCode,
        /// The reply's body, as sent.
        body: String,
    },
    /// The reply is not a chat completion with a message.
    #[error("the endpoint's reply is not a chat completion ({0})")]
    BadReply(String),
    /// The context's cancellation token fired: the turn was aborted (no further model call).
    #[error("the turn was aborted")]
    Aborted,
    /// The model was still calling tools when the round budget ran out.
    #[error("the model was still calling tools after {0} model calls")]
    TooManyRounds(usize),
}

/// How a loop ended: the model's final text and the whole conversation as sent and received
/// (the request messages, each assistant message as received, each tool message as sent).
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The final assistant message's text (empty when it had none).
    pub answer: String,
    /// The conversation, ending with the final assistant message.
    pub messages: Vec<Value>,
}

/// The loop: an endpoint, an HTTP client and the `ask_user_question` tool.
#[derive(Debug, Clone)]
pub struct AgentLoop {
    endpoint: Endpoint,
    http: reqwest::Client,
    tool: AskUserQuestionTool,
    max_rounds: usize,
}

/// One tool call of an assistant message, as the chat-completions format writes it.
#[derive(Debug, Deserialize)]
struct ToolCall {
    id: String,
    function: Function,
}

#[derive(Debug, Deserialize)]
struct Function {
    name: String,
    /// A JSON string as the format says; some servers send the object itself.
    #[serde(default)]
    arguments: Value,
}

#[derive(Debug, Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: Value,
}

impl AgentLoop {
    /// A loop on `endpoint` with its own reqwest client (`reqwest::Client::new()`, which
    /// panics only when the TLS backend cannot start), asking through `tool`.
    ///
    /// This crate turns on no TLS feature of reqwest: for an `https` endpoint the application
    /// enables one (`reqwest/native-tls` or `reqwest/rustls`, as the example does) or passes
    /// its own client to [`Self::with_http`].
    pub fn new(endpoint: Endpoint, tool: AskUserQuestionTool) -> Self {
        Self {
            endpoint,
            http: reqwest::Client::new(),
            tool,
            max_rounds: DEFAULT_MAX_ROUNDS,
        }
    }

    /// The same loop sending through `http` (proxies, timeouts, TLS of your choice).
    pub fn with_http(mut self, http: reqwest::Client) -> Self {
        self.http = http;
        self
    }

    /// The same loop with at most `max_rounds` model calls per run.
    pub fn with_max_rounds(mut self, max_rounds: usize) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Runs the conversation `messages` (e.g. a system and a user message) until the model
    /// answers without calling a tool. Every `ask_user_question` call is asked with `context`
    /// (the turn's cancellation token and caller); when its token fires, the loop stops with
    /// [`LoopError::Aborted`] without calling the model again (a pending request is dropped).
    pub async fn run(
        &self,
        mut messages: Vec<Value>,
        context: &ExecutionContext,
    ) -> Result<Finished, LoopError> {
        // The core's constant definition parses (its golden tests pin it); with serde_json's
        // `preserve_order` it is sent with the same bytes.
        let tools = [
            serde_json::from_str::<Value>(&definition(ProviderFormat::OpenAiChat))
                .unwrap_or_default(),
        ];
        for _ in 0..self.max_rounds {
            let body = json!({
                "model": self.endpoint.model,
                "messages": messages,
                "tools": tools,
            });
            if context.cancel.is_cancelled() {
                return Err(LoopError::Aborted);
            }
            let message = tokio::select! {
                message = self.complete(&body) => message?,
                () = context.cancel.cancelled() => return Err(LoopError::Aborted),
            };
            let calls = tool_calls(&message)?;
            let answer = message
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            messages.push(message);
            if calls.is_empty() {
                return Ok(Finished { answer, messages });
            }
            for call in calls {
                messages.push(answer_call(&self.tool, call, context).await);
            }
            if context.cancel.is_cancelled() {
                return Err(LoopError::Aborted);
            }
        }
        Err(LoopError::TooManyRounds(self.max_rounds))
    }

    /// One chat completion: the first choice's message.
    async fn complete(&self, body: &Value) -> Result<Value, LoopError> {
        let url = self.endpoint.url();
        let http = |source| LoopError::Http {
            url: url.clone(),
            source,
        };
        let response = self
            .http
            .post(&url)
            .bearer_auth(&self.endpoint.api_key)
            .json(body)
            .send()
            .await
            .map_err(http)?;
        let status = response.status();
        let text = response.text().await.map_err(http)?;
        if !status.is_success() {
            return Err(LoopError::Status { status, body: text });
        }
        let completion: Completion =
            serde_json::from_str(&text).map_err(|e| LoopError::BadReply(e.to_string()))?;
        completion
            .choices
            .into_iter()
            .next()
            .map(|choice| choice.message)
            .ok_or_else(|| LoopError::BadReply("no choices".to_owned()))
    }
}

fn tool_calls(message: &Value) -> Result<Vec<ToolCall>, LoopError> {
    match message.get("tool_calls") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(calls) => serde_json::from_value(calls.clone())
            .map_err(|e| LoopError::BadReply(format!("tool_calls: {e}"))),
    }
}

/// The model-facing text for a call to a tool this loop does not have.
pub fn unknown_tool_text(name: &str) -> String {
    format!("Error: there is no tool named {name:?}; the only tool is {NAME}")
}

/// The tool message answering `call`: the core's outcome text for `ask_user_question`,
/// [`unknown_tool_text`] for any other name.
async fn answer_call(
    tool: &AskUserQuestionTool,
    call: ToolCall,
    context: &ExecutionContext,
) -> Value {
    let content = if call.function.name == NAME {
        let arguments = match call.function.arguments {
            Value::String(text) => Arguments::Text(text),
            Value::Null => Arguments::Text(String::new()),
            value => Arguments::Value(value),
        };
        tool.call(arguments, context.clone()).await.text()
    } else {
        unknown_tool_text(&call.function.name)
    };
    json!({"role": "tool", "tool_call_id": call.id, "content": content})
}
