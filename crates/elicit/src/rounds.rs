//! The refusal rounds of a form, shared by both ways of eliciting (`elicitation/create` in
//! [`ElicitAnswerer`](crate::ElicitAnswerer) and the input-required result of the MCP host), so
//! both send the form the same number of times with the same texts.

use std::fmt::Display;

/// How many times a form goes out in all when the client keeps returning content that does
/// not fit: the first form and two more, each with [`not_accepted`] on top; then the call
/// fails with [`did_not_fit`].
pub const MAX_ROUNDS: u32 = 3;

/// The notice on top of a form sent again: `Not accepted: <reason>. Please answer again.`
pub fn not_accepted(reason: &impl Display) -> String {
    format!("Not accepted: {reason}. Please answer again.")
}

/// The failure after [`MAX_ROUNDS`] refused forms (the model reads it after `Error: `):
/// `the answers from the MCP client's form did not fit the questions (<reason>); ask again`.
pub fn did_not_fit(reason: &impl Display) -> String {
    format!(
        "the answers from the MCP client's form did not fit the questions ({reason}); ask again"
    )
}
