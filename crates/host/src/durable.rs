//! Durable asks at host level (docs/contract.md §8): the store plugs in here, not in the core.
//!
//! - [`StoreArgs`]: `--store URL` (env `ASK_USER_STORE`) and `--key KEY` (env
//!   `ASK_USER_CALL_ID`); [`StoreArgs::open`] opens the named store (fatal when it cannot be
//!   used) or the default SQLite file (a memory store with one warning when it cannot).
//! - [`Durable`]: one call's link to the store, given to [`crate::HostCall`], which alone
//!   assembles it into a call. `Durable::wrap` decorates the answerers: the
//!   ask is written to the store ([`Store::open_ask`]) before any answerer shows it; an open ask
//!   with the same key is re-attached; an answered-but-undelivered one is handed back at once and
//!   nothing is shown; an outcome another process records (the inbox) settles the call.
//!   `Durable::recorder` is the core's [`RecordOutcome`] hook: the outcome is stored inside the
//!   decision, before the human is told "taken" and before the model reads it; an aborted call
//!   (signal, host cancel) only **detaches** the ask, which stays open for the human.
//!   `Durable::mark_delivered` once the model can have read the outcome: a compare-and-set
//!   on the exact outcome this call stored or was handed, skipped when the call was aborted
//!   (the process is going away: the outcome stays for the retry).
//! - **Namespaces** (docs/contract.md §8 "Exactly once, made precise"): every ask is opened in
//!   its caller's [`Namespace`] ([`local_namespace`] for the CLI); a store that already holds
//!   another outcome settles the call's race with it ([`RecordError::Settled`]), so a budget or
//!   a signal losing to a stored answer yields the answer.
//! - **Liveness** (docs/contract.md §8 "Liveness"): while a call waits, [`Store::keep_lease`] renews
//!   its ask's lease every third of [`ask_user_store::lease`], so an asker that dies without
//!   detaching (`kill -9`, power loss) leaves an ask the next sweep marks detached.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide, Decision,
    GivenBefore, Offer, RecordError, RecordOutcome, Secret, Settled, UserInteraction,
};
use ask_user_store::{
    AskId, AskRecord, Asker, Closed, Namespace, NewAsk, Opened, Outcome, Scope, Store, Timestamp,
};

mod outcomes;

use outcomes::record_kept;
pub use outcomes::{describe_closed, outcome_of, record, settled_of};

/// The environment variable `--store` reads.
pub const STORE_ENV: &str = "ASK_USER_STORE";
/// The environment variable `--key` reads.
pub const KEY_ENV: &str = "ASK_USER_CALL_ID";
/// The environment variable a harness sets to tell its sessions apart (part of the scope when
/// no key is given).
pub const SESSION_ENV: &str = "ASK_USER_SESSION";

/// How long an answerer that lost to an outcome recorded elsewhere may take to withdraw its
/// question (restore the terminal) before the call returns.
const WITHDRAW_GRACE: Duration = Duration::from_secs(2);

/// How long a call waits before following its ask again after the store failed to say (a
/// database restarting); a deleted or replaced store file ends the call instead.
const FOLLOW_RETRY: Duration = Duration::from_secs(1);

/// `--store URL` and `--key KEY`: plain settings, and with the `clap` feature clap arguments
/// (flatten them into a command).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StoreArgs {
    /// Where asks are kept: sqlite:PATH, postgres://…, or memory.
    ///
    /// Default: the SQLite file ~/.local/state/ask-user/store.sqlite3 ($XDG_STATE_HOME), or
    /// via-hub.sqlite3 beside it when asking through a hub without `--via inbox` (the hub holds
    /// the question; a hub serving the default store lists it once); when that cannot be
    /// opened, a warning and a memory store. A store named here that cannot be used is fatal,
    /// before any question is shown.
    /// (A postgres:// URL may hold a password: `--help` never prints the environment's value.)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "URL", env = STORE_ENV, hide_env_values = true)
    )]
    pub store: Option<Secret>,

    /// The host's key of this call: the same key with the same question re-attaches to its ask
    /// (or gets the answer given meanwhile) instead of asking again.
    ///
    /// Without it the scope is $ASK_USER_SESSION (when set), the working directory and the user.
    #[cfg_attr(feature = "clap", arg(long, value_name = "KEY", env = KEY_ENV))]
    pub key: Option<String>,
}

/// Which file holds a call's asks when no store is named (`--store`, `ASK_USER_STORE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultStore {
    /// The default store ([`ask_user_store::default_sqlite_path`]): the one `ask-user inbox`,
    /// `history` and a `hub serve` on this machine read.
    Shared,
    /// A call asked through a hub and through no local inbox keeps its own record of the ask
    /// beside it, in [`ask_user_store::default_sqlite_path_through_hub`]: the hub holds the
    /// question the human sees, so a hub serving the default store on the same machine lists
    /// it once, as the token's (docs/decisions.md "One machine, one card").
    ThroughHub,
}

impl DefaultStore {
    /// The default of a call whose answerers are `via` (the names as built), `through_hub`
    /// when the hub is one of them: [`DefaultStore::ThroughHub`] unless `inbox` is named too
    /// (`ask-user inbox` reads the shared store).
    #[must_use]
    pub fn of_call(through_hub: bool, via: &[String]) -> DefaultStore {
        if through_hub && !via.iter().any(|v| v.trim() == "inbox") {
            DefaultStore::ThroughHub
        } else {
            DefaultStore::Shared
        }
    }
}

/// The warning (on stderr, once) when the default store cannot be opened; `{path}` and
/// `{reason}` are filled in by [`default_store_warning`].
pub fn default_store_warning(path: &str, reason: &str) -> String {
    format!(
        "ask-user: warning: the default store {path} cannot be opened ({reason}); this ask is kept in memory only (pass --store to choose another)"
    )
}

/// The fatal error when a store named with `--store`/`ASK_USER_STORE` cannot be used; `url` as
/// [`ask_user_store::url_for_messages`] shows it (no password).
pub fn explicit_store_error(url: &str, reason: &str) -> String {
    format!("--store {url}: cannot use this store: {reason}")
}

impl StoreArgs {
    /// Opens the store: the one named (an error text for the host to report, exit 2, when it
    /// cannot be used), else the default SQLite file, else — with one warning on stderr — a
    /// memory store.
    ///
    /// # Errors
    /// The text of [`explicit_store_error`].
    ///
    /// Every open also runs the store's retention ([`sweep`]): detached asks whose grace ran
    /// out are withdrawn, closed asks past the audit period are purged.
    pub async fn open(&self) -> Result<Store, String> {
        self.open_for(DefaultStore::Shared).await
    }

    /// [`StoreArgs::open`], with `default` the file used when no store is named.
    ///
    /// # Errors
    /// The text of [`explicit_store_error`].
    pub async fn open_for(&self, default: DefaultStore) -> Result<Store, String> {
        let store = self.open_only(default).await?;
        sweep(&store).await;
        Ok(store)
    }

    async fn open_only(&self, default: DefaultStore) -> Result<Store, String> {
        if let Some(url) = self
            .store
            .as_ref()
            .map(Secret::expose)
            .filter(|u| !u.is_empty())
        {
            return Store::open(url).await.map_err(|e| {
                explicit_store_error(&ask_user_store::url_for_messages(url), &e.to_string())
            });
        }
        let path = match default {
            DefaultStore::Shared => ask_user_store::default_sqlite_path(),
            DefaultStore::ThroughHub => ask_user_store::default_sqlite_path_through_hub(),
        };
        let opened = match path {
            Ok(path) => match Store::open_sqlite(&path).await {
                Ok(store) => Ok(store),
                Err(e) => Err((path.display().to_string(), e.to_string())),
            },
            Err(e) => Err(("(no state directory)".to_owned(), e.to_string())),
        };
        Ok(opened.unwrap_or_else(|(path, reason)| {
            eprintln!("{}", default_store_warning(&path, &reason));
            Store::memory()
        }))
    }

    /// The scope of this call's key: the host key when given, else the caller's identity.
    pub fn scope(&self) -> Scope {
        match self.key.as_deref().filter(|k| !k.is_empty()) {
            Some(key) => Scope::HostKey(key.to_owned()),
            None => Scope::Caller(caller_identity()),
        }
    }
}

/// Runs the store's retention with the default periods (docs/contract.md §8: a detached ask is
/// withdrawn when its grace runs out, a closed ask is purged after the audit period). A failure
/// is logged, never fatal: retention can wait for the next open.
pub async fn sweep(store: &Store) {
    match store
        .sweep(Timestamp::now(), ask_user_store::Retention::default())
        .await
    {
        Ok(swept) => tracing::debug!(?swept, "store retention"),
        Err(error) => tracing::warn!("store retention did not run: {error}"),
    }
}

/// The local user's namespace: the user by uid (names are never identity).
pub fn local_namespace() -> Namespace {
    Namespace::local_user(rustix::process::getuid().as_raw())
}

/// The CLI caller's identity: `ASK_USER_SESSION` (when set), the working directory and the user.
pub fn caller_identity() -> String {
    let session = std::env::var(SESSION_ENV).unwrap_or_default();
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!("session={session}\ncwd={cwd}\nuser={}", user())
}

fn user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_default()
}

/// Who asks, as this process knows it (shown in the inbox).
pub fn local_asker(agent: Option<String>) -> Asker {
    Asker {
        agent,
        project: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        host: ask_user_core::host_name(),
        session: std::env::var(SESSION_ENV).ok().filter(|s| !s.is_empty()),
        pid: Some(std::process::id()),
        process: ask_user_store::this_process(),
    }
}

struct Shared {
    store: Store,
    namespace: Namespace,
    scope: Scope,
    asker: Asker,
    id: OnceLock<AskId>,
    /// The exact outcome the store holds for this call, once its race settled (see
    /// [`Durable::mark_delivered`]).
    kept: Mutex<Option<Outcome>>,
    /// The call was aborted (its caller is going away): nothing is marked delivered.
    aborted: std::sync::atomic::AtomicBool,
    /// How `open_ask` found the key (for logs and tests).
    opened: Mutex<Option<&'static str>>,
}

/// A process's clock: what it writes as the time of what it does in the store (the ask's
/// creation, its outcome, its detach, its delivery). [`Durable::new`] uses the machine's
/// ([`Timestamp::now`]); the simulation gives each process its own, skewed.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// One call's link to the store (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct Durable {
    shared: Arc<Shared>,
    clock: Clock,
}

impl std::fmt::Debug for Durable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durable")
            .field("store", &self.shared.store.location())
            .field("id", &self.shared.id.get())
            .finish_non_exhaustive()
    }
}

impl Durable {
    /// A link for one call asked in `namespace` and `scope` by `asker`.
    pub fn new(store: Store, namespace: Namespace, scope: Scope, asker: Asker) -> Self {
        Self {
            shared: Arc::new(Shared {
                store,
                namespace,
                scope,
                asker,
                id: OnceLock::new(),
                kept: Mutex::new(None),
                aborted: std::sync::atomic::AtomicBool::new(false),
                opened: Mutex::new(None),
            }),
            clock: Arc::new(Timestamp::now),
        }
    }

    /// The same link, telling time by `clock` (a process whose clock is wrong: docs/contract.md
    /// §8 "No clock decides across processes"). Set it before the link is used.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    fn now(&self) -> Timestamp {
        (self.clock)()
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// The ask's id once it was opened in the store.
    pub fn ask_id(&self) -> Option<AskId> {
        self.shared.id.get().copied()
    }

    /// How the store found the call key: `created`, `reattached` or `undelivered`.
    pub fn opened(&self) -> Option<&'static str> {
        *self
            .shared
            .opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The core's hook: stores the outcome inside the decision (see [`record`]). Plugged into
    /// the call's race by [`crate::HostCall`] only.
    pub(crate) fn recorder(&self) -> Arc<dyn RecordOutcome> {
        Arc::new(self.clone())
    }

    /// A race of its own for `request` that records in this call's ask (first outcome wins in
    /// the store): for a question shown once for several calls of the same ask (the MCP
    /// server's page, which outlives a call that re-attaches to it). The call itself still
    /// runs through [`crate::HostCall`].
    pub fn decide(&self, request: &AskUserQuestionRequest) -> Decide {
        Decide::with_recorder(request, Some(self.recorder()))
    }

    /// `inner` behind the store (see the module doc). Assembled by [`crate::HostCall`] only.
    pub(crate) fn wrap(&self, inner: Arc<dyn UserInteraction>) -> Arc<dyn UserInteraction> {
        Arc::new(Wrapped {
            durable: self.clone(),
            inner,
        })
    }

    /// What a delivery of this call marks: the ask and the exact outcome its race stored or
    /// was handed; `None` while the race is open or never reached the store, and for a call
    /// that was aborted (its caller is going away: the outcome stays for the retry).
    pub(crate) fn delivery(&self) -> Option<(AskId, Outcome)> {
        if self
            .shared
            .aborted
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return None;
        }
        let kept = self
            .shared
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Some((self.ask_id()?, kept?))
    }

    /// Whether the call was aborted: a signal, a host cancel or a closed stdout detached its
    /// ask (the caller is going away).
    pub fn is_aborted(&self) -> bool {
        self.shared
            .aborted
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The outcome this call may deliver, given the one its race settled on: `ASK_ABORTED` for
    /// an aborted call ([`Durable::is_aborted`]), also when an answer reached the store while
    /// it was detaching (the race then settles on that answer). A detached ask belongs to the
    /// call's retry from that moment (an unkeyed retry, or a new process of the same key, may
    /// re-attach at once), so the process that is going away never prints its answer: it stays
    /// undelivered for the retry, and no answer is printed twice.
    pub(crate) fn outcome_to_deliver(
        &self,
        outcome: ask_user_core::Outcome,
    ) -> ask_user_core::Outcome {
        if self.is_aborted() && !matches!(outcome, ask_user_core::Outcome::Aborted) {
            tracing::info!("aborted while an outcome arrived: it stays in the store for the retry");
            return ask_user_core::Outcome::Aborted;
        }
        outcome
    }

    /// Marks the outcome delivered (the model can have read it): a compare-and-set on the
    /// exact outcome this call's race stored or was handed, never on whatever the store holds
    /// now. Nothing is marked for a call that was aborted (its caller is going away; the
    /// outcome stays for the retry) or whose race never reached the store. Errors are logged.
    /// Run by [`crate::Asked::deliver`] only, after the model's bytes were written
    /// ([`crate::StoredAsk::mark_delivered`]).
    pub(crate) async fn mark_delivered(&self) {
        let Some((id, outcome)) = self.delivery() else {
            tracing::debug!("nothing to mark delivered (aborted, or never stored)");
            return;
        };
        match self
            .shared
            .store
            .mark_delivered(id, &outcome, self.now())
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("ask {id}: the stored outcome changed; not marked delivered")
            }
            Err(e) => tracing::warn!("cannot mark ask {id} delivered: {e}"),
        }
    }

    /// Marks the ask detached (the caller went away); errors are logged.
    pub(crate) async fn detach(&self) {
        if let Some(id) = self.ask_id()
            && let Err(e) = self.shared.store.set_attached(id, false, self.now()).await
        {
            tracing::warn!("cannot mark ask {id} detached: {e}");
        }
    }

    /// Whether the store holds an ask this call would re-attach to or be handed (read only).
    async fn has_stored(&self, request: &AskUserQuestionRequest) -> bool {
        let shared = &self.shared;
        let mut ask = NewAsk::new(
            &shared.scope,
            request.to_canonical_json(),
            shared.asker.clone(),
        )
        .in_namespace(&shared.namespace);
        ask.created_at = self.now();
        match shared.store.find_ask(&ask).await {
            Ok(found) => found.is_some(),
            Err(e) => {
                tracing::warn!("cannot look for a stored ask of this call: {e}");
                false
            }
        }
    }

    /// The answer given and delivered before to the same question as the ask `opened` (its
    /// namespace and request), for the surfaces to offer as "the same answer again"; none when
    /// the store cannot say (the offer is only an offer: the question is asked either way).
    async fn given_before(&self, opened: &AskRecord) -> Option<GivenBefore> {
        let key = &opened.key;
        let store = &self.shared.store;
        match store
            .given_before(key.namespace(), key.request_hash())
            .await
        {
            Ok(given) => given,
            Err(e) => {
                tracing::warn!("cannot look for an answer given before to this question: {e}");
                None
            }
        }
    }

    async fn open(&self, request: &AskUserQuestionRequest) -> Result<Opened, AskError> {
        let shared = &self.shared;
        let mut ask = NewAsk::new(
            &shared.scope,
            request.to_canonical_json(),
            shared.asker.clone(),
        )
        .in_namespace(&shared.namespace);
        ask.created_at = self.now();
        let opened = shared.store.open_ask(&ask).await.map_err(|e| {
            AskError::Failed(format!(
                "the question could not be stored in {} ({e}), so it was not shown",
                shared.store.location()
            ))
        })?;
        let _ = shared.id.set(opened.record().id);
        *shared.opened.lock().unwrap_or_else(PoisonError::into_inner) = Some(match &opened {
            Opened::Created(_) => "created",
            Opened::Reattached(_) => "reattached",
            _ => "undelivered",
        });
        Ok(opened)
    }
}

impl RecordOutcome for Durable {
    fn record<'a>(
        &'a self,
        _request: &'a AskUserQuestionRequest,
        settled: &'a Settled,
    ) -> BoxFuture<'a, Result<(), RecordError>> {
        Box::pin(async move {
            if matches!(settled, Settled::Aborted) {
                self.shared
                    .aborted
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            let Some(id) = self.ask_id() else {
                // Closed before it was stored (e.g. aborted at once): nothing to keep.
                return Ok(());
            };
            let (result, kept) = record_kept(&self.shared.store, id, settled, self.now()).await;
            if kept.is_some() {
                *self
                    .shared
                    .kept
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = kept;
            }
            match result {
                Err(RecordError::Failed(why)) if outcome_of(settled).is_none() => {
                    tracing::warn!("cannot mark ask {id} detached: {why}");
                    Ok(())
                }
                other => other,
            }
        })
    }
}

/// Offers an outcome recorded elsewhere (or earlier) to this call's race.
async fn adopt(closed: &Closed, decide: &Decide) -> Result<Answers, AskError> {
    match &closed.outcome {
        Outcome::Answered { answer, by } => {
            let answers: Answers = serde_json::from_value(answer.clone())
                .map_err(|e| AskError::Failed(format!("the stored answer cannot be read ({e})")))?;
            match decide
                .named(&by.answerer)
                .offer(Offer::Answers(answers.clone()))
                .await
            {
                Decision::Invalid(invalid) => Err(AskError::Failed(format!(
                    "the stored answer does not fit the questions ({invalid})"
                ))),
                _ => Ok(answers),
            }
        }
        Outcome::Dismissed { by } => {
            let _ = decide.named(&by.answerer).offer(Offer::Dismiss).await;
            Err(AskError::Dismissed)
        }
        other => Err(AskError::Failed(format!(
            "the question was closed elsewhere ({})",
            other.state_name()
        ))),
    }
}

/// How long a call holding its stored ask waits before asking its answerers again after
/// none could show the question (the hub answerer's first post already waited its patience).
const ASK_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// The log line when no answerer could show a question the store holds for this call.
pub const HELD_UNAVAILABLE_LOG: &str = "the question stays stored for this call: asking again";

/// Asks `inner` for a call whose store holds its open ask from an earlier run (a re-run that
/// re-attached): an answerer that cannot show it now (a hub restarting past its first post's
/// patience) is asked again until the call ends (its budget, its caller, an outcome recorded
/// elsewhere), never ending the call as "nobody can answer": that would withdraw a question
/// the human may be answering (docs/contract.md §8 "Nobody can answer").
async fn ask_while_held(
    inner: &dyn UserInteraction,
    request: &AskUserQuestionRequest,
    cancel: CancellationToken,
    decide: Decide,
) -> Result<Answers, AskError> {
    let mut said = false;
    loop {
        match inner
            .ask_decided(request, cancel.clone(), decide.clone())
            .await
        {
            Err(AskError::Unavailable(why)) if !cancel.is_cancelled() => {
                if !std::mem::replace(&mut said, true) {
                    tracing::warn!(
                        "no answerer can show the question now ({why}); {HELD_UNAVAILABLE_LOG}"
                    );
                }
                tokio::select! {
                    () = tokio::time::sleep(ASK_AGAIN_AFTER) => {}
                    () = cancel.cancelled() => return Err(AskError::Cancelled),
                }
            }
            other => return other,
        }
    }
}

struct Wrapped {
    durable: Durable,
    inner: Arc<dyn UserInteraction>,
}

impl UserInteraction for Wrapped {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            let result = async {
                // No answerer can show it here: a stored ask of this call (open, or answered
                // and never delivered) is still served; without one, nobody can answer.
                let serve_only = !self.inner.is_available();
                if serve_only && !self.durable.has_stored(request).await {
                    return Err(AskError::Unavailable(
                        "no answerer can show the question here".to_owned(),
                    ));
                }
                let opened = match self.durable.open(request).await? {
                    Opened::Undelivered(rec) => {
                        let Some(closed) = rec.closed else {
                            return Err(AskError::Failed("the stored ask has no outcome".to_owned()));
                        };
                        return adopt(&closed, &decide).await;
                    }
                    // It was answered and delivered meanwhile: nothing to serve.
                    Opened::Created(_) if serve_only => {
                        return Err(AskError::Unavailable(
                            "no answerer can show the question here".to_owned(),
                        ));
                    }
                    opened => opened.record().clone(),
                };
                let id = opened.id;
                // A re-run holding its open ask: "nobody can answer" is not its ending.
                let held = self.durable.opened() == Some("reattached");
                // The same question answered before: the surfaces may offer that answer to the
                // human, as their own act for this ask.
                let decide = match self.durable.given_before(&opened).await {
                    Some(given) if !serve_only => decide.clone().with_given_before(given),
                    _ => decide.clone(),
                };
                let store = self.durable.store().clone();
                let asking = cancel.child_token();
                let shown: BoxFuture<'_, Result<Answers, AskError>> = if serve_only {
                    // Only the store (an inbox, a hub) can settle it: wait to be cancelled.
                    let asking = asking.clone();
                    Box::pin(async move {
                        asking.cancelled().await;
                        Err(AskError::Cancelled)
                    })
                } else if held {
                    Box::pin(ask_while_held(
                        &*self.inner,
                        request,
                        asking.clone(),
                        decide.clone(),
                    ))
                } else {
                    self.inner
                        .ask_decided(request, asking.clone(), decide.clone())
                };
                tokio::pin!(shown);
                // A store file deleted or replaced ends the call (no answerer can see the
                // question any more); another error is retried.
                let followed = async {
                    let mut said = false;
                    loop {
                        match store.wait_outcome(id).await {
                            Ok(rec) => match rec.closed {
                                Some(closed) => return Ok(closed),
                                None => continue,
                            },
                            Err(e @ ask_user_store::Error::Gone { .. }) => {
                                return Err(AskError::StoreGone(e.to_string()));
                            }
                            Err(e) => {
                                if !std::mem::replace(&mut said, true) {
                                    tracing::warn!("cannot follow ask {id} in the store: {e}; trying again");
                                }
                                tokio::time::sleep(FOLLOW_RETRY).await;
                            }
                        }
                    }
                };
                // While this call waits, its lease is renewed; it stops with the wait.
                let elsewhere = async {
                    tokio::select! {
                        closed = followed => closed,
                        () = store.keep_lease_by(id, || self.durable.now()) => std::future::pending().await,
                    }
                };
                tokio::select! {
                    result = &mut shown => {
                        // Offer what this process's answerer got: when another process's outcome
                        // was stored first (the inbox won the race), that outcome is the call's.
                        let offer = match &result {
                            Ok(answers) => Some(Offer::Answers(answers.clone())),
                            Err(AskError::Dismissed) if !cancel.is_cancelled() => Some(Offer::Dismiss),
                            Err(_) => None,
                        };
                        let named = match self.inner.name() {
                            Some(name) => decide.named(name),
                            None => decide.clone(),
                        };
                        if let Some(offer) = offer
                            && let Decision::NotRecorded(_) = named.offer(offer).await
                            && let Ok(rec) = store.get(id).await
                            && let Some(closed) = rec.closed
                        {
                            return adopt(&closed, &decide).await;
                        }
                        result
                    }
                    closed = elsewhere => {
                        let result = match closed {
                            Ok(closed) => adopt(&closed, &decide).await,
                            Err(gone) => Err(gone),
                        };
                        asking.cancel();
                        let _ = tokio::time::timeout(WITHDRAW_GRACE, shown).await;
                        result
                    }
                }
            }
            .await;
            // The caller went away: detach, also when the signal came before the ask was stored
            // (the recorder had no id to detach then).
            if cancel.is_cancelled() && matches!(decide.settled(), None | Some(Settled::Aborted)) {
                self.durable.detach().await;
            }
            result
        })
    }

    fn name(&self) -> Option<&str> {
        self.inner.name()
    }

    /// Always: with no answerer available, a stored ask of the call is still served (and
    /// without one the call ends as "nobody can answer", storing nothing).
    fn is_available(&self) -> bool {
        true
    }
}
