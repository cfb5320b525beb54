//! [`ElicitAnswerer`]: asks through the MCP client's own form UI with `elicitation/create`.

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
    normalise,
};
use rmcp::ServiceError;
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, CustomRequest, ElicitResult,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer};

use std::time::{Duration, Instant};

use crate::content::{NOTHING_CHOSEN, Reply, read_reply};
use crate::headless::{HUMAN_REACTION, REFUSED_UNSEEN, refused_unseen};
use crate::rounds::{MAX_ROUNDS, did_not_fit, not_accepted};
use crate::schema::{Form, FormStyle, form, own_answer_form};

/// The longest part of a client's error text kept in the reason of [`AskError::Unavailable`]
/// (the whole error goes to the log; a validation dump can be kilobytes).
const REASON_CHARS: usize = 160;

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
/// - The form has the shapes of its [`FormStyle`] (set with [`ElicitAnswerer::with_style`]
///   from the negotiated protocol version; [`FormStyle::Titled`] by default).
/// - Unavailable when the client did not declare form elicitation or its transport is closed,
///   and when the client answers `elicitation/create` with an error (it refused or failed to
///   show the form): the reason is short, the client's whole error is logged, so a host can
///   fall back to the next answerer without the model ever reading a protocol dump.
/// - accept → the answers; decline or cancel → [`AskError::Dismissed`], except sooner than
///   the reaction floor ([`HUMAN_REACTION`] by default, [`ElicitAnswerer::with_reaction_floor`])
///   after the form went out: then the client refused it unseen (it runs headless) and the
///   answerer is unavailable ([`REFUSED_UNSEEN`]), so the host asks the next answerer.
/// - Content that does not fit (a label that is not an option) is refused: the form is sent
///   again with the reason on top, at most 3 times, then [`AskError::Failed`].
/// - Accepted with every field blank: the form is sent once more with [`NOTHING_CHOSEN`] on
///   top; blank again → every question skipped.
/// - [`FormStyle::Codex`]: when the human took a question's own-answer choice, a second form
///   asks for the typed text ([`own_answer_form`](crate::own_answer_form)), added to the first
///   form's answers.
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
    style: FormStyle,
    floor: Duration,
}

impl std::fmt::Debug for ElicitAnswerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitAnswerer")
            .field("capable", &self.capable)
            .field("style", &self.style)
            .field("floor", &self.floor)
            .finish_non_exhaustive()
    }
}

impl ElicitAnswerer {
    /// An answerer for the client behind `peer`, which declared `capabilities`.
    pub fn new(peer: Peer<RoleServer>, capabilities: Option<&ClientCapabilities>) -> Self {
        Self {
            peer,
            capable: client_can_elicit(capabilities),
            style: FormStyle::Titled,
            floor: HUMAN_REACTION,
        }
    }

    /// The same answerer taking a decline or cancel that comes sooner than `floor` after its
    /// form went out as the client's own refusal (unavailable), not the human's
    /// ([`HUMAN_REACTION`] by default; zero takes every refusal as the human's).
    pub fn with_reaction_floor(mut self, floor: Duration) -> Self {
        self.floor = floor;
        self
    }

    /// The same answerer sending forms of `style` (from the negotiated protocol version,
    /// [`FormStyle::for_version`]).
    pub fn with_style(mut self, style: FormStyle) -> Self {
        self.style = style;
        self
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
        let mut refusals: u32 = 0;
        let mut blank_once = false;
        loop {
            let form = form(request, notice.as_deref(), self.style);
            let (result, elapsed) = self.send(&form, &cancel).await?;
            match read_reply(request, &form, &result) {
                Reply::Answered(answers) => return Ok(answers),
                Reply::Blank(answers) if blank_once => return Ok(answers),
                Reply::Blank(_) => {
                    blank_once = true;
                    notice = Some(NOTHING_CHOSEN.to_owned());
                }
                Reply::Refused(error) => {
                    tracing::info!(%error, "elicitation content refused; asking again");
                    refusals += 1;
                    if refusals >= MAX_ROUNDS {
                        return Err(AskError::Failed(did_not_fit(&error)));
                    }
                    notice = Some(not_accepted(&error));
                }
                Reply::OwnAnswerWanted { answers, questions } => {
                    return self
                        .own_answers(request, answers, &questions, &cancel)
                        .await;
                }
                Reply::Dismissed => return Err(self.refusal(elapsed)),
            }
        }
    }

    /// The second form of [`FormStyle::Codex`]: the own answers of `questions`, added to the
    /// `answers` of the first form. Declined or cancelled: the batch is dismissed (as in the
    /// first form); content that does not fit: the first form's answers alone.
    async fn own_answers(
        &self,
        request: &AskUserQuestionRequest,
        answers: Answers,
        questions: &[usize],
        cancel: &CancellationToken,
    ) -> Result<Answers, AskError> {
        let form = own_answer_form(request, questions);
        let (result, elapsed) = self.send(&form, cancel).await?;
        let typed = match read_reply(request, &form, &result) {
            Reply::Answered(typed) | Reply::Blank(typed) => typed,
            Reply::Dismissed => return Err(self.refusal(elapsed)),
            _ => return Ok(answers),
        };
        let mut merged = answers;
        for (item, typed) in merged.answers.iter_mut().zip(typed.answers) {
            if typed.custom.is_some() {
                item.custom = typed.custom;
            }
        }
        normalise(request, merged).map_err(|e| AskError::Failed(did_not_fit(&e)))
    }

    /// A decline or cancel `elapsed` after the form went out: the human's dismissal, or —
    /// sooner than the reaction floor — the client's own refusal (unavailable).
    fn refusal(&self, elapsed: Duration) -> AskError {
        if refused_unseen(elapsed, self.floor) {
            tracing::info!(
                elapsed_ms = elapsed.as_millis(),
                "{REFUSED_UNSEEN}; asking the next answerer"
            );
            AskError::Unavailable(REFUSED_UNSEEN.to_owned())
        } else {
            AskError::Dismissed
        }
    }

    /// Sends `form` with `elicitation/create` and waits for the client's result and how long
    /// it took; when `cancel` fires first, withdraws the form (`notifications/cancelled`).
    async fn send(
        &self,
        form: &Form,
        cancel: &CancellationToken,
    ) -> Result<(ElicitResult, Duration), AskError> {
        // Sent as raw JSON: rmcp's typed request always carries `mode`, which a 2025-06-18
        // client does not know.
        let elicit = ServerRequest::CustomRequest(CustomRequest::new(
            "elicitation/create",
            Some(form.request_params()),
        ));
        let handle = self
            .peer
            .send_cancellable_request(elicit, PeerRequestOptions::no_options())
            .await
            .map_err(|e| AskError::Failed(format!("the MCP client is gone ({e})")))?;
        let sent = Instant::now();
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
        Ok((elicit_result(response)?, sent.elapsed()))
    }
}

/// The client's reply to `elicitation/create` as an [`ElicitResult`]. An error reply means the
/// client refused or failed to show the form: unavailable (so the next answerer asks), with a
/// short reason; the whole error goes to the log.
fn elicit_result(response: Result<ClientResult, ServiceError>) -> Result<ElicitResult, AskError> {
    let unreadable =
        || AskError::Unavailable("the MCP client sent an unreadable reply to its form".to_owned());
    match response {
        Ok(ClientResult::ElicitResult(result)) => Ok(result),
        Ok(ClientResult::CustomResult(value)) => {
            serde_json::from_value(value.0).map_err(|_| unreadable())
        }
        Ok(_) => Err(unreadable()),
        Err(ServiceError::McpError(error)) => {
            tracing::warn!(code = error.code.0, message = %error.message, data = ?error.data,
                "the MCP client did not show the elicitation form");
            let mut reason: String = error.message.chars().take(REASON_CHARS).collect();
            if reason.len() < error.message.len() {
                reason.push('…');
            }
            Err(AskError::Unavailable(format!(
                "the MCP client could not show the form ({reason})"
            )))
        }
        Err(error) => Err(AskError::Failed(format!(
            "the MCP client's elicitation failed ({error})"
        ))),
    }
}

impl UserInteraction for ElicitAnswerer {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.elicit(request, cancel))
    }

    fn is_available(&self) -> bool {
        self.capable && !self.peer.is_transport_closed()
    }

    /// The host's own form: a page or inbox that lost the race says "answered in your MCP
    /// client's own form", not "elsewhere".
    fn name(&self) -> Option<&str> {
        Some(FORM_NAME)
    }
}

/// How the other answerers name this one ("answered in …").
pub const FORM_NAME: &str = "your MCP client's own form";
