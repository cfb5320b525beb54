//! # ask-user-elicit
//!
//! The MCP elicitation answerer for `ask_user_question` (docs/contract.md §6): the question goes to the MCP
//! client's own form UI instead of a terminal or a page.
//!
//! - [`form()`] maps a validated [`AskUserQuestionRequest`](ask_user_core::AskUserQuestionRequest)
//!   to an elicitation form: single-select as a string with titled `oneOf`, multi-select as an
//!   array with `items.anyOf`, free text as a string, one extra optional string per choice
//!   question for the human's own answer, the recommended option as `default`, option
//!   descriptions and headers in the message;
//! - [`read_reply`] reads what the client sends back: accept with content → [`Reply::Answered`]
//!   (via [`answers_from_content`], normalised by the core), decline or cancel →
//!   [`Reply::Dismissed`], content that does not fit → [`Reply::Refused`] (ask again);
//! - [`ElicitAnswerer`] is the [`UserInteraction`](ask_user_core::UserInteraction) that pushes
//!   `elicitation/create` over an rmcp peer (protocol 2025-11-25 and earlier). For 2026-07-28,
//!   where a server may not send requests, a host returns [`form()`] inside an input-required
//!   result instead and reads the retry with [`read_reply_value`]; both send a refused form
//!   again at most [`MAX_ROUNDS`] times in all, with the same texts ([`not_accepted`],
//!   [`did_not_fit`]).
//! - A decline or cancel sooner than [`HUMAN_REACTION`] after the form went out is the
//!   client's own (a headless host), not the human's: [`refused_unseen`].
//!
//! Depends on the core and rmcp only; never on another answerer or a host.
//!
//! ```
//! use ask_user_core::{decode, Limits};
//! use ask_user_elicit::{form, read_reply, FormStyle, Reply};
//! use rmcp::model::{ElicitResult, ElicitationAction};
//!
//! let request = decode(
//!     r#"{"questions":[{"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite"]}]}"#,
//!     &Limits::default(),
//! ).unwrap().request;
//! let form = form(&request, None, FormStyle::Titled);
//! let schema = serde_json::to_string(&form.schema).unwrap();
//! assert!(schema.contains(r#""oneOf":[{"const":"PostgreSQL (Recommended)","title":"PostgreSQL (Recommended)"}"#));
//!
//! let reply = ElicitResult::new(ElicitationAction::Accept)
//!     .with_content(serde_json::json!({"db": "SQLite"}));
//! let Reply::Answered(answers) = read_reply(&request, &form, &reply) else { panic!() };
//! assert_eq!(answers.answers[0].selected, ["SQLite"]);
//! ```
#![deny(missing_docs)]

mod answerer;
mod content;
mod headless;
mod rounds;
mod schema;

pub use answerer::{ElicitAnswerer, FORM_NAME, client_can_elicit};
pub use content::{
    ContentError, NOTHING_CHOSEN, Reply, answers_from_content, read_reply, read_reply_value,
};
pub use headless::{HUMAN_REACTION, REFUSED_UNSEEN, refused_unseen};
pub use rounds::{MAX_ROUNDS, did_not_fit, not_accepted};
pub use schema::{
    Field, FieldKind, Form, FormStyle, OWN_ANSWER_BESIDE, OWN_ANSWER_CHOICE, OWN_ANSWER_INSTEAD,
    OWN_ANSWER_NEXT, OWN_ANSWER_TITLE, SEVERAL_QUESTIONS, form, own_answer_form, own_choice_label,
};
