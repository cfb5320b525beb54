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
use tokio_postgres::{Client, Error, GenericClient, Row, Statement};

/// One query connection of the pool and the statements prepared on it.
pub(crate) struct Conn {
    pub(crate) client: Client,
    stmts: Mutex<HashMap<String, Statement>>,
}

impl Conn {
    pub(crate) fn new(client: Client) -> Conn {
        Conn {
            client,
            stmts: Mutex::new(HashMap::new()),
        }
    }

    /// The connection itself, with cached statements.
    pub(crate) fn cached(&self) -> Cached<'_, Client> {
        Cached {
            c: &self.client,
            stmts: &self.stmts,
        }
    }

    /// A transaction on it, with the connection's cached statements.
    pub(crate) async fn transaction(
        &mut self,
    ) -> Result<
        (
            tokio_postgres::Transaction<'_>,
            &Mutex<HashMap<String, Statement>>,
        ),
        Error,
    > {
        let tx = self.client.transaction().await?;
        Ok((tx, &self.stmts))
    }
}

/// A client or transaction whose statements are prepared once per connection.
pub(crate) struct Cached<'a, C> {
    pub(crate) c: &'a C,
    pub(crate) stmts: &'a Mutex<HashMap<String, Statement>>,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

impl<C: GenericClient + Sync> Cached<'_, C> {
    /// The statement for `sql`, prepared on this connection once (one round trip the first
    /// time, none after). A pipeline prepares its statements with this before it sends them.
    pub(crate) async fn stmt(&self, sql: &str) -> Result<Statement, Error> {
        let known = self
            .stmts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(sql)
            .cloned();
        if let Some(s) = known {
            return Ok(s);
        }
        let s = self.c.prepare(sql).await?;
        self.stmts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(sql.to_owned(), s.clone());
        Ok(s)
    }

    pub(crate) async fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64, Error> {
        let s = self.stmt(sql).await?;
        self.c.execute(&s, params).await
    }

    pub(crate) async fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, Error> {
        let s = self.stmt(sql).await?;
        self.c.query(&s, params).await
    }

    pub(crate) async fn query_opt(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, Error> {
        let s = self.stmt(sql).await?;
        self.c.query_opt(&s, params).await
    }

    pub(crate) async fn query_one(&self, sql: &str, params: Params<'_>) -> Result<Row, Error> {
        let s = self.stmt(sql).await?;
        self.c.query_one(&s, params).await
    }

    /// Statements without parameters, several at once: not prepared.
    pub(crate) async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.c.batch_execute(sql).await
    }
}
