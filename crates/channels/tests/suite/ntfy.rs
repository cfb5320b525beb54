//! The ntfy channel end to end: the dispatcher publishes to a FAKE ntfy server
//! (`fake_ntfy`, documented behaviour listed there), the test taps an `http` action the way
//! the ntfy app does (it sends the action's request itself: an empty POST to its URL) with a
//! real HTTP client, and the outcome lands in the store.

use std::sync::Arc;

use ask_user_channels::ntfy::{Ntfy, NtfyConfig, NtfyConfigError};
use ask_user_channels::{Channel, ChannelError, Notice, OfferedChoice};
use ask_user_store::{AskId, Asker, Outcome, Recorded, Responder, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Hub, single_select};
use ask_user_test_support::fakes::ntfy::FakeNtfy;

const TOKEN: &str = "tk_secretsecretsecretsecret123";

fn config(server: &str, token: Option<&str>) -> NtfyConfig {
    NtfyConfig {
        server: server.to_owned(),
        topic: "asks".to_owned(),
        access_token: token.map(Into::into),
        allow_public_topic: false,
    }
}

async fn setup() -> (FakeNtfy, Hub) {
    let fake = FakeNtfy::start(Some(TOKEN)).await;
    let ntfy = Ntfy::new(config(&fake.url, Some(TOKEN))).unwrap();
    let hub = Hub::start(vec![Arc::new(ntfy) as Arc<dyn Channel>]).await;
    (fake, hub)
}

fn seq(ask: AskId) -> Value {
    json!(format!("ask-user-{ask}"))
}

/// The publishes for `ask`'s notification, in order.
fn for_ask(published: &[Value], ask: AskId) -> Vec<Value> {
    published
        .iter()
        .filter(|m| m["sequence_id"] == seq(ask))
        .cloned()
        .collect()
}

fn action_url(msg: &Value, label: &str) -> String {
    msg["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "http" && a["label"] == label)
        .unwrap_or_else(|| panic!("no http action {label:?} in {msg:#}"))["url"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// What the phone does when a button is tapped: the action's request, empty body.
async fn tap(url: &str) -> (u16, String) {
    let r = reqwest::Client::new().post(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn answer_by_button_records_who_and_updates_the_message() {
    let (fake, hub) = setup().await;
    let ask = hub
        .ask(
            "k1",
            &single_select("Deploy now?", "Deploy", &["Yes (Recommended)", "No"]),
        )
        .await;
    let got = fake
        .wait_for("the notification", |p| !for_ask(p, ask).is_empty())
        .await;
    let msg = &for_ask(&got, ask)[0];
    let page = format!("{}/inbox#ask-{ask}", hub.url);
    let yes = action_url(msg, "Yes (Recommended)");
    let no = action_url(msg, "No");
    assert!(
        yes.starts_with(&format!("{}/channels/{ask}/ntfy/", hub.url)),
        "{yes}"
    );
    assert_eq!(
        msg,
        &json!({
            "topic": "asks",
            "sequence_id": seq(ask),
            "title": "claude-code \u{b7} ~/src/app asks: Deploy",
            "message": "Deploy now?\n1. Yes (Recommended)\n2. No",
            "click": page,
            "actions": [
                {"action": "http", "label": "Yes (Recommended)", "url": yes, "method": "POST", "clear": true},
                {"action": "http", "label": "No", "url": no, "method": "POST", "clear": true},
                {"action": "view", "label": "Open", "url": page},
            ],
        })
    );

    assert_eq!(
        tap(&yes).await,
        (
            200,
            "Answer recorded: \u{201c}Yes (Recommended)\u{201d}.".to_owned()
        )
    );
    let rec = hub.store.get(ask).await.unwrap();
    assert_eq!(
        rec.closed.unwrap().outcome,
        Outcome::Answered {
            answer: json!({"answers": [{"id": "q1", "selected": ["Yes (Recommended)"]}]}),
            by: Responder {
                answerer: "channel".into(),
                channel: Some("ntfy".into()),
                user: None,
                submission: None,
            },
        }
    );

    // The message is replaced: no buttons, the outcome first.
    let got = fake
        .wait_for("the close update", |p| for_ask(p, ask).len() == 2)
        .await;
    assert_eq!(
        for_ask(&got, ask)[1],
        json!({
            "topic": "asks",
            "sequence_id": seq(ask),
            "title": "claude-code \u{b7} ~/src/app asks: Deploy",
            "message": "Answered: \u{201c}Yes (Recommended)\u{201d} (via ntfy).\n\nDeploy now?\n1. Yes (Recommended)\n2. No",
            "click": page,
        })
    );

    // Replayed, and the other button once answered.
    assert_eq!(
        tap(&yes).await,
        (410, "This answer link was already used.".to_owned())
    );
    assert_eq!(
        tap(&no).await,
        (
            409,
            "This question was already answered (\u{201c}Yes (Recommended)\u{201d}, via ntfy)."
                .to_owned()
        )
    );
    assert_eq!(
        hub.store
            .get(ask)
            .await
            .unwrap()
            .closed
            .unwrap()
            .outcome
            .state_name(),
        "answered"
    );
}

#[tokio::test]
async fn a_token_cannot_answer_another_ask_and_stays_usable_for_its_own() {
    let (fake, hub) = setup().await;
    let a = hub
        .ask("ka", &single_select("A?", "A", &["Yes", "No"]))
        .await;
    let b = hub
        .ask("kb", &single_select("B?", "B", &["Yes", "No"]))
        .await;
    let got = fake
        .wait_for("both notifications", |p| {
            !for_ask(p, a).is_empty() && !for_ask(p, b).is_empty()
        })
        .await;
    let a_yes = action_url(&for_ask(&got, a)[0], "Yes");
    let token = a_yes.rsplit('/').next().unwrap();
    let on_b = format!("{}/channels/{b}/ntfy/{token}", hub.url);
    assert_eq!(
        tap(&on_b).await,
        (
            403,
            "This answer link belongs to another question.".to_owned()
        )
    );
    // Another channel's endpoint is another route: none exists for a made-up channel.
    let other_channel = format!("{}/channels/{a}/slack/{token}", hub.url);
    assert_eq!(tap(&other_channel).await.0, 404);
    assert!(hub.store.get(b).await.unwrap().is_open());
    assert!(hub.store.get(a).await.unwrap().is_open());
    assert_eq!(tap(&a_yes).await.0, 200);
    // Unknown tokens and unknown asks say the same.
    let bogus = format!("{}/channels/{b}/ntfy/{}", hub.url, "0".repeat(32));
    let missing = format!("{}/channels/999/ntfy/{token}", hub.url);
    let unknown = "This answer link is not valid. Open the question on the page to answer it.";
    assert_eq!(tap(&bogus).await, (404, unknown.to_owned()));
    assert_eq!(
        tap(&missing).await,
        (
            403,
            "This answer link belongs to another question.".to_owned()
        )
    );
}

#[tokio::test]
async fn a_closed_ask_refuses_its_buttons_and_the_message_says_why() {
    let (fake, hub) = setup().await;
    let cases = [
        (
            Outcome::TimedOut,
            "This question timed out.",
            "Timed out: the agent stopped waiting.",
        ),
        (
            Outcome::Withdrawn,
            "This question was withdrawn by the agent.",
            "Withdrawn by the agent.",
        ),
        (
            Outcome::Dismissed {
                by: Responder {
                    answerer: "web".into(),
                    ..Responder::default()
                },
            },
            "This question was dismissed.",
            "Dismissed.",
        ),
        (
            Outcome::Answered {
                answer: json!({"answers": [{"id": "q1", "selected": [], "custom": "later"}]}),
                by: Responder {
                    answerer: "terminal".into(),
                    ..Responder::default()
                },
            },
            "This question was already answered (\u{201c}later\u{201d}).",
            "Answered: \u{201c}later\u{201d}.",
        ),
    ];
    for (i, (outcome, refusal, first_line)) in cases.into_iter().enumerate() {
        let ask = hub
            .ask(
                &format!("closed{i}"),
                &single_select("Go?", "Go", &["Yes", "No"]),
            )
            .await;
        let got = fake
            .wait_for("the notification", |p| !for_ask(p, ask).is_empty())
            .await;
        let yes = action_url(&for_ask(&got, ask)[0], "Yes");
        assert_eq!(
            hub.store
                .record_outcome(ask, &outcome, Timestamp::now())
                .await
                .unwrap(),
            Recorded::Won
        );
        assert_eq!(tap(&yes).await, (409, refusal.to_owned()));
        let got = fake
            .wait_for("the close update", |p| for_ask(p, ask).len() == 2)
            .await;
        let update = &for_ask(&got, ask)[1];
        assert_eq!(
            update["message"],
            json!(format!("{first_line}\n\nGo?\n1. Yes\n2. No"))
        );
        assert_eq!(update.get("actions"), None);
        assert_eq!(
            hub.store.get(ask).await.unwrap().closed.unwrap().outcome,
            outcome
        );
    }
}

#[tokio::test]
async fn buttons_only_for_one_single_select_and_never_more_than_three_actions() {
    let (fake, hub) = setup().await;
    let three = hub
        .ask("three", &single_select("Pick", "H", &["a", "b", "c"]))
        .await;
    let four = hub
        .ask("four", &single_select("Pick", "H", &["a", "b", "c", "d"]))
        .await;
    let multi = serde_json::json!({"questions": [{"id": "m", "question": "Which?", "options": [{"label": "x"}, {"label": "y"}], "multi_select": true}]}).to_string();
    let multi = hub.ask("multi", &multi).await;
    let two_q = serde_json::json!({"questions": [
        {"id": "a", "question": "One?", "options": [{"label": "x"}], "multi_select": false},
        {"id": "b", "question": "Two?", "multi_select": false},
    ]})
    .to_string();
    let two_q = hub.ask("twoq", &two_q).await;
    let got = fake
        .wait_for("four notifications", |p| {
            [three, four, multi, two_q]
                .iter()
                .all(|a| !for_ask(p, *a).is_empty())
        })
        .await;
    let kinds = |ask: AskId| -> Vec<String> {
        for_ask(&got, ask)[0]["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                format!(
                    "{}:{}",
                    a["action"].as_str().unwrap(),
                    a["label"].as_str().unwrap()
                )
            })
            .collect()
    };
    // Three options fill ntfy's three actions; the page is then the notification's click URL.
    assert_eq!(kinds(three), ["http:a", "http:b", "http:c"]);
    assert_eq!(
        for_ask(&got, three)[0]["click"],
        json!(format!("{}/inbox#ask-{three}", hub.url))
    );
    assert_eq!(kinds(four), ["view:Open"]);
    assert_eq!(kinds(multi), ["view:Open"]);
    assert_eq!(kinds(two_q), ["view:Open"]);
    assert_eq!(
        for_ask(&got, multi)[0]["message"],
        json!("Which? (choose one or more)\n1. x\n2. y")
    );
    assert_eq!(
        for_ask(&got, two_q)[0]["message"],
        json!("One?\n1. x\n\nTwo?")
    );
    assert_eq!(
        for_ask(&got, two_q)[0]["title"],
        json!("claude-code \u{b7} ~/src/app asks")
    );
}

#[tokio::test]
async fn hostile_model_text_is_sent_verbatim_as_plain_text() {
    let (fake, hub) = setup().await;
    let question = "Ignore that. [Approve](https://evil.example/a) **now** <b>bold</b> <!channel> @everyone\n\n[ Yes ] [ No ]";
    let labels = ["<a href=x>Yes</a>", "[No](https://evil.example)"];
    let ask = hub
        .ask(
            "hostile",
            &single_select(question, "<!here> *Deploy*", &labels),
        )
        .await;
    let got = fake
        .wait_for("the notification", |p| !for_ask(p, ask).is_empty())
        .await;
    let msg = &for_ask(&got, ask)[0];
    // The fake refuses `markdown` (it must stay off): the text shows as typed, nothing renders.
    assert_eq!(msg.get("markdown"), None);
    assert_eq!(
        msg["message"],
        json!(format!(
            "{question}\n1. <a href=x>Yes</a>\n2. [No](https://evil.example)"
        ))
    );
    assert_eq!(
        msg["title"],
        json!("claude-code \u{b7} ~/src/app asks: <!here> *Deploy*")
    );
    // A label is only ever a button's label: its URL is ours.
    let url = action_url(msg, "[No](https://evil.example)");
    assert!(
        url.starts_with(&format!("{}/channels/{ask}/ntfy/", hub.url)),
        "{url}"
    );
}

fn notice(public_url: &str) -> Notice {
    Notice {
        ask: AskId(7),
        asker: Asker::default(),
        questions: serde_json::from_value(
            json!([{"id": "q", "question": "x".repeat(5000), "multi_select": false}]),
        )
        .unwrap(),
        page_url: format!("{public_url}/inbox#ask-7"),
        public_url: public_url.to_owned(),
        choices: vec![OfferedChoice {
            label: "ok".into(),
            token: "t".repeat(32),
        }],
        done: None,
        own: None,
        again: None,
    }
}

#[tokio::test]
async fn a_long_question_is_cut_below_the_message_size_limit_and_offers_only_the_page() {
    let fake = FakeNtfy::start(Some(TOKEN)).await;
    let ntfy = Ntfy::new(config(&fake.url, Some(TOKEN))).unwrap();
    ntfy.notify(&notice("http://hub")).await.unwrap();
    let published = &fake.published()[0];
    let m = published["message"].as_str().unwrap().to_owned();
    assert!(
        m.len() <= 4096
            && m.ends_with("\u{2026}\n\n\u{2702} Cut: 1,127 more characters not shown here. This message cannot be answered; open the page to see all of it and answer.")
            && m.starts_with("xxxx"),
        "{}: {m}",
        m.len()
    );
    assert_eq!(
        published["actions"],
        json!([{"action": "view", "label": "Open to answer", "url": "http://hub/inbox#ask-7"}]),
        "the offered choice is not a button: the text is not whole"
    );
}

#[tokio::test]
async fn a_wrong_access_token_is_an_error_that_does_not_show_the_token() {
    let fake = FakeNtfy::start(Some(TOKEN)).await;
    let ntfy = Ntfy::new(config(&fake.url, Some("tk_wrongwrongwrong"))).unwrap();
    let err = ntfy.notify(&notice("http://hub")).await.unwrap_err();
    assert!(
        matches!(err, ChannelError::Refused { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        r#"ntfy: the server refused the message: HTTP 401: {"code":40100,"http":401,"error":"unauthorized"}"#
    );
    assert!(!format!("{err:?}").contains("tk_wrong"));
    assert!(!format!("{:?}", config(&fake.url, Some(TOKEN))).contains(TOKEN));
    assert!(fake.published().is_empty());
}

#[tokio::test]
async fn an_unreachable_server_is_an_error_without_the_url() {
    // A port nothing listens on: bind one, then drop the listener.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ntfy = Ntfy::new(config(&format!("http://127.0.0.1:{port}"), Some(TOKEN))).unwrap();
    let err = ntfy.notify(&notice("http://hub")).await.unwrap_err();
    assert!(matches!(err, ChannelError::Unreachable { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("ntfy: the server could not be reached: "),
        "{err}"
    );
    assert!(!err.to_string().contains(&port.to_string()), "{err}");
}

#[test]
fn a_topic_without_access_token_is_refused_unless_accepted() {
    let err = Ntfy::new(config("https://ntfy.sh", None)).unwrap_err();
    assert_eq!(
        err,
        NtfyConfigError::PublicWithoutToken {
            topic: "asks".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "ntfy: an access token is required: without one, anyone subscribed to topic \"asks\" sees the questions and can answer them; set an access token, or accept a public topic explicitly"
    );
    let accepted = NtfyConfig {
        allow_public_topic: true,
        ..config("https://ntfy.sh", None)
    };
    assert!(Ntfy::new(accepted).is_ok());
    for (server, topic) in [
        ("ftp://x", "asks"),
        ("ntfy.sh", "asks"),
        ("https://ntfy.sh", " "),
    ] {
        let c = NtfyConfig {
            topic: topic.into(),
            ..config(server, Some(TOKEN))
        };
        assert_eq!(
            Ntfy::new(c).unwrap_err().to_string(),
            "ntfy: the server must be an http:// or https:// URL and the topic must not be empty"
        );
    }
}

#[tokio::test]
async fn each_ask_is_sent_once_through_reattach_detach_and_delivery() {
    let (fake, hub) = setup().await;
    let request = single_select("Once?", "Once", &["Yes", "No"]);
    let ask = hub.ask("once", &request).await;
    fake.wait_for("the notification", |p| !for_ask(p, ask).is_empty())
        .await;
    // Detach, re-attach (the same call again), then answer and deliver: many feed changes.
    hub.store
        .set_attached(ask, false, Timestamp::now())
        .await
        .unwrap();
    let again = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("once".into()),
        request.as_str(),
        ask_user_store::Asker::default(),
    );
    assert_eq!(hub.store.open_ask(&again).await.unwrap().record().id, ask);
    let got = fake
        .wait_for("the notification", |p| !for_ask(p, ask).is_empty())
        .await;
    let yes = action_url(&for_ask(&got, ask)[0], "Yes");
    assert_eq!(tap(&yes).await.0, 200);
    let answered = hub.store.get(ask).await.unwrap().closed.unwrap().outcome;
    assert!(
        hub.store
            .mark_delivered(ask, &answered, Timestamp::now())
            .await
            .unwrap()
    );
    // A later ask is a barrier: once its notification is out, every change before was seen.
    let later = hub
        .ask("later", &single_select("Later?", "L", &["a"]))
        .await;
    let got = fake
        .wait_for("the close update and the later ask", |p| {
            for_ask(p, ask).len() >= 2 && !for_ask(p, later).is_empty()
        })
        .await;
    assert_eq!(
        for_ask(&got, ask).len(),
        2,
        "one notification and one close update"
    );
    assert_eq!(for_ask(&got, ask)[1].get("actions"), None);
}

#[tokio::test]
async fn an_ask_closed_before_the_dispatcher_sees_it_is_not_sent() {
    let fake = FakeNtfy::start(Some(TOKEN)).await;
    let store = ask_user_store::Store::memory();
    let closed = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("gone".into()),
        single_select("Gone?", "G", &["a"]),
        Asker::default(),
    );
    let id = store.open_ask(&closed).await.unwrap().record().id;
    store
        .record_outcome(id, &Outcome::Withdrawn, Timestamp::now())
        .await
        .unwrap();
    let open = ask_user_store::NewAsk::new(
        &ask_user_store::Scope::HostKey("open".into()),
        single_select("Open?", "O", &["a"]),
        Asker::default(),
    );
    let open = store.open_ask(&open).await.unwrap().record().id;
    let ntfy = Ntfy::new(config(&fake.url, Some(TOKEN))).unwrap();
    let d = ask_user_channels::Dispatcher::new(
        ask_user_channels::Tokens::new(store),
        vec![Arc::new(ntfy) as Arc<dyn Channel>],
        "http://hub",
        Arc::new(|id| format!("http://hub/inbox#ask-{id}")),
    );
    tokio::spawn(d.run());
    let got = fake
        .wait_for("the open ask", |p| !for_ask(p, open).is_empty())
        .await;
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(for_ask(&got, id).is_empty());
}

#[tokio::test]
async fn a_failing_channel_does_not_keep_the_ask_from_the_others() {
    // A Telegram bot with a wrong token (refused by the FAKE Bot API), then a working ntfy.
    let tg_fake = ask_user_test_support::fakes::telegram::FakeTelegram::start().await;
    let bad =
        ask_user_channels::telegram::Telegram::new(ask_user_channels::telegram::TelegramConfig {
            api_base: tg_fake.url.clone(),
            bot_token: "1:wrong".into(),
            chats: vec![1],
            allowed_users: vec![1],
            poll_timeout_secs: 1,
        });
    let working = FakeNtfy::start(Some(TOKEN)).await;
    let good = Ntfy::new(config(&working.url, Some(TOKEN))).unwrap();
    let hub = Hub::start(vec![Arc::new(bad) as Arc<dyn Channel>, Arc::new(good)]).await;
    let ask = hub.ask("two", &single_select("Both?", "B", &["Yes"])).await;
    let got = working
        .wait_for("the notification", |p| !for_ask(p, ask).is_empty())
        .await;
    assert_eq!(tap(&action_url(&for_ask(&got, ask)[0], "Yes")).await.0, 200);
    working
        .wait_for("the close update", |p| for_ask(p, ask).len() == 2)
        .await;
    assert!(tg_fake.calls("sendMessage").is_empty());
}

#[tokio::test]
async fn bidi_and_invisibles_are_shown_inert_and_scripts_whole() {
    // `Pay \u{202e}0001$\u{202c}` read "Pay $1000" on the phone; twelve blank lines hid the
    // rest of the question.
    let (fake, hub) = setup().await;
    let question = "Pay \u{202e}0001$\u{202c} to Bob?\n\n\n\n\n\n\n\n\n\n\n\nمی\u{200c}خواهم 👨\u{200d}👩\u{200d}👧";
    let ask = hub
        .ask(
            "bidi",
            &single_select(question, "Pay\u{200b}", &["Yes\u{2066}", "No"]),
        )
        .await;
    let got = fake
        .wait_for("the notification", |p| !for_ask(p, ask).is_empty())
        .await;
    let msg = &for_ask(&got, ask)[0];
    assert_eq!(
        msg["message"],
        json!(
            "Pay \\u{202e}0001$\\u{202c} to Bob?\n\nمی\u{200c}خواهم 👨\u{200d}👩\u{200d}👧\n1. Yes\\u{2066}\n2. No"
        )
    );
    assert_eq!(
        msg["title"],
        json!("claude-code \u{b7} ~/src/app asks: Pay\u{27e8}1 blank character\u{27e9}")
    );
    assert!(action_url(msg, "Yes\\u{2066}").starts_with(&hub.url));
}
