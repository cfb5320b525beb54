//! Asking through an input-required result (protocol 2026-07-28, SEP-2322 multi round-trip
//! requests): the server may not send `elicitation/create` itself, so `tools/call` answers
//! with the form inside `inputRequests`; the client shows it, then calls again with the same
//! arguments plus `inputResponses` and the echoed `requestState`.
//!
//! Stateless: nothing is held between the rounds. The retry's arguments are decoded again
//! (the same validated request, so the same form), and `requestState` only counts refused
//! submissions, says whether a blank submission was already asked again, and when the form
//! went out (`"2@1764600000000"`, `"2b@…"`: Unix milliseconds). It is untrusted: a value that
//! does not parse counts as round 1, nothing asked again, sent long ago; a forged time can
//! only move the question to the fallback answerers.
//! A response that is not an elicitation result (the client could not show the form), and a
//! decline or cancel sooner than the reaction floor after the form went out (a headless
//! client refusing unseen, [`ask_user_elicit::HUMAN_REACTION`]), hand the question to the
//! fallback answerers within that call.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ask_user_core::{AskUserQuestionRequest, Limits, Outcome, decode};
use ask_user_elicit::{
    FormStyle, MAX_ROUNDS, NOTHING_CHOSEN, REFUSED_UNSEEN, Reply, did_not_fit, form, not_accepted,
    read_reply_value, refused_unseen,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitResult, InputRequest,
    InputRequiredResult,
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
    /// A refused or blank submission: the form went out again.
    AskedAgain,
    /// The client answered the form with something that is not an elicitation result (it
    /// could not show it), or refused it faster than a person can: the host asks its fallback
    /// answerers instead.
    FormFailed,
    /// The call ended (the request is `None` when the arguments were refused).
    Ended(Option<AskUserQuestionRequest>, Outcome),
}

/// One round of a `tools/call` from a 2026-07-28 client that can elicit; a decline or cancel
/// sooner than `floor` after the form went out is the client's own refusal
/// ([`Round::FormFailed`]).
pub(crate) fn step(
    request: &CallToolRequestParams,
    arguments: Value,
    limits: &Limits,
    floor: Duration,
) -> (CallToolResponse, Round) {
    let decoded = match decode(arguments, limits) {
        Ok(decoded) => decoded.request,
        Err(invalid) => {
            let outcome = Outcome::InvalidArguments(invalid);
            return (call_result(&outcome).into(), Round::Ended(None, outcome));
        }
    };
    let state = request.request_state.as_deref().unwrap_or_default();
    let (state, sent_ms) = match state.split_once('@') {
        Some((state, sent)) => (state, sent.parse::<u64>().ok()),
        None => (state, None),
    };
    let (round, blank_once) = match state.strip_suffix('b') {
        Some(round) => (round, true),
        None => (state, false),
    };
    let round: u32 = round.parse().unwrap_or(0);
    let response = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(INPUT_KEY));
    let Some(response) = response else {
        return (ask(&decoded, None, 1, false), Round::Opened(decoded));
    };
    if serde_json::from_value::<ElicitResult>(response.clone()).is_err() {
        tracing::warn!(%response, "the MCP client did not show the elicitation form");
        return (call_result(&Outcome::NoProvider).into(), Round::FormFailed);
    }
    let reference = form(&decoded, None, FormStyle::Titled);
    let elapsed = sent_ms.map_or(Duration::MAX, |sent| {
        Duration::from_millis(now_ms().saturating_sub(sent))
    });
    let outcome = match read_reply_value(&decoded, &reference, response) {
        Reply::Answered(answers) => Outcome::Answered(answers),
        Reply::Dismissed if refused_unseen(elapsed, floor) => {
            tracing::info!(
                elapsed_ms = elapsed.as_millis(),
                "{REFUSED_UNSEEN}; asking the next answerer"
            );
            return (call_result(&Outcome::NoProvider).into(), Round::FormFailed);
        }
        Reply::Dismissed => Outcome::Dismissed,
        Reply::Blank(answers) if blank_once => Outcome::Answered(answers),
        Reply::Blank(_) => {
            return (
                ask(&decoded, Some(NOTHING_CHOSEN), round, true),
                Round::AskedAgain,
            );
        }
        Reply::Refused(error) if round < MAX_ROUNDS => {
            tracing::info!(%error, "elicitation content refused; asking again");
            let notice = not_accepted(&error);
            return (
                ask(&decoded, Some(&notice), round + 1, blank_once),
                Round::AskedAgain,
            );
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
    blank_once: bool,
) -> CallToolResponse {
    let form = form(request, notice, FormStyle::Titled);
    let mut requests = BTreeMap::new();
    requests.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form.params())),
    );
    let blank = if blank_once { "b" } else { "" };
    let state = format!("{round}{blank}@{}", now_ms());
    InputRequiredResult::new(Some(requests), Some(state)).into()
}

/// The wall clock in Unix milliseconds (wall time, as the rounds may reach another process).
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use rmcp::model::InputResponses;
    use serde_json::json;

    use super::*;

    const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

    fn retry(response: Value, state: &str) -> (CallToolResponse, Round) {
        let mut request = CallToolRequestParams::new("ask_user_question");
        let responses: InputResponses =
            serde_json::from_value(json!({ INPUT_KEY: response })).unwrap();
        request.input_responses = Some(responses);
        request.request_state = Some(state.to_owned());
        step(
            &request,
            serde_json::from_str(ARGS).unwrap(),
            &Limits::default(),
            ask_user_elicit::HUMAN_REACTION,
        )
    }

    fn sent_ago(round: &str, ago: Duration) -> String {
        let ago = u64::try_from(ago.as_millis()).unwrap();
        format!("{round}@{}", now_ms() - ago)
    }

    #[test]
    fn a_refusal_sooner_than_a_person_can_act_hands_over_to_the_fallback() {
        for action in ["decline", "cancel"] {
            let state = sent_ago("1", Duration::from_millis(76));
            let (_, round) = retry(json!({ "action": action }), &state);
            assert!(matches!(round, Round::FormFailed), "{action}: {round:?}");
        }
    }

    #[test]
    fn a_refusal_after_a_person_could_read_the_form_dismisses() {
        for state in [sent_ago("1", Duration::from_secs(2)), "1".to_owned()] {
            let (_, round) = retry(json!({"action": "decline"}), &state);
            assert!(
                matches!(round, Round::Ended(_, Outcome::Dismissed)),
                "{state}: {round:?}"
            );
        }
    }

    #[test]
    fn a_response_that_is_not_an_elicitation_result_hands_over_to_the_fallback() {
        let (_, round) = retry(json!({"code": -32603, "message": "cannot show"}), "1");
        assert!(matches!(round, Round::FormFailed), "{round:?}");
    }

    #[test]
    fn a_blank_submission_is_asked_once_more_then_skips() {
        let blank = json!({"action": "accept", "content": {}});
        let (response, round) = retry(blank.clone(), "1");
        assert!(matches!(round, Round::AskedAgain), "{round:?}");
        let CallToolResponse::InputRequired(asked) = response else {
            panic!("{response:?}")
        };
        let asked = serde_json::to_value(&asked).unwrap();
        let state = asked["requestState"].as_str().unwrap();
        assert!(state.starts_with("1b@"), "{state}");
        let message = asked["inputRequests"][INPUT_KEY]["params"]["message"]
            .as_str()
            .unwrap();
        assert!(message.starts_with(NOTHING_CHOSEN), "{message}");
        let (_, round) = retry(blank, state);
        let Round::Ended(_, Outcome::Answered(answers)) = round else {
            panic!("{round:?}")
        };
        assert_eq!(
            ask_user_core::render(&answers),
            r#"{"answers":[{"id":"go","selected":[]}]}"#
        );
    }
}
