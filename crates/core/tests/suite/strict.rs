//! Arguments a strict-mode model emits: under OpenAI's and Anthropic's strict
//! schemas every optional field is present and `null` when unused; under DeepSeek's it holds
//! a neutral value (`""`, `[]`, `false`); a free-text question has `"options":[]`. These
//! decode to exactly the request of the lenient form that leaves the fields out.
//!
//! Each strict form is first checked against the strict schema it answers (a validator for
//! the keywords those schemas use, refusing any other keyword), so the forms tested are the
//! ones a strict-mode model can produce; the lenient form is refused by every strict schema,
//! so the strictness is real. The lenient corpus (`decode` table tests, `properties`) runs
//! unchanged beside these.

use ask_user_core::definition::{
    PARAMETERS, PARAMETERS_STRICT, PARAMETERS_STRICT_ANTHROPIC, PARAMETERS_STRICT_DEEPSEEK,
};
use ask_user_core::{AskUserQuestionRequest, Leniency, Limits, Question, QuestionOption, decode};
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};

/// How a strict schema says "none" for an optional field.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Absent {
    /// `null` (OpenAI and Anthropic strict).
    Null,
    /// `""` for text, `false` for `multi_select` (DeepSeek strict, which has no null type).
    Neutral,
}

/// The strict schemas, with how each says "none".
fn strict_schemas() -> [(&'static str, Value, Absent); 3] {
    let parse = |text| serde_json::from_str::<Value>(text).unwrap();
    [
        ("openai", parse(PARAMETERS_STRICT), Absent::Null),
        (
            "anthropic",
            parse(PARAMETERS_STRICT_ANTHROPIC),
            Absent::Null,
        ),
        (
            "deepseek",
            parse(PARAMETERS_STRICT_DEEPSEEK),
            Absent::Neutral,
        ),
    ]
}

/// `request` as a strict-mode model writes it: every field present.
fn strict_form(request: &AskUserQuestionRequest, absent: Absent) -> Value {
    let none_text = || match absent {
        Absent::Null => Value::Null,
        Absent::Neutral => json!(""),
    };
    let questions: Vec<Value> = request
        .questions()
        .iter()
        .map(|q| {
            let options: Vec<Value> = q
                .options
                .iter()
                .map(|o| {
                    json!({
                        "label": o.label,
                        "description": o.description.clone().map_or_else(none_text, Value::String),
                    })
                })
                .collect();
            json!({
                "id": q.id,
                "question": q.question,
                "header": q.header.clone().map_or_else(none_text, Value::String),
                "options": options,
                "multi_select": match (q.multi_select, absent) {
                    (false, Absent::Null) => Value::Null,
                    (multi, _) => Value::Bool(multi),
                },
            })
        })
        .collect();
    json!({ "questions": questions })
}

/// Validates `value` against `schema`, for the keywords the definition's schemas use; any
/// other keyword is a test failure, so nothing is silently ignored.
fn validate(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let map = schema.as_object().expect("a schema object");
    for key in map.keys() {
        assert!(
            [
                "type",
                "description",
                "properties",
                "required",
                "additionalProperties",
                "items",
                "minItems",
                "anyOf"
            ]
            .contains(&key.as_str()),
            "the validator does not know {key}"
        );
    }
    if let Some(branches) = map.get("anyOf").and_then(Value::as_array)
        && !branches.iter().any(|b| validate(b, value, path).is_ok())
    {
        return Err(format!("{path}: {value} matches no anyOf branch"));
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(tys)) => tys.iter().filter_map(Value::as_str).collect(),
        _ => return Ok(()),
    };
    let ty = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !types.contains(&ty) {
        return Err(format!("{path}: {value} is not {types:?}"));
    }
    match value {
        Value::Object(object) => {
            let properties = map.get("properties").and_then(Value::as_object);
            for key in map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let key = key.as_str().unwrap();
                if !object.contains_key(key) {
                    return Err(format!("{path}: {key} missing"));
                }
            }
            for (key, item) in object {
                match properties.and_then(|p| p.get(key)) {
                    Some(sub) => validate(sub, item, &format!("{path}.{key}"))?,
                    None if map.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        return Err(format!("{path}: {key} not allowed"));
                    }
                    None => {}
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            if (items.len() as u64) < min {
                return Err(format!("{path}: fewer than {min} items"));
            }
            let item_schema = map.get("items");
            items.iter().enumerate().try_for_each(|(i, item)| {
                item_schema.map_or(Ok(()), |s| validate(s, item, &format!("{path}[{i}]")))
            })
        }
        _ => Ok(()),
    }
}

/// Decodes `arguments` both as the text a provider hands over and as a parsed value.
fn decode_both(arguments: &Value) -> (AskUserQuestionRequest, Vec<Leniency>) {
    let limits = Limits::default();
    let from_text = decode(arguments.to_string(), &limits).expect("the text decodes");
    let from_value = decode(arguments.clone(), &limits).expect("the value decodes");
    assert_eq!(from_text, from_value);
    (from_text.request, from_text.leniencies)
}

fn question(id: &str, text: &str) -> Question {
    Question {
        id: id.into(),
        question: text.into(),
        header: None,
        options: Vec::new(),
        multi_select: false,
    }
}

fn option(label: &str, description: Option<&str>) -> QuestionOption {
    QuestionOption {
        label: label.into(),
        description: description.map(Into::into),
    }
}

#[test]
fn what_a_strict_model_sends_decodes_to_the_request_of_the_lenient_form() {
    let lenient = json!({"questions": [
        {"id": "db", "header": "Database", "question": "Which database?", "options": [
            {"label": "PostgreSQL (Recommended)", "description": "Relational."},
            {"label": "SQLite"}]},
        {"id": "features", "question": "Which features?", "multi_select": true,
         "options": [{"label": "Auth"}, {"label": "Billing"}]},
        {"id": "name", "question": "What name?"}
    ]});
    let nulls = json!({"questions": [
        {"id": "db", "question": "Which database?", "header": "Database", "options": [
            {"label": "PostgreSQL (Recommended)", "description": "Relational."},
            {"label": "SQLite", "description": null}], "multi_select": null},
        {"id": "features", "question": "Which features?", "header": null,
         "options": [{"label": "Auth", "description": null}, {"label": "Billing", "description": null}],
         "multi_select": true},
        {"id": "name", "question": "What name?", "header": null, "options": [], "multi_select": null}
    ]});
    let nulls_with_false = json!({"questions": [
        {"id": "db", "question": "Which database?", "header": "Database", "options": [
            {"label": "PostgreSQL (Recommended)", "description": "Relational."},
            {"label": "SQLite", "description": null}], "multi_select": false},
        {"id": "features", "question": "Which features?", "header": null,
         "options": [{"label": "Auth", "description": null}, {"label": "Billing", "description": null}],
         "multi_select": true},
        {"id": "name", "question": "What name?", "header": null, "options": [], "multi_select": false}
    ]});
    let neutral = json!({"questions": [
        {"id": "db", "question": "Which database?", "header": "Database", "options": [
            {"label": "PostgreSQL (Recommended)", "description": "Relational."},
            {"label": "SQLite", "description": ""}], "multi_select": false},
        {"id": "features", "question": "Which features?", "header": "",
         "options": [{"label": "Auth", "description": ""}, {"label": "Billing", "description": ""}],
         "multi_select": true},
        {"id": "name", "question": "What name?", "header": "", "options": [], "multi_select": false}
    ]});
    let expected = AskUserQuestionRequest::new(
        vec![
            Question {
                header: Some("Database".into()),
                options: vec![
                    option("PostgreSQL (Recommended)", Some("Relational.")),
                    option("SQLite", None),
                ],
                ..question("db", "Which database?")
            },
            Question {
                options: vec![option("Auth", None), option("Billing", None)],
                multi_select: true,
                ..question("features", "Which features?")
            },
            question("name", "What name?"),
        ],
        &Limits::default(),
    )
    .unwrap();

    let (request, leniencies) = decode_both(&lenient);
    assert_eq!(request, expected);
    assert!(leniencies.is_empty(), "{leniencies:?}");

    let (openai, anthropic, deepseek) = {
        let [o, a, d] = strict_schemas();
        (o.1, a.1, d.1)
    };
    for (schema, name) in [
        (&openai, "openai"),
        (&anthropic, "anthropic"),
        (&deepseek, "deepseek"),
    ] {
        assert!(
            validate(schema, &lenient, "$").is_err(),
            "the {name} strict schema refuses the lenient form"
        );
    }
    for arguments in [&nulls, &nulls_with_false] {
        validate(&openai, arguments, "$").unwrap();
        validate(&anthropic, arguments, "$").unwrap();
        let (request, leniencies) = decode_both(arguments);
        assert_eq!(request, expected);
        // A null is read as absent and reported (hosts log it), nothing else.
        assert!(
            leniencies
                .iter()
                .all(|l| matches!(l, Leniency::NullField { .. })),
            "{leniencies:?}"
        );
    }
    let (_, leniencies) = decode_both(&nulls);
    let paths: Vec<String> = leniencies.iter().map(ToString::to_string).collect();
    assert_eq!(
        paths,
        [
            "questions[0].options[1].description: null, read as absent",
            "questions[0].multi_select: null, read as absent",
            "questions[1].header: null, read as absent",
            "questions[1].options[0].description: null, read as absent",
            "questions[1].options[1].description: null, read as absent",
            "questions[2].header: null, read as absent",
            "questions[2].multi_select: null, read as absent",
        ]
    );

    validate(&deepseek, &neutral, "$").unwrap();
    assert!(
        validate(&deepseek, &nulls, "$").is_err(),
        "no null in DeepSeek strict"
    );
    let (request, leniencies) = decode_both(&neutral);
    assert_eq!(request, expected);
    assert!(
        leniencies.is_empty(),
        "neutral values are no leniency: {leniencies:?}"
    );
}

#[test]
fn the_validator_accepts_the_lenient_form_under_the_canonical_schema() {
    // The lenient form is what the non-strict exports describe.
    let canonical: Value = serde_json::from_str(PARAMETERS).unwrap();
    let lenient = json!({"questions": [{"id": "go", "question": "Deploy now?"}]});
    validate(&canonical, &lenient, "$").unwrap();
    assert!(validate(&canonical, &json!({"questions": []}), "$").is_err());
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z][A-Za-z ?]{0,12}",
        1 => "[^\u{0}-\u{1f}]{1,8}".prop_filter("not blank", |s| !s.trim().is_empty()),
    ]
}

fn request() -> impl Strategy<Value = AskUserQuestionRequest> {
    let option = (text(), proptest::option::of(text()));
    let question = (
        text(),
        proptest::option::of(text()),
        proptest::collection::vec(option, 0..5),
        any::<bool>(),
    );
    proptest::collection::vec(question, 1..5).prop_map(|questions| {
        let questions = questions
            .into_iter()
            .enumerate()
            .map(|(i, (text, header, options, multi_select))| Question {
                id: format!("q{i}"),
                question: text,
                header,
                // A numbered suffix keeps labels unique within a question.
                options: options
                    .into_iter()
                    .enumerate()
                    .map(|(j, (label, description))| QuestionOption {
                        label: format!("{label} {j}"),
                        description,
                    })
                    .collect(),
                multi_select,
            })
            .collect();
        AskUserQuestionRequest::new(questions, &Limits::default()).unwrap()
    })
}

proptest! {
    #![proptest_config(super::seeded::config(256, 0x5_7c1c7))]

    #[test]
    fn every_strict_form_is_valid_under_its_schema_and_decodes_to_the_same_request(
        request in request()
    ) {
        let lenient = serde_json::to_value(&request).unwrap();
        prop_assert_eq!(&decode_both(&lenient).0, &request);
        for (name, schema, absent) in strict_schemas() {
            let strict = strict_form(&request, absent);
            prop_assert!(validate(&schema, &strict, "$").is_ok(), "{}: {:?}", name, validate(&schema, &strict, "$"));
            let (decoded, leniencies) = decode_both(&strict);
            prop_assert_eq!(&decoded, &request, "{}", name);
            if absent == Absent::Neutral {
                prop_assert!(leniencies.is_empty(), "{}: {:?}", name, leniencies);
            }
        }
    }
}
