//! Named leases (docs/contract.md §10: "with several hub replicas … one replica polls
//! Telegram"): a row per name saying who holds it until when, so that among processes sharing a
//! store exactly one does a job at a time and another takes over once the holder stops renewing.
//!
//! Every operation is one compare-and-set in the store (an `INSERT … ON CONFLICT DO UPDATE …
//! WHERE` on SQLite and Postgres), so two replicas racing for a free lease get it once. Times
//! are the callers' clocks ([`Timestamp`]): replicas are assumed to agree to well within a
//! lease's length.

use std::time::Duration;

use crate::error::Result;
use crate::model::Timestamp;
use crate::{Backend, Store, statements};

impl Store {
    /// Takes the lease `name` for `holder` until `now + ttl` when it is free, expired (its
    /// `until` is at or before `now`) or already `holder`'s (then it is extended). `true` when
    /// `holder` holds it now; `false` when another holder's lease is still running (nothing
    /// changes then).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn acquire_lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        ttl: Duration,
    ) -> Result<bool> {
        let now = self.at(now);
        let until = now.plus(ttl);
        dispatch_sql!(self, acquire_lease(name, holder, now, until))
    }

    /// Extends `holder`'s running lease `name` to `now + ttl`. `false` when `holder` does not
    /// hold it at `now` (never took it, released it, or let it expire): the caller must stop
    /// the leased work, and may [`Store::acquire_lease`] again.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn renew_lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        ttl: Duration,
    ) -> Result<bool> {
        let now = self.at(now);
        let until = now.plus(ttl);
        dispatch_sql!(self, renew_lease(name, holder, now, until))
    }

    /// Gives up `holder`'s lease `name` at once, so another may take it without waiting for it
    /// to expire. `false` when `holder` did not hold it (nothing changes).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn release_lease(&self, name: &str, holder: &str) -> Result<bool> {
        dispatch_sql!(self, release_lease(name, holder))
    }

    /// Who holds the lease `name` and until when, whether or not it has expired; `None` when
    /// nobody took it or it was released.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn lease(&self, name: &str) -> Result<Option<(String, Timestamp)>> {
        dispatch_sql!(self, lease(name))
    }
}
