//! The change feed a waiter or an inbox follows (docs/contract.md §8, §9 "Scale-out").

use tokio::sync::broadcast;

use crate::model::Change;

/// How many changes a slow follower may fall behind before it is told to rescan.
pub(crate) const FEED_CAPACITY: usize = 1024;

/// A subscription to a store's changes, from [`crate::Store::subscribe`].
#[derive(Debug)]
pub struct Feed {
    rx: broadcast::Receiver<Change>,
}

impl Feed {
    pub(crate) fn new(rx: broadcast::Receiver<Change>) -> Feed {
        Feed { rx }
    }

    /// The next change. A follower that fell behind gets [`Change::Rescan`] instead of the
    /// changes it missed. `None` once the store is gone (every handle dropped).
    pub async fn next(&mut self) -> Option<Change> {
        match self.rx.recv().await {
            Ok(c) => Some(c),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Change::Rescan),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}
