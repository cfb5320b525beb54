//! One client session as the tool calls see it (docs/contract.md §7): [`Linked`] wraps a
//! session's transport, [`LinkedSessions`] wraps rmcp's HTTP session manager with it.
//!
//! - **Request ids from 1.** rmcp numbers the server's own requests (`elicitation/create`)
//!   from 0, and the TypeScript SDK ignores a `notifications/cancelled` for a falsy id, so the
//!   first form of a session could never be withdrawn there. The wrapper adds 1 to the id of
//!   every request the server sends (and of its `notifications/cancelled` for them) and takes
//!   it off the client's responses, so rmcp keeps its own numbering inside.
//! - **The session ending withdraws at once.** When the session ends (stdio closed, `DELETE`,
//!   the idle timeout) the session's [`SessionLink::gone`] token fires when the transport
//!   reports it, before rmcp's own drain (which lets running calls go on for 2–5 s). Over HTTP
//!   `DELETE` itself cancels the token and waits (at most [`CLOSE_GRACE`]) for the session's
//!   calls to withdraw their questions before it answers, so a late answer on the page gets
//!   409, never "200 ok".
//!
//! - **Cancellations are seen first here.** Every incoming `notifications/cancelled` is
//!   reported to the session's deliveries (the `delivery` module) before rmcp reads it, and
//!   before the session's next message is read, so a cancellation that crossed a result
//!   already sent takes that result's delivery back before a retry on the same session looks.
//!
//! With a store (§8) the calls only *detach* their asks when `gone` fires (see the crate's
//! `durable` module): the page keeps the question, so a late answer there is taken and kept
//! for the retry; the "withdrawn before `DELETE` is answered" rule holds for store-less
//! servers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, GetExtensions, JsonRpcMessage, NumberOrString,
    RequestId, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::delivery::Deliveries;

/// How long closing a session waits for its calls to withdraw their questions.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// What a tool call learns about its session, carried in the request's extensions.
#[derive(Debug, Clone, Default)]
pub struct SessionLink {
    gone: CancellationToken,
    calls: TaskTracker,
    deliveries: Deliveries,
}

impl SessionLink {
    /// Fires when the client ended the session (or went away).
    pub fn gone(&self) -> &CancellationToken {
        &self.gone
    }

    /// Tracks the calls of this session; a call holds a token while it runs.
    pub fn calls(&self) -> &TaskTracker {
        &self.calls
    }

    /// The session's recent deliveries and cancellations (docs/contract.md §8 "Delivered").
    pub(crate) fn deliveries(&self) -> &Deliveries {
        &self.deliveries
    }

    /// Ends the session for its calls: `gone` fires, then waits (at most `grace`) until every
    /// call has ended. Returns whether all ended in time.
    pub async fn end(&self, grace: Duration) -> bool {
        self.gone.cancel();
        self.calls.close();
        tokio::time::timeout(grace, self.calls.wait()).await.is_ok()
    }
}

/// A session's transport with request ids shifted to start at 1 and a [`SessionLink`]
/// attached to every incoming request; `gone` fires when the client's side ends.
#[derive(Debug)]
pub struct Linked<T> {
    inner: T,
    link: SessionLink,
    /// A message read but not yet handed to rmcp, with the take-back its cancellation runs
    /// (on its own task): rmcp drops a pending `receive` whenever another of its events
    /// comes first, and neither the take-back nor the message may be lost then.
    held: Option<(Option<JoinHandle<()>>, RxJsonRpcMessage<RoleServer>)>,
}

impl<T> Linked<T> {
    /// Wraps `inner` with a fresh link.
    pub fn new(inner: T) -> Self {
        Self::with_link(inner, SessionLink::default())
    }

    /// Wraps `inner` with `link` (shared with whoever ends the session).
    pub fn with_link(inner: T, link: SessionLink) -> Self {
        Self {
            inner,
            link,
            held: None,
        }
    }
}

fn shift(id: &mut RequestId, by: i64) {
    if let NumberOrString::Number(n) = id {
        *n = n.saturating_add(by);
    }
}

/// Outgoing: our requests and our cancellations of them count from 1.
fn shift_out(message: &mut ServerJsonRpcMessage) {
    match message {
        JsonRpcMessage::Request(request) => shift(&mut request.id, 1),
        JsonRpcMessage::Notification(notification) => {
            if let ServerNotification::CancelledNotification(cancelled) =
                &mut notification.notification
                && let Some(id) = &mut cancelled.params.request_id
            {
                shift(id, 1);
            }
        }
        _ => {}
    }
}

/// Incoming: the client's replies to our requests, back to rmcp's numbering.
fn shift_in(message: &mut ClientJsonRpcMessage, link: &SessionLink) {
    match message {
        JsonRpcMessage::Response(response) => shift(&mut response.id, -1),
        JsonRpcMessage::Error(error) => {
            if let Some(id) = &mut error.id {
                shift(id, -1);
            }
        }
        JsonRpcMessage::Request(request) => {
            link.deliveries.forget(&request.id);
            request.request.extensions_mut().insert(link.clone());
        }
        JsonRpcMessage::Notification(_) => {}
    }
}

/// The request a `notifications/cancelled` names.
fn cancelled_request(message: &ClientJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Notification(notification) => match &notification.notification {
            ClientNotification::CancelledNotification(cancelled) => {
                cancelled.params.request_id.as_ref()
            }
            _ => None,
        },
        _ => None,
    }
}

/// The test-only failpoint `before-result` ([`ask_user_store::knobs::failpoint`]: only in
/// test builds, with `ASK_USER_TEST_FAILPOINT=before-result`): the process aborts right before
/// a `tools/call` result is written, as a `kill -9` there would end it.
fn failpoint_before_result(message: &ServerJsonRpcMessage) {
    if let JsonRpcMessage::Response(response) = message
        && matches!(
            response.result,
            rmcp::model::ServerResult::CallToolResult(_)
        )
        && ask_user_store::knobs::failpoint("before-result")
    {
        std::process::abort();
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Linked<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        shift_out(&mut item);
        failpoint_before_result(&item);
        // A call's result is marked delivered once it is written, never before (§8's order).
        let delivery = match &item {
            JsonRpcMessage::Response(response) => self
                .link
                .deliveries
                .written(&response.id)
                .map(|delivery| (response.id.clone(), delivery)),
            _ => None,
        };
        let deliveries = self.link.deliveries.clone();
        let sent = self.inner.send(item);
        async move {
            // A write that fails marks nothing (dropping `marking` releases a cancellation).
            sent.await?;
            if let Some((request, written)) = delivery {
                deliveries
                    .complete(written.marking, &request, &written.store, written.delivery)
                    .await;
            }
            Ok(())
        }
    }

    /// Cancel-safe (rmcp polls it in a `select!`): a message read is held until it is
    /// returned, and its cancellation's take-back runs to its end on its own task, applied
    /// before the session's next message is read (a retry sent after the cancellation finds
    /// the delivery taken back and the ask detached).
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if self.held.is_none() {
            let Some(mut message) = self.inner.receive().await else {
                self.link.gone.cancel();
                return None;
            };
            shift_in(&mut message, &self.link);
            let taking_back = cancelled_request(&message).map(|request| {
                let (deliveries, request) = (self.link.deliveries.clone(), request.clone());
                tokio::spawn(async move { deliveries.cancelled(&request).await })
            });
            self.held = Some((taking_back, message));
        }
        if let Some((taking_back @ Some(_), _)) = &mut self.held
            && let Some(task) = taking_back
        {
            if let Err(e) = task.await {
                tracing::warn!("the take-back of a cancelled delivery did not finish: {e}");
            }
            *taking_back = None;
        }
        self.held.take().map(|(_, message)| message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.link.gone.cancel();
        self.inner.close()
    }
}

/// An HTTP session manager whose sessions are [`Linked`]: `DELETE` withdraws the session's
/// questions before it is answered.
#[derive(Debug, Default)]
pub struct LinkedSessions<M> {
    inner: M,
    links: Arc<Mutex<HashMap<SessionId, SessionLink>>>,
}

impl<M> LinkedSessions<M> {
    /// Wraps `inner`.
    pub fn new(inner: M) -> Self {
        Self {
            inner,
            links: Arc::default(),
        }
    }

    fn take(&self, id: &SessionId) -> Option<SessionLink> {
        self.links
            .lock()
            .ok()
            .and_then(|mut links| links.remove(id))
    }
}

impl<M: SessionManager> SessionManager for LinkedSessions<M> {
    type Error = M::Error;
    type Transport = Linked<M::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        let link = SessionLink::default();
        if let Ok(mut links) = self.links.lock() {
            // Sessions that end without DELETE (idle, shutdown) leave their entry behind;
            // drop those whose calls can no longer run.
            links.retain(|_, link| !link.gone.is_cancelled());
            links.insert(id.clone(), link.clone());
        }
        Ok((id, Linked::with_link(transport, link)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(link) = self.take(id)
            && !link.end(CLOSE_GRACE).await
        {
            tracing::warn!("a call did not withdraw its question in time after DELETE");
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        CancelledNotification, CancelledNotificationParam, ClientResult, CustomRequest,
        EmptyResult, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0,
        ServerRequest,
    };

    use super::*;

    #[test]
    fn our_requests_count_from_one_and_replies_map_back() {
        let mut request = ServerJsonRpcMessage::Request(JsonRpcRequest::new(
            RequestId::Number(0),
            ServerRequest::CustomRequest(CustomRequest::new("elicitation/create", None)),
        ));
        shift_out(&mut request);
        let JsonRpcMessage::Request(sent) = &request else {
            panic!()
        };
        assert_eq!(sent.id, RequestId::Number(1));

        let mut cancel = ServerJsonRpcMessage::Notification(JsonRpcNotification {
            jsonrpc: JsonRpcVersion2_0,
            notification: ServerNotification::CancelledNotification(CancelledNotification::new(
                CancelledNotificationParam::new(Some(RequestId::Number(0)), None),
            )),
        });
        shift_out(&mut cancel);
        assert!(
            serde_json::to_string(&cancel)
                .unwrap()
                .contains(r#""requestId":1"#)
        );

        let mut reply = ClientJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(1),
            result: ClientResult::EmptyResult(EmptyResult {}),
        });
        shift_in(&mut reply, &SessionLink::default());
        let JsonRpcMessage::Response(reply) = &reply else {
            panic!()
        };
        assert_eq!(reply.id, RequestId::Number(0));
    }
}
