//! Prepared statements kept per connection: each statement text is parsed and planned by the
//! server once per connection, then only bound and executed (one round trip instead of two).
//!
//! A [`Conn`] is one pooled query connection with its statements; a [`Cached`] is that
//! connection, or a transaction on it, with the same query methods as a `tokio_postgres`
//! client. A reconnect makes a new [`Conn`], so a statement never outlives its connection.
//! Statements are named, so a transaction-pooling proxy (PgBouncer in transaction mode) in
//! front of the server is not supported; session pooling is.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, GenericClient, Row, Statement, Transaction};

use crate::error::{Error, Result};

/// One query connection of the pool and the statements prepared on it.
pub(crate) struct Conn {
    pub(crate) client: Client,
    stmts: Mutex<HashMap<String, Statement>>,
    /// The server, for messages.
    shown: String,
}

impl Conn {
    pub(crate) fn new(client: Client, shown: &str) -> Conn {
        Conn {
            client,
            stmts: Mutex::new(HashMap::new()),
            shown: shown.to_owned(),
        }
    }

    /// The connection itself, with cached statements.
    pub(crate) fn cached(&self) -> Cached<'_, Client> {
        Cached {
            c: &self.client,
            stmts: &self.stmts,
            shown: &self.shown,
        }
    }

    /// Runs `f` in a transaction on it (with the connection's cached statements), and
    /// commits when `f` succeeded (else the transaction is rolled back).
    pub(crate) async fn in_tx<T>(
        &mut self,
        f: impl AsyncFnOnce(&Cached<'_, Transaction<'_>>) -> Result<T>,
    ) -> Result<T> {
        let shown = self.shown.as_str();
        let tx = located(shown, self.client.transaction().await)?;
        let out = f(&Cached {
            c: &tx,
            stmts: &self.stmts,
            shown,
        })
        .await?;
        located(shown, tx.commit().await)?;
        Ok(out)
    }
}

/// A client or transaction whose statements are prepared once per connection, and whose every
/// error becomes the store's ([`super::connect::pg_error`]), so callers use `?`.
pub(crate) struct Cached<'a, C> {
    c: &'a C,
    stmts: &'a Mutex<HashMap<String, Statement>>,
    shown: &'a str,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// The driver's result as the store's, for the server `shown`: every Postgres error of the
/// store becomes the store's here.
fn located<T>(shown: &str, r: std::result::Result<T, tokio_postgres::Error>) -> Result<T> {
    r.map_err(|e| super::connect::pg_error(shown, e))
}

impl<C: GenericClient + Sync> Cached<'_, C> {
    /// The server, for messages.
    pub(crate) fn shown(&self) -> &str {
        self.shown
    }

    /// The driver's result as the store's.
    pub(crate) fn located<T>(&self, r: std::result::Result<T, tokio_postgres::Error>) -> Result<T> {
        located(self.shown, r)
    }

    /// The statement for `sql`, prepared on this connection once (one round trip the first
    /// time, none after). A pipeline prepares its statements with this before it sends them.
    pub(crate) async fn stmt(&self, sql: &str) -> Result<Statement> {
        let known = self
            .stmts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(sql)
            .cloned();
        if let Some(s) = known {
            return Ok(s);
        }
        let s = self.located(self.c.prepare(sql).await)?;
        self.stmts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(sql.to_owned(), s.clone());
        Ok(s)
    }

    /// Runs `sql`; how many rows it changed.
    pub(crate) async fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        let s = self.stmt(sql).await?;
        self.located(self.c.execute(&s, params).await)
    }

    /// The rows of `sql`, as the driver gives them.
    pub(crate) async fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let s = self.stmt(sql).await?;
        self.located(self.c.query(&s, params).await)
    }

    /// Every row of `sql`, each read by `f`.
    pub(crate) async fn rows<T>(
        &self,
        sql: &str,
        params: Params<'_>,
        f: impl FnMut(&Row) -> std::result::Result<T, tokio_postgres::Error>,
    ) -> Result<Vec<T>> {
        let rows = self.query(sql, params).await?;
        self.located(rows.iter().map(f).collect())
    }

    /// The one row a statement returned (none is an error).
    pub(crate) fn one<T>(&self, rows: Vec<T>) -> Result<T> {
        let none = || Error::backend(self.shown, "the statement returned no row");
        rows.into_iter().next().ok_or_else(none)
    }

    /// Statements without parameters, several at once: not prepared.
    pub(crate) async fn batch_execute(&self, sql: &str) -> Result<()> {
        self.located(self.c.batch_execute(sql).await)
    }
}
