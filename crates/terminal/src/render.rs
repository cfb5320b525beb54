//! Render: the question drawn into a buffer area; a function of the state and the area only.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

const BOLD: Style = Style::new().add_modifier(Modifier::BOLD);

use crate::layout::{Document, Theme, document, wrap};
use crate::state::AskState;

/// The smallest area the question is drawn in; a smaller one shows [`TOO_SMALL`].
pub(crate) const MIN_WIDTH: u16 = 30;
/// See [`MIN_WIDTH`].
pub(crate) const MIN_HEIGHT: u16 = 6;
/// What a terminal below [`MIN_WIDTH`]×[`MIN_HEIGHT`] shows instead of the question.
pub(crate) const TOO_SMALL: &str =
    "Terminal too small: make it at least 30×6 to see the question. Ctrl-C dismisses.";

/// Whether the question can be drawn in `area` (else the keys that answer are ignored).
pub(crate) fn fits(width: u16, height: u16) -> bool {
    width >= MIN_WIDTH && height >= MIN_HEIGHT
}

/// Draws the question on screen into `area` of `buf`. When the body does not fit, it scrolls
/// so the highlighted row (in the own answer: the caret's line) stays visible, with `↑ more`
/// / `↓ more` marks; the human can scroll up from there (`state.peek`) to read a question
/// taller than the screen. The notice and key help stay at the bottom.
pub(crate) fn render(state: &AskState<'_>, area: Rect, buf: &mut Buffer, theme: Theme) {
    if !fits(area.width, area.height) {
        for (y, line) in (area.y..area.bottom()).zip(wrap(TOO_SMALL, usize::from(area.width))) {
            buf.set_line(area.x, y, &Line::styled(line, BOLD), area.width);
        }
        return;
    }
    let doc = document(state, area.width, theme);
    let height = usize::from(area.height);
    // At most a third of the rows for the notice and key help, so that even at 30×6 the
    // question's first line, the highlighted row and the marks fit above them.
    let footer: Vec<&Line<'_>> = doc.footer.iter().take((height / 3).max(1)).collect();
    let body_height = height - footer.len();
    let total = doc.body.len();
    let mut rows: Vec<Line<'_>> = Vec::with_capacity(height);
    if total < body_height {
        // Everything fits: a blank line, then the footer; spare rows stay blank below.
        rows.extend(doc.body.iter().cloned());
        rows.push(Line::default());
        state.view.follow_offset.set(0);
        state.view.page.set(doc.rows.len());
        state.view.window.set(body_height);
        state.view.peek_used.set(0);
        state.view.cursor_hidden.set(false);
        mark_seen(state, &doc, 0..total, 0);
    } else {
        // The question stays in view when it takes at most a third of the rows.
        let pinned = if doc.head * 3 <= body_height {
            doc.head
        } else {
            0
        };
        rows.extend(doc.body[..pinned].iter().cloned());
        let shown = scroll(&mut rows, &doc, pinned, body_height - pinned, state);
        let shown = if pinned > 0 {
            0..shown.end + pinned
        } else {
            shown
        };
        let follow = state.view.follow_offset.get();
        mark_seen(state, &doc, shown, follow);
    }
    rows.extend(footer.into_iter().cloned());
    for (y, line) in (area.y..area.bottom()).zip(rows.iter()) {
        buf.set_line(area.x, y, line, area.width);
    }
}

/// Records which lines of the question text are on screen (`shown`, body lines) and publishes
/// the scroll that brings the first line never shown to the top (`follow`: the offset of the
/// view that follows the cursor; a pinned question is always wholly shown).
/// The same for the lines of the answer given before, on offer.
fn mark_seen(state: &AskState<'_>, doc: &Document, shown: std::ops::Range<usize>, follow: usize) {
    let lines = doc.question_lines.clone();
    let mut seen = state.view.seen.borrow_mut();
    if seen.0 != state.current || seen.1 != doc.width || seen.2.len() != lines.len() {
        *seen = (state.current, doc.width, vec![false; lines.len()]);
    }
    let unseen = first_unseen(&mut seen.2, &lines, &shown);
    state
        .view
        .unseen_peek
        .set(unseen.map(|line| follow.saturating_sub(line)));
    let lines = doc.again_lines.clone();
    let mut seen = state.view.again_seen.borrow_mut();
    if seen.0 != doc.width || seen.1.len() != lines.len() {
        *seen = (doc.width, vec![false; lines.len()]);
    }
    let unseen = first_unseen(&mut seen.1, &lines, &shown);
    state
        .view
        .again_unseen_peek
        .set(unseen.map(|line| follow.saturating_sub(line)));
}

/// Marks the `lines` now `shown` in `seen` (one flag per line) and returns the first line
/// never shown.
fn first_unseen(
    seen: &mut [bool],
    lines: &std::ops::Range<usize>,
    shown: &std::ops::Range<usize>,
) -> Option<usize> {
    for (i, flag) in seen.iter_mut().enumerate() {
        *flag |= shown.contains(&(lines.start + i));
    }
    seen.iter().position(|s| !s).map(|i| lines.start + i)
}

/// Appends `height` rows of the body from line `pinned` on, scrolled so the cursor (or the
/// caret) shows, less what the human scrolled up, marking what is hidden above and below.
/// When the question's first line is scrolled away, it stays on top (`↑ Which environment…`).
/// Returns the body lines shown, relative to `pinned`.
fn scroll<'a>(
    rows: &mut Vec<Line<'a>>,
    doc: &'a Document,
    pinned: usize,
    height: usize,
    state: &AskState<'_>,
) -> std::ops::Range<usize> {
    let body = &doc.body[pinned..];
    let total = body.len();
    let rel = |line: usize| line.saturating_sub(pinned);
    // What must show: the caret's line in a tall own answer, else the whole highlighted row.
    let (mut start, end) = (rel(doc.cursor_lines.start), rel(doc.cursor_lines.end));
    let marks = usize::from(height >= 3);
    let mut window = height - marks;
    if end - start > window.saturating_sub(1)
        && let Some(caret) = doc.caret_line
    {
        start = (rel(caret) + 1).saturating_sub(window.saturating_sub(1).max(1));
    }
    // A view starting inside an option row starts at the next row instead (when the cursor
    // still shows): a description is never shown without its option above it.
    let rows_at: Vec<std::ops::Range<usize>> =
        doc.rows.iter().map(|r| rel(r.start)..rel(r.end)).collect();
    let offset_for = |window: usize| {
        let mut offset = end
            .saturating_sub(window)
            .min(start)
            .min(total.saturating_sub(window));
        if let Some(row) = rows_at.iter().find(|r| r.start < offset && offset < r.end)
            && row.end <= start
        {
            offset = row.end;
        }
        offset
    };
    let mut offset = offset_for(window);
    // The top line is a mark when anything is scrolled away above; with room for at least
    // one body line besides it, also on the smallest screen (30×6).
    // A question just opened that does not fit with its options starts at the question.
    let at_top = (state.show_top && pinned == 0) || state.peek >= offset;
    let top_mark = offset > 0 && !at_top && window >= 2;
    if top_mark {
        window -= 1;
        offset = offset_for(window);
    }
    state.view.follow_offset.set(offset);
    let peek = if at_top {
        offset
    } else {
        state.peek.min(offset)
    };
    state.view.peek_used.set(peek);
    state.view.window.set(window);
    let offset = offset - peek;
    let dim = Style::new().add_modifier(Modifier::DIM);
    let shown = offset..(offset + window).min(total);
    if top_mark {
        // With the question's first line scrolled away, the mark says what is asked.
        let question_hidden = pinned == 0 && offset > doc.question_lines.start;
        let mark = if question_hidden {
            let width = usize::from(doc.width).saturating_sub(2);
            format!("↑ {}", crate::layout::truncate(&doc.digest, width))
        } else if offset > 0 {
            "  ↑ more".to_owned()
        } else {
            String::new()
        };
        let style = if question_hidden { BOLD } else { dim };
        rows.push(Line::styled(mark, style));
    }
    state.view.cursor_hidden.set(
        !(shown.start <= rel(doc.cursor_lines.start)
            && rel(doc.cursor_lines.start) < shown.end.max(shown.start + 1)),
    );
    state.view.page.set(
        doc.rows
            .iter()
            .filter(|r| rel(r.start) >= shown.start && rel(r.end) <= shown.end)
            .count()
            .max(1),
    );
    rows.extend(body[shown.clone()].iter().cloned());
    rows.extend((shown.len()..window).map(|_| Line::default()));
    if marks > 0 {
        let below = total - shown.end;
        rows.push(Line::styled(if below > 0 { "  ↓ more" } else { "" }, dim));
    }
    shown
}

/// Rows the viewport needs to show the tallest question of the batch in `width` columns
/// (with room for a two-line notice and the earlier answers), capped at `max`.
pub(crate) fn needed_height(state: &AskState<'_>, width: u16, max: u16, theme: Theme) -> u16 {
    let mut probe = state.clone();
    let tallest = (0..probe.questions.len())
        .map(|i| {
            probe.current = i;
            // Room for the earlier answers' summary lines, too.
            document(&probe, width, theme).height() + i
        })
        .max()
        .unwrap_or(1);
    u16::try_from(tallest + 2)
        .unwrap_or(u16::MAX)
        .min(max)
        .max(1)
}

#[cfg(test)]
mod tests;
