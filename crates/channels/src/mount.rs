//! What a hub runs for its configured channels (docs/contract.md §10): the dispatcher, the
//! Telegram poller, and the answer endpoints to serve beside the hub's own routes.

use std::sync::Arc;

use ask_user_store::{AskId, Store};
use axum::Router;

use crate::Channel;
use crate::config::ChannelsConfig;
use crate::dispatch::{Dispatcher, delays_for};
use crate::email::Email;
use crate::ntfy::Ntfy;
use crate::router::{AnswerState, answer_router};
use crate::slack::{Slack, interactivity_router};
use crate::telegram::{PollLease, Telegram};
use crate::token::Tokens;

/// How long a replica holds the Telegram poll lease: three 30 s long polls.
const TELEGRAM_POLL_LEASE: std::time::Duration = std::time::Duration::from_secs(90);

/// The background tasks [`start_until`] runs (the dispatcher, the Telegram poller).
#[derive(Debug, Default)]
pub struct Running {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Waits until every task has stopped (after the `stop` given to [`start_until`] fired).
    pub async fn join(self) {
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// A channel refused its settings when it was built (a bad mail address, unusable TLS
/// settings, an ntfy server that is not HTTP(S)…). The text never carries a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MountError(pub String);

/// Starts every channel of `config` for a hub serving `store` at `public_url` (the URL the
/// human's phone reaches; answer links hang below it, each ask's page is
/// `{public_url}/#ask-{id}`), on the current tokio runtime:
///
/// - a [`Dispatcher`] with the escalation ladder of `config` (sends each open ask to each
///   channel once, updates every message when its ask closes);
/// - the Telegram long-poll loop, when Telegram is configured;
///
/// and returns the routes to serve at `public_url`: the ntfy and email answer endpoints
/// ([`answer_router`]) and, with Slack, its interactivity endpoint
/// (`POST /channels/slack/interactivity`, signature checked). With no channel configured it
/// starts nothing and returns an empty router. The tasks run until the runtime shuts down.
///
/// # Errors
/// [`MountError`] when a channel refuses its settings; nothing is started then.
pub fn start(
    config: &ChannelsConfig,
    store: Store,
    public_url: &str,
) -> Result<Router, MountError> {
    let (routes, _running) = start_until(config, store, public_url, &std::future::pending)?;
    Ok(routes)
}

/// Like [`start`], but the tasks stop when the future `stop` makes resolves (a hub's shutdown
/// signal; the task in the middle of a send is dropped there, as if the process were killed,
/// which the store's leases make safe) and [`Running::join`] waits for them.
///
/// # Errors
/// [`MountError`] when a channel refuses its settings; nothing is started then.
pub fn start_until<F, S>(
    config: &ChannelsConfig,
    store: Store,
    public_url: &str,
    stop: &S,
) -> Result<(Router, Running), MountError>
where
    S: Fn() -> F,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let mut running = Running::default();
    let err = |e: &dyn std::fmt::Display| MountError(e.to_string());
    let tokens = Tokens::new(store);
    let mut channels: Vec<Arc<dyn Channel>> = Vec::new();
    let mut telegram = None;
    let mut slack = None;
    if let Some(c) = &config.ntfy {
        channels.push(Arc::new(Ntfy::new(c.clone()).map_err(|e| err(&e))?));
    }
    if let Some(c) = &config.telegram {
        let t = Arc::new(Telegram::new(c.clone()));
        telegram = Some(t.clone());
        channels.push(t);
    }
    if let Some(c) = &config.slack {
        let s = Arc::new(Slack::new(c.clone()).map_err(|e| err(&e))?);
        slack = Some(s.clone());
        channels.push(s);
    }
    if let Some(c) = &config.email {
        channels.push(Arc::new(Email::new(c.clone()).map_err(|e| err(&e))?));
    }
    let mut routes = Router::new();
    if channels.is_empty() {
        return Ok((routes, running));
    }
    let public = public_url.trim_end_matches('/').to_owned();
    let delays = delays_for(&config.escalate, &channels);
    let page_base = public.clone();
    let dispatcher = Dispatcher::new(
        tokens.clone(),
        channels,
        &public,
        Arc::new(move |id: AskId| format!("{page_base}/#ask-{id}")),
    )
    .with_delays(delays);
    let stopped = stop();
    running.tasks.push(tokio::spawn(async move {
        tokio::select! {
            ran = dispatcher.run() => if let Err(e) = ran {
                tracing::error!(error = %e, "channels: the dispatcher stopped: no more notifications");
            },
            () = stopped => {}
        }
    }));
    if let Some(t) = telegram {
        // One replica polls at a time (the Bot API allows one `getUpdates` consumer); the
        // lease is three long-poll timeouts, so a stopped replica is replaced within it.
        let lease = PollLease::new(TELEGRAM_POLL_LEASE);
        let stopped = stop();
        let polling = t.poll_leased(tokens.clone(), lease);
        running.tasks.push(tokio::spawn(async move {
            tokio::select! {
                () = polling => {}
                () = stopped => {}
            }
        }));
    }
    let answers = AnswerState { tokens };
    routes = routes.merge(answer_router(answers.clone()));
    if let Some(s) = slack {
        routes = routes.merge(interactivity_router(answers, s));
    }
    Ok((routes, running))
}
