//! The Postgres backend: the hub's scale-out store (docs/contract.md §9 "Scale-out").
//!
//! First outcome wins by a guarded `UPDATE … WHERE state = 'open'` (Postgres re-checks the guard
//! after waiting for a concurrent writer's row lock, so exactly one writer matches). Opening an
//! ask takes a transaction-scoped advisory lock on its call key, so two replicas opening the same
//! key at once agree on one ask. Every write sends `NOTIFY ask_user_changes, '<id>'` in its
//! transaction (delivered at commit); a follower's listener connection reconnects with backoff
//! and yields [`Change::Rescan`] after every reconnect, so nothing is missed.
//!
//! New asks and outcomes commit in groups ([`group`]): those that arrive while earlier ones
//! commit share one pipelined transaction (one round trip, one WAL flush); each caller is
//! answered after its group's `COMMIT`. The other one-statement writes skip `BEGIN`/`COMMIT`
//! ([`writes`]).
//!
//! One process talks to the server over a pool of [`POOL_SIZE`] query connections (an
//! operation takes a free one, or waits for the next), each opened on first use and again
//! after it closed, plus one listening connection, opened at the first
//! [`crate::Store::subscribe`]. Every connection is held to production timeouts unless the URL
//! sets its own ([`tuned`]): [`CONNECT_TIMEOUT`] to connect, TCP keepalives and a
//! [`TCP_USER_TIMEOUT`] (a half-open connection — a server gone without a word — fails within
//! it instead of stalling every operation queued behind it), and a server-side
//! `statement_timeout` of [`STATEMENT_TIMEOUT`]. Connections are plain TCP or a Unix socket
//! (no TLS yet).
//!
//! Connecting and migrating is [`connect`](mod@connect); every statement runs through [`cached`], where the
//! driver's errors become the store's.

mod cached;
mod connect;
mod group;
mod writes;

use std::future::poll_fn;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard, Notify, broadcast};
use tokio_postgres::{AsyncMessage, Client, GenericClient};

use cached::{Cached, Conn};
#[cfg(doc)]
use connect::{CLOCK_TOLERANCE_MS, CONNECT_TIMEOUT, STATEMENT_TIMEOUT, TCP_USER_TIMEOUT, tuned};
use connect::{PgConnection, connect, listen_connect, measure_skew, migrate, shown_of};

use crate::channel::{ChannelToken, Spend};
use crate::error::{Error, Result};
use crate::feed::{FEED_CAPACITY, Feed};
use crate::liveness::Liveness;
use crate::model::found;
use crate::model::{
    AskId, AskRecord, CANDIDATES, Change, NewAsk, Opened, Outcome, Retention, Reuse, Swept,
    Timestamp, candidate, duration_ms, lease, reuse_of,
};
use crate::row::{COLUMNS, RawAsk, encode_asker, encode_outcome};
use crate::statements::{Cell, Param, SqlDb, Statements};

/// The NOTIFY channel.
const CHANNEL: &str = "ask_user_changes";

/// The longest pause between two reconnect attempts of the listener.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How many query connections one process keeps.
pub(crate) const POOL_SIZE: usize = 4;

/// A pooled query connection in use, with the permit that let the caller take it (the
/// connection is unlocked before the permit returns: fields drop in order).
pub(crate) struct Pooled<'a> {
    guard: MutexGuard<'a, Option<Conn>>,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Option<Conn>;
    fn deref(&self) -> &Option<Conn> {
        &self.guard
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Option<Conn> {
        &mut self.guard
    }
}

#[derive(Debug, Clone)]
pub(crate) struct PgStore {
    inner: Arc<Inner>,
}

struct Inner {
    /// The URL as given, with its password: only [`connect()`] reads it.
    url: ask_user_core::Secret,
    shown: String,
    clients: Vec<Mutex<Option<Conn>>>,
    next: std::sync::atomic::AtomicUsize,
    /// One permit per query connection: see [`PgStore::client`].
    free: tokio::sync::Semaphore,
    tx: broadcast::Sender<Change>,
    listener: OnceLock<()>,
    listener_init: Mutex<()>,
    shutdown: Arc<Notify>,
    /// Where new asks and outcomes queue for their group commit.
    intakes: group::Intakes,
    /// The database's clock minus this process's, in ms (0 within [`CLOCK_TOLERANCE_MS`]):
    /// see [`PgStore::skew_ms`].
    skew_ms: i64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shutdown.notify_one();
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("server", &self.shown)
            .finish_non_exhaustive()
    }
}

fn read_row(r: &tokio_postgres::Row) -> std::result::Result<RawAsk, tokio_postgres::Error> {
    Ok(RawAsk {
        id: r.try_get(0)?,
        scope: r.try_get(1)?,
        request_hash: r.try_get(2)?,
        host_keyed: r.try_get(3)?,
        request: r.try_get(4)?,
        asker: r.try_get(5)?,
        created_at: r.try_get(6)?,
        grace_ms: r.try_get(7)?,
        attached: r.try_get(8)?,
        detached_at: r.try_get(9)?,
        outcome: r.try_get(10)?,
        closed_at: r.try_get(11)?,
        delivered_at: r.try_get(12)?,
        lease_until: r.try_get(13)?,
        namespace: r.try_get(14)?,
    })
}

async fn notify_ids(c: &Cached<'_, impl GenericClient + Sync>, ids: &[AskId]) -> Result<()> {
    for id in ids {
        c.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &id.0.to_string()])
            .await?;
    }
    Ok(())
}

async fn get_raw(c: &Cached<'_, impl GenericClient + Sync>, id: AskId) -> Result<Option<RawAsk>> {
    // The primary key: one row at most.
    let rows = c
        .rows(
            &format!("SELECT {COLUMNS} FROM ask_user_asks WHERE id = $1"),
            &[&id.0],
            read_row,
        )
        .await?;
    Ok(rows.into_iter().next())
}

impl PgStore {
    pub(crate) async fn open(url: &str) -> Result<PgStore> {
        let shown = shown_of(url);
        let (client, conn) = connect(url, &shown).await?;
        tokio::spawn(conn);
        let mut first = Conn::new(client, &shown);
        migrate(&mut first).await?;
        let skew_ms = measure_skew(&first).await?;
        let (tx, _) = broadcast::channel(FEED_CAPACITY);
        let (intakes, start_intakes) = group::Intakes::start();
        let store = PgStore {
            inner: Arc::new(Inner {
                url: url.into(),
                shown,
                clients: std::iter::once(Mutex::new(Some(first)))
                    .chain((1..POOL_SIZE).map(|_| Mutex::new(None)))
                    .collect(),
                next: std::sync::atomic::AtomicUsize::new(0),
                free: tokio::sync::Semaphore::new(POOL_SIZE),
                tx,
                listener: OnceLock::new(),
                listener_init: Mutex::new(()),
                shutdown: Arc::new(Notify::new()),
                intakes,
                skew_ms,
            }),
        };
        start_intakes(Arc::downgrade(&store.inner));
        Ok(store)
    }

    pub(crate) fn location(&self) -> &str {
        &self.inner.shown
    }

    /// The database's clock minus this process's, in ms, measured when the store opened; 0
    /// when they agree within 2 s. Every time a caller hands this store is moved by it
    /// (`Store::at`), so every process on one database decides on one clock.
    pub(crate) fn skew_ms(&self) -> i64 {
        self.inner.skew_ms
    }

    fn no_connection(&self) -> Error {
        Error::backend(&self.inner.shown, "no connection")
    }

    /// A query connection of the pool: the first to be free (a free one with a live
    /// connection, else any free one), (re)connecting when it has none or it closed.
    async fn client(&self) -> Result<Pooled<'_>> {
        // Every slot is locked only while its permit is held, so holding one means a slot is
        // free: a caller waits for whichever connection frees first, not for a given one (a
        // read never queues behind a group commit's flush while another connection is idle).
        let permit = self
            .inner
            .free
            .acquire()
            .await
            .map_err(|_| self.no_connection())?;
        let clients = &self.inner.clients;
        let mut free = None;
        for slot in clients {
            if let Ok(guard) = slot.try_lock() {
                if guard.as_ref().is_some_and(|c| !c.client.is_closed()) {
                    return Ok(Pooled {
                        guard,
                        _permit: permit,
                    });
                }
                free.get_or_insert(guard);
            }
        }
        let mut guard = match free {
            Some(guard) => guard,
            None => {
                // Not reached while the permits match the slots; waiting in turn is safe anyway.
                let turn = self
                    .inner
                    .next
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                clients[turn % clients.len()].lock().await
            }
        };
        if guard.as_ref().is_none_or(|c| c.client.is_closed()) {
            let (client, conn) = connect(self.inner.url.expose(), &self.inner.shown).await?;
            tokio::spawn(conn);
            // A new connection: the statements prepared on the old one are gone with it.
            *guard = Some(Conn::new(client, &self.inner.shown));
        }
        Ok(Pooled {
            guard,
            _permit: permit,
        })
    }

    /// Runs `f` in a transaction on the query connection.
    async fn in_tx<T>(
        &self,
        f: impl AsyncFnOnce(&Cached<'_, tokio_postgres::Transaction<'_>>) -> Result<T>,
    ) -> Result<T> {
        let mut guard = self.client().await?;
        let conn = guard.as_mut().ok_or_else(|| self.no_connection())?;
        conn.in_tx(f).await
    }

    fn announce(&self, ids: &[AskId]) {
        // This process's followers hear it from the listener too; telling them at once saves
        // a round trip.
        for id in ids {
            let _ = self.inner.tx.send(Change::Ask(*id));
        }
    }

    pub(crate) async fn open_ask(
        &self,
        ask: &NewAsk,
        liveness: Arc<dyn Liveness>,
    ) -> Result<Opened> {
        if let Some(rec) = self.open_new(ask).await? {
            self.announce(&[rec.id]);
            return Ok(Opened::Created(rec));
        }
        // The key has asks: the full rule, in a transaction under the key's lock.
        let opened = self
            .in_tx(async |tx| {
                let lock_key = Self::lock_key(ask);
                tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &[&lock_key])
                    .await?;
                let latest = self.newest_candidate(tx, ask, &*liveness).await?;
                match (reuse_of(latest.as_ref(), ask.created_at), latest) {
                    (Reuse::Undelivered, Some(rec)) => Ok(Opened::Undelivered(rec)),
                    (Reuse::Reattach, Some(mut rec)) => {
                        let until = ask.created_at.plus(lease());
                        tx.execute(
                            "UPDATE ask_user_asks SET attached = TRUE, detached_at = NULL, lease_until = $2 \
                             WHERE id = $1",
                            &[&rec.id.0, &until.0],
                        )
                        .await?;
                        notify_ids(tx, &[rec.id]).await?;
                        rec.attached = true;
                        rec.detached_at = None;
                        rec.lease_until = Some(until);
                        Ok(Opened::Reattached(rec))
                    }
                    _ => {
                        let ids = tx
                            .rows(
                                "INSERT INTO ask_user_asks (scope, request_hash, host_keyed, request, asker, \
                                 created_at, grace_ms, attached, lease_until, namespace) \
                                 VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, $8, $9) RETURNING id",
                                &[
                                    &ask.key.scope(),
                                    &ask.key.request_hash(),
                                    &ask.key.is_host_keyed(),
                                    &ask.request,
                                    &encode_asker(&ask.asker),
                                    &ask.created_at.0,
                                    &duration_ms(ask.grace),
                                    &ask.created_at.plus(lease()).0,
                                    &ask.key.namespace().as_str(),
                                ],
                                |r| r.try_get(0).map(AskId),
                            )
                            .await?;
                        let id = tx.one(ids)?;
                        notify_ids(tx, &[id]).await?;
                        Ok(Opened::Created(ask.created(id)))
                    }
                }
            })
            .await?;
        if !matches!(opened, Opened::Undelivered(_)) {
            self.announce(&[opened.record().id]);
        }
        Ok(opened)
    }

    pub(crate) async fn set_attached(
        &self,
        id: AskId,
        attached: bool,
        at: Timestamp,
    ) -> Result<()> {
        if attached {
            self.guarded_update(id, writes::ATTACH, Some(at.plus(lease()).0))
                .await
        } else {
            self.guarded_update(id, writes::DETACH, Some(at.0)).await
        }
    }

    pub(crate) async fn unmark_delivered(&self, id: AskId, at: Timestamp) -> Result<()> {
        self.guarded_update(id, writes::UNMARK_DELIVERED, Some(at.0))
            .await
    }

    /// The newest ask of `ask`'s key a call may re-attach to (model.rs `candidate`), among the
    /// key's newest [`CANDIDATES`].
    async fn newest_candidate<C: tokio_postgres::GenericClient + Sync>(
        &self,
        client: &Cached<'_, C>,
        ask: &NewAsk,
        liveness: &dyn Liveness,
    ) -> Result<Option<AskRecord>> {
        let rows = client
            .rows(
                &format!(
                    "SELECT {COLUMNS} FROM ask_user_asks WHERE namespace = $1 AND scope = $2 \
                     AND request_hash = $3 ORDER BY id DESC LIMIT $4"
                ),
                &[
                    &ask.key.namespace().as_str(),
                    &ask.key.scope(),
                    &ask.key.request_hash(),
                    &CANDIDATES,
                ],
                read_row,
            )
            .await?;
        for raw in rows {
            let rec = raw.into_record(&self.inner.shown)?;
            if candidate(&rec, ask, liveness) {
                return Ok(Some(rec));
            }
        }
        Ok(None)
    }

    pub(crate) async fn find_ask(
        &self,
        ask: &NewAsk,
        liveness: Arc<dyn Liveness>,
    ) -> Result<Option<AskRecord>> {
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let latest = self
            .newest_candidate(&conn.cached(), ask, &*liveness)
            .await?;
        Ok(found(latest, ask.created_at))
    }

    pub(crate) async fn sweep(&self, now: Timestamp, retention: Retention) -> Result<Swept> {
        let withdrawn_json = encode_outcome(&Outcome::Withdrawn);
        let cutoff = now.0.saturating_sub(duration_ms(retention.keep_closed));
        let swept = self
            .in_tx(async |tx| {
                let expired = tx
                    .rows(
                        "UPDATE ask_user_asks SET attached = FALSE, detached_at = lease_until \
                         WHERE state = 'open' AND attached AND lease_until IS NOT NULL \
                         AND lease_until <= $1 RETURNING id",
                        &[&now.0],
                        |r| r.try_get(0).map(AskId),
                    )
                    .await?;
                notify_ids(tx, &expired).await?;
                let withdrawn = tx
                    .rows(
                        "UPDATE ask_user_asks SET state = 'withdrawn', outcome = $2, closed_at = $1 \
                         WHERE state = 'open' AND NOT attached AND detached_at + grace_ms <= $1 RETURNING id",
                        &[&now.0, &withdrawn_json],
                        |r| r.try_get(0).map(AskId),
                    )
                    .await?;
                notify_ids(tx, &withdrawn).await?;
                let purged = tx
                    .execute("DELETE FROM ask_user_asks WHERE state <> 'open' AND closed_at <= $1 \
                     AND (delivered_at IS NOT NULL OR state NOT IN ('answered', 'dismissed'))", &[&cutoff])
                    .await?;
                tx.batch_execute(
                    "DELETE FROM ask_user_channel_tokens WHERE ask NOT IN (SELECT id FROM ask_user_asks); \
                     DELETE FROM ask_user_channel_messages WHERE ask NOT IN (SELECT id FROM ask_user_asks);",
                )
                .await?;
                Ok(Swept { expired, withdrawn, purged })
            })
            .await?;
        self.announce(&swept.expired);
        self.announce(&swept.withdrawn);
        Ok(swept)
    }

    pub(crate) async fn spend_channel_token(
        &self,
        hash: &str,
        ask: AskId,
        channel: &str,
        at: Timestamp,
    ) -> Result<Spend> {
        self.in_tx(async |tx| {
            let rows = tx
                .rows(
                    "SELECT ask, channel, choice, user_id, used_at FROM ask_user_channel_tokens \
                     WHERE hash = $1 FOR UPDATE",
                    &[&hash],
                    |r| {
                        Ok((
                            r.try_get::<_, i64>(0)?,
                            r.try_get::<_, String>(1)?,
                            r.try_get::<_, String>(2)?,
                            r.try_get::<_, Option<String>>(3)?,
                            r.try_get::<_, Option<i64>>(4)?,
                        ))
                    },
                )
                .await?;
            // The primary key: one row at most.
            let Some((a, ch, choice, user, used)) = rows.into_iter().next() else {
                return Ok(Spend::Unknown);
            };
            if a != ask.0 || ch != channel {
                return Ok(Spend::Elsewhere);
            }
            if used.is_some() {
                return Ok(Spend::Used);
            }
            tx.execute(
                "UPDATE ask_user_channel_tokens SET used_at = $2 WHERE hash = $1",
                &[&hash, &at.0],
            )
            .await?;
            Ok(Spend::Spent(ChannelToken {
                hash: hash.to_owned(),
                ask: AskId(a),
                channel: ch,
                choice,
                user,
            }))
        })
        .await
    }

    pub(crate) async fn subscribe(&self) -> Result<Feed> {
        let rx = self.inner.tx.subscribe();
        if self.inner.listener.get().is_none() {
            let _guard = self.inner.listener_init.lock().await;
            if self.inner.listener.get().is_none() {
                // LISTEN is in place before subscribe returns: a change committed after it is
                // announced.
                let (client, conn) =
                    listen_connect(self.inner.url.expose(), &self.inner.shown).await?;
                tokio::spawn(listen_loop(
                    Arc::downgrade(&self.inner),
                    self.inner.shutdown.clone(),
                    self.inner.url.clone(),
                    self.inner.shown.clone(),
                    client,
                    conn,
                ));
                let _ = self.inner.listener.set(());
            }
        }
        Ok(Feed::new(rx))
    }
}

/// Forwards notifications to the feed; reconnects with backoff after a lost connection and
/// then announces [`Change::Rescan`]. Ends when the store is dropped.
async fn listen_loop(
    weak: Weak<Inner>,
    shutdown: Arc<Notify>,
    url: ask_user_core::Secret,
    shown: String,
    mut client: Client,
    mut conn: PgConnection,
) {
    loop {
        loop {
            let msg = tokio::select! {
                m = poll_fn(|cx| conn.poll_message(cx)) => m,
                () = shutdown.notified() => return,
            };
            let Some(inner) = weak.upgrade() else { return };
            match msg {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    let change = n
                        .payload()
                        .parse()
                        .map_or(Change::Rescan, |id| Change::Ask(AskId(id)));
                    let _ = inner.tx.send(change);
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            }
        }
        drop(client);
        let mut delay = Duration::from_millis(50);
        loop {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = shutdown.notified() => return,
            }
            if weak.strong_count() == 0 {
                return;
            }
            match listen_connect(url.expose(), &shown).await {
                Ok((c, k)) => {
                    client = c;
                    conn = k;
                    if let Some(inner) = weak.upgrade() {
                        let _ = inner.tx.send(Change::Rescan);
                    }
                    break;
                }
                Err(e) => {
                    tracing::debug!(%e, "store listener reconnect failed");
                    delay = (delay * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

impl Param {
    fn as_pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        match self {
            Param::Int(i) => i,
            Param::Text(t) => t,
            Param::OptInt(i) => i,
            Param::OptText(t) => t,
        }
    }
}

fn cells_of(r: &tokio_postgres::Row) -> std::result::Result<Vec<Cell>, tokio_postgres::Error> {
    use tokio_postgres::types::Type;
    (0..r.len())
        .map(|i| {
            let ty = r.columns()[i].type_();
            Ok(if *ty == Type::BOOL {
                r.try_get::<_, Option<bool>>(i)?
                    .map_or(Cell::Null, Cell::Bool)
            } else if *ty == Type::INT8 {
                r.try_get::<_, Option<i64>>(i)?
                    .map_or(Cell::Null, Cell::Int)
            } else if *ty == Type::INT4 {
                r.try_get::<_, Option<i32>>(i)?
                    .map_or(Cell::Null, |v| Cell::Int(v.into()))
            } else {
                r.try_get::<_, Option<String>>(i)?
                    .map_or(Cell::Null, Cell::Text)
            })
        })
        .collect()
}

impl SqlDb for PgStore {
    const STATEMENTS: &'static Statements = &crate::statements::POSTGRES;

    fn location(&self) -> &str {
        &self.inner.shown
    }

    async fn execute(&self, sql: &'static str, params: Vec<Param>) -> Result<u64> {
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let refs: Vec<_> = params.iter().map(Param::as_pg).collect();
        conn.cached().execute(sql, &refs).await
    }

    async fn rows(
        &self,
        sql: &'static str,
        params: Vec<Param>,
        _write: bool,
    ) -> Result<Vec<Vec<Cell>>> {
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let refs: Vec<_> = params.iter().map(Param::as_pg).collect();
        conn.cached().rows(sql, &refs, cells_of).await
    }
}
