//! The memory backend: tests and embedders. Same contract as the others, nothing durable.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;

use crate::channel::{ChannelToken, Spend};
use crate::error::{Error, Result};
use crate::feed::{FEED_CAPACITY, Feed};
use crate::liveness::Liveness;
use crate::model::{
    AskId, AskRecord, CANDIDATES, CallKey, Change, Closed, GivenAnswer, HistoryPage, NewAsk,
    Opened, Outcome, Recorded, Retention, Reuse, Swept, Timestamp, candidate, duration_ms, lease,
    reuse_of,
};
use crate::model::{found, undelivered};
use crate::secrets::{NewSecret, SecretRecord};

#[derive(Debug, Clone)]
pub(crate) struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    tx: broadcast::Sender<Change>,
}

#[derive(Debug, Default)]
struct Inner {
    asks: BTreeMap<AskId, AskRecord>,
    /// The ids of each call key's asks, oldest first: an open finds its key's newest asks
    /// without looking at any other ask.
    by_key: HashMap<CallKey, Vec<AskId>>,
    /// The ids of the open asks, kept with every change that opens or closes one: the inbox's
    /// count and pages read it, whatever the number of asks.
    open: BTreeSet<AskId>,
    next_id: i64,
    /// Channel tokens by hash, with when each was spent.
    tokens: BTreeMap<String, (ChannelToken, Option<Timestamp>)>,
    /// (ask, channel) → (reference once sent, whether its close was claimed).
    messages: BTreeMap<(AskId, String), (Option<String>, bool)>,
    /// Hashed secrets by hash (docs/contract.md §9).
    secrets: BTreeMap<String, SecretRecord>,
    /// Named leases: name → (holder, until).
    leases: BTreeMap<String, (String, Timestamp)>,
}

impl Inner {
    /// The newest ask of `ask`'s key a call may re-attach to ([`candidate`]), among the key's
    /// newest [`CANDIDATES`]: found through the key's index, whatever the number of asks.
    fn newest_candidate(&self, ask: &NewAsk, liveness: &dyn Liveness) -> Option<AskRecord> {
        self.by_key
            .get(&ask.key)?
            .iter()
            .rev()
            .filter_map(|id| self.asks.get(id))
            .take(usize::try_from(CANDIDATES).unwrap_or(usize::MAX))
            .find(|r| candidate(r, ask, liveness))
            .cloned()
    }
}

impl MemoryStore {
    pub(crate) fn new() -> MemoryStore {
        let (tx, _) = broadcast::channel(FEED_CAPACITY);
        MemoryStore {
            inner: Arc::new(Mutex::new(Inner::default())),
            tx,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the map consistent (each write is one
        // assignment), so a poisoned lock is still usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn announce(&self, id: AskId) {
        let _ = self.tx.send(Change::Ask(id));
    }

    pub(crate) async fn open_ask(
        &self,
        ask: &NewAsk,
        liveness: Arc<dyn Liveness>,
    ) -> Result<Opened> {
        let opened = {
            let mut inner = self.lock();
            let latest = inner.newest_candidate(ask, &*liveness);
            match (reuse_of(latest.as_ref(), ask.created_at), latest) {
                (Reuse::Reattach, Some(mut rec)) => {
                    rec.attached = true;
                    rec.detached_at = None;
                    rec.lease_until = Some(ask.created_at.plus(lease()));
                    inner.asks.insert(rec.id, rec.clone());
                    Opened::Reattached(rec)
                }
                (Reuse::Undelivered, Some(rec)) => return Ok(Opened::Undelivered(rec)),
                _ => {
                    inner.next_id += 1;
                    let rec = ask.created(AskId(inner.next_id));
                    inner.asks.insert(rec.id, rec.clone());
                    inner.open.insert(rec.id);
                    inner
                        .by_key
                        .entry(rec.key.clone())
                        .or_default()
                        .push(rec.id);
                    Opened::Created(rec)
                }
            }
        };
        self.announce(opened.record().id);
        Ok(opened)
    }

    pub(crate) async fn find_ask(
        &self,
        ask: &NewAsk,
        liveness: Arc<dyn Liveness>,
    ) -> Result<Option<AskRecord>> {
        let latest = self.lock().newest_candidate(ask, &*liveness);
        Ok(found(latest, ask.created_at))
    }

    pub(crate) async fn record_outcome(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<Recorded> {
        let recorded = {
            let mut inner = self.lock();
            let inner = &mut *inner;
            let rec = inner.asks.get_mut(&id).ok_or(Error::NotFound(id))?;
            match &rec.closed {
                Some(c) => return Ok(Recorded::Lost(c.clone())),
                None => {
                    rec.closed = Some(Closed {
                        outcome: outcome.clone(),
                        at,
                    });
                    inner.open.remove(&id);
                    Recorded::Won
                }
            }
        };
        self.announce(id);
        Ok(recorded)
    }

    pub(crate) async fn set_attached(
        &self,
        id: AskId,
        attached: bool,
        at: Timestamp,
    ) -> Result<()> {
        {
            let mut inner = self.lock();
            let rec = inner.asks.get_mut(&id).ok_or(Error::NotFound(id))?;
            if !rec.is_open() {
                // A closed ask only loses its caller (an unkeyed retry may then collect it).
                if attached || !rec.attached {
                    return Ok(());
                }
                rec.attached = false;
                rec.lease_until = None;
                drop(inner);
                self.announce(id);
                return Ok(());
            }
            rec.attached = attached;
            rec.detached_at = if attached { None } else { Some(at) };
            rec.lease_until = attached.then(|| at.plus(lease()));
        }
        self.announce(id);
        Ok(())
    }

    pub(crate) async fn mark_delivered(
        &self,
        id: AskId,
        outcome: &Outcome,
        at: Timestamp,
    ) -> Result<bool> {
        {
            let mut inner = self.lock();
            let rec = inner.asks.get_mut(&id).ok_or(Error::NotFound(id))?;
            if rec.closed.as_ref().is_none_or(|c| c.outcome != *outcome) {
                return Ok(false);
            }
            if rec.delivered_at.is_some() {
                return Ok(true);
            }
            rec.delivered_at = Some(at);
        }
        self.announce(id);
        Ok(true)
    }

    pub(crate) async fn unmark_delivered(&self, id: AskId, at: Timestamp) -> Result<()> {
        {
            let mut inner = self.lock();
            let rec = inner.asks.get_mut(&id).ok_or(Error::NotFound(id))?;
            if rec.delivered_at != Some(at) {
                return Ok(());
            }
            rec.delivered_at = None;
        }
        self.announce(id);
        Ok(())
    }

    pub(crate) async fn get(&self, id: AskId) -> Result<AskRecord> {
        self.lock()
            .asks
            .get(&id)
            .cloned()
            .ok_or(Error::NotFound(id))
    }

    pub(crate) async fn list_open(&self) -> Result<Vec<AskRecord>> {
        Ok(self
            .lock()
            .asks
            .values()
            .rev()
            .filter(|r| r.is_open())
            .cloned()
            .collect())
    }

    pub(crate) async fn history(&self, page: HistoryPage) -> Result<Vec<AskRecord>> {
        let inner = self.lock();
        let mut closed: Vec<&AskRecord> = inner
            .asks
            .values()
            .filter(|r| match (&r.closed, page.after) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(c), Some(cur)) => (c.at, r.id) < (cur.closed_at, cur.id),
            })
            .collect();
        closed.sort_by_key(|r| std::cmp::Reverse((r.closed.as_ref().map(|c| c.at), r.id)));
        Ok(closed
            .into_iter()
            .take(page.limit as usize)
            .cloned()
            .collect())
    }

    pub(crate) async fn given_answers(&self, lookback: u32) -> Result<Vec<GivenAnswer>> {
        let recent = self
            .history(HistoryPage {
                after: None,
                limit: lookback,
            })
            .await?;
        Ok(recent
            .into_iter()
            .filter(|r| r.delivered_at.is_some())
            .filter_map(|r| match r.closed {
                Some(Closed {
                    outcome: Outcome::Answered { answer, .. },
                    at,
                }) => Some(GivenAnswer {
                    namespace: r.key.namespace().clone(),
                    request_hash: r.key.request_hash().to_owned(),
                    closed_at: at,
                    answer,
                }),
                _ => None,
            })
            .collect())
    }

    pub(crate) async fn sweep(&self, now: Timestamp, retention: Retention) -> Result<Swept> {
        let mut swept = Swept::default();
        {
            let mut inner = self.lock();
            for rec in inner.asks.values_mut() {
                if let (true, true, Some(until)) = (rec.is_open(), rec.attached, rec.lease_until)
                    && until <= now
                {
                    // The lapsed lease is kept: this detach proves nothing (model::caller_gone).
                    rec.attached = false;
                    rec.detached_at = Some(until);
                    swept.expired.push(rec.id);
                }
            }
            for rec in inner.asks.values_mut() {
                if let (true, false, Some(d)) = (rec.is_open(), rec.attached, rec.detached_at)
                    && d.plus(rec.grace) <= now
                {
                    rec.closed = Some(Closed {
                        outcome: Outcome::Withdrawn,
                        at: now,
                    });
                    swept.withdrawn.push(rec.id);
                }
            }
            for id in &swept.withdrawn {
                inner.open.remove(id);
            }
            let cutoff = Timestamp(now.0.saturating_sub(duration_ms(retention.keep_closed)));
            let before = inner.asks.len();
            inner
                .asks
                .retain(|_, r| r.closed.as_ref().is_none_or(|c| c.at > cutoff) || undelivered(r));
            swept.purged = (before - inner.asks.len()) as u64;
            let Inner {
                asks,
                by_key,
                tokens,
                messages,
                ..
            } = &mut *inner;
            by_key.retain(|_, ids| {
                ids.retain(|id| asks.contains_key(id));
                !ids.is_empty()
            });
            tokens.retain(|_, (t, _)| asks.contains_key(&t.ask));
            messages.retain(|(a, _), _| asks.contains_key(a));
        }
        for id in swept.expired.iter().chain(&swept.withdrawn) {
            self.announce(*id);
        }
        Ok(swept)
    }

    pub(crate) async fn put_channel_token(&self, token: &ChannelToken) -> Result<()> {
        let mut inner = self.lock();
        if inner.tokens.contains_key(&token.hash) {
            return Err(Error::backend("memory", "channel token stored twice"));
        }
        inner
            .tokens
            .insert(token.hash.clone(), (token.clone(), None));
        Ok(())
    }

    pub(crate) async fn channel_token(&self, hash: &str) -> Result<Option<(ChannelToken, bool)>> {
        Ok(self
            .lock()
            .tokens
            .get(hash)
            .map(|(t, used)| (t.clone(), used.is_some())))
    }

    pub(crate) async fn spend_channel_token(
        &self,
        hash: &str,
        ask: AskId,
        channel: &str,
        at: Timestamp,
    ) -> Result<Spend> {
        let mut inner = self.lock();
        let Some((t, used)) = inner.tokens.get_mut(hash) else {
            return Ok(Spend::Unknown);
        };
        if t.ask != ask || t.channel != channel {
            return Ok(Spend::Elsewhere);
        }
        if used.is_some() {
            return Ok(Spend::Used);
        }
        *used = Some(at);
        Ok(Spend::Spent(t.clone()))
    }

    pub(crate) async fn claim_channel_send(&self, ask: AskId, channel: &str) -> Result<bool> {
        let mut inner = self.lock();
        let key = (ask, channel.to_owned());
        if inner.messages.contains_key(&key) {
            return Ok(false);
        }
        inner.messages.insert(key, (None, false));
        Ok(true)
    }

    pub(crate) async fn set_channel_reference(
        &self,
        ask: AskId,
        channel: &str,
        reference: &str,
    ) -> Result<()> {
        if let Some(m) = self.lock().messages.get_mut(&(ask, channel.to_owned())) {
            m.0 = Some(reference.to_owned());
        }
        Ok(())
    }

    pub(crate) async fn claim_channel_closes(
        &self,
        ask: AskId,
        _at: Timestamp,
    ) -> Result<Vec<(String, String)>> {
        let mut inner = self.lock();
        let mut out = Vec::new();
        for ((a, ch), (reference, closed)) in inner.messages.iter_mut() {
            if let (true, Some(r), false) = (*a == ask, reference.as_ref(), *closed) {
                *closed = true;
                out.push((ch.clone(), r.clone()));
            }
        }
        Ok(out)
    }

    pub(crate) async fn subscribe(&self) -> Result<Feed> {
        Ok(Feed::new(self.tx.subscribe()))
    }

    pub(crate) async fn add_secret(&self, secret: &NewSecret) -> Result<()> {
        let mut inner = self.lock();
        if inner.secrets.contains_key(&secret.hash) {
            return Err(Error::backend(
                "memory",
                "this secret hash is already stored",
            ));
        }
        inner.secrets.insert(
            secret.hash.clone(),
            SecretRecord {
                kind: secret.kind.clone(),
                name: secret.name.clone(),
                created_at: secret.created_at,
                expires_at: secret.expires_at,
                used_at: None,
                revoked_at: None,
            },
        );
        Ok(())
    }

    pub(crate) async fn check_secret(
        &self,
        kind: &str,
        hash: &str,
        now: Timestamp,
    ) -> Result<Option<SecretRecord>> {
        Ok(self
            .lock()
            .secrets
            .get(hash)
            .filter(|s| s.kind == kind && s.is_live(now))
            .cloned())
    }

    pub(crate) async fn consume_secret(
        &self,
        kind: &str,
        hash: &str,
        now: Timestamp,
    ) -> Result<Option<SecretRecord>> {
        let mut inner = self.lock();
        let Some(s) = inner.secrets.get_mut(hash) else {
            return Ok(None);
        };
        if s.kind != kind || !s.is_live(now) || s.used_at.is_some() {
            return Ok(None);
        }
        s.used_at = Some(now);
        Ok(Some(s.clone()))
    }

    pub(crate) async fn revoke_secrets(
        &self,
        kind: &str,
        name: Option<&str>,
        now: Timestamp,
    ) -> Result<u64> {
        let mut n = 0;
        for s in self.lock().secrets.values_mut() {
            if s.kind == kind && name.is_none_or(|n| n == s.name) && s.revoked_at.is_none() {
                s.revoked_at = Some(now);
                n += 1;
            }
        }
        Ok(n)
    }

    pub(crate) async fn list_secrets(&self, kind: &str) -> Result<Vec<SecretRecord>> {
        let mut out: Vec<SecretRecord> = self
            .lock()
            .secrets
            .values()
            .filter(|s| s.kind == kind && s.revoked_at.is_none())
            .cloned()
            .collect();
        out.sort_by(|a, b| (&a.name, a.created_at).cmp(&(&b.name, b.created_at)));
        Ok(out)
    }

    pub(crate) async fn renew(&self, id: AskId, at: Timestamp) -> Result<bool> {
        let mut inner = self.lock();
        let rec = inner.asks.get_mut(&id).ok_or(Error::NotFound(id))?;
        if !rec.is_open() || !rec.attached {
            return Ok(false);
        }
        rec.lease_until = Some(at.plus(lease()));
        Ok(true)
    }

    pub(crate) async fn list_open_page(
        &self,
        page: crate::model::OpenPage,
    ) -> Result<Vec<AskRecord>> {
        let inner = self.lock();
        let range = match page.before {
            Some(before) => inner.open.range(..before),
            None => inner.open.range(..),
        };
        Ok(range
            .rev()
            .filter_map(|id| inner.asks.get(id))
            .take(page.limit as usize)
            .cloned()
            .collect())
    }

    pub(crate) async fn count_open(&self) -> Result<u64> {
        Ok(self.lock().open.len() as u64)
    }

    pub(crate) async fn count_open_in(&self, namespace: &crate::model::Namespace) -> Result<u64> {
        Ok(self
            .lock()
            .asks
            .values()
            .filter(|r| r.is_open() && r.key.namespace() == namespace)
            .count() as u64)
    }
}

/// Named leases (`crate::lease`).
impl MemoryStore {
    pub(crate) async fn acquire_lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool> {
        let mut inner = self.lock();
        let free = inner
            .leases
            .get(name)
            .is_none_or(|(h, u)| *u <= now || h == holder);
        if free {
            inner
                .leases
                .insert(name.to_owned(), (holder.to_owned(), until));
        }
        Ok(free)
    }

    pub(crate) async fn renew_lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool> {
        match self.lock().leases.get_mut(name) {
            Some((h, u)) if h == holder && *u > now => {
                *u = until;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    pub(crate) async fn release_lease(&self, name: &str, holder: &str) -> Result<bool> {
        let mut inner = self.lock();
        if inner.leases.get(name).is_some_and(|(h, _)| h == holder) {
            inner.leases.remove(name);
            return Ok(true);
        }
        Ok(false)
    }

    pub(crate) async fn lease(&self, name: &str) -> Result<Option<(String, Timestamp)>> {
        Ok(self.lock().leases.get(name).cloned())
    }

    pub(crate) async fn channel_message_ask(
        &self,
        channel: &str,
        part: &str,
    ) -> Result<Option<AskId>> {
        Ok(self
            .lock()
            .messages
            .iter()
            .rev()
            .find(|((_, ch), (reference, _))| {
                ch == channel
                    && reference
                        .as_deref()
                        .is_some_and(|r| r.split(',').any(|p| p == part))
            })
            .map(|((a, _), _)| *a))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::liveness::ThisMachine;
    use crate::model::{Asker, Scope};

    fn keyed(k: &str) -> NewAsk {
        let mut ask = NewAsk::new(&Scope::HostKey(k.into()), "{}", Asker::default());
        ask.created_at = Timestamp(1_800_000_000_000);
        ask
    }

    /// Opens find their key's asks through the key index, among any number of other asks, and
    /// a purge drops the purged asks from it.
    #[tokio::test]
    async fn opens_use_the_key_index_and_a_purge_keeps_it_true() {
        let store = MemoryStore::new();
        let live: Arc<dyn Liveness> = Arc::new(ThisMachine);
        for i in 0..500 {
            store
                .open_ask(&keyed(&format!("other{i}")), live.clone())
                .await
                .unwrap();
        }
        let Opened::Created(first) = store.open_ask(&keyed("k"), live.clone()).await.unwrap()
        else {
            panic!("a new key makes a new ask");
        };
        let again = store.open_ask(&keyed("k"), live.clone()).await.unwrap();
        assert_eq!(again, Opened::Reattached(again.record().clone()));
        assert_eq!(again.record().id, first.id);
        assert_eq!(store.lock().by_key.len(), 501);

        let at = Timestamp(1_800_000_000_000);
        store
            .record_outcome(first.id, &Outcome::Withdrawn, at)
            .await
            .unwrap();
        let retention = Retention {
            keep_closed: std::time::Duration::ZERO,
        };
        let swept = store.sweep(at, retention).await.unwrap();
        assert_eq!(swept.purged, 1);
        assert!(!store.lock().by_key.contains_key(&keyed("k").key));
        let Opened::Created(next) = store.open_ask(&keyed("k"), live).await.unwrap() else {
            panic!("a purged key asks anew");
        };
        assert!(next.id > first.id);
    }
}
