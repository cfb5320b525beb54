//! # ask-user-core
//!
//! The `ask_user_question` tool without any user interface: what an LLM agent calls when it
//! needs its human — a confirmation, a choice, a missing fact — before it goes on.
//!
//! The parts, in the order a call flows through them:
//!
//! - [`definition`]: the constant model-facing definition and its exports per provider;
//! - [`decode()`]: lenient decoding of what models really send, and validation
//!   ([`Violation`]s collected into [`InvalidArguments`], accepted variants reported as
//!   [`Leniency`]s) into an [`AskUserQuestionRequest`];
//! - [`UserInteraction`]: the seam any answerer plugs into (terminal, web page, MCP
//!   elicitation, scripted data), and [`FirstAnswer`] to race several;
//! - [`decision`]: one race per ask where answers are offered and the first outcome wins, so
//!   an answerer says "sent" only for the answer that counts ([`Decide`], [`Decision`]);
//! - [`normalise`]: the answer checked against the request and brought into canonical shape;
//! - [`Outcome`]: exactly what the model reads — [`render`]ed compact JSON or one `Error: …`
//!   line — with an [`OutcomeCode`] beside it;
//! - [`AskUserQuestionTool`]: all of the above for one call, with the caller guard, the
//!   turn's cancellation and an opt-in time budget.
//!
//! ## Example: a harness wires its own answerer
//!
//! ```
//! use std::sync::Arc;
//! use ask_user_core::*;
//! use tokio_util::sync::CancellationToken;
//!
//! /// Answers every question with its recommended option (a stand-in for a real UI).
//! struct Recommended;
//!
//! impl UserInteraction for Recommended {
//!     // It acknowledges nothing, so it ignores the race and the tool offers its answer.
//!     fn ask_decided<'a>(&'a self, request: &'a AskUserQuestionRequest,
//!         _cancel: CancellationToken, _decide: Decide)
//!         -> BoxFuture<'a, Result<Answers, AskError>> {
//!         Box::pin(async move {
//!             let answers = request.questions().iter()
//!                 .filter_map(|q| Some(AnswerItem::selected(&q.id, [q.options[q.recommended()?].label.clone()])))
//!                 .collect();
//!             Ok(Answers { answers })
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let tool = AskUserQuestionTool::new(Arc::new(Recommended));
//! let outcome = tool.call(
//!     r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]}]}"#,
//!     ExecutionContext::default(),
//! ).await;
//! assert_eq!(outcome.text(), r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#);
//! assert_eq!(outcome.code(), None);
//! # });
//! ```
#![deny(missing_docs)]

mod answer;
pub mod decision;
mod decode;
pub mod definition;
mod execute;
mod fan_out;
mod interaction;
mod machine;
mod outcome;
mod render;
mod request;
mod secret;
pub mod text;
pub mod time;
mod validate;

pub use answer::{AnswerItem, Answers, InvalidAnswer, normalise};
pub use decision::{
    Decide, Decision, GivenBefore, Offer, RecordError, RecordOutcome, RemoteOutcome, Settled,
};
pub use decode::{Arguments, Decoded, decode};
pub use execute::{AskUserQuestionTool, Caller, ExecutionContext};
pub use fan_out::FirstAnswer;
pub use interaction::{AskError, BoxFuture, OneStep, UserInteraction};
pub use machine::host_name;
pub use outcome::{
    ABORTED_TEXT, DELEGATED_CALLER_TEXT, DISMISSED_TEXT, NO_PROVIDER_TEXT, Outcome, OutcomeCode,
    format_duration,
};
pub use render::render;
pub use request::{AskUserQuestionRequest, Question, QuestionOption, RECOMMENDED_SUFFIX};
pub use secret::Secret;
pub use validate::{InvalidArguments, Leniency, Limits, Violation};

/// Re-exported so answerers and hosts use the same token type as the seam.
pub use tokio_util::sync::CancellationToken;
