//! Answers and their normalisation (docs/contract.md §4).
//!
//! Whatever an answerer returns goes through [`normalise`] before the model sees it, so every
//! answerer gets the same rules for free:
//!
//! - one item per question, in request order; an omitted question is an [`InvalidAnswer`]
//!   (a skip is explicit: `selected: []` and no `custom`), so an empty submission is never
//!   an answer;
//! - an unknown or repeated id, or a label that is not one of that question's options, is an
//!   [`InvalidAnswer`];
//! - single-select: at most one label;
//! - `custom` is trimmed and omitted when blank;
//! - single-select with `custom`: `selected` is emptied (the own answer overrides);
//! - multi-select keeps both (the own answer supplements);
//! - labels come out in option order, without repeats.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::request::AskUserQuestionRequest;

/// The human's answers to a batch, in the output shape:
/// `{"answers":[{"id","selected":[…],"custom"?}]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answers {
    /// One item per answered question (after [`normalise`]: per question, in request order).
    pub answers: Vec<AnswerItem>,
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerItem {
    /// The question's id.
    pub id: String,
    /// Chosen option labels (exactly as in the request). Empty when skipped or answered in text.
    #[serde(default)]
    pub selected: Vec<String>,
    /// The human's own answer, typed instead of (single-select) or beside (multi-select) options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
}

impl AnswerItem {
    /// An item choosing these labels.
    pub fn selected<I, S>(id: impl Into<String>, labels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            id: id.into(),
            selected: labels.into_iter().map(Into::into).collect(),
            custom: None,
        }
    }

    /// An item carrying only the human's own text.
    pub fn custom(id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            selected: Vec::new(),
            custom: Some(text.into()),
        }
    }

    /// A skipped question: nothing chosen, nothing typed.
    pub fn skipped(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            selected: Vec::new(),
            custom: None,
        }
    }

    /// Whether the human gave nothing for this question.
    pub fn is_skipped(&self) -> bool {
        self.selected.is_empty() && self.custom.is_none()
    }
}

/// Why an answer does not fit its request. The text is written for the human (interactive
/// answerers show it and keep the question open) and for logs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum InvalidAnswer {
    /// The answer names a question the request does not have.
    #[error("the answer names an unknown question id \"{id}\"")]
    UnknownId {
        /// The id that was answered.
        id: String,
    },
    /// The answer holds two items for one question.
    #[error("question \"{id}\" is answered twice")]
    RepeatedId {
        /// The question's id.
        id: String,
    },
    /// The answer has no item for a question (a skip must be explicit: `selected: []`, no
    /// `custom`).
    #[error(
        "question \"{id}\" is not answered; answer it, or skip it explicitly (nothing selected, no own answer)"
    )]
    Omitted {
        /// The question's id.
        id: String,
    },
    /// A selected label is not one of the question's options.
    #[error("\"{label}\" is not one of the options of question \"{id}\"")]
    UnknownLabel {
        /// The question's id.
        id: String,
        /// The label that is not an option.
        label: String,
    },
    /// A single-select question got more than one label.
    #[error("question \"{id}\" takes one option, but {count} were selected")]
    TooManySelected {
        /// The question's id.
        id: String,
        /// How many distinct labels were selected.
        count: usize,
    },
}

/// Checks `answers` against `request` and brings them into the canonical shape (see the
/// module doc for the rules). Never changes meaning: anything that does not fit is an error.
pub fn normalise(
    request: &AskUserQuestionRequest,
    answers: Answers,
) -> Result<Answers, InvalidAnswer> {
    let mut given: Vec<Option<AnswerItem>> = vec![None; request.questions().len()];
    for item in answers.answers {
        let Some(index) = request.questions().iter().position(|q| q.id == item.id) else {
            return Err(InvalidAnswer::UnknownId { id: item.id });
        };
        if given[index].is_some() {
            return Err(InvalidAnswer::RepeatedId { id: item.id });
        }
        given[index] = Some(item);
    }

    let mut out = Vec::with_capacity(request.questions().len());
    for (question, item) in request.questions().iter().zip(given) {
        let Some(item) = item else {
            return Err(InvalidAnswer::Omitted {
                id: question.id.clone(),
            });
        };
        let mut chosen = vec![false; question.options.len()];
        for label in &item.selected {
            match question.option_index(label) {
                Some(i) => chosen[i] = true,
                None => {
                    return Err(InvalidAnswer::UnknownLabel {
                        id: item.id,
                        label: label.clone(),
                    });
                }
            }
        }
        let count = chosen.iter().filter(|c| **c).count();
        if !question.multi_select && count > 1 {
            return Err(InvalidAnswer::TooManySelected { id: item.id, count });
        }
        let custom = item
            .custom
            .as_deref()
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned);
        let selected = if custom.is_some() && !question.multi_select {
            Vec::new()
        } else {
            question
                .options
                .iter()
                .zip(&chosen)
                .filter(|(_, chosen)| **chosen)
                .map(|(option, _)| option.label.clone())
                .collect()
        };
        out.push(AnswerItem {
            id: item.id,
            selected,
            custom,
        });
    }
    Ok(Answers { answers: out })
}
