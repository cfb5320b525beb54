//! The store link (`ask_user_host::durable`) with a memory store: the call flow of
//! docs/contract.md §8 at host level, without processes (the CLI's tests run it for real).

use std::sync::Arc;

use ask_user_core::{AnswerItem, Answers, CancellationToken, ExecutionContext, UserInteraction};
use ask_user_host::HostCall;
use ask_user_host::durable::{Durable, record};
use ask_user_store::{Asker, Namespace, Outcome, Responder, Scope, Store, Timestamp};
use ask_user_test_support::answerers::{Fixed, Waiting, selected};
use pretty_assertions::assert_eq;

const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;

/// Answers "Yes" at once, counting its asks, as "the terminal".
fn answering() -> Arc<Fixed> {
    Arc::new(Fixed::new(selected("go", "Yes")).named("the terminal"))
}

/// Waits until cancelled, as "the terminal".
fn waiting() -> Arc<Waiting> {
    Arc::new(Waiting::new().named("the terminal"))
}

fn link(store: &Store) -> Durable {
    Durable::new(
        store.clone(),
        Namespace::local_user(1000),
        Scope::HostKey("k".into()),
        Asker::default(),
    )
}

/// One call through [`HostCall`] with the store; its outcome is not delivered.
async fn call(
    store: &Store,
    answerer: Arc<dyn UserInteraction>,
    cancel: CancellationToken,
) -> (String, Durable) {
    run(store, answerer, cancel, false).await
}

/// One call through [`HostCall`] with the store, delivered (written, then marked) when
/// `deliver`.
async fn run(
    store: &Store,
    answerer: Arc<dyn UserInteraction>,
    cancel: CancellationToken,
    deliver: bool,
) -> (String, Durable) {
    let durable = link(store);
    let host = HostCall::builder(answerer)
        .durable(Some(durable.clone()))
        .build();
    let asked = host.call(ARGS, ExecutionContext::new(cancel)).await;
    let outcome = if deliver {
        let mut written = |_: &ask_user_core::Outcome| true;
        asked.deliver(&mut written).await.0
    } else {
        asked.into_outcome()
    };
    (outcome.text(), durable)
}

#[tokio::test]
async fn stored_before_read_then_delivered_then_asked_anew() {
    let store = Store::memory();
    let shown = answering();
    let (text, durable) = call(&store, shown.clone(), CancellationToken::new()).await;
    assert_eq!(text, r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#);
    let id = durable.ask_id().unwrap();
    let rec = store.get(id).await.unwrap();
    assert_eq!(rec.closed.unwrap().outcome.state_name(), "answered");
    assert!(
        rec.delivered_at.is_none(),
        "not delivered before the host says so"
    );

    // Not delivered: the same call gets the stored answer at once and shows nothing; this
    // time it is delivered.
    let (again, durable2) = run(&store, shown.clone(), CancellationToken::new(), true).await;
    assert_eq!(again, text);
    assert_eq!(durable2.ask_id(), Some(id));
    assert_eq!(durable2.opened(), Some("undelivered"));
    assert_eq!(shown.asked(), 1, "shown once");
    assert!(store.get(id).await.unwrap().delivered_at.is_some());

    let (_, durable3) = call(&store, shown.clone(), CancellationToken::new()).await;
    assert_eq!(durable3.opened(), Some("created"), "delivered: asked anew");
    assert_eq!(shown.asked(), 2);
}

#[tokio::test]
async fn an_aborted_call_detaches_and_an_answer_from_elsewhere_settles_the_retry() {
    let store = Store::memory();
    let waiting = waiting();
    let cancel = CancellationToken::new();
    let aborting = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        aborting.cancel();
    });
    let (text, durable) = call(&store, waiting.clone(), cancel).await;
    assert_eq!(text, ask_user_core::ABORTED_TEXT);
    let id = durable.ask_id().unwrap();
    let rec = store.get(id).await.unwrap();
    assert!(
        rec.is_open() && !rec.attached,
        "detached, not withdrawn: {rec:?}"
    );

    // The retry re-attaches; another process (the inbox) records the answer meanwhile.
    let answering = store.clone();
    tokio::spawn(async move {
        loop {
            if answering.get(id).await.is_ok_and(|r| r.attached) {
                break;
            }
            tokio::task::yield_now().await;
        }
        let answer = Outcome::Answered {
            answer: serde_json::json!({"answers":[{"id":"go","selected":["No"]}]}),
            by: Responder {
                answerer: "the inbox".into(),
                ..Responder::default()
            },
        };
        answering
            .record_outcome(id, &answer, Timestamp::now())
            .await
            .unwrap();
    });
    let (text, retry) = call(&store, waiting.clone(), CancellationToken::new()).await;
    assert_eq!(retry.opened(), Some("reattached"));
    assert_eq!(retry.ask_id(), Some(id));
    assert_eq!(text, r#"{"answers":[{"id":"go","selected":["No"]}]}"#);
}

#[tokio::test]
async fn a_later_answer_is_told_which_answer_counted() {
    let store = Store::memory();
    let answerer = answering();
    let (_, first) = call(&store, answerer, CancellationToken::new()).await;
    let id = first.ask_id().unwrap();
    let late = ask_user_core::Settled::Dismissed {
        by: Some("the inbox".into()),
    };
    assert_eq!(
        record(&store, id, &late).await,
        Err(ask_user_core::RecordError::Settled(
            ask_user_core::Settled::Answered {
                answers: Answers {
                    answers: vec![AnswerItem::selected("go", ["Yes"])],
                },
                by: Some("the terminal".into()),
            }
        ))
    );
}

/// Opening the store runs its retention: a detached ask whose grace ran out is withdrawn
/// (docs/contract.md §8), an attached one and one still within its grace stay open.
#[tokio::test]
async fn opening_the_store_withdraws_detached_asks_past_their_grace() {
    use ask_user_host::durable::StoreArgs;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    let store = Store::open(&url).await.unwrap();
    let mut opened = Vec::new();
    for (key, grace, detach) in [
        ("expired", std::time::Duration::ZERO, true),
        ("in-grace", std::time::Duration::from_secs(3600), true),
        ("attached", std::time::Duration::ZERO, false),
    ] {
        let mut ask =
            ask_user_store::NewAsk::new(&Scope::HostKey(key.into()), ARGS, Asker::default());
        ask.grace = grace;
        let ask_user_store::Opened::Created(record) = store.open_ask(&ask).await.unwrap() else {
            panic!("{key}: not created");
        };
        if detach {
            store
                .set_attached(record.id, false, Timestamp::now())
                .await
                .unwrap();
        }
        opened.push((key, record.id));
    }
    drop(store);
    let args = StoreArgs {
        store: Some(url.into()),
        key: None,
    };
    let store = args.open().await.unwrap();
    for (key, id) in opened {
        let closed = store.get(id).await.unwrap().closed.map(|c| c.outcome);
        let expected = (key == "expired").then_some(Outcome::Withdrawn);
        assert_eq!(closed, expected, "{key}");
    }
}
