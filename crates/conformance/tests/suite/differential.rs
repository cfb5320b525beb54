//! Differential test against the published reference: the bytes we render
//! for an answer equal the reference's `definition.output.render` of the same value, and the
//! reference's validator agrees with our decoder wherever docs/contract.md §3 agrees with it.
//!
//! Cases come from proptest strategies run with a fixed seed (so a failure reproduces), are
//! written as JSON lines to one `node tools/node/render-oracle.mjs` process, and its answers
//! are compared line by line. Node and the reference packages are real (installed by
//! `scripts/setup`); nothing is mocked.
//!
//! Three kinds of case:
//! - *render*: arbitrary answers (every C0 control, `"`, `\`, DEL, C1, U+2028/2029, BOM, CJK,
//!   emoji, astral characters, long strings), rendered as they are;
//! - *call*: a valid request (sometimes with extra keys both sides ignore) and an answer our
//!   normaliser accepts: both validators accept, the renders agree, and our whole call
//!   (decode → ask → normalise → render) gives the reference's whole call's text when its
//!   provider returns our normalised answer;
//! - *refused*: a valid request broken in a way both sides refuse (wrong types, missing
//!   required fields). Only the verdict is compared: the texts differ on purpose.
//!
//! A second test checks docs/contract.md §2: our parameter schema has exactly the reference's field names,
//! and the same required ones.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;

use ask_user_conformance::repo_root;
use ask_user_core::{
    AnswerItem, Answers, AskUserQuestionRequest, AskUserQuestionTool, ExecutionContext, Limits,
    Question, QuestionOption, decode, normalise, render,
};
use ask_user_test_support::answerers::Fixed;
use pretty_assertions::assert_eq;

use super::catalog::reference_definition;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

/// Cases of each generated kind; the batch runs through one node process.
const CASES: usize = 1_000;

/// What the reference says about one case.
#[derive(Debug, serde::Deserialize)]
struct Verdict {
    violations: Vec<String>,
    render: String,
    call: Option<String>,
}

/// Runs every `(args, answers)` through the reference in one node process; `answers` is JSON
/// text (see [`ascii_json`]) so that its key order reaches `JSON.stringify` as written.
fn reference(cases: &[(Value, String)]) -> Vec<Verdict> {
    let root = repo_root();
    let script = root.join("tools/node/render-oracle.mjs");
    assert!(
        root.join("tools/node/node_modules/@deepseek-ai/dsh-tool-ask-user")
            .is_dir(),
        "the reference packages are missing: run scripts/setup"
    );
    let mut child = Command::new("node")
        .arg(&script)
        .current_dir(root.join("tools/node"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (installed by scripts/setup)");
    let mut input = String::new();
    for (args, answers) in cases {
        input.push_str(&format!(r#"{{"args":{args},"answers":{answers}}}"#));
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("piped stdin");
    // Write on a thread: node answers only at the end, but a full pipe must not deadlock.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("node finishes");
    writer
        .join()
        .expect("writer thread")
        .expect("write to node");
    assert!(
        output.status.success(),
        "render-oracle.mjs failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts: Vec<Verdict> = String::from_utf8(output.stdout)
        .expect("UTF-8 from node")
        .lines()
        .map(|line| serde_json::from_str(line).expect("one verdict per line"))
        .collect();
    assert_eq!(verdicts.len(), cases.len(), "one verdict per case");
    verdicts
}

/// Characters that exercise every escaping rule of `JSON.stringify`.
fn nasty_char() -> impl Strategy<Value = char> {
    prop_oneof![
        2 => proptest::char::range('\u{0}', '\u{1f}'),
        1 => prop_oneof![Just('"'), Just('\\'), Just('/'), Just('\u{7f}')],
        1 => proptest::char::range('\u{80}', '\u{9f}'),
        1 => prop_oneof![Just('\u{2028}'), Just('\u{2029}'), Just('\u{feff}'), Just('\u{fffd}'), Just('\u{ffff}')],
        1 => proptest::char::range('\u{4e00}', '\u{9fff}'),
        1 => proptest::char::range('\u{1f300}', '\u{1faff}'),
        1 => proptest::char::range('\u{10000}', '\u{10ffff}'),
        1 => proptest::char::range('\u{a0}', '\u{d7ff}'),
        4 => proptest::char::range(' ', '~'),
    ]
}

/// Short strings of nasty characters, now and then a long one, now and then any characters.
fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => proptest::collection::vec(nasty_char(), 0..24).prop_map(String::from_iter),
        // Long: a short run repeated (generating thousands of characters one by one is slow).
        1 => (proptest::collection::vec(nasty_char(), 1..24), 20..200usize)
            .prop_map(|(run, times)| String::from_iter(run).repeat(times)),
        1 => proptest::collection::vec(any::<char>(), 0..24).prop_map(String::from_iter),
    ]
}

/// A string that is not blank (so decoding keeps it as it is), within the text cap.
fn text() -> impl Strategy<Value = String> {
    nasty_string().prop_map(|s| {
        let s = capped(s);
        if s.trim().is_empty() {
            format!("{s}x")
        } else {
            s
        }
    })
}

fn optional_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(nasty_string())
        .prop_map(|s| s.map(capped).filter(|s| !s.trim().is_empty()))
}

/// At most 3,000 characters, well under the 4,000 cap even with a suffix added (a repeated
/// run can otherwise exceed it, and the request would not decode).
fn capped(s: String) -> String {
    s.chars().take(3_000).collect()
}

/// A request our decoder accepts unchanged: unique non-blank ids and labels, within the caps.
fn request() -> impl Strategy<Value = AskUserQuestionRequest> {
    let option = (text(), optional_text());
    let question = (
        text(),
        text(),
        optional_text(),
        proptest::collection::vec(option, 0..6),
        any::<bool>(),
        any::<bool>(),
    );
    proptest::collection::vec(question, 1..5).prop_map(|questions| {
        let questions = questions
            .into_iter()
            .enumerate()
            .map(
                |(i, (id, question, header, options, multi_select, recommend))| Question {
                    // A numbered suffix keeps ids (and below, labels) unique and non-blank.
                    id: format!("{id}#{i}"),
                    question,
                    header,
                    options: options
                        .into_iter()
                        .enumerate()
                        .map(|(j, (label, description))| QuestionOption {
                            label: if j == 0 && recommend {
                                format!("{label}·{j} (Recommended)")
                            } else {
                                format!("{label}·{j}")
                            },
                            description,
                        })
                        .collect(),
                    multi_select,
                },
            )
            .collect();
        AskUserQuestionRequest::new(questions, &limits()).unwrap()
    })
}

/// The caps of the test: long generated strings must pass (the reference has no cap).
fn limits() -> Limits {
    Limits {
        max_text_chars: 1_000_000,
        ..Limits::default()
    }
}

/// Answers `normalise` accepts for `request`, in a shuffled order, with repeated labels,
/// whitespace around custom text, and explicitly skipped questions (an omitted one is refused).
fn answers_for(request: &AskUserQuestionRequest) -> impl Strategy<Value = Answers> + use<> {
    let items: Vec<_> = request
        .questions()
        .iter()
        .map(|q| {
            let id = q.id.clone();
            let labels: Vec<String> = q.options.iter().map(|o| o.label.clone()).collect();
            let multi = q.multi_select;
            let picks = if labels.is_empty() {
                Just(Vec::new()).boxed()
            } else if multi {
                proptest::collection::vec(proptest::sample::select(labels), 0..6).boxed()
            } else {
                proptest::option::of(proptest::sample::select(labels))
                    .prop_map(|l| l.map(|l| vec![l.clone(), l]).unwrap_or_default())
                    .boxed()
            };
            let custom = proptest::option::of((
                prop_oneof![Just(""), Just(" "), Just("\t\n")],
                nasty_string(),
            ))
            .prop_map(|c| c.map(|(pad, s)| format!("{pad}{s}{pad}")));
            (any::<u8>(), picks, custom).prop_map(move |(mode, selected, custom)| {
                Some(if mode % 8 != 0 {
                    AnswerItem {
                        id: id.clone(),
                        selected,
                        custom,
                    }
                } else {
                    AnswerItem::skipped(id.clone())
                })
            })
        })
        .collect();
    items.prop_shuffle().prop_map(|items| Answers {
        answers: items.into_iter().flatten().collect(),
    })
}

/// The request as the model sends it, now and then with extra keys both sides ignore.
fn arguments(request: &AskUserQuestionRequest, extra_keys: bool) -> Value {
    let mut args = serde_json::to_value(request).expect("a request serialises");
    if extra_keys {
        for question in args["questions"].as_array_mut().expect("questions") {
            question["note"] = json!("ignored");
            if let Some(options) = question.get_mut("options").and_then(Value::as_array_mut) {
                for option in options {
                    option["icon"] = json!(7);
                }
            }
        }
    }
    args
}

/// Ways to break a valid request that both the reference and docs/contract.md §3 refuse.
const BREAKS: [&str; 12] = [
    "arguments an array",
    "questions missing",
    "questions an object",
    "question a number",
    "question missing (no header)",
    "id a boolean",
    "header a number",
    "options an object",
    "option a number",
    "option without label",
    "description a number",
    "multi_select a string",
];

fn broken(request: &AskUserQuestionRequest, how: usize) -> Value {
    let mut args = arguments(request, false);
    let first = &mut args["questions"][0];
    match how {
        0 => return json!([args]),
        1 => return json!({ "asks": args["questions"].clone() }),
        2 => args["questions"] = json!({ "id": "a", "question": "Q?" }),
        3 => args["questions"][0] = json!(42),
        4 => {
            let map = first.as_object_mut().expect("object");
            map.remove("question");
            map.remove("header");
        }
        5 => first["id"] = json!(true),
        6 => first["header"] = json!(3),
        7 => first["options"] = json!({ "label": "A" }),
        8 => first["options"] = json!([{ "label": "A" }, 2]),
        9 => first["options"] = json!([{ "description": "no label" }]),
        10 => first["options"] = json!([{ "label": "A", "description": 1 }]),
        _ => first["multi_select"] = json!("yes"),
    }
    args
}

/// The answers as JSON text written independently of serde_json: keys in output order and
/// every string escaped down to ASCII (`\uXXXX`, surrogate pairs beyond the BMP), so the
/// bytes node parses share nothing with the bytes we render.
fn ascii_json(answers: &Answers) -> String {
    fn string(out: &mut String, s: &str) {
        out.push('"');
        for unit in s.encode_utf16() {
            out.push_str(&format!("\\u{unit:04X}"));
        }
        out.push('"');
    }
    let mut out = String::from(r#"{"answers":["#);
    for (i, item) in answers.answers.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"id":"#);
        string(&mut out, &item.id);
        out.push_str(r#","selected":["#);
        for (j, label) in item.selected.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            string(&mut out, label);
        }
        out.push(']');
        if let Some(custom) = &item.custom {
            out.push_str(r#","custom":"#);
            string(&mut out, custom);
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}

fn generate<S: Strategy>(runner: &mut TestRunner, strategy: S) -> S::Value {
    strategy
        .new_tree(runner)
        .expect("the strategy generates")
        .current()
}

/// Strings that hold every character class once, exhaustively where it is small.
fn exhaustive_strings() -> Vec<String> {
    let ascii: String = ('\u{0}'..='\u{7f}').collect();
    let latin: String = ('\u{80}'..='\u{7ff}').collect();
    let bmp: String = ('\u{800}'..='\u{ffff}').collect(); // surrogates are not chars
    let astral: String = ('\u{10000}'..='\u{10ffff}').step_by(97).collect();
    vec![
        ascii,
        latin,
        bmp,
        astral,
        String::new(),
        "\u{2028}\u{2029}".into(),
        "\"\\\"\\\\".into(),
    ]
}

#[test]
fn rendering_and_validation_agree_with_the_reference() {
    // XorShift, not the default ChaCha: in a debug build ChaCha dominates the run time.
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::XorShift),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let limits = limits();

    /// What we expect of each case, beside the reference's verdict.
    enum Expect {
        Render(String),
        Call { render: String, call: String },
        Refused(String),
    }
    let mut cases: Vec<(Value, String)> = Vec::new();
    let mut expected: Vec<Expect> = Vec::new();
    let trivial = json!({ "questions": [{ "id": "a", "question": "Q?" }] });

    // Render: arbitrary answers, not normalised.
    let raw_answers = proptest::collection::vec(
        (
            nasty_string(),
            proptest::collection::vec(nasty_string(), 0..4),
            proptest::option::of(nasty_string()),
        )
            .prop_map(|(id, selected, custom)| AnswerItem {
                id,
                selected,
                custom,
            }),
        0..4,
    )
    .prop_map(|answers| Answers { answers });
    let mut renders: Vec<Answers> = (0..CASES)
        .map(|_| generate(&mut runner, &raw_answers))
        .collect();
    renders.extend(exhaustive_strings().into_iter().map(|s| Answers {
        answers: vec![AnswerItem {
            id: s.clone(),
            selected: vec![s.clone()],
            custom: Some(s),
        }],
    }));
    for answers in renders {
        cases.push((trivial.clone(), ascii_json(&answers)));
        expected.push(Expect::Render(render(&answers)));
    }

    // Call: a valid request and an answer the normaliser accepts.
    let requests = request();
    for n in 0..CASES {
        let request = generate(&mut runner, &requests);
        let answers = generate(&mut runner, answers_for(&request));
        let args = arguments(&request, n % 3 == 0);
        let decoded = decode(args.clone(), &limits).expect("a generated request decodes");
        assert_eq!(
            decoded.request, request,
            "decoding keeps a canonical request"
        );
        let normalised = normalise(&request, answers.clone()).expect("generated answers fit");
        let tool = AskUserQuestionTool::new(Arc::new(Fixed::new(answers))).with_limits(limits);
        let call = runtime
            .block_on(tool.call(args.to_string(), ExecutionContext::default()))
            .text();
        cases.push((args, ascii_json(&normalised)));
        expected.push(Expect::Call {
            render: render(&normalised),
            call,
        });
    }

    // Refused: each break applied to generated requests.
    for n in 0..BREAKS.len() * 10 {
        let request = generate(&mut runner, &requests);
        let how = n % BREAKS.len();
        let args = broken(&request, how);
        assert!(
            decode(args.clone(), &limits).is_err(),
            "we refuse {}: {args}",
            BREAKS[how]
        );
        cases.push((args, r#"{"answers":[]}"#.to_owned()));
        expected.push(Expect::Refused(BREAKS[how].to_owned()));
    }

    let verdicts = reference(&cases);
    let mut mismatches = Vec::new();
    for ((verdict, expect), (args, answers)) in verdicts.iter().zip(&expected).zip(&cases) {
        let problem = match expect {
            Expect::Render(ours) if *ours != verdict.render => Some("render differs".to_owned()),
            Expect::Render(_) => None,
            Expect::Call { .. } if !verdict.violations.is_empty() => {
                Some("the reference refuses a request we accept".to_owned())
            }
            Expect::Call { render, .. } if *render != verdict.render => {
                Some("render differs".to_owned())
            }
            Expect::Call { call, .. } if Some(call) != verdict.call.as_ref() => {
                Some("call text differs".to_owned())
            }
            Expect::Call { .. } => None,
            Expect::Refused(how) if verdict.violations.is_empty() => {
                Some(format!("the reference accepts a request we refuse ({how})"))
            }
            Expect::Refused(_) => None,
        };
        if let Some(problem) = problem {
            mismatches.push(format!(
                "{problem}\n  args: {args}\n  answers: {answers}\n  reference: {verdict:?}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ from the reference; first:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches
            .first()
            .map(|m| m.chars().take(4_000).collect::<String>())
            .unwrap_or_default()
    );
}

/// Every field of a JSON Schema as a path (`questions[].options[].label`), with whether it is
/// required.
fn fields(properties: &Value, required: &[Value], prefix: &str, out: &mut Vec<(String, bool)>) {
    for (name, schema) in properties.as_object().into_iter().flatten() {
        let path = format!("{prefix}{name}");
        let is_required = required.iter().any(|r| r == name);
        out.push((path.clone(), is_required));
        let (inner, inner_path) = match schema.get("items") {
            Some(items) => (items, format!("{path}[].")),
            None => (schema, format!("{path}.")),
        };
        if let Some(properties) = inner.get("properties") {
            let required = inner["required"].as_array().cloned().unwrap_or_default();
            fields(properties, &required, &inner_path, out);
        }
    }
}

#[test]
fn the_parameters_have_the_reference_field_names() {
    let reference: Value = serde_json::from_str(&reference_definition()).expect("JSON");
    let ours: Value =
        serde_json::from_str(ask_user_core::definition::PARAMETERS).expect("PARAMETERS parses");

    let all = |schema: &Value| {
        let mut out = Vec::new();
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        fields(&schema["properties"], &required, "", &mut out);
        out.sort();
        out
    };
    let (mine, theirs) = (all(&ours), all(&reference["parameters"]));
    assert_eq!(mine.len(), 8, "{mine:?}");
    assert_eq!(
        mine, theirs,
        "field names and required fields as in the reference"
    );
    assert_eq!(reference["name"], json!(ask_user_core::definition::NAME));
}
