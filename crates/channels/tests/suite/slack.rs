//! The Slack channel against a FAKE Slack (`fake_slack`, documented behaviour listed there):
//! the dispatcher posts, the fake sends signed clicks to the interactivity endpoint, and the
//! outcome lands in the store.

use std::sync::Arc;

use ask_user_channels::slack::{
    Slack, SlackConfig, SlackConfigError, escape_mrkdwn, interactivity_router, signature,
};
use ask_user_channels::{AnswerState, Channel};
use ask_user_store::AskId;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Hub, multi_select, serve, single_select};
use ask_user_test_support::fakes::slack::{BOT_TOKEN, FakeSlack, SIGNING_SECRET, Signing};

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
                own_input(&own_block(&msg)),
            ],
        })
    );
    assert!(own_block(&msg).starts_with(&format!("own:{ask}:")));
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
    s.hub
        .assert_answered(
            ask,
            json!({"answers": [{"id": "q1", "selected": ["Yes"]}]}),
            "slack",
            Some(USER.into()),
        )
        .await;
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
    let python = ask_user_test_support::fakes::slack::hmac_hex(
        SIGNING_SECRET,
        "v0:1531420618:token=x&payload=%7B%7D",
    );
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

/// The `block_id` of the own-answer input of `msg`.
fn own_block(msg: &Value) -> String {
    msg["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "input")
        .unwrap()["block_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn own_input(block_id: &str) -> Value {
    json!({
        "type": "input",
        "block_id": block_id,
        "dispatch_action": true,
        "label": {"type": "plain_text", "text": "Your own answer (Enter sends it)", "emoji": false},
        "element": {
            "type": "plain_text_input",
            "action_id": "own",
            "max_length": 2000,
            "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
        },
    })
}

/// Every `mrkdwn` text of `v` (and the top-level fallback `text`) has no raw `<` or `>`: no
/// mention, link or command can be written in it.
fn assert_mrkdwn_escaped(v: &Value) {
    match v {
        Value::Object(m) => {
            if m.get("type") == Some(&json!("mrkdwn")) {
                let t = m["text"].as_str().unwrap();
                assert!(!t.contains(['<', '>']), "{t}");
            }
            m.values().for_each(assert_mrkdwn_escaped);
        }
        Value::Array(a) => a.iter().for_each(assert_mrkdwn_escaped),
        _ => {}
    }
}

async fn posted(s: &Setup, ask: AskId) -> (Value, String) {
    let calls = s
        .fake
        .wait_for("chat.postMessage", |c| posted_for(c, ask).is_some())
        .await;
    let msg = posted_for(&calls, ask).unwrap();
    let ts = s
        .fake
        .wait_for("chat.postMessage", |_| true)
        .await
        .iter()
        .position(|m| *m == msg)
        .map(|i| format!("1700000000.{:06}", i + 1))
        .unwrap();
    assert_eq!(s.fake.message(&ts), msg);
    (msg, ts)
}

#[tokio::test]
async fn checkboxes_and_done_answer_the_ticked_set_once() {
    let s = setup().await;
    let request = json!({"questions": [{
        "id": "q1", "question": "Which checks?", "header": "CI", "multi_select": true,
        "options": [{"label": "Lint"}, {"label": "Test", "description": "the slow one"}, {"label": "Deploy"}],
    }]})
    .to_string();
    let ask = s.hub.ask("multi", &request).await;
    let (msg, ts) = posted(&s, ask).await;
    let plain = |t: &str| json!({"type": "plain_text", "text": t, "emoji": false});
    assert_eq!(
        msg["blocks"][1],
        json!({"type": "actions", "block_id": "ask-user-choices", "elements": [{
            "type": "checkboxes", "action_id": "choose", "options": [
                {"text": plain("Lint"), "value": "0"},
                {"text": plain("Test"), "value": "1", "description": plain("the slow one")},
                {"text": plain("Deploy"), "value": "2"},
            ],
        }]})
    );
    let done = msg["blocks"][2]["elements"][0].clone();
    assert_eq!(done["action_id"], "done");
    assert_eq!(done["style"], "primary");
    assert_eq!(done["text"], plain("Done"));
    assert!(
        done["value"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{ask}:"))
    );
    assert_eq!(msg["blocks"][2]["elements"][1]["action_id"], "open");
    assert_eq!(msg["blocks"][3], own_input(&own_block(&msg)));

    // Ticking a box is only acknowledged: nothing is answered.
    assert_eq!(
        s.fake.tick(&s.endpoint, USER, (&msg, &ts), 1).await,
        (200, String::new())
    );
    assert!(s.hub.store.get(ask).await.unwrap().is_open());
    // A user not on the allow-list; Done with no box ticked (the token stays usable).
    let (st, _, reply) = s
        .fake
        .press_done(&s.endpoint, "U0STRANGER", (&msg, &ts), &[0], Signing::Good)
        .await;
    assert_eq!(
        (st, reply.as_deref()),
        (200, Some("You may not answer this question."))
    );
    let (_, _, reply) = s
        .fake
        .press_done(&s.endpoint, USER, (&msg, &ts), &[], Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Choose at least one option first, then Done.")
    );
    // A bad signature changes nothing.
    let (st, body, _) = s
        .fake
        .press_done(&s.endpoint, USER, (&msg, &ts), &[1], Signing::WrongSecret)
        .await;
    assert_eq!(
        (st, body.as_str()),
        (401, "Slack request signature refused.")
    );
    assert!(s.hub.store.get(ask).await.unwrap().is_open());

    let (_, _, reply) = s
        .fake
        .press_done(&s.endpoint, USER, (&msg, &ts), &[2, 0], Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Answer recorded: \u{201c}Lint\u{201d}, \u{201c}Deploy\u{201d}.")
    );
    s.hub
        .assert_answered(
            ask,
            json!({"answers": [{"id": "q1", "selected": ["Lint", "Deploy"]}]}),
            "slack",
            Some(USER.into()),
        )
        .await;
    // Replayed Done, and the own answer after the close.
    let (_, _, reply) = s
        .fake
        .press_done(&s.endpoint, USER, (&msg, &ts), &[1], Signing::Good)
        .await;
    assert_eq!(reply.as_deref(), Some("This answer link was already used."));
    let (_, _, reply) = s
        .fake
        .type_own(&s.endpoint, USER, (&msg, &ts), "late", Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some(
            "This question was already answered (\u{201c}Lint\u{201d}, \u{201c}Deploy\u{201d}, via slack)."
        )
    );
    let updates = s.fake.wait_for("chat.update", |c| !c.is_empty()).await;
    assert_eq!(
        updates[0]["blocks"].as_array().unwrap().len(),
        1,
        "no checkboxes, buttons or input once closed"
    );
}

#[tokio::test]
async fn an_own_answer_typed_in_the_input_answers_once() {
    let s = setup().await;
    let ask = s
        .hub
        .ask("own", &single_select("Branch name?", "B", &["main", "dev"]))
        .await;
    let (msg, ts) = posted(&s, ask).await;
    assert_eq!(msg["blocks"][2], own_input(&own_block(&msg)));

    let (_, _, reply) = s
        .fake
        .type_own(
            &s.endpoint,
            "U0STRANGER",
            (&msg, &ts),
            "hijack",
            Signing::Good,
        )
        .await;
    assert_eq!(reply.as_deref(), Some("You may not answer this question."));
    let (_, _, reply) = s
        .fake
        .type_own(&s.endpoint, USER, (&msg, &ts), "   ", Signing::Good)
        .await;
    assert_eq!(reply.as_deref(), Some("Type an answer first."));
    let (st, _, _) = s
        .fake
        .type_own(&s.endpoint, USER, (&msg, &ts), "forged", Signing::Stale)
        .await;
    assert_eq!(st, 401);
    assert!(s.hub.store.get(ask).await.unwrap().is_open());

    let (_, _, reply) = s
        .fake
        .type_own(
            &s.endpoint,
            USER,
            (&msg, &ts),
            "  release/2.0 ",
            Signing::Good,
        )
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Answer recorded: \u{201c}release/2.0\u{201d}.")
    );
    s.hub
        .assert_answered(
            ask,
            json!({"answers": [{"id": "q1", "selected": [], "custom": "release/2.0"}]}),
            "slack",
            Some(USER.into()),
        )
        .await;
    let (_, _, reply) = s
        .fake
        .type_own(&s.endpoint, USER, (&msg, &ts), "again", Signing::Good)
        .await;
    assert_eq!(reply.as_deref(), Some("This answer link was already used."));
    // The input's token answers nothing as a button, and a button's nothing as an input.
    let carrier = own_block(&msg).strip_prefix("own:").unwrap().to_owned();
    let (_, _, reply) = s
        .fake
        .click(&s.endpoint, USER, &carrier, &ts, Signing::Good)
        .await;
    assert_eq!(reply.as_deref(), Some("This answer link was already used."));
}

#[tokio::test]
async fn a_token_of_one_kind_answers_nothing_as_another() {
    let s = setup().await;
    let ask = s
        .hub
        .ask("kinds", &single_select("Go?", "Go", &["Yes", "No"]))
        .await;
    let (msg, ts) = posted(&s, ask).await;
    // The own-answer token sent as a button's value: refused, and still usable.
    let carrier = own_block(&msg).strip_prefix("own:").unwrap().to_owned();
    let (_, _, reply) = s
        .fake
        .click(&s.endpoint, USER, &carrier, &ts, Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("This answer link is not valid. Open the question on the page to answer it.")
    );
    let (_, _, reply) = s
        .fake
        .type_own(&s.endpoint, USER, (&msg, &ts), "maybe", Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Answer recorded: \u{201c}maybe\u{201d}.")
    );
}

#[tokio::test]
async fn hostile_text_in_checkboxes_and_own_answers_can_neither_ping_nor_link() {
    let s = setup().await;
    let request = json!({"questions": [{
        "id": "q1", "question": "<!channel> pick", "header": "<!here>", "multi_select": true,
        "options": [
            {"label": "<!channel>", "description": "<https://evil.example|Approve> & co"},
            {"label": "a & <b>"},
        ],
    }]})
    .to_string();
    let ask = s.hub.ask("hostile-multi", &request).await;
    let (msg, ts) = posted(&s, ask).await;
    assert_mrkdwn_escaped(&msg);
    assert_eq!(
        msg["text"],
        "claude-code \u{b7} ~/src/app asks: &lt;!here&gt;"
    );
    let options = &msg["blocks"][1]["elements"][0]["options"];
    assert_eq!(
        options[0]["text"],
        json!({"type": "plain_text", "text": "<!channel>", "emoji": false})
    );
    assert_eq!(
        options[0]["description"],
        json!({"type": "plain_text", "text": "<https://evil.example|Approve> & co", "emoji": false})
    );
    assert_eq!(options[1]["text"]["type"], "plain_text");
    // The replies are mrkdwn: chosen labels and typed text in them are escaped.
    let (_, _, reply) = s
        .fake
        .press_done(&s.endpoint, USER, (&msg, &ts), &[0, 1], Signing::Good)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some(
            "Answer recorded: \u{201c}&lt;!channel&gt;\u{201d}, \u{201c}a &amp; &lt;b&gt;\u{201d}."
        )
    );
    let ask = s
        .hub
        .ask("hostile-own", &single_select("Name?", "N", &["x"]))
        .await;
    let (msg, ts) = posted(&s, ask).await;
    let (_, _, reply) = s
        .fake
        .type_own(
            &s.endpoint,
            USER,
            (&msg, &ts),
            "<!everyone> & <@U1>",
            Signing::Good,
        )
        .await;
    assert_eq!(
        reply.as_deref(),
        Some("Answer recorded: \u{201c}&lt;!everyone&gt; &amp; &lt;@U1&gt;\u{201d}.")
    );
}

#[tokio::test]
async fn a_multi_select_with_more_than_ten_options_is_answered_on_the_page() {
    let s = setup().await;
    let labels: Vec<String> = (1..=11).map(|i| format!("o{i}")).collect();
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let ask = s
        .hub
        .ask("eleven", &multi_select("Which?", "W", &labels))
        .await;
    let (msg, _) = posted(&s, ask).await;
    let blocks = msg["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 3, "{msg:#}");
    assert_eq!(
        blocks[1]["elements"],
        json!([{"type": "button", "action_id": "open", "text": {"type": "plain_text", "text": "Open", "emoji": false}, "url": format!("{}/inbox#ask-{ask}", s.hub.url)}])
    );
    assert_eq!(blocks[2]["type"], "input");
}

#[tokio::test]
async fn bidi_and_invisibles_are_shown_inert_and_scripts_whole() {
    let s = setup().await;
    let question = "Pay \u{202e}0001$\u{202c} to Bob?\n\n\n\n\nന്\u{200d} 🏃\u{200d}♀\u{fe0f}";
    let ask = s
        .hub
        .ask(
            "bidi",
            &single_select(question, "H\u{2067}", &["Yes\u{200b}", "No\u{2800}"]),
        )
        .await;
    let calls = s
        .fake
        .wait_for("chat.postMessage", |c| posted_for(c, ask).is_some())
        .await;
    let msg = posted_for(&calls, ask).unwrap();
    assert_eq!(msg["text"], "claude-code \u{b7} ~/src/app asks: H\\u{2067}");
    let body = msg["blocks"][0]["text"]["text"].as_str().unwrap();
    assert!(
        body.contains("Pay \\u{202e}0001$\\u{202c} to Bob?\n\nന്\u{200d} 🏃\u{200d}♀\u{fe0f}"),
        "{body}"
    );
    assert_eq!(
        msg["blocks"][1]["elements"][0]["text"],
        json!({"type": "plain_text", "text": "Yes\u{27e8}1 blank character\u{27e9}", "emoji": false})
    );
    assert_eq!(
        msg["blocks"][1]["elements"][1]["text"]["text"],
        "No\u{27e8}1 blank character\u{27e9}"
    );
}
