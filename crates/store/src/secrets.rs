//! Hashed bearer secrets kept beside the asks (docs/contract.md §9: "every bearer secret is
//! stored hashed"): the hub's agent tokens, login links and sessions live in the same database
//! as the asks, so every hub replica on one Postgres knows them.
//!
//! The store never sees a secret, only its hash (the caller hashes: SHA-256 of 256 random bits
//! leaves nothing to guess). A secret has a kind (`token`, `login`, `session`, …), a name (the
//! agent's name for a token), an optional expiry, and may be used once ([`Store::consume_secret`])
//! or revoked ([`Store::revoke_secrets`]).

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::Timestamp;
use crate::{Backend, Store, statements};

/// A secret to keep: its kind, name, hash and lifetime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSecret {
    /// What the secret is for (`token`, `login`, `session`): lookups are per kind.
    pub kind: String,
    /// Whose it is (an agent's name for a token); several secrets may share a name.
    pub name: String,
    /// The secret's hash (unique across the store), never the secret.
    pub hash: String,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it stops being valid, if ever.
    pub expires_at: Option<Timestamp>,
}

/// A secret as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretRecord {
    /// Its kind.
    pub kind: String,
    /// Whose it is.
    pub name: String,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it stops being valid, if ever.
    pub expires_at: Option<Timestamp>,
    /// When it was used up by [`Store::consume_secret`].
    pub used_at: Option<Timestamp>,
    /// When it was revoked.
    pub revoked_at: Option<Timestamp>,
}

impl SecretRecord {
    /// Whether the secret is usable at `now`: not revoked and not expired (a used secret stays
    /// "live" for [`Store::check_secret`]; single use is [`Store::consume_secret`]'s business).
    #[must_use]
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| now < e)
    }
}

impl Store {
    /// Keeps a new secret.
    ///
    /// # Errors
    /// The backend's errors (a hash already stored is one).
    pub async fn add_secret(&self, secret: &NewSecret) -> Result<()> {
        dispatch_sql!(self, add_secret(secret))
    }

    /// The live secret of `kind` with `hash` at `now` (not revoked, not expired), if any.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn check_secret(
        &self,
        kind: &str,
        hash: &str,
        now: Timestamp,
    ) -> Result<Option<SecretRecord>> {
        dispatch_sql!(self, check_secret(kind, hash, now))
    }

    /// Uses up a single-use secret atomically (across processes and replicas): returns it when
    /// it was live and unused at `now` and marks it used; `None` otherwise (unknown, expired,
    /// revoked or already used — the caller cannot tell which, by design).
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn consume_secret(
        &self,
        kind: &str,
        hash: &str,
        now: Timestamp,
    ) -> Result<Option<SecretRecord>> {
        dispatch_sql!(self, consume_secret(kind, hash, now))
    }

    /// Revokes every unrevoked secret of `kind` named `name` (every one of the kind with
    /// `None`) at `now`; returns how many.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn revoke_secrets(
        &self,
        kind: &str,
        name: Option<&str>,
        now: Timestamp,
    ) -> Result<u64> {
        dispatch_sql!(self, revoke_secrets(kind, name, now))
    }

    /// Every unrevoked secret of `kind`, by name then creation time.
    ///
    /// # Errors
    /// The backend's errors.
    pub async fn list_secrets(&self, kind: &str) -> Result<Vec<SecretRecord>> {
        dispatch_sql!(self, list_secrets(kind))
    }
}
