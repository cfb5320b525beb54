//! The fast path of [`super::decode`] for argument text already in the canonical shape:
//! `{"questions":[{"id","question","header"?,"options"?:[{"label","description"?}],
//! "multi_select"?}]}` with string ids, nothing `null`, no unknown or repeated key, and no
//! violation. Such text is deserialised straight into the request, skipping the
//! `serde_json::Value` tree the general path needs for its leniencies (most of a call's time).
//!
//! Anything else — an alias, a null, a number as id, a blank text, a duplicate, a cap
//! exceeded — gives `None` and the general path decides, so the fast path never changes a
//! result, only how fast it comes. The property tests check this: text (which takes this
//! path) decodes exactly like the same arguments as a value (which never do).

use serde::{Deserialize, Deserializer};

use crate::request::{AskUserQuestionRequest, Question, QuestionOption};
use crate::validate::Limits;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    questions: Vec<CanonicalQuestion>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CanonicalQuestion {
    id: String,
    question: String,
    #[serde(default, deserialize_with = "present")]
    header: Option<String>,
    #[serde(default, deserialize_with = "present")]
    options: Option<Vec<CanonicalOption>>,
    #[serde(default, deserialize_with = "present")]
    multi_select: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CanonicalOption {
    label: String,
    #[serde(default, deserialize_with = "present")]
    description: Option<String>,
}

/// An optional field that, when present, must hold a value: `null` is not read as absent
/// here (the general path reports that leniency).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// The request, when `text` is canonical and valid under `limits`; `None` otherwise.
pub(super) fn decode(text: &str, limits: &Limits) -> Option<AskUserQuestionRequest> {
    let arguments: Arguments = serde_json::from_str(text).ok()?;
    let count = arguments.questions.len();
    if count == 0 || count > limits.max_questions {
        return None;
    }
    // Not blank and within the cap (bytes bound characters, so most texts skip the count).
    let fits = |text: &str| {
        !text.trim().is_empty()
            && (text.len() <= limits.max_text_chars
                || text.chars().count() <= limits.max_text_chars)
    };
    let mut questions: Vec<Question> = Vec::with_capacity(count);
    for q in arguments.questions {
        if !fits(&q.id) || !fits(&q.question) || questions.iter().any(|p| p.id == q.id) {
            return None;
        }
        if q.header.as_deref().is_some_and(|h| !fits(h)) {
            return None;
        }
        let items = q.options.unwrap_or_default();
        if items.len() > limits.max_options {
            return None;
        }
        let mut options: Vec<QuestionOption> = Vec::with_capacity(items.len());
        for o in items {
            if !fits(&o.label)
                || o.description.as_deref().is_some_and(|d| !fits(d))
                || options.iter().any(|p| p.label == o.label)
            {
                return None;
            }
            options.push(QuestionOption {
                label: o.label,
                description: o.description,
            });
        }
        questions.push(Question {
            id: q.id,
            question: q.question,
            header: q.header,
            options,
            multi_select: q.multi_select.unwrap_or(false),
        });
    }
    Some(AskUserQuestionRequest::validated(questions))
}
