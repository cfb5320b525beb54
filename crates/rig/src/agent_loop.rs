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
//! What the human answered is never lost to the network: a rate limit (429, honouring
//! `Retry-After`), a server error (5xx), a timeout or a refused connection is retried with
//! backoff ([`Retry`]) on the same conversation, each request has a time limit
//! ([`DEFAULT_REQUEST_TIMEOUT`]), and a loop that stops anyway returns the conversation so far
//! ([`Stopped::messages`], tool answers included), which [`AgentLoop::run`] takes back to go on.
//! A reply cut at the token limit (`finish_reason: "length"`) or by a content filter is not
//! taken as the final answer.
//!
//! `examples/agent_loop.rs` runs it with the terminal answerer.

use std::fmt;
use std::time::Duration;

use ask_user_core::definition::{NAME, ProviderFormat, definition};
use ask_user_core::{Arguments, AskUserQuestionTool, ExecutionContext};
use serde::Deserialize;
use serde_json::{Value, json};

/// DeepSeek's API, the default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.deepseek.com";
/// The default model: DeepSeek's general model (`deepseek-chat` was retired on 2026-07-24;
/// `deepseek-v4-pro` is the larger one).
pub const DEFAULT_MODEL: &str = "deepseek-flash";
/// How long one model request may take, connection to last byte, by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
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
    /// The endpoint is `https://` but the HTTP client has no TLS (this crate turns on no TLS
    /// feature of reqwest): not retried, since sending again cannot succeed.
    #[error(
        "the endpoint {url} is https, but this build's HTTP client has no TLS: enable reqwest's `rustls` (or `native-tls`) feature in your application, or pass a client with TLS to AgentLoop::with_http"
    )]
    NoTls {
        /// The chat-completions URL.
        url: String,
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
    /// The reply ended early (`finish_reason` `length` or `content_filter`), so its text is
    /// not a final answer and its tool calls may be cut.
    #[error(
        "the model's reply was cut short (finish_reason {0:?}); raise the endpoint's max_tokens or shorten the task"
    )]
    Truncated(String),
}

impl LoopError {
    /// Whether sending the same request again may succeed: a rate limit (429), a server error
    /// (5xx), a timeout or a connection that could not be made or was cut.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Http { source, .. } => {
                source.is_timeout()
                    || source.is_connect()
                    || source.is_request()
                    || source.is_body()
            }
            Self::Status { status, .. } => {
                *status == reqwest::StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
            }
            _ => false,
        }
    }
}

/// A loop that stopped before the model's final answer: why, and the conversation so far
/// (every tool message the human answered included), which [`AgentLoop::run`] takes back to
/// go on where it stopped.
#[derive(Debug)]
pub struct Stopped {
    /// Why it stopped.
    pub error: LoopError,
    /// The conversation as sent and received up to the stop.
    pub messages: Vec<Value>,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl std::error::Error for Stopped {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

/// How a transient failure ([`LoopError::is_transient`]) is retried: up to `attempts` sends in
/// all, waiting `base`, then twice that, and so on, capped at `max`; a `Retry-After` the
/// endpoint sends (seconds) replaces the wait, capped at `max` too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Sends per request in all (1: no retry).
    pub attempts: u32,
    /// The first wait.
    pub base: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for Retry {
    /// 5 sends, waits of 1, 2, 4, 8 s (at most 60 s with `Retry-After`).
    fn default() -> Self {
        Self {
            attempts: 5,
            base: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

impl Retry {
    /// The wait before send number `attempt + 1` (after `attempt` failed sends, from 1), given
    /// the endpoint's `Retry-After`, if any.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
        retry_after.unwrap_or(backoff).min(self.max)
    }
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
    retry: Retry,
    request_timeout: Duration,
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
    #[serde(default)]
    finish_reason: Option<String>,
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
            retry: Retry::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    /// The same loop retrying transient failures as `retry` says.
    pub fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    /// The same loop giving each model request at most `timeout`.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
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

    /// Runs the conversation `messages` (e.g. a system and a user message, or a
    /// [`Stopped::messages`] to go on) until the model answers without calling a tool. Every
    /// `ask_user_question` call is asked with `context` (the turn's cancellation token and
    /// caller); when its token fires, the loop stops with [`LoopError::Aborted`] without
    /// calling the model again (a pending request is dropped). Transient failures are retried
    /// ([`Retry`]); when the loop stops anyway, [`Stopped`] carries the conversation so far.
    pub async fn run(
        &self,
        mut messages: Vec<Value>,
        context: &ExecutionContext,
    ) -> Result<Finished, Stopped> {
        match self.rounds(&mut messages, context).await {
            Ok(answer) => Ok(Finished { answer, messages }),
            Err(error) => Err(Stopped { error, messages }),
        }
    }

    /// The rounds of [`Self::run`], growing `messages`; the final text.
    async fn rounds(
        &self,
        messages: &mut Vec<Value>,
        context: &ExecutionContext,
    ) -> Result<String, LoopError> {
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
                message = self.complete_retrying(&body) => message?,
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
                return Ok(answer);
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

    /// [`Self::complete`], retrying transient failures.
    async fn complete_retrying(&self, body: &Value) -> Result<Value, LoopError> {
        let mut attempt = 1;
        loop {
            match self.complete(body).await {
                Err((error, retry_after))
                    if error.is_transient() && attempt < self.retry.attempts.max(1) =>
                {
                    tokio::time::sleep(self.retry.delay(attempt, retry_after)).await;
                    attempt += 1;
                }
                result => return result.map_err(|(error, _)| error),
            }
        }
    }

    /// One chat completion: the first choice's message (an error with the endpoint's
    /// `Retry-After`, when it sent one in seconds).
    async fn complete(&self, body: &Value) -> Result<Value, (LoopError, Option<Duration>)> {
        let url = self.endpoint.url();
        let http = |source: reqwest::Error| {
            let error = if url.starts_with("https://") && lacks_tls(&source) {
                LoopError::NoTls { url: url.clone() }
            } else {
                LoopError::Http {
                    url: url.clone(),
                    source,
                }
            };
            (error, None)
        };
        let response = self
            .http
            .post(&url)
            .timeout(self.request_timeout)
            .bearer_auth(&self.endpoint.api_key)
            .json(body)
            .send()
            .await
            .map_err(http)?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.text().await.map_err(http)?;
        if !status.is_success() {
            return Err((LoopError::Status { status, body: text }, retry_after));
        }
        let bad = |why: String| (LoopError::BadReply(why), None);
        let completion: Completion = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let choice = completion
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| bad("no choices".to_owned()))?;
        match choice.finish_reason.as_deref() {
            Some(reason @ ("length" | "content_filter")) => {
                Err((LoopError::Truncated(reason.to_owned()), None))
            }
            _ => Ok(choice.message),
        }
    }
}

/// The text hyper-util's connector gives (somewhere in the error's sources) when it is asked for
/// an `https` URL and reqwest was built without TLS.
const NO_TLS_TEXT: &str = "scheme is not http";

/// Whether `error` says the client cannot speak TLS (see [`NO_TLS_TEXT`]).
fn lacks_tls(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.to_string().contains(NO_TLS_TEXT) {
            return true;
        }
        next = e.source();
    }
    false
}

fn tool_calls(message: &Value) -> Result<Vec<ToolCall>, LoopError> {
    match message.get("tool_calls") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(calls) => serde_json::from_value(calls.clone())
            .map_err(|e| LoopError::BadReply(format!("tool_calls: {e}"))),
    }
}

/// Saves a stopped loop's conversation (the human's answers are in it) as JSON in a new file in
/// `dir`, readable by its user only (mode 0600), named with the process id and a counter of
/// this process; an existing file or link of that name is never written through (the file is
/// created exclusively; a taken name is skipped). Returns the file's path.
///
/// # Errors
/// The conversation cannot be written (after trying 1,000 names).
pub fn save_conversation(
    dir: &std::path::Path,
    messages: &[Value],
) -> std::io::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU32, Ordering};
    static SAVED: AtomicU32 = AtomicU32::new(0);
    let text = serde_json::to_string_pretty(messages).map_err(std::io::Error::other)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for _ in 0..1_000 {
        let n = SAVED.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            "agent-loop-conversation-{}-{nanos:09}-{n}.json",
            std::process::id()
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                file.write_all(text.as_bytes())?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
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

#[cfg(test)]
mod no_tls_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// An error and its source, as reqwest wraps hyper-util's connector error.
    #[derive(Debug)]
    struct Wrapped(&'static str, Option<Box<Wrapped>>);

    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    /// The chain a reqwest built without TLS returns for an `https` URL (its text as
    /// hyper-util 0.1 writes it). A stand-in: this workspace's test builds always have TLS
    /// (its dev-dependencies turn on reqwest's `rustls`), so a client without it cannot run
    /// here; the loop's own retry test shows a real connection error is still retried.
    #[test]
    fn a_client_without_tls_is_named_at_once() {
        let chain = Wrapped(
            "error sending request",
            Some(Box::new(Wrapped(
                "client error (Connect)",
                Some(Box::new(Wrapped("invalid URL, scheme is not http", None))),
            ))),
        );
        assert!(lacks_tls(&chain));
        assert!(!lacks_tls(&Wrapped(
            "error sending request",
            Some(Box::new(Wrapped(
                "tcp connect error: Connection refused",
                None
            )))
        )));
        let error = LoopError::NoTls {
            url: "https://api.example/chat/completions".to_owned(),
        };
        assert!(!error.is_transient(), "sending again cannot succeed");
        assert_eq!(
            error.to_string(),
            "the endpoint https://api.example/chat/completions is https, but this build's HTTP client has no TLS: enable reqwest's `rustls` (or `native-tls`) feature in your application, or pass a client with TLS to AgentLoop::with_http"
        );
    }
}
