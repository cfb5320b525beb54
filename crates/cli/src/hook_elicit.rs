//! Claude Code's `Elicitation` hook event (an MCP server's form) as questions, and the human's
//! answers as the form's `content` (docs/contract.md §7 "Agent-host hooks").
//!
//! Each property of `requested_schema` is one question, in the schema's order: a string with
//! `enum` (or `oneOf` of `const`/`title`) is a single-select; an array whose `items` have them a
//! multi-select; a boolean is "Yes" / "No"; anything else (text, numbers) is a question answered
//! in the human's own words. A number field whose answer is not a number is left out.

use ask_user_core::AnswerItem;
use serde_json::{Map, Value, json};

/// One field of the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    name: String,
    kind: FieldKind,
}

#[derive(Debug, Clone, PartialEq)]
enum FieldKind {
    /// Choices: (label shown, value sent); `many` for an array.
    Choice {
        options: Vec<(String, Value)>,
        many: bool,
    },
    Boolean,
    Number {
        integer: bool,
    },
    Text,
}

/// The form's fields and the `ask_user_question` arguments asking them; `None` when the schema
/// has no field to ask.
pub(crate) fn questions(message: &str, schema: &Value) -> Option<(Vec<Field>, String)> {
    let properties = schema.get("properties")?.as_object()?;
    let mut fields = Vec::new();
    let mut asked = Vec::new();
    for (n, (name, property)) in properties.iter().enumerate() {
        let kind = field_kind(property);
        let title = property
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or(name);
        let mut question = match property.get("description").and_then(Value::as_str) {
            Some(description) => format!("{title}: {description}"),
            None => title.to_owned(),
        };
        if n == 0 && !message.is_empty() {
            question = format!("{message}\n\n{question}");
        }
        let (options, many) = match &kind {
            FieldKind::Choice { options, many } => (
                options
                    .iter()
                    .map(|(label, _)| json!({"label": label}))
                    .collect(),
                *many,
            ),
            FieldKind::Boolean => (vec![json!({"label": "Yes"}), json!({"label": "No"})], false),
            FieldKind::Number { .. } | FieldKind::Text => (Vec::new(), false),
        };
        asked.push(json!({
            "id": format!("f{}", n + 1),
            "header": title.chars().take(30).collect::<String>(),
            "question": question,
            "options": options,
            "multi_select": many,
        }));
        fields.push(Field {
            name: name.clone(),
            kind,
        });
    }
    if fields.is_empty() {
        return None;
    }
    Some((fields, json!({"questions": asked}).to_string()))
}

fn field_kind(property: &Value) -> FieldKind {
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    match kind {
        "boolean" => FieldKind::Boolean,
        "number" => FieldKind::Number { integer: false },
        "integer" => FieldKind::Number { integer: true },
        "array" => match property.get("items").and_then(choices) {
            Some(options) => FieldKind::Choice {
                options,
                many: true,
            },
            None => FieldKind::Text,
        },
        _ => match choices(property) {
            Some(options) => FieldKind::Choice {
                options,
                many: false,
            },
            None => FieldKind::Text,
        },
    }
}

/// `enum` (the value is the label) or `oneOf`/`anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<(String, Value)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| label_of(v));
                    (label, v.clone())
                })
                .collect(),
        );
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))?
        .as_array()?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let value = o.get("const")?.clone();
                let label = o
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| label_of(&value), str::to_owned);
                Some((label, value))
            })
            .collect(),
    )
}

fn label_of(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// The form's `content` for the human's answers (a skipped field is left out).
pub(crate) fn content(fields: &[Field], answers: &[AnswerItem]) -> Map<String, Value> {
    let mut content = Map::new();
    for (n, field) in fields.iter().enumerate() {
        let id = format!("f{}", n + 1);
        let Some(item) = answers.iter().find(|a| a.id == id) else {
            continue;
        };
        if let Some(value) = value_of(&field.kind, item) {
            content.insert(field.name.clone(), value);
        }
    }
    content
}

fn value_of(kind: &FieldKind, item: &AnswerItem) -> Option<Value> {
    let own = item.custom.as_deref();
    let chosen = |label: &String, options: &[(String, Value)]| {
        options
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, v)| v.clone())
    };
    match kind {
        FieldKind::Choice {
            options,
            many: true,
        } => {
            let values: Vec<Value> = item
                .selected
                .iter()
                .filter_map(|l| chosen(l, options))
                .collect();
            (!values.is_empty()).then_some(Value::Array(values))
        }
        FieldKind::Choice { options, .. } => match item.selected.first() {
            // An own answer is not one of the schema's values: left out.
            Some(label) => chosen(label, options),
            None => None,
        },
        FieldKind::Boolean => match item.selected.first().map(String::as_str) {
            Some("Yes") => Some(Value::Bool(true)),
            Some("No") => Some(Value::Bool(false)),
            _ => None,
        },
        FieldKind::Number { integer: true } => own?.trim().parse::<i64>().ok().map(Value::from),
        FieldKind::Number { integer: false } => own?
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        FieldKind::Text => own.map(|text| Value::String(text.to_owned())),
    }
}
