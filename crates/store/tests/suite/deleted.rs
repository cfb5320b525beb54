//! A SQLite store file deleted (or replaced) while asks wait on it: the waiters find out and
//! say so, instead of waiting silently on an unlinked file no inbox can see.

use std::time::Duration;

use ask_user_store::{Asker, Error, NewAsk, Opened, Scope, Store};

async fn waiting_ask(path: &std::path::Path) -> (Store, ask_user_store::AskId) {
    let store = Store::open_sqlite(path).await.unwrap();
    let ask = NewAsk::new(
        &Scope::HostKey("k".into()),
        r#"{"questions":[]}"#,
        Asker::default(),
    );
    let Opened::Created(rec) = store.open_ask(&ask).await.unwrap() else {
        panic!("a new ask")
    };
    (store, rec.id)
}

fn assert_gone(result: Result<ask_user_store::AskRecord, Error>, path: &std::path::Path) {
    match result {
        Err(e @ Error::Gone { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "store {}: the store file was deleted or replaced while this ask waited, so no inbox can see it any more; ask again",
                path.display()
            )
        ),
        other => panic!("expected the store to be gone, got {other:?}"),
    }
}

#[tokio::test]
async fn a_waiter_learns_that_its_store_file_was_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let (store, id) = waiting_ask(&path).await;
    let waiting = tokio::spawn({
        let store = store.clone();
        async move { store.wait_outcome(id).await }
    });
    // Waiting now (subscribed, file watched); then the files go, as with `rm store.sqlite3*`.
    store.check_file().unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    // The file watch wakes the waiter at once; the deadline only bounds a broken build.
    let result = tokio::time::timeout(Duration::from_secs(60), waiting)
        .await
        .expect("the waiter ended")
        .unwrap();
    assert_gone(result, &path);
}

#[tokio::test]
async fn a_store_file_replaced_by_a_new_one_is_gone_for_the_old_handle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let (store, id) = waiting_ask(&path).await;
    std::fs::remove_file(&path).unwrap();
    // A new inbox (or asker) makes a new, empty file at the same path.
    let fresh = Store::open_sqlite(&path).await.unwrap();
    fresh.check_file().unwrap();
    assert_gone(store.wait_outcome(id).await, &path);
}
