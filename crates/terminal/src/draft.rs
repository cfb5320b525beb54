//! What the human did with a batch they left without deciding, kept for the next time the
//! same batch is opened (`ask-user inbox`: Esc back to the list, then Enter on the same ask).

use std::sync::{Arc, Mutex, PoisonError};

use ask_user_core::AskUserQuestionRequest;

use crate::state::{AskState, QuestionState};

/// A batch left on screen without a decision: the choices, the confirmed answers and the
/// typed own answers of each question, and which question was on screen.
///
/// A `Draft` is a shared handle (clones see the same contents). Give the same draft to
/// [`crate::Terminal::with_draft`] each time one ask is opened: when the human goes back
/// (Esc with [`crate::Terminal::with_esc_back`]) or the question closes under them, what they
/// did is kept in it; the next ask of the same request starts from it. A confirmed batch
/// empties it. A draft saved for another request (other questions or options) is ignored.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    saved: Arc<Mutex<Option<Saved>>>,
}

#[derive(Debug, Clone)]
struct Saved {
    /// The request the draft was made for.
    request: AskUserQuestionRequest,
    questions: Vec<QuestionState>,
    current: usize,
}

impl Draft {
    /// An empty draft.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything typed as own answers and not sent: (question index, text), in request
    /// order; blank texts are left out. Empty when nothing was typed.
    pub fn typed(&self) -> Vec<(usize, String)> {
        self.lock()
            .as_ref()
            .map(|saved| {
                saved
                    .questions
                    .iter()
                    .enumerate()
                    .filter(|(_, q)| !q.text.text().trim().is_empty())
                    .map(|(i, q)| (i, q.text.text().to_owned()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Forgets what was kept.
    pub fn clear(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Saved>> {
        self.saved.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps what the human did in `state`.
    pub(crate) fn save(&self, state: &AskState<'_>) {
        *self.lock() = Some(Saved {
            request: state.request.clone(),
            questions: state.questions.clone(),
            current: state.current,
        });
    }

    /// Puts a draft of the same request back into `state` (which is at its start).
    pub(crate) fn restore(&self, state: &mut AskState<'_>) {
        let saved = self.lock();
        let Some(saved) = saved.as_ref() else {
            return;
        };
        if &saved.request != state.request || saved.questions.len() != state.questions.len() {
            return;
        }
        state.questions.clone_from(&saved.questions);
        state.current = saved.current.min(state.questions.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use pretty_assertions::assert_eq;

    use super::Draft;
    use crate::state::tests::request;
    use crate::state::{AskState, Step};

    const BATCH: &str = r#"{"questions":[{"id":"a","question":"A?","options":["A1 (Recommended)","A2"]},{"id":"b","question":"B?","options":["B1","B2"]}]}"#;

    fn press(state: &mut AskState<'_>, codes: &[KeyCode]) {
        for code in codes {
            state.handle_key(KeyEvent::new(*code, KeyModifiers::NONE));
        }
    }

    #[test]
    fn going_back_keeps_answers_and_typed_text_for_the_same_request_only() {
        let asked = request(BATCH);
        let mut state = AskState::new(&asked);
        state.esc_back = true;
        press(
            &mut state,
            &[KeyCode::Enter, KeyCode::Char('h'), KeyCode::Char('i')],
        );
        assert_eq!(
            state.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
            Step::Back
        );
        let draft = Draft::new();
        draft.save(&state);
        assert_eq!(draft.typed(), vec![(1, "hi".to_owned())]);

        let mut again = AskState::new(&asked);
        draft.restore(&mut again);
        assert_eq!(again.current, 1, "the question the human left");
        assert_eq!(again.questions, state.questions);
        assert_eq!(again.state().text.text(), "hi");

        let other =
            request(r#"{"questions":[{"id":"a","question":"A?"},{"id":"b","question":"B?"}]}"#);
        let mut fresh = AskState::new(&other);
        draft.restore(&mut fresh);
        assert_eq!(fresh.current, 0, "another request starts afresh");
        assert!(fresh.questions.iter().all(|q| q.text.is_empty()));

        draft.clear();
        assert_eq!(draft.typed(), Vec::new());
    }
}
