//! Revoking an agent's token (docs/contract.md §9 "Abuse"): its asks are closed as revoked,
//! matched by the token's id (never its name), and the page says so ([`AskState::Revoked`]).

use std::collections::HashMap;

use ask_user_store::{AskRecord, NewSecret, Outcome, Store, Timestamp};

use crate::{AdminError, AskState, AskView, KIND_REVOKED, KIND_TOKEN, hash_secret, view_of};

/// Revokes the token(s) of agent `name`: its next request is refused, its waiting requests end
/// (401) within [`REVOCATION_CHECK`](crate::REVOCATION_CHECK) on every replica, and its open asks are closed as
/// [`AskState::Revoked`] (stored as withdrawn, with the token's revocation mark): nothing
/// answers them into that agent, and a token made later under the same name (another id, so
/// another namespace) finds none of them. Asks are matched by the token's id, never by name:
/// a local or MCP caller that calls itself `name` keeps its asks.
///
/// # Errors
/// [`AdminError::NoSuchToken`]; the store's errors.
pub async fn revoke_token(store: &Store, name: &str) -> Result<(), AdminError> {
    let now = Timestamp::now();
    if store.revoke_secrets(KIND_TOKEN, Some(name), now).await? == 0 {
        return Err(AdminError::NoSuchToken(name.to_owned()));
    }
    // Every open ask of a token that is no longer live (this one, or one whose revocation
    // was cut short) is closed, its token marked first so the page says why.
    let mut dead: HashMap<String, bool> = HashMap::new();
    for ask in store.list_open().await? {
        let Some(id) = token_of(&ask) else { continue };
        let revoked = match dead.get(id) {
            Some(revoked) => *revoked,
            None => {
                let revoked = store.check_secret(KIND_TOKEN, id, now).await?.is_none();
                if revoked {
                    mark_revoked(store, id, now).await?;
                }
                dead.insert(id.to_owned(), revoked);
                revoked
            }
        };
        if revoked {
            store
                .record_outcome(ask.id, &Outcome::Withdrawn, now)
                .await?;
        }
    }
    Ok(())
}

/// The id of the hub token whose namespace `ask` is in, if it is a hub ask.
fn token_of(ask: &AskRecord) -> Option<&str> {
    ask.key.namespace().as_str().strip_prefix("token:")
}

/// Marks token `id` revoked at `now` (once: a second mark keeps the first).
async fn mark_revoked(store: &Store, id: &str, now: Timestamp) -> Result<(), AdminError> {
    let hash = hash_secret(&format!("revoked-token:{id}"));
    if store
        .check_secret(KIND_REVOKED, &hash, now)
        .await?
        .is_some()
    {
        return Ok(());
    }
    store
        .add_secret(&NewSecret {
            kind: KIND_REVOKED.to_owned(),
            name: id.to_owned(),
            hash,
            created_at: now,
            expires_at: None,
        })
        .await?;
    Ok(())
}

/// The revoked tokens' marks: token id → when it was revoked.
#[derive(Debug, Default)]
pub(crate) struct RevokedTokens(HashMap<String, Timestamp>);

impl RevokedTokens {
    /// The marks in `store`.
    pub(crate) async fn load(store: &Store) -> Result<RevokedTokens, ask_user_store::Error> {
        Ok(RevokedTokens(
            store
                .list_secrets(KIND_REVOKED)
                .await?
                .into_iter()
                .map(|s| (s.name, s.created_at))
                .collect(),
        ))
    }

    /// [`view_of`] `rec`, with an ask its token's revocation closed as [`AskState::Revoked`].
    pub(crate) fn view(&self, rec: &AskRecord) -> AskView {
        let mut view = view_of(rec);
        let closed_by_revocation = view.state == AskState::Withdrawn
            && token_of(rec)
                .and_then(|id| self.0.get(id))
                .zip(rec.closed.as_ref())
                .is_some_and(|(revoked, closed)| closed.at >= *revoked);
        if closed_by_revocation {
            view.state = AskState::Revoked;
        }
        view
    }
}
