//! Postgres-only behaviour: the listener survives a lost connection (docs/contract.md §9
//! "Scale-out": reconnect, re-scan, nothing missed).

use ask_user_store::{Asker, Change, NewAsk, Outcome, Recorded, Responder, Scope, Timestamp};
use pretty_assertions::assert_eq;

use super::common::{self, DEADLINE};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follower_rescans_after_its_connection_is_killed_and_still_hears_the_answer() {
    let f = common::postgres().await;
    let follower = f.second().await;
    let ask = NewAsk::new(&Scope::HostKey("k".into()), "{}", Asker::default());
    let rec = f.store.open_ask(&ask).await.unwrap().record().clone();
    let mut feed = follower.subscribe().await.unwrap();

    // Every connection to this database but the admin's is terminated, as a server restart or
    // a dropped network would.
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    tokio::time::timeout(DEADLINE, async {
        while feed.next().await != Some(Change::Rescan) {}
    })
    .await
    .expect("the follower was never told to rescan");

    let waiting = tokio::spawn(async move { follower.wait_outcome(rec.id).await.unwrap() });
    let answer = Outcome::Answered {
        answer: serde_json::json!("after the reconnect"),
        by: Responder::default(),
    };
    assert_eq!(
        f.store
            .record_outcome(rec.id, &answer, Timestamp::now())
            .await
            .unwrap(),
        Recorded::Won
    );
    let got = tokio::time::timeout(DEADLINE, waiting)
        .await
        .expect("the waiter heard nothing")
        .unwrap();
    assert_eq!(got.closed.map(|c| c.outcome), Some(answer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_too_new_is_refused_naming_the_server_and_versions() {
    let f = common::postgres().await;
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    let known = ask_user_store::SCHEMA_VERSION;
    admin
        .batch_execute(&format!(
            "UPDATE ask_user_meta SET value = {} WHERE key = 'schema_version';
             UPDATE ask_user_meta SET value = {} WHERE key = 'compatible_from';",
            known + 4,
            known + 1
        ))
        .await
        .unwrap();
    let e = ask_user_store::Store::open(&f.url).await.unwrap_err();
    let server = f.store.location();
    assert!(
        server.starts_with("postgres://127.0.0.1:") || std::env::var("ASK_USER_TEST_PG").is_ok()
    );
    assert_eq!(
        e.to_string(),
        format!(
            "store {server}: schema version {} needs ask-user schema {} or newer, and this ask-user knows up to {known}; upgrade ask-user or pick another store with --store",
            known + 4,
            known + 1
        )
    );
}

/// An ask written by a binary older than schema 4 has no lease: it is trusted as attached and
/// never detached by the sweep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_an_older_binary_attached_has_no_lease_and_is_not_expired() {
    let f = common::postgres().await;
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    let t0: i64 = 1_800_000_000_000;
    let row = admin
        .query_one(
            "INSERT INTO ask_user_asks (scope, request_hash, host_keyed, request, asker, \
             created_at, grace_ms, attached) VALUES ('key:old', 'h', TRUE, '{}', '{}', $1, 86400000, TRUE) \
             RETURNING id",
            &[&t0],
        )
        .await
        .unwrap();
    let old = ask_user_store::AskId(row.get(0));
    let rec = f.store.get(old).await.unwrap();
    assert_eq!((rec.attached, rec.lease_until), (true, None));
    let swept = f
        .store
        .sweep(
            Timestamp(t0).plus(std::time::Duration::from_secs(3600)),
            ask_user_store::Retention::default(),
        )
        .await
        .unwrap();
    assert_eq!(swept.expired, vec![]);
    let rec = f.store.get(old).await.unwrap();
    assert_eq!((rec.is_open(), rec.attached), (true, true));
}

/// A new ask is one pipeline (`BEGIN`, lock, insert, `COMMIT`): when its insert fails, nothing
/// of it is stored, the error is the server's, and the connection is out of the failed
/// transaction (the next writes commit and another connection sees them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_open_stores_nothing_and_leaves_the_connection_usable() {
    let f = common::postgres().await;
    let other = f.second().await;
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    admin
        .batch_execute(
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ \
             BEGIN RAISE EXCEPTION 'refused for the test'; END $$ LANGUAGE plpgsql; \
             CREATE TRIGGER refuse BEFORE INSERT ON ask_user_asks \
             FOR EACH ROW EXECUTE FUNCTION refuse();",
        )
        .await
        .unwrap();
    let ask = |k: &str| NewAsk::new(&Scope::HostKey(k.into()), "{}", Asker::default());
    let err = f.store.open_ask(&ask("refused")).await.unwrap_err();
    assert!(err.to_string().contains("refused for the test"), "{err}");
    assert_eq!(other.count_open().await.unwrap(), 0);
    admin
        .batch_execute("DROP TRIGGER refuse ON ask_user_asks")
        .await
        .unwrap();

    let rec = f
        .store
        .open_ask(&ask("taken"))
        .await
        .unwrap()
        .record()
        .clone();
    // An open dropped after its first poll: its pipeline, once sent, runs to its COMMIT.
    {
        let dropped_ask = ask("dropped");
        let dropped = f.store.open_ask(&dropped_ask);
        tokio::pin!(dropped);
        let _ = futures_poll_once(dropped.as_mut()).await;
    }
    let answer = Outcome::Answered {
        answer: serde_json::json!("yes"),
        by: Responder::default(),
    };
    assert_eq!(
        f.store
            .record_outcome(rec.id, &answer, Timestamp::now())
            .await
            .unwrap(),
        Recorded::Won
    );
    let seen = other.get(rec.id).await.unwrap();
    assert_eq!(seen.closed.map(|c| c.outcome), Some(answer));
    let open = other.list_open().await.unwrap();
    assert!(
        open.iter().all(|r| r.key.scope() == "key:dropped"),
        "only the dropped open may be open: {open:?}"
    );
}

/// Polls `f` once (its first poll sends what it sends), ready or not.
async fn futures_poll_once<F: std::future::Future>(mut f: std::pin::Pin<&mut F>) -> bool {
    std::future::poll_fn(|cx| std::task::Poll::Ready(f.as_mut().poll(cx).is_ready())).await
}

/// New asks arriving together commit as one group; when one of them fails, it alone fails:
/// the others are created (each ran again alone) and exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_failing_ask_in_a_group_fails_alone() {
    let f = common::postgres().await;
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    admin
        .batch_execute(
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN \
             IF NEW.scope = 'key:refused' THEN RAISE EXCEPTION 'refused for the test'; END IF; \
             RETURN NEW; END $$ LANGUAGE plpgsql; \
             CREATE TRIGGER refuse BEFORE INSERT ON ask_user_asks \
             FOR EACH ROW EXECUTE FUNCTION refuse();",
        )
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = f.store.clone();
        let key = if i == 17 {
            "refused".to_owned()
        } else {
            format!("k{i}")
        };
        tasks.push(tokio::spawn(async move {
            let ask = NewAsk::new(&Scope::HostKey(key.clone()), "{}", Asker::default());
            (key, store.open_ask(&ask).await)
        }));
    }
    for t in tasks {
        let (key, opened) = t.await.unwrap();
        match (key.as_str(), opened) {
            ("refused", Err(e)) => assert!(e.to_string().contains("refused for the test"), "{e}"),
            (_, Ok(ask_user_store::Opened::Created(_))) => {}
            (key, other) => panic!("{key}: {other:?}"),
        }
    }
    assert_eq!(f.second().await.count_open().await.unwrap(), 39);
}

/// The inbox's first page (its open asks, their count, the newest closed asks) costs the same
/// whatever the number of open asks: at 100,000 open asks (and 20,000 closed, newer) no statement of
/// it scans the asks table or aggregates over it — the count sums the 16 rows the asks
/// table's triggers keep — checked on the plans Postgres runs (`EXPLAIN ANALYZE`), and on the
/// pages each statement read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_page_reads_no_more_at_100k_open_asks_than_a_page() {
    const OPEN: i64 = 100_000;
    const CLOSED: i64 = 20_000;
    let f = common::postgres().await;
    let ask = |k: &str| {
        NewAsk::new(
            &Scope::HostKey(k.into()),
            r#"{"questions":[{"question":"Deploy now?","options":["Yes","No"]}]}"#,
            Asker::default(),
        )
    };
    let open = f.store.open_ask(&ask("open")).await.unwrap().record().id;
    let closed = f.store.open_ask(&ask("closed")).await.unwrap().record().id;
    f.store
        .record_outcome(closed, &Outcome::Withdrawn, Timestamp::now())
        .await
        .unwrap();
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    // Clones of both, in SQL (one statement each, a series).
    for (template, n) in [(open, OPEN - 1), (closed, CLOSED - 1)] {
        admin
            .execute(
                "INSERT INTO ask_user_asks (scope, request_hash, host_keyed, request, asker, \
                   created_at, grace_ms, attached, detached_at, state, outcome, closed_at, \
                   delivered_at, lease_until, namespace) \
                 SELECT scope || '-' || g, request_hash, host_keyed, request, asker, \
                   created_at + g, grace_ms, attached, detached_at, state, outcome, closed_at + g, \
                   delivered_at, lease_until, namespace \
                 FROM ask_user_asks, generate_series(1, $2::BIGINT) AS g WHERE id = $1",
                &[&template.0, &n],
            )
            .await
            .unwrap();
    }
    admin.batch_execute("ANALYZE ask_user_asks").await.unwrap();
    assert_eq!(f.store.count_open().await.unwrap(), OPEN as u64);
    let statements = f.store.first_page_statements(50, 50);
    assert_eq!(statements.len(), 3);
    for (sql, params) in statements {
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let plan: Vec<String> = admin
            .query(
                &format!("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) {sql}"),
                &params,
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let text = plan.join("\n");
        assert!(
            !text.contains("Seq Scan on ask_user_asks"),
            "{sql}:\n{text}"
        );
        assert!(
            !(text.contains("Aggregate") && text.contains("ask_user_asks ")),
            "{sql}:\n{text}"
        );
        // The pages the statement read (its top node's buffers): a page of rows, a few index
        // pages; the count's few rows (not 100,000 entries, nor versions of its own rows
        // piled up by the bulk insert).
        let buffers: u64 = plan[1]
            .trim()
            .strip_prefix("Buffers: shared ")
            .unwrap_or_else(|| panic!("{sql}:\n{text}"))
            .split(' ')
            .filter_map(|kv| kv.split_once('=').and_then(|(_, v)| v.parse::<u64>().ok()))
            .sum();
        assert!(buffers < 50, "{sql}: {buffers} pages read:\n{text}");
    }
    // Every open ask closed by one statement (a sweep after a long outage): counted once for
    // the statement, in the same transaction.
    let closed = admin
        .execute(
            "UPDATE ask_user_asks SET state = 'withdrawn', outcome = $1, closed_at = 1 \
             WHERE state = 'open'",
            &[&serde_json::to_string(&Outcome::Withdrawn).unwrap()],
        )
        .await
        .unwrap();
    assert_eq!(closed, OPEN as u64);
    assert_eq!(f.store.count_open().await.unwrap(), 0);
}

/// A database of schema 8 (no count kept) gains the count of its open asks at the upgrade,
/// taken once; from then on every write keeps it, an older binary's too (it writes the asks
/// table, whose triggers count), a transaction of several changes or rolled back, and a table
/// emptied by hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgraded_database_counts_its_open_asks_once_and_keeps_the_count() {
    let f = common::postgres().await;
    let ask = |k: &str| NewAsk::new(&Scope::HostKey(k.into()), "{}", Asker::default());
    for k in ["a", "b", "c"] {
        f.store.open_ask(&ask(k)).await.unwrap();
    }
    let closed = f.store.open_ask(&ask("closed")).await.unwrap().record().id;
    f.store
        .record_outcome(closed, &Outcome::Withdrawn, Timestamp::now())
        .await
        .unwrap();
    let admin = ask_user_test_support::postgres::connect(&f.url).await;
    // What a schema-8 database holds, with one more open ask its binary wrote.
    let older_write = "INSERT INTO ask_user_asks (scope, request_hash, host_keyed, request, asker, \
         created_at, grace_ms, attached, namespace) SELECT scope || '-older', request_hash, \
         host_keyed, request, asker, created_at, grace_ms, attached, namespace \
         FROM ask_user_asks WHERE id = $1";
    admin
        .batch_execute(
            "DROP TABLE ask_user_open_asks; DROP FUNCTION ask_user_count_open() CASCADE; \
             UPDATE ask_user_meta SET value = 8 WHERE key = 'schema_version';",
        )
        .await
        .unwrap();
    admin.execute(older_write, &[&closed.0]).await.unwrap();
    let upgraded = ask_user_store::Store::open(&f.url).await.unwrap();
    assert_eq!(
        upgraded.count_open().await.unwrap(),
        4,
        "counted at the upgrade"
    );
    admin
        .execute(&older_write.replace("'-older'", "'-older-2'"), &[&closed.0])
        .await
        .unwrap();
    upgraded.open_ask(&ask("d")).await.unwrap();
    assert_eq!(
        (
            upgraded.count_open().await.unwrap(),
            upgraded.list_open().await.unwrap().len()
        ),
        (6, 6)
    );
    // By hand: two asks closed by two statements of one transaction, then one closed in a
    // transaction rolled back.
    let close_one = "UPDATE ask_user_asks SET state = 'withdrawn', outcome = '{\"state\":\"withdrawn\"}', \
         closed_at = 1 WHERE id = (SELECT max(id) FROM ask_user_asks WHERE state = 'open')";
    admin
        .batch_execute(&format!("BEGIN; {close_one}; {close_one}; COMMIT"))
        .await
        .unwrap();
    assert_eq!(upgraded.count_open().await.unwrap(), 4);
    admin
        .batch_execute(&format!("BEGIN; {close_one}; ROLLBACK"))
        .await
        .unwrap();
    assert_eq!(
        (
            upgraded.count_open().await.unwrap(),
            upgraded.list_open().await.unwrap().len()
        ),
        (4, 4)
    );
    // Emptied by hand (no DELETE trigger runs for a TRUNCATE).
    admin.batch_execute("TRUNCATE ask_user_asks").await.unwrap();
    assert_eq!(upgraded.count_open().await.unwrap(), 0);
}

/// A statement the server refuses (a second channel token with the same hash: the primary
/// key) names its SQLSTATE in the text, and keeps the driver's error, with that code, as its
/// source.
#[tokio::test]
async fn a_refused_statement_names_and_keeps_its_sqlstate() {
    let f = common::postgres().await;
    let token = ask_user_store::ChannelToken {
        hash: "h".into(),
        ask: ask_user_store::AskId(1),
        channel: "ntfy".into(),
        choice: "{}".into(),
        user: None,
    };
    f.store.put_channel_token(&token).await.unwrap();
    let e = f.store.put_channel_token(&token).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "store {}: duplicate key value violates unique constraint \"ask_user_channel_tokens_pkey\" (23505)",
            f.store.location()
        )
    );
    match &e {
        ask_user_store::Error::Backend { cause: Some(c), .. } => {
            assert_eq!(c.code(), Some("23505"));
        }
        other => panic!("not a backend error with its cause: {other:?}"),
    }
    let source = std::error::Error::source(&e).expect("the driver's error is the source");
    let pg = source
        .downcast_ref::<tokio_postgres::Error>()
        .expect("the source is the driver's own error");
    assert_eq!(
        pg.code(),
        Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
    );
}
