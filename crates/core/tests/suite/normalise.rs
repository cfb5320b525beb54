//! Answer normalisation (docs/contract.md §4): one item per question in request order, the own-answer
//! rules, and every refusal text.

use ask_user_core::{AnswerItem, Answers, AskUserQuestionRequest, Limits, decode, normalise};
use pretty_assertions::assert_eq;

fn request() -> AskUserQuestionRequest {
    decode(
        r#"{"questions":[
            {"id":"db","question":"Which database?","options":["PostgreSQL (Recommended)","SQLite","MongoDB"]},
            {"id":"features","question":"Which features?","multi_select":true,"options":["Auth","Billing","Search"]},
            {"id":"name","question":"Name?"}]}"#,
        &Limits::default(),
    )
    .unwrap()
    .request
}

fn answers(items: Vec<AnswerItem>) -> Answers {
    Answers { answers: items }
}

/// `items` plus an explicit skip for every question they leave out (appended at the end, so
/// the request order still has to be restored).
fn complete(mut items: Vec<AnswerItem>) -> Answers {
    for id in ["db", "features", "name"] {
        if !items.iter().any(|i| i.id == id) {
            items.push(AnswerItem::skipped(id));
        }
    }
    answers(items)
}

/// `items`, completed with skips, normalised against [`request`].
fn normalised(items: Vec<AnswerItem>) -> Answers {
    normalise(&request(), complete(items)).unwrap()
}

fn item(id: &str, selected: &[&str], custom: Option<&str>) -> AnswerItem {
    AnswerItem {
        id: id.to_owned(),
        selected: selected.iter().map(|s| (*s).to_owned()).collect(),
        custom: custom.map(str::to_owned),
    }
}

#[test]
fn items_come_out_in_request_order() {
    let out = normalise(
        &request(),
        answers(vec![
            item("name", &[], Some("billing")),
            item("features", &[], None),
            item("db", &["SQLite"], None),
        ]),
    )
    .unwrap();
    assert_eq!(
        out,
        answers(vec![
            item("db", &["SQLite"], None),
            item("features", &[], None),
            item("name", &[], Some("billing")),
        ])
    );
}

#[test]
fn labels_come_in_option_order_without_repeats() {
    let out = normalised(vec![item("features", &["Search", "Auth", "Search"], None)]);
    assert_eq!(out.answers[1], item("features", &["Auth", "Search"], None));
}

#[test]
fn custom_is_trimmed_and_dropped_when_blank() {
    let out = normalised(vec![
        item("db", &["SQLite"], Some("   ")),
        item("name", &[], Some("  api \n")),
    ]);
    assert_eq!(out.answers[0], item("db", &["SQLite"], None));
    assert_eq!(out.answers[2], item("name", &[], Some("api")));
}

#[test]
fn custom_overrides_a_single_select_and_supplements_a_multi_select() {
    let out = normalised(vec![
        item("db", &["SQLite"], Some("CockroachDB")),
        item("features", &["Billing"], Some("Audit log")),
    ]);
    assert_eq!(out.answers[0], item("db", &[], Some("CockroachDB")));
    assert_eq!(
        out.answers[1],
        item("features", &["Billing"], Some("Audit log"))
    );
}

#[test]
fn a_repeated_label_on_a_single_select_is_one_label() {
    let out = normalised(vec![item("db", &["SQLite", "SQLite"], None)]);
    assert_eq!(out.answers[0], item("db", &["SQLite"], None));
}

#[test]
fn every_refusal_text_is_pinned() {
    let cases = [
        (
            vec![item("nope", &[], None)],
            r#"the answer names an unknown question id "nope""#,
        ),
        (
            vec![
                item("db", &["SQLite"], None),
                item("db", &["MongoDB"], None),
            ],
            r#"question "db" is answered twice"#,
        ),
        (
            vec![item("db", &["Oracle"], None)],
            r#""Oracle" is not one of the options of question "db""#,
        ),
        (
            vec![item("name", &["x"], None)],
            r#""x" is not one of the options of question "name""#,
        ),
        (
            vec![item("db", &["SQLite", "MongoDB"], None)],
            r#"question "db" takes one option, but 2 were selected"#,
        ),
    ];
    for (items, text) in cases {
        let err = normalise(&request(), complete(items.clone())).unwrap_err();
        assert_eq!(err.to_string(), text, "answers: {items:?}");
    }
}

#[test]
fn an_omitted_question_is_refused_and_a_skip_must_be_explicit() {
    let omitted = [
        (vec![], "db"),
        (
            vec![item("db", &["SQLite"], None), item("name", &[], None)],
            "features",
        ),
        (
            vec![item("features", &[], None), item("db", &[], None)],
            "name",
        ),
    ];
    for (items, id) in omitted {
        let err = normalise(&request(), answers(items.clone())).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                r#"question "{id}" is not answered; answer it, or skip it explicitly (nothing selected, no own answer)"#
            ),
            "answers: {items:?}"
        );
    }
    let skipped = normalise(
        &request(),
        answers(vec![
            item("db", &[], None),
            item("features", &[], Some("  ")),
            item("name", &[], None),
        ]),
    )
    .unwrap();
    assert!(skipped.answers.iter().all(AnswerItem::is_skipped));
}

#[test]
fn normalising_twice_changes_nothing() {
    let once = normalised(vec![
        item("features", &["Search", "Auth"], Some(" x ")),
        item("db", &["MongoDB"], None),
    ]);
    assert_eq!(normalise(&request(), once.clone()).unwrap(), once);
}
