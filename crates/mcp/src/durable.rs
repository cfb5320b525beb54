//! Durable asks in the MCP server (docs/contract.md §7, §8): a call that goes away leaves its
//! ask **detached**, not withdrawn, and a later identical call re-attaches.
//!
//! - **Scope.** MCP clients give no call key, so the scope is the caller's identity: the
//!   client's name from its handshake (`clientInfo.name`), `ASK_USER_SESSION` of the server's
//!   environment when set, and the server's working directory ([`caller_scope`]). The MCP
//!   session id is deliberately **not** part of it: a client whose own timeout fired may retry
//!   the call over a new session (or a new server process), and must find its ask again.
//! - **One question on screen.** The fallback answerers (web page, terminal) show an ask in a
//!   task of their own, [`Showing`], keyed by the store's ask id and detached from any call: the
//!   call's cancellation (`notifications/cancelled`, `DELETE`, stdio closing) ends the call
//!   and marks the ask detached in the store, while the page keeps the question answerable. An
//!   answer given there is stored (first outcome wins) and settles whichever call is attached,
//!   now or later. A re-attached call does not show the question again; it waits on the store.
//!   The shower ends when the store holds an outcome from anywhere (the inbox, the grace
//!   period's withdrawal, the call's own `--timeout`). It follows the store itself only while
//!   no call is attached: an attached call's durable link follows it and ends the call when an
//!   outcome is stored elsewhere, which detaches it (so a pending question holds one wait on
//!   the store, not two).
//! - **The human is told.** The shower counts the calls attached to it; when the last one
//!   goes away its race says the caller stopped waiting ([`Decide::set_caller_waiting`]), and
//!   the page shows "The agent stopped waiting. Your answer is kept and given to it when it
//!   asks again." on the question's card, until a retry attaches again.
//! - **Liveness.** An attached call's lease is renewed by the host's durable link
//!   (`Durable::wrap`, which every MCP call goes through) while the call waits; the shower does
//!   not renew, since it also runs for asks whose call went away (docs/contract.md §8).
//! - The client's own elicitation form belongs to its session: it is withdrawn with the call
//!   (the ask stays open in the store for the page of a retry and for `ask-user inbox`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide, GivenBefore,
    UserInteraction,
};
use ask_user_host::durable::{Durable, SESSION_ENV};
use ask_user_store::{AskId, Scope};
use tokio::sync::watch;

/// How long a shower whose ask was closed elsewhere may take to withdraw its question.
const WITHDRAW_GRACE: Duration = Duration::from_secs(2);

/// The scope of an MCP caller (see the module doc): the client's name, `ASK_USER_SESSION`
/// when set, and the working directory; never the MCP session id.
pub fn caller_scope(client_name: &str) -> Scope {
    let session = std::env::var(SESSION_ENV).unwrap_or_default();
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    Scope::Caller(format!(
        "mcp-client={client_name}\nsession={session}\ncwd={cwd}"
    ))
}

/// What a running shower ended with, once it did (`None` while it runs).
type Ended = Option<Result<Answers, AskError>>;

/// One running shower: what it ended with, its race, and how many calls wait on it.
#[derive(Debug)]
struct Running {
    ended: watch::Receiver<Ended>,
    decide: Decide,
    attached: watch::Sender<usize>,
}

/// The asks being shown by this server's fallback answerers, by store id (shared by every
/// session of the server).
#[derive(Debug, Clone, Default)]
pub(crate) struct Showing {
    running: Arc<Mutex<HashMap<AskId, Running>>>,
}

/// A call attached to a shower; dropping it detaches the call, and the last one to go tells
/// the page the caller stopped waiting.
struct Attached {
    showing: Showing,
    id: AskId,
}

impl Drop for Attached {
    fn drop(&mut self) {
        if let Some(running) = self.showing.lock().get_mut(&self.id) {
            running.attached.send_modify(|n| *n = n.saturating_sub(1));
            if *running.attached.borrow() == 0 {
                running.decide.set_caller_waiting(false);
            }
        }
    }
}

impl Showing {
    /// `inner` (the fallback answerers) behind this registry for the call linked by `durable`.
    pub(crate) fn wrap(
        &self,
        inner: Arc<dyn UserInteraction>,
        durable: Durable,
    ) -> Arc<dyn UserInteraction> {
        Arc::new(Shown {
            showing: self.clone(),
            inner,
            durable,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<AskId, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The shower of ask `id`: the running one, else a new one started for `request` (offering
    /// `given`, the answer given before to the same question, when the host found one); the
    /// call is attached to it (its caller waits) until the returned guard is dropped.
    fn follow(
        &self,
        id: AskId,
        request: &AskUserQuestionRequest,
        inner: &Arc<dyn UserInteraction>,
        durable: &Durable,
        given: Option<GivenBefore>,
    ) -> (watch::Receiver<Ended>, Attached) {
        let attached = Attached {
            showing: self.clone(),
            id,
        };
        let mut running = self.lock();
        if let Some(shower) = running.get_mut(&id) {
            shower.attached.send_modify(|n| *n += 1);
            shower.decide.set_caller_waiting(true);
            return (shower.ended.clone(), attached);
        }
        let (tx, rx) = watch::channel(None);
        // The shower's own race: an answer on the page is stored (first outcome wins)
        // before the page says "taken".
        let decide = match given {
            Some(given) => durable.decide(request).with_given_before(given),
            None => durable.decide(request),
        };
        let (attached_tx, mut calls) = watch::channel(1);
        running.insert(
            id,
            Running {
                ended: rx.clone(),
                decide: decide.clone(),
                attached: attached_tx,
            },
        );
        drop(running);
        let showing = self.clone();
        let inner = inner.clone();
        let durable = durable.clone();
        let request = request.clone();
        tokio::spawn(async move {
            let stop = CancellationToken::new();
            let shown = inner.ask_decided(&request, stop.clone(), decide);
            tokio::pin!(shown);
            let store = durable.store().clone();
            // While a call is attached, its durable link follows the store and ends the call
            // when an outcome is stored elsewhere (which detaches it here); the shower follows
            // the store itself only while no call is attached. The store's wait is boxed, so
            // a shower whose calls wait holds no wait of its own.
            let closed = async {
                loop {
                    let none = calls.wait_for(|n| *n == 0).await.is_ok();
                    if !none {
                        std::future::pending::<()>().await;
                    }
                    let mut followed = Box::pin(store.wait_outcome(id));
                    tokio::select! {
                        rec = &mut followed => match rec {
                            Ok(rec) if rec.closed.is_some() => return,
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!("cannot follow ask {id} in the store: {e}");
                                std::future::pending::<()>().await;
                            }
                        },
                        () = async {
                            let _ = calls.wait_for(|n| *n > 0).await;
                        } => {}
                    }
                }
            };
            let ended = tokio::select! {
                result = &mut shown => result,
                () = closed => {
                    stop.cancel();
                    let _ = tokio::time::timeout(WITHDRAW_GRACE, &mut shown).await;
                    Err(AskError::Cancelled)
                }
            };
            showing.lock().remove(&id);
            let _ = tx.send(Some(ended));
        });
        (rx, attached)
    }
}

/// The fallback answerers of one call, shown through [`Showing`].
struct Shown {
    showing: Showing,
    inner: Arc<dyn UserInteraction>,
    durable: Durable,
}

impl UserInteraction for Shown {
    /// Starts (or follows) the ask's shower and waits for what it ends with; the call's
    /// `cancel` only stops the waiting. The call's own race hears the outcome through the
    /// store (the durable link adopts it), so `decide` is not passed on.
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        let Some(id) = self.durable.ask_id() else {
            return self.inner.ask_decided(request, cancel, decide);
        };
        let given = decide.given_before().cloned();
        let (mut ended, attached) =
            self.showing
                .follow(id, request, &self.inner, &self.durable, given);
        Box::pin(async move {
            let _attached = attached;
            let result = tokio::select! {
                () = cancel.cancelled() => return Err(AskError::Cancelled),
                result = ended.wait_for(Option::is_some) => match result {
                    Ok(ended) => ended.clone(),
                    Err(_) => None,
                },
            };
            match result {
                // Withdrawn because the store holds an outcome from elsewhere: the durable
                // link adopts that outcome; nothing to say here.
                Some(Err(AskError::Cancelled)) | None => {
                    cancel.cancelled().await;
                    Err(AskError::Cancelled)
                }
                Some(result) => result,
            }
        })
    }

    fn name(&self) -> Option<&str> {
        self.inner.name()
    }

    fn is_available(&self) -> bool {
        self.inner.is_available()
    }
}
