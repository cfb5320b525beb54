//! The escalation ladder: ntfy at once, Telegram later, and only while no answer came. Both
//! services are the FAKES of `fake_ntfy` and `fake_telegram`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_channels::{
    AnswerState, Channel, Dispatcher, EscalationError, Tokens, answer_router, delays_for,
    parse_escalation,
};
use ask_user_store::{Asker, NewAsk, Outcome, Responder, Scope, Store, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::{ntfy_channel, serve, single_select, telegram_channel};
use ask_user_test_support::fakes::ntfy::FakeNtfy;
use ask_user_test_support::fakes::telegram::FakeTelegram;

fn mentions(calls: &[Value], ask: ask_user_store::AskId) -> usize {
    let page = format!("/inbox#ask-{ask}\"");
    calls
        .iter()
        .filter(|b| b.to_string().contains(&page))
        .count()
}

#[tokio::test]
async fn the_next_channel_is_notified_only_while_no_answer_came() {
    let ntfy_fake = FakeNtfy::start(Some("tk_x")).await;
    let tg_fake = FakeTelegram::start().await;
    let ntfy = ntfy_channel(&ntfy_fake.url, "tk_x");
    let tg = telegram_channel(&tg_fake.url, 1);
    let channels: Vec<Arc<dyn Channel>> = vec![Arc::new(ntfy), Arc::new(tg)];
    let ladder = parse_escalation("1500ms:telegram").unwrap();
    let delays = delays_for(&ladder, &channels);
    assert_eq!(delays, [Duration::ZERO, Duration::from_millis(1500)]);

    let store = Store::memory();
    let tokens = Tokens::new(store.clone());
    let addr = serve(answer_router(AnswerState {
        tokens: tokens.clone(),
    }))
    .await;
    let hub = format!("http://{addr}");
    let page = hub.clone();
    let d = Dispatcher::new(
        tokens,
        channels,
        &hub,
        Arc::new(move |id| format!("{page}/inbox#ask-{id}")),
    )
    .with_delays(delays);
    tokio::spawn(d.run());

    let open = |key: &str| {
        NewAsk::new(
            &Scope::HostKey(key.into()),
            single_select("Go?", "Go", &["Yes", "No"]),
            Asker::default(),
        )
    };
    // A: answered from ntfy right away. B: left open.
    let a = store.open_ask(&open("a")).await.unwrap().record().id;
    let got = ntfy_fake
        .wait_for("A on ntfy", |p| mentions(p, a) == 1)
        .await;
    let yes = got
        .iter()
        .find(|m| mentions(std::slice::from_ref(m), a) == 1)
        .unwrap()["actions"][0]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        reqwest::Client::new()
            .post(&yes)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    let b_opened = Instant::now();
    let b = store.open_ask(&open("b")).await.unwrap().record().id;
    ntfy_fake
        .wait_for("B on ntfy", |p| mentions(p, b) == 1)
        .await;

    // B reaches Telegram after its delay; A, answered before its own step came, never does
    // (A's step was due before B's, so B arriving proves A's step has passed).
    tg_fake
        .wait_for("sendMessage", |c| mentions(c, b) == 1)
        .await;
    assert!(
        b_opened.elapsed() >= Duration::from_millis(1400),
        "{:?}",
        b_opened.elapsed()
    );
    assert_eq!(mentions(&tg_fake.calls("sendMessage"), a), 0);

    // B closes: both of its messages are updated.
    let dismissed = Outcome::Dismissed {
        by: Responder {
            answerer: "web".into(),
            ..Responder::default()
        },
    };
    store
        .record_outcome(b, &dismissed, Timestamp::now())
        .await
        .unwrap();
    ntfy_fake
        .wait_for("B's ntfy update", |p| mentions(p, b) == 2)
        .await;
    let edits = tg_fake.wait_for("editMessageText", |c| !c.is_empty()).await;
    assert!(
        edits[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Dismissed.\n\n"),
        "{edits:#?}"
    );
}

#[test]
fn escalation_specs_and_their_errors() {
    assert_eq!(
        parse_escalation("5m:telegram, 20m:email").unwrap(),
        [
            (Duration::from_secs(300), "telegram".to_owned()),
            (Duration::from_secs(1200), "email".to_owned())
        ]
    );
    assert_eq!(parse_escalation("").unwrap(), []);
    for (spec, err) in [
        ("5m", EscalationError::BadStep("5m".into())),
        ("soon:email", EscalationError::BadStep("soon:email".into())),
        ("5m:", EscalationError::BadStep("5m:".into())),
        (
            "500000000000y:email",
            EscalationError::BadStep("500000000000y:email".into()),
        ),
        (
            "5m:email,10m:email",
            EscalationError::Repeated("email".into()),
        ),
    ] {
        assert_eq!(parse_escalation(spec).unwrap_err(), err);
    }
    assert_eq!(
        EscalationError::BadStep("5m".into()).to_string(),
        "--escalate: \"5m\" is not DURATION:CHANNEL (e.g. 5m:telegram,20m:email)"
    );
    assert_eq!(
        EscalationError::Repeated("email".into()).to_string(),
        "--escalate: channel \"email\" is named twice"
    );
}

/// Two dispatchers on one SQLite store (two handles, as two hub replicas would have), and a
/// restart: each ask is sent once, and its message updated once, by whichever is running.
#[tokio::test]
async fn replicas_and_restarts_send_each_message_once_and_update_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    let fake = FakeNtfy::start(Some("tk_x")).await;
    let dispatcher = |store: Store| {
        let ntfy = ntfy_channel(&fake.url, "tk_x");
        let d = Dispatcher::new(
            Tokens::new(store),
            vec![Arc::new(ntfy) as Arc<dyn Channel>],
            "http://hub",
            Arc::new(|id| format!("http://hub/inbox#ask-{id}")),
        );
        tokio::spawn(d.run())
    };
    let open = |key: &str| {
        NewAsk::new(
            &Scope::HostKey(key.into()),
            single_select("Go?", "Go", &["Yes"]),
            Asker::default(),
        )
    };
    let one = Store::open(&url).await.unwrap();
    // Run 1 alone sends `a`; `z` after it proves `a` was fully handled (a dispatcher handles
    // changes in order), message reference stored. Then run 1 is killed.
    let r1 = dispatcher(one.clone());
    let a = one.open_ask(&open("a")).await.unwrap().record().id;
    let z = one.open_ask(&open("z")).await.unwrap().record().id;
    ntfy_fake_wait(&fake, |p| mentions(p, a) == 1 && mentions(p, z) == 1).await;
    r1.abort();
    // A restarted dispatcher and a second replica, each on its own store handle.
    let two = Store::open(&url).await.unwrap();
    let r2 = dispatcher(two.clone());
    let r3 = dispatcher(Store::open(&url).await.unwrap());
    let b = two.open_ask(&open("b")).await.unwrap().record().id;
    let c = one.open_ask(&open("c")).await.unwrap().record().id;
    ntfy_fake_wait(&fake, |p| mentions(p, b) >= 1 && mentions(p, c) >= 1).await;
    for id in [a, b, c] {
        one.record_outcome(id, &Outcome::Withdrawn, Timestamp::now())
            .await
            .unwrap();
    }
    ntfy_fake_wait(&fake, |p| [a, b, c].iter().all(|id| mentions(p, *id) >= 2)).await;
    // A later ask is a barrier for the replica that sends it; the claims in the store keep
    // the other from duplicating anything whenever it gets there.
    let d = two.open_ask(&open("d")).await.unwrap().record().id;
    let got = ntfy_fake_wait(&fake, |p| mentions(p, d) >= 1).await;
    for id in [a, b, c] {
        assert_eq!(
            mentions(&got, id),
            2,
            "ask {id}: one notification, one close update"
        );
    }
    assert_eq!((mentions(&got, z), mentions(&got, d)), (1, 1));
    r2.abort();
    r3.abort();
}

async fn ntfy_fake_wait(fake: &FakeNtfy, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    fake.wait_for("the publishes", pred).await
}
