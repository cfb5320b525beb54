//! [`AskUserServer`]: the rmcp `ServerHandler` exposing `ask_user_question`.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::definition::NAME;
use ask_user_core::{
    AskUserQuestionTool, ExecutionContext, FirstAnswer, Limits, Outcome, UserInteraction,
};
use ask_user_elicit::{ElicitAnswerer, client_can_elicit};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;

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
}

impl std::fmt::Debug for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routing")
            .field("elicitation", &self.elicitation)
            .field("fallback", &self.fallback.len())
            .field("timeout", &self.timeout)
            .field("limits", &self.limits)
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
        }
    }
}

/// The MCP server for one client session (cheap to clone; the fallback answerers are shared
/// between sessions).
///
/// - `tools/list` holds `ask_user_question` (the core's schema bytes, with `outputSchema`)
///   when someone can answer this client: it can elicit, or a fallback answerer is available
///   now. Otherwise the list is empty (SPEC §4 availability), so the model asks in plain text.
/// - `tools/call` decodes the raw arguments with the core (invalid ones are an `isError`
///   result with the core's text, never a protocol error), asks, and returns the outcome's text
///   with `structuredContent` for an answer. An unknown tool name is a protocol error.
/// - The call's cancellation (`notifications/cancelled`, the client gone) cancels the ask and
///   withdraws the question from every UI before the call returns.
#[derive(Clone, Debug, Default)]
pub struct AskUserServer {
    routing: Arc<Routing>,
}

impl AskUserServer {
    /// A server routing questions as `routing` says.
    pub fn new(routing: Routing) -> Self {
        Self {
            routing: Arc::new(routing),
        }
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
            return Ok(input_required::step(&request, arguments, limits));
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
        let outcome = self
            .tool_with(answerer)
            .call(arguments, ExecutionContext::new(context.ct.clone()))
            .await;
        log_outcome(&outcome);
        Ok(call_result(&outcome).into())
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
        self.call(request, context).await
    }
}
