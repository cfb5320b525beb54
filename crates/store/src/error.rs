//! The store's errors. Each text names the store (file or server) and says what to do; every
//! text a user can trigger is pinned by a test (`tests/suite/sqlite.rs`, `tests/suite/errors.rs`).
//! An error that came from the driver (SQLite, Postgres) or the system keeps it as its
//! [`std::error::Error::source`] ([`Cause`]), and its text names the driver's code: the
//! SQLSTATE, or SQLite's extended result code.

use std::sync::Arc;

use crate::model::AskId;

/// The driver's (or the system's) error behind a store error, shared (the store's errors are
/// `Clone`). As the store error's [`std::error::Error::source`] it is that error itself, so a
/// caller can downcast it (`rusqlite::Error`, `tokio_postgres::Error`, `std::io::Error`).
#[derive(Clone)]
pub struct Cause {
    error: Arc<dyn std::error::Error + Send + Sync>,
    code: Option<String>,
}

impl Cause {
    /// `error`, with the driver's code for it, if it has one.
    pub(crate) fn new(
        error: impl std::error::Error + Send + Sync + 'static,
        code: Option<String>,
    ) -> Cause {
        Cause {
            error: Arc::new(error),
            code,
        }
    }

    /// The driver's code: Postgres's SQLSTATE (`23505`), SQLite's extended result code
    /// (`1555`); `None` when the driver gave none (a lost connection, an I/O error).
    #[must_use]
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }
}

/// The driver's error itself: what [`Error`]'s `source()` returns (not this wrapper).
impl std::ops::Deref for Cause {
    type Target = dyn std::error::Error + Send + Sync;
    fn deref(&self) -> &Self::Target {
        &*self.error
    }
}

/// The code only: a driver's error can quote the values of a statement (a key that already
/// exists), which have no place in a debug print.
impl std::fmt::Debug for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cause").field("code", &self.code).finish()
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL given to [`crate::Store::open`] names no backend.
    #[error("store URL `{url}` is not understood: use sqlite:PATH, postgres://… or memory")]
    BadUrl {
        /// The URL as given, without user, password or query ([`crate::url_for_messages`]).
        url: String,
    },
    /// Neither `XDG_STATE_HOME` nor `HOME` is set, so there is no default store path.
    #[error(
        "no default store location: neither XDG_STATE_HOME nor HOME is set; pick one with --store"
    )]
    NoStateDir,
    /// The store path is a directory.
    #[error("store {path}: is a directory, not a store file")]
    IsDirectory {
        /// The path.
        path: String,
    },
    /// The file exists but is not a SQLite database, or is damaged.
    #[error("store {path}: not a usable store: the file is corrupt or not SQLite ({detail})")]
    Corrupt {
        /// The path.
        path: String,
        /// What SQLite said.
        detail: String,
        /// SQLite's error.
        #[source]
        cause: Option<Cause>,
    },
    /// The store cannot be created or written: a read-only location or missing permission.
    #[error("store {path}: cannot write there: {detail}")]
    ReadOnly {
        /// The path.
        path: String,
        /// What the system (or SQLite) said.
        detail: String,
        /// The system's or SQLite's error.
        #[source]
        cause: Option<Cause>,
    },
    /// The disk holding the store is full.
    #[error("store {path}: the disk is full; free some space or pick another store with --store")]
    DiskFull {
        /// The path.
        path: String,
    },
    /// The store was written by a newer ask-user whose schema this binary cannot use.
    #[error(
        "store {location}: schema version {found} needs ask-user schema {needs} or newer, and this ask-user knows up to {known}; upgrade ask-user or pick another store with --store"
    )]
    TooNew {
        /// The file path or server.
        location: String,
        /// The store's schema version.
        found: i64,
        /// The oldest schema version a binary must know to use it.
        needs: i64,
        /// The newest schema version this binary knows.
        known: i64,
    },
    /// The Postgres server cannot be reached or refused the connection.
    #[error("store {location}: cannot connect to Postgres: {detail}")]
    Unreachable {
        /// The server, without credentials.
        location: String,
        /// What the client said.
        detail: String,
        /// The client's error.
        #[source]
        cause: Option<Cause>,
    },
    /// No ask with this id is in the store.
    #[error("ask {0} is not in the store")]
    NotFound(AskId),
    /// The store file was deleted or replaced while this process had it open: what it still
    /// reads is the old, unlinked file, which no other process (no inbox) can see any more.
    #[error(
        "store {path}: the store file was deleted or replaced while this ask waited, so no inbox can see it any more; ask again"
    )]
    Gone {
        /// The store file.
        path: String,
    },
    /// A stored value could not be read back (written by something other than ask-user).
    #[error("store {location}: ask {id} holds a value this ask-user cannot read: {detail}")]
    BadRecord {
        /// The file path or server.
        location: String,
        /// The ask.
        id: AskId,
        /// What failed.
        detail: String,
    },
    /// Any other failure of the backend.
    #[error("store {location}: {detail}")]
    Backend {
        /// The file path or server.
        location: String,
        /// What the backend said.
        detail: String,
        /// The driver's (or the system's) error, when one caused it.
        #[source]
        cause: Option<Cause>,
    },
}

impl Error {
    /// [`Error::Backend`] with no driver's error behind it.
    pub(crate) fn backend(location: &str, detail: impl Into<String>) -> Error {
        Error::Backend {
            location: location.to_owned(),
            detail: detail.into(),
            cause: None,
        }
    }
}

/// The store's result type.
pub type Result<T> = std::result::Result<T, Error>;
