//! [`AskUserServer`]: the rmcp `ServerHandler` exposing `ask_user_question`.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::definition::NAME;
use ask_user_core::{BoxFuture, ExecutionContext, FirstAnswer, Limits, Outcome, UserInteraction};
use ask_user_elicit::{ElicitAnswerer, FormStyle, HUMAN_REACTION, client_can_elicit};
use ask_user_host::durable::{Durable, local_asker};
use ask_user_host::{Delivery, HostCall, Journal, StoredAsk};
use ask_user_store::Store;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clients;
use crate::durable::{Showing, caller_scope};
use crate::input_required;
use crate::or_else::OrElse;
use crate::session::SessionLink;
use crate::tool::{call_result, tool};

/// The default time between two progress notifications while a question is open.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(15);

/// The progress notification's message.
pub const PROGRESS_MESSAGE: &str = "waiting for the user to answer";

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
    /// While a question is open and the client gave a `progressToken`, a progress
    /// notification goes out this often (hosts that reset their timeout on progress keep
    /// waiting); default [`PROGRESS_INTERVAL`].
    pub progress_interval: Duration,
    /// Where asks are kept (docs/contract.md §8): with a store, a call that goes away leaves
    /// its ask detached (still answerable on the page and in `ask-user inbox`) and an
    /// identical later call re-attaches. `None`: asks live only as long as their call.
    pub store: Option<Store>,
    /// A decline or cancel of a form sooner than this after it went out is the client's own
    /// refusal (a headless host), not the human's: the question goes to the fallback
    /// answerers (docs/contract.md §7); default [`HUMAN_REACTION`], zero: never.
    pub reaction_floor: Duration,
    /// With a store, a call still waiting after this long ends with
    /// [`clients::STILL_OPEN_TEXT`] (the ask stays open for the retry); `None`: the limit
    /// known for the client ([`clients::call_limit`]: Codex 270 s, Gemini CLI 570 s).
    pub call_limit: Option<Duration>,
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
            .field("progress_interval", &self.progress_interval)
            .field("store", &self.store.as_ref().map(Store::location))
            .field("reaction_floor", &self.reaction_floor)
            .field("call_limit", &self.call_limit)
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
            progress_interval: PROGRESS_INTERVAL,
            store: None,
            reaction_floor: HUMAN_REACTION,
            call_limit: None,
        }
    }
}

/// The MCP server for one client session (cheap to clone; the fallback answerers are shared
/// between sessions).
///
/// - `tools/list` holds `ask_user_question` (the core's schema bytes, with `outputSchema`)
///   when someone can answer this client: it can elicit, or a fallback answerer is available
///   now. Otherwise the list is empty (docs/contract.md §4 availability), so the model asks in plain text.
/// - `tools/call` decodes the raw arguments with the core (invalid ones, also arguments that
///   are not an object, are an `isError` result with the core's text, never a protocol error),
///   asks, and returns the outcome's text with `structuredContent` for an answer. An unknown
///   tool name is a protocol error.
/// - A client that can elicit gets a form in the shapes of its protocol version
///   ([`FormStyle::for_version`]); a form it refuses or fails to show moves to the fallback
///   answerers, the question kept open.
/// - While the question is open and the request carries a `progressToken`, a progress
///   notification goes out every [`Routing::progress_interval`].
/// - The call's cancellation (`notifications/cancelled`, the session ending) ends the call
///   and withdraws its elicitation form. Without a store the question is withdrawn from every
///   UI before the call returns; with one ([`Routing::store`]) the ask is only **detached**:
///   the web page keeps it answerable, and an identical later call (same client name, any
///   session) re-attaches to it or gets the answer given meanwhile (docs/contract.md §8).
#[derive(Clone, Debug, Default)]
pub struct AskUserServer {
    routing: Arc<Routing>,
    calls: TaskTracker,
    showing: Showing,
}

impl AskUserServer {
    /// A server routing questions as `routing` says.
    pub fn new(routing: Routing) -> Self {
        Self {
            routing: Arc::new(routing),
            calls: TaskTracker::new(),
            showing: Showing::default(),
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

    /// The fallback answerers for one call: with a store, shown through [`Showing`] (one
    /// question per ask, kept on the page when the call goes away).
    fn fallback_for(&self, durable: Option<&Durable>) -> Arc<dyn UserInteraction> {
        let fallback: Arc<dyn UserInteraction> = Arc::new(self.fallback());
        match durable {
            Some(durable) => self.showing.wrap(fallback, durable.clone()),
            None => fallback,
        }
    }

    /// The call's link to the store, when there is one; the scope is the client's name (see
    /// [`caller_scope`]).
    fn durable(&self, context: &RequestContext<RoleServer>) -> Option<Durable> {
        let store = self.routing.store.clone()?;
        let name = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .unwrap_or_default();
        Some(Durable::new(
            store,
            ask_user_host::durable::local_namespace(),
            caller_scope(&name),
            local_asker(Some(name)),
        ))
    }

    /// Whether this request's client can answer through an elicitation form.
    fn elicits(&self, context: &RequestContext<RoleServer>) -> bool {
        self.routing.elicitation && client_can_elicit(context.client_capabilities().as_ref())
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        arguments: Value,
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
        if is_permission_request(&arguments) {
            let text = rmcp::model::ContentBlock::text(NOT_A_PERMISSION_TOOL);
            return Ok(rmcp::model::CallToolResult::error(vec![text]).into());
        }
        let link = context.extensions.get::<SessionLink>().cloned();
        let _running = link.as_ref().map(|link| link.calls().token());
        if self.elicits(&context) && modern(&context) {
            let limits = &self.routing.limits;
            let floor = self.routing.reaction_floor;
            let (response, round) =
                input_required::step(&request, arguments.clone(), limits, floor);
            if !matches!(round, input_required::Round::FormFailed) {
                self.journal_round(round, &arguments);
                return Ok(response);
            }
            // The client could not show the form: the fallback asks within this call.
            drop(request);
            let durable = self.durable(&context);
            let answerer = self.fallback_for(durable.as_ref());
            return Ok(self.ask(answerer, arguments, &context, link, durable).await);
        }
        // Not held while the call waits.
        drop(request);
        let durable = self.durable(&context);
        let answerer: Arc<dyn UserInteraction> = if self.elicits(&context) {
            let capabilities = context.client_capabilities();
            let style = clients::form_style(
                client_name(&context).as_deref(),
                context.protocol_version().as_ref(),
            );
            let form = ElicitAnswerer::new(context.peer.clone(), capabilities.as_ref())
                .with_style(style)
                .with_reaction_floor(self.routing.reaction_floor);
            Arc::new(OrElse::new(
                Arc::new(form),
                self.fallback_for(durable.as_ref()),
            ))
        } else {
            self.fallback_for(durable.as_ref())
        };
        Ok(self.ask(answerer, arguments, &context, link, durable).await)
    }

    /// Asks `answerer` (with the attention command) and waits, sending progress while the
    /// question is open; the call ends early when the request is cancelled or the session
    /// ends (the answerer's token fires, it withdraws the question, then the call returns).
    /// With a store (`durable`), the ask goes through it: stored before it is shown, its
    /// outcome stored before the client reads it, detached when the call is cancelled, and
    /// marked delivered when the result goes to a request that was not cancelled.
    async fn ask(
        &self,
        answerer: Arc<dyn UserInteraction>,
        arguments: Value,
        context: &RequestContext<RoleServer>,
        link: Option<SessionLink>,
        durable: Option<Durable>,
    ) -> CallToolResponse {
        // A call that starts after the session ended (stdio: the client wrote its requests,
        // then closed its end) still gets its result when no human is needed (invalid
        // arguments, scripted answers); rmcp cancels it after its drain otherwise.
        let cancel = match &link {
            Some(link) if !link.gone().is_cancelled() => link.gone().child_token(),
            _ => CancellationToken::new(),
        };
        // Only a stored ask outlives its call: without a store, no early end.
        let limit = durable.as_ref().and(clients::call_limit(
            client_name(context).as_deref(),
            self.routing.call_limit,
        ));
        let call = HostCall::builder(answerer)
            .notify(self.routing.notify.clone())
            .journal(self.routing.journal.clone())
            .durable(durable)
            .timeout(self.routing.timeout)
            .limits(self.routing.limits)
            .build();
        let asked = call.call(arguments, ExecutionContext::new(cancel.clone()));
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| (context.peer.clone(), token));
        let (asked, ended) = clients::ending_at(
            limit,
            &cancel,
            wait(
                asked,
                &context.ct,
                &cancel,
                progress,
                self.routing.progress_interval,
            ),
        )
        .await;
        log_outcome(asked.outcome());
        if ended && matches!(asked.outcome(), Outcome::Aborted) {
            // The ask stays open (detached) and undelivered: the model's retry re-attaches.
            return clients::still_open().into();
        }
        let mut result = ToRequest {
            request: &context.ct,
            cancel: &cancel,
            link: link.as_ref(),
            id: &context.id,
        };
        let (outcome, _) = asked.deliver(&mut result).await;
        call_result(&outcome).into()
    }

    /// `tools/call` with `arguments` that are not an object: rmcp cannot type such a request,
    /// so it arrives as a custom request; answered as a `tools/call` result all the same (the
    /// core's invalid-arguments text), never as a protocol error.
    async fn raw_call(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.unwrap_or(Value::Null);
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        let mut typed = CallToolRequestParams::new(name.to_owned());
        typed.request_state = params
            .get("requestState")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let response = self.call(typed, arguments, context).await?;
        serde_json::to_value(rmcp::model::ServerResult::from(response))
            .map(CustomResult)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
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
            input_required::Round::AskedAgain | input_required::Round::FormFailed => {}
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

/// Whether a call's result counts as delivered (docs/contract.md §8): neither the request
/// (`notifications/cancelled`, the client's own timeout) nor the call (the session ended) was
/// cancelled while it ran. An answer that settled the race just as the cancellation came still
/// is the call's outcome, but the client dropped the result: it stays undelivered.
fn deliverable(request: &CancellationToken, cancel: &CancellationToken) -> bool {
    !request.is_cancelled() && !cancel.is_cancelled()
}

/// The MCP server's delivery (docs/contract.md §8): the result goes to a request that was not
/// cancelled. A cancelled request's result (which the client drops) leaves the outcome
/// undelivered, so the retry gets it; so does a cancellation that crosses the result on the
/// wire (the session's deliveries take the mark back, see the `delivery` module).
struct ToRequest<'a> {
    request: &'a CancellationToken,
    cancel: &'a CancellationToken,
    link: Option<&'a SessionLink>,
    id: &'a rmcp::model::RequestId,
}

impl Delivery for ToRequest<'_> {
    /// rmcp sends the result once the handler returns; whether it can still count is known
    /// now.
    fn write<'a>(&'a mut self, _: &'a Outcome) -> BoxFuture<'a, bool> {
        let deliverable = deliverable(self.request, self.cancel);
        Box::pin(std::future::ready(deliverable))
    }

    fn mark<'a>(&'a mut self, ask: StoredAsk<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            match (self.link, ask.delivery()) {
                // Marked by the session's transport once the result is written.
                (Some(link), Some(delivery)) => {
                    link.deliveries().pending(self.id, ask.store(), delivery);
                }
                _ => ask.mark_delivered().await,
            }
        })
    }
}

/// Waits for `call`, sending a progress notification every `interval` while it runs when the
/// client gave a token; when `request` (the client's cancellation) fires, fires `cancel` and
/// keeps waiting for the call to withdraw its question and end.
async fn wait<T>(
    call: impl Future<Output = T>,
    request: &CancellationToken,
    cancel: &CancellationToken,
    progress: Option<(Peer<RoleServer>, ProgressToken)>,
    interval: Duration,
) -> T {
    tokio::pin!(call);
    // A zero period would panic in tokio and one too long to add to now would overflow: both
    // are refused where the flag enters (`parse_interval`); a library caller's are clamped.
    let interval = interval.clamp(Duration::from_millis(1), ask_user_core::time::MAX_DURATION);
    // Only a call with a progress token holds a timer while it waits.
    let mut ticks = progress.as_ref().map(|_| {
        let start = tokio::time::Instant::now()
            .checked_add(interval)
            .unwrap_or_else(tokio::time::Instant::now);
        let mut ticks = tokio::time::interval_at(start, interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks
    });
    let mut sent = 0u32;
    loop {
        tokio::select! {
            outcome = &mut call => return outcome,
            () = request.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
            () = tick(&mut ticks), if !cancel.is_cancelled() => {
                if let Some((peer, token)) = &progress {
                    sent += 1;
                    // Where the question waits when the page could not be opened.
                    let message = if crate::fallback::no_browser() {
                        crate::fallback::NO_BROWSER_TEXT
                    } else {
                        PROGRESS_MESSAGE
                    };
                    let note = ProgressNotificationParam::new(token.clone(), f64::from(sent))
                        .with_message(message);
                    if let Err(error) = peer.notify_progress(note).await {
                        tracing::debug!(%error, "cannot send progress");
                    }
                }
            }
        }
    }
}

/// The next tick of `ticks`; never without a timer.
async fn tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(ticks) => {
            ticks.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// The line logged when a client finished its handshake: who it is, the protocol it
/// negotiated, and where its questions go (so a human reading the host's MCP log knows
/// whether to expect a form or the web page).
fn connected(info: &InitializeRequestParams, elicitation: bool) -> String {
    let client = &info.client_info;
    let form = elicitation && client_can_elicit(Some(&info.capabilities));
    let route = match (form, FormStyle::for_version(Some(&info.protocol_version))) {
        (false, _) => "questions go to the fallback answerers (--via, --answers)",
        (true, FormStyle::Primitive) => "questions go to its own form (2025-06-18 shapes)",
        (true, _) => "questions go to its own form",
    };
    format!(
        "{} {} connected (protocol {}); {route}",
        client.name, client.version, info.protocol_version
    )
}

/// The `clientInfo.name` the request's client gave in `initialize`.
fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .peer
        .peer_info()
        .map(|info| info.client_info.name.clone())
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

    /// The default handshake, except that the client's info is stored with the protocol
    /// version *negotiated* (the forms follow it, not the version the client asked for), and
    /// the handshake is logged (info): who connected and where its questions go.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let result = self.negotiate_initialize(&request)?;
        let mut info = request;
        info.protocol_version = result.protocol_version.clone();
        tracing::info!("{}", connected(&info, self.routing.elicitation));
        context.peer.set_peer_info(info);
        Ok(result)
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
        // The arguments are moved out, not copied: the call holds them once while it waits.
        let mut request = request;
        let arguments = Value::Object(request.arguments.take().unwrap_or_default());
        self.calls
            .track_future(self.call(request, arguments, context))
            .await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != "tools/call" {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        self.calls
            .track_future(self.raw_call(request, context))
            .await
    }
}

/// What the model reads when a host calls the tool as its permission prompt tool (`claude -p
/// --permission-prompt-tool mcp__ask-user__ask_user_question`): plainly not one, and denied.
pub(crate) const NOT_A_PERMISSION_TOOL: &str = "Error: ask_user_question is not a permission prompt tool: this permission request was not shown to the user and is denied.";

/// Whether `arguments` are a host's permission request (`tool_name` and `input`, no
/// `questions`) rather than questions.
fn is_permission_request(arguments: &Value) -> bool {
    arguments.get("questions").is_none()
        && arguments.get("tool_name").is_some_and(Value::is_string)
        && arguments.get("input").is_some()
}

#[cfg(test)]
mod tests {
    use ask_user_core::{AnswerItem, Answers};

    use super::*;

    fn answered() -> Outcome {
        Outcome::Answered(Answers {
            answers: vec![AnswerItem::selected("go", ["No"])],
        })
    }

    /// An answer that stands although the request was cancelled while it was being decided
    /// (the core keeps a decision in flight) is the call's outcome, but not delivered.
    #[tokio::test]
    async fn a_result_for_a_cancelled_request_is_not_deliverable() {
        let (request, cancel) = (CancellationToken::new(), CancellationToken::new());
        let in_flight = {
            let cancel = cancel.clone();
            async move {
                cancel.cancelled().await;
                answered()
            }
        };
        request.cancel();
        let outcome = wait(in_flight, &request, &cancel, None, PROGRESS_INTERVAL).await;
        assert!(matches!(outcome, Outcome::Answered(_)));
        assert!(!deliverable(&request, &cancel));
    }

    #[test]
    fn a_permission_request_is_told_apart_from_questions() {
        let request = serde_json::json!({"tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "t1"});
        assert!(is_permission_request(&request));
        assert!(!is_permission_request(
            &serde_json::json!({"questions": [], "tool_name": "x", "input": {}})
        ));
        assert!(!is_permission_request(&serde_json::json!({})));
    }

    #[tokio::test]
    async fn a_result_for_a_live_request_is_deliverable() {
        let (request, cancel) = (CancellationToken::new(), CancellationToken::new());
        let outcome = wait(
            async { answered() },
            &request,
            &cancel,
            None,
            PROGRESS_INTERVAL,
        )
        .await;
        assert!(matches!(outcome, Outcome::Answered(_)));
        assert!(deliverable(&request, &cancel));
    }
}
