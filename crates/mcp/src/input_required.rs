//! Asking through an input-required result (protocol 2026-07-28, SEP-2322 multi round-trip
//! requests): the server may not send `elicitation/create` itself, so `tools/call` answers
//! with the form inside `inputRequests`; the client shows it, then calls again with the same
//! arguments plus `inputResponses` and the echoed `requestState`.
//!
//! Stateless: nothing is held between the rounds. The retry's arguments are decoded again
//! (the same validated request, so the same form), and `requestState` only counts refused
//! submissions (it is untrusted; a value that does not parse counts as round 1).

use std::collections::BTreeMap;

use ask_user_core::{AskUserQuestionRequest, Limits, Outcome, decode};
use ask_user_elicit::{MAX_ROUNDS, Reply, did_not_fit, form, not_accepted, read_reply_value};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, InputRequest, InputRequiredResult,
};
use serde_json::Value;

use crate::tool::call_result;

/// The key of our one input request in `inputRequests` / `inputResponses`.
pub const INPUT_KEY: &str = "ask_user_question";

/// What a round did, for the host's journal and attention command.
#[derive(Debug)]
pub(crate) enum Round {
    /// The question went out for the first time.
    Opened(AskUserQuestionRequest),
    /// A refused submission: the form went out again.
    AskedAgain,
    /// The call ended (the request is `None` when the arguments were refused).
    Ended(Option<AskUserQuestionRequest>, Outcome),
}

/// One round of a `tools/call` from a 2026-07-28 client that can elicit.
pub(crate) fn step(
    request: &CallToolRequestParams,
    arguments: Value,
    limits: &Limits,
) -> (CallToolResponse, Round) {
    let decoded = match decode(arguments, limits) {
        Ok(decoded) => decoded.request,
        Err(invalid) => {
            let outcome = Outcome::InvalidArguments(invalid);
            return (call_result(&outcome).into(), Round::Ended(None, outcome));
        }
    };
    let round: u32 = request
        .request_state
        .as_deref()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let response = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(INPUT_KEY));
    let Some(response) = response else {
        return (ask(&decoded, None, 1), Round::Opened(decoded));
    };
    let reference = form(&decoded, None);
    let outcome = match read_reply_value(&decoded, &reference, response) {
        Reply::Answered(answers) => Outcome::Answered(answers),
        Reply::Dismissed => Outcome::Dismissed,
        Reply::Refused(error) if round < MAX_ROUNDS => {
            tracing::info!(%error, "elicitation content refused; asking again");
            let notice = not_accepted(&error);
            return (ask(&decoded, Some(&notice), round + 1), Round::AskedAgain);
        }
        Reply::Refused(error) => Outcome::Failed(did_not_fit(&error)),
        _ => Outcome::Failed("the MCP client's reply could not be read".to_owned()),
    };
    (
        call_result(&outcome).into(),
        Round::Ended(Some(decoded), outcome),
    )
}

fn ask(
    request: &ask_user_core::AskUserQuestionRequest,
    notice: Option<&str>,
    round: u32,
) -> CallToolResponse {
    let form = form(request, notice);
    let mut requests = BTreeMap::new();
    requests.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form.params())),
    );
    InputRequiredResult::new(Some(requests), Some(round.to_string())).into()
}
