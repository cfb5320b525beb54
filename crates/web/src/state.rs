//! The state every route and every `ask` share, and the answerer behaviour on top of it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide, Settled,
    UserInteraction,
};

use crate::config::WebConfig;
use crate::pending::Pending;
use crate::secret::Secret;
use ask_user_serve::HostPolicy;

/// How the web answerer names itself in a race ([`UserInteraction::name`]): other answerers
/// that lost say "answered in the web page".
pub(crate) const WEB_NAME: &str = "the web page";

/// The heart of the web answerer without a socket: the pending questions, the secret, the
/// host rules and the count of open pages. [`crate::router`] serves it; it implements
/// [`UserInteraction`] itself, so tests can drive the page in-process with `oneshot` while an
/// `ask` is waiting. Cheap to clone (an `Arc`).
#[derive(Debug, Clone)]
pub struct WebState {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    pending: Pending,
    secret: Secret,
    hosts: HostPolicy,
    pages: AtomicUsize,
    shutdown: CancellationToken,
    timeout: Option<std::time::Duration>,
}

impl WebState {
    /// State for a server reachable at `bound` (the address actually bound, with its real
    /// port; the `Host` check uses it) with a fresh random secret.
    ///
    /// Fails only when the operating system's random number generator does.
    pub fn new(config: &WebConfig, bound: SocketAddr) -> std::io::Result<Self> {
        let mut names = config.allowed_hosts.clone();
        names.extend(config.public_host.iter().cloned());
        Ok(Self {
            inner: Arc::new(Shared {
                pending: Pending::new(),
                secret: Secret::generate()?,
                hosts: HostPolicy::new(bound).named(&names),
                pages: AtomicUsize::new(0),
                shutdown: CancellationToken::new(),
                timeout: config.timeout,
            }),
        })
    }

    /// The path of the page, `/<secret>/`; the capability URL is the origin plus this.
    pub fn base_path(&self) -> String {
        format!("/{}/", self.inner.secret.as_str())
    }

    /// How many batches (tool calls) are waiting for an answer.
    pub fn pending(&self) -> usize {
        self.inner.pending.len()
    }

    /// How many pages are connected to the live event stream right now.
    pub fn open_pages(&self) -> usize {
        self.inner.pages.load(Ordering::Relaxed)
    }

    /// Stops serving: event streams end (after sending what is queued), waiting asks fail,
    /// new asks are unavailable.
    pub fn shut_down(&self) {
        self.inner.shutdown.cancel();
    }

    pub(crate) fn pending_batches(&self) -> &Pending {
        &self.inner.pending
    }

    pub(crate) fn secret(&self) -> &Secret {
        &self.inner.secret
    }

    pub(crate) fn hosts(&self) -> &HostPolicy {
        &self.inner.hosts
    }

    pub(crate) fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// Counts a connected page until the returned guard is dropped.
    pub(crate) fn page_opened(&self) -> PageCount {
        self.inner.pages.fetch_add(1, Ordering::Relaxed);
        PageCount {
            state: self.clone(),
        }
    }

    async fn ask_page(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> Result<Answers, AskError> {
        let shutdown = &self.inner.shutdown;
        if shutdown.is_cancelled() {
            return Err(AskError::Unavailable(
                "the web page server has stopped".to_owned(),
            ));
        }
        let decide = decide.named(WEB_NAME);
        let (id, decided) = self
            .inner
            .pending
            .open(request, decide.clone(), self.inner.timeout);
        let withdraw = Withdraw { state: self, id };
        tracing::info!(batch = id, "question waiting on the web page");
        // Whether the caller still waits (docs/contract.md §8): the page shows a notice
        // while it does not; the question stays answerable either way.
        let mut caller = decide.caller_waiting();
        caller.mark_unchanged();
        let pending = &self.inner.pending;
        pending.set_caller_waiting(id, *caller.borrow());
        tokio::pin!(decided);
        let result = loop {
            break tokio::select! {
                decided = &mut decided => match (decided, decide.settled()) {
                    (Ok(()), Some(Settled::Answered { answers, .. })) => Ok(answers),
                    (Ok(()), Some(Settled::Dismissed { .. })) => Err(AskError::Dismissed),
                    _ => Err(AskError::Failed(
                        "the web answerer stopped before the user answered".to_owned(),
                    )),
                },
                Ok(()) = caller.changed() => {
                    pending.set_caller_waiting(id, *caller.borrow_and_update());
                    continue;
                }
                () = cancel.cancelled() => Err(AskError::Cancelled),
                () = shutdown.cancelled() => Err(AskError::Failed(
                    "the web page server stopped before the user answered".to_owned(),
                )),
            };
        };
        drop(withdraw);
        result
    }
}

/// Takes a batch off the pages when its ask ends or is dropped without a human decision.
struct Withdraw<'a> {
    state: &'a WebState,
    id: u64,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.state.inner.pending.withdraw(self.id);
    }
}

/// A connected page, counted while it lives.
#[derive(Debug)]
pub(crate) struct PageCount {
    state: WebState,
}

impl Drop for PageCount {
    fn drop(&mut self) {
        self.state.inner.pages.fetch_sub(1, Ordering::Relaxed);
    }
}

impl UserInteraction for WebState {
    /// Puts the batch on every open page (and on pages opened later). Each submission is
    /// offered to the race `decide`; the page is told "ok" only when the race accepted it, and
    /// otherwise why not (answered elsewhere, timed out, invalid: the batch stays open). When
    /// `cancel` fires, the batch is withdrawn live from every page, with the reason the race
    /// gives, and the result is [`AskError::Cancelled`].
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.ask_page(request, cancel, decide))
    }

    fn name(&self) -> Option<&str> {
        Some(WEB_NAME)
    }

    /// True while the server runs: the human can open the URL at any time, so an answerer
    /// with no page open yet still counts (see [`WebState::open_pages`] for a stricter test).
    fn is_available(&self) -> bool {
        !self.inner.shutdown.is_cancelled()
    }
}
