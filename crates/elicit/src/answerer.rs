//! [`ElicitAnswerer`]: asks through the MCP client's own form UI with `elicitation/create`.

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ElicitRequest, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer};

use crate::content::{Reply, read_reply};
use crate::rounds::{MAX_ROUNDS, did_not_fit, not_accepted};
use crate::schema::form;

/// Whether a client with these capabilities takes form elicitation: it declared
/// `elicitation`, with `form` or (the pre-2025-11-25 shape) with neither `form` nor `url`.
pub fn client_can_elicit(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Asks the human through the MCP client's elicitation form (protocol 2025-11-25 and earlier,
/// where a server may send requests to the client while a tool call runs).
///
/// - Unavailable when the client did not declare form elicitation or its transport is closed.
/// - accept → the answers; decline or cancel → [`AskError::Dismissed`].
/// - Content that does not fit (a label that is not an option) is refused: the form is sent
///   again with the reason on top, at most 3 times, then [`AskError::Failed`].
/// - When the token fires, the pending `elicitation/create` is cancelled with
///   `notifications/cancelled` (the client withdraws its form) and the result is
///   [`AskError::Cancelled`].
///
/// The future must run inside the tool call's handler task (not a spawned task): rmcp uses
/// that task to route the request to the right client stream over streamable HTTP.
#[derive(Clone)]
pub struct ElicitAnswerer {
    peer: Peer<RoleServer>,
    capable: bool,
}

impl std::fmt::Debug for ElicitAnswerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitAnswerer")
            .field("capable", &self.capable)
            .finish_non_exhaustive()
    }
}

impl ElicitAnswerer {
    /// An answerer for the client behind `peer`, which declared `capabilities`.
    pub fn new(peer: Peer<RoleServer>, capabilities: Option<&ClientCapabilities>) -> Self {
        Self {
            peer,
            capable: client_can_elicit(capabilities),
        }
    }

    async fn elicit(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> Result<Answers, AskError> {
        if !self.is_available() {
            return Err(AskError::Unavailable(
                "the MCP client does not take elicitation".to_owned(),
            ));
        }
        let mut notice: Option<String> = None;
        let mut refused = None;
        for _ in 0..MAX_ROUNDS {
            let form = form(request, notice.as_deref());
            let elicit = ServerRequest::ElicitRequest(ElicitRequest::new(form.params()));
            let handle = self
                .peer
                .send_cancellable_request(elicit, PeerRequestOptions::no_options())
                .await
                .map_err(|e| AskError::Failed(format!("the MCP client is gone ({e})")))?;
            let id = handle.id.clone();
            let response = tokio::select! {
                response = handle.await_response() => response,
                () = cancel.cancelled() => {
                    let withdraw = CancelledNotificationParam::new(
                        Some(id),
                        Some("the question was withdrawn".to_owned()),
                    );
                    // The client may be gone already; nothing else to withdraw then.
                    let _ = self.peer.notify_cancelled(withdraw).await;
                    return Err(AskError::Cancelled);
                }
            };
            let result = match response {
                Ok(ClientResult::ElicitResult(result)) => result,
                Ok(_) => {
                    return Err(AskError::Failed(
                        "the MCP client sent an unexpected reply to elicitation/create".to_owned(),
                    ));
                }
                Err(e) => {
                    return Err(AskError::Failed(format!(
                        "the MCP client's elicitation failed ({e})"
                    )));
                }
            };
            match read_reply(request, &form, &result) {
                Reply::Answered(answers) => return Ok(answers),
                Reply::Dismissed => return Err(AskError::Dismissed),
                Reply::Refused(error) => {
                    tracing::info!(%error, "elicitation content refused; asking again");
                    notice = Some(not_accepted(&error));
                    refused = Some(error);
                }
            }
        }
        let reason = refused.map(|e| e.to_string()).unwrap_or_default();
        Err(AskError::Failed(did_not_fit(&reason)))
    }
}

impl UserInteraction for ElicitAnswerer {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.elicit(request, cancel))
    }

    fn is_available(&self) -> bool {
        self.capable && !self.peer.is_transport_closed()
    }
}
