//! The agents' deadlines, for the page's countdown (docs/contract.md §9; docs/decisions.md
//! "The hub's countdown"): an agent with a time budget sends when it runs out with its ask
//! ([`ask_user_hub_wire::PostAsk::deadline`]); the page counts down to it. The agent, not the
//! hub, enforces the budget, so the deadline is advisory and kept in this replica's memory
//! only: a page served by another replica shows it once the agent re-posts there.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use ask_user_store::{AskId, Timestamp};

/// The most deadlines kept at once: past it, those already passed are dropped first, then
/// the soonest (a flood of asks cannot grow this without bound).
pub(crate) const MAX_DEADLINES: usize = 10_000;

/// The farthest ahead a deadline is believed (a year): anything later shows no countdown.
const FARTHEST_MS: i64 = 366 * 24 * 60 * 60 * 1000;

/// Ask id → deadline (Unix ms).
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    by_ask: Mutex<HashMap<i64, i64>>,
}

impl Deadlines {
    /// Keeps `deadline` (Unix ms) for ask `id` when it lies between `now` and a year ahead;
    /// otherwise forgets any deadline the ask had.
    pub(crate) fn set(&self, id: AskId, deadline: Option<i64>, now: Timestamp) {
        let mut map = self.by_ask.lock().unwrap_or_else(PoisonError::into_inner);
        let usable = deadline.filter(|d| *d > now.0 && *d - now.0 <= FARTHEST_MS);
        let Some(deadline) = usable else {
            map.remove(&id.0);
            return;
        };
        if map.len() >= MAX_DEADLINES && !map.contains_key(&id.0) {
            map.retain(|_, d| *d > now.0);
            if map.len() >= MAX_DEADLINES
                && let Some((&soonest, _)) = map.iter().min_by_key(|(_, d)| **d)
            {
                map.remove(&soonest);
            }
        }
        map.insert(id.0, deadline);
    }

    /// The deadline of ask `id`, if its agent sent one.
    pub(crate) fn get(&self, id: AskId) -> Option<i64> {
        self.by_ask
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id.0)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const NOW: Timestamp = Timestamp(1_000_000);

    #[test]
    fn a_deadline_is_kept_only_between_now_and_a_year_ahead() {
        let d = Deadlines::default();
        d.set(AskId(1), Some(NOW.0 + 60_000), NOW);
        d.set(AskId(2), Some(NOW.0 - 1), NOW);
        d.set(AskId(3), Some(NOW.0 + FARTHEST_MS + 1), NOW);
        d.set(AskId(4), Some(i64::MAX), NOW);
        assert_eq!(
            [1, 2, 3, 4].map(|i| d.get(AskId(i))),
            [Some(NOW.0 + 60_000), None, None, None]
        );
        // A re-post without a deadline (the agent's budget is gone) forgets it.
        d.set(AskId(1), None, NOW);
        assert_eq!(d.get(AskId(1)), None);
    }

    #[test]
    fn the_map_stays_bounded_dropping_passed_then_soonest_deadlines() {
        let d = Deadlines::default();
        for i in 0..MAX_DEADLINES as i64 {
            d.set(AskId(i), Some(NOW.0 + 1_000 + i), NOW);
        }
        let later = Timestamp(NOW.0 + 1_000 + 10);
        d.set(AskId(-1), Some(later.0 + 5_000_000), later);
        let kept = d
            .by_ask
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        assert!(kept <= MAX_DEADLINES, "{kept}");
        assert_eq!(d.get(AskId(0)), None, "passed: dropped");
        assert_eq!(d.get(AskId(-1)), Some(later.0 + 5_000_000));
        assert_eq!(
            d.get(AskId(MAX_DEADLINES as i64 - 1)),
            Some(NOW.0 + 1_000 + MAX_DEADLINES as i64 - 1)
        );
    }
}
