//! # ask-user-host
//!
//! What the ask-user hosts (the `ask-user` CLI, the MCP server, the agent-host hook) share
//! around the core, without any user interface:
//!
//! - [`HostCall`]: the one call assembly every host uses — notification, journal, store,
//!   timeout — and its delivery in one fixed order (recorded, written, upstream told, marked
//!   delivered), so no host can get the order wrong. It is the only way to run a call with
//!   these parts: the pieces it assembles (the store link's answerer wrapper, recorder and
//!   delivery mark, the journal's call) are private to this crate.
//! - [`Journal`]: the audit journal (`--journal FILE`). A call given to [`HostCall`] with a
//!   journal writes one JSON line when the model asks and one when the outcome is known,
//!   flushed to the file before the outcome is returned, so before the model reads it. [`read`]
//!   brings the lines back as [`Entry`]s.
//! - [`Notify`]: the attention command (`--notify CMD`), a [`UserInteraction`] decorator that
//!   runs `sh -c CMD` with the request as JSON on stdin when a question opens, and never waits
//!   for it.
//! - [`HostArgs`]: the `--timeout DURATION`, `--journal FILE` and `--notify CMD` flags (clap
//!   definitions with the `clap` feature; the library itself needs no clap),
//!   so both hosts spell, check ([`parse_timeout`]) and document them the same.
//!
//! ## Example: a host with a journal and a notification
//!
//! ```
//! use std::sync::Arc;
//! use ask_user_core::ExecutionContext;
//! use ask_user_host::{HostCall, Journal, read};
//! # use ask_user_core::*;
//! # struct Yes;
//! # impl UserInteraction for Yes {
//! #     fn ask_decided<'a>(&'a self, r: &'a AskUserQuestionRequest, _: CancellationToken, _: Decide)
//! #         -> BoxFuture<'a, Result<Answers, AskError>> {
//! #         Box::pin(async move { Ok(Answers { answers: vec![AnswerItem::selected(&r.questions()[0].id, ["Yes"])] }) })
//! #     }
//! # }
//! # let answerer: Arc<dyn UserInteraction> = Arc::new(Yes);
//! # let dir = std::env::temp_dir().join(format!("ask-user-host-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("journal.jsonl");
//! let journal = Journal::open(&path)?; // a startup error when the file cannot be written
//! let call = HostCall::builder(answerer)
//!     .journal(Some(Arc::new(journal)))
//!     .notify(Some("true".to_owned())) // e.g. `notify-send "Agent asks" "$ASK_USER_QUESTION"`
//!     .build();
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let asked = call
//!     .call(r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#,
//!           ExecutionContext::default())
//!     .await;
//! let mut stdout = |outcome: &Outcome| {
//!     println!("{}", outcome.text());
//!     true // written
//! };
//! let (outcome, written) = asked.deliver(&mut stdout).await;
//! assert!(written);
//! assert_eq!(outcome.text(), r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#);
//! # });
//! let entries = read(&path)?;
//! assert_eq!(entries.len(), 2); // the ask, then its outcome
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod args;
mod call;
pub mod durable;
mod journal;
mod notify;

pub use args::{HostArgs, ZERO_TIMEOUT, decode_logged, parse_timeout};
pub use call::{Acknowledge, AroundRecord, Asked, Delivery, HostCall, HostCallBuilder, StoredAsk};
pub use journal::{
    ANSWERED, Entry, Journal, JournalError, MAX_OPEN_PER_REQUEST, NOT_RECORDED_TEXT, ask_line,
    outcome_line, read, store_call_id,
};
pub use notify::{MAX_RUNNING, Notify, notify};

#[doc(no_inline)]
pub use ask_user_core::UserInteraction;
