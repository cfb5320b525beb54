//! The token table on its own, against a memory store.

use std::collections::HashSet;

use ask_user_channels::{Choice, RedeemError, Refusal, Tokens};
use ask_user_store::{AskId, Asker, NewAsk, Opened, Outcome, Responder, Scope, Store};
use pretty_assertions::assert_eq;

async fn ask(store: &Store, key: &str) -> AskId {
    let a = NewAsk::new(
        &Scope::HostKey(key.into()),
        r#"{"questions":[]}"#,
        Asker::default(),
    );
    match store.open_ask(&a).await.unwrap() {
        Opened::Created(r) => r.id,
        other => panic!("{other:?}"),
    }
}

fn yes() -> Choice {
    Choice {
        question: "q1".into(),
        label: "Yes".into(),
    }
}

fn refusal(r: Result<Choice, RedeemError>) -> Refusal {
    match r {
        Err(RedeemError::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn tokens_are_128_random_bits_in_hex() {
    let tokens = Tokens::new();
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let t = tokens.issue(AskId(1), "ntfy", yes(), None).unwrap();
        assert_eq!(t.len(), 32);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
            "{t}"
        );
        assert!(seen.insert(t));
    }
}

#[tokio::test]
async fn the_user_given_at_redeem_wins_over_the_one_given_at_issue() {
    let store = Store::memory();
    let tokens = Tokens::new();
    let a = ask(&store, "a").await;
    let b = ask(&store, "b").await;
    let ta = tokens
        .issue(a, "email", yes(), Some("me@example.org".into()))
        .unwrap();
    let tb = tokens
        .issue(b, "email", yes(), Some("me@example.org".into()))
        .unwrap();
    tokens.redeem(&store, a, "email", &ta, None).await.unwrap();
    tokens
        .redeem(&store, b, "email", &tb, Some("U123".into()))
        .await
        .unwrap();
    let by = |id| {
        let store = store.clone();
        async move {
            match store.get(id).await.unwrap().closed.unwrap().outcome {
                Outcome::Answered { by, .. } => by,
                o => panic!("{o:?}"),
            }
        }
    };
    let expect = |user: &str| Responder {
        answerer: "channel".into(),
        channel: Some("email".into()),
        user: Some(user.into()),
    };
    assert_eq!(by(a).await, expect("me@example.org"));
    assert_eq!(by(b).await, expect("U123"));
}

#[tokio::test]
async fn a_token_is_bound_to_its_channel() {
    let store = Store::memory();
    let tokens = Tokens::new();
    let a = ask(&store, "a").await;
    let t = tokens.issue(a, "ntfy", yes(), None).unwrap();
    assert_eq!(
        refusal(tokens.redeem(&store, a, "email", &t, None).await),
        Refusal::OtherAsk
    );
    tokens.redeem(&store, a, "ntfy", &t, None).await.unwrap();
}

#[tokio::test]
async fn two_racing_taps_on_one_token_record_one_answer() {
    let store = Store::memory();
    let tokens = Tokens::new();
    let a = ask(&store, "a").await;
    let t = tokens.issue(a, "ntfy", yes(), None).unwrap();
    let (r1, r2) = tokio::join!(
        tokens.redeem(&store, a, "ntfy", &t, None),
        tokens.redeem(&store, a, "ntfy", &t, None)
    );
    let oks = [&r1, &r2].iter().filter(|r| r.is_ok()).count();
    assert_eq!(oks, 1, "{r1:?} {r2:?}");
    let lost = if r1.is_ok() { r2 } else { r1 };
    assert_eq!(refusal(lost), Refusal::Replayed);
}

#[tokio::test]
async fn tokens_of_a_closed_ask_are_kept_to_say_why_then_dropped() {
    let store = Store::memory();
    let tokens = Tokens::new();
    let a = ask(&store, "a").await;
    let t = tokens.issue(a, "ntfy", yes(), None).unwrap();
    store
        .record_outcome(a, &Outcome::Withdrawn, ask_user_store::Timestamp::now())
        .await
        .unwrap();
    tokens.ask_closed(a);
    assert_eq!(tokens.len(), 1);
    let r = refusal(tokens.redeem(&store, a, "ntfy", &t, None).await);
    assert_eq!(r.to_string(), "This question was withdrawn by the agent.");
}
