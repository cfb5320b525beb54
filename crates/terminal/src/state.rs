//! The question view's state machine and key handling: pure, no I/O.
//!
//! Two rules above every key (docs/contract.md §6 Terminal): **no stray key sends an answer**
//! and **typed text is never reinterpreted or lost**. The key map that follows from them (the
//! README has it as a table):
//!
//! - one question at a time, in order; each shows its options and, always last, a row for the
//!   human's own answer; the cursor starts on the recommended option (the first whose label
//!   ends in `(Recommended)`), else on the first; in a multi-select that option starts chosen;
//! - ↑/↓ (Ctrl-P/Ctrl-N) move; ↑ on the first option scrolls up through a question taller
//!   than the screen; PgUp/PgDn scroll a screenful, Home to the question's start, End back to
//!   the highlighted row — scrolling keys never move the choice (on the own-answer row with
//!   text typed Home/End move the caret instead); a question that does not fit opens at its
//!   start; Enter with the highlighted row scrolled away only brings it back in view;
//! - typed digits are option numbers: a digit extends the number being typed only when the
//!   longer number is an option and it comes within a second; else it starts the next number;
//! - every printable key typed on an option row goes into the own answer (letters are never
//!   navigation); the exception is a number: digits move to that option (multi-select: toggle
//!   it) and never confirm; `1` then `2` reaches option 12 when there is one; the own-answer
//!   row's number (options + 1) moves there and is not typed; Spaces between numbers only
//!   separate them (`1 3 5` ticks 1, 3 and 5; `2` Space in a single-select is option 2); a run
//!   of numbers and Spaces followed by any other typed character (`2 servers`) becomes the
//!   start of the own answer, every character kept, and the moves and toggles it made are
//!   undone; Space toggles in a multi-select when no number is being typed (on the
//!   own-answer row it is text);
//! - Enter confirms the question on screen (the option under the cursor, the chosen set, or
//!   the typed text); Enter with nothing chosen and nothing typed asks once more;
//! - Esc skips the question on screen; on the last question it asks for Enter first, so Esc
//!   never sends the batch by itself; Ctrl-C dismisses the whole batch — with an answer given
//!   or text typed it asks first, and a second Ctrl-C dismisses;
//! - ← (when no text is being edited) and Shift-Tab go back to the previous question, which
//!   keeps what the human chose there; Backspace only ever deletes text;
//! - the own answer is edited by [`Editor`] (caret, whole graphemes);
//! - Ctrl-L redraws, Ctrl-Z suspends (the loop does both);
//! - the same question answered before ([`Again`], shown above the first question): Ctrl-R
//!   asks "send the same answer again?" and Enter then sends that answer as this one — once
//!   every line of it was on screen (else Enter scrolls to it first); any other key keeps the
//!   question open;
//! - after the last question the answers go through [`ask_user_core::normalise`]; a refusal
//!   is shown and the batch stays open.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use ask_user_core::{
    AnswerItem, Answers, AskUserQuestionRequest, GivenBefore, Question, normalise,
};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::editor::Editor;

/// What the loop does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Redraw and wait for the next key.
    Stay,
    /// Every question is answered (or skipped) and the answers passed normalisation.
    Done(Answers),
    /// The human dismissed the whole batch (Ctrl-C).
    Dismissed,
    /// Ctrl-L: draw everything again from scratch.
    Redraw,
    /// Ctrl-Z: put the question away, stop the process, draw it again on resume.
    Suspend,
    /// Esc when the question was opened from a list: back to it, nothing decided.
    Back,
}

/// A message under the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Notice {
    /// Enter was pressed with nothing chosen or typed; a second Enter skips.
    ConfirmEmpty,
    /// Esc on the last question: Enter skips it and sends the answers.
    ConfirmSkipLast,
    /// The submission was refused by normalisation; the text says why.
    Refused(String),
    /// Ctrl-C with answers or typed text in progress: a second Ctrl-C dismisses.
    ConfirmDismiss,
    /// Ctrl-R with an answer given before on offer: Enter sends it again.
    ConfirmAgain,
}

/// The answer the human gave before to the same question (docs/contract.md §8), offered above
/// the first question: Ctrl-R, then Enter, sends it as the answer to this ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Again {
    /// The answers given then.
    pub(crate) answers: Answers,
    /// When, as the human reads it: `10:42` today, else `2026-12-01 10:42` (local time).
    pub(crate) given: String,
}

impl Again {
    /// The offer of `given`, its time in the local zone (the date too when not today).
    pub(crate) fn of(given: &GivenBefore) -> Self {
        let at: chrono::DateTime<chrono::Local> = given.given_at.into();
        let today = chrono::Local::now().date_naive();
        let format = if at.date_naive() == today {
            "%H:%M"
        } else {
            "%Y-%m-%d %H:%M"
        };
        Self {
            answers: given.answers.clone(),
            given: at.format(format).to_string(),
        }
    }
}

/// What the human did so far with one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuestionState {
    /// The highlighted row: `0..options.len()` an option, `options.len()` the own answer.
    pub(crate) cursor: usize,
    /// Which options are chosen (multi-select; single-select confirms at once).
    pub(crate) chosen: Vec<bool>,
    /// The own answer typed so far.
    pub(crate) text: Editor,
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
            text: Editor::default(),
            answer: None,
        }
    }
}

/// How long a typed option number waits for a next digit that extends it (`1` then `2` is
/// option 12 when there is one); a digit after this starts the next number.
pub(crate) const NUMBER_TIMEOUT: Duration = Duration::from_millis(1_000);

/// Digits typed on option rows in a row: each digit that cannot extend the number being typed
/// (or comes after [`NUMBER_TIMEOUT`]) starts the next number, so `1` `3` in a five-option
/// multi-select ticks options 1 and 3. Kept with the question as it was before the first
/// digit, so that text typed after the digits can take them all back as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Number {
    /// Every digit of the run, in order (the text it becomes if a non-digit follows).
    run: String,
    /// The question before the first digit of the run.
    before_run: QuestionState,
    /// The digits of the number being typed (the last number of the run).
    digits: String,
    /// The question before that number (Backspace takes the number back to it).
    before: QuestionState,
    /// When its last digit came.
    at: Instant,
    /// A Space came after the number: the next digit starts a number of its own.
    separated: bool,
}

/// What the renderer learnt about the view, for the keys that depend on it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ViewInfo {
    /// How many lines the view is scrolled down to keep the cursor in sight (the most the
    /// human can scroll up).
    pub(crate) follow_offset: Cell<usize>,
    /// Option rows in one screenful.
    pub(crate) page: Cell<usize>,
    /// Body lines in one screenful (PgUp/PgDn scroll by this).
    pub(crate) window: Cell<usize>,
    /// How many lines the view was actually scrolled up from the cursor's view.
    pub(crate) peek_used: Cell<usize>,
    /// Whether the highlighted row is off screen (Enter then only brings it back in view).
    pub(crate) cursor_hidden: Cell<bool>,
    /// Which lines of the question text were drawn so far: the question's index, the width
    /// laid out for, and one flag per line of the question.
    pub(crate) seen: RefCell<(usize, u16, Vec<bool>)>,
    /// While a line of the question text was never on screen: the scroll (`peek`) that brings
    /// the first such line to the top of the view (Enter then scrolls there instead of
    /// confirming).
    pub(crate) unseen_peek: Cell<Option<usize>>,
    /// The same for the lines of the answer given before ([`Again`]): which were drawn, and
    /// the scroll to the first never drawn (Enter then scrolls there instead of sending it).
    pub(crate) again_seen: RefCell<(u16, Vec<bool>)>,
    /// See [`ViewInfo::again_seen`].
    pub(crate) again_unseen_peek: Cell<Option<usize>>,
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
    /// A number being typed on an option row.
    pub(crate) number: Option<Number>,
    /// Lines the human scrolled up from the view that follows the cursor.
    pub(crate) peek: usize,
    /// The question on screen was just opened: a view too short for question and options
    /// shows the question's start first (the renderer scrolls to the top).
    pub(crate) show_top: bool,
    /// Esc goes back to the list the question was opened from (`ask-user inbox`).
    pub(crate) esc_back: bool,
    /// Published by the renderer.
    pub(crate) view: ViewInfo,
    /// Seconds left before the ask times out, when it has a budget.
    pub(crate) seconds_left: Option<u64>,
    /// The answer given before to the same question, on offer above the first question.
    pub(crate) again: Option<Again>,
}

impl<'r> AskState<'r> {
    /// The batch at its first question.
    pub(crate) fn new(request: &'r AskUserQuestionRequest) -> Self {
        Self {
            request,
            questions: request.questions().iter().map(QuestionState::new).collect(),
            current: 0,
            notice: None,
            number: None,
            peek: 0,
            show_top: true,
            esc_back: false,
            view: ViewInfo::default(),
            seconds_left: None,
            again: None,
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

    /// Whether the human has something to lose: a question answered, or text typed.
    pub(crate) fn in_progress(&self) -> bool {
        self.questions
            .iter()
            .any(|q| q.answer.is_some() || !q.text.is_empty())
    }

    /// Everything the human typed as their own answers, by question (question index, text).
    pub(crate) fn typed_texts(&self) -> Vec<(usize, &str)> {
        self.questions
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.text.text().trim().is_empty())
            .map(|(i, q)| (i, q.text.text()))
            .collect()
    }

    /// Whether the cursor is on the own-answer row.
    pub(crate) fn on_text_row(&self) -> bool {
        self.state().cursor == self.question().options.len()
    }

    /// The answer given before, when it is on offer on the screen shown (the first question).
    pub(crate) fn again_offered(&self) -> Option<&Again> {
        self.again.as_ref().filter(|_| self.current == 0)
    }

    fn is_last(&self) -> bool {
        self.current + 1 == self.questions.len()
    }

    /// Handles one key event, arriving now.
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Step {
        self.handle_key_at(key, Instant::now())
    }

    /// Handles one key event that arrived at `now` (the clock only matters to typed numbers).
    pub(crate) fn handle_key_at(&mut self, key: KeyEvent, now: Instant) -> Step {
        if key.kind == KeyEventKind::Release {
            return Step::Stay;
        }
        if std::mem::take(&mut self.show_top) {
            // The view opened at the question's start: keys scroll from what is on screen.
            self.peek = self.view.peek_used.get();
        }
        let confirming = self.notice.take();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if let KeyCode::Char(c) = key.code
            && !ctrl
            && !alt
            && !c.is_control()
        {
            self.typed(c, now);
            return Step::Stay;
        }
        // Any other key ends a number being typed: the move or toggle it made stays.
        let number = self.number.take();
        let editing = self.on_text_row() && !self.state().text.is_empty();
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if confirming == Some(Notice::ConfirmDismiss) || !self.in_progress() {
                    return Step::Dismissed;
                }
                self.notice = Some(Notice::ConfirmDismiss);
            }
            KeyCode::Char('l') if ctrl => return Step::Redraw,
            // The answer given before: Ctrl-R shows it (scrolled to) and asks; Enter sends it.
            KeyCode::Char('r') if ctrl && self.again_offered().is_some() => {
                self.peek = self.view.follow_offset.get();
                self.notice = Some(Notice::ConfirmAgain);
            }
            KeyCode::Enter if confirming == Some(Notice::ConfirmAgain) => {
                return self.send_again();
            }
            KeyCode::Char('z') if ctrl => return Step::Suspend,
            KeyCode::Esc if self.esc_back => return Step::Back,
            // On the last question Esc only asks (again, if pressed twice): only Enter sends.
            KeyCode::Esc if self.is_last() => self.notice = Some(Notice::ConfirmSkipLast),
            KeyCode::Esc => return self.confirm(AnswerItem::skipped(&self.question().id)),
            // No key sends what the screen does not show: while part of the question text was
            // never on screen (a tiny terminal), Enter scrolls to it first; with the
            // highlighted row scrolled away, Enter brings it back in view first.
            KeyCode::Enter if self.view.unseen_peek.get().is_some() => {
                self.peek = self.view.unseen_peek.get().unwrap_or(0);
                self.notice = confirming;
            }
            KeyCode::Enter if self.view.cursor_hidden.get() => {
                self.peek = 0;
                self.notice = confirming;
            }
            KeyCode::Enter if confirming == Some(Notice::ConfirmSkipLast) => {
                return self.confirm(AnswerItem::skipped(&self.question().id));
            }
            KeyCode::Enter => return self.enter(confirming == Some(Notice::ConfirmEmpty)),
            KeyCode::Up => self.up(1),
            KeyCode::Char('p') if ctrl => self.up(1),
            KeyCode::Down => self.down(1),
            KeyCode::Char('n') if ctrl => self.down(1),
            // Scrolling keys move the view, never the choice.
            KeyCode::PageUp => {
                let most = self.view.follow_offset.get();
                self.peek = self.peek.saturating_add(self.window()).min(most);
            }
            KeyCode::PageDown => self.peek = self.peek.saturating_sub(self.window()),
            KeyCode::Home if editing => self.state_mut().text.home(),
            KeyCode::End if editing => self.state_mut().text.end(),
            KeyCode::Home => self.peek = self.view.follow_offset.get(),
            KeyCode::End => self.peek = 0,
            KeyCode::Left if editing => self.state_mut().text.left(),
            KeyCode::Right if editing => self.state_mut().text.right(),
            KeyCode::Left | KeyCode::BackTab => self.back(),
            KeyCode::Backspace if number.is_some() => {
                // The number typed is taken back whole.
                if let Some(number) = number {
                    *self.state_mut() = number.before;
                }
            }
            _ if self.on_text_row() => self.edit(key.code, ctrl),
            _ => {}
        }
        Step::Stay
    }

    /// Editing keys on the own-answer row.
    fn edit(&mut self, code: KeyCode, ctrl: bool) {
        let text = &mut self.state_mut().text;
        match code {
            KeyCode::Backspace => text.backspace(),
            KeyCode::Delete => text.delete(),
            KeyCode::Char('a') if ctrl => text.home(),
            KeyCode::Char('e') if ctrl => text.end(),
            KeyCode::Char('b') if ctrl => text.left(),
            KeyCode::Char('f') if ctrl => text.right(),
            KeyCode::Char('w') if ctrl => text.delete_word(),
            KeyCode::Char('u') if ctrl => text.delete_to_start(),
            KeyCode::Char('k') if ctrl => text.delete_to_end(),
            KeyCode::Char('h') if ctrl => text.backspace(),
            _ => {}
        }
    }

    /// A digit on an option row: it extends the number being typed when the longer number is
    /// an option and it came within [`NUMBER_TIMEOUT`]; else it starts the next number, the
    /// previous one's move or toggle kept; the own-answer row's number moves there. A digit that
    /// is no row's number at all (`0`, or
    /// `7` of three options) makes the whole run of digits the start of the own answer.
    fn digit(&mut self, c: char, number: Option<Number>, now: Instant) {
        let options = self.question().options.len();
        let option = |digits: &str| {
            digits
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=options + 1).contains(n) && !digits.starts_with('0'))
        };
        let (mut run, before_run, extended) = match number {
            Some(n) if n.separated => (n.run, n.before_run, None),
            Some(n) => {
                let longer = format!("{}{c}", n.digits);
                let in_time = now.saturating_duration_since(n.at) < NUMBER_TIMEOUT;
                let extended = (in_time && option(&longer).is_some()).then_some((longer, n.before));
                (n.run, n.before_run, extended)
            }
            None => (String::new(), self.state().clone(), None),
        };
        run.push(c);
        let (digits, before) = extended.unwrap_or_else(|| (c.to_string(), self.state().clone()));
        let Some(n) = option(&digits) else {
            self.make_text(before_run, &run);
            return;
        };
        let multi = self.question().multi_select;
        let state = self.state_mut();
        *state = before.clone();
        state.cursor = n - 1;
        // The own-answer row's number (options + 1) only moves there; an option's toggles it.
        if let (true, Some(chosen)) = (multi, state.chosen.get_mut(n - 1)) {
            *chosen = !*chosen;
        }
        self.number = Some(Number {
            run,
            before_run,
            digits,
            before,
            at: now,
            separated: false,
        });
    }

    /// A printable character: text, or (on an option row) a number or a Space toggle.
    fn typed(&mut self, c: char, now: Instant) {
        self.peek = 0;
        if self.on_text_row() {
            // Text typed after the own-answer row's number is the text: the number only moved.
            self.number = None;
            let mut buf = [0u8; 4];
            self.state_mut().text.insert(c.encode_utf8(&mut buf));
            return;
        }
        let number = self.number.take();
        if c.is_ascii_digit() {
            self.digit(c, number, now);
            return;
        }
        if let Some(mut n) = number {
            if c == ' ' {
                // Space after a number separates it from the next one; the number's move or
                // toggle stays, and words typed after it still make the whole run text.
                n.run.push(' ');
                n.separated = true;
                self.number = Some(n);
                return;
            }
            let mut text = n.run;
            text.push(c);
            self.make_text(n.before_run, &text);
            return;
        }
        if c == ' ' {
            // Space on an option row: a toggle in a multi-select; nothing in a single-select
            // (a leading space would be trimmed from the answer anyway).
            let cursor = self.state().cursor;
            self.toggle(cursor);
            return;
        }
        let mut buf = [0u8; 4];
        self.make_text(self.state().clone(), c.encode_utf8(&mut buf));
    }

    /// The question back as it was in `before`, the cursor on the own-answer row and `text`
    /// appended to what was typed there.
    fn make_text(&mut self, before: QuestionState, text: &str) {
        let options = self.question().options.len();
        let state = self.state_mut();
        *state = before;
        state.cursor = options;
        state.text.end();
        state.text.insert(text);
    }

    /// Pasted text (bracketed paste) goes into the own answer, on one line: a pasted newline
    /// never confirms. A number typed just before becomes the start of the text.
    pub(crate) fn paste(&mut self, text: &str) {
        self.notice = None;
        self.peek = 0;
        self.show_top = false;
        let flat = text
            .split(['\r', '\n'])
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let flat: String = flat.chars().filter(|c| !c.is_control()).collect();
        let (before, flat) = match self.number.take() {
            // The own-answer row's number moved there and is not text.
            Some(n) if !self.on_text_row() => (n.before_run, n.run + &flat),
            _ => (self.state().clone(), flat),
        };
        if self.on_text_row() {
            self.state_mut().text.insert(&flat);
        } else {
            self.make_text(before, &flat);
        }
    }

    fn window(&self) -> usize {
        self.view.window.get().saturating_sub(1).max(1)
    }

    fn up(&mut self, rows: usize) {
        let state = self.state_mut();
        if state.cursor == 0 {
            // Already at the top: scroll up through the question instead.
            let most = self.view.follow_offset.get();
            let step = if rows == 1 { 1 } else { rows.max(3) };
            self.peek = self.peek.saturating_add(step).min(most);
            return;
        }
        state.cursor = state.cursor.saturating_sub(rows);
        self.peek = 0;
    }

    fn down(&mut self, rows: usize) {
        let last = self.question().options.len();
        let state = self.state_mut();
        state.cursor = state.cursor.saturating_add(rows).min(last);
        self.peek = 0;
    }

    fn toggle(&mut self, index: usize) {
        let multi = self.question().multi_select;
        let state = self.state_mut();
        if let (true, Some(chosen)) = (multi, state.chosen.get_mut(index)) {
            *chosen = !*chosen;
        }
    }

    /// Enter: the answer to the question on screen (with nothing chosen or typed, only when
    /// this is the second Enter).
    fn enter(&mut self, confirming_empty: bool) -> Step {
        let question = self.question();
        let state = self.state();
        let text = state.text.text().trim();
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
        if self.current > 0 {
            self.current -= 1;
            self.peek = 0;
            self.show_top = true;
        }
    }

    /// Enter after Ctrl-R: the answer given before, as this ask's answer — only once every line
    /// of it and of the question was on screen; before that, Enter scrolls to the first line
    /// never shown.
    fn send_again(&mut self) -> Step {
        let unseen = self.view.again_unseen_peek.get();
        if let Some(peek) = unseen.or(self.view.unseen_peek.get()) {
            self.peek = peek;
            self.notice = Some(Notice::ConfirmAgain);
            return Step::Stay;
        }
        let Some(again) = self.again_offered() else {
            return Step::Stay;
        };
        match normalise(self.request, again.answers.clone()) {
            Ok(answers) => Step::Done(answers),
            Err(invalid) => {
                self.notice = Some(Notice::Refused(invalid.to_string()));
                Step::Stay
            }
        }
    }

    /// Records the answer to the question on screen and moves on; after the last question,
    /// submits the batch.
    fn confirm(&mut self, item: AnswerItem) -> Step {
        self.state_mut().answer = Some(item);
        self.peek = 0;
        if !self.is_last() {
            self.current += 1;
            self.show_top = true;
            return Step::Stay;
        }
        self.submit()
    }

    /// The batch through [`normalise`]: done, or refused with the reason shown.
    pub(crate) fn submit(&mut self) -> Step {
        match normalise(self.request, self.answers()) {
            Ok(answers) => Step::Done(answers),
            Err(invalid) => {
                self.notice = Some(Notice::Refused(invalid.to_string()));
                Step::Stay
            }
        }
    }

    /// The answers recorded so far (a question not yet confirmed counts as skipped).
    fn answers(&self) -> Answers {
        Answers {
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
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
