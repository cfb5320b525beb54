//! The table of open connections and the eviction rule: at the cap, the oldest connection
//! idle after a lowered request is closed to admit a new one; failing that, the oldest one
//! serving a [`Standing::Yielding`] request (an agent: it reconnects), then the oldest fresh
//! one or serving an [`Standing::Anonymous`] request (it may be the human signing in, not
//! proven yet), and only then the oldest *proven* one that is idle or serving a lowered
//! request: a connection that finished a [`Standing::Kept`] request (the signed-in human's
//! keep-alive: its client may be sending its next request on it right now, and a close then
//! loses that request). When all are serving kept requests, the new one is refused. An
//! address over its share of unproven connections closes its own first.

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
    peer: Option<std::net::IpAddr>,
    /// Its requests in progress, their standing, and whether it is proven.
    serving: Serving,
    /// Whether a request head was read on it (an idle connection that never sent one is
    /// *fresh*: perhaps the human's, about to send it).
    served: Arc<std::sync::atomic::AtomicBool>,
    evict: CancellationToken,
}

/// How much a connection serving a request is worth keeping when a newcomer needs its place
/// at the cap. Connections idle after a lowered request go first; then, oldest first within
/// each class, those serving `Yielding`, then fresh ones and those serving `Anonymous`, then
/// proven ones (a `Kept` request finished on them) idle or serving a lowered request; a
/// connection serving `Kept` is never closed for a newcomer.
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

    /// What a request in progress on this connection updates; [`Busy`] holds one.
    pub(crate) fn serving(&self) -> Serving {
        self.slot.serving.clone()
    }

    /// Marks that a request head was read on this connection (it is no longer fresh).
    pub(crate) fn served(&self) -> Arc<std::sync::atomic::AtomicBool> {
        self.slot.served.clone()
    }

    /// The standing of the request this connection serves.
    pub(crate) fn standing(&self) -> ConnectionStanding {
        self.slot.serving.standing.clone()
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.table.lock().1.remove(&self.id);
    }
}

/// A connection's count of requests in progress, the standing of the one it serves, and
/// whether a kept request finished on it.
#[derive(Debug, Clone)]
pub(crate) struct Serving {
    busy: Arc<AtomicUsize>,
    standing: ConnectionStanding,
    /// Whether a request finished on it while its standing was [`Standing::Kept`] (its client
    /// proved itself once; a connection is one client's, so it stays proven).
    proven: Arc<std::sync::atomic::AtomicBool>,
}

/// Counts a request in progress on its connection until dropped (with the response body);
/// a request that ends kept proves its connection.
#[derive(Debug)]
pub(crate) struct Busy(Serving);

impl Busy {
    pub(crate) fn new(serving: &Serving) -> Self {
        serving.busy.fetch_add(1, Ordering::SeqCst);
        Self(serving.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        // Proven before it counts as idle, so the table never sees it idle and unproven.
        if self.0.standing.get() == Standing::Kept {
            self.0.proven.store(true, Ordering::SeqCst);
        }
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
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

    /// [`Connections::admit_from`] a new address each time (the cap's rule alone).
    #[cfg(test)]
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Admitted> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let ip = std::net::Ipv4Addr::from(NEXT.fetch_add(1, Ordering::SeqCst));
        self.admit_from(Some(ip.into()))
    }

    /// How many unproven connections (idle, or serving an anonymous request) one address may
    /// hold before, at the cap, its newcomers close its own: a quarter of the cap (at least 1).
    pub(crate) fn per_peer(&self) -> usize {
        (self.cap / 4).max(1)
    }

    /// Admits a new connection from `peer`, closing one at the cap: when `peer` already holds
    /// [`Connections::per_peer`] unproven connections (idle, or serving an anonymous request),
    /// one of its own by the order below without the yielding ones (an address competes only
    /// with itself); otherwise the oldest idle after a lowered request, else the oldest
    /// serving a yielding request, else the oldest fresh or serving an anonymous one, else the
    /// oldest proven one (idle, or serving a lowered request). `None` when every open
    /// connection is serving a kept request.
    pub(crate) fn admit_from(self: &Arc<Self>, peer: Option<std::net::IpAddr>) -> Option<Admitted> {
        let mut guard = self.lock();
        let (next, open) = &mut *guard;
        if open.len() >= self.cap {
            // Rank 0: idle after a lowered request; 1: yielding; 2: fresh, or anonymous; 3:
            // proven, idle or serving a lowered request; kept ones serving are never chosen.
            // A proven connection (the human's keep-alive) goes last: its client may be
            // sending its next request on it right now, and a close then loses that request.
            // A client that connects anew while it waits for its pooled connection (reqwest)
            // reuses the old one when it frees first, and its newcomer would close it under it
            // (even during the instant a route lowers the request to check its credential).
            let rank = |slot: &Slot| {
                let proven = slot.serving.proven.load(Ordering::SeqCst);
                if slot.serving.busy.load(Ordering::SeqCst) == 0 {
                    Some(if proven {
                        3
                    } else if slot.served.load(Ordering::SeqCst) {
                        0
                    } else {
                        2
                    })
                } else {
                    match slot.serving.standing.get() {
                        Standing::Yielding => Some(1),
                        Standing::Anonymous if proven => Some(3),
                        Standing::Anonymous => Some(2),
                        Standing::Kept => None,
                    }
                }
            };
            let own: Vec<(u8, u64)> = open
                .iter()
                .filter(|(_, slot)| slot.peer == peer)
                .filter_map(|(id, slot)| rank(slot).filter(|r| *r != 1).map(|r| (r, *id)))
                .collect();
            let victim = if own.len() >= self.per_peer() {
                own.into_iter().min().map(|(_, id)| id)
            } else {
                open.iter()
                    .filter_map(|(id, slot)| rank(slot).map(|r| (r, *id)))
                    .min()
                    .map(|(_, id)| id)
            }?;
            if let Some(slot) = open.remove(&victim) {
                slot.evict.cancel();
            }
        }
        let id = *next;
        *next += 1;
        let slot = Slot {
            peer,
            serving: Serving {
                busy: Arc::new(AtomicUsize::new(0)),
                standing: ConnectionStanding::new(),
                proven: Arc::default(),
            },
            served: Arc::default(),
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
        let _serving = Busy::new(&a.serving());
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
        let busy_a = Busy::new(&a.serving());
        let _busy_b = Busy::new(&b.serving());
        assert!(table.admit().is_none());
        assert!(!a.evicted().is_cancelled() && !b.evicted().is_cancelled());
        // `a`'s response is sent: it is idle again, and the next newcomer evicts it.
        drop(busy_a);
        let _c = table.admit().unwrap();
        assert!(a.evicted().is_cancelled());
        assert!(!b.evicted().is_cancelled());
    }

    #[test]
    fn serving_connections_yield_by_standing_yielding_first_then_anonymous_never_kept() {
        let table = Connections::new(4);
        let kept = table.admit().unwrap();
        let anonymous = table.admit().unwrap();
        let yielding_old = table.admit().unwrap();
        let yielding_new = table.admit().unwrap();
        let _busy: Vec<Busy> = [&kept, &anonymous, &yielding_old, &yielding_new]
            .iter()
            .map(|a| Busy::new(&a.serving()))
            .collect();
        anonymous.standing().set(Standing::Anonymous);
        yielding_old.standing().set(Standing::Yielding);
        yielding_new.standing().set(Standing::Yielding);
        let cancelled = |a: &Admitted| a.evicted().is_cancelled();
        // Every one serves: the yielding ones go first, oldest first.
        let e = table.admit().unwrap();
        let _busy_e = Busy::new(&e.serving());
        assert!(cancelled(&yielding_old) && !cancelled(&yielding_new));
        let f = table.admit().unwrap();
        let _busy_f = Busy::new(&f.serving());
        assert!(cancelled(&yielding_new));
        // Then the anonymous one; never the kept one.
        let g = table.admit().unwrap();
        let _busy_g = Busy::new(&g.serving());
        assert!(cancelled(&anonymous));
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
        // Idle after an agent's response (a fresh one, or one after a kept request, would
        // rank with the anonymous request).
        idle.served().store(true, Ordering::SeqCst);
        idle.standing().set(Standing::Yielding);
        let _busy = Busy::new(&anonymous.serving());
        anonymous.standing().set(Standing::Anonymous);
        let _c = table.admit().unwrap();
        assert!(idle.evicted().is_cancelled());
        assert!(!anonymous.evicted().is_cancelled());
    }

    #[test]
    fn at_the_cap_an_address_over_its_share_closes_its_own() {
        let table = Connections::new(8);
        let flood: Option<std::net::IpAddr> = Some([192, 0, 2, 1].into());
        let human: Option<std::net::IpAddr> = Some([198, 51, 100, 7].into());
        let h = table.admit_from(human).unwrap();
        let _serving = Busy::new(&h.serving());
        h.standing().set(Standing::Anonymous);
        let flood_conns: Vec<Admitted> = (0..7).map(|_| table.admit_from(flood).unwrap()).collect();
        let anonymous: Vec<Busy> = flood_conns
            .iter()
            .map(|a| {
                a.standing().set(Standing::Anonymous);
                a.served().store(true, Ordering::SeqCst);
                Busy::new(&a.serving())
            })
            .collect();
        // Full. The human's anonymous request is the oldest, but the flood's newcomers close
        // the flood's own oldest.
        let mut newer = Vec::new();
        for gone in flood_conns.iter().take(3) {
            let n = table.admit_from(flood).unwrap();
            n.standing().set(Standing::Anonymous);
            newer.push((Busy::new(&n.serving()), n));
            assert!(gone.evicted().is_cancelled());
            assert!(!h.evicted().is_cancelled());
        }
        drop(anonymous);
        // Another address, under its share, takes the globally oldest idle one.
        let other = table.admit_from(human).unwrap();
        assert!(flood_conns[3].evicted().is_cancelled());
        assert!(!other.evicted().is_cancelled() && !h.evicted().is_cancelled());
    }

    /// The human's keep-alive is closed only when nothing else can go: its client may be
    /// sending its next request on it (reqwest reuses it while its own newcomer connects),
    /// and the request it sends is lowered while its credential is checked.
    #[test]
    fn a_proven_connection_goes_after_fresh_and_anonymous_ones() {
        let table = Connections::new(8);
        let human: Option<std::net::IpAddr> = Some([198, 51, 100, 7].into());
        let flood: Option<std::net::IpAddr> = Some([192, 0, 2, 1].into());
        let keep_alive = table.admit_from(human).unwrap();
        // A kept request (the page) finished on it; the next one is being checked.
        keep_alive.served().store(true, Ordering::SeqCst);
        drop(Busy::new(&keep_alive.serving()));
        let _checking = Busy::new(&keep_alive.serving());
        keep_alive.standing().set(Standing::Anonymous);
        let anonymous = table.admit_from(flood).unwrap();
        let _busy = Busy::new(&anonymous.serving());
        anonymous.standing().set(Standing::Anonymous);
        let fresh = table.admit_from(flood).unwrap();
        let others: Vec<(Busy, Admitted)> = (0..5)
            .map(|_| {
                let other = table.admit_from(flood).unwrap();
                other.standing().set(Standing::Anonymous);
                (Busy::new(&other.serving()), other)
            })
            .collect();
        // Full. The human's newcomer closes the flood's oldest anonymous request, not the
        // human's older keep-alive; the next one the fresh connection; only then the
        // keep-alive, when every other open connection serves a kept request.
        let first = table.admit_from(human).unwrap();
        assert!(anonymous.evicted().is_cancelled());
        assert!(!keep_alive.evicted().is_cancelled());
        let _first_busy = Busy::new(&first.serving());
        let second = table.admit_from(human).unwrap();
        assert!(fresh.evicted().is_cancelled());
        assert!(!keep_alive.evicted().is_cancelled());
        let _second_busy = Busy::new(&second.serving());
        for (_, other) in &others {
            other.standing().set(Standing::Kept);
        }
        let _third = table.admit_from(human).unwrap();
        assert!(keep_alive.evicted().is_cancelled());
        assert!(others.iter().all(|(_, o)| !o.evicted().is_cancelled()));
    }

    #[test]
    fn a_fresh_connection_yields_only_after_agents() {
        let table = Connections::new(2);
        let fresh = table.admit().unwrap();
        let agent = table.admit().unwrap();
        let _busy = Busy::new(&agent.serving());
        agent.standing().set(Standing::Yielding);
        let _c = table.admit().unwrap();
        assert!(agent.evicted().is_cancelled());
        assert!(!fresh.evicted().is_cancelled());
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
        let _busy = Busy::new(&a.serving());
        assert!(table.admit().is_none());
    }
}
