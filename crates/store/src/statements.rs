//! One statement table per SQL dialect, and the operations that are one statement on every SQL
//! backend, written once.
//!
//! The SQLite and Postgres backends differ here only in their [`Statements`] ([`SQLITE`],
//! [`POSTGRES`]: table names, placeholders, a JSON accessor, a string search): each backend
//! implements [`SqlDb`] — run one statement with [`Param`]s, get its rows as [`Cell`]s — and the
//! operations below (reading asks, channel tokens and messages, hashed secrets, counts of open
//! asks) are shared. A single statement is atomic on its own, so none needs a transaction of its own.

use crate::channel::ChannelToken;
use crate::error::{Error, Result};
use crate::model::{
    AskId, AskRecord, GivenAnswer, HistoryPage, Namespace, OpenPage, Outcome, Timestamp,
};
use crate::row::{RawAsk, ask_columns, decode_outcome};
use crate::secrets::{NewSecret, SecretRecord};

/// The statements of one dialect, one per operation.
pub(crate) struct Statements {
    pub(crate) put_channel_token: &'static str,
    pub(crate) channel_token: &'static str,
    pub(crate) claim_channel_send: &'static str,
    pub(crate) set_channel_reference: &'static str,
    pub(crate) claim_channel_closes: &'static str,
    pub(crate) channel_message_ask: &'static str,
    pub(crate) add_secret: &'static str,
    pub(crate) check_secret: &'static str,
    pub(crate) consume_secret: &'static str,
    pub(crate) revoke_secrets: &'static str,
    pub(crate) list_secrets: &'static str,
    pub(crate) count_open: &'static str,
    pub(crate) count_open_in: &'static str,
    pub(crate) get_ask: &'static str,
    pub(crate) list_open: &'static str,
    pub(crate) list_open_page: &'static str,
    pub(crate) history_first: &'static str,
    pub(crate) history_after: &'static str,
    pub(crate) given_answers: &'static str,
    pub(crate) acquire_lease: &'static str,
    pub(crate) renew_lease: &'static str,
    pub(crate) release_lease: &'static str,
    pub(crate) lease: &'static str,
}

/// The columns a secret is read from, in [`secret_of`]'s order.
macro_rules! secret_columns {
    () => {
        "kind, name, created_at, expires_at, used_at, revoked_at"
    };
}

/// SQLite's statements (`?N` placeholders, unprefixed tables).
pub(crate) const SQLITE: Statements = Statements {
    put_channel_token: "INSERT INTO channel_tokens (hash, ask, channel, choice, user_id) \
                        VALUES (?1, ?2, ?3, ?4, ?5)",
    channel_token: "SELECT ask, channel, choice, user_id, used_at FROM channel_tokens WHERE hash = ?1",
    claim_channel_send: "INSERT INTO channel_messages (ask, channel) VALUES (?1, ?2) \
                         ON CONFLICT DO NOTHING",
    set_channel_reference: "UPDATE channel_messages SET reference = ?3 \
                            WHERE ask = ?1 AND channel = ?2",
    claim_channel_closes: "UPDATE channel_messages SET closed_at = ?2 \
                           WHERE ask = ?1 AND reference IS NOT NULL AND closed_at IS NULL \
                           RETURNING channel, reference",
    channel_message_ask: "SELECT ask FROM channel_messages WHERE channel = ?1 \
                          AND instr(',' || reference || ',', ',' || ?2 || ',') > 0 \
                          ORDER BY ask DESC LIMIT 1",
    add_secret: "INSERT INTO secrets (hash, kind, name, created_at, expires_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
    check_secret: concat!(
        "SELECT ",
        secret_columns!(),
        " FROM secrets WHERE hash = ?1 AND kind = ?2 \
         AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?3)"
    ),
    consume_secret: concat!(
        "UPDATE secrets SET used_at = ?3 WHERE hash = ?1 AND kind = ?2 AND used_at IS NULL \
         AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?3) RETURNING ",
        secret_columns!()
    ),
    revoke_secrets: "UPDATE secrets SET revoked_at = ?3 WHERE kind = ?1 \
                     AND (?2 IS NULL OR name = ?2) AND revoked_at IS NULL",
    list_secrets: concat!(
        "SELECT ",
        secret_columns!(),
        " FROM secrets WHERE kind = ?1 AND revoked_at IS NULL ORDER BY name, created_at"
    ),
    // Kept by the asks table's triggers (schema.rs, migration 9): one row, whatever the number
    // of open asks.
    count_open: "SELECT value FROM meta WHERE key = 'open_asks'",
    count_open_in: "SELECT count(*) FROM asks WHERE namespace = ?1 AND state = 'open'",
    get_ask: concat!("SELECT ", ask_columns!(), " FROM asks WHERE id = ?1"),
    list_open: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM asks WHERE state = 'open' ORDER BY id DESC"
    ),
    // Served by the partial index `asks_open (id) WHERE state = 'open'`: no sort, no scan past
    // the page. Named, because with statistics saying most asks are open SQLite walked the
    // table by id instead, through every closed ask newer than the page.
    list_open_page: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM asks INDEXED BY asks_open WHERE state = 'open' AND id < ?1 ORDER BY id DESC LIMIT ?2"
    ),
    history_first: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM asks WHERE state <> 'open' ORDER BY closed_at DESC, id DESC LIMIT ?1"
    ),
    history_after: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM asks WHERE state <> 'open' AND (closed_at, id) < (?1, ?2) \
         ORDER BY closed_at DESC, id DESC LIMIT ?3"
    ),
    // The newest closed asks as `history_first` reads them, then only the answers delivered.
    given_answers: "SELECT namespace, request_hash, closed_at, outcome FROM \
                    (SELECT namespace, request_hash, closed_at, outcome, state, delivered_at, id \
                     FROM asks WHERE state <> 'open' ORDER BY closed_at DESC, id DESC LIMIT ?1) \
                    WHERE state = 'answered' AND delivered_at IS NOT NULL \
                    ORDER BY closed_at DESC, id DESC",
    acquire_lease: "INSERT INTO leases (name, holder, until) VALUES (?1, ?2, ?3) \
                    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until \
                    WHERE leases.until <= ?4 OR leases.holder = excluded.holder",
    renew_lease: "UPDATE leases SET until = ?3 WHERE name = ?1 AND holder = ?2 AND until > ?4",
    release_lease: "DELETE FROM leases WHERE name = ?1 AND holder = ?2",
    lease: "SELECT holder, until FROM leases WHERE name = ?1",
};

/// Postgres's statements (`$N` placeholders, `ask_user_` tables).
pub(crate) const POSTGRES: Statements = Statements {
    put_channel_token: "INSERT INTO ask_user_channel_tokens (hash, ask, channel, choice, user_id) \
                        VALUES ($1, $2, $3, $4, $5)",
    channel_token: "SELECT ask, channel, choice, user_id, used_at FROM ask_user_channel_tokens \
                    WHERE hash = $1",
    claim_channel_send: "INSERT INTO ask_user_channel_messages (ask, channel) VALUES ($1, $2) \
                         ON CONFLICT DO NOTHING",
    set_channel_reference: "UPDATE ask_user_channel_messages SET reference = $3 \
                            WHERE ask = $1 AND channel = $2",
    claim_channel_closes: "UPDATE ask_user_channel_messages SET closed_at = $2 \
                           WHERE ask = $1 AND reference IS NOT NULL AND closed_at IS NULL \
                           RETURNING channel, reference",
    channel_message_ask: "SELECT ask FROM ask_user_channel_messages WHERE channel = $1 \
                          AND strpos(',' || reference || ',', ',' || $2 || ',') > 0 \
                          ORDER BY ask DESC LIMIT 1",
    add_secret: "INSERT INTO ask_user_secrets (hash, kind, name, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5)",
    check_secret: concat!(
        "SELECT ",
        secret_columns!(),
        " FROM ask_user_secrets WHERE hash = $1 AND kind = $2 \
         AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)"
    ),
    consume_secret: concat!(
        "UPDATE ask_user_secrets SET used_at = $3 WHERE hash = $1 AND kind = $2 \
         AND used_at IS NULL AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3) \
         RETURNING ",
        secret_columns!()
    ),
    revoke_secrets: "UPDATE ask_user_secrets SET revoked_at = $3 WHERE kind = $1 \
                     AND ($2::TEXT IS NULL OR name = $2) AND revoked_at IS NULL",
    list_secrets: concat!(
        "SELECT ",
        secret_columns!(),
        " FROM ask_user_secrets WHERE kind = $1 AND revoked_at IS NULL ORDER BY name, created_at"
    ),
    // Kept by the asks table's triggers (schema.rs, migration 9): 16 rows, whatever the number
    // of open asks.
    count_open: "SELECT coalesce(sum(n), 0)::BIGINT FROM ask_user_open_asks",
    count_open_in: "SELECT count(*) FROM ask_user_asks WHERE namespace = $1 AND state = 'open'",
    get_ask: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM ask_user_asks WHERE id = $1"
    ),
    list_open: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM ask_user_asks WHERE state = 'open' ORDER BY id DESC"
    ),
    // Served by the partial index `ask_user_asks_open (id) WHERE state = 'open'`: no sort, no scan past
    // the page.
    list_open_page: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM ask_user_asks WHERE state = 'open' AND id < $1 ORDER BY id DESC LIMIT $2"
    ),
    history_first: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM ask_user_asks WHERE state <> 'open' ORDER BY closed_at DESC, id DESC LIMIT $1"
    ),
    history_after: concat!(
        "SELECT ",
        ask_columns!(),
        " FROM ask_user_asks WHERE state <> 'open' AND (closed_at, id) < ($1, $2) \
         ORDER BY closed_at DESC, id DESC LIMIT $3"
    ),
    given_answers: "SELECT namespace, request_hash, closed_at, outcome FROM \
                    (SELECT namespace, request_hash, closed_at, outcome, state, delivered_at, id \
                     FROM ask_user_asks WHERE state <> 'open' \
                     ORDER BY closed_at DESC, id DESC LIMIT $1) AS recent \
                    WHERE state = 'answered' AND delivered_at IS NOT NULL \
                    ORDER BY closed_at DESC, id DESC",
    acquire_lease: "INSERT INTO ask_user_leases (name, holder, until) VALUES ($1, $2, $3) \
                    ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until \
                    WHERE ask_user_leases.until <= $4 OR ask_user_leases.holder = EXCLUDED.holder",
    renew_lease: "UPDATE ask_user_leases SET until = $3 WHERE name = $1 AND holder = $2 AND until > $4",
    release_lease: "DELETE FROM ask_user_leases WHERE name = $1 AND holder = $2",
    lease: "SELECT holder, until FROM ask_user_leases WHERE name = $1",
};

/// A statement parameter: the types these statements bind.
#[derive(Debug, Clone)]
pub(crate) enum Param {
    Int(i64),
    Text(String),
    OptInt(Option<i64>),
    OptText(Option<String>),
}

/// One column of a result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Int(i64),
    Text(String),
    /// Postgres's `BOOLEAN` (SQLite stores 0 or 1, read as [`Cell::Int`]).
    Bool(bool),
    Null,
}

/// A backend that runs one statement of its dialect at a time.
pub(crate) trait SqlDb {
    /// This dialect's statements.
    const STATEMENTS: &'static Statements;

    /// The store, for messages.
    fn location(&self) -> &str;

    /// Runs a statement that writes; how many rows it changed.
    async fn execute(&self, sql: &'static str, params: Vec<Param>) -> Result<u64>;

    /// Runs a statement and returns its rows; `write` when it changes rows (`… RETURNING`).
    async fn rows(
        &self,
        sql: &'static str,
        params: Vec<Param>,
        write: bool,
    ) -> Result<Vec<Vec<Cell>>>;
}

fn bad_column(location: &str) -> Error {
    Error::backend(location, "a column holds a value of an unexpected type")
}

/// Reads a row's columns in order.
struct Columns<'a> {
    cells: std::vec::IntoIter<Cell>,
    location: &'a str,
}

impl<'a> Columns<'a> {
    fn new(row: Vec<Cell>, location: &'a str) -> Columns<'a> {
        Columns {
            cells: row.into_iter(),
            location,
        }
    }

    fn opt_int(&mut self) -> Result<Option<i64>> {
        match self.cells.next() {
            Some(Cell::Int(i)) => Ok(Some(i)),
            Some(Cell::Null) => Ok(None),
            _ => Err(bad_column(self.location)),
        }
    }

    fn int(&mut self) -> Result<i64> {
        self.opt_int()?.ok_or_else(|| bad_column(self.location))
    }

    fn opt_text(&mut self) -> Result<Option<String>> {
        match self.cells.next() {
            Some(Cell::Text(s)) => Ok(Some(s)),
            Some(Cell::Null) => Ok(None),
            _ => Err(bad_column(self.location)),
        }
    }

    fn text(&mut self) -> Result<String> {
        self.opt_text()?.ok_or_else(|| bad_column(self.location))
    }

    fn bool(&mut self) -> Result<bool> {
        match self.cells.next() {
            Some(Cell::Bool(b)) => Ok(b),
            Some(Cell::Int(i)) => Ok(i != 0),
            _ => Err(bad_column(self.location)),
        }
    }
}

fn raw_ask_of(row: Vec<Cell>, location: &str) -> Result<RawAsk> {
    let mut c = Columns::new(row, location);
    Ok(RawAsk {
        id: c.int()?,
        scope: c.text()?,
        request_hash: c.text()?,
        host_keyed: c.bool()?,
        request: c.text()?,
        asker: c.text()?,
        created_at: c.int()?,
        grace_ms: c.int()?,
        attached: c.bool()?,
        detached_at: c.opt_int()?,
        outcome: c.opt_text()?,
        closed_at: c.opt_int()?,
        delivered_at: c.opt_int()?,
        lease_until: c.opt_int()?,
        namespace: c.text()?,
    })
}

fn records_of(rows: Vec<Vec<Cell>>, location: &str) -> Result<Vec<AskRecord>> {
    rows.into_iter()
        .map(|r| raw_ask_of(r, location)?.into_record(location))
        .collect()
}

fn secret_of(row: Vec<Cell>, location: &str) -> Result<SecretRecord> {
    let mut c = Columns::new(row, location);
    Ok(SecretRecord {
        kind: c.text()?,
        name: c.text()?,
        created_at: Timestamp(c.int()?),
        expires_at: c.opt_int()?.map(Timestamp),
        used_at: c.opt_int()?.map(Timestamp),
        revoked_at: c.opt_int()?.map(Timestamp),
    })
}

fn secrets_of(rows: Vec<Vec<Cell>>, location: &str) -> Result<Vec<SecretRecord>> {
    rows.into_iter().map(|r| secret_of(r, location)).collect()
}

fn count_of(rows: Vec<Vec<Cell>>, location: &str) -> Result<u64> {
    let n = match rows.into_iter().next() {
        Some(row) => Columns::new(row, location).int()?,
        None => 0,
    };
    Ok(u64::try_from(n).unwrap_or(0))
}

pub(crate) async fn put_channel_token<D: SqlDb>(db: &D, t: &ChannelToken) -> Result<()> {
    let params = vec![
        Param::Text(t.hash.clone()),
        Param::Int(t.ask.0),
        Param::Text(t.channel.clone()),
        Param::Text(t.choice.clone()),
        Param::OptText(t.user.clone()),
    ];
    db.execute(D::STATEMENTS.put_channel_token, params)
        .await
        .map(drop)
}

pub(crate) async fn channel_token<D: SqlDb>(
    db: &D,
    hash: &str,
) -> Result<Option<(ChannelToken, bool)>> {
    let params = vec![Param::Text(hash.to_owned())];
    let rows = db.rows(D::STATEMENTS.channel_token, params, false).await?;
    let Some(row) = rows.into_iter().next() else {
        return Ok(None);
    };
    let mut c = Columns::new(row, db.location());
    let token = ChannelToken {
        hash: hash.to_owned(),
        ask: AskId(c.int()?),
        channel: c.text()?,
        choice: c.text()?,
        user: c.opt_text()?,
    };
    let used = c.opt_int()?.is_some();
    Ok(Some((token, used)))
}

pub(crate) async fn claim_channel_send<D: SqlDb>(
    db: &D,
    ask: AskId,
    channel: &str,
) -> Result<bool> {
    let params = vec![Param::Int(ask.0), Param::Text(channel.to_owned())];
    Ok(db.execute(D::STATEMENTS.claim_channel_send, params).await? == 1)
}

pub(crate) async fn set_channel_reference<D: SqlDb>(
    db: &D,
    ask: AskId,
    channel: &str,
    reference: &str,
) -> Result<()> {
    let params = vec![
        Param::Int(ask.0),
        Param::Text(channel.to_owned()),
        Param::Text(reference.to_owned()),
    ];
    db.execute(D::STATEMENTS.set_channel_reference, params)
        .await
        .map(drop)
}

pub(crate) async fn claim_channel_closes<D: SqlDb>(
    db: &D,
    ask: AskId,
    at: Timestamp,
) -> Result<Vec<(String, String)>> {
    let params = vec![Param::Int(ask.0), Param::Int(at.0)];
    let rows = db
        .rows(D::STATEMENTS.claim_channel_closes, params, true)
        .await?;
    let mut out = rows
        .into_iter()
        .map(|row| {
            let mut c = Columns::new(row, db.location());
            Ok((c.text()?, c.text()?))
        })
        .collect::<Result<Vec<(String, String)>>>()?;
    out.sort();
    Ok(out)
}

pub(crate) async fn channel_message_ask<D: SqlDb>(
    db: &D,
    channel: &str,
    part: &str,
) -> Result<Option<AskId>> {
    let params = vec![
        Param::Text(channel.to_owned()),
        Param::Text(part.to_owned()),
    ];
    let rows = db
        .rows(D::STATEMENTS.channel_message_ask, params, false)
        .await?;
    match rows.into_iter().next() {
        Some(row) => Ok(Some(AskId(Columns::new(row, db.location()).int()?))),
        None => Ok(None),
    }
}

pub(crate) async fn add_secret<D: SqlDb>(db: &D, s: &NewSecret) -> Result<()> {
    let params = vec![
        Param::Text(s.hash.clone()),
        Param::Text(s.kind.clone()),
        Param::Text(s.name.clone()),
        Param::Int(s.created_at.0),
        Param::OptInt(s.expires_at.map(|t| t.0)),
    ];
    db.execute(D::STATEMENTS.add_secret, params).await.map(drop)
}

pub(crate) async fn check_secret<D: SqlDb>(
    db: &D,
    kind: &str,
    hash: &str,
    now: Timestamp,
) -> Result<Option<SecretRecord>> {
    secret_by_hash(db, D::STATEMENTS.check_secret, false, kind, hash, now).await
}

pub(crate) async fn consume_secret<D: SqlDb>(
    db: &D,
    kind: &str,
    hash: &str,
    now: Timestamp,
) -> Result<Option<SecretRecord>> {
    secret_by_hash(db, D::STATEMENTS.consume_secret, true, kind, hash, now).await
}

/// The live secret of `kind` whose hash is `hash`, read (or, with `write`, spent) by
/// `statement`, which takes the hash, the kind and the time, in that order.
async fn secret_by_hash<D: SqlDb>(
    db: &D,
    statement: &'static str,
    write: bool,
    kind: &str,
    hash: &str,
    now: Timestamp,
) -> Result<Option<SecretRecord>> {
    let params = vec![
        Param::Text(hash.to_owned()),
        Param::Text(kind.to_owned()),
        Param::Int(now.0),
    ];
    let rows = db.rows(statement, params, write).await?;
    Ok(secrets_of(rows, db.location())?.pop())
}

pub(crate) async fn revoke_secrets<D: SqlDb>(
    db: &D,
    kind: &str,
    name: Option<&str>,
    now: Timestamp,
) -> Result<u64> {
    let params = vec![
        Param::Text(kind.to_owned()),
        Param::OptText(name.map(str::to_owned)),
        Param::Int(now.0),
    ];
    db.execute(D::STATEMENTS.revoke_secrets, params).await
}

pub(crate) async fn list_secrets<D: SqlDb>(db: &D, kind: &str) -> Result<Vec<SecretRecord>> {
    let params = vec![Param::Text(kind.to_owned())];
    let rows = db.rows(D::STATEMENTS.list_secrets, params, false).await?;
    secrets_of(rows, db.location())
}

pub(crate) async fn count_open<D: SqlDb>(db: &D) -> Result<u64> {
    let rows = db.rows(D::STATEMENTS.count_open, Vec::new(), false).await?;
    count_of(rows, db.location())
}

pub(crate) async fn count_open_in<D: SqlDb>(db: &D, namespace: &Namespace) -> Result<u64> {
    let params = vec![Param::Text(namespace.as_str().to_owned())];
    let rows = db.rows(D::STATEMENTS.count_open_in, params, false).await?;
    count_of(rows, db.location())
}

pub(crate) async fn get<D: SqlDb>(db: &D, id: AskId) -> Result<AskRecord> {
    let rows = db
        .rows(D::STATEMENTS.get_ask, vec![Param::Int(id.0)], false)
        .await?;
    records_of(rows, db.location())?
        .pop()
        .ok_or(Error::NotFound(id))
}

pub(crate) async fn list_open<D: SqlDb>(db: &D) -> Result<Vec<AskRecord>> {
    let rows = db.rows(D::STATEMENTS.list_open, Vec::new(), false).await?;
    records_of(rows, db.location())
}

pub(crate) async fn list_open_page<D: SqlDb>(db: &D, page: OpenPage) -> Result<Vec<AskRecord>> {
    let before = page.before.map_or(i64::MAX, |id| id.0);
    let params = vec![Param::Int(before), Param::Int(i64::from(page.limit))];
    let rows = db.rows(D::STATEMENTS.list_open_page, params, false).await?;
    records_of(rows, db.location())
}

pub(crate) async fn history<D: SqlDb>(db: &D, page: HistoryPage) -> Result<Vec<AskRecord>> {
    let limit = Param::Int(i64::from(page.limit));
    let (sql, params) = match page.after {
        None => (D::STATEMENTS.history_first, vec![limit]),
        Some(cur) => (
            D::STATEMENTS.history_after,
            vec![Param::Int(cur.closed_at.0), Param::Int(cur.id.0), limit],
        ),
    };
    let rows = db.rows(sql, params, false).await?;
    records_of(rows, db.location())
}

pub(crate) async fn given_answers<D: SqlDb>(db: &D, lookback: u32) -> Result<Vec<GivenAnswer>> {
    let params = vec![Param::Int(i64::from(lookback))];
    let rows = db.rows(D::STATEMENTS.given_answers, params, false).await?;
    let location = db.location();
    let mut given = Vec::with_capacity(rows.len());
    for row in rows {
        let mut c = Columns::new(row, location);
        let namespace = Namespace::from_stored(c.text()?);
        let request_hash = c.text()?;
        let closed_at = Timestamp(c.int()?);
        let outcome = c.text()?;
        // The state says answered; an outcome that reads otherwise is skipped, not offered.
        if let Ok(Outcome::Answered { answer, .. }) = decode_outcome(&outcome) {
            given.push(GivenAnswer {
                namespace,
                request_hash,
                closed_at,
                answer,
            });
        }
    }
    Ok(given)
}

/// Named leases (`crate::lease`): one compare-and-set statement each.
pub(crate) async fn acquire_lease<D: SqlDb>(
    db: &D,
    name: &str,
    holder: &str,
    now: Timestamp,
    until: Timestamp,
) -> Result<bool> {
    let params = lease_params(name, holder, now, until);
    Ok(db.execute(D::STATEMENTS.acquire_lease, params).await? == 1)
}

pub(crate) async fn renew_lease<D: SqlDb>(
    db: &D,
    name: &str,
    holder: &str,
    now: Timestamp,
    until: Timestamp,
) -> Result<bool> {
    let params = lease_params(name, holder, now, until);
    Ok(db.execute(D::STATEMENTS.renew_lease, params).await? == 1)
}

/// The parameters of a lease's compare-and-set: name, holder, until, now.
fn lease_params(name: &str, holder: &str, now: Timestamp, until: Timestamp) -> Vec<Param> {
    vec![
        Param::Text(name.to_owned()),
        Param::Text(holder.to_owned()),
        Param::Int(until.0),
        Param::Int(now.0),
    ]
}

pub(crate) async fn release_lease<D: SqlDb>(db: &D, name: &str, holder: &str) -> Result<bool> {
    let params = vec![Param::Text(name.to_owned()), Param::Text(holder.to_owned())];
    Ok(db.execute(D::STATEMENTS.release_lease, params).await? == 1)
}

pub(crate) async fn lease<D: SqlDb>(db: &D, name: &str) -> Result<Option<(String, Timestamp)>> {
    let params = vec![Param::Text(name.to_owned())];
    let rows = db.rows(D::STATEMENTS.lease, params, false).await?;
    let Some(row) = rows.into_iter().next() else {
        return Ok(None);
    };
    let mut c = Columns::new(row, db.location());
    Ok(Some((c.text()?, Timestamp(c.int()?))))
}
