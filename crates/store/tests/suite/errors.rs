//! Messages that do not depend on a backend's file: URLs, the default location, an unreachable
//! Postgres.

use std::ffi::OsString;
use std::path::PathBuf;

use ask_user_store::{Store, default_sqlite_path_from};
use pretty_assertions::assert_eq;

#[tokio::test]
async fn unknown_store_url_is_refused() {
    for url in ["mysql://db/x", "sqlite:", "", "/tmp/store.sqlite3"] {
        let e = Store::open(url).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("store URL `{url}` is not understood: use sqlite:PATH, postgres://… or memory")
        );
    }
}

#[tokio::test]
async fn a_refused_url_is_shown_without_its_password() {
    for (url, shown) in [
        ("mysql://u:hunter2@db/x", "mysql://db/x"),
        (
            "postgress://u:hunter2@db:5432/x?sslmode=off",
            "postgress://db:5432/x",
        ),
        ("pg://db/x?password=hunter2", "pg://db/x"),
    ] {
        let e = Store::open(url).await.unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "store URL `{shown}` is not understood: use sqlite:PATH, postgres://… or memory"
            )
        );
    }
    assert_eq!(
        ask_user_store::url_for_messages("sqlite:/a@b"),
        "sqlite:/a@b"
    );
    assert_eq!(
        ask_user_store::url_for_messages("postgres://u:p@h/d"),
        "postgres://h/d"
    );
}

#[tokio::test]
async fn memory_url_opens_an_empty_store() {
    let store = Store::open("memory").await.unwrap();
    assert_eq!(
        (store.location(), store.list_open().await.unwrap()),
        ("memory".to_owned(), vec![])
    );
}

#[test]
fn default_path_follows_xdg_state_home_then_home() {
    let os = |s: &str| Some(OsString::from(s));
    assert_eq!(
        default_sqlite_path_from(os("/state"), os("/home/ana")).unwrap(),
        PathBuf::from("/state/ask-user/store.sqlite3")
    );
    for xdg in [None, os(""), os("relative/state")] {
        assert_eq!(
            default_sqlite_path_from(xdg, os("/home/ana")).unwrap(),
            PathBuf::from("/home/ana/.local/state/ask-user/store.sqlite3")
        );
    }
    assert_eq!(
        default_sqlite_path_from(None, None)
            .unwrap_err()
            .to_string(),
        "no default store location: neither XDG_STATE_HOME nor HOME is set; pick one with --store"
    );
}

#[tokio::test]
async fn unreachable_postgres_is_a_clear_error_without_credentials() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Nothing listens on the port once the listener is dropped.
    let e = Store::open(&format!("postgres://agent:s3cret@127.0.0.1:{port}/asks"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert_eq!(
        text,
        format!(
            "store postgres://127.0.0.1:{port}/asks: cannot connect to Postgres: error connecting to server: Connection refused (os error 111)"
        )
    );
    assert!(!text.contains("s3cret"));
}
