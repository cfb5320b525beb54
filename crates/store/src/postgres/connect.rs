//! Connecting to the server: this backend's timeouts ([`tuned`]), the connection that listens
//! for changes, the migration, the clock's skew; and where the driver's errors become the
//! store's ([`pg_error`]).

use std::future::poll_fn;
use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::tls::NoTlsStream;
use tokio_postgres::{Client, Config, NoTls, Socket};

use super::CHANNEL;
use super::cached::Conn;
use crate::error::{Cause, Error, Result};
use crate::model::Timestamp;
use crate::schema;

/// The advisory lock key that serialises migrations ("askuser" in ASCII).
const MIGRATION_LOCK: i64 = 0x61_736b_7573_6572;

pub(super) type PgConnection = tokio_postgres::Connection<Socket, NoTlsStream>;

/// How long connecting may take (URL: `connect_timeout`).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long sent data may stay unacknowledged before the connection is dropped (Linux
/// `TCP_USER_TIMEOUT`; URL: `tcp_user_timeout`). Keepalives start after the same idle time.
pub(crate) const TCP_USER_TIMEOUT: Duration = Duration::from_secs(20);

/// The longest one statement runs on the server (URL `options` setting `statement_timeout`
/// replaces it).
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// `url`'s connection settings with this backend's timeouts where the URL sets none.
///
/// # Errors
/// The URL's parse error.
pub(crate) fn tuned(url: &str) -> std::result::Result<Config, tokio_postgres::Error> {
    let mut cfg = Config::from_str(url)?;
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(CONNECT_TIMEOUT);
    }
    if cfg.get_tcp_user_timeout().is_none() {
        cfg.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    cfg.keepalives(true);
    if cfg.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
        cfg.keepalives_idle(TCP_USER_TIMEOUT);
    }
    let options = cfg.get_options().unwrap_or("").to_owned();
    if !options.contains("statement_timeout") {
        let ms = STATEMENT_TIMEOUT.as_millis();
        let joined = format!("{options} -c statement_timeout={ms}");
        cfg.options(joined.trim_start());
    }
    Ok(cfg)
}

/// A clock this close to the database's is taken as it is (a round trip, NTP's drift).
pub(super) const CLOCK_TOLERANCE_MS: i64 = 2_000;

/// The database's clock minus this process's (ms; 0 within [`CLOCK_TOLERANCE_MS`]), read
/// once: the midpoint of one round trip.
pub(super) async fn measure_skew(conn: &Conn) -> Result<i64> {
    let before = Timestamp::now();
    let c = conn.cached();
    let db: i64 = c.one(
        c.rows(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
            |r| r.try_get(0),
        )
        .await?,
    )?;
    let after = Timestamp::now();
    let skew = db - (before.0 + (after.0 - before.0) / 2);
    if skew.abs() < CLOCK_TOLERANCE_MS {
        return Ok(0);
    }
    tracing::warn!(
        "this machine's clock is {} s off the clock of the database {}: the store's decisions take the database's",
        -skew / 1000,
        conn.cached().shown()
    );
    Ok(skew)
}

/// The server a URL names, without user or password: `postgres://HOST:PORT/DB`.
pub(super) fn shown_of(url: &str) -> String {
    let Ok(cfg) = Config::from_str(url) else {
        return "postgres (an unreadable URL)".to_owned();
    };
    let host = match cfg.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{host}:{port}/{}",
        cfg.get_dbname().unwrap_or("")
    )
}

/// The server's words for an error (tokio-postgres's own text is only "db error").
pub(super) fn detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(": ");
                text.push_str(&s.to_string());
                source = s.source();
            }
            text
        }
    }
}

/// The driver's error as a [`Cause`], with its SQLSTATE when the server gave one.
pub(super) fn cause(e: tokio_postgres::Error) -> Cause {
    let code = e.code().map(|c| c.code().to_owned());
    Cause::new(e, code)
}

/// The store's error for a failed statement or call of the driver on the server `shown`.
pub(super) fn pg_error(shown: &str, e: tokio_postgres::Error) -> Error {
    Error::Backend {
        location: shown.to_owned(),
        detail: detail(&e),
        cause: Some(cause(e)),
    }
}

pub(super) async fn connect(url: &str, shown: &str) -> Result<(Client, PgConnection)> {
    let connected = async { tuned(url)?.connect(NoTls).await }.await;
    connected.map_err(|e| Error::Unreachable {
        location: shown.to_owned(),
        detail: detail(&e),
        cause: Some(cause(e)),
    })
}

/// A connection that has run `LISTEN`, the connection still to be driven by the caller.
pub(super) async fn listen_connect(url: &str, shown: &str) -> Result<(Client, PgConnection)> {
    let (client, mut conn) = connect(url, shown).await?;
    // `None`: the server closed the connection.
    let unreachable = |e: Option<tokio_postgres::Error>| Error::Unreachable {
        location: shown.to_owned(),
        detail: e
            .as_ref()
            .map_or_else(|| "the server closed the connection".to_owned(), detail),
        cause: e.map(cause),
    };
    {
        let sql = format!("LISTEN {CHANNEL}");
        let listen = client.batch_execute(&sql);
        tokio::pin!(listen);
        loop {
            tokio::select! {
                r = &mut listen => match r {
                    Ok(()) => break,
                    Err(e) => return Err(unreachable(Some(e))),
                },
                m = poll_fn(|cx| conn.poll_message(cx)) => match m {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(unreachable(Some(e))),
                    None => return Err(unreachable(None)),
                }
            }
        }
    }
    Ok((client, conn))
}

pub(super) async fn migrate(conn: &mut Conn) -> Result<()> {
    conn.in_tx(async |tx| {
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS ask_user_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)",
        )
        .await?;
        let meta = async |key: &'static str| {
            tx.rows(
                "SELECT value FROM ask_user_meta WHERE key = $1",
                &[&key],
                |r| r.try_get::<_, i64>(0),
            )
            .await
            .map(|v| v.first().copied().unwrap_or(0))
        };
        let found = meta("schema_version").await?;
        let compat = meta("compatible_from").await?;
        if schema::check(tx.shown(), found, compat)? {
            for m in schema::MIGRATIONS.iter().filter(|m| m.version > found) {
                tx.batch_execute(m.postgres).await?;
                tx.execute(
                    "INSERT INTO ask_user_meta (key, value) VALUES ('schema_version', $1), ('compatible_from', $2) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    &[&m.version, &m.compatible_from.max(compat)],
                )
                .await?;
            }
        }
        Ok(())
    })
    .await
}
