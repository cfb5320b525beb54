//! Exactly once, made precise (docs/contract.md §8), on every backend like the conformance
//! suite: `delivered` is a compare-and-set on the exact outcome, every ask belongs to a
//! namespace.

use std::time::Duration;

use ask_user_store::{
    Asker, Namespace, NewAsk, Opened, Outcome, Responder, Scope, Store, Timestamp,
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

macro_rules! every_backend {
    ($($case:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::super::common::memory().await).await })*
        }
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::super::common::sqlite().await).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::super::common::postgres().await).await })*
        }
    };
}

every_backend!(
    delivered_is_a_compare_and_set_on_the_exact_outcome,
    the_same_key_in_two_namespaces_is_two_asks,
    a_keyed_call_reattaches_within_its_namespace_even_while_attached,
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
