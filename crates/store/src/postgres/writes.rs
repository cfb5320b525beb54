//! The writes of an ask's life in as few round trips as their rules allow (docs/decisions.md
//! "Postgres: one round trip per ask and per answer").
//!
//! - **A new ask** is one pipeline: `BEGIN`, the key's advisory lock, one statement that
//!   inserts the ask (and sends its `NOTIFY`) only when its key has no ask at all, `COMMIT` —
//!   sent together, answered together: one round trip and the commit's WAL flush. The insert
//!   is a statement of its own after the lock, so under read committed it sees every ask of the
//!   key committed by whoever held the lock before. When the key has asks (a retry, a
//!   re-attach, an undelivered answer), nothing was written and the full rule runs
//!   ([`super::PgStore::open_ask`]'s transaction), which picks among them.
//! - **An outcome, a detach, a lease renewal** is one statement: the guarded `UPDATE` and its
//!   `NOTIFY` in one `WITH`, its own transaction. Only when the guard matched nothing (a lost
//!   race, a missing ask) a second statement reads the ask, after the first committed.
//!
//! Every statement is prepared on the connection before a pipeline is sent, so the pipeline's
//! messages leave in order on the first poll: a caller that stops waiting after that cannot
//! leave the connection inside a transaction (the server runs it to its `COMMIT`).

use tokio_postgres::types::ToSql;

use super::{CHANNEL, PgStore, get_raw};
use crate::error::{Error, Result};
use crate::model::{AskId, AskRecord, NewAsk, Outcome, Recorded, Timestamp, duration_ms, lease};
use crate::row::{encode_asker, encode_outcome};

/// Takes the transaction-scoped advisory lock of a call key.
const LOCK_KEY: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";

/// Inserts a new open, attached ask when its key (`$9`, `$1`, `$2`) has none, and announces it;
/// returns its id, or no row when the key has asks.
const INSERT_IF_NEW: &str = "WITH ins AS (\
     INSERT INTO ask_user_asks (scope, request_hash, host_keyed, request, asker, created_at, \
     grace_ms, attached, lease_until, namespace) \
     SELECT $1::TEXT, $2::TEXT, $3::BOOLEAN, $4::TEXT, $5::TEXT, $6::BIGINT, $7::BIGINT, TRUE, \
     $8::BIGINT, $9::TEXT \
     WHERE NOT EXISTS (SELECT 1 FROM ask_user_asks \
       WHERE namespace = $9::TEXT AND scope = $1::TEXT AND request_hash = $2::TEXT) \
     RETURNING id) \
     SELECT id, pg_notify('ask_user_changes', id::TEXT) FROM ins";

/// First outcome wins: closes the ask when it is open, and announces it.
const RECORD_OUTCOME: &str = "WITH up AS (\
     UPDATE ask_user_asks SET state = $2, outcome = $3, closed_at = $4 \
     WHERE id = $1 AND state = 'open' RETURNING id) \
     SELECT pg_notify('ask_user_changes', id::TEXT) FROM up";

/// Attaches an open ask with a lease until `$2`, and announces it.
pub(super) const ATTACH: &str = "WITH up AS (\
     UPDATE ask_user_asks SET attached = TRUE, detached_at = NULL, lease_until = $2 \
     WHERE id = $1 AND state = 'open' RETURNING id) \
     SELECT pg_notify('ask_user_changes', id::TEXT) FROM up";

/// Detaches an ask at `$2` (a closed one only loses its caller), and announces it.
pub(super) const DETACH: &str = "WITH up AS (\
     UPDATE ask_user_asks SET attached = FALSE, lease_until = NULL, \
     detached_at = CASE WHEN state = 'open' THEN $2 ELSE detached_at END \
     WHERE id = $1 AND (state = 'open' OR attached) RETURNING id) \
     SELECT pg_notify('ask_user_changes', id::TEXT) FROM up";

/// Takes back the delivery marked at `$2`, and announces it.
pub(super) const UNMARK_DELIVERED: &str = "WITH up AS (\
     UPDATE ask_user_asks SET delivered_at = NULL WHERE id = $1 AND delivered_at = $2 \
     RETURNING id) \
     SELECT pg_notify('ask_user_changes', id::TEXT) FROM up";

/// Extends an open, attached ask's lease to `$2` (announced to nobody: nothing shown changed).
const RENEW: &str = "UPDATE ask_user_asks SET lease_until = $2 \
     WHERE id = $1 AND state = 'open' AND attached";

// The statements above name the NOTIFY channel as a literal: it must be this one.
const _: () = assert!(matches!(CHANNEL.as_bytes(), b"ask_user_changes"));

impl PgStore {
    /// The advisory lock's key for `ask`'s call key.
    pub(super) fn lock_key(ask: &NewAsk) -> String {
        format!(
            "{}\n{}\n{}",
            ask.key.namespace().as_str(),
            ask.key.scope(),
            ask.key.request_hash()
        )
    }

    /// A new ask when its key has none yet, in one round trip; `None` (nothing written) when
    /// the key has asks and the full rule must pick among them.
    pub(super) async fn open_new(&self, ask: &NewAsk) -> Result<Option<AskRecord>> {
        let e = |e: tokio_postgres::Error| self.err(&e);
        let lock_key = Self::lock_key(ask);
        let (scope, hash) = (ask.key.scope(), ask.key.request_hash());
        let host_keyed = ask.key.is_host_keyed();
        let asker = encode_asker(&ask.asker);
        let grace = duration_ms(ask.grace);
        let until = ask.created_at.plus(lease());
        let namespace = ask.key.namespace().as_str();
        let params: [&(dyn ToSql + Sync); 9] = [
            &scope,
            &hash,
            &host_keyed,
            &ask.request,
            &asker,
            &ask.created_at.0,
            &grace,
            &until.0,
            &namespace,
        ];
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let cached = conn.cached();
        let lock = cached.stmt(LOCK_KEY).await.map_err(e)?;
        let insert = cached.stmt(INSERT_IF_NEW).await.map_err(e)?;
        let c = &conn.client;
        let lock_params: [&(dyn ToSql + Sync); 1] = [&lock_key];
        // `biased`: polled in this order, so sent in this order, all on the first poll.
        let (begun, locked, inserted, committed) = tokio::join!(
            biased;
            c.batch_execute("BEGIN"),
            c.execute(&lock, &lock_params),
            c.query(&insert, &params),
            c.batch_execute("COMMIT"),
        );
        // The first error is the cause; after it the server rolled the transaction back (its
        // `COMMIT` answers `ROLLBACK`), so nothing of it is stored.
        begun.map_err(e)?;
        locked.map_err(e)?;
        let rows = inserted.map_err(e)?;
        committed.map_err(e)?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let id = AskId(row.try_get(0).map_err(e)?);
        Ok(Some(AskRecord {
            id,
            key: ask.key.clone(),
            request: ask.request.clone(),
            asker: ask.asker.clone(),
            created_at: ask.created_at,
            grace: ask.grace,
            attached: true,
            detached_at: None,
            lease_until: Some(until),
            closed: None,
            delivered_at: None,
        }))
    }

    pub(crate) async fn record_outcome(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<Recorded> {
        let state = outcome.state_name();
        let encoded = encode_outcome(outcome);
        let e = |e: tokio_postgres::Error| self.err(&e);
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        let n = c
            .execute(RECORD_OUTCOME, &[&id.0, &state, &encoded, &at.0])
            .await
            .map_err(e)?;
        if n == 1 {
            drop(guard);
            self.announce(&[id]);
            return Ok(Recorded::Won);
        }
        // Lost (or missing): read what counted, now that the winner has committed (the update
        // waited for its row lock and found the ask closed).
        let rec = get_raw(&c, id)
            .await
            .map_err(e)?
            .ok_or(Error::NotFound(id))?
            .into_record(&self.inner.shown)?;
        rec.closed.map(Recorded::Lost).ok_or(Error::NotFound(id))
    }

    /// One guarded update with its notification (`sql` takes the id and `v`); `Ok(true)` when
    /// it changed the ask, [`Error::NotFound`] when the ask is missing.
    pub(super) async fn guarded_update(
        &self,
        id: AskId,
        sql: &'static str,
        v: Option<i64>,
    ) -> Result<()> {
        let e = |e: tokio_postgres::Error| self.err(&e);
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        if c.execute(sql, &[&id.0, &v]).await.map_err(e)? == 1 {
            drop(guard);
            self.announce(&[id]);
            return Ok(());
        }
        match get_raw(&c, id).await.map_err(e)? {
            Some(_) => Ok(()),
            None => Err(Error::NotFound(id)),
        }
    }

    /// Extends the lease in place, with no notification (nothing a follower shows changed).
    pub(crate) async fn renew(&self, id: AskId, at: Timestamp) -> Result<bool> {
        let until = at.plus(lease()).0;
        let e = |e: tokio_postgres::Error| self.err(&e);
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        if c.execute(RENEW, &[&id.0, &until]).await.map_err(e)? == 1 {
            return Ok(true);
        }
        match get_raw(&c, id).await.map_err(e)? {
            Some(_) => Ok(false),
            None => Err(Error::NotFound(id)),
        }
    }
}
