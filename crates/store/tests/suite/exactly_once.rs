//! Exactly once, made precise (docs/contract.md §8), on every backend like the conformance
//! suite: `delivered` is a compare-and-set on the exact outcome, every ask belongs to a
//! namespace, and an unkeyed call never merges two live callers (a caller whose process
//! ended is not live, even within its lease).

use std::time::Duration;

use ask_user_store::{
    Asker, Namespace, NewAsk, Opened, Outcome, Responder, Retention, Scope, Store, Timestamp,
    lease, process_identity, this_process,
};
use pretty_assertions::assert_eq;

use super::common::Fixture;

const T0: Timestamp = Timestamp(1_800_000_000_000);
const REQUEST: &str = r#"{"questions":[{"question":"Deploy?"}]}"#;

fn ask(scope: Scope, namespace: &Namespace, at: Timestamp) -> NewAsk {
    let mut ask = NewAsk::new(&scope, REQUEST, Asker::default()).in_namespace(namespace);
    ask.created_at = at;
    ask
}

fn keyed(key: &str, namespace: &Namespace, at: Timestamp) -> NewAsk {
    ask(Scope::HostKey(key.into()), namespace, at)
}

fn unkeyed(namespace: &Namespace, at: Timestamp) -> NewAsk {
    ask(Scope::Caller("cwd=/src/app".into()), namespace, at)
}

/// An unkeyed ask made by the local process `pid` (its identity as the asker records it).
fn unkeyed_by(pid: u32, namespace: &Namespace, at: Timestamp) -> NewAsk {
    let mut ask = unkeyed(namespace, at);
    ask.asker = Asker {
        pid: Some(pid),
        process: process_identity(pid),
        ..Asker::default()
    };
    assert!(
        ask.asker.process.is_some(),
        "Linux tells a process's identity"
    );
    ask
}

/// A real process that runs until killed (killed on drop).
struct Sleeper(std::process::Child);

impl Sleeper {
    fn start() -> Sleeper {
        Sleeper(
            std::process::Command::new("sleep")
                .arg("600")
                .env_clear()
                .spawn()
                .unwrap(),
        )
    }

    fn kill(&mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn answered(v: &str, answerer: &str) -> Outcome {
    Outcome::Answered {
        answer: serde_json::json!({ "go": v }),
        by: Responder {
            answerer: answerer.into(),
            ..Responder::default()
        },
    }
}

fn alice() -> Namespace {
    Namespace::hub_token("tok-1")
}

fn bob() -> Namespace {
    Namespace::hub_token("tok-2")
}

async fn open(store: &Store, ask: &NewAsk) -> Opened {
    store.open_ask(ask).await.unwrap()
}

every_backend!(
    delivered_is_a_compare_and_set_on_the_exact_outcome,
    the_same_key_in_two_namespaces_is_two_asks,
    a_keyed_call_reattaches_within_its_namespace_even_while_attached,
    an_unkeyed_call_never_merges_two_live_callers,
    an_unkeyed_retry_collects_an_answer_only_once_its_caller_went_away,
    an_unkeyed_retry_collects_the_answer_of_a_caller_whose_process_ended,
    a_timed_out_ask_does_not_hide_an_older_undelivered_answer,
    find_ask_reports_what_open_ask_would_reuse_and_writes_nothing,
    two_live_calls_of_one_process_are_two_callers,
    a_clock_weeks_ahead_purges_no_undelivered_answer,
);

async fn delivered_is_a_compare_and_set_on_the_exact_outcome(f: Fixture) {
    let Opened::Created(rec) = open(&f.store, &keyed("k", &alice(), T0)).await else {
        panic!("expected a new ask")
    };
    let yes = answered("yes", "inbox");
    assert!(
        !f.store.mark_delivered(rec.id, &yes, T0).await.unwrap(),
        "open: nothing to deliver"
    );
    f.store.record_outcome(rec.id, &yes, T0).await.unwrap();
    // A call that printed its timeout, or another answer, never marks the stored answer.
    for other in [
        Outcome::TimedOut,
        Outcome::Withdrawn,
        answered("no", "inbox"),
        answered("yes", "the web page"),
    ] {
        assert!(!f.store.mark_delivered(rec.id, &other, T0).await.unwrap());
        assert_eq!(
            f.second().await.get(rec.id).await.unwrap().delivered_at,
            None
        );
    }
    assert!(
        matches!(open(&f.store, &keyed("k", &alice(), T0)).await, Opened::Undelivered(r) if r.id == rec.id),
        "the retry still gets it"
    );
    assert!(f.store.mark_delivered(rec.id, &yes, T0).await.unwrap());
    assert_eq!(
        f.second().await.get(rec.id).await.unwrap().delivered_at,
        Some(T0)
    );
}

async fn the_same_key_in_two_namespaces_is_two_asks(f: Fixture) {
    let Opened::Created(a) = open(&f.store, &keyed("k", &alice(), T0)).await else {
        panic!("expected a new ask for alice")
    };
    let Opened::Created(b) = open(&f.second().await, &keyed("k", &bob(), T0)).await else {
        panic!("bob's ask must not re-attach to alice's")
    };
    assert_ne!(a.id, b.id);
    assert_eq!(
        f.store.get(b.id).await.unwrap().key.namespace(),
        &bob(),
        "stored with its namespace"
    );
    f.store
        .record_outcome(a.id, &answered("alice's", "hub"), T0)
        .await
        .unwrap();
    // Bob's retry re-attaches to bob's open ask, never to alice's answer; alice's gets hers.
    assert!(
        matches!(open(&f.store, &keyed("k", &bob(), T0)).await, Opened::Reattached(r) if r.id == b.id)
    );
    assert!(
        matches!(open(&f.store, &keyed("k", &alice(), T0)).await, Opened::Undelivered(r) if r.id == a.id)
    );
    // The unnamed namespace (asks of older binaries) is one more namespace.
    assert!(matches!(
        open(&f.store, &keyed("k", &Namespace::default(), T0)).await,
        Opened::Created(r) if r.id != a.id && r.id != b.id
    ));
}

async fn a_keyed_call_reattaches_within_its_namespace_even_while_attached(f: Fixture) {
    let Opened::Created(a) = open(&f.store, &keyed("k", &alice(), T0)).await else {
        panic!("expected a new ask")
    };
    // The same key is the same call (a retry whose predecessor still holds its lease).
    assert!(
        matches!(open(&f.second().await, &keyed("k", &alice(), T0.plus(Duration::from_millis(5)))).await, Opened::Reattached(r) if r.id == a.id)
    );
}

async fn an_unkeyed_call_never_merges_two_live_callers(f: Fixture) {
    let me = Namespace::local_user(1000);
    let Opened::Created(first) = open(&f.store, &unkeyed(&me, T0)).await else {
        panic!("expected a new ask")
    };
    // A second terminal in the same directory, same question, while the first still waits.
    let soon = T0.plus(Duration::from_millis(10));
    let Opened::Created(second) = open(&f.second().await, &unkeyed(&me, soon)).await else {
        panic!("a live caller's ask must not be shared")
    };
    assert_ne!(first.id, second.id);
    assert_eq!(f.store.list_open().await.unwrap().len(), 2);
    // The first goes away: a retry re-attaches to a detached one, not to the live second.
    f.store.set_attached(first.id, false, soon).await.unwrap();
    assert!(
        matches!(open(&f.store, &unkeyed(&me, soon)).await, Opened::Reattached(r) if r.id == first.id)
    );
    // A caller that records no process identity stays live when its lease runs out (stopped,
    // or its clock behind): a lapsed lease proves nothing, before or after a sweep.
    let after_lease = second.lease_until.unwrap().plus(Duration::from_millis(1));
    assert!(second.lease_until.unwrap() <= soon.plus(lease()));
    let Opened::Created(third) = open(&f.store, &unkeyed(&me, after_lease)).await else {
        panic!("a lapsed lease must not merge two callers")
    };
    assert_ne!(third.id, second.id);
    let swept = f
        .store
        .sweep(after_lease, Retention::default())
        .await
        .unwrap();
    assert!(swept.expired.contains(&second.id), "{swept:?}");
    let Opened::Created(fourth) = open(&f.store, &unkeyed(&me, after_lease)).await else {
        panic!("an ask the sweep detached for a lapsed lease must not merge two callers")
    };
    assert!(![second.id, third.id].contains(&fourth.id));
    // Nor is its answer handed to another caller.
    let yes = answered("yes", "inbox");
    f.store
        .record_outcome(second.id, &yes, after_lease)
        .await
        .unwrap();
    for id in [third.id, fourth.id] {
        f.store
            .record_outcome(id, &Outcome::Withdrawn, after_lease)
            .await
            .unwrap();
    }
    let Opened::Created(_) = open(&f.store, &unkeyed(&me, after_lease)).await else {
        panic!("the answer of a caller whose lease lapsed must not be handed to another")
    };
}

async fn an_unkeyed_retry_collects_an_answer_only_once_its_caller_went_away(f: Fixture) {
    let me = Namespace::local_user(1000);
    let Opened::Created(rec) = open(&f.store, &unkeyed(&me, T0)).await else {
        panic!("expected a new ask")
    };
    let yes = answered("yes", "inbox");
    f.store.record_outcome(rec.id, &yes, T0).await.unwrap();
    // Its caller is alive (printing it now): another terminal's same question is its own.
    let soon = T0.plus(Duration::from_millis(10));
    let Opened::Created(other) = open(&f.store, &unkeyed(&me, soon)).await else {
        panic!("a live caller's answer must not be handed to another caller")
    };
    f.store
        .record_outcome(other.id, &Outcome::Withdrawn, soon)
        .await
        .unwrap();
    // The first caller was stopped by a signal before printing: it detached; the retry gets it.
    f.store.set_attached(rec.id, false, soon).await.unwrap();
    assert!(
        matches!(open(&f.store, &unkeyed(&me, soon)).await, Opened::Undelivered(r) if r.id == rec.id)
    );
}

async fn an_unkeyed_retry_collects_the_answer_of_a_caller_whose_process_ended(f: Fixture) {
    let me = Namespace::local_user(1000);
    let mut caller = Sleeper::start();
    let Opened::Created(rec) = open(&f.store, &unkeyed_by(caller.0.id(), &me, T0)).await else {
        panic!("expected a new ask")
    };
    let yes = answered("yes", "inbox");
    f.store.record_outcome(rec.id, &yes, T0).await.unwrap();
    let soon = T0.plus(Duration::from_millis(10));
    // While its process runs, the answer is its own: this (live) process's same question is
    // another ask.
    let mine = unkeyed_by(std::process::id(), &me, soon);
    assert_eq!(mine.asker.process, this_process());
    let Opened::Created(other) = open(&f.store, &mine).await else {
        panic!("a live process's answer must not be handed to another caller")
    };
    f.store
        .record_outcome(other.id, &Outcome::Withdrawn, soon)
        .await
        .unwrap();
    // `kill -9`: no detach, its lease still runs; the immediate retry collects the answer.
    caller.kill();
    assert!(rec.lease_until.unwrap() > soon);
    let retry = f.second().await;
    assert!(
        matches!(open(&retry, &unkeyed(&me, soon)).await, Opened::Undelivered(r) if r.id == rec.id)
    );
}

async fn a_timed_out_ask_does_not_hide_an_older_undelivered_answer(f: Fixture) {
    let me = Namespace::local_user(1000);
    let Opened::Created(first) = open(&f.store, &unkeyed(&me, T0)).await else {
        panic!("expected a new ask")
    };
    let soon = T0.plus(Duration::from_millis(10));
    let Opened::Created(second) = open(&f.store, &unkeyed(&me, soon)).await else {
        panic!("two live callers, two asks")
    };
    // The second times out; the first's caller went away, and the human answers its ask.
    f.store
        .record_outcome(second.id, &Outcome::TimedOut, soon)
        .await
        .unwrap();
    f.store.set_attached(second.id, false, soon).await.unwrap();
    f.store.set_attached(first.id, false, soon).await.unwrap();
    let yes = answered("yes", "inbox");
    f.store.record_outcome(first.id, &yes, soon).await.unwrap();
    assert!(
        matches!(open(&f.store, &unkeyed(&me, soon)).await, Opened::Undelivered(r) if r.id == first.id)
    );
}

async fn find_ask_reports_what_open_ask_would_reuse_and_writes_nothing(f: Fixture) {
    let me = Namespace::local_user(1000);
    let k = keyed("k", &me, T0);
    assert_eq!(f.store.find_ask(&k).await.unwrap(), None, "nothing stored");
    assert!(
        f.store.list_open().await.unwrap().is_empty(),
        "and nothing written"
    );
    let Opened::Created(rec) = open(&f.store, &k).await else {
        panic!("expected a new ask")
    };
    let second = f.second().await;
    assert_eq!(
        second.find_ask(&k).await.unwrap().map(|r| r.id),
        Some(rec.id),
        "open"
    );
    let yes = answered("yes", "inbox");
    f.store.record_outcome(rec.id, &yes, T0).await.unwrap();
    assert_eq!(
        second.find_ask(&k).await.unwrap().map(|r| r.id),
        Some(rec.id),
        "undelivered"
    );
    assert!(f.store.mark_delivered(rec.id, &yes, T0).await.unwrap());
    assert_eq!(
        second.find_ask(&k).await.unwrap(),
        None,
        "delivered: a new ask"
    );
    // An unkeyed ask a live caller holds is not this call's.
    let Opened::Created(_) = open(&f.store, &unkeyed(&me, T0)).await else {
        panic!("expected a new ask")
    };
    assert_eq!(f.store.find_ask(&unkeyed(&me, T0)).await.unwrap(), None);
}

async fn two_live_calls_of_one_process_are_two_callers(f: Fixture) {
    // An MCP server (one process) serving two sessions that ask the identical question at once,
    // or one session asking it again while its first call still waits: two calls, two asks.
    let me = Namespace::local_user(1000);
    let Opened::Created(first) = open(&f.store, &unkeyed_by(std::process::id(), &me, T0)).await
    else {
        panic!("expected a new ask")
    };
    let soon = T0.plus(Duration::from_millis(10));
    let Opened::Created(second) = open(
        &f.second().await,
        &unkeyed_by(std::process::id(), &me, soon),
    )
    .await
    else {
        panic!("a live call's ask must not be shared, even within one process")
    };
    assert_ne!(second.id, first.id);
    // The first is answered while its call waits: the answer is that call's alone.
    let yes = answered("yes", "inbox");
    f.store.record_outcome(first.id, &yes, soon).await.unwrap();
    f.store
        .record_outcome(second.id, &Outcome::Withdrawn, soon)
        .await
        .unwrap();
    let Opened::Created(_) = open(&f.store, &unkeyed_by(std::process::id(), &me, soon)).await
    else {
        panic!("a live call's answer must not be handed to another call of its process")
    };
    // Once that call went away (detached), its retry collects it.
    f.store.set_attached(first.id, false, soon).await.unwrap();
    assert!(
        matches!(open(&f.store, &unkeyed_by(std::process::id(), &me, soon)).await, Opened::Undelivered(r) if r.id == first.id)
    );
}

async fn a_clock_weeks_ahead_purges_no_undelivered_answer(f: Fixture) {
    // A process whose clock is 31 days ahead opens the store (and sweeps) while another's
    // answered ask waits for its caller's retry: that answer stays; a delivered one is audit
    // history only, and goes.
    let me = Namespace::local_user(1000);
    let Opened::Created(waiting) = open(&f.store, &keyed("waiting", &me, T0)).await else {
        panic!("expected a new ask")
    };
    let Opened::Created(done) = open(&f.store, &keyed("done", &me, T0)).await else {
        panic!("expected a new ask")
    };
    let yes = answered("yes", "inbox");
    for id in [waiting.id, done.id] {
        f.store.record_outcome(id, &yes, T0).await.unwrap();
    }
    assert!(f.store.mark_delivered(done.id, &yes, T0).await.unwrap());
    let ahead = T0.plus(Duration::from_secs(31 * 24 * 3600));
    let swept = f
        .second()
        .await
        .sweep(ahead, Retention::default())
        .await
        .unwrap();
    assert_eq!(swept.purged, 1, "{swept:?}");
    assert!(f.store.get(done.id).await.is_err(), "delivered: purged");
    let soon = T0.plus(Duration::from_secs(1));
    assert!(
        matches!(open(&f.store, &keyed("waiting", &me, soon)).await, Opened::Undelivered(r) if r.id == waiting.id)
    );
}
