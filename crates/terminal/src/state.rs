//! The question view's state machine and key handling: pure, no I/O.
//!
//! Behaviours (docs/contract.md §6 Terminal):
//!
//! - one question at a time, in order; each shows its options and, always last, a row for the
//!   human's own answer;
//! - the cursor starts on the recommended option (the first whose label ends in
//!   `(Recommended)`), else on the first; in a multi-select the recommended option starts
//!   chosen;
//! - ↑/↓ (or k/j) move; a digit picks that option (single-select: picks and confirms;
//!   multi-select: toggles); Space toggles in a multi-select; Enter confirms;
//! - on the own-answer row every printable key goes into the text (digits, j, k and Space
//!   too); on an option row, any other printable key jumps to the own-answer row and types;
//!   Backspace deletes; pasted text goes there too, newlines turned into spaces;
//! - Enter with nothing chosen and nothing typed asks once more ("press Enter again to skip");
//!   the second Enter skips the question;
//! - Esc skips the question; Ctrl-C dismisses the whole batch;
//! - ←, Shift-Tab, or Backspace with no text go back to the previous question, which keeps
//!   what the human chose there (with text typed, ← does nothing: Shift-Tab still goes back);
//! - in the text, Ctrl-U clears it and Ctrl-W deletes the last word;
//! - after the last question the answers go through [`ask_user_core::normalise`]; a refusal
//!   is shown and the batch stays open.

use ask_user_core::{AnswerItem, Answers, AskUserQuestionRequest, Question, normalise};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What the loop does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Redraw and wait for the next key.
    Stay,
    /// Every question is answered (or skipped) and the answers passed normalisation.
    Done(Answers),
    /// The human dismissed the whole batch (Ctrl-C).
    Dismissed,
}

/// A message under the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Notice {
    /// Enter was pressed with nothing chosen or typed; a second Enter skips.
    ConfirmEmpty,
    /// The submission was refused by normalisation; the text says why.
    Refused(String),
}

/// What the human did so far with one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuestionState {
    /// The highlighted row: `0..options.len()` an option, `options.len()` the own answer.
    pub(crate) cursor: usize,
    /// Which options are chosen (multi-select; single-select confirms at once).
    pub(crate) chosen: Vec<bool>,
    /// The own answer typed so far.
    pub(crate) text: String,
    /// The confirmed answer, once the human confirmed or skipped this question.
    pub(crate) answer: Option<AnswerItem>,
}

impl QuestionState {
    fn new(question: &Question) -> Self {
        let recommended = question.recommended();
        let mut chosen = vec![false; question.options.len()];
        if let (true, Some(i)) = (question.multi_select, recommended) {
            chosen[i] = true;
        }
        Self {
            cursor: recommended.unwrap_or(0),
            chosen,
            text: String::new(),
            answer: None,
        }
    }
}

/// The whole batch on screen: which question is shown and what was chosen.
#[derive(Debug, Clone)]
pub(crate) struct AskState<'r> {
    /// The request being asked.
    pub(crate) request: &'r AskUserQuestionRequest,
    /// One state per question, in request order.
    pub(crate) questions: Vec<QuestionState>,
    /// Index of the question on screen.
    pub(crate) current: usize,
    /// A message to show, cleared by the next key.
    pub(crate) notice: Option<Notice>,
}

impl<'r> AskState<'r> {
    /// The batch at its first question.
    pub(crate) fn new(request: &'r AskUserQuestionRequest) -> Self {
        Self {
            request,
            questions: request.questions().iter().map(QuestionState::new).collect(),
            current: 0,
            notice: None,
        }
    }

    /// The question on screen.
    pub(crate) fn question(&self) -> &'r Question {
        &self.request.questions()[self.current]
    }

    /// What was chosen for the question on screen.
    pub(crate) fn state(&self) -> &QuestionState {
        &self.questions[self.current]
    }

    fn state_mut(&mut self) -> &mut QuestionState {
        &mut self.questions[self.current]
    }

    /// Whether the cursor is on the own-answer row.
    pub(crate) fn on_text_row(&self) -> bool {
        self.state().cursor == self.question().options.len()
    }

    /// Handles one key event.
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Step {
        if key.kind == KeyEventKind::Release {
            return Step::Stay;
        }
        let confirming_empty = self.notice == Some(Notice::ConfirmEmpty);
        self.notice = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let plain = !ctrl && !key.modifiers.contains(KeyModifiers::ALT);
        let options = self.question().options.len();
        match key.code {
            KeyCode::Char('c') if ctrl => return Step::Dismissed,
            KeyCode::Esc => return self.confirm(AnswerItem::skipped(&self.question().id)),
            KeyCode::Enter => return self.enter(confirming_empty),
            KeyCode::Up => self.move_cursor(-1),
            KeyCode::Down => self.move_cursor(1),
            // Text is never lost by a stray ←: with text typed, only Shift-Tab goes back.
            KeyCode::Left if self.on_text_row() && !self.state().text.is_empty() => {}
            KeyCode::Left | KeyCode::BackTab => self.back(),
            KeyCode::Char('u') if ctrl && self.on_text_row() => self.state_mut().text.clear(),
            KeyCode::Char('w') if ctrl && self.on_text_row() => {
                delete_word(&mut self.state_mut().text)
            }
            KeyCode::Backspace if self.on_text_row() && !self.state().text.is_empty() => {
                self.state_mut().text.pop();
            }
            KeyCode::Backspace => self.back(),
            KeyCode::Char(c) if plain && self.on_text_row() => self.state_mut().text.push(c),
            KeyCode::Char('k') if plain => self.move_cursor(-1),
            KeyCode::Char('j') if plain => self.move_cursor(1),
            KeyCode::Char(' ') if plain => self.toggle(self.state().cursor),
            KeyCode::Char(d @ '1'..='9') if plain => {
                let index = d as usize - '1' as usize;
                if index < options {
                    return self.pick(index);
                }
            }
            KeyCode::Char(c) if plain && !c.is_control() => {
                let state = self.state_mut();
                state.cursor = options;
                state.text.push(c);
            }
            _ => {}
        }
        Step::Stay
    }

    /// Pasted text (bracketed paste) goes into the own answer, on one line: a pasted newline
    /// never confirms.
    pub(crate) fn paste(&mut self, text: &str) {
        self.notice = None;
        let options = self.question().options.len();
        let state = self.state_mut();
        state.cursor = options;
        let flat = text
            .split(['\r', '\n'])
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        state.text.extend(flat.chars().filter(|c| !c.is_control()));
    }

    fn move_cursor(&mut self, delta: isize) {
        let last = self.question().options.len();
        let state = self.state_mut();
        state.cursor = state.cursor.saturating_add_signed(delta).min(last);
    }

    fn toggle(&mut self, index: usize) {
        let multi = self.question().multi_select;
        let state = self.state_mut();
        if let (true, Some(chosen)) = (multi, state.chosen.get_mut(index)) {
            *chosen = !*chosen;
        }
    }

    /// A digit: single-select picks and confirms, multi-select toggles.
    fn pick(&mut self, index: usize) -> Step {
        self.state_mut().cursor = index;
        if self.question().multi_select {
            self.toggle(index);
            return Step::Stay;
        }
        let question = self.question();
        self.confirm(AnswerItem::selected(
            &question.id,
            [question.options[index].label.clone()],
        ))
    }

    fn enter(&mut self, confirming_empty: bool) -> Step {
        let question = self.question();
        let state = self.state();
        let text = state.text.trim();
        let item = if question.multi_select {
            let selected = question
                .options
                .iter()
                .zip(&state.chosen)
                .filter(|(_, chosen)| **chosen)
                .map(|(option, _)| option.label.clone());
            let mut item = AnswerItem::selected(&question.id, selected);
            item.custom = (!text.is_empty()).then(|| text.to_owned());
            item
        } else if self.on_text_row() {
            if text.is_empty() {
                AnswerItem::skipped(&question.id)
            } else {
                AnswerItem::custom(&question.id, text)
            }
        } else {
            AnswerItem::selected(&question.id, [question.options[state.cursor].label.clone()])
        };
        if item.is_skipped() && !confirming_empty {
            self.notice = Some(Notice::ConfirmEmpty);
            return Step::Stay;
        }
        self.confirm(item)
    }

    fn back(&mut self) {
        self.current = self.current.saturating_sub(1);
    }

    /// Records the answer to the question on screen and moves on; after the last question,
    /// submits the batch.
    fn confirm(&mut self, item: AnswerItem) -> Step {
        self.state_mut().answer = Some(item);
        if self.current + 1 < self.questions.len() {
            self.current += 1;
            return Step::Stay;
        }
        self.submit()
    }

    /// The batch through [`normalise`]: done, or refused with the reason shown.
    pub(crate) fn submit(&mut self) -> Step {
        let answers = Answers {
            answers: self
                .request
                .questions()
                .iter()
                .zip(&self.questions)
                .map(|(q, s)| {
                    s.answer
                        .clone()
                        .unwrap_or_else(|| AnswerItem::skipped(&q.id))
                })
                .collect(),
        };
        match normalise(self.request, answers) {
            Ok(answers) => Step::Done(answers),
            Err(invalid) => {
                self.notice = Some(Notice::Refused(invalid.to_string()));
                Step::Stay
            }
        }
    }
}

/// Ctrl-W: deletes the word before the end of the text, and the spaces after it.
fn delete_word(text: &mut String) {
    let kept = text.trim_end().len();
    text.truncate(kept);
    let start = text.rfind(' ').map_or(0, |i| i + 1);
    text.truncate(start);
}

#[cfg(test)]
pub(crate) mod tests;
