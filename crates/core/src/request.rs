//! The canonical request: what every answerer receives after decoding and validation.

use serde::{Deserialize, Serialize};

use crate::validate::{InvalidArguments, Limits};

/// The suffix a model appends to the label of the option it recommends.
pub const RECOMMENDED_SUFFIX: &str = "(Recommended)";

/// A validated batch of questions for the human, in the order the model sent them.
///
/// Built only by [`crate::decode`] or [`AskUserQuestionRequest::new`], both of which validate,
/// so an answerer can rely on it by type: at least one question, unique non-blank ids,
/// non-blank question texts, unique non-blank labels within each question, and every text
/// within the [`crate::Limits`] it was validated against.
///
/// Serialises to the canonical form `ask-user check` prints:
/// `{"questions":[{"id","question","header"?,"options"?:[{"label","description"?}],"multi_select"}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AskUserQuestionRequest {
    questions: Vec<Question>,
}

/// One question of a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// Stable id chosen by the model (or `q1`, `q2`, … when it sent none); echoed in the answer.
    pub id: String,
    /// The text to ask.
    pub question: String,
    /// Optional short heading (a "chip"); may be long, UIs truncate it on screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The choices; empty for a free-text question. The human may always type their own answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<QuestionOption>,
    /// Whether more than one option may be selected.
    #[serde(default)]
    pub multi_select: bool,
}

/// One choice of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    /// The user-facing label; also the value echoed in `selected`.
    pub label: String,
    /// Optional one-sentence explanation of the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Question {
    /// Index of the option the model recommends: the first whose label ends with
    /// `(Recommended)` (wherever it stands; the convention is first). `None` when there is none.
    pub fn recommended(&self) -> Option<usize> {
        self.options.iter().position(QuestionOption::is_recommended)
    }

    /// Index of the option with exactly this label.
    pub fn option_index(&self, label: &str) -> Option<usize> {
        self.options.iter().position(|o| o.label == label)
    }
}

impl QuestionOption {
    /// Whether the label carries the `(Recommended)` suffix.
    pub fn is_recommended(&self) -> bool {
        self.label.trim_end().ends_with(RECOMMENDED_SUFFIX)
    }
}

impl AskUserQuestionRequest {
    /// A request built in code, validated exactly as the model's arguments are: the same
    /// violations, the same texts.
    ///
    /// ```
    /// use ask_user_core::{AskUserQuestionRequest, Limits, Question};
    /// let question = Question {
    ///     id: "go".into(), question: "Deploy now?".into(),
    ///     header: None, options: Vec::new(), multi_select: false,
    /// };
    /// assert!(AskUserQuestionRequest::new(vec![question], &Limits::default()).is_ok());
    /// let empty = AskUserQuestionRequest::new(Vec::new(), &Limits::default()).unwrap_err();
    /// assert_eq!(empty.to_string(), "Error: invalid arguments: questions: empty, add at least one question");
    /// ```
    pub fn new(questions: Vec<Question>, limits: &Limits) -> Result<Self, InvalidArguments> {
        let value = serde_json::json!({ "questions": questions });
        crate::decode(value, limits).map(|decoded| decoded.request)
    }

    /// Wraps questions the decoder has already validated.
    pub(crate) fn validated(questions: Vec<Question>) -> Self {
        Self { questions }
    }

    /// The questions, in the model's order; never empty.
    pub fn questions(&self) -> &[Question] {
        &self.questions
    }

    /// The question with this id.
    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// The canonical request as compact JSON (what `ask-user check` prints).
    pub fn to_canonical_json(&self) -> String {
        // Serialising plain strings, bools and vectors cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}
