//! The writes of an ask's life that are one statement each (docs/decisions.md "Postgres: one
//! round trip per ask and per answer, and group commit"): a detach or attach, taking back a
//! delivery, a lease renewal — the guarded `UPDATE` and its `NOTIFY` in one `WITH`, its own
//! transaction (no `BEGIN`/`COMMIT` round trips). Only when the guard matched nothing (a lost
//! race, a missing ask) a second statement reads the ask, after the first committed. Marking a
//! delivery is a read and a compare-and-set on the outcome text read. New asks and outcomes go
//! through their group commit ([`super::group`]).

use super::{CHANNEL, PgStore, get_raw};
use crate::error::{Error, Result};
use crate::model::{AskId, NewAsk, Outcome, Recorded, Timestamp, lease};
use crate::row::encode_outcome;

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

/// Marks the delivery at `$2` of the outcome stored as `$3`, once, and announces it.
const MARK_DELIVERED: &str = "WITH up AS (\
     UPDATE ask_user_asks SET delivered_at = $2 \
     WHERE id = $1 AND delivered_at IS NULL AND outcome = $3 RETURNING id) \
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

    pub(crate) async fn record_outcome(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<Recorded> {
        let state = outcome.state_name();
        let encoded = encode_outcome(outcome);
        if self.close_open(id, state, encoded, at).await? {
            self.announce(&[id]);
            return Ok(Recorded::Won);
        }
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        // Lost (or missing): read what counted, now that the winner has committed (the update
        // waited for its row lock and found the ask closed).
        let rec = get_raw(&c, id)
            .await?
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
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        if c.execute(sql, &[&id.0, &v]).await? == 1 {
            drop(guard);
            self.announce(&[id]);
            return Ok(());
        }
        match get_raw(&c, id).await? {
            Some(_) => Ok(()),
            None => Err(Error::NotFound(id)),
        }
    }

    /// A compare-and-set on the exact outcome: the ask is read, its outcome compared with
    /// `outcome`, and the delivery marked only while the stored outcome is the text just read
    /// and no delivery is marked (an outcome never changes once stored, so no row lock is
    /// needed): two round trips where a transaction took five.
    pub(crate) async fn mark_delivered(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<bool> {
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        // A delivery taken back between the read and the write makes the write match nothing:
        // read again (each turn follows another call's write, so this ends).
        loop {
            let raw = get_raw(&c, id).await?.ok_or(Error::NotFound(id))?;
            let stored = raw.outcome.clone();
            let rec = raw.into_record(&self.inner.shown)?;
            if rec.closed.is_none_or(|c| c.outcome != *outcome) {
                return Ok(false);
            }
            if rec.delivered_at.is_some() {
                return Ok(true);
            }
            let marked = c.execute(MARK_DELIVERED, &[&id.0, &at.0, &stored]).await?;
            if marked == 1 {
                drop(guard);
                self.announce(&[id]);
                return Ok(true);
            }
        }
    }

    /// Extends the lease in place, with no notification (nothing a follower shows changed).
    pub(crate) async fn renew(&self, id: AskId, at: Timestamp) -> Result<bool> {
        let until = at.plus(lease()).0;
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        if c.execute(RENEW, &[&id.0, &until]).await? == 1 {
            return Ok(true);
        }
        match get_raw(&c, id).await? {
            Some(_) => Ok(false),
            None => Err(Error::NotFound(id)),
        }
    }
}
