//! The table of open connections and the eviction rule: at the cap, the oldest connection
//! that is not serving a request is closed to admit a new one; when all are serving, the new
//! one is refused.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

/// The open connections, oldest first (ids only grow), and how many requests each is serving.
#[derive(Debug)]
pub(crate) struct Connections {
    cap: usize,
    next: Mutex<(u64, BTreeMap<u64, Slot>)>,
}

#[derive(Debug, Clone)]
struct Slot {
    busy: Arc<AtomicUsize>,
    evict: CancellationToken,
}

/// One admitted connection; leaves the table when dropped.
#[derive(Debug)]
pub(crate) struct Admitted {
    table: Arc<Connections>,
    id: u64,
    slot: Slot,
}

impl Admitted {
    /// Fires when the table closes this connection to admit a newer one.
    pub(crate) fn evicted(&self) -> CancellationToken {
        self.slot.evict.clone()
    }

    /// The count of requests this connection is serving; [`Busy`] holds one.
    pub(crate) fn busy_count(&self) -> Arc<AtomicUsize> {
        self.slot.busy.clone()
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.table.lock().1.remove(&self.id);
    }
}

/// Counts a request in progress on its connection until dropped (with the response body).
#[derive(Debug)]
pub(crate) struct Busy(Arc<AtomicUsize>);

impl Busy {
    pub(crate) fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Connections {
    /// An empty table admitting at most `cap` connections (at least 1).
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap: cap.max(1),
            next: Mutex::new((0, BTreeMap::new())),
        })
    }

    fn lock(&self) -> MutexGuard<'_, (u64, BTreeMap<u64, Slot>)> {
        self.next.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a new connection, closing the oldest idle one when at the cap; `None` when every
    /// open connection is serving a request.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut guard = self.lock();
        let (next, open) = &mut *guard;
        if open.len() >= self.cap {
            let idle = open
                .iter()
                .find(|(_, slot)| slot.busy.load(Ordering::SeqCst) == 0)
                .map(|(id, _)| *id)?;
            if let Some(slot) = open.remove(&idle) {
                slot.evict.cancel();
            }
        }
        let id = *next;
        *next += 1;
        let slot = Slot {
            busy: Arc::new(AtomicUsize::new(0)),
            evict: CancellationToken::new(),
        };
        open.insert(id, slot.clone());
        Some(Admitted {
            table: self.clone(),
            id,
            slot,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(table: &Connections) -> usize {
        table.lock().1.len()
    }

    #[test]
    fn at_the_cap_the_oldest_idle_connection_is_evicted() {
        let table = Connections::new(3);
        let a = table.admit().unwrap();
        let b = table.admit().unwrap();
        let c = table.admit().unwrap();
        // `a` serves a request (an event stream), `b` and `c` are idle.
        let _serving = Busy::new(&a.busy_count());
        let d = table.admit().unwrap();
        assert!(!a.evicted().is_cancelled(), "a busy connection was evicted");
        assert!(b.evicted().is_cancelled(), "the oldest idle one is evicted");
        assert!(!c.evicted().is_cancelled(), "only one is evicted");
        assert!(!d.evicted().is_cancelled());
        assert_eq!(open(&table), 3);
        // Next in line: `c`, the oldest idle one still open.
        let _e = table.admit().unwrap();
        assert!(c.evicted().is_cancelled());
        assert!(!d.evicted().is_cancelled());
        assert!(!a.evicted().is_cancelled());
    }

    #[test]
    fn when_every_connection_is_serving_the_new_one_is_refused() {
        let table = Connections::new(2);
        let a = table.admit().unwrap();
        let b = table.admit().unwrap();
        let busy_a = Busy::new(&a.busy_count());
        let _busy_b = Busy::new(&b.busy_count());
        assert!(table.admit().is_none());
        assert!(!a.evicted().is_cancelled() && !b.evicted().is_cancelled());
        // `a`'s response is sent: it is idle again, and the next newcomer evicts it.
        drop(busy_a);
        let _c = table.admit().unwrap();
        assert!(a.evicted().is_cancelled());
        assert!(!b.evicted().is_cancelled());
    }

    #[test]
    fn a_closed_connection_leaves_room_without_evicting() {
        let table = Connections::new(1);
        let a = table.admit().unwrap();
        drop(a);
        assert_eq!(open(&table), 0);
        let b = table.admit().unwrap();
        let c = table.admit().unwrap();
        assert!(b.evicted().is_cancelled());
        assert!(!c.evicted().is_cancelled());
        assert_eq!(open(&table), 1);
    }

    #[test]
    fn a_cap_of_zero_admits_one() {
        let table = Connections::new(0);
        let a = table.admit().unwrap();
        let _busy = Busy::new(&a.busy_count());
        assert!(table.admit().is_none());
    }
}
