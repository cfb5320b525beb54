//! Violations, leniencies and the host-configurable caps (docs/contract.md §3).

use std::fmt;

/// Host-configurable caps. Arguments over a cap are refused with a violation, never truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most questions in one call. Default 10.
    pub max_questions: usize,
    /// Most options in one question. Default 26.
    pub max_options: usize,
    /// Most characters (Unicode scalar values) in one text field. Default 4,000.
    pub max_text_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_questions: 10,
            max_options: 26,
            max_text_chars: 4_000,
        }
    }
}

/// One reason the model's arguments were refused: where, what is wrong, and how to fix it.
///
/// Displays as `<path>: <problem>`; the problem text already says what to send instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the arguments, e.g. `questions[1].options[0].label` (`arguments` for the whole).
    pub path: String,
    /// What is wrong and what to send instead.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every violation of one call, in document order. Displays as the model-facing text
/// `Error: invalid arguments: <v1>; <v2>; …`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct InvalidArguments {
    /// The violations, never empty.
    pub violations: Vec<Violation>,
}

impl fmt::Display for InvalidArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Error: invalid arguments: ")?;
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// A variant the decoder accepted and turned into the canonical shape. Hosts log these;
/// `ask-user check` prints them. Displays as one line naming the path and what was done.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Leniency {
    /// The argument string was empty; read as `{}`.
    EmptyArguments,
    /// `questions` was a JSON string holding an array.
    QuestionsAsString,
    /// A single question object stood at the top level.
    SingleQuestion,
    /// `multiSelect`, `multiple` or `multi` was read as `multi_select`.
    MultiSelectAlias {
        /// The question's path.
        path: String,
        /// The key the model used.
        key: String,
    },
    /// An option was a plain string.
    StringOption {
        /// The option's path.
        path: String,
    },
    /// `choices` was read as `options`.
    ChoicesAsOptions {
        /// The question's path.
        path: String,
    },
    /// `options` was a JSON string holding an array.
    OptionsAsString {
        /// The question's path.
        path: String,
    },
    /// A question had no id and got one by position.
    GeneratedId {
        /// The question's path.
        path: String,
        /// The id it got.
        id: String,
    },
    /// A number was given as the id.
    NumericId {
        /// The question's path.
        path: String,
        /// Its decimal text.
        id: String,
    },
    /// A question had a header but no question; the header became the question.
    HeaderAsQuestion {
        /// The question's path.
        path: String,
    },
    /// An optional field was `null`; read as absent.
    NullField {
        /// The field's path.
        path: String,
    },
    /// A key the tool does not know was ignored.
    IgnoredKey {
        /// The key's path.
        path: String,
    },
}

impl fmt::Display for Leniency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyArguments => f.write_str("arguments: empty, read as {}"),
            Self::QuestionsAsString => {
                f.write_str("questions: a JSON string holding an array, parsed")
            }
            Self::SingleQuestion => f.write_str(
                "arguments: a single question object, read as a one-element questions array",
            ),
            Self::MultiSelectAlias { path, key } => {
                write!(f, "{path}.{key}: read as multi_select")
            }
            Self::StringOption { path } => write!(f, "{path}: a plain string, read as its label"),
            Self::ChoicesAsOptions { path } => write!(f, "{path}.choices: read as options"),
            Self::OptionsAsString { path } => {
                write!(f, "{path}.options: a JSON string holding an array, parsed")
            }
            Self::GeneratedId { path, id } => write!(f, "{path}.id: missing, set to \"{id}\""),
            Self::NumericId { path, id } => write!(f, "{path}.id: a number, read as \"{id}\""),
            Self::HeaderAsQuestion { path } => {
                write!(f, "{path}.question: missing, the header is the question")
            }
            Self::NullField { path } => write!(f, "{path}: null, read as absent"),
            Self::IgnoredKey { path } => write!(f, "{path}: unknown key, ignored"),
        }
    }
}

/// The problem text for an option label that looks the same on screen as an earlier label of
/// the same question (equal TR39 skeletons, [`crate::text::skeleton`]: look-alike letters such
/// as a Cyrillic `А`, invisible characters, padding). The label is quoted as the human would
/// see it (invisibles written as `\u{…}`), so the model can tell what to change.
pub(crate) fn look_alike(label: &str, key: &str, first: usize) -> String {
    format!(
        "\"{}\" looks the same on screen as {key}[{first}] (look-alike or invisible characters), labels must differ in visible letters",
        crate::text::display_line(label)
    )
}
