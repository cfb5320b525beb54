//! The Slack channel against a FAKE Slack (`fake_slack`, documented behaviour listed there):
//! the dispatcher posts, the fake sends signed clicks to the interactivity endpoint, and the
//! outcome lands in the store.

use std::sync::Arc;

use ask_user_channels::slack::{
    Slack, SlackConfig, SlackConfigError, escape_mrkdwn, interactivity_router, signature,
};
use ask_user_channels::{AnswerState, Channel};
use ask_user_store::{AskId, Outcome, Responder};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fake_slack::{BOT_TOKEN, FakeSlack, SIGNING_SECRET, Signing};
use super::support::{Hub, serve, single_select};

const USER: &str = "U0ALLOWED";

struct Setup {
    fake: FakeSlack,
    hub: Hub,
    endpoint: String,
}

async fn setup() -> Setup {
    let fake = FakeSlack::start().await;
    let slack = Arc::new(
        Slack::new(SlackConfig {
            api_base: format!("{}/api", fake.url),
            bot_token: BOT_TOKEN.into(),
            signing_secret: SIGNING_SECRET.into(),
            channel: "C1".into(),
            allowed_users: vec![USER.into()],
        })
        .unwrap(),
    );
    let hub = Hub::start(vec![slack.clone() as Arc<dyn Channel>]).await;
    let addr = serve(interactivity_router(
        AnswerState {
            tokens: hub.tokens.clone(),
        },
        slack,
    ))
    .await;
    Setup {
        fake,
        hub,
        endpoint: format!("http://{addr}/channels/slack/interactivity"),
    }
}

fn posted_for(calls: &[Value], ask: AskId) -> Option<Value> {
    calls
        .iter()
        .find(|b| b.to_string().contains(&format!("/inbox#ask-{ask}\"")))
        .cloned()
}

fn value_of(msg: &Value, label: &str) -> String {
    msg["blocks"][1]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"]["text"] == label)
        .unwrap()["value"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_signed_click_answers_and_the_message_is_updated() {
    let s = setup().await;
    let ask = s
        .hub
        .ask(
            "sl",
            &single_select("Roll back?", "Incident", &["Yes", "No"]),
        )
        .await;
    let calls = s
        .fake
        .wait_for("chat.postMessage", |c| posted_for(c, ask).is_some())
        .await;
    let msg = posted_for(&calls, ask).unwrap();
    let (yes, no) = (value_of(&msg, "Yes"), value_of(&msg, "No"));
    let page = format!("{}/inbox#ask-{ask}", s.hub.url);
    let button = |id: &str, label: &str, value: &str| json!({"type": "button", "action_id": id, "text": {"type": "plain_text", "text": label, "emoji": false}, "value": value});
    assert_eq!(
        msg,
        json!({
            "channel": "C1",
            "text": "claude-code \u{b7} ~/src/app asks: Incident",
            "blocks": [
                {"type": "section", "text": {"type": "plain_text", "text": "claude-code \u{b7} ~/src/app asks: Incident\n\nRoll back?\n1. Yes\n2. No", "emoji": false}},
                {"type": "actions", "block_id": "ask-user", "elements": [
                    button("answer-0", "Yes", &yes),
                    button("answer-1", "No", &no),
                    {"type": "button", "action_id": "open", "text": {"type": "plain_text", "text": "Open", "emoji": false}, "url": page},
                ]},
            ],
        })
    );
    let ts = "1700000000.000001";
    // A user not on the allow-list.
    let (st, _, reply) = s
        .fake
        .click(&s.endpoint, "U0STRANGER", &yes, ts, Signing::Good)
        .await;
    assert_eq!(
        (st, reply.as_deref()),
        (200, Some("You may not answer this question."))
    );
    assert!(s.hub.store.get(ask).await.unwrap().is_open());

    let (st, body, reply) = s
        .fake
        .click(&s.endpoint, USER, &yes, ts, Signing::Good)
        .await;
    assert_eq!(
        (st, body.as_str(), reply.as_deref()),
        (200, "", Some("Answer recorded: \u{201c}Yes\u{201d}."))
    );
    assert_eq!(
        s.hub.store.get(ask).await.unwrap().closed.unwrap().outcome,
        Outcome::Answered {
            answer: json!({"answers": [{"id": "q1", "selected": ["Yes"]}]}),
            by: Responder {
                answerer: "channel".into(),
                channel: Some("slack".into()),
                user: Some(USER.into())
            },
        }
    );
    let (_, _, reply) = s
        .fake
        .click(&s.endpoint, USER, &yes, ts, Signing::Good)
        .await;
    assert_eq!(reply.as_deref(), Some("This answer link was already used."));
    let (_, _, reply) = s
        .fake
        .click(&s.endpoint, USER, &no, ts, Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("This question was already answered (\u{201c}Yes\u{201d}, via slack).")
    );

    let updates = s.fake.wait_for("chat.update", |c| !c.is_empty()).await;
    assert_eq!(
        updates[0],
        json!({
            "channel": "C1", "ts": ts,
            "text": "Answered: \u{201c}Yes\u{201d} (via slack).",
            "blocks": [{"type": "section", "text": {"type": "plain_text", "text": "Answered: \u{201c}Yes\u{201d} (via slack).\n\nclaude-code \u{b7} ~/src/app asks: Incident\n\nRoll back?\n1. Yes\n2. No", "emoji": false}}],
        })
    );
}

#[tokio::test]
async fn a_bad_stale_or_missing_signature_is_refused_and_answers_nothing() {
    let s = setup().await;
    let ask = s
        .hub
        .ask("sig", &single_select("Go?", "Go", &["Yes", "No"]))
        .await;
    let calls = s
        .fake
        .wait_for("chat.postMessage", |c| posted_for(c, ask).is_some())
        .await;
    let yes = value_of(&posted_for(&calls, ask).unwrap(), "Yes");
    for signing in [Signing::WrongSecret, Signing::Stale, Signing::Missing] {
        let (st, body, _) = s
            .fake
            .click(&s.endpoint, USER, &yes, "1700000000.000001", signing)
            .await;
        assert_eq!(
            (st, body.as_str()),
            (401, "Slack request signature refused.")
        );
    }
    assert!(s.hub.store.get(ask).await.unwrap().is_open());
    // The token was not spent by the refused requests.
    let (_, _, reply) = s
        .fake
        .click(&s.endpoint, USER, &yes, "1700000000.000001", Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Answer recorded: \u{201c}Yes\u{201d}.")
    );
}

#[tokio::test]
async fn hostile_text_can_neither_ping_nor_link() {
    let s = setup().await;
    let hostile = "<!channel> <https://evil.example|Approve> & *bold* <@U0ALLOWED>";
    let ask = s
        .hub
        .ask(
            "hostile",
            &single_select(hostile, "<!here>", &["<!everyone>", "No"]),
        )
        .await;
    let calls = s
        .fake
        .wait_for("chat.postMessage", |c| posted_for(c, ask).is_some())
        .await;
    let msg = posted_for(&calls, ask).unwrap();
    assert_eq!(
        msg["text"],
        "claude-code \u{b7} ~/src/app asks: &lt;!here&gt;"
    );
    assert_eq!(msg["blocks"][0]["text"]["type"], "plain_text");
    assert!(
        msg["blocks"][0]["text"]["text"]
            .as_str()
            .unwrap()
            .contains(hostile)
    );
    assert_eq!(
        msg["blocks"][1]["elements"][0]["text"],
        json!({"type": "plain_text", "text": "<!everyone>", "emoji": false})
    );
    // The ephemeral reply is mrkdwn: a label in it is escaped.
    let v = value_of(&msg, "<!everyone>");
    let (_, _, reply) = s
        .fake
        .click(&s.endpoint, USER, &v, "1700000000.000001", Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Answer recorded: \u{201c}&lt;!everyone&gt;\u{201d}.")
    );
    assert_eq!(escape_mrkdwn("a & <b> > c"), "a &amp; &lt;b&gt; &gt; c");
}

#[test]
fn signature_is_slacks_v0_hmac_and_config_needs_an_allow_list() {
    // Cross-checked against Python's hmac module on fixed input.
    let sig = signature(SIGNING_SECRET, "1531420618", b"token=x&payload=%7B%7D");
    let python =
        super::fake_slack::hmac_hex(SIGNING_SECRET, "v0:1531420618:token=x&payload=%7B%7D");
    assert_eq!(sig, format!("v0={python}"));
    assert_eq!(sig.len(), 67);
    let err = Slack::new(SlackConfig {
        api_base: "https://slack.com/api".into(),
        bot_token: "xoxb-secret".into(),
        signing_secret: "s3cret".into(),
        channel: "C1".into(),
        allowed_users: Vec::new(),
    })
    .unwrap_err();
    assert_eq!(err, SlackConfigError::NoAllowedUsers);
    assert_eq!(
        err.to_string(),
        "slack: list the user ids allowed to answer (allowed_users is empty)"
    );
}
