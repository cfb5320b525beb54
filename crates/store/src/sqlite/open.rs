//! Opening the store's file: created with mode 0600 in a 0700 directory, switched to WAL with
//! full sync, migrated; and where SQLite's and the system's errors become the store's
//! ([`map_err`], [`map_io`]).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

use super::run::{self, Db, Run, Writer};
use super::{BUSY_TIMEOUT, checkpoint};
use crate::error::{Cause, Error, Result};
use crate::schema;

/// Whether the file system holding `shown` has (almost) no space left: SQLite reports a full
/// disk met while growing its shared-memory file or syncing as a generic I/O error.
fn disk_is_full(shown: &str) -> bool {
    let path = Path::new(shown);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    rustix::fs::statvfs(dir).is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) < 64 * 1024)
}

/// Maps a SQLite error to the store's error for the file `shown`, keeping it as the cause. A
/// message of SQLite's own is followed by its extended result code (`… (SQLite code 1555)`),
/// except where the store's text quotes it in parentheses already (a corrupt file).
pub(super) fn map_err(shown: &str, e: rusqlite::Error) -> Error {
    let said = e.to_string();
    let code = e.sqlite_error().map(|f| f.extended_code);
    // Without a message of its own, rusqlite's text is "Error code N: …" already.
    let detail = match (&e, code) {
        (rusqlite::Error::SqliteFailure(_, Some(_)), Some(n)) => {
            format!("{said} (SQLite code {n})")
        }
        _ => said.clone(),
    };
    let kind = e.sqlite_error_code();
    let cause = Some(Cause::new(e, code.map(|n| n.to_string())));
    match kind {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Error::Corrupt {
            path: shown.to_owned(),
            detail: said,
            cause,
        },
        Some(ErrorCode::DiskFull) => Error::DiskFull {
            path: shown.to_owned(),
        },
        Some(ErrorCode::SystemIoFailure) if disk_is_full(shown) => Error::DiskFull {
            path: shown.to_owned(),
        },
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            Error::ReadOnly {
                path: shown.to_owned(),
                detail,
                cause,
            }
        }
        _ => Error::Backend {
            location: shown.to_owned(),
            detail,
            cause,
        },
    }
}

/// Maps an I/O error while creating the store's file or directory, keeping it as the cause.
pub(super) fn map_io(shown: &str, e: std::io::Error) -> Error {
    let detail = e.to_string();
    match e.raw_os_error() {
        Some(28) => Error::DiskFull {
            path: shown.to_owned(),
        },
        _ if matches!(
            e.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ) =>
        {
            Error::ReadOnly {
                path: shown.to_owned(),
                detail,
                cause: Some(Cause::new(e, None)),
            }
        }
        _ => Error::Backend {
            location: shown.to_owned(),
            detail,
            cause: Some(Cause::new(e, None)),
        },
    }
}

/// Opens the connection, sets WAL (kept at close) and full sync, and migrates.
pub(super) fn open_connection(path: &Path, shown: &str) -> Result<Connection> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(Error::IsDirectory {
                path: shown.to_owned(),
            });
        }
        Ok(_) => {
            // SQLite would open a file it cannot write read-only and fail later with a vaguer
            // message ("unable to open database file").
            OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| map_io(shown, e))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| map_io(shown, e))?;
            }
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(map_io(shown, e)),
            }
        }
        Err(e) => return Err(map_io(shown, e)),
    }
    // An empty file holds nothing: switching it to WAL writes only its header, through a
    // rollback journal (four syncs at full sync). That write goes unsynced, then the file is
    // synced once, before any commit relies on the header (a WAL beside an empty file is
    // dropped by SQLite).
    let empty = std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
    let mut conn = run::opening(shown, || Connection::open(path))?;
    let db = Db::new(&conn, shown);
    db.with(|c| {
        c.busy_timeout(BUSY_TIMEOUT)?;
        if empty {
            c.pragma_update(None, "synchronous", "OFF")?;
        }
        Ok(())
    })?;
    set_wal(&db)?;
    if empty {
        File::open(path)
            .and_then(|f| f.sync_all())
            .map_err(|e| map_io(shown, e))?;
    }
    db.with(|c| {
        c.pragma_update(None, "synchronous", "FULL")?;
        // Keep the WAL (and its index) when the last connection closes: deleting it at every
        // exit made every start re-create it and sync it and the directory before the first
        // commit. The WAL is checkpointed on a thread of its own instead of inside the commit
        // that fills it (SQLite's automatic checkpoint, switched off here): see [`checkpoint`].
        c.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        checkpoint::watch_wal(c)
    })?;
    migrate(&mut Writer::new(&mut conn, shown))?;
    Ok(conn)
}

/// Switches to WAL. The switch takes an exclusive lock for which SQLite may not call the busy
/// handler, so a busy answer is retried until [`BUSY_TIMEOUT`].
fn set_wal(db: &Db<'_>) -> Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        let r: rusqlite::Result<String> = db
            .conn()
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0));
        match r {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(Error::backend(
                    db.shown(),
                    format!("cannot switch the journal to WAL (it stays {mode})"),
                ));
            }
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(map_err(db.shown(), e)),
        }
    }
}

pub(super) fn meta_value(db: &impl Run, key: &str) -> Result<Option<i64>> {
    db.cached("SELECT value FROM meta WHERE key = ?1", |s| {
        s.query_row([key], |r| r.get(0)).optional()
    })
}

fn migrate(w: &mut Writer<'_>) -> Result<()> {
    // A read first: an up-to-date store needs no write lock.
    let has_meta = w.cached(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
        |s| s.query_row([], |r| r.get::<_, i64>(0)),
    )? > 0;
    if has_meta {
        let found = meta_value(w, "schema_version")?.unwrap_or(0);
        let compat = meta_value(w, "compatible_from")?.unwrap_or(0);
        if !schema::check(w.shown(), found, compat)? {
            return Ok(());
        }
    }
    let tx = w.immediate()?;
    tx.batch("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")?;
    let found = meta_value(&tx, "schema_version")?.unwrap_or(0);
    let compat = meta_value(&tx, "compatible_from")?.unwrap_or(0);
    if schema::check(tx.shown(), found, compat)? {
        for m in schema::MIGRATIONS.iter().filter(|m| m.version > found) {
            tx.batch(m.sqlite)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?1), ('compatible_from', ?2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![m.version, m.compatible_from.max(compat)],
            )?;
        }
    }
    tx.commit()
}
