//! The same answer again through a channel (docs/contract.md §8): a question answered before
//! (its answer delivered) is sent anew, with that answer whole in the message and one button
//! that sends it as this ask's answer. The ntfy server is a FAKE (`fake_ntfy`); the tap is a
//! real HTTP request, as the ntfy app sends it.

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use ask_user_channels::ntfy::{Ntfy, NtfyConfig};
use ask_user_channels::telegram::Telegram;
use ask_user_channels::{Channel, Notice, OfferedAgain, OfferedChoice};
use ask_user_core::{AnswerItem, Answers, GivenBefore};
use ask_user_store::{AskId, Asker, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Hub, single_select};
use ask_user_test_support::fakes::ntfy::FakeNtfy;

const TOKEN: &str = "tk_secretsecretsecretsecret123";

fn ntfy(server: &str) -> Ntfy {
    Ntfy::new(NtfyConfig {
        server: server.to_owned(),
        topic: "asks".to_owned(),
        access_token: Some(TOKEN.into()),
        allow_public_topic: false,
    })
    .unwrap()
}

fn message_of(published: &[Value], ask: AskId) -> Option<Value> {
    published
        .iter()
        .find(|m| m["sequence_id"] == json!(format!("ask-user-{ask}")))
        .cloned()
}

fn http_action(msg: &Value, label: &str) -> Option<String> {
    msg["actions"]
        .as_array()?
        .iter()
        .find(|a| a["action"] == "http" && a["label"] == label)
        .and_then(|a| a["url"].as_str())
        .map(str::to_owned)
}

async fn tap(url: &str) -> (u16, String) {
    let r = reqwest::Client::new().post(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn a_question_answered_before_is_sent_anew_and_only_the_tap_sends_that_answer_again() {
    let fake = FakeNtfy::start(Some(TOKEN)).await;
    let hub = Hub::start(vec![Arc::new(ntfy(&fake.url)) as Arc<dyn Channel>]).await;
    let request = single_select("Deploy now?", "Deploy", &["Yes", "No"]);

    // First ask: answered on the phone, but not yet delivered to its agent: no offer then.
    let first = hub.ask("first", &request).await;
    let got = fake
        .wait_for("the first", |p| message_of(p, first).is_some())
        .await;
    let yes = http_action(&message_of(&got, first).unwrap(), "Yes").unwrap();
    assert_eq!(tap(&yes).await.0, 200);
    let undelivered = hub.ask("second", &request).await;
    let got = fake
        .wait_for("the second", |p| message_of(p, undelivered).is_some())
        .await;
    let msg = message_of(&got, undelivered).unwrap();
    assert_eq!(http_action(&msg, "Same answer again"), None, "{msg:#}");

    // Delivered: the next identical question offers it, whole in the message.
    let closed = hub.store.get(first).await.unwrap().closed.unwrap();
    hub.store
        .mark_delivered(first, &closed.outcome, Timestamp::now())
        .await
        .unwrap();
    let third = hub.ask("third", &request).await;
    let got = fake
        .wait_for("the third", |p| message_of(p, third).is_some())
        .await;
    let msg = message_of(&got, third).unwrap();
    let text = msg["message"].as_str().unwrap();
    assert!(
        text.starts_with("Deploy now?\n1. Yes\n2. No\n\nYou answered this before (")
            && text.ends_with(
                " UTC); \u{201c}Same answer again\u{201d} sends it again:\n\u{201c}Yes\u{201d}"
            ),
        "{text}"
    );
    let again = http_action(&msg, "Same answer again").expect("the offer");
    assert!(
        hub.store.get(third).await.unwrap().closed.is_none(),
        "nothing sent for the human"
    );
    assert_eq!(
        tap(&again).await,
        (200, "Answer recorded: \u{201c}Yes\u{201d}.".to_owned())
    );
    hub.assert_answered(
        third,
        json!({"answers": [{"id": "q1", "selected": ["Yes"]}]}),
        "ntfy",
        None,
    )
    .await;
    // Single use, like every token.
    assert_eq!(tap(&again).await.0, 410);
}

fn notice(question: &str) -> Notice {
    Notice {
        ask: AskId(7),
        asker: Asker::default(),
        questions: serde_json::from_value(
            json!([{"id": "q", "question": question, "options": [{"label": "ok"}], "multi_select": false}]),
        )
        .unwrap(),
        page_url: "http://hub/inbox#ask-7".to_owned(),
        public_url: "http://hub".to_owned(),
        choices: vec![OfferedChoice {
            label: "ok".into(),
            token: "c".repeat(32),
        }],
        done: None,
        own: None,
        again: Some(OfferedAgain {
            given: GivenBefore {
                answers: Answers {
                    answers: vec![AnswerItem::selected("q", ["ok"])],
                },
                given_at: UNIX_EPOCH,
            },
            token: "a".repeat(32),
        }),
    }
}

#[test]
fn a_message_cut_to_fit_offers_no_answer_given_before_and_a_whole_one_does() {
    let channel = ntfy("http://ntfy");
    let whole = channel.open_message(&notice("Ship it?"));
    assert_eq!(
        whole["message"],
        json!(
            "Ship it?\n1. ok\n\nYou answered this before (1970-01-01 00:00 UTC); \u{201c}Same answer again\u{201d} sends it again:\n\u{201c}ok\u{201d}"
        )
    );
    assert!(
        http_action(&whole, "Same answer again").is_some(),
        "{whole:#}"
    );
    let cut = channel.open_message(&notice(&"x".repeat(5000)));
    assert_eq!(http_action(&cut, "Same answer again"), None, "{cut:#}");

    let telegram = Telegram::open_message(&notice("Ship it?"), 1);
    let rows = telegram["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap();
    assert!(
        rows.iter().any(|r| r[0]["text"] == "Same answer again"
            && r[0]["callback_data"] == json!(format!("7:{}", "a".repeat(32)))),
        "{telegram:#}"
    );
    let telegram = Telegram::open_message(&notice(&"x".repeat(5000)), 1);
    let rows = telegram["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap();
    assert!(
        !rows.iter().any(|r| r[0]["text"] == "Same answer again"),
        "{telegram:#}"
    );
}
