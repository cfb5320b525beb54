//! Running statements on SQLite: the one place where the driver's errors become the store's
//! ([`map_err`], for the store's file), so the backend's code uses `?` on every statement.
//!
//! A read runs on a [`Db`] (a reader connection), a write on a [`Writer`] (the writer thread's
//! connection, inside its group's transaction), a write's own part on a [`Tx`] (a savepoint,
//! or the migration's transaction). Each runs statements through [`Run`].

use std::ops::Deref;

use rusqlite::{CachedStatement, Connection, Params, Row, TransactionBehavior};

use super::open::map_err;
use crate::error::Result;

/// Statements on one connection (or a transaction or savepoint on it), their errors mapped for
/// the store's file.
pub(super) trait Run {
    /// The connection the statements run on.
    fn conn(&self) -> &Connection;

    /// The store's file, for messages.
    fn shown(&self) -> &str;

    /// Runs `f` on the connection and maps its error: for the driver's calls that are not one
    /// of the statements below (settings, a sequence of calls that fail as one).
    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        opening(self.shown(), || f(self.conn()))
    }

    /// Runs the statement `sql` once (not kept prepared); how many rows it changed.
    fn execute(&self, sql: &str, params: impl Params) -> Result<usize> {
        self.with(|c| c.execute(sql, params))
    }

    /// Runs statements without parameters.
    fn batch(&self, sql: &str) -> Result<()> {
        self.with(|c| c.execute_batch(sql))
    }

    /// Runs `f` on the statement `sql`, prepared once per connection (kept in its cache).
    fn cached<T>(
        &self,
        sql: &str,
        f: impl FnOnce(&mut CachedStatement<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        self.with(|c| f(&mut c.prepare_cached(sql)?))
    }

    /// Every row of the statement `sql` (kept prepared), each read by `f`.
    fn rows<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        self.cached(sql, |s| s.query_map(params, f)?.collect())
    }
}

/// A connection `C` with the store's file: [`Db`], [`Writer`] or [`Tx`].
pub(super) struct On<'s, C> {
    conn: C,
    shown: &'s str,
}

/// A reader's connection, or one being opened.
pub(super) type Db<'c> = On<'c, &'c Connection>;

/// The writer's connection: a write opens its savepoint on it.
pub(super) type Writer<'c> = On<'c, &'c mut Connection>;

/// A savepoint or a transaction: rolled back when dropped, unless committed.
pub(super) type Tx<'c> = On<'c, Scope<'c>>;

impl<'s, C> On<'s, C> {
    pub(super) fn new(conn: C, shown: &'s str) -> On<'s, C> {
        On { conn, shown }
    }
}

impl<C: Deref<Target = Connection>> Run for On<'_, C> {
    fn conn(&self) -> &Connection {
        &self.conn
    }
    fn shown(&self) -> &str {
        self.shown
    }
}

impl Writer<'_> {
    /// A savepoint.
    pub(super) fn savepoint(&mut self) -> Result<Tx<'_>> {
        let sp = opening(self.shown, || self.conn.savepoint())?;
        Ok(On::new(Scope::Savepoint(sp), self.shown))
    }

    /// A transaction that takes the write lock at once (`BEGIN IMMEDIATE`).
    pub(super) fn immediate(&mut self) -> Result<Tx<'_>> {
        let tx = opening(self.shown, || {
            self.conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
        })?;
        Ok(On::new(Scope::Transaction(tx), self.shown))
    }
}

/// What a [`Tx`] runs in.
pub(super) enum Scope<'c> {
    Savepoint(rusqlite::Savepoint<'c>),
    Transaction(rusqlite::Transaction<'c>),
}

impl Deref for Scope<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        match self {
            Scope::Savepoint(sp) => sp,
            Scope::Transaction(tx) => tx,
        }
    }
}

impl Tx<'_> {
    /// Keeps what it wrote.
    pub(super) fn commit(self) -> Result<()> {
        opening(self.shown, || match self.conn {
            Scope::Savepoint(sp) => sp.commit(),
            Scope::Transaction(tx) => tx.commit(),
        })
    }
}

/// Runs `f` — the driver's calls that open or set up a connection, or end a transaction — and
/// maps its error for the store's file: every SQLite error of the store becomes the store's
/// here.
pub(super) fn opening<T>(shown: &str, f: impl FnOnce() -> rusqlite::Result<T>) -> Result<T> {
    f().map_err(|e| map_err(shown, e))
}
