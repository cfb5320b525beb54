//! The same answer again on the local page (docs/contract.md §8): a question answered before
//! is asked anew with one button that sends that answer — only when the human taps it.

use std::time::{Duration, UNIX_EPOCH};

use ask_user_core::{
    AnswerItem, Answers, CancellationToken, Decide, GivenBefore, Limits, UserInteraction, decode,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{DB, Scenario, until_pending, web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_given_before_is_one_tap_that_sends_it_as_this_cards_answer() {
    let web = web().await;
    let request = decode(DB, &Limits::default()).unwrap().request;
    let given = GivenBefore {
        answers: Answers {
            answers: vec![AnswerItem::selected("db", ["SQLite"])],
        },
        given_at: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
    };
    let decide = Decide::new(&request).with_given_before(given);
    let asking = {
        let (web, request, decide) = (web.clone(), request.clone(), decide.clone());
        tokio::spawn(async move {
            web.ask_decided(&request, CancellationToken::new(), decide)
                .await
        })
    };
    until_pending(&web, 1).await;
    let seen = Scenario::start("send-again", web.url(), &[]).result().await;
    let offer = seen["offer"].as_str().unwrap().to_owned();
    assert!(
        offer.starts_with("Send the same answer again (given ") && offer.ends_with(": SQLite)"),
        "{seen}"
    );
    assert_eq!(
        seen,
        json!({
            "offer": offer,
            "openBeforeTap": true,
            "closed": "Answer sent. The agent carries on.",
            "errors": [],
        })
    );
    let answers = asking.await.unwrap().unwrap();
    assert_eq!(
        answers.answers,
        vec![AnswerItem::selected("db", ["SQLite"])]
    );
    assert!(
        matches!(decide.settled(), Some(ask_user_core::Settled::Answered { by: Some(by), .. }) if by == "the web page"),
        "{:?}",
        decide.settled()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_answer_given_before_the_card_offers_nothing() {
    let web = web().await;
    let request = decode(DB, &Limits::default()).unwrap().request;
    let cancel = CancellationToken::new();
    let asking = {
        let (web, request, cancel) = (web.clone(), request.clone(), cancel.clone());
        tokio::spawn(async move { web.ask(&request, cancel).await })
    };
    until_pending(&web, 1).await;
    let seen = Scenario::start("send-again", web.url(), &["absent"])
        .result()
        .await;
    assert_eq!(seen, json!({ "offers": 0, "errors": [] }));
    cancel.cancel();
    assert!(asking.await.unwrap().is_err());
}
