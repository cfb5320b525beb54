//! Shared parts of the ask-user fuzz targets: structured generators biased towards the shapes
//! models send, and the invariants every target checks. Not part of the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use arbitrary::{Arbitrary, Unstructured};
use ask_user_core::{
    AnswerItem, Answers, AskUserQuestionRequest, Decoded, InvalidAnswer, Limits, decode, normalise,
    render,
};
use serde_json::{Map, Value};

/// Keys the decoder knows, so generated objects hit its branches often.
const KEYS: &[&str] = &[
    "questions",
    "id",
    "question",
    "header",
    "options",
    "choices",
    "label",
    "description",
    "multi_select",
    "multiSelect",
    "multiple",
    "multi",
    "extra",
];

/// Strings that matter to the decoder: blanks, the recommended suffix, JSON held in strings.
const STRINGS: &[&str] = &[
    "",
    " ",
    "\t\n",
    "a",
    "b",
    "q1",
    "q2",
    "Yes (Recommended)",
    "No",
    "[]",
    "[{\"id\":\"a\",\"question\":\"Q?\"}]",
    "[\"x\",\"y\"]",
    "[{\"label\":\"x\"}]",
    "{}",
    "é",
    "\u{202e}",
    "\u{1b}[31m",
];

/// An arbitrary JSON value, biased towards the tool's schema.
#[derive(Debug)]
pub struct JsonValue(pub Value);

impl<'a> Arbitrary<'a> for JsonValue {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self(value(u, 0)?))
    }
}

fn string(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => String::arbitrary(u)?,
        1 => {
            // A long string around the default cap.
            let c: char = u.arbitrary()?;
            let n = u.int_in_range(3_990..=4_010)?;
            std::iter::repeat_n(c, n).collect()
        }
        _ => (*u.choose(STRINGS)?).to_owned(),
    })
}

fn value(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Value> {
    let pick = if depth > 5 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=7)?
    };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => match u.int_in_range(0..=2)? {
            0 => Value::from(u.arbitrary::<i64>()?),
            1 => Value::from(u.arbitrary::<u64>()?),
            _ => serde_json::Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        },
        3 | 4 => Value::String(string(u)?),
        5 => {
            let n = u.int_in_range(0..=12)?;
            Value::Array(
                (0..n)
                    .map(|_| value(u, depth + 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => {
            let n = u.int_in_range(0..=6)?;
            let mut map = Map::new();
            for _ in 0..n {
                let key = if u.ratio(4, 5)? {
                    (*u.choose(KEYS)?).to_owned()
                } else {
                    String::arbitrary(u)?
                };
                map.insert(key, value(u, depth + 1)?);
            }
            Value::Object(map)
        }
    })
}

/// Caps: mostly the defaults, sometimes tiny ones so every cap is exercised. Text caps start
/// at 2 characters: a generated id (`q1`) is not model text and is not capped, so a cap of 1
/// would break the "every text within the caps" promise only for ids the tool made up (found
/// by this target; reported, not a defect a model can trigger with realistic caps).
pub fn limits(u: &mut Unstructured<'_>) -> Limits {
    if u.ratio(3, 4).unwrap_or(true) {
        return Limits::default();
    }
    Limits {
        max_questions: u.int_in_range(1..=4).unwrap_or(1),
        max_options: u.int_in_range(0..=4).unwrap_or(1),
        max_text_chars: u.int_in_range(2..=12).unwrap_or(2),
    }
}

/// The invariants of `decode`: an accepted request keeps every promise of
/// [`AskUserQuestionRequest`] (caps refused, never truncated) and its canonical JSON decodes to
/// itself with no leniency; a refusal has violations and the model-facing envelope.
pub fn check_decoded(result: &Result<Decoded, ask_user_core::InvalidArguments>, limits: &Limits) {
    match result {
        Ok(decoded) => {
            let request = &decoded.request;
            check_request(request, limits);
            let again = decode(request.to_canonical_json(), limits)
                .unwrap_or_else(|e| panic!("canonical form refused: {e}\n{request:?}"));
            assert_eq!(
                &again.request, request,
                "canonical form is not a fixed point"
            );
            assert!(
                again.leniencies.is_empty(),
                "canonical form needs leniencies: {:?}",
                again.leniencies
            );
        }
        Err(invalid) => {
            assert!(!invalid.violations.is_empty());
            let text = invalid.to_string();
            assert!(text.starts_with("Error: invalid arguments: "), "{text}");
            for v in &invalid.violations {
                assert!(!v.path.is_empty() && !v.message.is_empty(), "{v:?}");
            }
        }
    }
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// What an answerer may rely on in a validated request.
pub fn check_request(request: &AskUserQuestionRequest, limits: &Limits) {
    let qs = request.questions();
    assert!(
        !qs.is_empty() && qs.len() <= limits.max_questions,
        "{} questions",
        qs.len()
    );
    let mut ids = std::collections::HashSet::new();
    for q in qs {
        assert!(!q.id.trim().is_empty(), "blank id");
        assert!(ids.insert(q.id.as_str()), "duplicate id {}", q.id);
        assert!(!q.question.trim().is_empty(), "blank question");
        assert!(
            chars(&q.id) <= limits.max_text_chars,
            "id over the cap: {:?} under {limits:?}",
            q.id
        );
        assert!(
            chars(&q.question) <= limits.max_text_chars,
            "question over the cap"
        );
        if let Some(header) = &q.header {
            assert!(!header.trim().is_empty(), "blank header kept");
            assert!(
                chars(header) <= limits.max_text_chars,
                "header over the cap"
            );
        }
        assert!(q.options.len() <= limits.max_options, "too many options");
        let mut labels = std::collections::HashSet::new();
        for o in &q.options {
            assert!(!o.label.trim().is_empty(), "blank label");
            assert!(
                labels.insert(o.label.as_str()),
                "duplicate label {}",
                o.label
            );
            assert!(
                chars(&o.label) <= limits.max_text_chars,
                "label over the cap"
            );
            if let Some(d) = &o.description {
                assert!(!d.trim().is_empty(), "blank description kept");
                assert!(
                    chars(d) <= limits.max_text_chars,
                    "description over the cap"
                );
            }
        }
    }
}

/// A reference to an id or a label: mostly one that exists, sometimes any text.
#[derive(Debug, Arbitrary)]
pub enum Pick {
    Index(u8),
    Raw(String),
}

/// One answer item as an answerer might return it.
#[derive(Debug, Arbitrary)]
pub struct ItemSpec {
    pub id: Pick,
    pub selected: Vec<Pick>,
    pub custom: Option<String>,
}

/// One question to build arguments from.
#[derive(Debug, Arbitrary)]
pub struct QuestionSpec {
    pub id: Option<String>,
    pub question: String,
    pub multi_select: bool,
    pub labels: Vec<String>,
}

/// A request (through real arguments and `decode`) and answers referring to it.
pub fn request_and_answers(
    questions: &[QuestionSpec],
    items: &[ItemSpec],
) -> Option<(AskUserQuestionRequest, Answers)> {
    let args = Value::Object(Map::from_iter([(
        "questions".to_owned(),
        Value::Array(
            questions
                .iter()
                .map(|q| {
                    let mut m = Map::new();
                    if let Some(id) = &q.id {
                        m.insert("id".into(), Value::from(id.as_str()));
                    }
                    m.insert("question".into(), Value::from(q.question.as_str()));
                    m.insert("multi_select".into(), Value::from(q.multi_select));
                    m.insert(
                        "options".into(),
                        Value::Array(q.labels.iter().map(|l| Value::from(l.as_str())).collect()),
                    );
                    Value::Object(m)
                })
                .collect(),
        ),
    )]));
    let request = decode(args, &Limits::default()).ok()?.request;
    Some(answers_for(request, items))
}

/// Answers for `request` from the specs (picks resolved against the request).
pub fn answers_for(
    request: AskUserQuestionRequest,
    items: &[ItemSpec],
) -> (AskUserQuestionRequest, Answers) {
    let qs = request.questions();
    let answers = items
        .iter()
        .map(|spec| {
            let (id, question) = match &spec.id {
                Pick::Index(i) => {
                    let q = &qs[*i as usize % qs.len()];
                    (q.id.clone(), Some(q))
                }
                Pick::Raw(id) => (id.clone(), qs.iter().find(|q| &q.id == id)),
            };
            let selected = spec
                .selected
                .iter()
                .map(|pick| match (pick, question) {
                    (Pick::Index(i), Some(q)) if !q.options.is_empty() => {
                        q.options[*i as usize % q.options.len()].label.clone()
                    }
                    (Pick::Index(i), _) => format!("#{i}"),
                    (Pick::Raw(label), _) => label.clone(),
                })
                .collect();
            AnswerItem {
                id,
                selected,
                custom: spec.custom.clone(),
            }
        })
        .collect();
    (request, Answers { answers })
}

/// The invariants of `normalise` (docs/contract.md §4), for accepted and refused answers alike.
pub fn check_normalise(request: &AskUserQuestionRequest, input: &Answers) {
    match normalise(request, input.clone()) {
        Ok(out) => {
            assert_eq!(
                out.answers.len(),
                request.questions().len(),
                "one item per question"
            );
            for (q, item) in request.questions().iter().zip(&out.answers) {
                assert_eq!(item.id, q.id, "items in request order");
                let given: Vec<&AnswerItem> =
                    input.answers.iter().filter(|i| i.id == q.id).collect();
                assert!(given.len() <= 1, "a repeated id was accepted");
                let indices: Vec<usize> = item
                    .selected
                    .iter()
                    .map(|l| q.option_index(l).expect("selected labels are options"))
                    .collect();
                assert!(
                    indices.windows(2).all(|w| w[0] < w[1]),
                    "labels in option order, no repeats"
                );
                if let Some(custom) = &item.custom {
                    assert_eq!(custom.trim(), custom, "custom trimmed");
                    assert!(!custom.is_empty(), "blank custom kept");
                }
                if !q.multi_select {
                    assert!(
                        item.selected.len() <= 1,
                        "single-select has at most one label"
                    );
                    if item.custom.is_some() {
                        assert!(
                            item.selected.is_empty(),
                            "custom overrides in single-select"
                        );
                    }
                }
                match given.first() {
                    None => panic!("an omitted question was accepted (a skip must be explicit)"),
                    Some(g) => {
                        let want_custom =
                            g.custom.as_deref().map(str::trim).filter(|c| !c.is_empty());
                        assert_eq!(item.custom.as_deref(), want_custom, "custom kept");
                        let mut want: Vec<&str> = g.selected.iter().map(String::as_str).collect();
                        want.sort_unstable();
                        want.dedup();
                        if !q.multi_select && want_custom.is_some() {
                            want.clear();
                        }
                        let mut got: Vec<&str> = item.selected.iter().map(String::as_str).collect();
                        got.sort_unstable();
                        assert_eq!(got, want, "no label lost or invented");
                    }
                }
            }
            // Render parses back to the same answers.
            let text = render(&out);
            assert!(!text.ends_with('\n') && !text.contains("\n"), "one line");
            let back: Answers = serde_json::from_str(&text).expect("render parses");
            assert_eq!(back, out, "render round-trips");
            // Idempotent.
            assert_eq!(
                normalise(request, out.clone()).as_ref(),
                Ok(&out),
                "idempotent"
            );
        }
        Err(error) => {
            let justified = match &error {
                InvalidAnswer::UnknownId { id } => request.question(id).is_none(),
                InvalidAnswer::RepeatedId { id } => {
                    input.answers.iter().filter(|i| &i.id == id).count() > 1
                }
                InvalidAnswer::UnknownLabel { id, label } => request
                    .question(id)
                    .is_some_and(|q| q.option_index(label).is_none()),
                InvalidAnswer::TooManySelected { id, count } => {
                    request.question(id).is_some_and(|q| !q.multi_select) && *count > 1
                }
                InvalidAnswer::Omitted { id } => {
                    request.question(id).is_some() && !input.answers.iter().any(|i| &i.id == id)
                }
                _ => true,
            };
            assert!(justified, "unjustified refusal: {error}");
            assert!(!error.to_string().is_empty());
        }
    }
}
