//! The conformance suite: every case runs against every backend (memory, SQLite, Postgres),
//! through the public `Store` API only. `every_backend!` (`common.rs`) expands each case into one test per
//! backend (`conformance::sqlite::first_outcome_wins`, …).

use std::time::Duration;

use ask_user_store::{
    AskId, Asker, Change, ChannelToken, Closed, HistoryCursor, HistoryPage, Namespace, NewAsk,
    OpenPage, Opened, Outcome, Recorded, Responder, Retention, Scope, Spend, Store, Swept,
    Timestamp, UNKEYED_REDELIVERY_WINDOW, lease,
};
use pretty_assertions::assert_eq;

use super::common::{DEADLINE, Fixture};

const T0: Timestamp = Timestamp(1_800_000_000_000);
const HOUR: Duration = Duration::from_secs(3600);

fn ask_at(scope: Scope, request: &str, at: Timestamp) -> NewAsk {
    let mut ask = NewAsk::new(
        &scope,
        request,
        Asker {
            agent: Some("claude-code".into()),
            project: Some("/src/app".into()),
            host: Some("laptop".into()),
            session: Some("fix the build".into()),
            pid: Some(4242),
            process: None,
        },
    );
    ask.created_at = at;
    ask
}

fn keyed(key: &str, at: Timestamp) -> NewAsk {
    ask_at(
        Scope::HostKey(key.into()),
        r#"{"questions":[{"question":"Which?"}]}"#,
        at,
    )
}

fn answered(v: serde_json::Value) -> Outcome {
    Outcome::Answered {
        answer: v,
        by: Responder {
            answerer: "terminal".into(),
            channel: Some("slack".into()),
            user: Some("ana".into()),
            submission: None,
        },
    }
}

async fn created(store: &Store, ask: &NewAsk) -> ask_user_store::AskRecord {
    match store.open_ask(ask).await.unwrap() {
        Opened::Created(r) => r,
        other => panic!("expected a new ask, got {other:?}"),
    }
}

every_backend!(
    created_ask_is_stored_open_and_attached,
    same_key_reattaches_instead_of_asking_twice,
    different_request_or_scope_is_a_different_ask,
    first_outcome_wins,
    concurrent_outcomes_have_exactly_one_winner,
    concurrent_opens_of_one_key_make_one_ask,
    undelivered_answer_is_handed_to_a_keyed_retry_within_grace,
    undelivered_answer_is_handed_to_an_unkeyed_retry_within_ten_minutes,
    delivered_or_non_human_outcomes_are_asked_anew,
    detach_then_reattach,
    sweep_withdraws_detached_asks_after_grace_and_purges_old_closed,
    history_pages_newest_first,
    waiter_hears_outcome_recorded_through_another_handle,
    feed_announces_changes_from_another_handle,
    missing_ask_is_not_found,
    list_open_is_newest_first_and_excludes_closed,
    channel_token_is_spent_once_and_bound_to_its_ask_and_channel,
    concurrent_spends_of_one_token_have_one_winner,
    channel_messages_are_claimed_once_to_send_and_once_to_close,
    sweep_purges_the_channel_rows_of_purged_asks,
    secrets_are_checked_used_once_expired_and_revoked,
    lease_is_held_by_one_until_released_or_expired,
    concurrent_lease_acquires_have_one_winner,
    a_delivery_taken_back_is_handed_to_the_retry,
    lease_is_given_on_open_renewed_while_attached_and_dropped_on_detach,
    sweep_detaches_an_attached_ask_whose_lease_ran_out,
    open_asks_page_newest_first_by_keyset_cursor,
    channel_message_ask_finds_the_ask_by_one_part_of_its_reference,
    open_asks_are_counted_by_namespace_never_by_name,
    the_count_of_open_asks_stays_exact_through_every_change,
    given_answers_are_the_delivered_answers_of_the_newest_closed_asks,
);

/// `unmark_delivered` (the MCP client cancelled a request whose result was already sent):
/// the outcome stays and the retry gets it; only the delivery marked at that time is taken
/// back; a missing ask is not found.
async fn a_delivery_taken_back_is_handed_to_the_retry(f: Fixture) {
    let rec = created(&f.store, &keyed("crossed", T0)).await;
    f.store
        .record_outcome(rec.id, &answered(serde_json::json!(7)), T0)
        .await
        .unwrap();
    let seven = answered(serde_json::json!(7));
    assert!(
        f.store
            .mark_delivered(rec.id, &seven, T0.plus(HOUR))
            .await
            .unwrap()
    );
    // Another time than the one marked: the delivery stands.
    f.store
        .unmark_delivered(rec.id, T0.plus(HOUR * 2))
        .await
        .unwrap();
    assert_eq!(
        f.store.get(rec.id).await.unwrap().delivered_at,
        Some(T0.plus(HOUR))
    );
    f.store
        .unmark_delivered(rec.id, T0.plus(HOUR))
        .await
        .unwrap();
    let back = f.second().await.get(rec.id).await.unwrap();
    assert_eq!((back.delivered_at, back.is_open()), (None, false));
    assert!(
        matches!(f.store.open_ask(&keyed("crossed", T0.plus(HOUR))).await.unwrap(), Opened::Undelivered(r) if r.id == rec.id)
    );
    assert!(matches!(
        f.store.unmark_delivered(AskId(987_654), T0).await,
        Err(ask_user_store::Error::NotFound(_))
    ));
}

async fn created_ask_is_stored_open_and_attached(f: Fixture) {
    let ask = keyed("k1", T0);
    let rec = created(&f.store, &ask).await;
    assert_eq!(rec.key, ask.key);
    assert_eq!(rec.request, ask.request);
    assert_eq!(rec.asker, ask.asker);
    assert_eq!(
        (rec.created_at, rec.grace, rec.attached, rec.detached_at),
        (T0, ask.grace, true, None)
    );
    assert_eq!(rec.lease_until, Some(T0.plus(lease())));
    assert_eq!((rec.closed.clone(), rec.delivered_at), (None, None));
    // Read back through another handle: what was stored, not what was returned.
    assert_eq!(f.second().await.get(rec.id).await.unwrap(), rec);
}

async fn same_key_reattaches_instead_of_asking_twice(f: Fixture) {
    let first = created(&f.store, &keyed("k1", T0)).await;
    let again = f
        .second()
        .await
        .open_ask(&keyed("k1", T0.plus(HOUR)))
        .await
        .unwrap();
    // Re-attaching renews the lease from the retry's time.
    let mut first = first;
    first.lease_until = Some(T0.plus(HOUR).plus(lease()));
    assert_eq!(again, Opened::Reattached(first.clone()));
    assert_eq!(f.store.list_open().await.unwrap(), vec![first]);
}

async fn different_request_or_scope_is_a_different_ask(f: Fixture) {
    let a = created(&f.store, &keyed("k1", T0)).await;
    let other_request = ask_at(
        Scope::HostKey("k1".into()),
        r#"{"questions":[{"question":"Else?"}]}"#,
        T0,
    );
    let b = created(&f.store, &other_request).await;
    let other_scope = ask_at(Scope::Caller("k1".into()), &a.request, T0);
    let c = created(&f.store, &other_scope).await;
    assert_ne!(a.id, b.id);
    assert_ne!(b.id, c.id);
    assert!(a.key.is_host_keyed() && !c.key.is_host_keyed());
    assert_eq!(f.store.list_open().await.unwrap().len(), 3);
}

async fn first_outcome_wins(f: Fixture) {
    let rec = created(&f.store, &keyed("k1", T0)).await;
    let first = answered(serde_json::json!({"Which?": "A"}));
    assert_eq!(
        f.store
            .record_outcome(rec.id, &first, T0.plus(HOUR))
            .await
            .unwrap(),
        Recorded::Won
    );
    let won = Closed {
        outcome: first.clone(),
        at: T0.plus(HOUR),
    };
    let other = f.second().await;
    let dismissed = Outcome::Dismissed {
        by: Responder {
            answerer: "web".into(),
            ..Responder::default()
        },
    };
    for late in [
        dismissed,
        Outcome::TimedOut,
        Outcome::Withdrawn,
        answered(serde_json::json!({"Which?": "B"})),
    ] {
        assert_eq!(
            other
                .record_outcome(rec.id, &late, T0.plus(HOUR * 2))
                .await
                .unwrap(),
            Recorded::Lost(won.clone())
        );
    }
    let stored = f.store.get(rec.id).await.unwrap();
    assert_eq!(stored.closed, Some(won));
    assert!(!stored.is_open());
}

async fn concurrent_outcomes_have_exactly_one_winner(f: Fixture) {
    let rec = created(&f.store, &keyed("k1", T0)).await;
    let handles = [f.store.clone(), f.second().await, f.second().await];
    let mut tasks = Vec::new();
    for i in 0..24 {
        let store = handles[i % handles.len()].clone();
        tasks.push(tokio::spawn(async move {
            store
                .record_outcome(
                    rec.id,
                    &answered(serde_json::json!({ "i": i })),
                    Timestamp::now(),
                )
                .await
                .unwrap()
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    assert_eq!(
        results.iter().filter(|r| **r == Recorded::Won).count(),
        1,
        "{results:?}"
    );
    let stored = f.store.get(rec.id).await.unwrap().closed.unwrap();
    for r in results {
        if let Recorded::Lost(c) = r {
            assert_eq!(c, stored, "every loser is told the outcome that counted");
        }
    }
}

async fn concurrent_opens_of_one_key_make_one_ask(f: Fixture) {
    let handles = [f.store.clone(), f.second().await, f.second().await];
    let mut tasks = Vec::new();
    for i in 0..12 {
        let store = handles[i % handles.len()].clone();
        tasks.push(tokio::spawn(async move {
            store.open_ask(&keyed("same", T0)).await.unwrap()
        }));
    }
    let mut opened = Vec::new();
    for t in tasks {
        opened.push(t.await.unwrap());
    }
    assert_eq!(
        opened
            .iter()
            .filter(|o| matches!(o, Opened::Created(_)))
            .count(),
        1,
        "{opened:?}"
    );
    let id = opened[0].record().id;
    assert!(opened.iter().all(|o| o.record().id == id));
    assert_eq!(f.store.list_open().await.unwrap().len(), 1);
}

async fn undelivered_answer_is_handed_to_a_keyed_retry_within_grace(f: Fixture) {
    let mut ask = keyed("k1", T0);
    ask.grace = HOUR * 2;
    let rec = created(&f.store, &ask).await;
    let answer = answered(serde_json::json!({"Which?": "A"}));
    f.store
        .record_outcome(rec.id, &answer, T0.plus(HOUR))
        .await
        .unwrap();
    // Just inside the grace after the answer: handed over, nothing new asked.
    let retry = f
        .second()
        .await
        .open_ask(&keyed("k1", T0.plus(HOUR * 3 - Duration::from_millis(1))))
        .await
        .unwrap();
    let Opened::Undelivered(got) = retry else {
        panic!("expected the undelivered answer, got {retry:?}")
    };
    assert_eq!(
        (got.id, got.closed.map(|c| c.outcome)),
        (rec.id, Some(answer))
    );
    assert_eq!(f.store.list_open().await.unwrap(), vec![]);
    // At the end of the grace: asked anew.
    let late = created(&f.store, &keyed("k1", T0.plus(HOUR * 3))).await;
    assert_ne!(late.id, rec.id);
}

async fn undelivered_answer_is_handed_to_an_unkeyed_retry_within_ten_minutes(f: Fixture) {
    let ask = ask_at(Scope::Caller("session-1 /src/app ana".into()), "{}", T0);
    let rec = created(&f.store, &ask).await;
    let dismissed = Outcome::Dismissed {
        by: Responder {
            answerer: "inbox".into(),
            ..Responder::default()
        },
    };
    f.store
        .record_outcome(rec.id, &dismissed, T0)
        .await
        .unwrap();
    // Its caller went away (a signal detached it): the retry is rule (b)'s.
    f.store.set_attached(rec.id, false, T0).await.unwrap();
    let mut retry = ask.clone();
    retry.created_at = T0.plus(UNKEYED_REDELIVERY_WINDOW - Duration::from_millis(1));
    assert!(
        matches!(f.store.open_ask(&retry).await.unwrap(), Opened::Undelivered(r) if r.id == rec.id)
    );
    retry.created_at = T0.plus(UNKEYED_REDELIVERY_WINDOW);
    assert!(
        matches!(f.store.open_ask(&retry).await.unwrap(), Opened::Created(r) if r.id != rec.id)
    );
}

async fn delivered_or_non_human_outcomes_are_asked_anew(f: Fixture) {
    let rec = created(&f.store, &keyed("delivered", T0)).await;
    f.store
        .record_outcome(rec.id, &answered(serde_json::json!(1)), T0)
        .await
        .unwrap();
    let one = answered(serde_json::json!(1));
    assert!(
        f.store
            .mark_delivered(rec.id, &one, T0.plus(HOUR))
            .await
            .unwrap()
    );
    // A second delivery keeps the first time.
    assert!(
        f.store
            .mark_delivered(rec.id, &one, T0.plus(HOUR * 2))
            .await
            .unwrap()
    );
    assert_eq!(
        f.store.get(rec.id).await.unwrap().delivered_at,
        Some(T0.plus(HOUR))
    );
    assert!(
        matches!(f.store.open_ask(&keyed("delivered", T0.plus(HOUR))).await.unwrap(), Opened::Created(r) if r.id != rec.id)
    );
    for (key, outcome) in [
        ("timed-out", Outcome::TimedOut),
        ("withdrawn", Outcome::Withdrawn),
    ] {
        let rec = created(&f.store, &keyed(key, T0)).await;
        f.store.record_outcome(rec.id, &outcome, T0).await.unwrap();
        assert!(
            matches!(f.store.open_ask(&keyed(key, T0).clone()).await.unwrap(), Opened::Created(r) if r.id != rec.id)
        );
    }
}

async fn detach_then_reattach(f: Fixture) {
    let rec = created(&f.store, &keyed("k1", T0)).await;
    f.store
        .set_attached(rec.id, false, T0.plus(HOUR))
        .await
        .unwrap();
    let detached = f.second().await.get(rec.id).await.unwrap();
    assert_eq!(
        (detached.attached, detached.detached_at, detached.is_open()),
        (false, Some(T0.plus(HOUR)), true)
    );
    let again = f
        .store
        .open_ask(&keyed("k1", T0.plus(HOUR * 2)))
        .await
        .unwrap();
    let Opened::Reattached(r) = again else {
        panic!("expected re-attach, got {again:?}")
    };
    assert_eq!((r.attached, r.detached_at), (true, None));
    assert_eq!(f.store.get(rec.id).await.unwrap(), r);
    // Delivering an open ask changes nothing; detaching a closed one only says its caller
    // went away (no lease).
    let open = f.store.get(rec.id).await.unwrap();
    assert!(
        !f.store
            .mark_delivered(rec.id, &Outcome::TimedOut, T0)
            .await
            .unwrap()
    );
    assert_eq!(f.store.get(rec.id).await.unwrap(), open);
    f.store
        .record_outcome(rec.id, &Outcome::TimedOut, T0.plus(HOUR * 3))
        .await
        .unwrap();
    let mut closed = f.store.get(rec.id).await.unwrap();
    f.store
        .set_attached(rec.id, false, T0.plus(HOUR * 4))
        .await
        .unwrap();
    (closed.attached, closed.lease_until) = (false, None);
    assert_eq!(f.store.get(rec.id).await.unwrap(), closed);
    f.store
        .set_attached(rec.id, true, T0.plus(HOUR * 5))
        .await
        .unwrap();
    assert_eq!(
        f.store.get(rec.id).await.unwrap(),
        closed,
        "never re-attached"
    );
}

async fn sweep_withdraws_detached_asks_after_grace_and_purges_old_closed(f: Fixture) {
    let grace = Duration::from_secs(24 * 3600);
    let detached = created(&f.store, &keyed("detached", T0)).await;
    let attached = created(&f.store, &keyed("attached", T0)).await;
    let old = created(&f.store, &keyed("old", T0)).await;
    f.store
        .set_attached(detached.id, false, T0.plus(HOUR))
        .await
        .unwrap();
    // Answered and delivered: audit history only (an undelivered answer is never purged,
    // exactly_once.rs).
    f.store
        .record_outcome(old.id, &answered(serde_json::json!(1)), T0)
        .await
        .unwrap();
    assert!(
        f.store
            .mark_delivered(old.id, &answered(serde_json::json!(1)), T0)
            .await
            .unwrap()
    );
    let keep = Retention {
        keep_closed: grace * 30,
    };
    // The attached ask's caller is alive: it renews its lease.
    assert!(
        f.store
            .renew(
                attached.id,
                T0.plus(HOUR + grace - Duration::from_millis(1))
            )
            .await
            .unwrap()
    );
    let nothing = f
        .store
        .sweep(T0.plus(HOUR + grace - Duration::from_millis(1)), keep)
        .await
        .unwrap();
    assert_eq!(nothing, Swept::default());
    let now = T0.plus(HOUR + grace);
    let swept = f.store.sweep(now, keep).await.unwrap();
    assert_eq!(
        swept,
        Swept {
            expired: vec![],
            withdrawn: vec![detached.id],
            purged: 0
        }
    );
    assert_eq!(
        f.store.get(detached.id).await.unwrap().closed,
        Some(Closed {
            outcome: Outcome::Withdrawn,
            at: now
        })
    );
    assert!(
        f.store.get(attached.id).await.unwrap().is_open(),
        "an attached ask is never withdrawn by the sweep"
    );
    // Closed asks are purged once closed `keep_closed` ago.
    assert!(
        f.store
            .renew(attached.id, T0.plus(grace * 30 - Duration::from_millis(1)))
            .await
            .unwrap()
    );
    let before = f
        .store
        .sweep(T0.plus(grace * 30 - Duration::from_millis(1)), keep)
        .await
        .unwrap();
    assert_eq!(before.purged, 0);
    let purge = f.store.sweep(T0.plus(grace * 30), keep).await.unwrap();
    assert_eq!(
        purge,
        Swept {
            expired: vec![],
            withdrawn: vec![],
            purged: 1
        }
    );
    assert!(
        matches!(f.store.get(old.id).await, Err(ask_user_store::Error::NotFound(id)) if id == old.id)
    );
    assert!(f.store.get(detached.id).await.is_ok(), "closed later, kept");
}

async fn history_pages_newest_first(f: Fixture) {
    let mut ids = Vec::new();
    for i in 0..25 {
        let rec = created(&f.store, &keyed(&format!("h{i}"), T0)).await;
        // Pairs share a close time, so ties are ordered by id.
        f.store
            .record_outcome(
                rec.id,
                &Outcome::TimedOut,
                T0.plus(Duration::from_secs(i / 2)),
            )
            .await
            .unwrap();
        ids.push(rec.id);
    }
    created(&f.store, &keyed("still-open", T0)).await;
    let mut expected: Vec<(u64, AskId)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (i as u64 / 2, *id))
        .collect();
    expected.sort_by(|a, b| b.cmp(a));
    let mut listed = Vec::new();
    let mut after: Option<HistoryCursor> = None;
    loop {
        let page = f
            .store
            .history(HistoryPage { after, limit: 10 })
            .await
            .unwrap();
        assert!(page.len() <= 10);
        let Some(last) = page.last() else { break };
        after = HistoryCursor::after(last);
        listed.extend(page.iter().map(|r| r.id));
    }
    assert_eq!(
        listed,
        expected.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
    );
}

/// `given_answers(lookback)`: among the newest `lookback` closed asks (history's order), the
/// answers whose agent received them, newest first, with their namespace and request hash; an
/// undelivered answer, a dismissal or a timeout is never offered again, nor is an answer
/// older than the lookback.
async fn given_answers_are_the_delivered_answers_of_the_newest_closed_asks(f: Fixture) {
    let close = |rec: ask_user_store::AskRecord, outcome: Outcome, secs: u64, deliver: bool| {
        let store = f.store.clone();
        async move {
            let at = T0.plus(Duration::from_secs(secs));
            store.record_outcome(rec.id, &outcome, at).await.unwrap();
            if deliver {
                assert!(store.mark_delivered(rec.id, &outcome, at).await.unwrap());
            }
            rec
        }
    };
    // Oldest first: an answer delivered (then pushed out of a lookback of 4), an answer
    // delivered, one undelivered, a delivered dismissal, a timeout, the newest answer delivered.
    let oldest = created(&f.store, &keyed("g0", T0)).await;
    close(
        oldest,
        answered(serde_json::json!({"answers": [0]})),
        1,
        true,
    )
    .await;
    let older = created(&f.store, &keyed("g1", T0)).await;
    let older = close(
        older,
        answered(serde_json::json!({"answers": [1]})),
        2,
        true,
    )
    .await;
    let waiting = created(&f.store, &keyed("g2", T0)).await;
    close(
        waiting,
        answered(serde_json::json!({"answers": [2]})),
        3,
        false,
    )
    .await;
    let dismissed = created(&f.store, &keyed("g3", T0)).await;
    let by = Responder {
        answerer: "terminal".into(),
        channel: None,
        user: None,
        submission: None,
    };
    close(dismissed, Outcome::Dismissed { by }, 4, true).await;
    let timed_out = created(&f.store, &keyed("g4", T0)).await;
    close(timed_out, Outcome::TimedOut, 5, false).await;
    let newest = created(&f.store, &keyed("g5", T0)).await;
    let newest = close(
        newest,
        answered(serde_json::json!({"answers": [5]})),
        6,
        true,
    )
    .await;
    created(&f.store, &keyed("still-open", T0)).await;

    let given = f.store.given_answers(5).await.unwrap();
    let seen: Vec<_> = given
        .iter()
        .map(|g| {
            (
                g.namespace.clone(),
                g.request_hash.clone(),
                g.closed_at,
                g.answer.clone(),
            )
        })
        .collect();
    let expected: Vec<_> = [(&newest, 6, 5), (&older, 2, 1)]
        .into_iter()
        .map(|(rec, secs, n)| {
            (
                rec.key.namespace().clone(),
                rec.key.request_hash().to_owned(),
                T0.plus(Duration::from_secs(secs)),
                serde_json::json!({ "answers": [n] }),
            )
        })
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(
        f.store.given_answers(4).await.unwrap().len(),
        1,
        "g1 is 5th newest"
    );
    assert!(f.store.given_answers(0).await.unwrap().is_empty());
}

async fn waiter_hears_outcome_recorded_through_another_handle(f: Fixture) {
    let rec = created(&f.store, &keyed("k1", T0)).await;
    let waiter = f.second().await;
    let parked = waiter.clone();
    let waiting = tokio::spawn(async move { waiter.wait_outcome(rec.id).await.unwrap() });
    // Recorded once the waiter read the ask open and waits: what wakes it is the change.
    tokio::time::timeout(DEADLINE, async {
        while parked.parked_waits() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the waiter never parked");
    let answer = answered(serde_json::json!({"Which?": "A"}));
    f.store.record_outcome(rec.id, &answer, T0).await.unwrap();
    let got = tokio::time::timeout(DEADLINE, waiting)
        .await
        .expect("the waiter heard nothing")
        .unwrap();
    assert_eq!(got.closed.map(|c| c.outcome), Some(answer));
}

async fn feed_announces_changes_from_another_handle(f: Fixture) {
    let follower = f.second().await;
    let mut feed = follower.subscribe().await.unwrap();
    let rec = created(&f.store, &keyed("k1", T0)).await;
    tokio::time::timeout(DEADLINE, async {
        loop {
            match feed.next().await {
                Some(Change::Ask(id)) if id == rec.id => break,
                Some(Change::Rescan) => {
                    if follower
                        .list_open()
                        .await
                        .unwrap()
                        .iter()
                        .any(|r| r.id == rec.id)
                    {
                        break;
                    }
                }
                Some(_) => {}
                None => panic!("the feed ended"),
            }
        }
    })
    .await
    .expect("the new ask was never announced");
}

async fn missing_ask_is_not_found(f: Fixture) {
    let missing = AskId(987_654);
    let e = f
        .store
        .record_outcome(missing, &Outcome::TimedOut, T0)
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "ask 987654 is not in the store");
    assert!(matches!(
        f.store.get(missing).await,
        Err(ask_user_store::Error::NotFound(_))
    ));
    assert!(matches!(
        f.store.set_attached(missing, false, T0).await,
        Err(ask_user_store::Error::NotFound(_))
    ));
    assert!(matches!(
        f.store
            .mark_delivered(missing, &Outcome::TimedOut, T0)
            .await,
        Err(ask_user_store::Error::NotFound(_))
    ));
}

async fn list_open_is_newest_first_and_excludes_closed(f: Fixture) {
    let a = created(&f.store, &keyed("a", T0)).await;
    let b = created(&f.store, &keyed("b", T0)).await;
    let c = created(&f.store, &keyed("c", T0)).await;
    f.store.set_attached(a.id, false, T0).await.unwrap();
    f.store
        .record_outcome(b.id, &Outcome::Withdrawn, T0)
        .await
        .unwrap();
    let open: Vec<AskId> = f
        .store
        .list_open()
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(open, vec![c.id, a.id], "detached asks stay listed");
}

fn token(hash: &str, ask: AskId, channel: &str) -> ChannelToken {
    ChannelToken {
        hash: hash.into(),
        ask,
        channel: channel.into(),
        choice: r#"{"question":"q1","label":"Yes"}"#.into(),
        user: Some("me@example.org".into()),
    }
}

async fn channel_token_is_spent_once_and_bound_to_its_ask_and_channel(f: Fixture) {
    let a = created(&f.store, &keyed("a", T0)).await.id;
    let b = created(&f.store, &keyed("b", T0)).await.id;
    let t = token("h1", a, "email");
    f.store.put_channel_token(&t).await.unwrap();
    let other = f.second().await;
    let spend = |ask, ch: &'static str| {
        let other = other.clone();
        async move { other.spend_channel_token("h1", ask, ch, T0).await.unwrap() }
    };
    assert_eq!(
        other.channel_token("h1").await.unwrap(),
        Some((t.clone(), false))
    );
    assert_eq!(other.channel_token("nope").await.unwrap(), None);
    assert_eq!(spend(b, "email").await, Spend::Elsewhere);
    assert_eq!(spend(a, "ntfy").await, Spend::Elsewhere);
    assert_eq!(
        f.store
            .spend_channel_token("nope", a, "email", T0)
            .await
            .unwrap(),
        Spend::Unknown
    );
    assert_eq!(spend(a, "email").await, Spend::Spent(t.clone()));
    assert_eq!(spend(a, "email").await, Spend::Used);
    assert_eq!(f.store.channel_token("h1").await.unwrap(), Some((t, true)));
    assert!(
        f.store
            .put_channel_token(&token("h1", b, "ntfy"))
            .await
            .is_err()
    );
}

async fn concurrent_spends_of_one_token_have_one_winner(f: Fixture) {
    let a = created(&f.store, &keyed("a", T0)).await.id;
    f.store
        .put_channel_token(&token("h", a, "ntfy"))
        .await
        .unwrap();
    let mut handles = Vec::new();
    for _ in 0..8 {
        let s = f.second().await;
        handles.push(tokio::spawn(async move {
            s.spend_channel_token("h", a, "ntfy", T0).await.unwrap()
        }));
    }
    let mut spent = 0;
    for h in handles {
        match h.await.unwrap() {
            Spend::Spent(_) => spent += 1,
            Spend::Used => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(spent, 1);
}

async fn channel_messages_are_claimed_once_to_send_and_once_to_close(f: Fixture) {
    let a = created(&f.store, &keyed("a", T0)).await.id;
    let other = f.second().await;
    assert!(f.store.claim_channel_send(a, "ntfy").await.unwrap());
    assert!(!other.claim_channel_send(a, "ntfy").await.unwrap());
    assert!(other.claim_channel_send(a, "email").await.unwrap());
    assert!(f.store.claim_channel_send(a, "slack").await.unwrap());
    f.store
        .set_channel_reference(a, "ntfy", "msg1")
        .await
        .unwrap();
    other
        .set_channel_reference(a, "email", "<id@x>")
        .await
        .unwrap();
    // slack claimed but never sent: nothing to update.
    assert_eq!(
        other.claim_channel_closes(a, T0).await.unwrap(),
        [
            ("email".to_owned(), "<id@x>".to_owned()),
            ("ntfy".to_owned(), "msg1".to_owned())
        ]
    );
    assert_eq!(f.store.claim_channel_closes(a, T0).await.unwrap(), []);
}

async fn sweep_purges_the_channel_rows_of_purged_asks(f: Fixture) {
    let old = created(&f.store, &keyed("old", T0)).await.id;
    let young = created(&f.store, &keyed("young", T0)).await.id;
    for (ask, h) in [(old, "ho"), (young, "hy")] {
        f.store
            .put_channel_token(&token(h, ask, "ntfy"))
            .await
            .unwrap();
        assert!(f.store.claim_channel_send(ask, "ntfy").await.unwrap());
    }
    f.store
        .record_outcome(old, &Outcome::Withdrawn, T0)
        .await
        .unwrap();
    let retention = Retention { keep_closed: HOUR };
    f.store.sweep(T0.plus(2 * HOUR), retention).await.unwrap();
    assert_eq!(
        f.store
            .spend_channel_token("ho", old, "ntfy", T0)
            .await
            .unwrap(),
        Spend::Unknown
    );
    assert!(matches!(
        f.store
            .spend_channel_token("hy", young, "ntfy", T0)
            .await
            .unwrap(),
        Spend::Spent(_)
    ));
    assert!(!f.store.claim_channel_send(young, "ntfy").await.unwrap());
}

async fn secrets_are_checked_used_once_expired_and_revoked(f: Fixture) {
    use ask_user_store::NewSecret;
    let s = &f.store;
    let secret = |kind: &str, name: &str, hash: &str, expires: Option<Timestamp>| NewSecret {
        kind: kind.into(),
        name: name.into(),
        hash: hash.into(),
        created_at: T0,
        expires_at: expires,
    };
    s.add_secret(&secret("token", "ci", "h1", None))
        .await
        .unwrap();
    s.add_secret(&secret("token", "laptop", "h2", None))
        .await
        .unwrap();
    s.add_secret(&secret("login", "", "h3", Some(T0.plus(HOUR))))
        .await
        .unwrap();
    // The same hash twice is refused.
    assert!(
        s.add_secret(&secret("token", "x", "h1", None))
            .await
            .is_err()
    );
    let other = f.second().await;
    let found = other
        .check_secret("token", "h1", T0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.kind.as_str(), found.name.as_str()), ("token", "ci"));
    // Per kind: a token's hash is not a login link.
    assert_eq!(other.check_secret("login", "h1", T0).await.unwrap(), None);
    assert_eq!(other.check_secret("token", "nope", T0).await.unwrap(), None);
    let names: Vec<String> = s
        .list_secrets("token")
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["ci", "laptop"]);
    // Single use, across handles; expired is gone.
    assert_eq!(
        s.consume_secret("login", "h3", T0.plus(HOUR))
            .await
            .unwrap(),
        None
    );
    let used = other
        .consume_secret("login", "h3", T0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(used.used_at, Some(T0));
    assert_eq!(s.consume_secret("login", "h3", T0).await.unwrap(), None);
    // Revocation by name, then of a whole kind.
    assert_eq!(s.revoke_secrets("token", Some("ci"), T0).await.unwrap(), 1);
    assert_eq!(other.check_secret("token", "h1", T0).await.unwrap(), None);
    assert!(
        other
            .check_secret("token", "h2", T0)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(s.revoke_secrets("token", None, T0).await.unwrap(), 1);
    assert!(s.list_secrets("token").await.unwrap().is_empty());
}

async fn lease_is_held_by_one_until_released_or_expired(f: Fixture) {
    let s = &f.store;
    let other = f.second().await;
    let ttl = Duration::from_secs(30);
    assert_eq!(s.lease("telegram").await.unwrap(), None);
    // Free: taken. Held by another: refused, across handles, and nothing changes.
    assert!(s.acquire_lease("telegram", "r1", T0, ttl).await.unwrap());
    assert!(
        !other
            .acquire_lease("telegram", "r2", T0.plus(ttl / 2), ttl)
            .await
            .unwrap()
    );
    assert_eq!(
        other.lease("telegram").await.unwrap(),
        Some(("r1".to_owned(), T0.plus(ttl)))
    );
    // Other names are independent.
    assert!(other.acquire_lease("other", "r2", T0, ttl).await.unwrap());
    // Own: acquire again extends it; renew extends it; another cannot renew it.
    assert!(
        s.acquire_lease("telegram", "r1", T0.plus(ttl / 2), ttl)
            .await
            .unwrap()
    );
    assert!(
        s.renew_lease("telegram", "r1", T0.plus(ttl), ttl)
            .await
            .unwrap()
    );
    assert!(
        !other
            .renew_lease("telegram", "r2", T0.plus(ttl), ttl)
            .await
            .unwrap()
    );
    let until = T0.plus(ttl * 2);
    assert_eq!(
        s.lease("telegram").await.unwrap(),
        Some(("r1".to_owned(), until))
    );
    // Expired (at `until` exactly): another takes it, and the old holder can no longer renew.
    assert!(
        !other
            .acquire_lease("telegram", "r2", Timestamp(until.0 - 1), ttl)
            .await
            .unwrap()
    );
    assert!(
        other
            .acquire_lease("telegram", "r2", until, ttl)
            .await
            .unwrap()
    );
    assert!(!s.renew_lease("telegram", "r1", until, ttl).await.unwrap());
    assert!(!s.acquire_lease("telegram", "r1", until, ttl).await.unwrap());
    // Release: only by its holder; then free at once.
    assert!(!s.release_lease("telegram", "r1").await.unwrap());
    assert!(other.release_lease("telegram", "r2").await.unwrap());
    assert_eq!(s.lease("telegram").await.unwrap(), None);
    assert!(
        !other
            .renew_lease("telegram", "r2", until, ttl)
            .await
            .unwrap()
    );
    assert!(s.acquire_lease("telegram", "r1", until, ttl).await.unwrap());
}

async fn concurrent_lease_acquires_have_one_winner(f: Fixture) {
    let mut handles = Vec::new();
    for i in 0..8 {
        let s = f.second().await;
        handles.push(tokio::spawn(async move {
            s.acquire_lease("poll", &format!("r{i}"), T0, HOUR)
                .await
                .unwrap()
        }));
    }
    let mut won = 0;
    for h in handles {
        won += usize::from(h.await.unwrap());
    }
    assert_eq!(won, 1);
}

async fn lease_is_given_on_open_renewed_while_attached_and_dropped_on_detach(f: Fixture) {
    let rec = created(&f.store, &keyed("k1", T0)).await;
    assert_eq!(rec.lease_until, Some(T0.plus(lease())));
    let other = f.second().await;
    let at = T0.plus(Duration::from_secs(20));
    assert!(
        other.renew(rec.id, at).await.unwrap(),
        "an attached ask renews"
    );
    assert_eq!(
        f.store.get(rec.id).await.unwrap().lease_until,
        Some(at.plus(lease()))
    );
    // Detached by its caller: no lease, and a late renewal does not re-attach it.
    f.store
        .set_attached(rec.id, false, T0.plus(HOUR))
        .await
        .unwrap();
    let detached = f.store.get(rec.id).await.unwrap();
    assert_eq!((detached.attached, detached.lease_until), (false, None));
    assert!(!other.renew(rec.id, T0.plus(HOUR)).await.unwrap());
    assert_eq!(f.store.get(rec.id).await.unwrap(), detached);
    // Attached again (the hub's waiting agent): a fresh lease from then.
    f.store
        .set_attached(rec.id, true, T0.plus(HOUR * 2))
        .await
        .unwrap();
    let again = f.store.get(rec.id).await.unwrap();
    assert_eq!(
        (again.attached, again.detached_at, again.lease_until),
        (true, None, Some(T0.plus(HOUR * 2).plus(lease())))
    );
    // Closed: nothing to renew. Missing: not found.
    f.store
        .record_outcome(rec.id, &Outcome::TimedOut, T0.plus(HOUR * 3))
        .await
        .unwrap();
    assert!(!f.store.renew(rec.id, T0.plus(HOUR * 3)).await.unwrap());
    let missing = AskId(rec.id.0 + 1000);
    assert!(matches!(
        f.store.renew(missing, T0).await,
        Err(ask_user_store::Error::NotFound(id)) if id == missing
    ));
}

async fn sweep_detaches_an_attached_ask_whose_lease_ran_out(f: Fixture) {
    let keep = Retention::default();
    let grace = Duration::from_secs(24 * 3600);
    let dead = created(&f.store, &keyed("dead", T0)).await;
    let renewed = T0.plus(Duration::from_secs(10));
    assert!(f.store.renew(dead.id, renewed).await.unwrap());
    let until = renewed.plus(lease());
    // Not before the renewed lease ends.
    let nothing = f.store.sweep(Timestamp(until.0 - 1), keep).await.unwrap();
    assert_eq!(nothing, Swept::default());
    let follower = f.second().await;
    let mut feed = follower.subscribe().await.unwrap();
    let swept = f.store.sweep(until, keep).await.unwrap();
    assert_eq!(
        swept,
        Swept {
            expired: vec![dead.id],
            withdrawn: vec![],
            purged: 0
        }
    );
    // Detached as of the lease's end, still open for the human; the change is announced. The
    // lapsed lease is kept: a detach for it proves nothing about the caller (it may be stopped,
    // or its clock behind), so no unkeyed call is merged into it.
    let rec = follower.get(dead.id).await.unwrap();
    assert_eq!(
        (
            rec.is_open(),
            rec.attached,
            rec.detached_at,
            rec.lease_until
        ),
        (true, false, Some(until), Some(until))
    );
    tokio::time::timeout(DEADLINE, async {
        loop {
            match feed.next().await {
                Some(Change::Ask(id)) if id == dead.id => break,
                Some(Change::Rescan) => break,
                Some(_) => {}
                None => panic!("the feed ended"),
            }
        }
    })
    .await
    .expect("the lease's end was never announced");
    // Its grace counts from the lease's end.
    let later = f
        .store
        .sweep(Timestamp(until.plus(grace).0 - 1), keep)
        .await
        .unwrap();
    assert_eq!(later, Swept::default());
    let gone = f.store.sweep(until.plus(grace), keep).await.unwrap();
    assert_eq!(gone.withdrawn, vec![dead.id]);
    // A retry of a dead asker's call re-attaches with a fresh lease.
    let other = created(&f.store, &keyed("retried", T0)).await;
    f.store.sweep(T0.plus(HOUR), keep).await.unwrap();
    let back = f
        .store
        .open_ask(&keyed("retried", T0.plus(HOUR * 2)))
        .await
        .unwrap();
    let Opened::Reattached(back) = back else {
        panic!("expected re-attach, got {back:?}")
    };
    assert_eq!(
        (back.id, back.attached, back.detached_at, back.lease_until),
        (other.id, true, None, Some(T0.plus(HOUR * 2).plus(lease())))
    );
}

async fn open_asks_page_newest_first_by_keyset_cursor(f: Fixture) {
    let mut open = Vec::new();
    for i in 0..23 {
        let rec = created(&f.store, &keyed(&format!("p{i}"), T0)).await;
        match i % 5 {
            // Closed asks are never listed; detached ones are.
            0 => {
                f.store
                    .record_outcome(rec.id, &Outcome::Withdrawn, T0)
                    .await
                    .unwrap();
            }
            1 => {
                f.store.set_attached(rec.id, false, T0).await.unwrap();
                open.push(rec.id);
            }
            _ => open.push(rec.id),
        }
    }
    open.reverse();
    assert_eq!(f.store.count_open().await.unwrap(), open.len() as u64);
    let mut listed = Vec::new();
    let mut before = None;
    loop {
        let page = f
            .store
            .list_open_page(OpenPage { before, limit: 5 })
            .await
            .unwrap();
        assert!(page.len() <= 5);
        assert!(page.iter().all(|r| r.closed.is_none()));
        let Some(last) = page.last() else { break };
        before = Some(last.id);
        listed.extend(page.iter().map(|r| r.id));
        if listed.len() == 10 {
            // An ask opened mid-paging is newer than the cursor: the pages after it neither
            // repeat nor skip an older ask.
            created(&f.store, &keyed("late", T0)).await;
        }
    }
    assert_eq!(listed, open);
    assert_eq!(f.store.count_open().await.unwrap(), open.len() as u64 + 1);
    let first = f
        .store
        .list_open_page(OpenPage {
            before: None,
            limit: 2,
        })
        .await
        .unwrap();
    assert_eq!(first.len(), 2);
    assert!(first[0].id > open[0], "the late ask is first");
    assert_eq!(first[1].id, open[0]);
    assert_eq!(
        f.store
            .list_open_page(OpenPage {
                before: Some(open[open.len() - 1]),
                limit: 5,
            })
            .await
            .unwrap(),
        vec![],
        "nothing after the oldest"
    );
}

/// `channel_message_ask`: a reply names one message (one part of a reference that may list
/// several chats); any handle finds its ask, of the right channel only, open or closed; a
/// message never sent, or part of a number, matches nothing.
async fn channel_message_ask_finds_the_ask_by_one_part_of_its_reference(f: Fixture) {
    let a = created(&f.store, &keyed("a", T0)).await.id;
    let b = created(&f.store, &keyed("b", T0)).await.id;
    for ask in [a, b] {
        assert!(f.store.claim_channel_send(ask, "telegram").await.unwrap());
    }
    assert!(f.store.claim_channel_send(a, "slack").await.unwrap());
    f.store
        .set_channel_reference(a, "telegram", "-100:7,42:9")
        .await
        .unwrap();
    f.store
        .set_channel_reference(b, "telegram", "42:19")
        .await
        .unwrap();
    f.store
        .set_channel_reference(a, "slack", "42:90")
        .await
        .unwrap();
    let other = f.second().await;
    let find = |part: &'static str| {
        let other = other.clone();
        async move { other.channel_message_ask("telegram", part).await.unwrap() }
    };
    assert_eq!(find("-100:7").await, Some(a));
    assert_eq!(find("42:9").await, Some(a));
    assert_eq!(find("42:19").await, Some(b));
    // Not a prefix or suffix of a part, not another channel's message.
    for none in ["42:1", "2:9", "100:7", "42:90", "", "42"] {
        assert_eq!(find(none).await, None, "{none}");
    }
    assert_eq!(
        other.channel_message_ask("slack", "42:90").await.unwrap(),
        Some(a)
    );
    f.store
        .record_outcome(a, &Outcome::Withdrawn, T0)
        .await
        .unwrap();
    assert_eq!(find("42:9").await, Some(a));
}

/// `count_open_in` counts the open asks of one namespace: asks of another namespace whose
/// asker bears the same name, and closed asks, are not counted.
async fn open_asks_are_counted_by_namespace_never_by_name(f: Fixture) {
    let token = Namespace::hub_token("0123abcd");
    let local = Namespace::mcp_client("claude-code");
    for i in 0..3 {
        created(&f.store, &keyed(&format!("t{i}"), T0).in_namespace(&token)).await;
        created(&f.store, &keyed(&format!("l{i}"), T0).in_namespace(&local)).await;
    }
    let closed = created(&f.store, &keyed("t-closed", T0).in_namespace(&token)).await;
    f.store
        .record_outcome(closed.id, &Outcome::Withdrawn, T0)
        .await
        .unwrap();
    let other = f.second().await;
    assert_eq!(
        (
            other.count_open_in(&token).await.unwrap(),
            other.count_open_in(&local).await.unwrap(),
            other
                .count_open_in(&Namespace::hub_token("ffff"))
                .await
                .unwrap(),
        ),
        (3, 3, 0)
    );
}

/// `count_open` (the inbox's "N waiting") agrees with the open asks themselves after every
/// change that opens or closes an ask, or could: a new ask, a re-attach, an answer handed
/// back, a won and a lost outcome, many outcomes and many opens at once (Postgres's group
/// commits), a detach, a lapsed lease, a withdrawal after grace, a delivery marked and taken
/// back, a purge — read through this handle and another one.
async fn the_count_of_open_asks_stays_exact_through_every_change(f: Fixture) {
    let other = f.second().await;
    let check = |step: &'static str| {
        let (store, other) = (f.store.clone(), other.clone());
        async move {
            let truth = store.list_open().await.unwrap().len() as u64;
            assert_eq!(
                (
                    store.count_open().await.unwrap(),
                    other.count_open().await.unwrap()
                ),
                (truth, truth),
                "after {step}"
            );
            truth
        }
    };
    let keep = Retention {
        keep_closed: Duration::from_secs(24 * 3600),
    };
    assert_eq!(check("nothing").await, 0);
    let a = created(&f.store, &keyed("a", T0)).await;
    let b = created(&f.store, &keyed("b", T0)).await;
    let c = created(&f.store, &keyed("c", T0)).await;
    assert_eq!(check("three opens").await, 3);
    f.store.set_attached(a.id, false, T0).await.unwrap();
    assert_eq!(check("a detach").await, 3);
    assert!(matches!(
        f.store.open_ask(&keyed("a", T0)).await.unwrap(),
        Opened::Reattached(_)
    ));
    assert_eq!(check("a re-attach").await, 3);
    let yes = answered(serde_json::json!("yes"));
    assert_eq!(
        f.store.record_outcome(a.id, &yes, T0).await.unwrap(),
        Recorded::Won
    );
    assert_eq!(check("an answer").await, 2);
    assert!(matches!(
        f.store
            .record_outcome(a.id, &Outcome::Withdrawn, T0)
            .await
            .unwrap(),
        Recorded::Lost(_)
    ));
    assert_eq!(check("a lost outcome").await, 2);
    assert!(matches!(
        f.store.open_ask(&keyed("a", T0)).await.unwrap(),
        Opened::Undelivered(_)
    ));
    assert_eq!(check("an answer handed back").await, 2);
    assert!(f.store.mark_delivered(a.id, &yes, T0).await.unwrap());
    f.store.unmark_delivered(a.id, T0).await.unwrap();
    assert!(f.store.mark_delivered(a.id, &yes, T0).await.unwrap());
    assert_eq!(check("deliveries").await, 2);
    // Many outcomes for one ask at once: one closes it.
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let store = if i % 2 == 0 {
                f.store.clone()
            } else {
                other.clone()
            };
            tokio::spawn(async move {
                store
                    .record_outcome(b.id, &answered(serde_json::json!(i)), T0)
                    .await
                    .unwrap()
            })
        })
        .collect();
    for r in racers {
        r.await.unwrap();
    }
    assert_eq!(check("racing outcomes").await, 1);
    // Many opens at once, of new keys and of one key.
    let openers: Vec<_> = (0..24)
        .map(|i| {
            let store = if i % 2 == 0 {
                f.store.clone()
            } else {
                other.clone()
            };
            let key = if i < 16 {
                format!("many{i}")
            } else {
                "same".to_owned()
            };
            tokio::spawn(async move { store.open_ask(&keyed(&key, T0)).await.unwrap() })
        })
        .collect();
    let mut many = Vec::new();
    for o in openers {
        many.push(o.await.unwrap().record().id);
    }
    assert_eq!(check("racing opens").await, 1 + 16 + 1);
    // Many outcomes for many asks at once.
    let closers: Vec<_> = many[..16]
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let store = if i % 2 == 0 {
                f.store.clone()
            } else {
                other.clone()
            };
            let id = *id;
            tokio::spawn(async move { store.record_outcome(id, &Outcome::Withdrawn, T0).await })
        })
        .collect();
    for cl in closers {
        cl.await.unwrap().unwrap();
    }
    assert_eq!(check("racing outcomes of many asks").await, 2);
    // The sweep: a lapsed lease detaches (still open), grace withdraws, retention purges.
    let lapsed = T0.plus(lease());
    let swept = f.store.sweep(lapsed, keep).await.unwrap();
    assert_eq!(swept.expired.len(), 2);
    assert_eq!(check("a lapsed lease").await, 2);
    let grace = Duration::from_secs(24 * 3600);
    let swept = f.store.sweep(lapsed.plus(grace), keep).await.unwrap();
    assert_eq!(swept.withdrawn.len(), 2);
    assert_eq!(check("withdrawals after grace").await, 0);
    let d = created(&f.store, &keyed("d", lapsed.plus(grace))).await;
    assert!(f.store.renew(d.id, lapsed.plus(grace * 3)).await.unwrap());
    let swept = f.store.sweep(lapsed.plus(grace * 3), keep).await.unwrap();
    assert!(swept.purged > 0, "{swept:?}");
    assert_eq!(check("a purge").await, 1);
    assert!(f.store.get(c.id).await.is_err(), "purged");
}
