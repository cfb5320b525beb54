//! Running statements on SQLite: the one place where the driver's errors become the store's
//! ([`map_err`], for the store's file), so the backend's code uses `?` on every statement.
//!
//! A read runs on a [`Db`] (a reader connection), a write on a [`Writer`] (the writer thread's
//! connection, inside its group's transaction), a write's own part on a [`Tx`] (a savepoint,
//! or the migration's transaction). Each runs statements through [`Run`].

use rusqlite::{CachedStatement, Connection, OptionalExtension, Params, Row, TransactionBehavior};

use super::map_err;
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

    /// The first row of `sql` (not kept prepared), read by `f`; no row is an error.
    fn row<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        self.with(|c| c.query_row(sql, params, f))
    }

    /// The first row of `sql` (not kept prepared), read by `f`, if there is one.
    fn row_opt<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        self.with(|c| c.query_row(sql, params, f).optional())
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

/// A connection with the store's file: a reader's, or one being opened.
pub(super) struct Db<'c> {
    conn: &'c Connection,
    shown: &'c str,
}

impl<'c> Db<'c> {
    pub(super) fn new(conn: &'c Connection, shown: &'c str) -> Db<'c> {
        Db { conn, shown }
    }
}

impl Run for Db<'_> {
    fn conn(&self) -> &Connection {
        self.conn
    }
    fn shown(&self) -> &str {
        self.shown
    }
}

/// The writer's connection, with the store's file: a write opens its savepoint on it.
pub(super) struct Writer<'c> {
    conn: &'c mut Connection,
    shown: &'c str,
}

impl<'c> Writer<'c> {
    pub(super) fn new(conn: &'c mut Connection, shown: &'c str) -> Writer<'c> {
        Writer { conn, shown }
    }

    /// A savepoint: rolled back when dropped, unless committed.
    pub(super) fn savepoint(&mut self) -> Result<Tx<'_>> {
        let shown = self.shown;
        let sp = opening(shown, || self.conn.savepoint())?;
        Ok(Tx {
            inner: Inner::Savepoint(sp),
            shown,
        })
    }

    /// A transaction that takes the write lock at once (`BEGIN IMMEDIATE`): rolled back when
    /// dropped, unless committed.
    pub(super) fn immediate(&mut self) -> Result<Tx<'_>> {
        let shown = self.shown;
        let tx = opening(shown, || {
            self.conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
        })?;
        Ok(Tx {
            inner: Inner::Transaction(tx),
            shown,
        })
    }
}

impl Run for Writer<'_> {
    fn conn(&self) -> &Connection {
        self.conn
    }
    fn shown(&self) -> &str {
        self.shown
    }
}

/// A savepoint or transaction, with the store's file.
pub(super) struct Tx<'c> {
    inner: Inner<'c>,
    shown: &'c str,
}

enum Inner<'c> {
    Savepoint(rusqlite::Savepoint<'c>),
    Transaction(rusqlite::Transaction<'c>),
}

impl Tx<'_> {
    /// Keeps what it wrote.
    pub(super) fn commit(self) -> Result<()> {
        opening(self.shown, || match self.inner {
            Inner::Savepoint(sp) => sp.commit(),
            Inner::Transaction(tx) => tx.commit(),
        })
    }
}

impl Run for Tx<'_> {
    fn conn(&self) -> &Connection {
        match &self.inner {
            Inner::Savepoint(sp) => sp,
            Inner::Transaction(tx) => tx,
        }
    }
    fn shown(&self) -> &str {
        self.shown
    }
}

/// Runs `f` — the driver's calls that open or set up a connection, or end a transaction — and
/// maps its error for the store's file: every SQLite error of the store becomes the store's
/// here.
pub(super) fn opening<T>(shown: &str, f: impl FnOnce() -> rusqlite::Result<T>) -> Result<T> {
    f().map_err(|e| map_err(shown, e))
}
