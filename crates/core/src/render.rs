//! The Native renderer: the exact bytes the model reads for an answer (docs/contract.md §5).

use crate::answer::Answers;

/// Renders answers as one line of compact JSON, keys in the order `answers`, `id`,
/// `selected`, `custom` (absent when unused), no spaces, no trailing newline:
///
/// ```
/// use ask_user_core::{render, AnswerItem, Answers};
/// let answers = Answers { answers: vec![
///     AnswerItem::selected("db", ["PostgreSQL (Recommended)"]),
///     AnswerItem::custom("name", "billing-api"),
/// ]};
/// assert_eq!(render(&answers),
///     r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"name","selected":[],"custom":"billing-api"}]}"#);
/// ```
///
/// Strings are escaped exactly as JavaScript's `JSON.stringify` escapes them: `"` and `\`,
/// `\b \f \n \r \t`, other C0 controls as lowercase `\u00XX`, everything else (DEL, C1,
/// U+2028/2029, non-ASCII) raw. serde_json's compact writer follows the same rules, which the
/// differential test against the published reference checks.
pub fn render(answers: &Answers) -> String {
    // Serialising strings and vectors into a String cannot fail.
    serde_json::to_string(answers).unwrap_or_default()
}
