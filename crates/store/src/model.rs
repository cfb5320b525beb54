//! The records a store keeps: asks, their call keys, who asked and their outcomes
//! (docs/contract.md §8). Plain data with no I/O; every backend stores exactly these.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::liveness::Liveness;

/// How long an answered ask that was never delivered is handed to a retry that carries no host
/// key (docs/contract.md §8: "within 10 minutes otherwise").
pub const UNKEYED_REDELIVERY_WINDOW: Duration = Duration::from_secs(10 * 60);

/// The default grace period: a detached ask stays answerable this long, then is withdrawn
/// (docs/contract.md §8).
pub const DEFAULT_GRACE: Duration = Duration::from_secs(24 * 60 * 60);

/// The default time a closed ask is kept for audit before it is purged (docs/contract.md §8).
pub const DEFAULT_KEEP_CLOSED: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How long an attached ask's lease lasts (docs/contract.md §8 "Liveness"): the waiting
/// process renews it every third of this ([`crate::Store::renew`]); an attached ask whose lease
/// ran out (its asker died without detaching: `kill -9`, power loss, a hub replica killed) is
/// detached by [`crate::Store::sweep`], its grace counted from when the lease ended.
pub const LEASE: Duration = Duration::from_secs(60);

/// **Test only** (read only with the `test-knobs` feature, see [`crate::knobs`]): an
/// environment variable that shortens [`LEASE`] to this many milliseconds (at least 100), so tests with real processes see a dead asker detached within seconds.
/// Not for production: a lease shorter than a loaded machine's scheduling delays detaches live
/// askers.
pub const LEASE_TEST_ENV: &str = "ASK_USER_TEST_LEASE_MS";

/// The lease this process gives and renews: [`LEASE`], unless [`LEASE_TEST_ENV`] shortens it
/// (read once).
#[must_use]
pub fn lease() -> Duration {
    static LEASE_NOW: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *LEASE_NOW.get_or_init(|| {
        crate::knobs::var(LEASE_TEST_ENV)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(LEASE, |ms| Duration::from_millis(ms.max(100)))
    })
}

/// The store's identity of one ask: unique within its store, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AskId(pub i64);

impl std::fmt::Display for AskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A point in time, in whole milliseconds since the Unix epoch (what every backend stores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current wall-clock time (a clock before 1970 reads as the epoch).
    #[must_use]
    pub fn now() -> Timestamp {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp(ms)
    }

    /// This time plus `d`, saturating.
    #[must_use]
    pub fn plus(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(duration_ms(d)))
    }
}

/// A duration in whole milliseconds, saturating at `i64::MAX`.
pub(crate) fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Whose ask this is: the scope half of a call key (docs/contract.md §8 "Call key and re-attach").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The host gave a key (`--key`, env `ASK_USER_CALL_ID`): an undelivered answer is handed
    /// to a retry for the whole grace period.
    HostKey(String),
    /// No host key: the caller's identity (CLI: session, working directory and user; MCP: the
    /// client's session and name; hub: the agent's token). An undelivered answer is handed to a
    /// retry for [`UNKEYED_REDELIVERY_WINDOW`] only.
    Caller(String),
}

/// Whose asks these are, by id (docs/contract.md §8 "Exactly once, made precise"): the local
/// user (by uid), one MCP client, one hub token (by the token's id, never its name). Part of
/// every ask's identity: a call re-attaches only to an ask of its own namespace, so two users,
/// clients or tokens asking the same question with the same key never share an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Namespace(String);

impl Namespace {
    /// The local user with this uid (`user:UID`).
    #[must_use]
    pub fn local_user(uid: u32) -> Namespace {
        Namespace(format!("user:{uid}"))
    }

    /// One MCP client, by the id its host gives it (`mcp:ID`).
    #[must_use]
    pub fn mcp_client(id: &str) -> Namespace {
        Namespace(format!("mcp:{id}"))
    }

    /// One hub agent token, by the token's id (`token:ID`): a renamed token keeps its asks, two
    /// tokens of one name never share them.
    #[must_use]
    pub fn hub_token(id: &str) -> Namespace {
        Namespace(format!("token:{id}"))
    }

    /// The namespace of the hub token `secret`, computed where the token is held (an agent's
    /// own store): the token's id is the SHA-256 of the secret, as the hub stores it, so an
    /// agent's local asks and its hub asks share one namespace. The secret itself is never
    /// stored.
    #[must_use]
    pub fn of_hub_token(secret: &str) -> Namespace {
        let digest = Sha256::digest(secret.as_bytes());
        let id: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Namespace::hub_token(&id)
    }

    /// The namespace as stored; empty for asks written before namespaces (schema 7) and for
    /// callers that name none (tests, embedders with one caller).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A namespace from its stored text.
    pub(crate) fn from_stored(s: String) -> Namespace {
        Namespace(s)
    }
}

/// The call key: namespace + scope + the hash of the canonical request. A key given with a
/// different request, or in another namespace, is a different ask.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallKey {
    namespace: Namespace,
    scope: String,
    request_hash: String,
    host_keyed: bool,
}

impl CallKey {
    /// The key of `request` (the canonical request JSON, hashed byte for byte as given: the
    /// caller canonicalises) asked in `scope`, in the unnamed namespace (see
    /// [`CallKey::in_namespace`]).
    #[must_use]
    pub fn new(scope: &Scope, request: &str) -> CallKey {
        let (scope, host_keyed) = match scope {
            Scope::HostKey(k) => (format!("key:{k}"), true),
            Scope::Caller(c) => (format!("caller:{c}"), false),
        };
        let digest = Sha256::digest(request.as_bytes());
        let request_hash = digest.iter().map(|b| format!("{b:02x}")).collect();
        CallKey {
            namespace: Namespace::default(),
            scope,
            request_hash,
            host_keyed,
        }
    }

    /// The same key in `namespace`.
    #[must_use]
    pub fn in_namespace(mut self, namespace: &Namespace) -> CallKey {
        self.namespace = namespace.clone();
        self
    }

    /// Rebuilds a key from its stored parts.
    pub(crate) fn from_parts(
        namespace: Namespace,
        scope: String,
        request_hash: String,
        host_keyed: bool,
    ) -> CallKey {
        CallKey {
            namespace,
            scope,
            request_hash,
            host_keyed,
        }
    }

    /// The namespace the ask belongs to.
    #[must_use]
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// The scope as stored: `key:…` for a host key, `caller:…` for a caller identity.
    #[must_use]
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The SHA-256 of the canonical request, lower-case hex.
    #[must_use]
    pub fn request_hash(&self) -> &str {
        &self.request_hash
    }

    /// Whether the host gave the key (it widens the redelivery window to the grace period).
    #[must_use]
    pub fn is_host_keyed(&self) -> bool {
        self.host_keyed
    }
}

/// Who asks, as shown to the human (docs/contract.md §9 "Who asks"). Every field is optional
/// so that a newer binary may add fields an older one ignores.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Asker {
    /// The agent's name (the hub: from its token; locally: the host, e.g. `claude-code`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The project or working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The machine's host name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The session title, when the caller has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The operating-system process id of the asking process, when local.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The asking process's identity on its machine ([`crate::this_process`]: boot, pid
    /// namespace and the pid's start time), so a store on the same machine can tell it ended,
    /// also once its pid was reused ([`crate::Liveness`]). Never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

/// What a caller gives to open (or re-attach to) an ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAsk {
    /// The call key, derived from the scope and `request`.
    pub key: CallKey,
    /// The canonical request JSON the answerers show.
    pub request: String,
    /// Who asks.
    pub asker: Asker,
    /// When the ask was made; also "now" for the re-attach decision.
    pub created_at: Timestamp,
    /// How long the ask stays answerable once detached (and, with a host key, how long an
    /// undelivered answer is handed to a retry).
    pub grace: Duration,
}

impl NewAsk {
    /// An ask of `request` (canonical JSON) in `scope`, made now, with the default grace.
    #[must_use]
    pub fn new(scope: &Scope, request: impl Into<String>, asker: Asker) -> NewAsk {
        let request = request.into();
        NewAsk {
            key: CallKey::new(scope, &request),
            request,
            asker,
            created_at: Timestamp::now(),
            grace: DEFAULT_GRACE,
        }
    }

    /// The same ask in `namespace` (see [`Namespace`]).
    #[must_use]
    pub fn in_namespace(mut self, namespace: &Namespace) -> NewAsk {
        self.key = self.key.in_namespace(namespace);
        self
    }

    /// The record of this ask once a store created it as `id`: open, attached, its lease
    /// running from its creation, nothing delivered.
    pub(crate) fn created(&self, id: AskId) -> AskRecord {
        AskRecord {
            id,
            key: self.key.clone(),
            request: self.request.clone(),
            asker: self.asker.clone(),
            created_at: self.created_at,
            grace: self.grace,
            attached: true,
            detached_at: None,
            lease_until: Some(self.created_at.plus(lease())),
            closed: None,
            delivered_at: None,
        }
    }
}

/// Who gave an outcome: the answerer, the channel it came through and the user, as known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Responder {
    /// The answerer (`terminal`, `web`, `inbox`, `hub`, …).
    pub answerer: String,
    /// The channel, when the answer came through one (`slack`, `telegram`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The human, when known (a channel's user, the hub's signed-in user).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The submission's idempotency id, when the surface gave one: one id per act of the
    /// human's, the same on each retry of it (the hub page's `Idempotency-Key`). A retry whose
    /// first attempt was recorded finds its own id here and is told "taken", not "another
    /// answer counted" (docs/contract.md §9 "The human").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submission: Option<String>,
}

impl Responder {
    /// Whether the outcome this responder gave was submitted under idempotency id `id`.
    #[must_use]
    pub fn submitted_as(&self, id: &str) -> bool {
        self.submission.as_deref() == Some(id)
    }
}

/// How an ask closed (docs/contract.md §8 "States").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Outcome {
    /// The human answered: the answer JSON as the host will render it for the model.
    Answered {
        /// The answer, opaque to the store.
        answer: serde_json::Value,
        /// Who answered.
        by: Responder,
    },
    /// The human dismissed the question.
    Dismissed {
        /// Who dismissed.
        by: Responder,
    },
    /// The caller's own `--timeout` elapsed.
    TimedOut,
    /// The caller withdrew the ask, or its grace period ran out while detached.
    Withdrawn,
}

impl Outcome {
    /// The state name stored beside the outcome: `answered`, `dismissed`, `timed_out` or
    /// `withdrawn`.
    #[must_use]
    pub fn state_name(&self) -> &'static str {
        match self {
            Outcome::Answered { .. } => "answered",
            Outcome::Dismissed { .. } => "dismissed",
            Outcome::TimedOut => "timed_out",
            Outcome::Withdrawn => "withdrawn",
        }
    }

    /// Whether this stored outcome is `attempt` itself, recorded by an earlier try of the same
    /// submission: the same decision (the same answer, or a dismissal) under the same
    /// idempotency id ([`Responder::submission`]). A retry after a lost response is then told
    /// its answer was taken; anything else lost to another outcome.
    #[must_use]
    pub fn is_submission_of(&self, attempt: &Outcome) -> bool {
        let (stored, tried) = match (self, attempt) {
            (Outcome::Answered { answer: a, by: x }, Outcome::Answered { answer: b, by: y })
                if a == b =>
            {
                (x, y)
            }
            (Outcome::Dismissed { by: x }, Outcome::Dismissed { by: y }) => (x, y),
            _ => return false,
        };
        tried
            .submission
            .as_deref()
            .is_some_and(|id| stored.submitted_as(id))
    }

    /// Whether a retry of the same call is handed this outcome when it was never delivered:
    /// only the human's decisions (answered, dismissed) are; a timed-out or withdrawn ask is
    /// asked anew.
    #[must_use]
    pub fn is_human_decision(&self) -> bool {
        matches!(self, Outcome::Answered { .. } | Outcome::Dismissed { .. })
    }
}

/// An outcome and when it was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    /// The outcome that counted.
    pub outcome: Outcome,
    /// When it was stored.
    pub at: Timestamp,
}

/// One ask as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskRecord {
    /// The store's id.
    pub id: AskId,
    /// The call key.
    pub key: CallKey,
    /// The canonical request JSON.
    pub request: String,
    /// Who asks.
    pub asker: Asker,
    /// When it was asked.
    pub created_at: Timestamp,
    /// Its grace period.
    pub grace: Duration,
    /// Whether a caller is waiting for it (false: detached, "the agent stopped waiting").
    pub attached: bool,
    /// When it was last detached, while detached.
    pub detached_at: Option<Timestamp>,
    /// Until when the attached caller's lease runs ([`LEASE`]); `None` once the caller detached
    /// itself, and for an ask attached by a binary older than schema 6 (trusted as attached
    /// until it detaches). An ask the sweep detached because this lease lapsed keeps it: that
    /// detach proves nothing about the caller ([`caller_gone`]).
    pub lease_until: Option<Timestamp>,
    /// Its outcome, once closed.
    pub closed: Option<Closed>,
    /// When its outcome was delivered to the model (docs/contract.md §8 "Delivered").
    pub delivered_at: Option<Timestamp>,
}

impl AskRecord {
    /// Whether the ask is still open (attached or detached).
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.closed.is_none()
    }
}

/// What [`crate::Store::open_ask`] found for the call key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// No usable ask had this key: a new open, attached ask.
    Created(AskRecord),
    /// An open ask had this key: the caller re-attaches to it (now marked attached); the human
    /// sees one question, not two.
    Reattached(AskRecord),
    /// An ask with this key was answered (or dismissed) but never delivered, within the
    /// redelivery window: the caller returns its outcome at once and shows nothing.
    Undelivered(AskRecord),
}

impl Opened {
    /// The record, whichever case.
    #[must_use]
    pub fn record(&self) -> &AskRecord {
        match self {
            Opened::Created(r) | Opened::Reattached(r) | Opened::Undelivered(r) => r,
        }
    }
}

/// What the re-attach rule decides for the newest ask with a key (pure; every backend uses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// Create a new ask.
    New,
    /// Re-attach to the open ask.
    Reattach,
    /// Hand the undelivered outcome over.
    Undelivered,
}

/// Whether the caller of `rec` is **proven** gone (docs/contract.md §8 "No answer the human did
/// not give to this call"): its call detached itself (a cancel, a signal, a session or stdio
/// that ended: [`crate::Store::set_attached`] clears the lease), or `liveness` knows its process
/// ended on this boot. Never from a lapsed lease: a stopped process, or one whose clock is
/// behind, stops renewing while it still waits; an ask the sweep detached for a lapsed lease
/// keeps that lease (`lease_until`), which marks the detach as proving nothing.
pub(crate) fn caller_gone(rec: &AskRecord, liveness: &dyn Liveness) -> bool {
    (!rec.attached && rec.lease_until.is_none()) || liveness.is_gone(&rec.asker)
}

/// Whether the call `ask` may re-attach to `rec` (docs/contract.md §8 "Exactly once, made
/// precise"): a keyed call to any ask of its key (same namespace: the key includes it); an
/// unkeyed call only to an ask whose caller is proven gone ([`caller_gone`]), so two live calls
/// are never merged — also not two calls of one process (two MCP sessions of one server, or one
/// session asking again while its first call waits: each call is its own caller); neither to
/// an ask that timed out or was withdrawn. No clock takes part. Every backend picks the newest
/// ask of the key that passes this, among the newest [`CANDIDATES`].
pub(crate) fn candidate(rec: &AskRecord, ask: &NewAsk, liveness: &dyn Liveness) -> bool {
    // A timed-out or withdrawn ask holds no decision: an older ask of the key may (a caller
    // killed while waiting, answered since, whose retry comes after another caller's timeout).
    let holds_nothing = rec
        .closed
        .as_ref()
        .is_some_and(|c| !c.outcome.is_human_decision());
    !holds_nothing && (ask.key.is_host_keyed() || caller_gone(rec, liveness))
}

/// Whether `rec` holds a human's decision its caller never received: the sweep never purges
/// it, whatever its age, since "age" would be the sweeping process's clock, and a process whose
/// clock runs weeks ahead must purge nothing of another's (docs/decisions.md "No clock decides
/// across processes"). The SQL backends say the same in their purge statements.
pub(crate) fn undelivered(rec: &AskRecord) -> bool {
    rec.delivered_at.is_none()
        && rec
            .closed
            .as_ref()
            .is_some_and(|c| c.outcome.is_human_decision())
}

/// How many of a key's newest asks a backend reads to find the [`candidate`]: the ones it
/// skips are held by live callers, so more than this many callers of one question at once in
/// one scope each get a new ask.
pub(crate) const CANDIDATES: i64 = 16;

/// The re-attach rule of docs/contract.md §8 applied to the newest [`candidate`] ask with the
/// key (in its namespace), at `now`.
pub(crate) fn reuse_of(latest: Option<&AskRecord>, now: Timestamp) -> Reuse {
    let Some(rec) = latest else { return Reuse::New };
    let Some(closed) = &rec.closed else {
        return Reuse::Reattach;
    };
    if rec.delivered_at.is_some() || !closed.outcome.is_human_decision() {
        return Reuse::New;
    }
    let window = if rec.key.is_host_keyed() {
        rec.grace
    } else {
        UNKEYED_REDELIVERY_WINDOW
    };
    if now < closed.at.plus(window) {
        Reuse::Undelivered
    } else {
        Reuse::New
    }
}

/// What [`crate::Store::find_ask`] reports for the newest candidate: the ask `open_ask` would
/// re-attach to or hand back at `now`; `None` when it would create one.
pub(crate) fn found(latest: Option<AskRecord>, now: Timestamp) -> Option<AskRecord> {
    match reuse_of(latest.as_ref(), now) {
        Reuse::New => None,
        Reuse::Reattach | Reuse::Undelivered => latest,
    }
}

/// The result of [`crate::Store::record_outcome`]: first outcome wins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// This outcome was the first: it is stored and counts.
    Won,
    /// Another outcome was stored first; this one is discarded. Carries the one that counted,
    /// to show the human.
    Lost(Closed),
}

/// One page of history: closed asks, newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryPage {
    /// Continue after this ask (the last of the previous page); `None` starts at the newest.
    pub after: Option<HistoryCursor>,
    /// At most this many asks.
    pub limit: u32,
}

/// An answer the human gave and its agent received: what an identical question (the same
/// namespace and request) may offer to send again, as the human's own act for the new ask.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenAnswer {
    /// The ask's namespace.
    pub namespace: Namespace,
    /// The hash of the ask's canonical request.
    pub request_hash: String,
    /// When it was answered.
    pub closed_at: Timestamp,
    /// The answers, as stored (`{"answers":[…]}`).
    pub answer: serde_json::Value,
}

/// One page of open asks, newest first (by id, descending): a keyset page, so a page read
/// costs the same however many asks are open (the partial index on open asks' ids serves it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenPage {
    /// Continue with the asks older than this one (the last of the previous page: asks with a
    /// lower id); `None` starts at the newest.
    pub before: Option<AskId>,
    /// At most this many asks.
    pub limit: u32,
}

/// Where a history page ends: the last ask's close time and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryCursor {
    /// The close time of the last ask listed.
    pub closed_at: Timestamp,
    /// Its id.
    pub id: AskId,
}

impl HistoryCursor {
    /// The cursor after `rec`; `None` when `rec` is open.
    #[must_use]
    pub fn after(rec: &AskRecord) -> Option<HistoryCursor> {
        rec.closed.as_ref().map(|c| HistoryCursor {
            closed_at: c.at,
            id: rec.id,
        })
    }
}

/// How long closed asks are kept (docs/contract.md §8); the grace of detached asks is per ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Closed asks older than this (by close time) are purged.
    pub keep_closed: Duration,
}

impl Default for Retention {
    fn default() -> Retention {
        Retention {
            keep_closed: DEFAULT_KEEP_CLOSED,
        }
    }
}

/// What one [`crate::Store::sweep`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swept {
    /// Attached asks whose lease ran out (their asker died), now detached as of the lease's
    /// end.
    pub expired: Vec<AskId>,
    /// Detached asks whose grace ran out, now withdrawn.
    pub withdrawn: Vec<AskId>,
    /// How many closed asks were purged.
    pub purged: u64,
}

/// One entry of the change feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// This ask changed (opened, re-attached, detached, closed, delivered): read it again.
    Ask(AskId),
    /// Changes may have been missed (a reconnect, a lagging reader): re-read everything the
    /// follower cares about.
    Rescan,
}
