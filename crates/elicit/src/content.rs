//! The client's reply to an elicitation, as answers (docs/contract.md §6: accept → answer; decline or
//! cancel → dismissed).

use ask_user_core::{AnswerItem, Answers, AskUserQuestionRequest, InvalidAnswer, normalise};
use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::Value;

use crate::schema::{FieldKind, Form, FormStyle, own_choice_label};

/// Why accepted content cannot be read as answers. The text is shown to the human in the
/// next form's message (and logged), so it names the field by its title where it can.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentError {
    /// The content is not a JSON object.
    NotAnObject,
    /// A field holds a value of the wrong type.
    WrongType {
        /// The property name.
        key: String,
        /// What the field takes, e.g. `a string`.
        expected: &'static str,
    },
    /// The answers do not fit the questions (e.g. a label that is not an option).
    Invalid(InvalidAnswer),
}

impl std::fmt::Display for ContentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAnObject => f.write_str("the form content is not an object"),
            Self::WrongType { key, expected } => write!(f, "field \"{key}\" takes {expected}"),
            Self::Invalid(invalid) => write!(f, "{invalid}"),
        }
    }
}

impl std::error::Error for ContentError {}

/// What the human did with the form.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply {
    /// Accepted; the answers are normalised against the request.
    Answered(Answers),
    /// Declined or cancelled: the whole batch is dismissed.
    Dismissed,
    /// Accepted, but the content does not fit; ask again with the reason shown.
    Refused(ContentError),
    /// Accepted with every field blank: every question skipped. The first time, ask once more
    /// with [`NOTHING_CHOSEN`] on top; a second blank submission is these answers (docs/contract.md §6).
    Blank(Answers),
    /// Accepted, and the human chose to type their own answer to these questions (by index;
    /// [`FormStyle::Codex`]'s own-answer choice): ask [`own_answer_form`](crate::own_answer_form)
    /// next and add what is typed there to `answers` (the rest of the form, normalised).
    OwnAnswerWanted {
        /// The answers from the rest of the form.
        answers: Answers,
        /// The questions whose own answer comes next.
        questions: Vec<usize>,
    },
}

/// The notice on top of a form sent again after a submission with every field blank.
pub const NOTHING_CHOSEN: &str = "Nothing was chosen; submit again to skip all.";

/// Reads the client's elicitation result: `accept` → [`answers_from_content`], `decline` and
/// `cancel` → [`Reply::Dismissed`].
pub fn read_reply(request: &AskUserQuestionRequest, form: &Form, result: &ElicitResult) -> Reply {
    match result.action {
        ElicitationAction::Accept => {
            let content = result.content.clone().unwrap_or(Value::Null);
            match read_content(request, form, &content) {
                Ok((answers, wanted)) if !wanted.is_empty() => Reply::OwnAnswerWanted {
                    answers,
                    questions: wanted,
                },
                Ok((answers, _)) if answers.answers.iter().all(is_skip) => Reply::Blank(answers),
                Ok((answers, _)) => Reply::Answered(answers),
                Err(error) => Reply::Refused(error),
            }
        }
        // Decline, cancel, and any action a later protocol adds: not an answer.
        _ => Reply::Dismissed,
    }
}

fn is_skip(item: &AnswerItem) -> bool {
    item.selected.is_empty() && item.custom.is_none()
}

/// Like [`read_reply`], for a result that arrives as raw JSON (an input-required retry
/// carries `inputResponses` as opaque values).
pub fn read_reply_value(request: &AskUserQuestionRequest, form: &Form, result: &Value) -> Reply {
    match serde_json::from_value::<ElicitResult>(result.clone()) {
        Ok(result) => read_reply(request, form, &result),
        Err(_) => Reply::Refused(ContentError::NotAnObject),
    }
}

/// Maps accepted form content to normalised answers.
///
/// A choice field holds a label (an empty string counts as nothing chosen), a multi-choice
/// field an array of labels (a lone string is read as one label), an option field a boolean
/// (`true` chooses that option), a text or own-answer field a string. `null` or an absent
/// field is nothing (a blank field is an explicit skip of its question); unknown properties are ignored; absent
/// content (`null`) skips every question. The result goes through the core's `normalise`, so a
/// label that is not an option is [`ContentError::Invalid`].
pub fn answers_from_content(
    request: &AskUserQuestionRequest,
    form: &Form,
    content: &Value,
) -> Result<Answers, ContentError> {
    read_content(request, form, content).map(|(answers, _)| answers)
}

/// [`answers_from_content`], with the questions whose own-answer choice
/// ([`FormStyle::Codex`]) was taken.
fn read_content(
    request: &AskUserQuestionRequest,
    form: &Form,
    content: &Value,
) -> Result<(Answers, Vec<usize>), ContentError> {
    let mut wanted = Vec::new();
    let empty = serde_json::Map::new();
    let map = match content {
        Value::Object(map) => map,
        Value::Null => &empty,
        _ => return Err(ContentError::NotAnObject),
    };
    let mut items: Vec<AnswerItem> = request
        .questions()
        .iter()
        .map(|q| AnswerItem::skipped(&q.id))
        .collect();
    for field in &form.fields {
        let Some(item) = items.get_mut(field.question) else {
            continue;
        };
        let value = match map.get(&field.key) {
            None | Some(Value::Null) => continue,
            Some(value) => value,
        };
        let wrong = |expected| ContentError::WrongType {
            key: field.key.clone(),
            expected,
        };
        match field.kind {
            FieldKind::Choice => match value {
                Value::String(label) if label.is_empty() => {}
                Value::String(label)
                    if form.style == FormStyle::Codex
                        && request
                            .questions()
                            .get(field.question)
                            .is_some_and(|q| *label == own_choice_label(q)) =>
                {
                    wanted.push(field.question);
                }
                Value::String(label) => item.selected.push(label.clone()),
                _ => return Err(wrong("one option label")),
            },
            FieldKind::Choices => match value {
                Value::String(label) => item.selected.push(label.clone()),
                Value::Array(labels) => {
                    for label in labels {
                        match label {
                            Value::String(label) => item.selected.push(label.clone()),
                            _ => return Err(wrong("a list of option labels")),
                        }
                    }
                }
                _ => return Err(wrong("a list of option labels")),
            },
            FieldKind::Option(position) => match value {
                Value::Bool(false) => {}
                Value::Bool(true) => {
                    let option = request
                        .questions()
                        .get(field.question)
                        .and_then(|q| q.options.get(position));
                    if let Some(option) = option {
                        item.selected.push(option.label.clone());
                    }
                }
                _ => return Err(wrong("true or false")),
            },
            FieldKind::Text | FieldKind::OwnAnswer => match value {
                Value::String(text) => item.custom = Some(text.clone()),
                _ => return Err(wrong("text")),
            },
            FieldKind::OwnAnswerChoice => match value {
                Value::Bool(false) => {}
                Value::Bool(true) => wanted.push(field.question),
                _ => return Err(wrong("true or false")),
            },
        }
    }
    let answers = normalise(request, Answers { answers: items }).map_err(ContentError::Invalid)?;
    Ok((answers, wanted))
}
