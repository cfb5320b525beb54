//! Telling a headless client's refusal from a human's "no" (docs/contract.md §7, headless
//! hosts).
//!
//! Hosts run headless (`claude -p`, `codex exec`) still declare elicitation, then refuse every
//! form themselves: Claude Code 2.1 cancels 76 ms after receiving it, Codex 0.171 declines in
//! the same millisecond. Nobody saw the question, so it must not reach the model as the
//! human's dismissal: a decline or cancel that comes back sooner than [`HUMAN_REACTION`] after
//! the form went out means "this client cannot show forms", and the question moves to the next
//! answerer (the page, the inbox, the hub) or, with none, ends with the no-answerer outcome.

use std::time::Duration;

/// The least time between a form going out and a person refusing it: reading the form and
/// pressing Esc takes a human well over a second; a headless client refuses within
/// milliseconds. A refusal sooner than this is the client's, not the human's.
pub const HUMAN_REACTION: Duration = Duration::from_secs(1);

/// The reason of the [`AskError::Unavailable`](ask_user_core::AskError::Unavailable) a too
/// fast refusal becomes (logged; the model reads the next answerer's outcome instead).
pub const REFUSED_UNSEEN: &str =
    "the MCP client refused the form before anyone could read it (it runs without a screen)";

/// Whether a decline or cancel that came `elapsed` after the form went out was the client's
/// own (faster than `floor`, usually [`HUMAN_REACTION`]; a zero floor takes every refusal as
/// the human's).
pub fn refused_unseen(elapsed: Duration, floor: Duration) -> bool {
    elapsed < floor
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_faster_than_a_person_is_the_clients() {
        // What the hosts measured: Claude Code -p after 76 ms, codex exec at once.
        assert!(refused_unseen(Duration::from_millis(76), HUMAN_REACTION));
        assert!(refused_unseen(Duration::ZERO, HUMAN_REACTION));
        assert!(!refused_unseen(Duration::from_millis(1500), HUMAN_REACTION));
        assert!(!refused_unseen(Duration::ZERO, Duration::ZERO));
    }
}
