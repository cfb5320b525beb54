//! Durable asks for ask-user (docs/contract.md §8): a question outlives the call and the
//! process that asked it.
//!
//! # Overview
//!
//! A [`Store`] keeps asks ([`AskRecord`]): the canonical request, its [`CallKey`] (scope +
//! request hash), who asks ([`Asker`]), whether a caller is attached, and, once closed, the
//! [`Outcome`] that counted and whether it was delivered to the model. Three backends share one
//! contract, checked by one conformance suite (`tests/suite/conformance.rs`):
//!
//! - **SQLite** (`sqlite:PATH`, the embedded default at [`default_sqlite_path`]): one file in WAL
//!   mode with full sync, mode 0600. Writers serialise on SQLite's write lock (`BEGIN
//!   IMMEDIATE` with a generous busy timeout, so many processes share one file); within one
//!   handle, one writer thread commits the writes queued meanwhile in one transaction (group
//!   commit: each is answered once its commit is synced) and reads run on reader connections
//!   of their own. Other processes
//!   learn of a change through a sidecar file (`PATH-notify`) each writer touches after commit,
//!   watched with inotify/kqueue (the `notify` crate): no busy polling.
//! - **Postgres** (`postgres://…`): the hub's scale-out backend; changes travel by
//!   LISTEN/NOTIFY, and every reconnect of the listener yields [`Change::Rescan`].
//! - **memory** (`memory`): tests and embedders.
//!
//! The calls a host makes, in order:
//!
//! 1. [`Store::open_ask`] before any answerer shows the question: it creates the ask, or
//!    re-attaches to the open ask with the same key, or hands back an answer that was never
//!    delivered ([`Opened`]).
//! 2. [`Store::wait_outcome`] (or [`Store::subscribe`]) while the human decides; an answerer
//!    elsewhere (the inbox, the hub) calls [`Store::record_outcome`], which is first outcome
//!    wins: [`Recorded::Won`] or [`Recorded::Lost`] with the outcome that counted.
//! 3. [`Store::set_attached`]`(false)` when the caller goes away; [`Store::mark_delivered`]
//!    once the model can have read the outcome.
//!
//! While it waits, the caller renews its ask's lease ([`Store::keep_lease`], every third of
//! [`LEASE`]). [`Store::sweep`] detaches attached asks whose lease ran out (their asker died
//! without detaching), withdraws detached asks whose grace ran out and purges old closed asks.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use ask_user_store::{Asker, NewAsk, Outcome, Opened, Recorded, Responder, Scope, Store, Timestamp};
//!
//! let store = Store::open("memory").await?;
//! let ask = NewAsk::new(&Scope::HostKey("call-1".into()), r#"{"questions":[]}"#, Asker::default());
//! let Opened::Created(rec) = store.open_ask(&ask).await? else { unreachable!() };
//! let answer = Outcome::Answered { answer: serde_json::json!({"q": "yes"}), by: Responder::default() };
//! assert_eq!(store.record_outcome(rec.id, &answer, Timestamp::now()).await?, Recorded::Won);
//! let done = store.wait_outcome(rec.id).await?;
//! assert_eq!(done.closed.map(|c| c.outcome), Some(answer));
//! # Ok::<(), ask_user_store::Error>(())
//! # }).unwrap();
//! ```
#![deny(missing_docs)]

mod channel;
mod error;
mod feed;
mod liveness;
mod memory;
mod model;
mod postgres;
mod row;
mod schema;
mod sqlite;
mod statements;
mod waiters;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use channel::{ChannelToken, Spend};
pub use error::{Cause, Error, Result};
pub use feed::Feed;
pub use liveness::{Liveness, ThisMachine, process_identity, this_process};
pub use model::{
    AskId, AskRecord, Asker, CallKey, Change, Closed, DEFAULT_GRACE, DEFAULT_KEEP_CLOSED,
    GivenAnswer, HistoryCursor, HistoryPage, LEASE, LEASE_TEST_ENV, Namespace, NewAsk, OpenPage,
    Opened, Outcome, Recorded, Responder, Retention, Scope, Swept, Timestamp,
    UNKEYED_REDELIVERY_WINDOW, lease,
};
pub use schema::SCHEMA_VERSION;
pub use sqlite::{CLOSE_WAIT_TEST_ENV, SAFETY_SCAN_TEST_ENV, WAL_BOUND_PAGES, WATCH_TEST_ENV};

/// A store of asks: one of the backends, chosen by URL ([`Store::open`]) or in code.
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
    /// The waiters of [`Store::wait_outcome`], shared by this handle's clones.
    waiters: Arc<waiters::Waiters>,
    /// Tells whether a local asker's process still runs ([`Store::with_liveness`]).
    liveness: Arc<dyn Liveness>,
}

/// Which backend a [`Store`] is ([`Store::kind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreKind {
    /// In this process's memory: no other process sees it.
    Memory,
    /// A SQLite file, shared by the processes that open the same path.
    Sqlite {
        /// The database file, as it was opened (relative paths stay relative).
        path: PathBuf,
    },
    /// A Postgres database.
    Postgres,
}

#[derive(Debug, Clone)]
enum Backend {
    Memory(memory::MemoryStore),
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PgStore),
}

/// A one-statement operation: the memory backend's method, else the shared SQL operation
/// ([`statements`]) on the SQL backend.
/// The Postgres arm's future is boxed: a Postgres operation's state (its client's query
/// futures) is kilobytes, and unboxed it would make every caller's future — a waiter's, on
/// every backend — that large.
macro_rules! dispatch_sql {
    ($self:ident, $f:ident ( $($arg:expr),* )) => {
        match &$self.backend {
            Backend::Memory(s) => s.$f($($arg),*).await,
            Backend::Sqlite(s) => statements::$f(s, $($arg),*).await,
            Backend::Postgres(s) => Box::pin(statements::$f(s, $($arg),*)).await,
        }
    };
}

/// Awaits the operation `$e` (a future) on the backend `$s`; the Postgres arm boxed, as in
/// [`dispatch_sql`].
macro_rules! dispatch {
    ($self:ident, $s:ident => $e:expr) => {
        match &$self.backend {
            Backend::Memory($s) => $e.await,
            Backend::Sqlite($s) => $e.await,
            Backend::Postgres($s) => Box::pin($e).await,
        }
    };
}

mod secrets;
pub use secrets::{NewSecret, SecretRecord};

mod lease;

pub mod knobs;

/// The embedded default store file: `$XDG_STATE_HOME/ask-user/store.sqlite3`, falling back to
/// `~/.local/state/ask-user/store.sqlite3` (an empty or relative `XDG_STATE_HOME` is ignored,
/// as the XDG spec says).
///
/// # Errors
/// [`Error::NoStateDir`] when neither variable gives an absolute directory.
pub fn default_sqlite_path() -> Result<PathBuf> {
    default_sqlite_path_from(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))
}

/// The default store file of a call asked through a hub: `via-hub.sqlite3` beside
/// [`default_sqlite_path`]. The call's own record of its ask (the race's recorder, what its
/// retry re-attaches to) is kept there rather than in the file a `hub serve` on the same
/// machine serves, whose inbox would otherwise list the question twice: once as the hub's ask
/// and once as this local record (docs/decisions.md "One machine, one card").
///
/// # Errors
/// [`Error::NoStateDir`] when neither variable gives an absolute directory.
pub fn default_sqlite_path_through_hub() -> Result<PathBuf> {
    default_sqlite_path().map(|path| path.with_file_name(THROUGH_HUB_FILE))
}

/// The file name of [`default_sqlite_path_through_hub`].
pub const THROUGH_HUB_FILE: &str = "via-hub.sqlite3";

/// How many of the newest closed asks are looked through for an answer given before to the
/// same question ([`Store::given_before`], the hub's page): one page of the history, so the
/// look costs the same however long the history is.
pub const SAME_ANSWER_LOOKBACK: u32 = 200;

/// [`default_sqlite_path`] from given variable values (testable without touching the
/// environment).
///
/// # Errors
/// [`Error::NoStateDir`] when neither value gives an absolute directory.
pub fn default_sqlite_path_from(
    xdg_state_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Result<PathBuf> {
    let absolute = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let state = match absolute(xdg_state_home) {
        Some(s) => s,
        None => absolute(home)
            .ok_or(Error::NoStateDir)?
            .join(".local/state"),
    };
    Ok(state.join("ask-user").join("store.sqlite3"))
}

/// `url` as messages show it: without the user and password of a `scheme://user:pass@host…`
/// URL and without its query (which may carry `password=`), whatever the scheme (a mistyped
/// `postgress://` loses its password too). Text that is not such a URL is returned as it is.
#[must_use]
pub fn url_for_messages(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let host_on = rest[..authority_end].rfind('@').map_or(0, |at| at + 1);
    format!("{scheme}://{}", &rest[host_on..])
}

impl Store {
    fn from_backend(backend: Backend) -> Store {
        Store {
            backend,
            waiters: Arc::default(),
            liveness: Arc::new(ThisMachine),
        }
    }

    /// Opens the store a URL names: `sqlite:PATH` (created with its directory when missing),
    /// `postgres://…` or `postgresql://…`, or `memory` (a new, empty store). Migrates an older
    /// schema; refuses a store too new for this binary ([`Error::TooNew`]).
    ///
    /// # Errors
    /// [`Error::BadUrl`] for any other text (shown by [`url_for_messages`]: no password);
    /// otherwise the backend's open errors.
    pub async fn open(url: &str) -> Result<Store> {
        if url == "memory" {
            return Ok(Store::memory());
        }
        if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(Error::BadUrl {
                    url: url_for_messages(url),
                });
            }
            return Store::open_sqlite(Path::new(path)).await;
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pg = postgres::PgStore::open(url).await?;
            return Ok(Store::from_backend(Backend::Postgres(pg)));
        }
        Err(Error::BadUrl {
            url: url_for_messages(url),
        })
    }

    /// Opens (creating when missing) the embedded default store, the SQLite file at
    /// [`default_sqlite_path`]. A host that falls back to a memory store when this fails
    /// (docs/contract.md §8) warns with the error's text.
    ///
    /// # Errors
    /// [`Error::NoStateDir`], or those of [`Store::open_sqlite`].
    pub async fn open_default() -> Result<Store> {
        Store::open_sqlite(&default_sqlite_path()?).await
    }

    /// A new, empty memory store.
    #[must_use]
    pub fn memory() -> Store {
        Store::from_backend(Backend::Memory(memory::MemoryStore::new()))
    }

    /// Opens (creating when missing) the SQLite store at `path`.
    ///
    /// # Errors
    /// [`Error::IsDirectory`], [`Error::Corrupt`], [`Error::ReadOnly`], [`Error::DiskFull`],
    /// [`Error::TooNew`], or [`Error::Backend`] for anything else SQLite reports.
    pub async fn open_sqlite(path: &Path) -> Result<Store> {
        let s = sqlite::SqliteStore::open(path.to_path_buf()).await?;
        Ok(Store::from_backend(Backend::Sqlite(s)))
    }

    /// Which backend this store is, with the SQLite file's path: decide behaviour from this,
    /// never from [`Store::location`]'s text (`sqlite:memory` is a SQLite file named
    /// `memory`; a relative SQLite path is still a file).
    #[must_use]
    pub fn kind(&self) -> StoreKind {
        match &self.backend {
            Backend::Memory(_) => StoreKind::Memory,
            Backend::Sqlite(s) => StoreKind::Sqlite {
                path: s.path().to_path_buf(),
            },
            Backend::Postgres(_) => StoreKind::Postgres,
        }
    }

    /// Where the store lives, for messages: the file path, the Postgres server (without
    /// credentials), or `memory`.
    #[must_use]
    pub fn location(&self) -> String {
        match &self.backend {
            Backend::Memory(_) => "memory".to_owned(),
            Backend::Sqlite(s) => s.location().to_owned(),
            Backend::Postgres(s) => s.location().to_owned(),
        }
    }

    /// Opens an ask, before any answerer shows it (docs/contract.md §8 "Call key and
    /// re-attach"). The key includes the ask's [`Namespace`]: asks of other namespaces are
    /// never found. A host-keyed call considers every ask of its key; an unkeyed call only
    /// those no live caller holds (detached, whose lease ran out by `ask.created_at`, or whose
    /// process ended: [`Liveness`], see [`Store::with_liveness`]), so two live callers asking the
    /// same question are never merged. Atomically, for the newest
    /// such ask:
    /// - none, or its outcome was delivered, or it timed out / was withdrawn, or its undelivered
    ///   outcome is older than the redelivery window → a new open, attached ask
    ///   ([`Opened::Created`]);
    /// - open → it is marked attached and returned ([`Opened::Reattached`]);
    ///
    /// A created or re-attached ask holds a lease until `ask.created_at + `[`lease()`], which
    /// the caller keeps alive with [`Store::renew`] while it waits.
    /// - answered or dismissed, never delivered, closed less than the window ago (the ask's
    ///   grace with a host key, [`UNKEYED_REDELIVERY_WINDOW`] without), measured at
    ///   `ask.created_at` → [`Opened::Undelivered`].
    ///
    /// # Errors
    /// The backend's write errors; nothing is stored then.
    pub async fn open_ask(&self, ask: &NewAsk) -> Result<Opened> {
        let liveness = self.liveness.clone();
        let ask = &*self.ask_at(ask);
        dispatch!(self, s => s.open_ask(ask, liveness))
    }

    /// The ask [`Store::open_ask`] would re-attach to or hand back for `ask` (an open ask of its
    /// key, or an answer never delivered, by the same rules), without writing anything; `None`
    /// when `open_ask` would create a new one. A host with no answerer to show a question
    /// serves such a stored ask instead of giving up (docs/contract.md §8: "nobody can answer"
    /// only when no answerer and no stored ask exist).
    ///
    /// # Errors
    /// The backend's read errors.
    pub async fn find_ask(&self, ask: &NewAsk) -> Result<Option<AskRecord>> {
        let liveness = self.liveness.clone();
        let ask = &*self.ask_at(ask);
        dispatch!(self, s => s.find_ask(ask, liveness))
    }

    /// The same store, telling whether an ask's caller ended with `liveness` instead of
    /// [`ThisMachine`] (a simulation's processes, an embedder's own callers). An unkeyed
    /// [`Store::open_ask`] never re-attaches to an ask whose caller `liveness` does not know
    /// to be gone while its lease runs.
    #[must_use]
    pub fn with_liveness(self, liveness: Arc<dyn Liveness>) -> Store {
        Store { liveness, ..self }
    }

    /// Records how the ask closed, first outcome wins (compare-and-set across processes and
    /// machines): [`Recorded::Won`] when the ask was open and now holds `outcome`, else
    /// [`Recorded::Lost`] with the outcome that counted. When this returns, the outcome is
    /// durable (SQLite: synced; Postgres: committed).
    ///
    /// # Errors
    /// [`Error::NotFound`] when no such ask exists (e.g. purged); the backend's errors.
    pub async fn record_outcome(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<Recorded> {
        let at = self.at(at);
        dispatch!(self, s => s.record_outcome(id, outcome, at))
    }

    /// Marks an open ask attached (a caller waits for it; it holds a lease until `at +`
    /// [`lease()`]) or detached at `at` (the caller went away: it stays open for the human for
    /// its grace period; no lease). Attaching has no effect on a closed ask; detaching one
    /// says its caller went away without the outcome (no lease), so an unkeyed retry may
    /// collect it ([`Store::open_ask`]).
    ///
    /// # Errors
    /// [`Error::NotFound`]; the backend's errors.
    pub async fn set_attached(&self, id: AskId, attached: bool, at: Timestamp) -> Result<()> {
        let at = self.at(at);
        dispatch!(self, s => s.set_attached(id, attached, at))
    }

    /// Marks the ask's outcome delivered at `at` (the model can have read it) — only if the
    /// outcome stored is exactly `outcome`, the one the caller wrote or was handed (a
    /// compare-and-set: never "whatever is stored now"). `Ok(true)` when the stored outcome is
    /// `outcome` (now delivered; the first delivery time is kept); `Ok(false)` when the ask is
    /// open or holds another outcome (nothing changes).
    ///
    /// # Errors
    /// [`Error::NotFound`]; the backend's errors.
    pub async fn mark_delivered(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<bool> {
        let at = self.at(at);
        dispatch!(self, s => s.mark_delivered(id, outcome, at))
    }

    /// Takes back a delivery marked at `at` ([`Store::mark_delivered`]): the model did not
    /// read it after all (MCP: the client cancelled the request, its `notifications/cancelled`
    /// crossing our result on the wire, so it dropped the result). The outcome stays; a retry
    /// within the redelivery window gets it ([`Opened::Undelivered`]). No effect unless the
    /// ask's delivery time is exactly `at` (a delivery marked by another call stands).
    ///
    /// # Errors
    /// [`Error::NotFound`]; the backend's errors.
    pub async fn unmark_delivered(&self, id: AskId, at: Timestamp) -> Result<()> {
        let at = self.at(at);
        dispatch!(self, s => s.unmark_delivered(id, at))
    }

    /// `t`, a time of this process's clock, on the store's one clock (docs/contract.md §8 "No
    /// clock decides across processes"): on Postgres moved by how far this process's clock is
    /// off the database's (measured when the store opened, ignored within 2 s), so a process
    /// whose clock is wrong by minutes or weeks stamps, sweeps and leases on the database's
    /// time; elsewhere `t` itself (SQLite has no shared clock to ask). Every method taking a
    /// time applies it, so a caller passes its own `Timestamp::now()`.
    #[must_use]
    pub fn at(&self, t: Timestamp) -> Timestamp {
        match &self.backend {
            Backend::Postgres(s) if s.skew_ms() != 0 => Timestamp(t.0.saturating_add(s.skew_ms())),
            _ => t,
        }
    }

    /// `ask` with its time on the store's clock ([`Store::at`]).
    fn ask_at<'a>(&self, ask: &'a NewAsk) -> std::borrow::Cow<'a, NewAsk> {
        let at = self.at(ask.created_at);
        if at == ask.created_at {
            return std::borrow::Cow::Borrowed(ask);
        }
        let mut moved = ask.clone();
        moved.created_at = at;
        std::borrow::Cow::Owned(moved)
    }

    /// The ask as stored now.
    ///
    /// # Errors
    /// [`Error::NotFound`]; the backend's errors.
    pub async fn get(&self, id: AskId) -> Result<AskRecord> {
        dispatch_sql!(self, get(id))
    }

    /// Every open ask (attached or detached), newest first.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn list_open(&self) -> Result<Vec<AskRecord>> {
        dispatch_sql!(self, list_open())
    }

    /// One page of open asks (attached or detached), newest first: those with an id below
    /// `page.before` (all when `None`), at most `page.limit`. An ask opened between two page
    /// reads is newer than every cursor, so paging on never repeats or skips an older ask.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn list_open_page(&self, page: OpenPage) -> Result<Vec<AskRecord>> {
        dispatch_sql!(self, list_open_page(page))
    }

    /// How many asks are open (attached or detached): a count the store keeps in the
    /// transaction of every change that opens or closes an ask (SQLite, Postgres: the asks
    /// table's triggers), so reading it costs the same whatever the number of open asks.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn count_open(&self) -> Result<u64> {
        dispatch_sql!(self, count_open())
    }

    /// The statements a first page of open asks runs on this backend ([`Store::list_open_page`]
    /// of `limit` + 1 from the newest, [`Store::count_open`], the first [`Store::history`] page
    /// of `history`), each with its parameters: for tests and diagnostics that check their
    /// query plans (`EXPLAIN`). Empty on the memory store.
    #[doc(hidden)]
    #[must_use]
    pub fn first_page_statements(&self, limit: u32, history: u32) -> Vec<(&'static str, Vec<i64>)> {
        let s = match &self.backend {
            Backend::Memory(_) => return Vec::new(),
            Backend::Sqlite(_) => &statements::SQLITE,
            Backend::Postgres(_) => &statements::POSTGRES,
        };
        vec![
            (s.list_open_page, vec![i64::MAX, i64::from(limit) + 1]),
            (s.count_open, vec![]),
            (s.history_first, vec![i64::from(history)]),
        ]
    }

    /// How many asks are open in `namespace` (by id, never by the asker's name: a local
    /// caller calling itself like a hub token counts in its own namespace): the hub's
    /// per-token quota of open asks.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn count_open_in(&self, namespace: &Namespace) -> Result<u64> {
        dispatch_sql!(self, count_open_in(namespace))
    }

    /// One page of closed asks, newest close first (ties: higher id first).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn history(&self, page: HistoryPage) -> Result<Vec<AskRecord>> {
        dispatch_sql!(self, history(page))
    }

    /// The answers given and delivered among the newest `lookback` closed asks (the first
    /// [`Store::history`] page of that size), newest first: only their namespace, request hash,
    /// time and answers — no request text, whatever its size — for a page that offers "the
    /// same answer again" beside an identical question.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn given_answers(&self, lookback: u32) -> Result<Vec<GivenAnswer>> {
        dispatch_sql!(self, given_answers(lookback))
    }

    /// The newest answer given and delivered to the same question — `namespace` and
    /// `request_hash` — among the newest [`SAME_ANSWER_LOOKBACK`] closed asks: what a surface
    /// offers as "the same answer again" beside a fresh ask of it (docs/contract.md §8).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn given_before(
        &self,
        namespace: &Namespace,
        request_hash: &str,
    ) -> Result<Option<ask_user_core::GivenBefore>> {
        let given = self.given_answers(SAME_ANSWER_LOOKBACK).await?;
        Ok(given
            .into_iter()
            .filter(|g| g.namespace == *namespace && g.request_hash == request_hash)
            .find_map(|g| {
                Some(ask_user_core::GivenBefore {
                    answers: serde_json::from_value(g.answer).ok()?,
                    given_at: ask_user_core::time::from_unix_millis(g.closed_at.0),
                })
            }))
    }

    /// Retention at `now`: first detaches each attached ask whose lease ran out (`lease_until
    /// <= now`: its asker stopped renewing, e.g. it was killed), as of `lease_until`, announced
    /// on the change feed ([`Swept::expired`]), for the human's eyes only: the lapsed lease is
    /// kept, and such an ask is never merged with another caller's (a lapsed lease proves
    /// nothing). An attached ask without a lease (written by an older binary) is left alone.
    /// Then withdraws each detached ask whose grace ran out (its `detached_at + grace <= now`)
    /// and purges closed asks closed at or before `now - retention.keep_closed`, except a
    /// human's answer or dismissal never delivered: `now` is this process's clock, which may be
    /// weeks ahead of everyone else's (on Postgres it is moved onto the database's clock first:
    /// [`Store::at`]).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn sweep(&self, now: Timestamp, retention: Retention) -> Result<Swept> {
        let now = self.at(now);
        dispatch!(self, s => s.sweep(now, retention))
    }

    /// Stores a channel's answer token (docs/contract.md §10); its rows go when its ask is
    /// purged ([`Store::sweep`]).
    ///
    /// # Errors
    /// The backend's errors (a hash stored before is one).
    pub async fn put_channel_token(&self, token: &ChannelToken) -> Result<()> {
        dispatch_sql!(self, put_channel_token(token))
    }

    /// The token with `hash` and whether it was spent, without spending it (a confirm page
    /// shows what it would answer); `None` when unknown.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn channel_token(&self, hash: &str) -> Result<Option<(ChannelToken, bool)>> {
        dispatch_sql!(self, channel_token(hash))
    }

    /// Spends the token with `hash` presented for `ask` through `channel` at `at`, atomically
    /// across processes and replicas: [`Spend::Spent`] for exactly one caller; a token of
    /// another ask or channel is [`Spend::Elsewhere`] and stays unused.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn spend_channel_token(
        &self,
        hash: &str,
        ask: AskId,
        channel: &str,
        at: Timestamp,
    ) -> Result<Spend> {
        let at = self.at(at);
        dispatch!(self, s => s.spend_channel_token(hash, ask, channel, at))
    }

    /// Claims the sending of `ask`'s message on `channel`: `true` for exactly one caller (it
    /// sends, then [`Store::set_channel_reference`]); `false` when it was claimed before.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn claim_channel_send(&self, ask: AskId, channel: &str) -> Result<bool> {
        dispatch_sql!(self, claim_channel_send(ask, channel))
    }

    /// Records the reference of the message sent for `ask` on `channel` (after a claim).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn set_channel_reference(
        &self,
        ask: AskId,
        channel: &str,
        reference: &str,
    ) -> Result<()> {
        dispatch_sql!(self, set_channel_reference(ask, channel, reference))
    }

    /// Claims the close updates of `ask` at `at`: every (channel, reference) of a message sent
    /// for it and not claimed before, ordered by channel. Each message is handed out once.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn claim_channel_closes(
        &self,
        ask: AskId,
        at: Timestamp,
    ) -> Result<Vec<(String, String)>> {
        let at = self.at(at);
        dispatch_sql!(self, claim_channel_closes(ask, at))
    }

    /// Follows the store's changes from now on: every change made through any handle, process
    /// or replica is eventually announced as [`Change::Ask`] or covered by a [`Change::Rescan`].
    /// A follower subscribes first, then reads, then re-reads on each change.
    ///
    /// # Errors
    /// The backend's errors (SQLite: the file watch cannot be set up).
    pub async fn subscribe(&self) -> Result<Feed> {
        dispatch!(self, s => s.subscribe())
    }

    /// Waits until the ask is closed and returns it. Cancel-safe: dropping the future stops
    /// waiting and changes nothing. One wake-up per change of this ask: the handle's waiters
    /// are woken by ask, not by every change of the store (a [`Change::Rescan`] wakes all).
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Gone`] once the store file was deleted or replaced (found
    /// on the file watch's next event, or at the latest at the store's next safety scan); the
    /// backend's errors.
    pub async fn wait_outcome(&self, id: AskId) -> Result<AskRecord> {
        let interest = self.waiters.register(id);
        let recheck = self.safety_recheck();
        loop {
            if !self.waiters.is_running() {
                self.waiters.start(self.subscribe()).await?;
            }
            // Armed before the read, so a change committed after it wakes this wait.
            let woken = interest.wake().notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if !self.waiters.is_running() {
                // The dispatcher ended before the wake-up was armed: start a new one.
                continue;
            }
            self.check_file()?;
            let rec = self.get(id).await?;
            if !rec.is_open() {
                return Ok(rec);
            }
            let _parked = self.waiters.park();
            let _ = tokio::time::timeout(recheck, woken).await;
        }
    }

    /// How many [`Store::wait_outcome`] calls on this handle (and its clones) read their ask
    /// open and are parked on its wake-up now: for tests that must record an outcome only once
    /// a waiter is waiting, instead of sleeping and hoping.
    #[doc(hidden)]
    #[must_use]
    pub fn parked_waits(&self) -> usize {
        self.waiters.parked()
    }

    /// How this handle learns of other processes' changes, for diagnostics and tests: SQLite's
    /// file watch — `kernel` (inotify), `poll` (the kernel refused a watch, e.g. the per-user
    /// inotify limit was reached: the sidecar's metadata is checked every 250 ms), `none`, or
    /// `unwatched` before the first [`Store::subscribe`]; `memory` and `postgres` otherwise.
    #[must_use]
    pub fn watch_mode(&self) -> &'static str {
        match &self.backend {
            Backend::Sqlite(s) => s.watch_mode(),
            Backend::Memory(_) => "memory",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// [`Error::Gone`] when this is a SQLite store whose file was deleted or replaced since it
    /// was opened (what this handle reads no other process can see); `Ok` otherwise and for
    /// the other backends. One `stat`.
    ///
    /// # Errors
    /// [`Error::Gone`].
    pub fn check_file(&self) -> Result<()> {
        match &self.backend {
            Backend::Sqlite(s) => s.check_file(),
            Backend::Memory(_) | Backend::Postgres(_) => Ok(()),
        }
    }

    /// Renews the lease of an open, attached ask to `at +` [`lease()`] (docs/contract.md §8
    /// "Liveness"): a waiting caller calls this every third of the lease. `Ok(true)` when
    /// renewed; `Ok(false)` when the ask is closed or detached (a renewal never re-attaches: a
    /// late renewal cannot undo the caller's own detach). Cheap: nothing is announced on the
    /// change feed, since nothing a follower shows changed.
    ///
    /// # Errors
    /// [`Error::NotFound`]; the backend's errors.
    pub async fn renew(&self, id: AskId, at: Timestamp) -> Result<bool> {
        let at = self.at(at);
        dispatch!(self, s => s.renew(id, at))
    }

    /// Keeps ask `id`'s lease alive while its caller waits: renews it ([`Store::renew`]) every
    /// third of [`lease()`]. Never returns: once the ask is closed or detached there is nothing
    /// to renew and it waits forever, so run it beside the wait (`select!`) and drop it when the
    /// wait ends. A failed renewal is logged and retried at the next tick (the lease outlives
    /// two missed renewals).
    pub async fn keep_lease(&self, id: AskId) {
        self.keep_lease_by(id, Timestamp::now).await;
    }

    /// [`Store::keep_lease`] telling time by `now` (the caller's clock, e.g. a simulated
    /// process's).
    pub async fn keep_lease_by(&self, id: AskId, now: impl Fn() -> Timestamp) {
        let every = lease() / 3;
        loop {
            tokio::time::sleep(every).await;
            match self.renew(id, now()).await {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => tracing::warn!("cannot renew the lease of ask {id}: {e}"),
            }
        }
        std::future::pending::<()>().await;
    }

    /// How often a waiter re-reads its ask although no change was announced — not the way
    /// answers normally arrive. SQLite's safety net against a lost file event is one scan per
    /// store handle (its scan loop, every 5 s), which announces what it finds; a waiter's own
    /// re-read is only the last resort, as on the memory store.
    fn safety_recheck(&self) -> Duration {
        match &self.backend {
            Backend::Memory(_) | Backend::Sqlite(_) => Duration::from_secs(3600),
            Backend::Postgres(_) => Duration::from_secs(60),
        }
    }

    /// The ask of the channel message that `part` names: the message on `channel` whose
    /// reference ([`Store::set_channel_reference`]) is `part` or holds it as one of its
    /// comma-separated parts (a message sent to several chats: `chat:id,chat:id`); the newest
    /// ask when several match. Open or closed alike (the caller reads the ask); `None` once the
    /// ask was purged. Lets any replica, or a restarted one, map a reply to its question.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn channel_message_ask(&self, channel: &str, part: &str) -> Result<Option<AskId>> {
        dispatch_sql!(self, channel_message_ask(channel, part))
    }
}
