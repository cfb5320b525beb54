//! Render: the question drawn into a buffer area; a function of the state and the area only.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use crate::layout::{Theme, document};
use crate::state::AskState;

/// Draws the question on screen into `area` of `buf`. When the body does not fit, it scrolls
/// so the highlighted row stays visible, with `↑ more` / `↓ more` marks; the notice and key
/// help stay at the bottom.
pub(crate) fn render(state: &AskState<'_>, area: Rect, buf: &mut Buffer, theme: Theme) {
    let doc = document(state, area.width, theme);
    let height = usize::from(area.height);
    let footer: Vec<&Line<'_>> = doc.footer.iter().take(height).collect();
    let body_height = height - footer.len();
    let total = doc.body.len();
    let mut rows: Vec<Line<'_>> = Vec::with_capacity(height);
    if total <= body_height {
        // Everything fits: the footer follows the body; spare rows stay blank below.
        rows.extend(doc.body.iter().cloned());
    } else if body_height > 0 {
        // The question stays in view when it takes at most a third of the rows.
        let pinned = if doc.head * 3 <= body_height {
            doc.head
        } else {
            0
        };
        rows.extend(doc.body[..pinned].iter().cloned());
        scroll(
            &mut rows,
            &doc.body[pinned..],
            &doc.cursor_lines,
            pinned,
            body_height - pinned,
        );
    }
    rows.extend(footer.into_iter().cloned());
    for (y, line) in (area.y..area.bottom()).zip(rows.iter()) {
        buf.set_line(area.x, y, line, area.width);
    }
}

/// Appends `height` rows of `body` scrolled so the lines `cursor` (offset by `shift`) show,
/// marking what is hidden above and below.
fn scroll<'a>(
    rows: &mut Vec<Line<'a>>,
    body: &[Line<'a>],
    cursor: &std::ops::Range<usize>,
    shift: usize,
    height: usize,
) {
    let total = body.len();
    if total <= height {
        rows.extend(body.iter().cloned());
        return;
    }
    let (start, end) = (
        cursor.start.saturating_sub(shift),
        cursor.end.saturating_sub(shift),
    );
    let offset_for = |window: usize| end.saturating_sub(window).min(start).min(total - window);
    let marks = usize::from(height >= 3);
    let mut window = height - marks;
    let mut offset = offset_for(window);
    let top_mark = offset > 0 && height >= 4;
    let dim = Style::new().add_modifier(Modifier::DIM);
    if top_mark {
        window -= 1;
        offset = offset_for(window);
        rows.push(Line::styled("  ↑ more", dim));
    }
    rows.extend(body[offset..offset + window].iter().cloned());
    if marks > 0 {
        let below = total - offset - window;
        rows.push(Line::styled(if below > 0 { "  ↓ more" } else { "" }, dim));
    }
}

/// Rows the viewport needs to show the tallest question of the batch in `width` columns
/// (with room for a notice), capped at `max`.
pub(crate) fn needed_height(state: &AskState<'_>, width: u16, max: u16, theme: Theme) -> u16 {
    let mut probe = state.clone();
    let tallest = (0..probe.questions.len())
        .map(|i| {
            probe.current = i;
            document(&probe, width, theme).height()
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
