//! The Telegram channel against a FAKE Bot API (`fake_telegram`, documented behaviour listed
//! there): the dispatcher sends, the fake delivers taps as `callback_query` updates to the
//! channel's long poll, and the outcome lands in the store.

use std::sync::Arc;

use ask_user_channels::telegram::{self, PollLease, Telegram, TelegramConfig};
use ask_user_channels::{Channel, ChannelError};
use ask_user_store::{AskId, Outcome};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Hub, multi_select, single_select};
use ask_user_test_support::fakes::telegram::{BOT_TOKEN, FakeTelegram};

const CHAT: i64 = 4242;
const USER: i64 = 4242;

fn config(fake: &FakeTelegram, token: &str) -> TelegramConfig {
    TelegramConfig {
        api_base: fake.url.clone(),
        bot_token: token.into(),
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
    hub.assert_answered(
        ask,
        json!({"answers": [{"id": "q1", "selected": ["Yes"]}]}),
        "telegram",
        Some(USER.to_string()),
    )
    .await;
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
async fn hostile_text_is_plain_and_long_text_is_cut_with_only_the_page() {
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
    assert!(text.chars().count() <= 4096);
    assert!(text.starts_with("claude-code \u{b7} ~/src/app asks: H\n\n*bold* _it_ [Approve](tg://evil) <b>x</b> `code` yyy"), "{text}");
    assert!(
        text.ends_with("y\u{2026}\n\n\u{2702} Cut: 1,145 more characters not shown here. This message cannot be answered; open the page to see all of it and answer."),
        "{text}"
    );
    // Cut: no button answers it, the page does.
    assert_eq!(
        msg["reply_markup"]["inline_keyboard"],
        json!([[{"text": "Open to answer", "url": format!("{}/inbox#ask-{ask}", hub.url)}]])
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
        done: None,
        own: None,
        again: None,
    };
    let err = tg.notify(&notice).await.unwrap_err();
    assert!(matches!(err, ChannelError::Refused { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "telegram: the server refused the message: HTTP 401: sendMessage: Unauthorized"
    );
}

/// A message cut by Telegram's limit answers nothing, a reply to it included: the human did
/// not see the whole question.
#[tokio::test]
async fn a_reply_to_a_cut_question_does_not_answer_it() {
    let (fake, hub) = setup().await;
    let long = serde_json::json!({"questions": [{"id": "name", "question": format!("Name it?\n{}", "z".repeat(5000)), "multi_select": false}]}).to_string();
    let ask = hub.ask("reply-cut", &long).await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let message_id = fake.message_id_of(&sent_for(&sent, ask).unwrap());
    assert_eq!(
        fake.reply_and_read(CHAT, USER, message_id, "feature/ada")
            .await,
        telegram::CUT_QUESTION
    );
    assert_eq!(hub.store.get(ask).await.unwrap().closed, None, "still open");
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
    hub.assert_answered(
        ask,
        json!({"answers": [{"id": "name", "selected": [], "custom": "feature/ada"}]}),
        "telegram",
        Some(USER.to_string()),
    )
    .await;
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

fn keyboard(msg: &Value) -> Vec<(String, String)> {
    msg["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|b| {
            let target = b["callback_data"].as_str().or(b["url"].as_str()).unwrap();
            (b["text"].as_str().unwrap().to_owned(), target.to_owned())
        })
        .collect()
}

#[tokio::test]
async fn multi_select_toggles_spend_nothing_and_done_answers_the_chosen_set_once() {
    let (fake, hub) = setup().await;
    let ask = hub
        .ask(
            "multi",
            &multi_select("Which checks?", "CI", &["Lint", "Test", "Deploy"]),
        )
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    let id = fake.message_id_of(&msg);
    let done = data_of(&msg, "Done");
    assert!(
        done.starts_with(&format!("{ask}:")) && done.len() <= 64,
        "{done}"
    );
    assert_eq!(
        keyboard(&msg),
        [
            ("\u{2610} Lint".to_owned(), format!("{ask}:+0")),
            ("\u{2610} Test".to_owned(), format!("{ask}:+1")),
            ("\u{2610} Deploy".to_owned(), format!("{ask}:+2")),
            ("Done".to_owned(), done.clone()),
            ("Open".to_owned(), format!("{}/inbox#ask-{ask}", hub.url)),
        ]
    );
    assert_eq!(
        msg["text"],
        "claude-code \u{b7} ~/src/app asks: CI\n\nWhich checks? (choose one or more)\n1. Lint\n2. Test\n3. Deploy"
    );

    // Outside the allow-list: neither a toggle nor Done does anything.
    assert_eq!(
        fake.tap_and_read(999, 999, id, &format!("{ask}:+0")).await,
        "You may not answer this question."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, 777, id, &done).await,
        "You may not answer this question."
    );
    // Done with nothing chosen keeps the token.
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &done).await,
        "Choose at least one option first, then Done."
    );
    assert!(fake.calls("editMessageReplyMarkup").is_empty());
    // A tap without its message (Telegram leaves out messages too old): nothing happens.
    let unreadable =
        "This message is too old to read the choices; answer on the page (the Open button).";
    assert_eq!(fake.tap_and_read(CHAT, USER, 999, &done).await, unreadable);
    assert_eq!(
        fake.tap_and_read(CHAT, USER, 999, &format!("{ask}:+0"))
            .await,
        unreadable
    );

    // Toggles edit the keyboard; the ask stays open.
    let toggle = |d: &str| format!("{ask}:{d}");
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("+0")).await,
        "Chosen: \u{201c}Lint\u{201d}. Tap Done to answer."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("-0")).await,
        "Nothing chosen yet."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("+0")).await,
        "Chosen: \u{201c}Lint\u{201d}. Tap Done to answer."
    );
    assert_eq!(
        keyboard(&fake.message(CHAT, id))[0],
        ("\u{2713} Lint".to_owned(), toggle("-0"))
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("+2")).await,
        "Chosen: \u{201c}Lint\u{201d}, \u{201c}Deploy\u{201d}. Tap Done to answer."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("-0")).await,
        "Chosen: \u{201c}Deploy\u{201d}. Tap Done to answer."
    );
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("+1")).await,
        "Chosen: \u{201c}Test\u{201d}, \u{201c}Deploy\u{201d}. Tap Done to answer."
    );
    assert_eq!(
        keyboard(&fake.message(CHAT, id))[..4],
        [
            ("\u{2610} Lint".to_owned(), toggle("+0")),
            ("\u{2713} Test".to_owned(), toggle("-1")),
            ("\u{2713} Deploy".to_owned(), toggle("-2")),
            ("Done".to_owned(), done.clone()),
        ]
    );
    assert!(hub.store.get(ask).await.unwrap().is_open());
    // A stranger's toggle changed nothing: six edits, all ours.
    assert_eq!(fake.calls("editMessageReplyMarkup").len(), 6);

    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &done).await,
        "Answer recorded: \u{201c}Test\u{201d}, \u{201c}Deploy\u{201d}."
    );
    hub.assert_answered(
        ask,
        json!({"answers": [{"id": "q1", "selected": ["Test", "Deploy"]}]}),
        "telegram",
        Some(USER.to_string()),
    )
    .await;
    // Replay, and a toggle after the close.
    let closed = "This question was already answered (\u{201c}Test\u{201d}, \u{201c}Deploy\u{201d}, via telegram).";
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &done).await,
        "This answer link was already used."
    );
    let edits = fake.wait_for("editMessageText", |c| !c.is_empty()).await;
    assert_eq!(edits[0]["reply_markup"], Value::Null, "the keyboard goes");
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &toggle("+0")).await,
        closed
    );
    // Done of this ask with another ask's id is refused.
    let other = format!("99:{}", done.split_once(':').unwrap().1);
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &other).await,
        "This answer link belongs to another question."
    );
}

#[tokio::test]
async fn a_reply_is_the_own_answer_to_a_multi_select() {
    let (fake, hub) = setup().await;
    let ask = hub
        .ask("multi-own", &multi_select("Which?", "W", &["A", "B"]))
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let id = fake.message_id_of(&sent_for(&sent, ask).unwrap());
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &format!("{ask}:+0"))
            .await,
        "Chosen: \u{201c}A\u{201d}. Tap Done to answer."
    );
    assert_eq!(
        fake.reply_and_read(CHAT, USER, id, "neither, C").await,
        "Answer recorded: \u{201c}neither, C\u{201d}."
    );
    hub.assert_answered(
        ask,
        json!({"answers": [{"id": "q1", "selected": [], "custom": "neither, C"}]}),
        "telegram",
        Some(USER.to_string()),
    )
    .await;
}

#[tokio::test]
async fn hostile_multi_select_labels_stay_plain_and_cannot_fake_a_choice() {
    let (fake, hub) = setup().await;
    let ask = hub
        .ask(
            "multi-hostile",
            &multi_select(
                "<b>Pick</b> [x](tg://evil)",
                "*H*",
                &["\u{2713} Evil", "<b>x</b>", "[y](https://evil)"],
            ),
        )
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    assert_eq!(msg.get("parse_mode"), None);
    let kb = keyboard(&msg);
    assert_eq!(kb[0].0, "\u{2610} \u{2713} Evil");
    assert_eq!(kb[1].0, "\u{2610} <b>x</b>");
    assert_eq!(kb[2].0, "\u{2610} [y](https://evil)");
    let id = fake.message_id_of(&msg);
    fake.tap_and_read(CHAT, USER, id, &format!("{ask}:+1"))
        .await;
    assert_eq!(keyboard(&fake.message(CHAT, id))[1].0, "\u{2713} <b>x</b>");
    let done = data_of(&msg, "Done");
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &done).await,
        "Answer recorded: \u{201c}<b>x</b>\u{201d}."
    );
    let outcome = hub.store.get(ask).await.unwrap().closed.unwrap().outcome;
    let Outcome::Answered { answer, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(answer["answers"][0]["selected"], json!(["<b>x</b>"]));
}

/// The store's lease holder of `tg`'s poll lease, waiting (up to 30 s) until it is one of
/// `holders` and not `not`.
async fn holder(hub: &Hub, tg: &Telegram, holders: &[&str], not: Option<&str>) -> String {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some((h, _)) = hub.store.lease(&tg.lease_name()).await.unwrap()
            && holders.contains(&h.as_str())
            && Some(h.as_str()) != not
        {
            return h;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no new lease holder"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn answered_by_tap(fake: &FakeTelegram, hub: &Hub, key: &str) {
    let ask = hub
        .ask(key, &single_select("Go?", "Go", &["Yes", "No"]))
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    let id = fake.message_id_of(&msg);
    assert_eq!(
        fake.tap_and_read(CHAT, USER, id, &data_of(&msg, "Yes"))
            .await,
        "Answer recorded: \u{201c}Yes\u{201d}."
    );
}

#[tokio::test]
async fn with_two_replicas_one_polls_and_the_other_takes_over_when_it_stops() {
    // Two channel instances on one store and one (fake) bot, as two hub replicas would be.
    let fake = FakeTelegram::start().await;
    let a = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let b = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let hub = Hub::start(vec![a.clone() as Arc<dyn Channel>]).await;
    assert_eq!(a.lease_name(), "telegram:123456");
    // Renewed about every second (the long poll is 1 s): ample margin on a loaded machine.
    let ttl = std::time::Duration::from_secs(6);
    let lease = |name: &str| PollLease {
        holder: name.to_owned(),
        ttl,
    };
    let task_a = tokio::spawn(
        a.clone()
            .poll_leased(hub.tokens.clone(), lease("replica-a")),
    );
    let task_b = tokio::spawn(
        b.clone()
            .poll_leased(hub.tokens.clone(), lease("replica-b")),
    );
    let first = holder(&hub, &a, &["replica-a", "replica-b"], None).await;
    // Several rounds of long polling, never two at once (the fake counts a 409 otherwise).
    let polls = fake.polls();
    answered_by_tap(&fake, &hub, "before").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while fake.polls() < polls + 3 {
        assert!(tokio::time::Instant::now() < deadline, "no polling");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(fake.conflicts(), 0);
    assert_eq!(
        hub.store.lease(&a.lease_name()).await.unwrap().unwrap().0,
        first,
        "the lease stays with its holder while it polls"
    );

    // The poller stops (its task is dropped): the other one takes over within a lease.
    let (stopped, other) = if first == "replica-a" {
        task_a.abort();
        (task_a, "replica-b")
    } else {
        task_b.abort();
        (task_b, "replica-a")
    };
    assert!(stopped.await.unwrap_err().is_cancelled());
    let next = holder(&hub, &a, &[other], None).await;
    assert_eq!(next, other);
    answered_by_tap(&fake, &hub, "after").await;
    assert_eq!(fake.conflicts(), 0);
}

#[tokio::test]
async fn the_fake_refuses_two_pollers_at_once() {
    // Without the lease two pollers collide: the fake answers one with 409, as Telegram does.
    let fake = FakeTelegram::start().await;
    let hub = Hub::start(Vec::new()).await;
    for _ in 0..2 {
        let tg = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
        tokio::spawn(tg.poll(hub.tokens.clone()));
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while fake.conflicts() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no conflict seen");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_reply_reaches_a_replica_that_did_not_send_the_message() {
    // Replica A sends (its dispatcher), replica B polls: B knows the ask from the replied-to
    // message's keyboard, which Telegram hands back with the reply.
    let fake = FakeTelegram::start().await;
    let a = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let b = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let hub = Hub::start(vec![a as Arc<dyn Channel>]).await;
    tokio::spawn(b.poll(hub.tokens.clone()));
    let ask = hub
        .ask("elsewhere", &single_select("Name?", "N", &["main", "dev"]))
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let id = fake.message_id_of(&sent_for(&sent, ask).unwrap());
    assert_eq!(
        fake.reply_and_read(CHAT, USER, id, "release").await,
        "Answer recorded: \u{201c}release\u{201d}."
    );
    let outcome = hub.store.get(ask).await.unwrap().closed.unwrap().outcome;
    let Outcome::Answered { answer, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(answer["answers"][0]["custom"], "release");
}

/// An answer recorded through a Telegram reply: its own answer text.
fn custom_answer(rec: &ask_user_store::AskRecord) -> Value {
    let outcome = &rec.closed.as_ref().unwrap().outcome;
    let Outcome::Answered { answer, .. } = outcome else {
        panic!("{outcome:?}")
    };
    answer["answers"][0]["custom"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_to_a_free_text_question_is_taken_by_any_replica_and_after_a_restart() {
    // A free-text question's message has no buttons naming its ask: the reply is matched
    // through the message reference the dispatcher stored. Replica A sends (its dispatcher),
    // replica B polls; then both stop and a fresh instance on a fresh store handle (a
    // restarted hub: same SQLite file) takes a reply to a message sent before it started.
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    let store = ask_user_store::Store::open(&url).await.unwrap();
    let tokens = ask_user_channels::Tokens::new(store.clone());
    let fake = FakeTelegram::start().await;
    let a = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let b = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    let dispatcher = ask_user_channels::Dispatcher::new(
        tokens.clone(),
        vec![a as Arc<dyn Channel>],
        "http://hub.invalid",
        Arc::new(|id| format!("http://hub.invalid/inbox#ask-{id}")),
    );
    let dispatching = tokio::spawn(dispatcher.run());
    let polling = tokio::spawn(b.poll(tokens.clone()));

    let free = |q: &str| {
        json!({"questions": [{"id": "name", "question": q, "multi_select": false}]}).to_string()
    };
    let open = |key: &str, request: String| {
        ask_user_store::NewAsk::new(
            &ask_user_store::Scope::HostKey(key.into()),
            request,
            ask_user_store::Asker::default(),
        )
    };
    let first = store
        .open_ask(&open("first", free("Branch name?")))
        .await
        .unwrap()
        .record()
        .id;
    let older = store
        .open_ask(&open("older", free("Tag name?")))
        .await
        .unwrap()
        .record()
        .id;
    let sent = fake
        .wait_for("sendMessage", |c| {
            sent_for(c, first).is_some() && sent_for(c, older).is_some()
        })
        .await;
    let first_msg = sent_for(&sent, first).unwrap();
    assert_eq!(
        first_msg["reply_markup"]["inline_keyboard"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "Open only: no button names the ask"
    );
    let first_id = fake.message_id_of(&first_msg);
    let older_id = fake.message_id_of(&sent_for(&sent, older).unwrap());
    // The references are stored once the sends returned.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while store
        .channel_message_ask("telegram", &format!("{CHAT}:{older_id}"))
        .await
        .unwrap()
        .is_none()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no reference stored"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    // B did not send it and still takes the reply.
    assert_eq!(
        fake.reply_and_read(CHAT, USER, first_id, "feature/ada")
            .await,
        "Answer recorded: \u{201c}feature/ada\u{201d}."
    );
    assert_eq!(
        custom_answer(&store.get(first).await.unwrap()),
        "feature/ada"
    );

    // Restart: A and B stop; a fresh instance with a fresh store handle takes over.
    dispatching.abort();
    polling.abort();
    let _ = (dispatching.await, polling.await);
    let store2 = ask_user_store::Store::open(&url).await.unwrap();
    let c = Arc::new(Telegram::new(config(&fake, BOT_TOKEN)));
    tokio::spawn(c.poll(ask_user_channels::Tokens::new(store2.clone())));
    assert_eq!(
        fake.reply_and_read(CHAT, USER, older_id, "v2.0").await,
        "Answer recorded: \u{201c}v2.0\u{201d}."
    );
    assert_eq!(custom_answer(&store2.get(older).await.unwrap()), "v2.0");
    // A second reply to an answered question is told so, and changes nothing.
    assert_eq!(
        fake.reply_and_read(CHAT, USER, first_id, "other").await,
        "This question was already answered (\u{201c}feature/ada\u{201d}, via telegram)."
    );
    assert_eq!(
        custom_answer(&store2.get(first).await.unwrap()),
        "feature/ada"
    );
}

#[tokio::test]
async fn bidi_and_invisibles_are_shown_inert_and_scripts_whole() {
    let (fake, hub) = setup().await;
    let question = "Pay \u{202e}0001$\u{202c} to Bob?\n\n\n\n\nමම ශ්\u{200d}රී ලංකාව";
    let ask = hub
        .ask(
            "bidi",
            &single_select(question, "H", &["Yes\u{202e}", "No"]),
        )
        .await;
    let sent = fake
        .wait_for("sendMessage", |c| sent_for(c, ask).is_some())
        .await;
    let msg = sent_for(&sent, ask).unwrap();
    assert_eq!(
        msg["text"],
        "claude-code \u{b7} ~/src/app asks: H\n\nPay \\u{202e}0001$\\u{202c} to Bob?\n\nමම ශ්\u{200d}රී ලංකාව\n1. Yes\\u{202e}\n2. No"
    );
    assert_eq!(
        msg["reply_markup"]["inline_keyboard"][0][0]["text"],
        "Yes\\u{202e}"
    );
}
