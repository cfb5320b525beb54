//! The ask-user hub's wire protocol (docs/contract.md §9 "Agents"), declared once for the
//! server (`ask-user-hub`) and its answerer (`ask-user-hub-client`).
//!
//! # Overview
//!
//! | Request | Body | Answer |
//! |---|---|---|
//! | `POST /v1/asks` | [`PostAsk`] | 200 [`AskView`]; 4xx/5xx [`ErrorBody`] |
//! | `GET /v1/asks/{id}?wait=SECONDS` | — | 200 [`AskView`] |
//! | `POST /v1/asks/{id}/delivered` | [`Delivered`] (optional) | 204 |
//! | `DELETE /v1/asks/{id}` | — | 200 [`AskView`] |
//!
//! An ask's state is an [`AskState`], never a free string: a client matches every state the
//! hub can send, and a state it does not know (a newer hub) reads as [`AskState::Unknown`]
//! rather than failing the whole answer.
//!
//! ```
//! use ask_user_hub_wire::{AskState, AskView};
//!
//! let view: AskView = serde_json::from_str(r#"{"id":7,"state":"timed_out","attached":false}"#)?;
//! assert_eq!(view.state, AskState::TimedOut);
//! assert!(!view.state.is_open());
//! assert_eq!(serde_json::to_string(&AskState::Revoked)?, r#""revoked""#);
//! # Ok::<(), serde_json::Error>(())
//! ```
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

/// Where an ask is in its life (docs/contract.md §8 "States"), as the hub sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AskState {
    /// Waiting for the human (attached or detached: see [`AskView::attached`]).
    Open,
    /// The human answered: [`AskView::answers`] holds the answers.
    Answered,
    /// The human dismissed the whole batch.
    Dismissed,
    /// The agent's own time budget ran out.
    TimedOut,
    /// The agent withdrew it, or its grace ran out while detached.
    Withdrawn,
    /// The agent's token was revoked while the ask was open: nothing answered it into that
    /// agent (the page says so; the agent itself is refused with 401).
    Revoked,
    /// A state this build does not know (sent by a newer hub): treated as closed.
    #[serde(other)]
    Unknown,
}

impl AskState {
    /// The state's wire name (`open`, `answered`, `dismissed`, `timed_out`, `withdrawn`,
    /// `revoked`; `unknown` for [`AskState::Unknown`]).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            AskState::Open => "open",
            AskState::Answered => "answered",
            AskState::Dismissed => "dismissed",
            AskState::TimedOut => "timed_out",
            AskState::Withdrawn => "withdrawn",
            AskState::Revoked => "revoked",
            AskState::Unknown => "unknown",
        }
    }

    /// The state named `name` ([`AskState::Unknown`] for any other text).
    #[must_use]
    pub fn from_name(name: &str) -> AskState {
        match name {
            "open" => AskState::Open,
            "answered" => AskState::Answered,
            "dismissed" => AskState::Dismissed,
            "timed_out" => AskState::TimedOut,
            "withdrawn" => AskState::Withdrawn,
            "revoked" => AskState::Revoked,
            _ => AskState::Unknown,
        }
    }

    /// Whether the ask still waits for the human.
    #[must_use]
    pub fn is_open(self) -> bool {
        self == AskState::Open
    }
}

impl std::fmt::Display for AskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who answered or dismissed an ask, when the human did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Responder {
    /// The answerer (`terminal`, `web`, `inbox`, `hub`, …).
    pub answerer: String,
    /// The channel, when the answer came through one (`slack`, `telegram`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The human, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// What an agent (and the page) sees of one ask:
/// `{"id","state","attached","answers"?,"by"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskView {
    /// The hub's id of the ask.
    pub id: i64,
    /// Where it is.
    pub state: AskState,
    /// Whether an agent waits for it (false: detached, kept for the agent's retry).
    pub attached: bool,
    /// The answers (`{"answers":[…]}`, the core's output shape), when answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<serde_json::Value>,
    /// Who answered or dismissed, when the human did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Responder>,
}

/// Who asks, as shown to the human beside the agent's name (each field at most 200
/// characters on the hub; blank ones are dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallerContext {
    /// The project or working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The machine's host name ([`host_name`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The session title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// `POST /v1/asks`: `{"arguments","context"?,"key"?,"deadline"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostAsk {
    /// The model's tool-call arguments (the canonical request, or anything the lenient
    /// decoder accepts).
    pub arguments: serde_json::Value,
    /// Who asks.
    #[serde(default)]
    pub context: CallerContext,
    /// The call key (docs/contract.md §8): the same key and request re-attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// When the agent's own time budget runs out (Unix milliseconds), for the page's
    /// countdown; the agent, not the hub, enforces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<i64>,
}

/// `POST /v1/asks/{id}/delivered`: the outcome the agent printed, as its [`AskView`] gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivered {
    /// The state delivered.
    pub state: AskState,
    /// The answers delivered, for an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<serde_json::Value>,
}

/// Every refusal's body: `{"error": TEXT}` (a text written for the agent's developer or its
/// model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong and what to do.
    pub error: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_state_round_trips_by_its_wire_name() {
        for state in [
            AskState::Open,
            AskState::Answered,
            AskState::Dismissed,
            AskState::TimedOut,
            AskState::Withdrawn,
            AskState::Revoked,
        ] {
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(json, format!("\"{}\"", state.as_str()));
            assert_eq!(serde_json::from_str::<AskState>(&json).unwrap(), state);
            assert_eq!(AskState::from_name(state.as_str()), state);
        }
    }

    #[test]
    fn a_state_from_a_newer_hub_is_unknown_not_an_error() {
        let view: AskView =
            serde_json::from_str(r#"{"id":1,"state":"archived","attached":true}"#).unwrap();
        assert_eq!(view.state, AskState::Unknown);
        assert!(!view.state.is_open());
    }

    #[test]
    fn views_and_posts_keep_their_wire_shape() {
        let view = AskView {
            id: 3,
            state: AskState::Answered,
            attached: true,
            answers: Some(serde_json::json!({"answers":[{"id":"go","selected":["Yes"]}]})),
            by: Some(Responder {
                answerer: "hub".to_owned(),
                channel: None,
                user: None,
            }),
        };
        assert_eq!(
            serde_json::to_string(&view).unwrap(),
            r#"{"id":3,"state":"answered","attached":true,"answers":{"answers":[{"id":"go","selected":["Yes"]}]},"by":{"answerer":"hub"}}"#
        );
        let post: PostAsk = serde_json::from_str(r#"{"arguments":{"questions":[]}}"#).unwrap();
        assert_eq!(post.context, CallerContext::default());
        assert_eq!((post.key, post.deadline), (None, None));
        let post = PostAsk {
            arguments: serde_json::json!({}),
            context: CallerContext {
                host: Some("box".to_owned()),
                ..CallerContext::default()
            },
            key: Some("k".to_owned()),
            deadline: Some(5),
        };
        assert_eq!(
            serde_json::to_string(&post).unwrap(),
            r#"{"arguments":{},"context":{"host":"box"},"key":"k","deadline":5}"#
        );
    }
}
