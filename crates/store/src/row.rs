//! One ask's columns as the SQL backends store them, and their conversion to [`AskRecord`].

use std::time::Duration;

use crate::error::{Error, Result};
use crate::model::{AskId, AskRecord, Asker, CallKey, Closed, Namespace, Outcome, Timestamp};

/// The column list every SQL read selects, in [`RawAsk`]'s order.
/// The columns an ask is read from, in [`RawAsk`]'s order, as a literal (for `concat!`).
macro_rules! ask_columns {
    () => {
        "id, scope, request_hash, host_keyed, request, asker, created_at, \
         grace_ms, attached, detached_at, outcome, closed_at, delivered_at, lease_until, namespace"
    };
}
pub(crate) use ask_columns;

pub(crate) const COLUMNS: &str = ask_columns!();

/// An ask's columns, as read.
pub(crate) struct RawAsk {
    pub(crate) id: i64,
    pub(crate) scope: String,
    pub(crate) request_hash: String,
    pub(crate) host_keyed: bool,
    pub(crate) request: String,
    pub(crate) asker: String,
    pub(crate) created_at: i64,
    pub(crate) grace_ms: i64,
    pub(crate) attached: bool,
    pub(crate) detached_at: Option<i64>,
    pub(crate) outcome: Option<String>,
    pub(crate) closed_at: Option<i64>,
    pub(crate) delivered_at: Option<i64>,
    pub(crate) lease_until: Option<i64>,
    pub(crate) namespace: String,
}

impl RawAsk {
    /// The record; a value ask-user cannot read is [`Error::BadRecord`].
    pub(crate) fn into_record(self, location: &str) -> Result<AskRecord> {
        let id = AskId(self.id);
        let bad = |detail: String| Error::BadRecord {
            location: location.to_owned(),
            id,
            detail,
        };
        let asker: Asker =
            serde_json::from_str(&self.asker).map_err(|e| bad(format!("asker: {e}")))?;
        let closed = match (self.outcome, self.closed_at) {
            (Some(o), Some(at)) => Some(Closed {
                outcome: decode_outcome(&o).map_err(|e| bad(format!("outcome: {e}")))?,
                at: Timestamp(at),
            }),
            _ => None,
        };
        Ok(AskRecord {
            id,
            key: CallKey::from_parts(
                Namespace::from_stored(self.namespace),
                self.scope,
                self.request_hash,
                self.host_keyed,
            ),
            request: self.request,
            asker,
            created_at: Timestamp(self.created_at),
            grace: Duration::from_millis(u64::try_from(self.grace_ms).unwrap_or(0)),
            attached: self.attached,
            detached_at: self.detached_at.map(Timestamp),
            lease_until: self.lease_until.map(Timestamp),
            closed,
            delivered_at: self.delivered_at.map(Timestamp),
        })
    }
}

/// The outcome's stored JSON.
pub(crate) fn encode_outcome(o: &Outcome) -> String {
    // An Outcome is a tagged enum of strings and a JSON value: it always serialises.
    serde_json::to_string(o).unwrap_or_else(|_| format!("{{\"state\":\"{}\"}}", o.state_name()))
}

/// Reads a stored outcome.
pub(crate) fn decode_outcome(s: &str) -> std::result::Result<Outcome, serde_json::Error> {
    serde_json::from_str(s)
}

/// The asker's stored JSON.
pub(crate) fn encode_asker(a: &Asker) -> String {
    serde_json::to_string(a).unwrap_or_else(|_| "{}".to_owned())
}
