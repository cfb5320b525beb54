//! The Telegram channel against a FAKE Bot API (`fake_telegram`, documented behaviour listed
//! there): the dispatcher sends, the fake delivers taps as `callback_query` updates to the
//! channel's long poll, and the outcome lands in the store.

use std::sync::Arc;

use ask_user_channels::telegram::{Telegram, TelegramConfig};
use ask_user_channels::{Channel, ChannelError};
use ask_user_store::{AskId, Outcome, Responder};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fake_telegram::{BOT_TOKEN, FakeTelegram};
use super::support::{Hub, single_select};

const CHAT: i64 = 4242;
const USER: i64 = 4242;

fn config(fake: &FakeTelegram, token: &str) -> TelegramConfig {
    TelegramConfig {
        api_base: fake.url.clone(),
        bot_token: token.to_owned(),
        chats: vec![CHAT],
        allowed_users: vec![USER],
        poll_timeout_secs: 1,
    }
}

async fn setup() -> (FakeTelegram, Hub) {
    let fake = FakeTelegram::start().await;
    let tg = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let hub = Hub::start(vec![tg.clone() as Arc<dyn Channel>]).await;
    tokio::spawn(tg.poll(hub.tokens.clone()));
    (fake, hub)
}

fn sent_for(fake_calls: &[Value], ask: AskId) -> Option<Value> {
    let page = format!("/inbox#ask-{ask}\"");
    fake_calls
        .iter()
        .find(|b| b.to_string().contains(&page))
        .cloned()
}

fn data_of(msg: &Value, label: &str) -> String {
    msg["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .find(|b| b["text"] == label)
        .unwrap()["callback_data"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_tap_answers_a_stranger_cannot_and_the_message_is_edited_on_close() {
    let (fake, hub) = setup().await;
    let ask = hub
        .ask(
            "tg",
            &single_select("Merge the PR?", "Merge", &["Yes", "No"]),
        )
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    let (yes, no) = (data_of(&msg, "Yes"), data_of(&msg, "No"));
    assert!(
        yes.starts_with(&format!("{ask}:")) && yes.len() <= 64,
        "{yes}"
    );
    assert_eq!(
        msg,
        json!({
            "chat_id": CHAT,
            "text": "claude-code \u{b7} ~/src/app asks: Merge\n\nMerge the PR?\n1. Yes\n2. No",
            "reply_markup": {"inline_keyboard": [
                [{"text": "Yes", "callback_data": yes}],
                [{"text": "No", "callback_data": no}],
                [{"text": "Open", "url": format!("{}/inbox#ask-{ask}", hub.url)}],
            ]},
        })
    );

    // A chat that is not allow-listed, and an allow-listed chat with a stranger in it.
    assert_eq!(
        fake.tap_and_read(999, 999, 1, &yes).await,
        "You may not answer this question."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, 777, 1, &yes).await,
        "You may not answer this question."
    );
    assert!(hub.store.get(ask).await.unwrap().is_open());

    assert_eq!(
        fake.tap_and_read(CHAT, USER, 1, &yes).await,
        "Answer recorded: \u{201c}Yes\u{201d}."
    );
    assert_eq!(
        hub.store.get(ask).await.unwrap().closed.unwrap().outcome,
        Outcome::Answered {
            answer: json!({"answers": [{"id": "q1", "selected": ["Yes"]}]}),
            by: Responder {
                answerer: "channel".into(),
                channel: Some("telegram".into()),
                user: Some(USER.to_string())
            },
        }
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, 1, &yes).await,
        "This answer link was already used."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, 1, &no).await,
        "This question was already answered (\u{201c}Yes\u{201d}, via telegram)."
    );
    // Another ask's id with this token, and garbage.
    let other = format!("99:{}", yes.split_once(':').unwrap().1);
    assert_eq!(
        fake.tap_and_read(CHAT, USER, 1, &other).await,
        "This answer link belongs to another question."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, 1, "nonsense").await,
        "This answer link is not valid. Open the question on the page to answer it."
    );

    let edits = fake.wait_for("editMessageText", |c| !c.is_empty()).await;
    assert_eq!(
        edits[0],
        json!({
            "chat_id": CHAT,
            "message_id": 1,
            "text": "Answered: \u{201c}Yes\u{201d} (via telegram).\n\nclaude-code \u{b7} ~/src/app asks: Merge\n\nMerge the PR?\n1. Yes\n2. No",
        })
    );
}

#[tokio::test]
async fn hostile_text_is_plain_and_long_text_fits_the_limit() {
    let (fake, hub) = setup().await;
    let question = format!(
        "*bold* _it_ [Approve](tg://evil) <b>x</b> `code` {}",
        "y".repeat(5000)
    );
    let ask = hub
        .ask(
            "hostile",
            &single_select(&question, "H", &["[Yes](https://evil)", "<i>No</i>"]),
        )
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    assert_eq!(msg.get("parse_mode"), None);
    let text = msg["text"].as_str().unwrap();
    assert_eq!(text.chars().count(), 4096);
    assert!(text.starts_with("claude-code \u{b7} ~/src/app asks: H\n\n*bold* _it_ [Approve](tg://evil) <b>x</b> `code` yyy"), "{text}");
    assert!(text.ends_with("y\u{2026}"));
    assert_eq!(
        msg["reply_markup"]["inline_keyboard"][0][0]["text"],
        "[Yes](https://evil)"
    );
}

#[tokio::test]
async fn a_wrong_bot_token_is_an_error_that_does_not_show_it() {
    let fake = FakeTelegram::start().await;
    let tg = Telegram::new(config(&fake, "999:wrong-secret"));
    assert!(!format!("{tg:?}").contains("wrong-secret"));
    let notice = ask_user_channels::Notice {
        ask: AskId(1),
        asker: ask_user_store::Asker::default(),
        questions: serde_json::from_value(
            json!([{"id": "q", "question": "x", "multi_select": false}]),
        )
        .unwrap(),
        page_url: "https://hub.example/inbox".into(),
        public_url: "https://hub.example".into(),
        choices: Vec::new(),
    };
    let err = tg.notify(&notice).await.unwrap_err();
    assert!(matches!(err, ChannelError::Refused { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "telegram: the server refused the message: HTTP 401: sendMessage: Unauthorized"
    );
}

#[tokio::test]
async fn a_reply_is_the_own_answer_for_one_question() {
    let (fake, hub) = setup().await;
    let free = serde_json::json!({"questions": [{"id": "name", "question": "What should the branch be called?", "multi_select": false}]}).to_string();
    let ask = hub.ask("reply", &free).await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    assert_eq!(
        msg["reply_markup"]["inline_keyboard"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "Open only"
    );
    let message_id = fake.message_id_of(&msg);

    // A stranger's reply is ignored (no answer, no word back).
    let stranger = fake.reply(999, 999, message_id, "hijack");
    assert_eq!(
        fake.reply_and_read(CHAT, USER, message_id, "  feature/ada  ")
            .await,
        "Answer recorded: \u{201c}feature/ada\u{201d}."
    );
    assert!(
        !fake
            .calls("sendMessage")
            .iter()
            .any(|b| b["reply_parameters"]["message_id"] == stranger)
    );
    assert_eq!(
        hub.store.get(ask).await.unwrap().closed.unwrap().outcome,
        Outcome::Answered {
            answer: json!({"answers": [{"id": "name", "selected": [], "custom": "feature/ada"}]}),
            by: Responder {
                answerer: "channel".into(),
                channel: Some("telegram".into()),
                user: Some(USER.to_string())
            },
        }
    );
    let edits = fake.wait_for("editMessageText", |c| !c.is_empty()).await;
    assert!(
        edits[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Answered: \u{201c}feature/ada\u{201d} (via telegram).\n\n"),
        "{edits:#?}"
    );

    // Several questions: the reply points to the page, the ask stays open.
    let two = serde_json::json!({"questions": [
        {"id": "a", "question": "One?", "multi_select": false},
        {"id": "b", "question": "Two?", "multi_select": false},
    ]})
    .to_string();
    let two = hub.ask("two", &two).await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, two).is_some())
        .await;
    let m2 = sent_for(&sent, two).unwrap();
    let id2 = fake.message_id_of(&m2);
    assert_eq!(
        fake.reply_and_read(CHAT, USER, id2, "yes").await,
        "This question has several parts: answer it on the page (the Open button)."
    );
    assert!(hub.store.get(two).await.unwrap().is_open());
}
