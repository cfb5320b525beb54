//! Lenient decoding of what models really send, and validation (docs/contract.md §3).
//!
//! Principle: accept what is unambiguous, reject what is ambiguous, never drop meaning
//! silently. Every variant accepted is reported as a [`Leniency`]; every problem is collected
//! as a [`Violation`] (in document order: the whole, then each question in turn, its fields in
//! schema order) and the call is refused as a whole.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::request::{AskUserQuestionRequest, Question, QuestionOption};
use crate::validate::{InvalidArguments, Leniency, Limits, Violation, look_alike};

mod canonical;

/// The model's raw tool-call arguments: the string a provider hands over, or a parsed value
/// (MCP hosts receive objects).
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// The argument text as the model wrote it.
    Text(String),
    /// Already-parsed arguments.
    Value(Value),
}

impl From<&str> for Arguments {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<String> for Arguments {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

/// A request that passed validation, with the leniencies applied to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The canonical request.
    pub request: AskUserQuestionRequest,
    /// Each variant that was accepted and rewritten, in document order.
    pub leniencies: Vec<Leniency>,
}

/// Decodes and validates the model's arguments.
///
/// Accepts every variant of docs/contract.md §3 (see [`Leniency`]) and refuses with every
/// [`Violation`] found; the error displays as the model-facing text:
///
/// ```
/// use ask_user_core::{decode, Limits};
/// let err = decode(r#"{"questions":[]}"#, &Limits::default()).unwrap_err();
/// assert_eq!(err.to_string(), "Error: invalid arguments: questions: empty, add at least one question");
///
/// let ok = decode(r#"{"question":"Deploy now?","multiSelect":false}"#, &Limits::default()).unwrap();
/// assert_eq!(ok.request.questions()[0].id, "q1");
/// ```
pub fn decode(
    arguments: impl Into<Arguments>,
    limits: &Limits,
) -> Result<Decoded, InvalidArguments> {
    let mut decoder = Decoder {
        limits,
        violations: Vec::new(),
        leniencies: Vec::new(),
    };
    let value = match arguments.into() {
        Arguments::Value(value) => value,
        Arguments::Text(text) if text.trim().is_empty() => {
            decoder.leniencies.push(Leniency::EmptyArguments);
            Value::Object(Map::new())
        }
        Arguments::Text(text) => {
            if let Some(request) = canonical::decode(&text, limits) {
                return Ok(Decoded {
                    request,
                    leniencies: Vec::new(),
                });
            }
            match serde_json::from_str(&text) {
                Ok(value) => value,
                Err(error) => {
                    decoder.violate(
                        "arguments",
                        format!(
                            "not valid JSON ({error}), send a JSON object like {{\"questions\":[{{\"id\":\"…\",\"question\":\"…\"}}]}}"
                        ),
                    );
                    return Err(decoder.into_error());
                }
            }
        }
    };
    let questions = decoder.request(value);
    if decoder.violations.is_empty() {
        Ok(Decoded {
            request: AskUserQuestionRequest::validated(questions),
            leniencies: decoder.leniencies,
        })
    } else {
        Err(decoder.into_error())
    }
}

const QUESTION_KEYS: [&str; 9] = [
    "id",
    "question",
    "header",
    "options",
    "choices",
    "multi_select",
    "multiSelect",
    "multiple",
    "multi",
];
const MULTI_SELECT_KEYS: [&str; 4] = ["multi_select", "multiSelect", "multiple", "multi"];

struct Decoder<'l> {
    limits: &'l Limits,
    violations: Vec<Violation>,
    leniencies: Vec<Leniency>,
}

/// What a JSON value is, for "got a …" messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The field's value, with `null` read as absent (and reported).
fn field<'v>(
    map: &'v Map<String, Value>,
    key: &str,
    path: &str,
    leniencies: &mut Vec<Leniency>,
) -> Option<&'v Value> {
    match map.get(key) {
        Some(Value::Null) => {
            leniencies.push(Leniency::NullField {
                path: format!("{path}.{key}"),
            });
            None
        }
        other => other,
    }
}

impl Decoder<'_> {
    fn violate(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.violations.push(Violation {
            path: path.into(),
            message: message.into(),
        });
    }

    fn into_error(self) -> InvalidArguments {
        InvalidArguments {
            violations: self.violations,
        }
    }

    /// Checks a text field against the cap; `true` when it fits.
    fn within_cap(&mut self, path: &str, text: &str) -> bool {
        let chars = text.chars().count();
        if chars > self.limits.max_text_chars {
            self.violate(
                path,
                format!(
                    "{chars} characters exceed the limit of {}, shorten it",
                    self.limits.max_text_chars
                ),
            );
            return false;
        }
        true
    }

    fn request(&mut self, value: Value) -> Vec<Question> {
        let Value::Object(mut map) = value else {
            let got = kind(&value);
            self.violate(
                "arguments",
                format!("must be a JSON object like {{\"questions\":[…]}}, got {got}"),
            );
            return Vec::new();
        };
        let items = match map.shift_remove("questions") {
            None | Some(Value::Null)
                if map.contains_key("question") || map.contains_key("header") =>
            {
                self.leniencies.push(Leniency::SingleQuestion);
                vec![Value::Object(map)]
            }
            None | Some(Value::Null) => {
                self.violate(
                    "questions",
                    "missing, send {\"questions\":[{\"id\":\"…\",\"question\":\"…\"}]}",
                );
                return Vec::new();
            }
            Some(questions) => {
                for key in map.keys() {
                    self.leniencies
                        .push(Leniency::IgnoredKey { path: key.clone() });
                }
                self.questions_array(questions)
            }
        };
        if items.is_empty() {
            return Vec::new();
        }
        if items.len() > self.limits.max_questions {
            self.violate(
                "questions",
                format!(
                    "{} questions exceed the limit of {}, ask the most important ones first",
                    items.len(),
                    self.limits.max_questions
                ),
            );
        }
        self.questions(items)
    }

    /// The `questions` value as an array (parsing a stringified one); empty after a violation.
    fn questions_array(&mut self, value: Value) -> Vec<Value> {
        let value = match value {
            Value::String(text) => match serde_json::from_str::<Value>(&text) {
                Ok(parsed @ Value::Array(_)) => {
                    self.leniencies.push(Leniency::QuestionsAsString);
                    parsed
                }
                _ => Value::String(text),
            },
            other => other,
        };
        match value {
            Value::Array(items) if items.is_empty() => {
                self.violate("questions", "empty, add at least one question");
                Vec::new()
            }
            Value::Array(items) => items,
            other => {
                let got = kind(&other);
                self.violate(
                    "questions",
                    format!("must be an array of question objects, got {got}"),
                );
                Vec::new()
            }
        }
    }

    fn questions(&mut self, items: Vec<Value>) -> Vec<Question> {
        // Ids the model chose, so generated ids can skip them.
        let mut used: HashSet<String> = items
            .iter()
            .filter_map(|item| match item.get("id") {
                Some(Value::String(id)) => Some(id.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            })
            .collect();
        let mut first_use: HashMap<String, usize> = HashMap::new();
        let mut questions = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let path = format!("questions[{index}]");
            let Value::Object(map) = item else {
                let got = kind(&item);
                self.violate(
                    path,
                    format!("must be an object with \"id\" and \"question\", got {got}"),
                );
                continue;
            };
            let id = match self.id(&map, &path) {
                Some(Some(id)) => {
                    if let Some(first) = first_use.get(&id) {
                        self.violate(
                            format!("{path}.id"),
                            format!(
                                "\"{id}\" is already the id of questions[{first}], give each question a unique id"
                            ),
                        );
                    } else {
                        first_use.insert(id.clone(), index);
                    }
                    Some(id)
                }
                Some(None) => {
                    let mut n = index + 1;
                    while used.contains(&format!("q{n}")) {
                        n += 1;
                    }
                    let id = format!("q{n}");
                    used.insert(id.clone());
                    self.leniencies.push(Leniency::GeneratedId {
                        path: path.clone(),
                        id: id.clone(),
                    });
                    Some(id)
                }
                None => None,
            };
            let texts = self.texts(&map, &path);
            let options = self.options(&map, &path);
            let multi_select = self.multi_select(&map, &path);
            for key in map.keys() {
                if !QUESTION_KEYS.contains(&key.as_str()) {
                    self.leniencies.push(Leniency::IgnoredKey {
                        path: format!("{path}.{key}"),
                    });
                }
            }
            if let (Some(id), Some((question, header))) = (id, texts) {
                questions.push(Question {
                    id,
                    question,
                    header,
                    options,
                    multi_select,
                });
            }
        }
        questions
    }

    /// `None`: a violation; `Some(None)`: no id given; `Some(Some(id))`: the id.
    fn id(&mut self, map: &Map<String, Value>, path: &str) -> Option<Option<String>> {
        let id = match field(map, "id", path, &mut self.leniencies) {
            None => return Some(None),
            Some(Value::String(id)) => id.clone(),
            Some(Value::Number(n)) => {
                let id = n.to_string();
                self.leniencies.push(Leniency::NumericId {
                    path: path.to_owned(),
                    id: id.clone(),
                });
                id
            }
            Some(other) => {
                let got = kind(other);
                self.violate(format!("{path}.id"), format!("must be a string, got {got}"));
                return None;
            }
        };
        if id.trim().is_empty() {
            self.violate(
                format!("{path}.id"),
                "blank, give the question a short unique id",
            );
            return None;
        }
        self.within_cap(&format!("{path}.id"), &id)
            .then_some(Some(id))
    }

    /// An optional text field: absent, `null` or blank → `Ok(None)`; a string within the cap
    /// → `Ok(Some)`; anything else → a violation and `Err(())`.
    fn optional_text(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<String>, ()> {
        match field(map, key, path, &mut self.leniencies) {
            None => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => {
                if self.within_cap(&format!("{path}.{key}"), text) {
                    Ok(Some(text.clone()))
                } else {
                    Err(())
                }
            }
            Some(other) => {
                let got = kind(other);
                self.violate(
                    format!("{path}.{key}"),
                    format!("must be a string, got {got}"),
                );
                Err(())
            }
        }
    }

    /// The question text and header; `None` after a violation.
    fn texts(&mut self, map: &Map<String, Value>, path: &str) -> Option<(String, Option<String>)> {
        let header = self.optional_text(map, "header", path);
        let question = match field(map, "question", path, &mut self.leniencies) {
            Some(Value::String(text)) if text.trim().is_empty() => {
                self.violate(
                    format!("{path}.question"),
                    "blank, write the question to ask the user",
                );
                None
            }
            Some(Value::String(text)) => self
                .within_cap(&format!("{path}.question"), text)
                .then(|| text.clone()),
            Some(other) => {
                let got = kind(other);
                self.violate(
                    format!("{path}.question"),
                    format!("must be a string, got {got}"),
                );
                None
            }
            None => match &header {
                Ok(Some(header)) => {
                    self.leniencies.push(Leniency::HeaderAsQuestion {
                        path: path.to_owned(),
                    });
                    return Some((header.clone(), None));
                }
                _ => {
                    self.violate(
                        format!("{path}.question"),
                        "missing, add the text to ask the user",
                    );
                    None
                }
            },
        };
        Some((question?, header.ok()?))
    }

    fn options(&mut self, map: &Map<String, Value>, path: &str) -> Vec<QuestionOption> {
        let options = field(map, "options", path, &mut self.leniencies);
        let choices = field(map, "choices", path, &mut self.leniencies);
        let (key, value) = match (options, choices) {
            (None, None) => return Vec::new(),
            (Some(_), Some(_)) => {
                self.violate(
                    path,
                    "both \"options\" and \"choices\" given, send only \"options\"",
                );
                return Vec::new();
            }
            (Some(value), None) => ("options", value),
            (None, Some(value)) => {
                self.leniencies.push(Leniency::ChoicesAsOptions {
                    path: path.to_owned(),
                });
                ("choices", value)
            }
        };
        let list_path = format!("{path}.{key}");
        let parsed;
        let items = match value {
            Value::Array(items) => items,
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(items)) => {
                    self.leniencies.push(Leniency::OptionsAsString {
                        path: path.to_owned(),
                    });
                    parsed = items;
                    &parsed
                }
                _ => {
                    self.violate(
                        list_path,
                        "must be an array of {\"label\",\"description\"} objects, got a string",
                    );
                    return Vec::new();
                }
            },
            other => {
                let got = kind(other);
                self.violate(
                    list_path,
                    format!("must be an array of {{\"label\",\"description\"}} objects, got {got}"),
                );
                return Vec::new();
            }
        };
        if items.len() > self.limits.max_options {
            self.violate(
                list_path.clone(),
                format!(
                    "{} options exceed the limit of {}, offer fewer choices",
                    items.len(),
                    self.limits.max_options
                ),
            );
        }
        let mut first_use: HashMap<String, usize> = HashMap::new();
        let mut first_look: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let option_path = format!("{list_path}[{index}]");
            let Some(option) = self.option(item, &option_path) else {
                continue;
            };
            if let Some(first) = first_use.get(option.label.as_str()) {
                self.violate(
                    format!("{option_path}.label"),
                    format!(
                        "\"{}\" repeats {key}[{first}], labels must differ within a question",
                        option.label
                    ),
                );
                continue;
            }
            let skeleton = crate::text::skeleton(&option.label);
            if let Some(first) = first_look.get(&skeleton) {
                self.violate(
                    format!("{option_path}.label"),
                    look_alike(&option.label, key, *first),
                );
                continue;
            }
            first_look.insert(skeleton, index);
            first_use.insert(option.label.clone(), index);
            out.push(option);
        }
        out
    }

    fn option(&mut self, item: &Value, path: &str) -> Option<QuestionOption> {
        let (label, description) = match item {
            Value::String(label) => {
                self.leniencies.push(Leniency::StringOption {
                    path: path.to_owned(),
                });
                (Some(label), Ok(None))
            }
            Value::Object(map) => {
                let label = match field(map, "label", path, &mut self.leniencies) {
                    Some(Value::String(label)) => Some(label),
                    None => {
                        self.violate(
                            format!("{path}.label"),
                            "missing, give every option a label",
                        );
                        None
                    }
                    Some(other) => {
                        let got = kind(other);
                        self.violate(
                            format!("{path}.label"),
                            format!("must be a string, got {got}"),
                        );
                        None
                    }
                };
                let description = self.optional_text(map, "description", path);
                for key in map.keys() {
                    if key != "label" && key != "description" {
                        self.leniencies.push(Leniency::IgnoredKey {
                            path: format!("{path}.{key}"),
                        });
                    }
                }
                (label, description)
            }
            other => {
                let got = kind(other);
                self.violate(
                    path,
                    format!("must be an object with \"label\" or a string, got {got}"),
                );
                return None;
            }
        };
        let label = label?;
        if label.trim().is_empty() {
            self.violate(format!("{path}.label"), "blank, give every option a label");
            return None;
        }
        if !self.within_cap(&format!("{path}.label"), label) {
            return None;
        }
        Some(QuestionOption {
            label: label.clone(),
            description: description.ok()?,
        })
    }

    fn multi_select(&mut self, map: &Map<String, Value>, path: &str) -> bool {
        let mut seen: Option<(&str, bool)> = None;
        for key in MULTI_SELECT_KEYS {
            let value = match field(map, key, path, &mut self.leniencies) {
                None => continue,
                Some(Value::Bool(value)) => *value,
                Some(other) => {
                    let got = kind(other);
                    self.violate(
                        format!("{path}.{key}"),
                        format!("must be true or false, got {got}"),
                    );
                    continue;
                }
            };
            if key != "multi_select" {
                self.leniencies.push(Leniency::MultiSelectAlias {
                    path: path.to_owned(),
                    key: key.to_owned(),
                });
            }
            match seen {
                Some((first, earlier)) if earlier != value => {
                    self.violate(
                        path,
                        format!("\"{first}\" and \"{key}\" disagree, send only \"multi_select\""),
                    );
                }
                Some(_) => {}
                None => seen = Some((key, value)),
            }
        }
        seen.is_some_and(|(_, value)| value)
    }
}
