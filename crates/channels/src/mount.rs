//! What a hub runs for its configured channels (docs/contract.md §10): the dispatcher, the
//! Telegram poller, and the answer endpoints to serve beside the hub's own routes.

use std::sync::Arc;

use ask_user_store::{AskId, Store};
use axum::Router;

use crate::config::ChannelsConfig;
use crate::dispatch::{Dispatcher, delays_for};
use crate::registry::Mounting;
use crate::router::{AnswerState, answer_router};
use crate::token::Tokens;

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
    let mut mounting = Mounting::new(Tokens::new(store));
    config.mount_all(&mut mounting)?;
    let Mounting {
        tokens,
        channels,
        routes: extra,
        tasks,
    } = mounting;
    if channels.is_empty() {
        return Ok((Router::new(), running));
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
    for task in tasks {
        let stopped = stop();
        running.tasks.push(tokio::spawn(async move {
            tokio::select! {
                () = task => {}
                () = stopped => {}
            }
        }));
    }
    let routes = answer_router(AnswerState { tokens }).merge(extra);
    Ok((routes, running))
}
