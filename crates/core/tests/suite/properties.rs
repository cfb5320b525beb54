//! Property tests over decode, normalise and render.
//!
//! - arbitrary JSON values, arbitrary text and broken JSON text never panic [`decode`], and
//!   text decodes like the value it holds (text may take the decoder's fast path for
//!   canonical arguments, a value never does: this checks the two paths agree);
//! - every request the decoder accepts round-trips through its canonical JSON;
//! - for any accepted request and any answer: [`normalise`] accepts exactly the answers docs/contract.md §4
//!   allows, and what it accepts renders as JSON that parses, matches `OUTPUT_SCHEMA`
//!   (checked structurally: keys and types), has one item per question in request order,
//!   labels in option order without repeats, `custom` trimmed and non-blank, keeps the
//!   human's meaning, and normalising again changes nothing.
//!
//! The seed is fixed so CI sees the same cases every run; set `PROPTEST_RNG_SEED` to explore.

use std::collections::BTreeSet;

use ask_user_core::definition::OUTPUT_SCHEMA;
use ask_user_core::{
    AnswerItem, Answers, AskUserQuestionRequest, InvalidAnswer, Limits, Outcome, decode, normalise,
    render,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Keys the decoder knows (and some it does not), so arbitrary objects often hit real paths.
const KEYS: [&str; 14] = [
    "questions",
    "question",
    "id",
    "header",
    "options",
    "choices",
    "label",
    "description",
    "multi_select",
    "multiSelect",
    "multiple",
    "multi",
    "note",
    "",
];

fn small_string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{0,6}",
        1 => proptest::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
        1 => prop_oneof![Just(" \t\n".to_owned()), Just("(Recommended)".to_owned()), Just("q1".to_owned())],
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::sample::select(&KEYS[..]).prop_map(str::to_owned),
        1 => small_string(),
    ]
}

/// Numbers that print and parse back to the same value.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        proptest::sample::select(vec![0.5, -1.25, 1e3, 3.0]).prop_map(Value::from),
    ]
}

/// Arbitrary JSON, biased towards the shapes the decoder looks at; now and then an array
/// or object as a JSON string (the stringified leniencies).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        small_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            3 => proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            4 => proptest::collection::vec((key(), inner.clone()), 0..7)
                .prop_map(|entries| Value::Object(Map::from_iter(entries))),
            1 => proptest::collection::vec(inner, 0..4)
                .prop_map(|items| Value::String(Value::Array(items).to_string())),
        ]
    })
}

/// Arguments shaped like what models send: canonical or one of the accepted variants, with
/// now and then something wrong, so a good share decodes.
fn model_arguments() -> impl Strategy<Value = Value> {
    let label = prop_oneof![
        4 => "[A-Za-z]{1,6}( \\(Recommended\\))?",
        1 => small_string(),
    ];
    let option = prop_oneof![
        3 => (label.clone(), proptest::option::of(small_string()))
            .prop_map(|(label, description)| match description {
                Some(d) => json!({ "label": label, "description": d }),
                None => json!({ "label": label }),
            }),
        1 => label.prop_map(Value::String),
        1 => Just(json!({ "label": null })),
    ];
    let question = (
        prop_oneof![
            3 => "[a-z]{1,3}".prop_map(Value::String),
            1 => (0u32..20).prop_map(Value::from),
            1 => Just(Value::Null),
        ],
        proptest::option::of(small_string()),
        proptest::option::of(small_string()),
        proptest::option::weighted(0.8, proptest::collection::vec(option, 0..6)),
        proptest::sample::select(&["options", "choices", "options-as-string"][..]),
        proptest::option::of((
            proptest::sample::select(&["multi_select", "multiSelect", "multiple", "multi"][..]),
            any::<bool>(),
        )),
    )
        .prop_map(|(id, question, header, options, options_key, multi)| {
            let mut map = Map::new();
            if !id.is_null() {
                map.insert("id".into(), id);
            }
            if let Some(q) = question {
                map.insert("question".into(), Value::String(format!("{q}?")));
            }
            if let Some(h) = header {
                map.insert("header".into(), Value::String(h));
            }
            if let Some(options) = options {
                let options = Value::Array(options);
                match options_key {
                    "options-as-string" => {
                        map.insert("options".into(), Value::String(options.to_string()))
                    }
                    key => map.insert(key.into(), options),
                };
            }
            if let Some((key, value)) = multi {
                map.insert(key.into(), Value::Bool(value));
            }
            Value::Object(map)
        })
        .boxed();
    prop_oneof![
        4 => proptest::collection::vec(question.clone(), 1..5).prop_map(|qs| json!({ "questions": qs })),
        1 => proptest::collection::vec(question.clone(), 1..5)
            .prop_map(|qs| json!({ "questions": Value::Array(qs).to_string() })),
        1 => question,
    ]
}

/// An accepted request (decoded from model-like arguments).
fn accepted_request() -> impl Strategy<Value = AskUserQuestionRequest> {
    model_arguments().prop_filter_map("the decoder refuses these arguments", |args| {
        decode(args, &Limits::default()).ok().map(|d| d.request)
    })
}

/// Any answer for `request`: per question its own labels (repeated, out of order, several for
/// a single-select) and blank, padded or plain custom text; shuffled, some questions left
/// out; now and then a foreign label, an unknown id or a repeated item.
fn any_answers(request: &AskUserQuestionRequest) -> impl Strategy<Value = Answers> + use<> {
    let custom = proptest::option::of(prop_oneof![
        Just(String::new()),
        Just("  \t ".to_owned()),
        small_string(),
        small_string().prop_map(|s| format!("  {s}\n")),
    ]);
    let items: Vec<_> = request
        .questions()
        .iter()
        .map(|q| {
            let id = q.id.clone();
            let labels: Vec<String> = q
                .options
                .iter()
                .map(|o| o.label.clone())
                .chain(["Other".to_owned()])
                .collect();
            let own = labels.len() - 1;
            let label = prop_oneof![
                12 => (0..own.max(1)).prop_map(move |i| i.min(own)),
                1 => Just(own),
            ]
            .prop_map(move |i| labels[i].clone());
            let max = if q.multi_select { 5 } else { 2 };
            (
                proptest::collection::vec(label, 0..max),
                custom.clone(),
                0..10u8,
            )
                .prop_map(move |(selected, custom, keep)| {
                    (keep > 0).then(|| AnswerItem {
                        id: id.clone(),
                        selected,
                        custom,
                    })
                })
        })
        .collect();
    (items.prop_shuffle(), 0..20u8, "[a-z]{1,3}").prop_map(|(items, extra, unknown)| {
        let mut answers: Vec<AnswerItem> = items.into_iter().flatten().collect();
        match extra {
            0 => answers.push(AnswerItem::skipped(unknown)),
            1 if !answers.is_empty() => answers.push(answers[0].clone()),
            _ => {}
        }
        Answers { answers }
    })
}

/// Checks `value` against the subset of JSON Schema `OUTPUT_SCHEMA` uses (`type`,
/// `properties`, `required`, `items`), refusing keys the schema does not name.
fn check_schema(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let ty = schema["type"].as_str().unwrap_or_default();
    match (ty, value) {
        ("object", Value::Object(map)) => {
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for required in schema["required"].as_array().into_iter().flatten() {
                let key = required.as_str().unwrap_or_default();
                if !map.contains_key(key) {
                    return Err(format!("{path}: missing {key}"));
                }
            }
            for (key, value) in map {
                let sub = properties
                    .get(key)
                    .ok_or_else(|| format!("{path}: unexpected key {key}"))?;
                check_schema(sub, value, &format!("{path}.{key}"))?;
            }
            Ok(())
        }
        ("array", Value::Array(items)) => items.iter().enumerate().try_for_each(|(i, item)| {
            check_schema(&schema["items"], item, &format!("{path}[{i}]"))
        }),
        ("string", Value::String(_)) => Ok(()),
        _ => Err(format!("{path}: {value} is not of type {ty}")),
    }
}

/// Why docs/contract.md §4 refuses `answers` for `request`, if it does (the first reason, in answer order).
fn expected_refusal(request: &AskUserQuestionRequest, answers: &Answers) -> Option<InvalidAnswer> {
    let mut seen = BTreeSet::new();
    for item in &answers.answers {
        if request.question(&item.id).is_none() {
            return Some(InvalidAnswer::UnknownId {
                id: item.id.clone(),
            });
        }
        if !seen.insert(item.id.as_str()) {
            return Some(InvalidAnswer::RepeatedId {
                id: item.id.clone(),
            });
        }
    }
    for question in request.questions() {
        let Some(item) = answers.answers.iter().find(|a| a.id == question.id) else {
            return Some(InvalidAnswer::Omitted {
                id: question.id.clone(),
            });
        };
        if let Some(label) = item
            .selected
            .iter()
            .find(|l| question.option_index(l).is_none())
        {
            return Some(InvalidAnswer::UnknownLabel {
                id: item.id.clone(),
                label: label.clone(),
            });
        }
        let distinct: BTreeSet<&String> = item.selected.iter().collect();
        if !question.multi_select && distinct.len() > 1 {
            return Some(InvalidAnswer::TooManySelected {
                id: item.id.clone(),
                count: distinct.len(),
            });
        }
    }
    None
}

proptest! {
    #![proptest_config(super::seeded::config(512, 0x00a5_c0de))]

    #[test]
    fn arbitrary_json_never_panics_decode_and_text_decodes_like_its_value(value in json_value()) {
        let from_value = decode(value.clone(), &Limits::default());
        let from_text = decode(value.to_string(), &Limits::default());
        prop_assert_eq!(from_value, from_text);
    }

    /// Text takes the canonical fast path when it can; a value never does. Both must agree.
    #[test]
    fn model_arguments_decode_alike_as_text_and_as_value(args in model_arguments(), cap in 1usize..12) {
        for limits in [Limits::default(), Limits { max_questions: cap, max_options: cap, max_text_chars: cap }] {
            prop_assert_eq!(decode(args.to_string(), &limits), decode(args.clone(), &limits));
        }
    }

    #[test]
    fn canonical_requests_decode_alike_as_text_and_as_value(request in accepted_request(), cap in 1usize..12) {
        let text = request.to_canonical_json();
        let value: Value = serde_json::from_str(&text).expect("canonical JSON parses");
        for limits in [Limits::default(), Limits { max_questions: cap, max_options: cap, max_text_chars: cap }] {
            prop_assert_eq!(decode(text.as_str(), &limits), decode(value.clone(), &limits));
        }
    }

    #[test]
    fn arbitrary_text_never_panics_decode(text in any::<String>()) {
        let _ = decode(text, &Limits::default());
    }

    #[test]
    fn broken_json_text_never_panics_decode(
        args in model_arguments(),
        cut in any::<prop::sample::Index>(),
        insert in any::<char>(),
    ) {
        let text = args.to_string();
        let chars: Vec<char> = text.chars().collect();
        let at = cut.index(chars.len() + 1);
        let truncated: String = chars[..at].iter().collect();
        let inserted: String = chars[..at].iter().chain([&insert]).chain(&chars[at..]).collect();
        let _ = decode(truncated, &Limits::default());
        let _ = decode(inserted, &Limits::default());
    }

    #[test]
    fn decode_never_panics_under_tiny_caps(args in model_arguments(), cap in 0usize..3) {
        let limits = Limits { max_questions: cap, max_options: cap, max_text_chars: cap };
        if let Ok(decoded) = decode(args, &limits) {
            prop_assert!(decoded.request.questions().len() <= cap);
        }
    }

    #[test]
    fn an_accepted_request_round_trips_through_its_canonical_json(request in accepted_request()) {
        let decoded = decode(request.to_canonical_json(), &Limits::default());
        prop_assert_eq!(decoded.map(|d| (d.request, d.leniencies)), Ok((request, Vec::new())));
    }

    #[test]
    fn normalised_answers_render_schema_valid_canonical_json(
        (request, answers) in accepted_request()
            .prop_flat_map(|request| { let answers = any_answers(&request); (Just(request), answers) })
    ) {
        let expected = expected_refusal(&request, &answers);
        let normalised = match normalise(&request, answers.clone()) {
            Err(refusal) => {
                prop_assert_eq!(Some(refusal), expected);
                return Ok(());
            }
            Ok(normalised) => normalised,
        };
        prop_assert_eq!(expected, None);

        // Renders JSON that parses, matches OUTPUT_SCHEMA and is what the model reads.
        let text = render(&normalised);
        let parsed: Value = serde_json::from_str(&text).expect("rendered JSON parses");
        let schema: Value = serde_json::from_str(OUTPUT_SCHEMA).expect("the schema parses");
        if let Err(problem) = check_schema(&schema, &parsed, "$") {
            prop_assert!(false, "{} does not match OUTPUT_SCHEMA: {}", text, problem);
        }
        let outcome = Outcome::Answered(normalised.clone());
        prop_assert_eq!(outcome.text(), text.clone());
        prop_assert_eq!(outcome.structured(), Some(parsed));
        prop_assert!(!text.contains(['\n', '\r']), "one line");

        // One item per question, in request order.
        let ids: Vec<&str> = normalised.answers.iter().map(|a| a.id.as_str()).collect();
        let question_ids: Vec<&str> = request.questions().iter().map(|q| q.id.as_str()).collect();
        prop_assert_eq!(ids, question_ids);

        for (question, item) in request.questions().iter().zip(&normalised.answers) {
            // Labels are options, in option order, without repeats.
            let indices: Vec<usize> = item
                .selected
                .iter()
                .map(|l| question.option_index(l).expect("a selected label is an option"))
                .collect();
            prop_assert!(indices.windows(2).all(|w| w[0] < w[1]), "option order: {:?}", indices);
            // Custom is trimmed and not blank.
            if let Some(custom) = &item.custom {
                prop_assert_eq!(custom.trim(), custom.as_str());
                prop_assert!(!custom.is_empty());
            }
            // The meaning is kept: the labels chosen (unless a single-select's own answer
            // overrides them) and the trimmed own answer.
            let given = answers.answers.iter().find(|a| a.id == question.id);
            let custom = given
                .and_then(|a| a.custom.as_deref())
                .map(str::trim)
                .filter(|c| !c.is_empty());
            prop_assert_eq!(item.custom.as_deref(), custom);
            let chosen: BTreeSet<&String> = given.map(|a| a.selected.iter().collect()).unwrap_or_default();
            let kept: BTreeSet<&String> = item.selected.iter().collect();
            if question.multi_select || custom.is_none() {
                prop_assert_eq!(kept, chosen);
            } else {
                prop_assert!(kept.is_empty(), "a single-select's own answer overrides its labels");
            }
            if !question.multi_select {
                prop_assert!(item.selected.len() <= 1);
            }
        }

        // Idempotent.
        prop_assert_eq!(normalise(&request, normalised.clone()), Ok(normalised));
    }
}
