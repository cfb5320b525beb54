//! Group commit for Postgres (docs/decisions.md "Postgres: one round trip per ask and per
//! answer, and group commit"): new asks, and outcomes, that arrive while earlier ones commit
//! are written together in one transaction — one round trip and one WAL flush for the group.
//!
//! Each kind has an intake: callers queue a job and wait for its reply; one task per store
//! takes every job queued (at most [`MAX_GROUP`]) and runs them as one pipelined transaction on
//! a pooled connection, with at most [`IN_FLIGHT`] groups at a time (so a lone write never
//! waits, and under load each group takes what queued while the last one committed). A caller
//! is answered only after its group's `COMMIT` returned: the durability of each write is what
//! it was alone. A job whose caller stopped waiting before its group was formed is left out.
//!
//! - **New asks**: `BEGIN`; the advisory lock of every key in the group, taken in the order of
//!   the lock's hash (two groups never wait on each other in a cycle); one `INSERT … SELECT
//!   FROM unnest(…)` that inserts each ask whose key has no ask yet, and sends its `NOTIFY`;
//!   `COMMIT`. An ask whose key has asks is not written: its caller runs the full rule (a
//!   transaction of its own under the key's lock). Two jobs of one key in one group: the later
//!   is sent to the full rule too, so it finds the earlier one.
//! - **Outcomes**: `BEGIN`; one `UPDATE … FROM unnest(…) WHERE state = 'open'` (first outcome
//!   wins, row by row) that sends each winner's `NOTIFY`; `COMMIT`. A job whose ask is already
//!   in the group (a second answer to the same ask) is run alone after it.
//!
//! When a statement of a group fails, the server rolled the whole transaction back (nothing of
//! it is stored): each job then runs again alone, so one bad write fails only its own caller.
//! When the `COMMIT` itself fails, nobody can tell what was stored: every job of the group
//! gets the error.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_postgres::types::ToSql;

use super::{Inner, PgStore};
use crate::error::{Error, Result};
use crate::model::{AskId, AskRecord, NewAsk, Timestamp, duration_ms, lease};
use crate::row::encode_asker;

/// How many writes one group takes at most.
pub(super) const MAX_GROUP: usize = 256;

/// How many groups of one kind are committing at once, each on a pooled connection.
pub(super) const IN_FLIGHT: usize = 2;

/// Takes the advisory locks of the keys `$1`, ordered by the lock's hash.
const LOCK_KEYS: &str = "SELECT pg_advisory_xact_lock(h) FROM \
     (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest($1::TEXT[]) AS k ORDER BY h) AS s";

/// Inserts each ask of the arrays whose key has no ask yet, and announces it: one row per
/// ask inserted, with its key.
const INSERT_NEW: &str = "WITH input AS (\
     SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::BOOLEAN[], $4::TEXT[], $5::TEXT[], \
       $6::BIGINT[], $7::BIGINT[], $8::BIGINT[], $9::TEXT[]) WITH ORDINALITY \
       AS t(scope, request_hash, host_keyed, request, asker, created_at, grace_ms, lease_until, \
       namespace, ord)), \
     ins AS (\
     INSERT INTO ask_user_asks (scope, request_hash, host_keyed, request, asker, created_at, \
       grace_ms, attached, lease_until, namespace) \
     SELECT scope, request_hash, host_keyed, request, asker, created_at, grace_ms, TRUE, \
       lease_until, namespace FROM input AS i \
     WHERE NOT EXISTS (SELECT 1 FROM ask_user_asks AS a WHERE a.namespace = i.namespace \
       AND a.scope = i.scope AND a.request_hash = i.request_hash) \
     ORDER BY ord \
     RETURNING id, namespace, scope, request_hash) \
     SELECT id, namespace, scope, request_hash, pg_notify('ask_user_changes', id::TEXT) FROM ins";

/// Closes each ask of the arrays that is still open, and announces it: one row per winner.
const CLOSE_OPEN: &str = "WITH input AS (\
     SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::BIGINT[]) \
       AS t(id, state, outcome, closed_at)), \
     up AS (\
     UPDATE ask_user_asks AS a SET state = i.state, outcome = i.outcome, closed_at = i.closed_at \
     FROM input AS i WHERE a.id = i.id AND a.state = 'open' RETURNING a.id) \
     SELECT id, pg_notify('ask_user_changes', id::TEXT) FROM up";

/// A new ask waiting for its group; its reply: the ask created, or `None` when its key has
/// asks (the caller runs the full rule).
pub(super) struct OpenJob {
    ask: NewAsk,
    reply: oneshot::Sender<Result<Option<AskRecord>>>,
}

/// An outcome waiting for its group; its reply: whether it won (`false`: the ask was not open,
/// or is missing — the caller reads which).
pub(super) struct CloseJob {
    id: AskId,
    state: &'static str,
    outcome: String,
    at: Timestamp,
    reply: oneshot::Sender<Result<bool>>,
}

/// The intakes of one store.
pub(super) struct Intakes {
    opens: mpsc::UnboundedSender<OpenJob>,
    closes: mpsc::UnboundedSender<CloseJob>,
}

type Run<J> = fn(PgStore, Vec<J>) -> Pin<Box<dyn Future<Output = ()> + Send>>;

impl Intakes {
    /// The intakes, their tasks started (they end once the store is dropped).
    pub(super) fn start() -> (Intakes, impl FnOnce(Weak<Inner>)) {
        let (opens, open_rx) = mpsc::unbounded_channel();
        let (closes, close_rx) = mpsc::unbounded_channel();
        let start = move |weak: Weak<Inner>| {
            let run_opens: Run<OpenJob> =
                |s, jobs| Box::pin(async move { s.run_opens(jobs).await });
            let run_closes: Run<CloseJob> =
                |s, jobs| Box::pin(async move { s.run_closes(jobs).await });
            tokio::spawn(intake(weak.clone(), open_rx, run_opens));
            tokio::spawn(intake(weak, close_rx, run_closes));
        };
        (Intakes { opens, closes }, start)
    }
}

/// Forms groups of the jobs queued and runs each in a task of its own, [`IN_FLIGHT`] at most.
async fn intake<J: Send + 'static>(
    weak: Weak<Inner>,
    mut jobs: mpsc::UnboundedReceiver<J>,
    run: Run<J>,
) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = jobs.recv().await else {
            return;
        };
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let store = PgStore { inner };
        tokio::spawn(async move {
            run(store, group).await;
            drop(slot);
        });
    }
}

fn stopped(shown: &str) -> Error {
    Error::backend(shown, "the store's writer has stopped")
}

/// Why a group failed: before its `COMMIT` (nothing of it is stored), or at it (unknown).
enum Failed {
    Before(Error),
    AtCommit(Error),
}

/// An error met before the `COMMIT` was sent or answered (`?` in a group's steps).
impl From<Error> for Failed {
    fn from(e: Error) -> Failed {
        Failed::Before(e)
    }
}

impl PgStore {
    /// Queues `ask` for the next group of new asks: the ask created, or `None` (nothing
    /// written) when its key has asks and the full rule must pick among them.
    pub(super) async fn open_new(&self, ask: &NewAsk) -> Result<Option<AskRecord>> {
        let (reply, answer) = oneshot::channel();
        let job = OpenJob {
            ask: ask.clone(),
            reply,
        };
        if self.inner.intakes.opens.send(job).is_err() {
            return Err(stopped(&self.inner.shown));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(stopped(&self.inner.shown)))
    }

    /// Queues an outcome for the next group of outcomes: `Ok(true)` when it won.
    pub(super) async fn close_open(
        &self,
        id: AskId,
        state: &'static str,
        outcome: String,
        at: Timestamp,
    ) -> Result<bool> {
        let (reply, answer) = oneshot::channel();
        let job = CloseJob {
            id,
            state,
            outcome,
            at,
            reply,
        };
        if self.inner.intakes.closes.send(job).is_err() {
            return Err(stopped(&self.inner.shown));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(stopped(&self.inner.shown)))
    }

    async fn run_opens(&self, jobs: Vec<OpenJob>) {
        let mut seen = HashSet::new();
        let mut group = Vec::with_capacity(jobs.len());
        for job in jobs {
            if job.reply.is_closed() {
                continue; // its caller stopped waiting: nothing is written for it
            }
            if seen.insert(job.ask.key.clone()) {
                group.push(job);
            } else {
                // The same key twice: the later one goes to the full rule (after this group
                // committed, it finds the earlier one under the key's lock).
                let _ = job.reply.send(Ok(None));
            }
        }
        if group.is_empty() {
            return;
        }
        match self.insert_new(&group).await {
            Ok(created) => {
                for (job, rec) in group.into_iter().zip(created) {
                    let _ = job.reply.send(Ok(rec));
                }
            }
            Err(Failed::Before(e)) if group.len() == 1 => {
                for job in group {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
            Err(Failed::Before(_)) => {
                // Nothing of the group is stored: each alone, so a bad one fails only itself.
                for job in group {
                    let one = std::slice::from_ref(&job);
                    let out = match self.insert_new(one).await {
                        Ok(mut created) => Ok(created.pop().flatten()),
                        Err(Failed::Before(e) | Failed::AtCommit(e)) => Err(e),
                    };
                    let _ = job.reply.send(out);
                }
            }
            Err(Failed::AtCommit(e)) => {
                for job in group {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// One transaction for `group`: each job's ask as created, or `None` when its key had asks.
    async fn insert_new(
        &self,
        group: &[OpenJob],
    ) -> std::result::Result<Vec<Option<AskRecord>>, Failed> {
        let n = group.len();
        let mut cols = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut locks = Vec::with_capacity(n);
        for job in group {
            let ask = &job.ask;
            locks.push(Self::lock_key(ask));
            cols.0.push(ask.key.scope().to_owned());
            cols.1.push(ask.key.request_hash().to_owned());
            cols.2.push(ask.key.is_host_keyed());
            cols.3.push(ask.request.clone());
            cols.4.push(encode_asker(&ask.asker));
            cols.5.push(ask.created_at.0);
            cols.6.push(duration_ms(ask.grace));
            cols.7.push(ask.created_at.plus(lease()).0);
            cols.8.push(ask.key.namespace().as_str().to_owned());
        }
        let params: [&(dyn ToSql + Sync); 9] = [
            &cols.0, &cols.1, &cols.2, &cols.3, &cols.4, &cols.5, &cols.6, &cols.7, &cols.8,
        ];
        let lock_params: [&(dyn ToSql + Sync); 1] = [&locks];
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        // Prepared first (a round trip each, the first time on this connection), so that the
        // pipeline below sends everything on its first poll.
        c.stmt(LOCK_KEYS).await?;
        c.stmt(INSERT_NEW).await?;
        // `biased`: polled in this order, so sent in this order, all on the first poll.
        let (begun, locked, inserted, committed) = tokio::join!(
            biased;
            c.batch_execute("BEGIN"),
            c.execute(LOCK_KEYS, &lock_params),
            c.query(INSERT_NEW, &params),
            c.batch_execute("COMMIT"),
        );
        // The first error is the cause; after it the server rolled the transaction back (its
        // `COMMIT` answers `ROLLBACK`), so nothing of the group is stored.
        begun?;
        locked?;
        let rows = inserted?;
        committed.map_err(Failed::AtCommit)?;
        let read = |row: &tokio_postgres::Row| {
            Ok((
                row.try_get::<_, i64>(0)?,
                row.try_get::<_, String>(1)?,
                row.try_get::<_, String>(2)?,
                row.try_get::<_, String>(3)?,
            ))
        };
        // Read after the `COMMIT`: a row that cannot be read leaves the group's fate unknown.
        let rows: Vec<(i64, String, String, String)> = c
            .located(rows.iter().map(read).collect())
            .map_err(Failed::AtCommit)?;
        let mut created: Vec<Option<AskRecord>> = vec![None; n];
        for (id, namespace, scope, hash) in rows {
            let at = group.iter().position(|j| {
                j.ask.key.namespace().as_str() == namespace
                    && j.ask.key.scope() == scope
                    && j.ask.key.request_hash() == hash
            });
            if let Some(i) = at {
                let ask = &group[i].ask;
                created[i] = Some(ask.created(AskId(id)));
            }
        }
        Ok(created)
    }

    async fn run_closes(&self, jobs: Vec<CloseJob>) {
        let mut seen = HashSet::new();
        let mut group = Vec::with_capacity(jobs.len());
        let mut later = Vec::new();
        for job in jobs {
            if job.reply.is_closed() {
                continue;
            }
            if seen.insert(job.id) {
                group.push(job);
            } else {
                later.push(job);
            }
        }
        // Row locks in id order: two groups never wait on each other in a cycle.
        group.sort_by_key(|j| j.id.0);
        self.close_group(group).await;
        // A second outcome for an ask of the group: after the first one committed (it loses).
        for job in later {
            self.close_group(vec![job]).await;
        }
    }

    async fn close_group(&self, group: Vec<CloseJob>) {
        if group.is_empty() {
            return;
        }
        match self.close_all(&group).await {
            Ok(won) => {
                for job in group {
                    let _ = job.reply.send(Ok(won.contains(&job.id.0)));
                }
            }
            Err(Failed::Before(_)) if group.len() > 1 => {
                for job in group {
                    let out = match self.close_all(std::slice::from_ref(&job)).await {
                        Ok(won) => Ok(won.contains(&job.id.0)),
                        Err(Failed::Before(e) | Failed::AtCommit(e)) => Err(e),
                    };
                    let _ = job.reply.send(out);
                }
            }
            Err(Failed::Before(e) | Failed::AtCommit(e)) => {
                for job in group {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// One transaction for `group` (distinct asks): the ids of the asks it closed.
    async fn close_all(&self, group: &[CloseJob]) -> std::result::Result<HashSet<i64>, Failed> {
        let ids: Vec<i64> = group.iter().map(|j| j.id.0).collect();
        let states: Vec<&str> = group.iter().map(|j| j.state).collect();
        let outcomes: Vec<&str> = group.iter().map(|j| j.outcome.as_str()).collect();
        let ats: Vec<i64> = group.iter().map(|j| j.at.0).collect();
        let params: [&(dyn ToSql + Sync); 4] = [&ids, &states, &outcomes, &ats];
        let guard = self.client().await?;
        let conn = guard.as_ref().ok_or_else(|| self.no_connection())?;
        let c = conn.cached();
        c.stmt(CLOSE_OPEN).await?;
        let rows = if group.len() == 1 {
            // One statement is its own transaction: no `BEGIN`/`COMMIT` to send. Its failure
            // leaves nothing stored either.
            c.query(CLOSE_OPEN, &params).await?
        } else {
            let (begun, closed, committed) = tokio::join!(
                biased;
                c.batch_execute("BEGIN"),
                c.query(CLOSE_OPEN, &params),
                c.batch_execute("COMMIT"),
            );
            begun?;
            let rows = closed?;
            committed.map_err(Failed::AtCommit)?;
            rows
        };
        c.located(rows.iter().map(|r| r.try_get::<_, i64>(0)).collect())
            .map_err(Failed::AtCommit)
    }
}
