//! Decoding and validation (docs/contract.md §3): every leniency and every violation, input → exact result.

use ask_user_core::{Limits, decode};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Decodes `input` and returns the canonical request JSON and the leniencies, one per line.
fn accepted(input: &str) -> (String, Vec<String>) {
    match decode(input, &Limits::default()) {
        Ok(decoded) => (
            decoded.request.to_canonical_json(),
            decoded.leniencies.iter().map(ToString::to_string).collect(),
        ),
        Err(invalid) => panic!("refused {input}: {invalid}"),
    }
}

/// Decodes `input` and returns the model-facing error text.
fn refused(input: &str) -> String {
    match decode(input, &Limits::default()) {
        Ok(decoded) => panic!("accepted {input}: {decoded:?}"),
        Err(invalid) => invalid.to_string(),
    }
}

#[test]
fn canonical_arguments_pass_unchanged() {
    let input = r#"{"questions":[{"id":"db","question":"Which database?","header":"Database","options":[{"label":"PostgreSQL (Recommended)","description":"Relational."},{"label":"SQLite"}],"multi_select":false}]}"#;
    assert_eq!(accepted(input), (input.to_owned(), vec![]));
}

#[test]
fn every_leniency_becomes_the_canonical_request() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("", "", &["arguments: empty, read as {}"]),
        (
            r#"{"questions":"[{\"id\":\"a\",\"question\":\"Q?\"}]"}"#,
            r#"{"questions":[{"id":"a","question":"Q?","multi_select":false}]}"#,
            &["questions: a JSON string holding an array, parsed"],
        ),
        (
            r#"{"id":"a","question":"Q?","options":["Yes","No"]}"#,
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"Yes"},{"label":"No"}],"multi_select":false}]}"#,
            &[
                "arguments: a single question object, read as a one-element questions array",
                "questions[0].options[0]: a plain string, read as its label",
                "questions[0].options[1]: a plain string, read as its label",
            ],
        ),
        (
            r#"{"questions":[{"id":"a","question":"Q?","multiSelect":true,"options":["x","y"]}]}"#,
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x"},{"label":"y"}],"multi_select":true}]}"#,
            &[
                "questions[0].options[0]: a plain string, read as its label",
                "questions[0].options[1]: a plain string, read as its label",
                "questions[0].multiSelect: read as multi_select",
            ],
        ),
        (
            r#"{"questions":[{"id":"a","question":"Q?","multiple":true,"multi":true,"multi_select":true}]}"#,
            r#"{"questions":[{"id":"a","question":"Q?","multi_select":true}]}"#,
            &[
                "questions[0].multiple: read as multi_select",
                "questions[0].multi: read as multi_select",
            ],
        ),
        (
            r#"{"questions":[{"id":"a","question":"Q?","choices":[{"label":"x"}]}]}"#,
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x"}],"multi_select":false}]}"#,
            &["questions[0].choices: read as options"],
        ),
        (
            r#"{"questions":[{"id":"a","question":"Q?","options":"[{\"label\":\"x\"}]"}]}"#,
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x"}],"multi_select":false}]}"#,
            &["questions[0].options: a JSON string holding an array, parsed"],
        ),
        (
            r#"{"questions":[{"question":"A?"},{"id":"q2","question":"B?"},{"question":"C?"}]}"#,
            r#"{"questions":[{"id":"q1","question":"A?","multi_select":false},{"id":"q2","question":"B?","multi_select":false},{"id":"q3","question":"C?","multi_select":false}]}"#,
            &[
                "questions[0].id: missing, set to \"q1\"",
                "questions[2].id: missing, set to \"q3\"",
            ],
        ),
        (
            r#"{"questions":[{"id":"q1","question":"A?"},{"question":"B?"}]}"#,
            r#"{"questions":[{"id":"q1","question":"A?","multi_select":false},{"id":"q2","question":"B?","multi_select":false}]}"#,
            &["questions[1].id: missing, set to \"q2\""],
        ),
        (
            r#"{"questions":[{"question":"A?"},{"id":"q1","question":"B?"}]}"#,
            r#"{"questions":[{"id":"q2","question":"A?","multi_select":false},{"id":"q1","question":"B?","multi_select":false}]}"#,
            &["questions[0].id: missing, set to \"q2\""],
        ),
        (
            r#"{"questions":[{"id":7,"question":"Q?"}]}"#,
            r#"{"questions":[{"id":"7","question":"Q?","multi_select":false}]}"#,
            &["questions[0].id: a number, read as \"7\""],
        ),
        (
            r#"{"questions":[{"id":"a","header":"Deploy to production now?"}]}"#,
            r#"{"questions":[{"id":"a","question":"Deploy to production now?","multi_select":false}]}"#,
            &["questions[0].question: missing, the header is the question"],
        ),
        (
            r#"{"questions":[{"id":"a","question":"Q?","header":null,"options":[{"label":"x","description":null}],"multi_select":null}]}"#,
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x"}],"multi_select":false}]}"#,
            &[
                "questions[0].header: null, read as absent",
                "questions[0].options[0].description: null, read as absent",
                "questions[0].multi_select: null, read as absent",
            ],
        ),
        (
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x","value":1}],"urgency":"high"}],"reason":"r"}"#,
            r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x"}],"multi_select":false}]}"#,
            &[
                "reason: unknown key, ignored",
                "questions[0].options[0].value: unknown key, ignored",
                "questions[0].urgency: unknown key, ignored",
            ],
        ),
    ];
    for (input, canonical, leniencies) in cases {
        let leniencies: Vec<String> = leniencies.iter().map(|l| (*l).to_owned()).collect();
        if canonical.is_empty() {
            // The empty string is read as {} and then refused: questions missing.
            assert_eq!(
                refused(input),
                "Error: invalid arguments: questions: missing, send {\"questions\":[{\"id\":\"…\",\"question\":\"…\"}]}"
            );
            continue;
        }
        assert_eq!(
            accepted(input),
            ((*canonical).to_owned(), leniencies),
            "input: {input}"
        );
    }
}

#[test]
fn empty_header_and_description_are_absent_and_not_violations() {
    let (canonical, _) = accepted(
        r#"{"questions":[{"id":"a","question":"Q?","header":"  ","options":[{"label":"x","description":""}],"multi_select":true}]}"#,
    );
    assert_eq!(
        canonical,
        r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x"}],"multi_select":true}]}"#
    );
}

#[test]
fn what_the_ui_copes_with_is_not_a_violation() {
    // Long header, multi_select without options, (Recommended) not first, empty options.
    let header = "H".repeat(300);
    let input = json!({"questions":[
        {"id":"a","question":"Q?","header":header},
        {"id":"b","question":"Q?","multi_select":true},
        {"id":"c","question":"Q?","options":["x","y (Recommended)"]},
        {"id":"d","question":"Q?","options":[]},
    ]});
    let decoded = decode(input, &Limits::default()).unwrap();
    assert_eq!(decoded.request.questions().len(), 4);
    assert_eq!(decoded.request.questions()[2].recommended(), Some(1));
    assert!(decoded.request.questions()[3].options.is_empty());
}

#[test]
fn every_violation_text_is_pinned() {
    let long = "x".repeat(4_001);
    let too_many: Vec<_> = (0..11)
        .map(|i| json!({"id": format!("q{i}"), "question": "Q?"}))
        .collect();
    let many_options: Vec<_> = (0..27).map(|i| json!(format!("o{i}"))).collect();
    let cases: Vec<(String, &str)> = vec![
        ("not json".into(), r#"arguments: not valid JSON (expected ident at line 1 column 2), send a JSON object like {"questions":[{"id":"…","question":"…"}]}"#),
        ("[]".into(), r#"arguments: must be a JSON object like {"questions":[…]}, got an array"#),
        ("{}".into(), r#"questions: missing, send {"questions":[{"id":"…","question":"…"}]}"#),
        (r#"{"questions":null}"#.into(), r#"questions: missing, send {"questions":[{"id":"…","question":"…"}]}"#),
        (r#"{"questions":{}}"#.into(), "questions: must be an array of question objects, got an object"),
        (r#"{"questions":"not an array"}"#.into(), "questions: must be an array of question objects, got a string"),
        (r#"{"questions":[]}"#.into(), "questions: empty, add at least one question"),
        (r#"{"questions":["Deploy?"]}"#.into(), r#"questions[0]: must be an object with "id" and "question", got a string"#),
        (r#"{"questions":[{"id":"a","question":"  "}]}"#.into(), "questions[0].question: blank, write the question to ask the user"),
        (r#"{"questions":[{"id":"a"}]}"#.into(), "questions[0].question: missing, add the text to ask the user"),
        (r#"{"questions":[{"id":"a","question":5}]}"#.into(), "questions[0].question: must be a string, got a number"),
        (r#"{"questions":[{"id":"a","question":"Q?","header":true}]}"#.into(), "questions[0].header: must be a string, got a boolean"),
        (r#"{"questions":[{"id":" ","question":"Q?"}]}"#.into(), "questions[0].id: blank, give the question a short unique id"),
        (r#"{"questions":[{"id":["a"],"question":"Q?"}]}"#.into(), "questions[0].id: must be a string, got an array"),
        (r#"{"questions":[{"id":"a","question":"Q?"},{"id":"a","question":"R?"}]}"#.into(), r#"questions[1].id: "a" is already the id of questions[0], give each question a unique id"#),
        (r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":""}]}]}"#.into(), "questions[0].options[0].label: blank, give every option a label"),
        (r#"{"questions":[{"id":"a","question":"Q?","options":[{"description":"d"}]}]}"#.into(), "questions[0].options[0].label: missing, give every option a label"),
        (r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":1}]}]}"#.into(), "questions[0].options[0].label: must be a string, got a number"),
        (r#"{"questions":[{"id":"a","question":"Q?","options":[{"label":"x","description":1}]}]}"#.into(), "questions[0].options[0].description: must be a string, got a number"),
        (r#"{"questions":[{"id":"a","question":"Q?","options":[3]}]}"#.into(), r#"questions[0].options[0]: must be an object with "label" or a string, got a number"#),
        (r#"{"questions":[{"id":"a","question":"Q?","options":["x","y","x"]}]}"#.into(), r#"questions[0].options[2].label: "x" repeats options[0], labels must differ within a question"#),
        (r#"{"questions":[{"id":"a","question":"Q?","choices":["x","x"]}]}"#.into(), r#"questions[0].choices[1].label: "x" repeats choices[0], labels must differ within a question"#),
        (json!({"questions":[{"id":"a","question":"Q?","options":["Approve","\u{410}pprove"]}]}).to_string(), r#"questions[0].options[1].label: "Аpprove⟨mixed scripts⟩" looks the same on screen as options[0] (look-alike or invisible characters), labels must differ in visible letters"#),
        (json!({"questions":[{"id":"a","question":"Q?","options":["Approve (Recommended)","Reject","Approve\u{fe0f} (Recommended)"]}]}).to_string(), r#"questions[0].options[2].label: "Approve\u{fe0f} (Recommended)" looks the same on screen as options[0] (look-alike or invisible characters), labels must differ in visible letters"#),
        (json!({"questions":[{"id":"a","question":"Q?","options":["Approve","\u{3164}Appro\u{34f}ve "]}]}).to_string(), r#"questions[0].options[1].label: "⟨1 blank character⟩Appro\u{34f}ve" looks the same on screen as options[0] (look-alike or invisible characters), labels must differ in visible letters"#),
        (r#"{"questions":[{"id":"a","question":"Q?","options":{"label":"x"}}]}"#.into(), r#"questions[0].options: must be an array of {"label","description"} objects, got an object"#),
        (r#"{"questions":[{"id":"a","question":"Q?","options":"x, y"}]}"#.into(), r#"questions[0].options: must be an array of {"label","description"} objects, got a string"#),
        (r#"{"questions":[{"id":"a","question":"Q?","options":["x"],"choices":["y"]}]}"#.into(), r#"questions[0]: both "options" and "choices" given, send only "options""#),
        (r#"{"questions":[{"id":"a","question":"Q?","multi_select":"yes"}]}"#.into(), "questions[0].multi_select: must be true or false, got a string"),
        (r#"{"questions":[{"id":"a","question":"Q?","multi_select":true,"multiSelect":false}]}"#.into(), r#"questions[0]: "multi_select" and "multiSelect" disagree, send only "multi_select""#),
        (json!({"questions": too_many}).to_string(), "questions: 11 questions exceed the limit of 10, ask the most important ones first"),
        (json!({"questions":[{"id":"a","question":"Q?","options":many_options}]}).to_string(), "questions[0].options: 27 options exceed the limit of 26, offer fewer choices"),
        (json!({"questions":[{"id":"a","question":long}]}).to_string(), "questions[0].question: 4001 characters exceed the limit of 4000, shorten it"),
        (json!({"questions":[{"id":long,"question":"Q?"}]}).to_string(), "questions[0].id: 4001 characters exceed the limit of 4000, shorten it"),
        (json!({"questions":[{"id":"a","question":"Q?","header":long}]}).to_string(), "questions[0].header: 4001 characters exceed the limit of 4000, shorten it"),
        (json!({"questions":[{"id":"a","question":"Q?","options":[long]}]}).to_string(), "questions[0].options[0].label: 4001 characters exceed the limit of 4000, shorten it"),
        (json!({"questions":[{"id":"a","question":"Q?","options":[{"label":"x","description":long}]}]}).to_string(), "questions[0].options[0].description: 4001 characters exceed the limit of 4000, shorten it"),
    ];
    for (input, violation) in cases {
        assert_eq!(
            refused(&input),
            format!("Error: invalid arguments: {violation}"),
            "input: {input}"
        );
    }
}

#[test]
fn violations_are_all_collected_in_document_order() {
    let input = r#"{"questions":[{"id":"a","question":""},{"id":"a","question":"Q?","options":["x","x"]},7]}"#;
    assert_eq!(
        refused(input),
        concat!(
            "Error: invalid arguments: questions[0].question: blank, write the question to ask the user; ",
            r#"questions[1].id: "a" is already the id of questions[0], give each question a unique id; "#,
            r#"questions[1].options[1].label: "x" repeats options[0], labels must differ within a question; "#,
            r#"questions[2]: must be an object with "id" and "question", got a number"#,
        )
    );
}

#[test]
fn caps_are_host_configurable() {
    let limits = Limits {
        max_questions: 1,
        max_options: 2,
        max_text_chars: 5,
    };
    let err = decode(
        r#"{"questions":[{"id":"a","question":"Q?","options":["x","y","z"]},{"id":"b","question":"Longer?"}]}"#,
        &limits,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Error: invalid arguments: questions: 2 questions exceed the limit of 1, ask the most important ones first; \
         questions[0].options: 3 options exceed the limit of 2, offer fewer choices; \
         questions[1].question: 7 characters exceed the limit of 5, shorten it"
    );
}

#[test]
fn a_value_and_its_text_decode_alike() {
    let value = json!({"questions":[{"id":"a","question":"Q?","options":["x"]}]});
    assert_eq!(
        decode(value.clone(), &Limits::default()).unwrap(),
        decode(value.to_string(), &Limits::default()).unwrap()
    );
}

#[test]
fn ignored_keys_are_reported_in_the_order_the_model_wrote_them() {
    let (_, leniencies) = accepted(
        r#"{"zeta":1,"questions":[{"id":"a","question":"Q?","urgency":1,"color":2}],"alpha":2}"#,
    );
    assert_eq!(
        leniencies,
        [
            "zeta: unknown key, ignored",
            "alpha: unknown key, ignored",
            "questions[0].urgency: unknown key, ignored",
            "questions[0].color: unknown key, ignored",
        ]
    );
}
