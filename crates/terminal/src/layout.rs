//! Layout: the question on screen as lines for a given width (pure; no drawing, no I/O).
//!
//! Every model-supplied text goes through [`crate::sanitize`] here, and is word-wrapped, never
//! cut: a long label or description takes more lines. The one exception is the header chip,
//! which is truncated to fit and then shown in full on its own line above the question.

use std::ops::Range;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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
/// The own-answer row's placeholder.
pub(crate) const OWN_ANSWER: &str = "Type your own answer";

/// The question on screen as lines: a body that may scroll and a footer that stays.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Document {
    /// Chip line, question, options, own answer.
    pub(crate) body: Vec<Line<'static>>,
    /// The body lines of the highlighted row (kept visible when the body scrolls).
    pub(crate) cursor_lines: Range<usize>,
    /// How many body lines ask the question (chip, header, question, blank line); kept in
    /// view when the options scroll, if they are not too many.
    pub(crate) head: usize,
    /// Notice and key help, always shown at the bottom.
    pub(crate) footer: Vec<Line<'static>>,
}

impl Document {
    /// Lines needed to show everything.
    pub(crate) fn height(&self) -> usize {
        self.body.len() + self.footer.len()
    }
}

/// Lays out the question on screen for `width` columns.
pub(crate) fn document(state: &AskState<'_>, width: u16, theme: Theme) -> Document {
    let width = usize::from(width.max(20));
    let question = state.question();
    let q = state.state();
    let mut body = Vec::new();

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
        body.extend(wrap(&full, width).into_iter().map(|l| Line::styled(l, DIM)));
    }
    body.extend(
        wrap(&sanitize(&question.question), width)
            .into_iter()
            .map(|l| Line::styled(l, BOLD)),
    );
    body.push(Line::default());
    let head = body.len();

    // Options, then the own-answer row.
    let rows = question.options.len() + 1;
    let number_width = rows.to_string().len();
    let mut cursor_lines = 0..0;
    for row in 0..rows {
        let start = body.len();
        let here = q.cursor == row;
        let marker = if here { "› " } else { "  " };
        let number = if rows > 1 {
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
            for (i, l) in wrap(&sanitize(&option.label), text_width)
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
            own_answer(&mut body, prefix, &pad, &q.text, here, text_width);
        }
        if here {
            cursor_lines = start..body.len();
        }
    }

    body.push(Line::default());

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
        head,
        footer,
    }
}

/// The own-answer row: the typed text (wrapped) with a block cursor, or the placeholder.
fn own_answer(
    body: &mut Vec<Line<'static>>,
    prefix: Vec<Span<'static>>,
    pad: &str,
    text: &str,
    here: bool,
    width: usize,
) {
    let block = Style::new().add_modifier(Modifier::REVERSED);
    if text.is_empty() {
        let mut spans = prefix;
        if here {
            spans.push(Span::styled(" ", block));
        }
        spans.push(Span::styled(OWN_ANSWER, DIM.add_modifier(Modifier::ITALIC)));
        body.push(Line::from(spans));
        return;
    }
    let lines = wrap(&sanitize_line(text), width.saturating_sub(1));
    let last = lines.len().saturating_sub(1);
    let mut prefix = Some(prefix);
    for (i, l) in lines.into_iter().enumerate() {
        let mut spans = prefix
            .take()
            .unwrap_or_else(|| vec![Span::raw(pad.to_owned())]);
        spans.push(Span::raw(l));
        if here && i == last {
            spans.push(Span::styled(" ", block));
        }
        body.push(Line::from(spans));
    }
}

/// The key help for the question on screen, as items.
fn help(state: &AskState<'_>) -> Vec<String> {
    let question = state.question();
    let n = question.options.len();
    let mut keys = Vec::new();
    if n > 0 {
        keys.push("↑↓ move".to_owned());
        if question.multi_select {
            keys.push("Space toggle".to_owned());
        }
        keys.push(match n {
            1 => "1 pick".to_owned(),
            _ => format!("1-{} pick", n.min(9)),
        });
    }
    keys.push("Enter confirm".to_owned());
    keys.push("Esc skip".to_owned());
    if state.current > 0 {
        keys.push("← back".to_owned());
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
