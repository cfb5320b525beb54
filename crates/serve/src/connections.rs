//! The table of open connections and the eviction rule: at the cap, the oldest connection
//! that is not serving a request is closed to admit a new one; failing that, the oldest one
//! serving an [`Standing::Anonymous`] request, then the oldest serving a
//! [`Standing::Yielding`] one; when all are serving [`Standing::Kept`] requests, the new one is
//! refused.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
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
    standing: ConnectionStanding,
    evict: CancellationToken,
}

/// How much a connection serving a request is worth keeping when a newcomer needs its place
/// at the cap. Idle connections always go first; then, oldest first within each class,
/// `Anonymous`, then `Yielding`; `Kept` is never closed for a newcomer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Standing {
    /// No credential checked yet (a request head and perhaps a slow body from anyone).
    Anonymous = 0,
    /// Authenticated, but its client reconnects when closed (an agent's long-poll).
    Yielding = 1,
    /// Never closed to make room while it serves (the default; a signed-in human's page and
    /// event stream).
    Kept = 2,
}

impl Standing {
    fn from_u8(v: u8) -> Standing {
        match v {
            0 => Standing::Anonymous,
            1 => Standing::Yielding,
            _ => Standing::Kept,
        }
    }
}

/// The standing of the request a connection is serving, settable by the app: every request
/// carries its connection's handle in its extensions, set to [`Standing::Kept`] when its head
/// is read. A route lowers it (before checking credentials) and raises it (once they check).
#[derive(Debug, Clone)]
pub struct ConnectionStanding(Arc<AtomicU8>);

impl ConnectionStanding {
    fn new() -> ConnectionStanding {
        ConnectionStanding(Arc::new(AtomicU8::new(Standing::Kept as u8)))
    }

    /// Sets the standing of the request being served.
    pub fn set(&self, standing: Standing) {
        self.0.store(standing as u8, Ordering::SeqCst);
    }

    /// The standing of the request being served.
    #[must_use]
    pub fn get(&self) -> Standing {
        Standing::from_u8(self.0.load(Ordering::SeqCst))
    }
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

    /// The standing of the request this connection serves.
    pub(crate) fn standing(&self) -> ConnectionStanding {
        self.slot.standing.clone()
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

    /// Admits a new connection, closing at the cap the oldest idle one, else the oldest
    /// serving an anonymous request, else the oldest serving a yielding one; `None` when every
    /// open connection is serving a kept request.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut guard = self.lock();
        let (next, open) = &mut *guard;
        if open.len() >= self.cap {
            // Rank 0: idle; 1: anonymous; 2: yielding; kept ones are never chosen.
            let rank = |slot: &Slot| {
                if slot.busy.load(Ordering::SeqCst) == 0 {
                    Some(0)
                } else {
                    match slot.standing.get() {
                        Standing::Anonymous => Some(1),
                        Standing::Yielding => Some(2),
                        Standing::Kept => None,
                    }
                }
            };
            let victim = open
                .iter()
                .filter_map(|(id, slot)| rank(slot).map(|r| (r, *id)))
                .min()
                .map(|(_, id)| id)?;
            if let Some(slot) = open.remove(&victim) {
                slot.evict.cancel();
            }
        }
        let id = *next;
        *next += 1;
        let slot = Slot {
            busy: Arc::new(AtomicUsize::new(0)),
            standing: ConnectionStanding::new(),
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
    fn serving_connections_yield_by_standing_anonymous_first_then_yielding_never_kept() {
        let table = Connections::new(4);
        let kept = table.admit().unwrap();
        let yielding = table.admit().unwrap();
        let anonymous_old = table.admit().unwrap();
        let anonymous_new = table.admit().unwrap();
        let _busy: Vec<Busy> = [&kept, &yielding, &anonymous_old, &anonymous_new]
            .iter()
            .map(|a| Busy::new(&a.busy_count()))
            .collect();
        yielding.standing().set(Standing::Yielding);
        anonymous_old.standing().set(Standing::Anonymous);
        anonymous_new.standing().set(Standing::Anonymous);
        let cancelled = |a: &Admitted| a.evicted().is_cancelled();
        // Every one serves: the anonymous ones go first, oldest first.
        let e = table.admit().unwrap();
        let _busy_e = Busy::new(&e.busy_count());
        assert!(cancelled(&anonymous_old) && !cancelled(&anonymous_new));
        let f = table.admit().unwrap();
        let _busy_f = Busy::new(&f.busy_count());
        assert!(cancelled(&anonymous_new));
        // Then the yielding one; never the kept one.
        let g = table.admit().unwrap();
        let _busy_g = Busy::new(&g.busy_count());
        assert!(cancelled(&yielding));
        assert!(!cancelled(&kept) && !cancelled(&e) && !cancelled(&f));
        assert!(
            table.admit().is_none(),
            "every one left serves a kept request"
        );
        assert!(!cancelled(&kept));
    }

    #[test]
    fn an_idle_connection_goes_before_an_anonymous_request() {
        let table = Connections::new(2);
        let anonymous = table.admit().unwrap();
        let idle = table.admit().unwrap();
        let _busy = Busy::new(&anonymous.busy_count());
        anonymous.standing().set(Standing::Anonymous);
        let _c = table.admit().unwrap();
        assert!(idle.evicted().is_cancelled());
        assert!(!anonymous.evicted().is_cancelled());
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
