//! One wake-up per answer: the per-ask waiter registry behind [`crate::Store::wait_outcome`].
//!
//! Every backend announces its changes on one broadcast feed ([`crate::Feed`]): SQLite from its
//! sidecar scan, Postgres from LISTEN/NOTIFY, memory from the writer itself. Were each waiter to
//! follow that feed, every change would wake every waiter of the process (1,000 waiting agents
//! on a hub: 1,000 wake-ups per answer, 999 of them for nothing). Instead one task per store
//! handle — the dispatcher — follows the feed and wakes only the waiters of the ask a change
//! names; a [`Change::Rescan`] (a follower fell behind, the Postgres listener reconnected, the
//! SQLite file was replaced) wakes them all, since any of them may have been missed.
//!
//! Invariant (no lost wake-up): a waiter registers its interest and arms its wake-up before it
//! reads its ask, and the dispatcher's subscription exists before that read, so a change
//! committed after the read reaches the armed wake-up. The dispatcher ends when the store is
//! gone or its runtime shuts down; then it wakes every waiter, and the next wait starts a new
//! one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::Notify;

use crate::feed::Feed;
use crate::model::{AskId, Change};

/// The registry: for each ask someone waits on, the wake-up its waiters share.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    slots: Mutex<HashMap<AskId, Slot>>,
    /// Whether a dispatcher is following the feed for this registry.
    running: AtomicBool,
    /// Serialises starting the dispatcher.
    starting: tokio::sync::Mutex<()>,
    /// How many waits read their ask open and are parked on its wake-up now.
    parked: AtomicUsize,
}

/// A wait parked on its wake-up, counted in [`Waiters::parked`] while it lives.
pub(crate) struct Parked<'a>(&'a Waiters);

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        self.0.parked.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Debug)]
struct Slot {
    wake: Arc<Notify>,
    waiters: usize,
}

/// One waiter's registration; dropping it unregisters.
#[derive(Debug)]
pub(crate) struct Interest {
    registry: Arc<Waiters>,
    id: AskId,
    wake: Arc<Notify>,
}

impl Interest {
    /// The wake-up this waiter shares with the other waiters of its ask.
    pub(crate) fn wake(&self) -> &Notify {
        &self.wake
    }
}

impl Drop for Interest {
    fn drop(&mut self) {
        let mut slots = self.registry.lock();
        if let Some(slot) = slots.get_mut(&self.id) {
            slot.waiters -= 1;
            if slot.waiters == 0 {
                slots.remove(&self.id);
            }
        }
    }
}

impl Waiters {
    fn lock(&self) -> MutexGuard<'_, HashMap<AskId, Slot>> {
        // Only counts and handles live here; a panic cannot leave them half-written.
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a waiter of ask `id`.
    pub(crate) fn register(self: &Arc<Self>, id: AskId) -> Interest {
        let mut slots = self.lock();
        let slot = slots.entry(id).or_insert_with(|| Slot {
            wake: Arc::new(Notify::new()),
            waiters: 0,
        });
        slot.waiters += 1;
        Interest {
            registry: self.clone(),
            id,
            wake: slot.wake.clone(),
        }
    }

    /// Whether a dispatcher follows the feed now.
    /// Counts a wait as parked (it read its ask open and now awaits its wake-up) until the
    /// guard drops.
    pub(crate) fn park(&self) -> Parked<'_> {
        self.parked.fetch_add(1, Ordering::SeqCst);
        Parked(self)
    }

    /// How many waits are parked now ([`Waiters::park`]).
    pub(crate) fn parked(&self) -> usize {
        self.parked.load(Ordering::SeqCst)
    }

    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Starts the dispatcher on `feed` unless one runs. The caller subscribed `feed` just now;
    /// `start` is called under a lock, so two first waiters start one dispatcher.
    pub(crate) async fn start<F>(self: &Arc<Self>, subscribe: F) -> crate::Result<()>
    where
        F: std::future::Future<Output = crate::Result<Feed>>,
    {
        let _starting = self.starting.lock().await;
        if self.is_running() {
            return Ok(());
        }
        let feed = subscribe.await?;
        self.running.store(true, Ordering::Release);
        tokio::spawn(dispatch(Running(Arc::downgrade(self)), feed));
        Ok(())
    }

    /// Wakes the waiters of `id`.
    fn wake(&self, id: AskId) {
        if let Some(slot) = self.lock().get(&id) {
            slot.wake.notify_waiters();
        }
    }

    /// Wakes every waiter.
    fn wake_all(&self) {
        for slot in self.lock().values() {
            slot.wake.notify_waiters();
        }
    }

    /// How many asks have waiters now (for tests).
    #[cfg(test)]
    fn asks_waited_on(&self) -> usize {
        self.lock().len()
    }
}

/// Held by the dispatcher task: when the task ends (the store is gone, or its runtime shut
/// down and dropped it), the registry learns it and every waiter re-checks.
struct Running(Weak<Waiters>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(w) = self.0.upgrade() {
            w.running.store(false, Ordering::Release);
            w.wake_all();
        }
    }
}

async fn dispatch(running: Running, mut feed: Feed) {
    while let Some(change) = feed.next().await {
        let Some(waiters) = running.0.upgrade() else {
            return;
        };
        match change {
            Change::Ask(id) => waiters.wake(id),
            Change::Rescan => waiters.wake_all(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_last_interest_dropped_removes_the_slot() {
        let w = Arc::new(Waiters::default());
        let a = w.register(AskId(1));
        let b = w.register(AskId(1));
        let c = w.register(AskId(2));
        assert_eq!(w.asks_waited_on(), 2);
        drop(a);
        assert_eq!(w.asks_waited_on(), 2);
        drop(b);
        drop(c);
        assert_eq!(w.asks_waited_on(), 0);
    }

    #[tokio::test]
    async fn a_change_wakes_only_the_waiters_of_its_ask() {
        let w = Arc::new(Waiters::default());
        let mine = w.register(AskId(1));
        let other = w.register(AskId(2));
        let mine_woken = mine.wake().notified();
        let other_woken = other.wake().notified();
        tokio::pin!(mine_woken, other_woken);
        mine_woken.as_mut().enable();
        other_woken.as_mut().enable();
        w.wake(AskId(1));
        // A woken `Notified` is ready at its first poll; one not woken is pending.
        assert!(futures_poll_once(mine_woken.as_mut()).await);
        assert!(!futures_poll_once(other_woken.as_mut()).await);
        w.wake_all();
        assert!(futures_poll_once(other_woken.as_mut()).await);
    }

    async fn futures_poll_once<F: std::future::Future + Unpin>(f: F) -> bool {
        let mut f = f;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::pin::Pin::new(&mut f).poll(cx).is_ready())
        })
        .await
    }
}
