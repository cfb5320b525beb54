//! The escalation ladder: ntfy at once, Telegram later, and only while no answer came. Both
//! services are the FAKES of `fake_ntfy` and `fake_telegram`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_channels::ntfy::{Ntfy, NtfyConfig};
use ask_user_channels::telegram::{Telegram, TelegramConfig};
use ask_user_channels::{
    AnswerState, Channel, Dispatcher, EscalationError, Tokens, answer_router, delays_for,
    parse_escalation,
};
use ask_user_store::{Asker, NewAsk, Outcome, Responder, Scope, Store, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::fake_ntfy::FakeNtfy;
use super::fake_telegram::{BOT_TOKEN, FakeTelegram};
use super::support::{serve, single_select};

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
    let ntfy = Ntfy::new(NtfyConfig {
        server: ntfy_fake.url.clone(),
        topic: "asks".into(),
        access_token: Some("tk_x".into()),
        allow_public_topic: false,
    })
    .unwrap();
    let tg = Telegram::new(TelegramConfig {
        api_base: tg_fake.url.clone(),
        bot_token: BOT_TOKEN.into(),
        chats: vec![1],
        allowed_users: vec![1],
        poll_timeout_secs: 1,
    });
    let channels: Vec<Arc<dyn Channel>> = vec![Arc::new(ntfy), Arc::new(tg)];
    let ladder = parse_escalation("1500ms:telegram").unwrap();
    let delays = delays_for(&ladder, &channels);
    assert_eq!(delays, [Duration::ZERO, Duration::from_millis(1500)]);

    let store = Store::memory();
    let tokens = Tokens::new();
    let addr = serve(answer_router(AnswerState {
        store: store.clone(),
        tokens: tokens.clone(),
    }))
    .await;
    let hub = format!("http://{addr}");
    let page = hub.clone();
    let d = Dispatcher::new(
        store.clone(),
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
