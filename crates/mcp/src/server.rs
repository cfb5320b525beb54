//! [`AskUserServer`]: the rmcp `ServerHandler` exposing `ask_user_question`.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::definition::NAME;
use ask_user_core::{
    AskUserQuestionTool, ExecutionContext, FirstAnswer, Limits, Outcome, UserInteraction,
};
use ask_user_elicit::{ElicitAnswerer, client_can_elicit};
use ask_user_host::{Journal, Notify};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio_util::task::TaskTracker;

use crate::input_required;
use crate::tool::{call_result, tool};

/// How questions reach the human: elicitation when the client offers it, else the fallback.
#[derive(Clone)]
pub struct Routing {
    /// Ask through the client's elicitation form when it declares the capability.
    pub elicitation: bool,
    /// The answerers used when the client cannot elicit (or `elicitation` is off): the web
    /// page, the terminal, scripted answers — raced with [`FirstAnswer`]. Empty: nobody, the
    /// call gets the no-answerer outcome.
    pub fallback: Vec<Arc<dyn UserInteraction>>,
    /// Time budget per call; `None` waits for the human indefinitely.
    pub timeout: Option<Duration>,
    /// Caps on the model's arguments.
    pub limits: Limits,
    /// The audit journal (`--journal`): every call's ask and outcome, written before the
    /// result goes to the client.
    pub journal: Option<Arc<Journal>>,
    /// The attention command (`--notify`), run when a question opens.
    pub notify: Option<String>,
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing")
            .field("elicitation", &self.elicitation)
            .field("fallback", &self.fallback.len())
            .field("timeout", &self.timeout)
            .field("limits", &self.limits)
            .field("journal", &self.journal.as_ref().map(|j| j.path()))
            .field("notify", &self.notify)
            .finish()
    }
}

impl Default for Routing {
    fn default() -> Self {
        Self {
            elicitation: true,
            fallback: Vec::new(),
            timeout: None,
            limits: Limits::default(),
            journal: None,
            notify: None,
        }
    }
}

/// The MCP server for one client session (cheap to clone; the fallback answerers are shared
/// between sessions).
///
/// - `tools/list` holds `ask_user_question` (the core's schema bytes, with `outputSchema`)
///   when someone can answer this client: it can elicit, or a fallback answerer is available
///   now. Otherwise the list is empty (docs/contract.md §4 availability), so the model asks in plain text.
/// - `tools/call` decodes the raw arguments with the core (invalid ones are an `isError`
///   result with the core's text, never a protocol error), asks, and returns the outcome's text
///   with `structuredContent` for an answer. An unknown tool name is a protocol error.
/// - The call's cancellation (`notifications/cancelled`, the client gone) cancels the ask and
///   withdraws the question from every UI before the call returns.
#[derive(Clone, Debug, Default)]
pub struct AskUserServer {
    routing: Arc<Routing>,
    calls: TaskTracker,
}

impl AskUserServer {
    /// A server routing questions as `routing` says.
    pub fn new(routing: Routing) -> Self {
        Self {
            routing: Arc::new(routing),
            calls: TaskTracker::new(),
        }
    }

    /// Waits (at most `grace`) for the calls still running to finish: after the transport
    /// closed, rmcp cancels their tokens, and each must withdraw its question and write its
    /// journal line before the process exits. Returns whether all finished in time.
    pub async fn finish_calls(&self, grace: Duration) -> bool {
        self.calls.close();
        tokio::time::timeout(grace, self.calls.wait()).await.is_ok()
    }

    fn fallback(&self) -> FirstAnswer {
        FirstAnswer::new(self.routing.fallback.clone())
    }

    fn tool_with(&self, answerer: Arc<dyn UserInteraction>) -> AskUserQuestionTool {
        AskUserQuestionTool::new(answerer)
            .with_timeout(self.routing.timeout)
            .with_limits(self.routing.limits)
    }

    /// Whether this request's client can answer through an elicitation form.
    fn elicits(&self, context: &RequestContext<RoleServer>) -> bool {
        self.routing.elicitation && client_can_elicit(context.client_capabilities().as_ref())
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != NAME {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool \"{}\"; this server has only {NAME}",
                    request.name
                ),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        if self.elicits(&context) && modern(&context) {
            let limits = &self.routing.limits;
            let (response, round) = input_required::step(&request, arguments.clone(), limits);
            self.journal_round(round, &arguments);
            return Ok(response);
        }
        let answerer: Arc<dyn UserInteraction> = if self.elicits(&context) {
            let capabilities = context.client_capabilities();
            Arc::new(ElicitAnswerer::new(
                context.peer.clone(),
                capabilities.as_ref(),
            ))
        } else {
            Arc::new(self.fallback())
        };
        let answerer: Arc<dyn UserInteraction> = match &self.routing.notify {
            Some(command) => Arc::new(Notify::new(answerer, command.clone())),
            None => answerer,
        };
        let outcome = ask_user_host::call(
            self.routing.journal.as_deref(),
            &self.tool_with(answerer),
            arguments,
            ExecutionContext::new(context.ct.clone()),
        )
        .await;
        log_outcome(&outcome);
        Ok(call_result(&outcome).into())
    }

    /// Journals and announces one input-required round: the question opening (the first
    /// round), or the call ending. The rounds are stateless, so the journal pairs them by
    /// request ([`Journal::record_open`]).
    fn journal_round(&self, round: input_required::Round, arguments: &Value) {
        let journal = self.routing.journal.as_deref();
        match round {
            input_required::Round::Opened(request) => {
                if let Some(command) = &self.routing.notify {
                    ask_user_host::notify(command, &request);
                }
                if let Some(Err(error)) = journal.map(|j| j.record_open(&request)) {
                    tracing::error!("{error}");
                }
            }
            input_required::Round::AskedAgain => {}
            input_required::Round::Ended(request, outcome) => {
                let raw = arguments.to_string();
                let arguments = request.is_none().then_some(raw.as_str());
                if let Some(Err(error)) =
                    journal.map(|j| j.record_close(request.as_ref(), &outcome, arguments))
                {
                    tracing::error!("{error}");
                }
            }
        }
    }
}

/// Whether the request speaks protocol 2026-07-28 or later, where a server may not send
/// requests and asks with an input-required result instead.
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

fn log_outcome(outcome: &Outcome) {
    match outcome.code() {
        None => tracing::info!("ask_user_question answered"),
        Some(code) => tracing::info!(
            code = code.as_str(),
            "ask_user_question ended without an answer"
        ),
    }
}

impl ServerHandler for AskUserServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("ask-user", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "ask_user_question asks the human at the keyboard and waits for the answer.".to_owned(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let available = self.elicits(&context) || self.fallback().is_available();
        let tools = if available { vec![tool()] } else { Vec::new() };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.track_future(self.call(request, context)).await
    }
}
