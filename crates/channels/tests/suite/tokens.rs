//! The token table on its own, against a memory store (the store's own conformance suite runs
//! the same token operations on SQLite and Postgres).

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
        kind: ask_user_channels::ChoiceKind::Option,
        answers: None,
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
    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let a = ask(&store, "a").await;
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let t = tokens.issue(a, "ntfy", &yes(), None).await.unwrap();
        assert_eq!(t.len(), 32);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
            "{t}"
        );
        // Stored hashed: the clear token is nowhere in the store.
        assert_eq!(store.channel_token(&t).await.unwrap(), None);
        assert!(seen.insert(t));
    }
}

#[tokio::test]
async fn the_user_given_at_redeem_wins_over_the_one_given_at_issue() {
    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let a = ask(&store, "a").await;
    let b = ask(&store, "b").await;
    let ta = tokens
        .issue(a, "email", &yes(), Some("me@example.org".into()))
        .await
        .unwrap();
    let tb = tokens
        .issue(b, "email", &yes(), Some("me@example.org".into()))
        .await
        .unwrap();
    tokens.redeem(a, "email", &ta, None).await.unwrap();
    tokens
        .redeem(b, "email", &tb, Some("U123".into()))
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
        submission: None,
    };
    assert_eq!(by(a).await, expect("me@example.org"));
    assert_eq!(by(b).await, expect("U123"));
}

#[tokio::test]
async fn a_token_is_bound_to_its_channel_and_peeking_spends_nothing() {
    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let a = ask(&store, "a").await;
    let t = tokens.issue(a, "ntfy", &yes(), None).await.unwrap();
    assert_eq!(
        refusal(tokens.redeem(a, "email", &t, None).await),
        Refusal::OtherAsk
    );
    assert_eq!(tokens.peek(a, "ntfy", &t).await.unwrap(), yes());
    assert_eq!(tokens.peek(a, "ntfy", &t).await.unwrap(), yes());
    tokens.redeem(a, "ntfy", &t, None).await.unwrap();
    assert!(matches!(
        tokens.peek(a, "ntfy", &t).await,
        Err(RedeemError::Refused(Refusal::Replayed))
    ));
}

#[tokio::test]
async fn two_racing_taps_on_one_token_record_one_answer() {
    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let a = ask(&store, "a").await;
    let t = tokens.issue(a, "ntfy", &yes(), None).await.unwrap();
    let (r1, r2) = tokio::join!(
        tokens.redeem(a, "ntfy", &t, None),
        tokens.redeem(a, "ntfy", &t, None)
    );
    let oks = [&r1, &r2].iter().filter(|r| r.is_ok()).count();
    assert_eq!(oks, 1, "{r1:?} {r2:?}");
    let lost = if r1.is_ok() { r2 } else { r1 };
    assert_eq!(refusal(lost), Refusal::Replayed);
}

#[tokio::test]
async fn a_token_of_a_closed_ask_says_why_until_the_ask_is_purged() {
    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let a = ask(&store, "a").await;
    let t = tokens.issue(a, "ntfy", &yes(), None).await.unwrap();
    let t2 = tokens.issue(a, "ntfy", &yes(), None).await.unwrap();
    let now = ask_user_store::Timestamp::now();
    store
        .record_outcome(a, &Outcome::Withdrawn, now)
        .await
        .unwrap();
    let r = refusal(tokens.redeem(a, "ntfy", &t, None).await);
    assert_eq!(r.to_string(), "This question was withdrawn by the agent.");
    let retention = ask_user_store::Retention {
        keep_closed: std::time::Duration::ZERO,
    };
    store
        .sweep(now.plus(std::time::Duration::from_secs(1)), retention)
        .await
        .unwrap();
    assert_eq!(
        refusal(tokens.redeem(a, "ntfy", &t2, None).await),
        Refusal::Unknown
    );
}

#[tokio::test]
async fn set_and_own_tokens_check_what_is_given_before_they_are_spent() {
    use ask_user_channels::{ChoiceKind, Given};
    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let request = serde_json::json!({"questions": [{
        "id": "q1", "question": "Which?", "multi_select": true,
        "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}],
    }]})
    .to_string();
    let open = |key: &'static str| {
        let (store, request) = (store.clone(), request.clone());
        async move {
            let a = NewAsk::new(&Scope::HostKey(key.into()), &request, Asker::default());
            store.open_ask(&a).await.unwrap().record().id
        }
    };
    let kind = |kind| Choice {
        question: "q1".into(),
        label: String::new(),
        kind,
        answers: None,
    };
    let refused = |r: Result<(Choice, String), RedeemError>| match r {
        Err(RedeemError::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let a = open("a").await;
    let set = tokens
        .issue(a, "slack", &kind(ChoiceKind::Set), None)
        .await
        .unwrap();
    // Wrong kind, nothing chosen, an option that does not exist: refused, token unspent.
    for (given, want) in [
        (Given::Tap, Refusal::Unknown),
        (Given::Own("x".into()), Refusal::Unknown),
        (Given::Set(Vec::new()), Refusal::NothingChosen),
        (Given::Set(vec![0, 3]), Refusal::Unknown),
    ] {
        let r = tokens.redeem_with(a, "slack", &set, None, given).await;
        assert_eq!(refused(r), want);
    }
    assert_eq!(
        refusal(tokens.redeem(a, "slack", &set, None).await),
        Refusal::Unknown
    );
    // Indices are deduplicated and put in the request's order.
    let (_, summary) = tokens
        .redeem_with(
            a,
            "slack",
            &set,
            Some("U1".into()),
            Given::Set(vec![2, 0, 2]),
        )
        .await
        .unwrap();
    assert_eq!(summary, "\u{201c}A\u{201d}, \u{201c}C\u{201d}");
    let r = tokens
        .redeem_with(a, "slack", &set, None, Given::Set(vec![1]))
        .await;
    assert_eq!(refused(r), Refusal::Replayed);

    let b = open("b").await;
    let own = tokens
        .issue(b, "slack", &kind(ChoiceKind::Own), None)
        .await
        .unwrap();
    let r = tokens
        .redeem_with(b, "slack", &own, None, Given::Own(" \n ".into()))
        .await;
    assert_eq!(refused(r), Refusal::NothingTyped);
    assert_eq!(Refusal::NothingTyped.to_string(), "Type an answer first.");
    let (_, summary) = tokens
        .redeem_with(b, "slack", &own, None, Given::Own(" D ".into()))
        .await
        .unwrap();
    assert_eq!(summary, "\u{201c}D\u{201d}");
}
