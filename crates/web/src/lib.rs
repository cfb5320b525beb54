//! # ask-user-web
//!
//! The web answerer for ask-user: pending questions on a local page, answered from a desktop
//! browser or a phone (docs/contract.md §6 Web).
//!
//! - [`WebAnswerer::start`] binds [`WebConfig::addr`] (loopback by default) and serves the page;
//!   it implements [`ask_user_core::UserInteraction`], so it plugs into
//!   [`ask_user_core::AskUserQuestionTool`] or races other answerers in
//!   [`ask_user_core::FirstAnswer`]. [`WebAnswerer::bind`] binds without a runtime and serves
//!   from the first ask; [`WebAnswerer::shut_down`] stops gracefully, after the open pages got
//!   their last events.
//! - [`WebAnswerer::url`] is the capability URL holding a 128-bit random secret;
//!   [`WebAnswerer::qr_code`] draws it for a terminal so a phone can scan it.
//! - [`router`] builds the HTTP application from a [`WebState`], so tests drive it in-process.
//!
//! The page is one HTML file, one script and one style sheet, embedded in the binary: no CDN,
//! no build step, no framework. It follows the pending questions live over server-sent events
//! (the event format is documented in the `view` module source). Model text reaches the page
//! only as JSON and is inserted with `textContent`, never as HTML.
//!
//! Access: requests must carry the secret as the first path segment (compared in constant
//! time), a `Host` naming this server (defeats DNS rebinding), and, when they change state, an
//! `Origin` equal to the page's own; bodies are limited to [`BODY_LIMIT`] bytes; every
//! response carries a strict [`CONTENT_SECURITY_POLICY`], `nosniff` and `no-referrer`.
//!
//! Availability: a connection must send a complete request head within
//! [`WebConfig::header_read_timeout`] (also the keep-alive idle limit); at most
//! [`WebConfig::max_connections`] are open, and a new one at the cap closes the oldest
//! connection that is not serving a request (a live event stream always is), so silent or
//! half-sent connections cannot lock the human out; [`raise_open_files_limit`] lifts the
//! soft open-files limit when the server binds.
//!
//! ## Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use ask_user_core::{AskUserQuestionTool, ExecutionContext};
//! use ask_user_web::{WebAnswerer, WebConfig};
//!
//! # async fn run() -> std::io::Result<()> {
//! let web = WebAnswerer::start(WebConfig::default()).await?;
//! eprintln!("Answer at {}\n{}", web.url(), web.qr_code());
//! let tool = AskUserQuestionTool::new(Arc::new(web));
//! let outcome = tool
//!     .call(r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#,
//!           ExecutionContext::default())
//!     .await;
//! println!("{}", outcome.text());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod access;
mod answerer;
pub mod cards;
mod config;
mod pending;
mod refusal;
mod routes;
mod secret;
mod state;
mod view;

pub use answerer::WebAnswerer;
pub use ask_user_serve::CONTENT_SECURITY_POLICY;
pub use ask_user_serve::raise_open_files_limit;
pub use config::WebConfig;
pub use refusal::BODY_LIMIT;
pub use routes::router;
pub use state::WebState;
