//! The MCP elicitation mapping (`ask-user-elicit`, pure): an arbitrary request as a form
//! (`form`), then arbitrary form content back as answers (`answers_from_content`,
//! `read_reply_value`). Checks: the form has one field per question plus one own-answer field
//! per choice question, unique property names, all in the schema's order; content read as
//! answers is already normalised (one item per question, labels are options, …); nothing
//! panics on any content.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use ask_user_core::AskUserQuestionRequest;
use ask_user_elicit::{
    FieldKind, Form, FormStyle, Reply, answers_from_content, form, read_reply_value,
};
use ask_user_fuzz::{JsonValue, Pick, QuestionSpec, check_normalise, request_and_answers};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

/// One property of the content: a field of the form (mostly) and a value for it.
#[derive(Debug, Arbitrary)]
struct Property {
    key: Pick,
    value: ContentValue,
}

#[derive(Debug, Arbitrary)]
enum ContentValue {
    Label(Pick),
    Labels(Vec<Pick>),
    Text(String),
    Any(JsonValue),
}

/// A seed from the tests: `{"arguments":…,"content":…}`.
#[derive(serde::Deserialize)]
struct Seed {
    arguments: Value,
    content: Value,
}

fuzz_target!(|data: &[u8]| {
    if let Ok(seed) = serde_json::from_slice::<Seed>(data) {
        if let Ok(decoded) =
            ask_user_core::decode(seed.arguments, &ask_user_core::Limits::default())
        {
            let form = form(&decoded.request, None, FormStyle::Titled);
            check_form(&decoded.request, &form, FormStyle::Titled);
            check_content(&decoded.request, &form, seed.content, 0);
        }
        return;
    }
    let mut u = Unstructured::new(data);
    let Ok((questions, notice, properties, action, primitive)) =
        <(Vec<QuestionSpec>, Option<String>, Vec<Property>, u8, bool)>::arbitrary(&mut u)
    else {
        return;
    };
    let Some((request, _)) = request_and_answers(&questions, &[]) else {
        return;
    };
    // Both protocol eras' forms: primitive (2025-06-18 and older) and titled.
    let style = if primitive {
        FormStyle::Primitive
    } else {
        FormStyle::Titled
    };
    let form = form(&request, notice.as_deref(), style);
    check_form(&request, &form, style);
    let content = content(&request, &form, &properties);
    check_content(&request, &form, content, action);
});

/// The form's shape.
fn check_form(request: &AskUserQuestionRequest, form: &Form, style: FormStyle) {
    let keys: Vec<&str> = form.fields.iter().map(|f| f.key.as_str()).collect();
    let unique: std::collections::HashSet<&str> = keys.iter().copied().collect();
    assert_eq!(unique.len(), keys.len(), "property names repeat: {keys:?}");
    for (index, question) in request.questions().iter().enumerate() {
        let kinds: Vec<FieldKind> = form
            .fields
            .iter()
            .filter(|f| f.question == index)
            .map(|f| f.kind)
            .collect();
        let want = match (question.options.is_empty(), question.multi_select) {
            (true, _) => vec![FieldKind::Text],
            (false, false) => vec![FieldKind::Choice, FieldKind::OwnAnswer],
            (false, true) if style == FormStyle::Primitive => (0..question.options.len())
                .map(FieldKind::Option)
                .chain([FieldKind::OwnAnswer])
                .collect(),
            (false, true) => vec![FieldKind::Choices, FieldKind::OwnAnswer],
        };
        assert_eq!(kinds, want, "fields of question {index}");
    }
    let schema = serde_json::to_value(&form.schema).expect("the schema serialises");
    let properties_in_schema = schema["properties"].as_object().expect("properties");
    assert_eq!(properties_in_schema.len(), keys.len());
    assert_eq!(
        form.schema
            .property_order
            .as_deref()
            .map(|o| o.iter().map(String::as_str).collect::<Vec<_>>()),
        Some(keys.clone())
    );
}

/// Content built from the property specs: mostly the form's keys and the question's labels.
fn content(request: &AskUserQuestionRequest, form: &Form, properties: &[Property]) -> Value {
    let label_of = |pick: &Pick, field: Option<&ask_user_elicit::Field>| match (pick, field) {
        (Pick::Index(i), Some(f)) => {
            let q = &request.questions()[f.question];
            if q.options.is_empty() {
                format!("#{i}")
            } else {
                q.options[*i as usize % q.options.len()].label.clone()
            }
        }
        (Pick::Index(i), None) => format!("#{i}"),
        (Pick::Raw(text), _) => text.clone(),
    };
    let mut content = Map::new();
    for property in properties {
        let (key, field) = match &property.key {
            Pick::Index(i) => {
                let f = &form.fields[*i as usize % form.fields.len()];
                (f.key.clone(), Some(f))
            }
            Pick::Raw(key) => (key.clone(), form.fields.iter().find(|f| &f.key == key)),
        };
        let value = match &property.value {
            ContentValue::Label(pick) => Value::from(label_of(pick, field)),
            ContentValue::Labels(picks) => Value::Array(
                picks
                    .iter()
                    .map(|p| Value::from(label_of(p, field)))
                    .collect(),
            ),
            ContentValue::Text(text) => Value::from(text.as_str()),
            ContentValue::Any(JsonValue(value)) => value.clone(),
        };
        content.insert(key, value);
    }
    Value::Object(content)
}

/// Content → answers, directly and as an elicitation result.
fn check_content(request: &AskUserQuestionRequest, form: &Form, content: Value, action: u8) {
    if let Ok(answers) = answers_from_content(request, form, &content) {
        // Already normalised: normalising again changes nothing, and the invariants hold.
        assert_eq!(
            ask_user_core::normalise(request, answers.clone()).as_ref(),
            Ok(&answers)
        );
        check_normalise(request, &answers);
    }
    let action = ["accept", "decline", "cancel", "other"][action as usize % 4];
    let result = serde_json::json!({ "action": action, "content": content });
    match read_reply_value(request, form, &result) {
        Reply::Answered(answers) => {
            assert_eq!(action, "accept");
            check_normalise(request, &answers);
        }
        Reply::Dismissed => assert_ne!(action, "accept"),
        _ => {}
    }
}
