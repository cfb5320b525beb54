//! Where `ask-user hub serve` serves, so that `ask-user hub login-link` prints a link to the
//! port and scheme the hub really uses (docs/decisions.md "login-link finds the hub").
//!
//! On a SQLite store, `hub serve` writes its URL (its `--public-url`, else `http(s)://` and
//! the address it bound) to a file beside the database (`store.sqlite3.hub-url`), and
//! `login-link` on the same store reads it. `--url` (or `ASK_USER_HUB_PUBLIC_URL`) still wins;
//! without a record (a Postgres store, whose replicas sit behind one public URL, or a hub
//! never served) it is [`DEFAULT_URL`].

use std::path::PathBuf;

use ask_user_store::{Store, StoreKind};

/// The URL `login-link` uses when neither `--url` nor a record of `hub serve` gives one: the
/// default `--listen` address.
pub(crate) const DEFAULT_URL: &str = "http://127.0.0.1:8765";

/// The record's file: beside the SQLite database; none for other stores (memory, Postgres).
fn file(store: &Store) -> Option<PathBuf> {
    match store.kind() {
        StoreKind::Sqlite { path } => {
            let mut name = path.file_name()?.to_os_string();
            name.push(".hub-url");
            Some(path.with_file_name(name))
        }
        _ => None,
    }
}

/// Records that the hub on `store` serves at `url`. Best effort: a file that cannot be
/// written costs only the record (a warning), never the hub.
pub(crate) fn record(store: &Store, url: &str) {
    let Some(path) = file(store) else { return };
    let tmp = path.with_extension(format!("hub-url.{}", std::process::id()));
    let written = std::fs::write(&tmp, format!("{}\n", url.trim_end_matches('/')))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        eprintln!(
            "ask-user hub: cannot record the hub's URL in {} ({e}); hub login-link will need --url",
            path.display()
        );
    }
}

/// The base URL of `login-link`'s link: `given` (`--url`), else the URL `hub serve` recorded
/// for `store`, else [`DEFAULT_URL`].
pub(crate) fn login_base(given: Option<String>, store: &Store) -> String {
    given
        .filter(|u| !u.trim().is_empty())
        .or_else(|| {
            let text = std::fs::read_to_string(file(store)?).ok()?;
            let url = text.lines().next()?.trim();
            (!url.is_empty()).then(|| url.to_owned())
        })
        .unwrap_or_else(|| DEFAULT_URL.to_owned())
}
