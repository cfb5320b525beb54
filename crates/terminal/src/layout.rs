//! Layout: the question on screen as lines for a given width (pure; no drawing, no I/O).
//!
//! Every model-supplied text goes through [`crate::sanitize`] here, and is word-wrapped, never
//! cut: a long label or description takes more lines. The one exception is the header (a
//! heading, not the question): the chip is truncated to fit, and the header is shown above the
//! question on at most two lines, a longer one cut with a note that says how much is not shown.

use std::ops::Range;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use ask_user_core::{AnswerItem, Question};
use unicode_segmentation::UnicodeSegmentation;

use crate::editor::Editor;
use crate::sanitize::{sanitize, sanitize_line};
use crate::state::{AskState, Notice};

/// Colours on or off (`NO_COLOR`); without colour the view uses bold, dim and reverse only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Theme {
    /// Whether colours may be used.
    pub(crate) color: bool,
}

impl Theme {
    fn pick(self, colored: Style, plain: Style) -> Style {
        if self.color { colored } else { plain }
    }
    fn chip(self) -> Style {
        self.pick(
            Style::new()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }
    fn cursor(self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    fn recommended(self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }
    fn chosen(self) -> Style {
        self.pick(
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    fn notice(self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    fn refused(self) -> Style {
        self.pick(
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
}

const DIM: Style = Style::new().add_modifier(Modifier::DIM);
const BOLD: Style = Style::new().add_modifier(Modifier::BOLD);
/// Widest header chip, in columns.
const CHIP_MAX: usize = 24;
/// Most lines a header too long for its chip takes above the question.
const HEADER_LINES: usize = 2;
/// The own-answer row's placeholder.
pub(crate) const OWN_ANSWER: &str = "Type your own answer";

/// The question on screen as lines: a body that may scroll and a footer that stays.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Document {
    /// Earlier answers, chip line, question, options, own answer.
    pub(crate) body: Vec<Line<'static>>,
    /// The body lines of the highlighted row (kept visible when the body scrolls).
    pub(crate) cursor_lines: Range<usize>,
    /// The body line holding the caret of the own answer, when the cursor is there.
    pub(crate) caret_line: Option<usize>,
    /// The body lines of each row (options, then the own answer).
    pub(crate) rows: Vec<Range<usize>>,
    /// How many body lines ask the question (earlier answers, chip, header, question, blank
    /// line); kept in view when the options scroll, if they are not too many.
    pub(crate) head: usize,
    /// Notice and key help, always shown at the bottom.
    pub(crate) footer: Vec<Line<'static>>,
    /// The body lines of the question text.
    pub(crate) question_lines: Range<usize>,
    /// The body lines of the answer given before, on offer (empty when none is).
    pub(crate) again_lines: Range<usize>,
    /// The question on one line, for the top of a view scrolled past it.
    pub(crate) digest: String,
    /// The width laid out for.
    pub(crate) width: u16,
}

impl Document {
    /// Lines needed to show everything (with a blank line between body and footer).
    pub(crate) fn height(&self) -> usize {
        self.body.len() + 1 + self.footer.len()
    }
}

/// What was answered to `question`, in lines of at most `width` columns:
/// `✔ question → answer` on one line when it fits (the question shortened first); else the
/// question on its line and the answer wrapped below it (`  → answer`), never cut.
pub(crate) fn summary_lines(question: &Question, answer: &AnswerItem, width: usize) -> Vec<String> {
    let said = said(answer);
    let asked = sanitize_line(&question.question);
    // `✔ ` + at least 12 columns of the question + ` → ` + the answer.
    if said.width() + 5 + 12.min(asked.width()) <= width {
        let room = width - said.width() - 5;
        return vec![format!("✔ {} → {said}", truncate(&asked, room))];
    }
    let mut lines = vec![truncate(&format!("✔ {asked}"), width)];
    lines.extend(
        wrap(&said, width.saturating_sub(4).max(8))
            .into_iter()
            .enumerate()
            .map(|(i, l)| format!("{}{l}", if i == 0 { "  → " } else { "    " })),
    );
    lines
}

/// An answer in words: the options chosen and the own answer, comma-separated, or `skipped`.
fn said(answer: &AnswerItem) -> String {
    let mut parts: Vec<String> = answer.selected.iter().map(|l| sanitize_line(l)).collect();
    if let Some(custom) = &answer.custom {
        parts.push(sanitize_line(custom));
    }
    if parts.is_empty() {
        "skipped".to_owned()
    } else {
        parts.join(", ")
    }
}

/// What is left on screen when a question closes under the human with text typed: why it
/// closed, and each typed text in full (to read and copy), under its question.
pub(crate) fn closed_lines(state: &AskState<'_>, why: &str, width: usize) -> Vec<String> {
    let typed = state.typed_texts();
    if typed.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!("✘ Not sent: {why}. What you typed:")];
    for (index, text) in typed {
        let asked = sanitize_line(&state.request.questions()[index].question);
        lines.push(truncate(&format!("  {asked}"), width));
        lines.push(ask_user_core::text::inert(text).replace('\n', "\u{2424}"));
    }
    lines
}

/// Lays out the question on screen for `width` columns.
pub(crate) fn document(state: &AskState<'_>, width: u16, theme: Theme) -> Document {
    let width = usize::from(width.max(20));
    let question = state.question();
    let q = state.state();
    let mut body = Vec::new();

    // The same question answered before: that answer, whole, and the key that sends it again.
    if let Some(again) = state.again_offered() {
        body.push(Line::styled(
            format!(
                "↻ You answered this question before, at {}:",
                sanitize_line(&again.given)
            ),
            theme.notice(),
        ));
        // Every question of a batch in full with its answer; one question is shown in full
        // below, so only its answer here. Nothing is cut: all of it is read before it is sent.
        let batch = state.request.questions().len() > 1;
        for (asked, answer) in state.request.questions().iter().zip(&again.answers.answers) {
            if batch {
                body.extend(
                    wrap(&sanitize(&asked.question), width.saturating_sub(2).max(8))
                        .into_iter()
                        .map(|l| Line::raw(format!("  {l}"))),
                );
            }
            body.extend(
                wrap(&said(answer), width.saturating_sub(4).max(8))
                    .into_iter()
                    .enumerate()
                    .map(|(i, l)| {
                        let lead = if i == 0 { "  → " } else { "    " };
                        Line::styled(format!("{lead}{l}"), BOLD)
                    }),
            );
        }
        body.push(Line::styled("  Ctrl-R sends the same answer again.", DIM));
        body.push(Line::default());
    }
    let again_lines = 0..body.len();

    // What was answered before this question: what will be sent is on screen.
    for (asked, answered) in state.request.questions()[..state.current]
        .iter()
        .zip(&state.questions)
    {
        if let Some(answer) = &answered.answer {
            body.extend(
                summary_lines(asked, answer, width)
                    .into_iter()
                    .map(|l| Line::styled(l, DIM)),
            );
        }
    }

    // Chip and progress.
    let total = state.request.questions().len();
    let header = question.header.as_deref().map(sanitize_line);
    let mut chip_line = Vec::new();
    let mut full_header = None;
    if let Some(header) = &header {
        let max = CHIP_MAX.min(width.saturating_sub(8));
        let shown = truncate(header, max);
        if shown != *header {
            full_header = Some(header.clone());
        }
        chip_line.push(Span::styled(format!(" {shown} "), theme.chip()));
    }
    if total > 1 {
        if !chip_line.is_empty() {
            chip_line.push(Span::raw("  "));
        }
        chip_line.push(Span::styled(format!("{}/{total}", state.current + 1), DIM));
    }
    if !chip_line.is_empty() {
        body.push(Line::from(chip_line));
    }
    if let Some(full) = full_header {
        // A heading, not the question: at most [`HEADER_LINES`] lines, so that a header of
        // thousands of characters cannot push the question and its options off the screen.
        let mut lines = wrap(&full, width);
        if lines.len() > HEADER_LINES {
            let shown: usize = lines[..HEADER_LINES]
                .iter()
                .map(|l| l.chars().count())
                .sum();
            let rest = full.chars().count().saturating_sub(shown);
            lines.truncate(HEADER_LINES);
            let note = format!(" (header cut, {rest} more characters)");
            let last = &mut lines[HEADER_LINES - 1];
            *last = format!(
                "{}{note}",
                truncate(last, width.saturating_sub(note.width()).max(1))
                    .trim_end_matches('…')
                    .to_owned()
                    + "…"
            );
        }
        body.extend(lines.into_iter().map(|l| Line::styled(l, DIM)));
    }
    let question_start = body.len();
    body.extend(
        wrap(&sanitize(&question.question), width)
            .into_iter()
            .map(|l| Line::styled(l, BOLD)),
    );
    let question_lines = question_start..body.len();
    body.push(Line::default());
    let head = body.len();

    // Options, then the own-answer row.
    let count = question.options.len() + 1;
    let number_width = count.to_string().len();
    let mut cursor_lines = 0..0;
    let mut caret_line = None;
    let mut rows = Vec::with_capacity(count);
    for row in 0..count {
        let start = body.len();
        let here = q.cursor == row;
        let marker = if here { "› " } else { "  " };
        let number = if count > 1 {
            format!("{:>number_width$}. ", row + 1)
        } else {
            String::new()
        };
        let check = match (question.multi_select, q.chosen.get(row)) {
            (true, Some(true)) => "[x] ",
            (true, Some(false)) => "[ ] ",
            (true, None) => "    ",
            (false, _) => "",
        };
        let indent = marker.width() + check.width() + number.width();
        let text_width = width.saturating_sub(indent).max(8);
        let pad = " ".repeat(indent);
        let mut prefix = vec![
            Span::styled(marker, if here { theme.cursor() } else { Style::new() }),
            Span::styled(
                check,
                if check == "[x] " {
                    theme.chosen()
                } else {
                    Style::new()
                },
            ),
            Span::styled(number, if here { theme.cursor() } else { DIM }),
        ];
        if let Some(option) = question.options.get(row) {
            let style = match (here, option.is_recommended()) {
                (true, _) => theme.cursor(),
                (false, true) => theme.recommended(),
                (false, false) => Style::new(),
            };
            // A label is one line of meaning: a newline in it is shown as `␤`, so a label
            // can never draw something that looks like another option row.
            for (i, l) in wrap(&sanitize_line(&option.label), text_width)
                .into_iter()
                .enumerate()
            {
                let mut spans = if i == 0 {
                    std::mem::take(&mut prefix)
                } else {
                    vec![Span::raw(pad.clone())]
                };
                spans.push(Span::styled(l, style));
                body.push(Line::from(spans));
            }
            if let Some(description) = &option.description {
                for l in wrap(&sanitize(description), text_width) {
                    body.push(Line::from(vec![
                        Span::raw(pad.clone()),
                        Span::styled(l, DIM),
                    ]));
                }
            }
        } else {
            let caret = own_answer(&mut body, prefix, &pad, &q.text, here, text_width);
            if here {
                caret_line = caret;
            }
        }
        if here {
            cursor_lines = start..body.len();
        }
        rows.push(start..body.len());
    }

    let mut footer = Vec::new();
    let notice = match &state.notice {
        Some(Notice::ConfirmEmpty) if question.multi_select => Some((
            "Nothing chosen. Press Enter again to skip this question, or choose with Space."
                .to_owned(),
            theme.notice(),
        )),
        Some(Notice::ConfirmEmpty) => Some((
            "Nothing typed. Press Enter again to skip this question, or type an answer.".to_owned(),
            theme.notice(),
        )),
        Some(Notice::ConfirmSkipLast) => Some((
            "Skip this question? Enter sends the answers with it skipped; any other key keeps it open."
                .to_owned(),
            theme.notice(),
        )),
        Some(Notice::ConfirmDismiss) => Some((
            "Dismiss all questions? Your answers and typed text are lost. Ctrl-C again dismisses; any other key keeps them."
                .to_owned(),
            theme.notice(),
        )),
        Some(Notice::ConfirmAgain) => Some((
            format!(
                "Send the answer you gave at {} (shown above) again? Enter sends it; any other key keeps the question open.",
                state.again_offered().map_or(String::new(), |a| sanitize_line(&a.given))
            ),
            theme.notice(),
        )),
        Some(Notice::Refused(reason)) => Some((
            format!(
                "Cannot submit: {}. Change the answer and press Enter.",
                sanitize_line(reason)
            ),
            theme.refused(),
        )),
        None => None,
    };
    if let Some((text, style)) = notice {
        footer.extend(
            wrap(&text, width)
                .into_iter()
                .map(|l| Line::styled(l, style)),
        );
    }
    footer.extend(
        help_lines(&help(state), width)
            .into_iter()
            .map(|l| Line::styled(l, DIM)),
    );
    Document {
        body,
        cursor_lines,
        caret_line,
        rows,
        head,
        footer,
        question_lines,
        again_lines,
        digest: sanitize_line(&question.question),
        width: u16::try_from(width).unwrap_or(u16::MAX),
    }
}

/// The own-answer row: the typed text (wrapped, every grapheme kept) with a block caret, or
/// the placeholder. Returns the body line of the caret when the row is highlighted.
fn own_answer(
    body: &mut Vec<Line<'static>>,
    prefix: Vec<Span<'static>>,
    pad: &str,
    text: &Editor,
    here: bool,
    width: usize,
) -> Option<usize> {
    let block = Style::new().add_modifier(Modifier::REVERSED);
    if text.is_empty() {
        let mut spans = prefix;
        if here {
            spans.push(Span::styled(" ", block));
        }
        spans.push(Span::styled(OWN_ANSWER, DIM.add_modifier(Modifier::ITALIC)));
        body.push(Line::from(spans));
        return here.then(|| body.len() - 1);
    }
    // Graphemes as shown (each made inert on its own, so the caret maps one to one).
    let mut shown: Vec<(usize, String)> = text
        .text()
        .grapheme_indices(true)
        .map(|(i, g)| (i, ask_user_core::text::inert(g).replace('\n', "\u{2424}")))
        .collect();
    // The caret after the last grapheme is drawn on a space of its own.
    shown.push((text.text().len(), " ".to_owned()));
    let lines = wrap_graphemes(&shown, width);
    let mut prefix = Some(prefix);
    let mut caret_line = None;
    for line in lines {
        let mut spans = prefix
            .take()
            .unwrap_or_else(|| vec![Span::raw(pad.to_owned())]);
        let mut plain = String::new();
        for &(offset, ref g) in &shown[line] {
            if here && offset == text.caret() {
                spans.push(Span::raw(std::mem::take(&mut plain)));
                spans.push(Span::styled(g.clone(), block));
                caret_line = Some(body.len());
            } else {
                plain.push_str(g);
            }
        }
        spans.push(Span::raw(plain));
        body.push(Line::from(spans));
    }
    caret_line
}

/// Lines of graphemes at most `width` columns wide, broken after a space when the line has
/// one, else anywhere; nothing is dropped (spaces at a break stay at the end of the line).
fn wrap_graphemes(graphemes: &[(usize, String)], width: usize) -> Vec<Range<usize>> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let (mut start, mut used, mut after_space) = (0, 0, None::<usize>);
    for (i, (_, g)) in graphemes.iter().enumerate() {
        let w = g.width();
        if used + w > width && i > start {
            match after_space {
                // Break after the last space, moving the word begun since to the next line.
                Some(cut) if cut > start => {
                    lines.push(start..cut);
                    used = graphemes[cut..i].iter().map(|(_, g)| g.width()).sum();
                    start = cut;
                }
                _ => {
                    lines.push(start..i);
                    start = i;
                    used = 0;
                }
            }
            after_space = None;
            if used + w > width && i > start {
                lines.push(start..i);
                start = i;
                used = 0;
            }
        }
        used += w;
        if g == " " {
            after_space = Some(i + 1);
        }
    }
    lines.push(start..graphemes.len());
    lines
}

/// The key help for the question on screen, as items.
fn help(state: &AskState<'_>) -> Vec<String> {
    let question = state.question();
    let n = question.options.len();
    let mut keys = Vec::new();
    if let Some(left) = state.seconds_left {
        keys.push(format!("{}:{:02} left", left / 60, left % 60));
    }
    if n > 0 {
        keys.push("↑↓ move".to_owned());
        if question.multi_select {
            keys.push("Space toggle".to_owned());
        }
        let verb = if question.multi_select {
            "toggle"
        } else {
            "go to"
        };
        keys.push(match n {
            1 => format!("1 {verb}"),
            _ => format!("1-{n} {verb}"),
        });
    }
    keys.push("Enter confirm".to_owned());
    keys.push(
        if state.esc_back {
            "Esc back to the list"
        } else {
            "Esc skip"
        }
        .to_owned(),
    );
    if state.current > 0 {
        keys.push("← back".to_owned());
    }
    if state.again_offered().is_some() {
        keys.push("Ctrl-R same answer again".to_owned());
    }
    keys.push("Ctrl-C dismiss all".to_owned());
    keys
}

/// Help items joined by ` · `, wrapped between items (an item is split only when it alone is
/// wider than the line).
fn help_lines(items: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && line.width() + 3 + item.width() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str(" · ");
        }
        line.push_str(item);
    }
    lines.push(line);
    lines.iter().flat_map(|l| wrap(l, width)).collect()
}

/// Shortens `text` to at most `max` columns, ending in `…` when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// Word-wraps `text` to `width` columns; `\n` breaks lines; words wider than a line are split.
/// Never drops a character; spaces at a wrap point are dropped.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for hard in text.split('\n') {
        let mut line = String::new();
        let mut used = 0;
        for word in hard.split(' ') {
            let w = word.width();
            let gap = usize::from(!line.is_empty() || used > 0);
            if used + gap + w <= width {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(word);
                used += gap + w;
                continue;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if used + cw > width && used > 0 {
                    lines.push(std::mem::take(&mut line));
                    used = 0;
                }
                line.push(c);
                used += cw;
            }
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn wrap_breaks_at_spaces_and_splits_long_words() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("abcdefgh xy", 3), ["abc", "def", "gh", "xy"]);
        assert_eq!(wrap("one\ntwo", 10), ["one", "two"]);
        assert_eq!(wrap("部署部署", 4), ["部署", "部署"]);
        assert_eq!(wrap("", 4), [""]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("Deploy", 10), "Deploy");
        assert_eq!(truncate("Deployment target", 8), "Deploym…");
    }
}
