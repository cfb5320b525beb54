//! A slow channel delays no other: the dispatcher sends an ask to its channels at once, and
//! updates their messages at once when it closes. Both services are the FAKES of `fake_ntfy`
//! and `fake_telegram`, one of them made slow on purpose (it holds its requests unanswered
//! until the test releases them). Shown as ordering, not timing: the fast channel's request
//! arrives while the slow one's is still held.

use std::sync::Arc;

use ask_user_channels::Channel;
use ask_user_channels::ntfy::{Ntfy, NtfyConfig};
use ask_user_channels::telegram::{Telegram, TelegramConfig};
use ask_user_store::{AskId, Outcome, Responder, Timestamp};
use serde_json::Value;

use super::fake_ntfy::FakeNtfy;
use super::fake_telegram::{BOT_TOKEN, FakeTelegram};
use super::support::{Hub, single_select};

fn mentions(calls: &[Value], ask: AskId) -> usize {
    let page = format!("/inbox#ask-{ask}\"");
    calls
        .iter()
        .filter(|b| b.to_string().contains(&page))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_channel_delays_neither_the_send_nor_the_close_update_of_another() {
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
        // Nothing polls here; this sets the client's request timeout (50 + 15 s) above the
        // fake's hold (60 s) and the waits (30 s), so the held send is still in flight (not
        // given up) when ntfy's arrives.
        poll_timeout_secs: 50,
    });
    // Telegram first: sent one after another, ntfy would wait for it.
    let channels: Vec<Arc<dyn Channel>> = vec![Arc::new(tg), Arc::new(ntfy)];
    let hub = Hub::start(channels).await;

    // The send: Telegram holds it; ntfy gets the ask meanwhile.
    tg_fake.hold();
    let a = hub
        .ask("a", &single_select("Go?", "Go", &["Yes", "No"]))
        .await;
    tg_fake.wait_held(1).await;
    ntfy_fake
        .wait_for("the ask on ntfy while Telegram holds its send", |p| {
            mentions(p, a) == 1
        })
        .await;
    assert_eq!(
        mentions(&tg_fake.calls("sendMessage"), a),
        0,
        "Telegram's send is still held"
    );
    tg_fake.release();
    tg_fake
        .wait_for("sendMessage", |c| mentions(c, a) == 1)
        .await;

    // The close update (handed out ntfy first, by channel name): ntfy holds its update;
    // Telegram's message is edited meanwhile.
    ntfy_fake.hold();
    let dismissed = Outcome::Dismissed {
        by: Responder {
            answerer: "web".into(),
            ..Responder::default()
        },
    };
    hub.store
        .record_outcome(a, &dismissed, Timestamp::now())
        .await
        .unwrap();
    ntfy_fake.wait_held(1).await;
    let edits = tg_fake.wait_for("editMessageText", |c| c.len() == 1).await;
    assert!(
        edits[0]["text"].as_str().unwrap().starts_with("Dismissed."),
        "{edits:#?}"
    );
    assert_eq!(
        ntfy_fake.published().len(),
        1,
        "ntfy's update is still held"
    );
    ntfy_fake.release();
    let published = ntfy_fake
        .wait_for("the close update on ntfy", |p| p.len() == 2)
        .await;
    assert!(
        published[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("Dismissed."),
        "{published:#?}"
    );
}
