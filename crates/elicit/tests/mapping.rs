//! The pure mapping: request → elicitation form, form content → answers (docs/contract.md §6).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ask_user_core::{AskUserQuestionRequest, Limits, decode};
use ask_user_elicit::{
    ContentError, FormStyle, OWN_ANSWER_CHOICE, Reply, answers_from_content, form, own_answer_form,
    read_reply, read_reply_value,
};
use pretty_assertions::assert_eq;
use rmcp::model::ProtocolVersion;
use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::{Value, json};

fn request(arguments: &str) -> AskUserQuestionRequest {
    decode(arguments, &Limits::default()).unwrap().request
}

const BATCH: &str = r#"{"questions":[
  {"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)","description":"Full SQL, needs a server."},{"label":"SQLite","description":"A file."}]},
  {"id":"langs","question":"Which languages?","options":["Rust","Go (Recommended)","Python"],"multi_select":true},
  {"id":"name","header":"Name","question":"Service name?"}]}"#;

#[test]
fn the_form_has_one_field_per_question_plus_own_answers_in_question_order() {
    let form = form(&request(BATCH), None, FormStyle::Titled);
    assert_eq!(
        serde_json::to_string(&form.params()).unwrap(),
        concat!(
            r#"{"mode":"form","message":"3 questions, one field each below; a blank field skips its question.","#,
            r#""requestedSchema":{"type":"object","properties":{"#,
            r#""db":{"type":"string","title":"1/3 [Database] Which database?","description":"PostgreSQL (Recommended): Full SQL, needs a server. · SQLite: A file.","oneOf":[{"const":"PostgreSQL (Recommended)","title":"PostgreSQL (Recommended)"},{"const":"SQLite","title":"SQLite"}],"default":"PostgreSQL (Recommended)"},"#,
            r#""db.own":{"type":"string","title":"Your own answer to 1/3","description":"Optional: type this instead of choosing an option."},"#,
            r#""langs":{"type":"array","title":"2/3 Which languages? (choose any)","items":{"anyOf":[{"const":"Rust","title":"Rust"},{"const":"Go (Recommended)","title":"Go (Recommended)"},{"const":"Python","title":"Python"}]},"default":["Go (Recommended)"]},"#,
            r#""langs.own":{"type":"string","title":"Your own answer to 2/3","description":"Optional: type this in addition to, or instead of, the options."},"#,
            r#""name":{"type":"string","title":"3/3 [Name] Service name?"}}}}"#
        )
    );
}

#[test]
fn a_notice_opens_the_message() {
    let form = form(
        &request(r#"{"questions":[{"id":"a","question":"A?"}]}"#),
        Some("Not accepted: x."),
        FormStyle::Titled,
    );
    assert_eq!(form.message, "Not accepted: x.\n\nA?");
}

#[test]
fn own_answer_keys_never_collide_with_question_ids() {
    let form = form(
        &request(
            r#"{"questions":[{"id":"a","question":"A?","options":["X"]},{"id":"a.own","question":"B?"}]}"#,
        ),
        None,
        FormStyle::Titled,
    );
    let keys: Vec<&str> = form.fields.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["a", "a.own.", "a.own"]);
}

#[test]
fn content_maps_to_normalised_answers() {
    let request = request(BATCH);
    let form = form(&request, None, FormStyle::Titled);
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"db":"SQLite","langs":["Python","Rust"],"name":"billing"}),
            r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Python"]},{"id":"name","selected":[],"custom":"billing"}]}"#,
        ),
        // The own answer overrides a single choice and supplements several.
        (
            json!({"db":"SQLite","db.own":" MariaDB ","langs":"Go (Recommended)","langs.own":"Zig"}),
            r#"{"answers":[{"id":"db","selected":[],"custom":"MariaDB"},{"id":"langs","selected":["Go (Recommended)"],"custom":"Zig"},{"id":"name","selected":[]}]}"#,
        ),
        // Empty, blank, null, absent and unknown fields are nothing.
        (
            json!({"db":"","db.own":"  ","langs":[],"name":null,"other":1}),
            r#"{"answers":[{"id":"db","selected":[]},{"id":"langs","selected":[]},{"id":"name","selected":[]}]}"#,
        ),
        (
            Value::Null,
            r#"{"answers":[{"id":"db","selected":[]},{"id":"langs","selected":[]},{"id":"name","selected":[]}]}"#,
        ),
    ];
    for (content, expected) in cases {
        let answers = answers_from_content(&request, &form, &content).unwrap();
        assert_eq!(ask_user_core::render(&answers), expected, "{content}");
    }
}

#[test]
fn content_that_does_not_fit_is_refused_with_a_reason_for_the_human() {
    let request = request(BATCH);
    let form = form(&request, None, FormStyle::Titled);
    let cases: Vec<(Value, &str)> = vec![
        (json!("SQLite"), "the form content is not an object"),
        (json!({"db":1}), "field \"db\" takes one option label"),
        (
            json!({"langs":{"a":1}}),
            "field \"langs\" takes a list of option labels",
        ),
        (
            json!({"langs":[1]}),
            "field \"langs\" takes a list of option labels",
        ),
        (json!({"name":true}), "field \"name\" takes text"),
        (json!({"db.own":["x"]}), "field \"db.own\" takes text"),
        (
            json!({"db":"MySQL"}),
            "\"MySQL\" is not one of the options of question \"db\"",
        ),
    ];
    for (content, expected) in cases {
        let error = answers_from_content(&request, &form, &content).unwrap_err();
        assert_eq!(error.to_string(), expected, "{content}");
    }
    assert_eq!(
        answers_from_content(&request, &form, &json!(3)).unwrap_err(),
        ContentError::NotAnObject
    );
}

#[test]
fn accept_answers_decline_and_cancel_dismiss() {
    let request =
        request(r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#);
    let form = form(&request, None, FormStyle::Titled);
    let accept = ElicitResult::new(ElicitationAction::Accept).with_content(json!({"go":"Yes"}));
    assert!(matches!(
        read_reply(&request, &form, &accept),
        Reply::Answered(_)
    ));
    for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        assert_eq!(
            read_reply(&request, &form, &ElicitResult::new(action)),
            Reply::Dismissed
        );
    }
    // An input-required retry carries the result as raw JSON.
    assert_eq!(
        read_reply_value(&request, &form, &json!({"action":"decline"})),
        Reply::Dismissed
    );
    assert_eq!(
        read_reply_value(
            &request,
            &form,
            &json!({"action":"accept","content":{"go":"Maybe"}})
        ),
        Reply::Refused(ContentError::Invalid(
            ask_user_core::InvalidAnswer::UnknownLabel {
                id: "go".into(),
                label: "Maybe".into()
            }
        ))
    );
    assert_eq!(
        read_reply_value(&request, &form, &json!("nonsense")),
        Reply::Refused(ContentError::NotAnObject)
    );
}

#[test]
fn the_style_follows_the_negotiated_version() {
    for (version, style) in [
        (Some(ProtocolVersion::V_2024_11_05), FormStyle::Primitive),
        (Some(ProtocolVersion::V_2025_03_26), FormStyle::Primitive),
        (Some(ProtocolVersion::V_2025_06_18), FormStyle::Primitive),
        (Some(ProtocolVersion::V_2025_11_25), FormStyle::Titled),
        (Some(ProtocolVersion::V_2026_07_28), FormStyle::Titled),
        (None, FormStyle::Primitive),
    ] {
        assert_eq!(
            FormStyle::for_version(version.as_ref()),
            style,
            "{version:?}"
        );
    }
}

#[test]
fn a_primitive_form_has_only_primitive_properties_and_no_mode() {
    let primitive = form(&request(BATCH), None, FormStyle::Primitive);
    assert_eq!(
        serde_json::to_string(&primitive.request_params()).unwrap(),
        concat!(
            r#"{"message":"1/3 [Database] Which database?\n- PostgreSQL (Recommended): Full SQL, needs a server.\n- SQLite: A file.\n\n2/3 Which languages? (tick any; none ticked skips it)\n- Rust\n- Go (Recommended)\n- Python\n\n3/3 [Name] Service name?","#,
            r#""requestedSchema":{"type":"object","properties":{"#,
            r#""db":{"type":"string","title":"Which database?","enum":["PostgreSQL (Recommended)","SQLite"],"enumNames":["PostgreSQL (Recommended)","SQLite"]},"#,
            r#""db.own":{"type":"string","title":"Your own answer","description":"Optional: type this instead of choosing an option."},"#,
            r#""langs.1":{"type":"boolean","title":"Rust"},"#,
            r#""langs.2":{"type":"boolean","title":"Go (Recommended)","default":true},"#,
            r#""langs.3":{"type":"boolean","title":"Python"},"#,
            r#""langs.own":{"type":"string","title":"Your own answer","description":"Optional: type this in addition to, or instead of, the options."},"#,
            r#""name":{"type":"string","title":"Service name?"}}}}"#
        )
    );
    // The titled style keeps `mode`.
    let titled = form(&request(BATCH), None, FormStyle::Titled);
    assert_eq!(titled.request_params()["mode"], "form");
    assert_eq!(
        titled.request_params()["requestedSchema"],
        serde_json::to_value(&titled.schema).unwrap()
    );
}

#[test]
fn primitive_content_maps_booleans_to_labels_and_unticked_to_a_skip() {
    let request = request(BATCH);
    let form = form(&request, None, FormStyle::Primitive);
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"db":"SQLite","langs.1":true,"langs.2":false,"langs.3":true,"langs.own":"Zig"}),
            r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Python"],"custom":"Zig"},{"id":"name","selected":[]}]}"#,
        ),
        // Every option unticked: that multi-select is skipped, explicitly.
        (
            json!({"db":"SQLite","langs.1":false,"langs.2":false,"langs.3":false,"name":"x"}),
            r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":[]},{"id":"name","selected":[],"custom":"x"}]}"#,
        ),
    ];
    for (content, expected) in cases {
        let answers = answers_from_content(&request, &form, &content).unwrap();
        assert_eq!(ask_user_core::render(&answers), expected, "{content}");
    }
    assert_eq!(
        answers_from_content(&request, &form, &json!({"langs.2":"yes"}))
            .unwrap_err()
            .to_string(),
        "field \"langs.2\" takes true or false"
    );
}

#[test]
fn option_keys_never_collide_with_question_ids() {
    let form = form(
        &request(
            r#"{"questions":[{"id":"a","question":"A?","options":["X","Y"],"multi_select":true},{"id":"a.1","question":"B?"}]}"#,
        ),
        None,
        FormStyle::Primitive,
    );
    let keys: Vec<&str> = form.fields.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["a.1.", "a.2", "a.own", "a.1"]);
}

#[test]
fn a_submission_with_every_field_blank_is_blank_not_an_answer() {
    let request = request(BATCH);
    for style in [FormStyle::Titled, FormStyle::Primitive] {
        let form = form(&request, None, style);
        for content in [
            json!({}),
            json!({"db":"","db.own":" ","langs":[],"langs.1":false,"name":""}),
        ] {
            let reply = ElicitResult::new(ElicitationAction::Accept).with_content(content.clone());
            let Reply::Blank(answers) = read_reply(&request, &form, &reply) else {
                panic!("{style:?} {content}")
            };
            assert_eq!(
                ask_user_core::render(&answers),
                r#"{"answers":[{"id":"db","selected":[]},{"id":"langs","selected":[]},{"id":"name","selected":[]}]}"#
            );
        }
        // One field filled: an answer with the others skipped.
        let reply = ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name":"x"}));
        assert!(matches!(
            read_reply(&request, &form, &reply),
            Reply::Answered(_)
        ));
    }
}

#[test]
fn the_refusal_round_texts_are_shared_by_both_ways_of_eliciting() {
    use ask_user_elicit::{MAX_ROUNDS, did_not_fit, not_accepted};
    assert_eq!(MAX_ROUNDS, 3);
    let reason = r#""MySQL" is not one of the options of question "db""#;
    assert_eq!(
        not_accepted(&reason),
        r#"Not accepted: "MySQL" is not one of the options of question "db". Please answer again."#
    );
    assert_eq!(
        did_not_fit(&reason),
        r#"the answers from the MCP client's form did not fit the questions ("MySQL" is not one of the options of question "db"); ask again"#
    );
}

/// The form each client gets for [`BATCH`], byte for byte as sent (`elicitation/create`
/// params): titled shapes (2025-11-25 on), primitive shapes (2025-06-18), and Codex's
/// submittable shapes. Rewritten only with `ASK_USER_BLESS=1`.
#[test]
fn the_form_per_client_is_pinned_as_golden_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (name, style) in [
        ("form-titled.json", FormStyle::Titled),
        ("form-primitive.json", FormStyle::Primitive),
        ("form-codex.json", FormStyle::Codex),
    ] {
        let sent =
            serde_json::to_string(&form(&request(BATCH), None, style).request_params()).unwrap();
        let path = dir.join(name);
        if std::env::var_os("ASK_USER_BLESS").is_some() {
            std::fs::write(&path, &sent).unwrap();
        }
        let pinned = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(sent, pinned, "{name} (ASK_USER_BLESS=1 rewrites it)");
    }
    let second = own_answer_form(&request(BATCH), &[0, 1]);
    let sent = serde_json::to_string(&second.request_params()).unwrap();
    let path = dir.join("form-codex-own-answer.json");
    if std::env::var_os("ASK_USER_BLESS").is_some() {
        std::fs::write(&path, &sent).unwrap();
    }
    assert_eq!(sent, std::fs::read_to_string(&path).unwrap_or_default());
}

/// Codex (issue: a choice alone could never be submitted): no text field stands beside a
/// choice, and every boolean starts false, so Enter through the form submits what is shown.
#[test]
fn a_codex_form_has_no_text_field_beside_a_choice_and_booleans_start_false() {
    let form = form(&request(BATCH), None, FormStyle::Codex);
    let schema = serde_json::to_value(&form.schema).unwrap();
    let properties = schema["properties"].as_object().unwrap();
    for (key, property) in properties {
        if property["type"] == "boolean" {
            assert_eq!(property["default"], false, "{key}");
        }
        if property["type"] == "string" && property.get("enum").is_none() {
            assert_eq!(key, "name", "only the free-text question is a text field");
        }
    }
    assert_eq!(
        properties["db"]["enum"],
        json!(["PostgreSQL (Recommended)", "SQLite", OWN_ANSWER_CHOICE])
    );
    assert_eq!(properties["langs.own"]["title"], OWN_ANSWER_CHOICE);
}

#[test]
fn a_codex_choice_submits_alone_and_the_own_answer_choice_asks_for_the_text_next() {
    let request = request(BATCH);
    let codex = form(&request, None, FormStyle::Codex);
    let accept =
        |content: Value| ElicitResult::new(ElicitationAction::Accept).with_content(content);
    let reply = read_reply(
        &request,
        &codex,
        &accept(
            json!({"db": "SQLite", "langs.1": false, "langs.2": true, "langs.3": false, "langs.own": false, "name": "api"}),
        ),
    );
    let Reply::Answered(answers) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(
        ask_user_core::render(&answers),
        r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Go (Recommended)"]},{"id":"name","selected":[],"custom":"api"}]}"#
    );
    let reply = read_reply(
        &request,
        &codex,
        &accept(
            json!({"db": OWN_ANSWER_CHOICE, "langs.1": true, "langs.own": true, "name": "api"}),
        ),
    );
    let Reply::OwnAnswerWanted { answers, questions } = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(questions, [0, 1]);
    assert_eq!(
        ask_user_core::render(&answers),
        r#"{"answers":[{"id":"db","selected":[]},{"id":"langs","selected":["Rust"]},{"id":"name","selected":[],"custom":"api"}]}"#
    );
    let second = own_answer_form(&request, &questions);
    let reply = read_reply(
        &request,
        &second,
        &accept(json!({"db.own": "DuckDB", "langs.own": "Zig"})),
    );
    let Reply::Answered(typed) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(typed.answers[0].custom.as_deref(), Some("DuckDB"));
    assert_eq!(typed.answers[1].custom.as_deref(), Some("Zig"));
}

#[test]
fn the_own_answer_choice_never_takes_an_options_label() {
    let request = request(
        r#"{"questions":[{"id":"a","question":"A?","options":["Type my own answer","B"]}]}"#,
    );
    let codex = form(&request, None, FormStyle::Codex);
    let schema = serde_json::to_value(&codex.schema).unwrap();
    assert_eq!(
        schema["properties"]["a"]["enum"],
        json!(["Type my own answer", "B", "Type my own answer…"])
    );
    let reply = read_reply(
        &request,
        &codex,
        &ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"a": "Type my own answer"})),
    );
    assert!(matches!(reply, Reply::Answered(_)), "{reply:?}");
}

#[test]
fn a_titled_batch_keeps_its_message_to_one_line_and_each_question_in_its_field() {
    // Claude Code showed four lines of the message and "… (+7 more lines)" for three questions.
    let questions: Vec<String> = (1..=10)
        .map(|i| format!(r#"{{"id":"q{i}","question":"Question {i}?","options":[{{"label":"A","description":"The first."}},"B"]}}"#))
        .collect();
    let form = form(
        &request(&format!(r#"{{"questions":[{}]}}"#, questions.join(","))),
        None,
        FormStyle::Titled,
    );
    assert_eq!(
        form.message,
        "10 questions, one field each below; a blank field skips its question."
    );
    let schema = serde_json::to_value(&form.schema).unwrap();
    assert_eq!(schema["properties"]["q7"]["title"], "7/10 Question 7?");
    assert_eq!(schema["properties"]["q7"]["description"], "A: The first.");
    assert_eq!(
        schema["properties"]["q7.own"]["title"],
        "Your own answer to 7/10"
    );
}
