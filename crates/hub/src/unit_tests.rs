//! The handlers' pure parts, in-process on a memory store: the Origin rule, the wire views,
//! the delivered compare, revocation by token id.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;

use ask_user_store::{Asker, Namespace, NewAsk, Outcome, Responder, Scope, Store, Timestamp};
use axum::http::{Method, Request};
use pretty_assertions::assert_eq;

use crate::auth::check_page_request;
use crate::refusal::HubRefusal;
use crate::{AskState, HubConfig, RevokedTokens, add_token, hash_secret, revoke_token, view_of};

const REQUEST: &str = r#"{"questions":[{"id":"go","question":"Deploy now?","options":[{"label":"Yes"},{"label":"No"}],"multi_select":false}]}"#;

fn bound() -> SocketAddr {
    "127.0.0.1:8765".parse().unwrap()
}

fn hub(public_url: Option<&str>) -> std::sync::Arc<crate::Hub> {
    let mut config = HubConfig::new(Store::memory());
    config.public_url = public_url.map(str::to_owned);
    crate::hub_state(&config, bound()).unwrap()
}

/// What the human's routes say to a POST with `Host: host` and `Origin: origin`.
fn post_from(hub: &crate::Hub, host: &str, origin: Option<&str>) -> Result<(), &'static str> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/inbox/asks/1/answer")
        .header("host", host);
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let (parts, ()) = request.body(()).unwrap().into_parts();
    check_page_request(hub, &parts).map_err(|refusal| match refusal {
        HubRefusal::ForeignOrigin => "origin",
        HubRefusal::WrongHost => "host",
        _ => "other",
    })
}

#[test]
fn an_https_hub_refuses_an_http_origin_for_its_own_host() {
    let https = hub(Some("https://hub.example.com"));
    let host = "hub.example.com";
    assert_eq!(
        [
            post_from(&https, host, Some("https://hub.example.com")),
            post_from(&https, host, Some("http://hub.example.com")),
            post_from(&https, host, Some("HTTP://HUB.EXAMPLE.COM")),
            post_from(&https, host, Some("https://evil.example")),
            post_from(&https, host, Some("null")),
            post_from(&https, host, None),
        ],
        [
            Ok(()),
            Err("origin"),
            Err("origin"),
            Err("origin"),
            Err("origin"),
            Err("origin")
        ]
    );
    // A plain hub on loopback takes its own http origin (there is no https one to prefer).
    let plain = hub(None);
    assert_eq!(
        post_from(&plain, "127.0.0.1:8765", Some("http://127.0.0.1:8765")),
        Ok(())
    );
    assert_eq!(
        post_from(&plain, "127.0.0.1:8765", Some("http://localhost:8765")),
        Err("origin")
    );
    assert_eq!(
        post_from(
            &plain,
            "evil.example:8765",
            Some("http://evil.example:8765")
        ),
        Err("host")
    );
}

fn asker(agent: &str) -> Asker {
    Asker {
        agent: Some(agent.to_owned()),
        project: None,
        host: None,
        session: None,
        pid: None,
        process: None,
    }
}

async fn open(store: &Store, key: &str, agent: &str, ns: &Namespace) -> ask_user_store::AskRecord {
    let ask = NewAsk::new(&Scope::HostKey(key.to_owned()), REQUEST, asker(agent)).in_namespace(ns);
    store.open_ask(&ask).await.unwrap().record().clone()
}

#[tokio::test]
async fn revoking_a_token_closes_its_asks_as_revoked_by_id_never_by_name() {
    let store = Store::memory();
    let token = add_token(&store, "agent-b").await.unwrap();
    let mine = Namespace::hub_token(&hash_secret(&token));
    let waiting = open(&store, "k1", "agent-b", &mine).await;
    let withdrawn_before = open(&store, "k2", "agent-b", &mine).await;
    store
        .record_outcome(withdrawn_before.id, &Outcome::Withdrawn, Timestamp(1))
        .await
        .unwrap();
    // A local MCP client that calls itself agent-b: another namespace, untouched.
    let local = open(&store, "k1", "agent-b", &Namespace::mcp_client("agent-b")).await;
    revoke_token(&store, "agent-b").await.unwrap();

    let revoked = RevokedTokens::load(&store).await.unwrap();
    let state = |rec: ask_user_store::AskRecord| revoked.view(&rec).state;
    assert_eq!(
        [
            state(store.get(waiting.id).await.unwrap()),
            state(store.get(withdrawn_before.id).await.unwrap()),
            state(store.get(local.id).await.unwrap()),
        ],
        [AskState::Revoked, AskState::Withdrawn, AskState::Open]
    );
    // The store itself holds a withdrawal: nothing answers it any more.
    let lost = store
        .record_outcome(
            waiting.id,
            &Outcome::Answered {
                answer: serde_json::json!({"answers":[{"id":"go","selected":["Yes"]}]}),
                by: Responder {
                    answerer: "hub".to_owned(),
                    channel: None,
                    user: None,
                    submission: None,
                },
            },
            Timestamp::now(),
        )
        .await
        .unwrap();
    assert!(
        matches!(lost, ask_user_store::Recorded::Lost(_)),
        "{lost:?}"
    );

    // A new token of the same name is another namespace: the same call opens a new ask.
    let again = add_token(&store, "agent-b").await.unwrap();
    let theirs = Namespace::hub_token(&hash_secret(&again));
    assert_ne!(theirs, mine);
    let fresh = open(&store, "k1", "agent-b", &theirs).await;
    assert_ne!(fresh.id, waiting.id);
    assert_eq!(revoked.view(&fresh).state, AskState::Open);
    // Revoking it too marks only its own asks; the first token's mark is kept.
    revoke_token(&store, "agent-b").await.unwrap();
    let revoked = RevokedTokens::load(&store).await.unwrap();
    assert_eq!(
        revoked.view(&store.get(fresh.id).await.unwrap()).state,
        AskState::Revoked
    );
    assert_eq!(
        revoked.view(&store.get(waiting.id).await.unwrap()).state,
        AskState::Revoked
    );
}

#[tokio::test]
async fn the_view_names_each_outcome_as_the_wire_does() {
    let store = Store::memory();
    let ns = Namespace::hub_token("x");
    let by = Responder {
        answerer: "hub".to_owned(),
        channel: Some("slack".to_owned()),
        user: None,
        submission: None,
    };
    let answer = serde_json::json!({"answers":[{"id":"go","selected":["No"]}]});
    let cases = [
        (None, AskState::Open),
        (
            Some(Outcome::Answered {
                answer: answer.clone(),
                by: by.clone(),
            }),
            AskState::Answered,
        ),
        (Some(Outcome::Dismissed { by }), AskState::Dismissed),
        (Some(Outcome::TimedOut), AskState::TimedOut),
        (Some(Outcome::Withdrawn), AskState::Withdrawn),
    ];
    for (i, (outcome, state)) in cases.into_iter().enumerate() {
        let rec = open(&store, &format!("k{i}"), "a", &ns).await;
        if let Some(o) = &outcome {
            store.record_outcome(rec.id, o, Timestamp(5)).await.unwrap();
        }
        let view = view_of(&store.get(rec.id).await.unwrap());
        assert_eq!(view.state, state);
        assert_eq!(view.answers.is_some(), state == AskState::Answered);
        assert_eq!(
            view.by.as_ref().map(|b| b.channel.clone()),
            match state {
                AskState::Answered | AskState::Dismissed => Some(Some("slack".to_owned())),
                _ => None,
            }
        );
    }
}

#[test]
fn delivered_is_a_compare_on_the_exact_outcome() {
    use ask_user_hub_wire::Delivered;
    let answer = serde_json::json!({"answers":[{"id":"go","selected":["Yes"]}]});
    let answered = Outcome::Answered {
        answer: answer.clone(),
        by: Responder {
            answerer: "hub".to_owned(),
            channel: None,
            user: None,
            submission: None,
        },
    };
    let said = |state, answers: Option<&serde_json::Value>| Delivered {
        state,
        answers: answers.cloned(),
    };
    let other = serde_json::json!({"answers":[{"id":"go","selected":["No"]}]});
    assert_eq!(
        [
            crate::api::delivered_matches(&said(AskState::Answered, Some(&answer)), &answered),
            crate::api::delivered_matches(&said(AskState::Answered, Some(&other)), &answered),
            crate::api::delivered_matches(&said(AskState::Answered, None), &answered),
            crate::api::delivered_matches(&said(AskState::Dismissed, None), &answered),
            crate::api::delivered_matches(&said(AskState::TimedOut, None), &Outcome::TimedOut),
            crate::api::delivered_matches(&said(AskState::Revoked, None), &Outcome::Withdrawn),
        ],
        [true, false, false, false, true, false]
    );
}

#[test]
fn a_wait_is_clamped_to_the_longest_poll_and_nonsense_is_no_wait() {
    use std::time::Duration;
    let wait = crate::api::wait_of;
    assert_eq!(
        [
            wait(None),
            wait(Some(0.0)),
            wait(Some(-3.0)),
            wait(Some(f64::NAN)),
            wait(Some(f64::INFINITY)),
            wait(Some(1e300)),
            wait(Some(2.5)),
        ],
        [
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            crate::MAX_WAIT,
            Duration::from_millis(2500),
        ]
    );
}

#[test]
fn a_context_field_is_capped_and_blank_is_none() {
    let cap = crate::api::cap;
    assert_eq!(cap(None), None);
    assert_eq!(cap(Some("  \n".to_owned())), None);
    assert_eq!(cap(Some("x".repeat(500))).unwrap().chars().count(), 200);
    assert_eq!(cap(Some("é".repeat(300))).unwrap(), "é".repeat(200));
}

/// The revocation check reads each kind's list once and fires exactly the watches whose
/// secret is no longer live: a revoked token, and the old token of a name made again (its
/// identity, the name with the creation time, is another); a live token and a live session
/// stay watched.
#[tokio::test]
async fn the_revocation_check_fires_only_the_watches_of_secrets_no_longer_live() {
    let store = Store::memory();
    let revocations = std::sync::Arc::new(crate::gate::Revocations::default());
    let watch =
        |kind: &'static str, token: &str, name: &str, secret: &ask_user_store::SecretRecord| {
            assert_eq!(secret.name, name);
            revocations.watch(
                kind,
                &hash_secret(token),
                (name.to_owned(), secret.created_at),
            )
        };
    let live = |t: &str| {
        let (store, hash) = (store.clone(), hash_secret(t));
        async move {
            store
                .check_secret(crate::KIND_TOKEN, &hash, Timestamp::now())
                .await
                .unwrap()
                .unwrap()
        }
    };
    let kept = add_token(&store, "kept").await.unwrap();
    let gone = add_token(&store, "gone").await.unwrap();
    let again = add_token(&store, "again").await.unwrap();
    let kept_watch = watch(crate::KIND_TOKEN, &kept, "kept", &live(&kept).await);
    let gone_watch = watch(crate::KIND_TOKEN, &gone, "gone", &live(&gone).await);
    let again_record = live(&again).await;
    let again_watch = watch(crate::KIND_TOKEN, &again, "again", &again_record);
    let session = "a-session-secret";
    store
        .add_secret(&ask_user_store::NewSecret {
            kind: crate::KIND_SESSION.to_owned(),
            name: "session-1".to_owned(),
            hash: hash_secret(session),
            created_at: Timestamp::now(),
            expires_at: Some(Timestamp::now().plus(crate::SESSION_TTL)),
        })
        .await
        .unwrap();
    let record = store
        .check_secret(crate::KIND_SESSION, &hash_secret(session), Timestamp::now())
        .await
        .unwrap()
        .unwrap();
    let session_watch = watch(crate::KIND_SESSION, session, "session-1", &record);

    revocations.check(&store).await;
    assert!(!kept_watch.token.is_cancelled() && !gone_watch.token.is_cancelled());

    revoke_token(&store, "gone").await.unwrap();
    revoke_token(&store, "again").await.unwrap();
    // A new token of the same name, made once the clock moved on: not the watched one.
    while Timestamp::now() <= again_record.created_at {
        tokio::task::yield_now().await;
    }
    add_token(&store, "again").await.unwrap();
    revocations.check(&store).await;
    assert_eq!(
        [
            kept_watch.token.is_cancelled(),
            gone_watch.token.is_cancelled(),
            again_watch.token.is_cancelled(),
            session_watch.token.is_cancelled(),
        ],
        [false, true, true, false]
    );
}

/// A state read's list stops once its asks' requests pass the page's byte budget (so one read
/// never holds or sends hundreds of the largest asks), keeps at least one ask, and says that
/// older asks remain.
#[tokio::test]
async fn a_state_list_stops_at_its_byte_budget_and_keeps_at_least_one_ask() {
    let store = Store::memory();
    let ns = Namespace::local_user(1);
    let big = |n: usize| {
        let text = "x".repeat(n);
        format!(r#"{{"questions":[{{"id":"q","question":"{text}"}}]}}"#)
    };
    let mut records = Vec::new();
    for (i, size) in [300_000, 300_000, 300_000, 300_000, 10].iter().enumerate() {
        let ask =
            NewAsk::new(&Scope::HostKey(format!("k{i}")), big(*size), asker("a")).in_namespace(&ns);
        records.push(store.open_ask(&ask).await.unwrap().record().clone());
    }
    let mut page = records.clone();
    assert!(crate::inbox::within_page_bytes(&mut page));
    // 3 × 300 KB fit in 1 MiB, the 4th passes it.
    assert_eq!(page.len(), 3);
    assert_eq!(page[0].id, records[0].id);

    let mut one = vec![records[0].clone()];
    let huge =
        NewAsk::new(&Scope::HostKey("huge".into()), big(2 << 20), asker("a")).in_namespace(&ns);
    one.insert(0, store.open_ask(&huge).await.unwrap().record().clone());
    assert!(crate::inbox::within_page_bytes(&mut one));
    assert_eq!(one.len(), 1, "the first ask is listed whatever its size");

    let mut small = vec![records[4].clone()];
    assert!(!crate::inbox::within_page_bytes(&mut small));
    assert_eq!(small.len(), 1);
}
