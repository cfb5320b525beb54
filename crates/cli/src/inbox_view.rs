//! The inbox's list view: pure state, keys and drawing (no I/O), so every state has a snapshot.
//!
//! - Open asks are grouped by agent; groups are ordered by their oldest ask and each group
//!   lists its asks oldest first, so the agent waiting longest is at the top. Each group
//!   header counts its asks; the title counts them all.
//! - The selection is an ask id, never a position: an arrival (which lands below, being
//!   newest) never moves it. When the selected ask closes elsewhere (answered on another
//!   surface, timed out), it stays selected, shown closed with why, until the human moves;
//!   Enter on it does nothing, so no key meant for it acts on another agent's ask. Only an ask
//!   answered in this inbox lets the selection go on to the ask that took its place.
//! - Each row says what is asked (header and first question, by the shared text-safety rule)
//!   and how long it has waited; the line under it says who asks (project, host, session
//!   title, pid) and marks an ask whose agent stopped waiting.
//! - Keys: ↑/↓ (k/j) choose, Enter opens the chosen ask, q or Ctrl-C quits. Digits do
//!   nothing: a number typed against a list that can change under it could open another
//!   agent's question.

use std::collections::HashMap;

use ask_user_core::text::display_line;
use ask_user_store::{AskId, AskRecord};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

use crate::history::summary;

/// The mark of a detached ask (docs/contract.md §8).
pub(crate) const DETACHED_TEXT: &str =
    "the agent stopped waiting; your answer is kept for its retry";
/// Said with no open ask.
pub(crate) const EMPTY_TEXT: &str = "No open questions. Waiting for agents to ask…";
/// The key help at the bottom.
pub(crate) const HELP_TEXT: &str = "↑↓ choose · Enter answer · q quit";
/// The group of asks whose caller gave no agent name.
const UNNAMED: &str = "unnamed agent";

/// What a key asks the loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing but a redraw.
    Stay,
    /// Open this ask in the answer view.
    Open(AskId),
    /// Leave the inbox.
    Quit,
}

/// The list on screen.
#[derive(Debug, Clone, Default)]
pub(crate) struct InboxView {
    /// The open asks in display order (grouped by agent, oldest first).
    order: Vec<AskId>,
    records: HashMap<AskId, AskRecord>,
    /// The chosen ask, by id.
    selected: Option<AskId>,
    /// Milliseconds since the epoch, for ages.
    now_ms: i64,
    /// A message under the list (the last answer's verdict).
    pub(crate) note: String,
    /// The selected ask after it closed elsewhere, kept on the list until the human moves,
    /// with why it closed once known.
    closed: Option<(AskRecord, Option<String>)>,
    /// An ask answered in this inbox: when it leaves the list, the selection goes on.
    answered_here: Option<AskId>,
}

/// The lines under a selected ask that closed elsewhere: why, and what the keys do now.
pub(crate) fn closed_text(why: Option<&str>) -> [String; 2] {
    [
        match why {
            Some(why) => format!("\u{2718} Closed: {why}."),
            None => "\u{2718} Closed.".to_owned(),
        },
        "Nothing here acts on it; \u{2191}\u{2193} choose another question.".to_owned(),
    ]
}

/// The agent an ask is grouped under.
pub(crate) fn agent_of(rec: &AskRecord) -> String {
    rec.asker
        .agent
        .as_deref()
        .map(display_line)
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| UNNAMED.to_owned())
}

/// Who asks, one line: project, host, session title and pid, as known.
pub(crate) fn who_line(rec: &AskRecord) -> String {
    let a = &rec.asker;
    let mut parts: Vec<String> = [&a.project, &a.host]
        .into_iter()
        .flatten()
        .map(|p| display_line(p))
        .filter(|p| !p.trim().is_empty())
        .collect();
    if let Some(session) = a.session.as_deref().filter(|s| !s.trim().is_empty()) {
        parts.push(format!("\u{201c}{}\u{201d}", display_line(session)));
    }
    if let Some(pid) = a.pid {
        parts.push(format!("pid {pid}"));
    }
    parts.join(" \u{b7} ")
}

/// How long ago `then_ms` was, short: `12s`, `5m`, `3h`, `2d`.
pub(crate) fn age(now_ms: i64, then_ms: i64) -> String {
    let secs = (now_ms - then_ms).max(0) / 1000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

impl InboxView {
    /// The open asks changed (or time passed): the list is rebuilt, the selection kept by id.
    /// Returns how many asks arrived that were not listed before.
    pub(crate) fn update(&mut self, open: Vec<AskRecord>, now_ms: i64) -> usize {
        self.now_ms = now_ms;
        let arrived = open
            .iter()
            .filter(|r| !self.records.contains_key(&r.id))
            .count();
        let old_order = std::mem::take(&mut self.order);
        let old_index = self
            .selected
            .and_then(|id| old_order.iter().position(|o| *o == id));
        let old_record = self.selected.and_then(|id| self.records.get(&id).cloned());
        self.records = open.into_iter().map(|r| (r.id, r)).collect();
        // The selected ask closed elsewhere: it stays, shown closed, until the human moves.
        let gone = self
            .selected
            .filter(|id| !self.records.contains_key(id) && self.answered_here != Some(*id));
        self.closed = match (gone, self.closed.take(), old_record) {
            (Some(id), Some(kept), _) if kept.0.id == id => Some(kept),
            (Some(_), _, Some(record)) => Some((record, None)),
            _ => None,
        };
        if let Some((record, _)) = &self.closed {
            self.records.insert(record.id, record.clone());
        }
        let mut groups: HashMap<String, Vec<&AskRecord>> = HashMap::new();
        for rec in self.records.values() {
            groups.entry(agent_of(rec)).or_default().push(rec);
        }
        let mut groups: Vec<(String, Vec<&AskRecord>)> = groups.into_iter().collect();
        for (_, asks) in &mut groups {
            asks.sort_by_key(|r| (r.created_at.0, r.id.0));
        }
        groups.sort_by_key(|(agent, asks)| {
            let oldest = asks.first().map(|r| (r.created_at.0, r.id.0));
            (oldest, agent.clone())
        });
        self.order = groups
            .iter()
            .flat_map(|(_, asks)| asks.iter().map(|r| r.id))
            .collect();
        let still_open = self.selected.filter(|id| self.records.contains_key(id));
        self.selected = still_open.or_else(|| {
            // The chosen ask closed: the ask that took its place (or the last one).
            let i = old_index
                .unwrap_or(0)
                .min(self.order.len().saturating_sub(1));
            self.order.get(i).copied()
        });
        arrived
    }

    /// How many asks are open.
    pub(crate) fn count(&self) -> usize {
        self.order.len() - usize::from(self.closed.is_some())
    }

    /// The selected ask that closed elsewhere, while why is not known yet.
    pub(crate) fn closed_without_why(&self) -> Option<AskId> {
        self.closed
            .as_ref()
            .filter(|(_, why)| why.is_none())
            .map(|(record, _)| record.id)
    }

    /// Why the selected ask `id` closed (the store's outcome, in words).
    pub(crate) fn closed_why(&mut self, id: AskId, why: &str) {
        if let Some((record, slot)) = &mut self.closed
            && record.id == id
        {
            *slot = Some(why.to_owned());
        }
    }

    /// `id` was answered (or dismissed) in this inbox: when it leaves the list, the selection
    /// goes on to the ask that took its place.
    pub(crate) fn answered_here(&mut self, id: AskId) {
        self.answered_here = Some(id);
    }

    fn is_closed(&self, id: AskId) -> bool {
        self.closed.as_ref().is_some_and(|(r, _)| r.id == id)
    }

    /// The chosen ask's record.
    pub(crate) fn record(&self, id: AskId) -> Option<&AskRecord> {
        self.records.get(&id)
    }

    /// The chosen ask.
    #[cfg(test)]
    pub(crate) fn selected(&self) -> Option<AskId> {
        self.selected
    }

    /// Handles one key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::Stay;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => Action::Quit,
            KeyCode::Char('q') => Action::Quit,
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::Home => self.step(isize::MIN / 2),
            KeyCode::End => self.step(isize::MAX / 2),
            // A closed ask is never opened, and nothing is opened in its place.
            KeyCode::Enter => match self.selected {
                Some(id) if !self.is_closed(id) => Action::Open(id),
                _ => Action::Stay,
            },
            _ => Action::Stay,
        }
    }

    fn step(&mut self, by: isize) -> Action {
        let Some(last) = self.order.len().checked_sub(1) else {
            return Action::Stay;
        };
        let at = self
            .selected
            .and_then(|id| self.order.iter().position(|o| *o == id))
            .unwrap_or(0);
        let to = at.saturating_add_signed(by).min(last);
        let mut next = self.order.get(to).copied();
        // The human moved: a closed ask kept on the list leaves it.
        if let Some((record, _)) = self.closed.take() {
            let position = self.order.iter().position(|o| *o == record.id);
            self.order.retain(|o| *o != record.id);
            self.records.remove(&record.id);
            if next == Some(record.id) {
                // No row beyond it that way: the ask that took its place.
                next = position
                    .map(|p| p.min(self.order.len().saturating_sub(1)))
                    .and_then(|p| self.order.get(p))
                    .copied();
            }
        }
        self.selected = next;
        Action::Stay
    }

    /// The lines of the list, and the line index where the chosen ask's row starts.
    fn lines(&self, width: usize) -> (Vec<Line<'static>>, usize) {
        let dim = Style::new().add_modifier(Modifier::DIM);
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let chosen = Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED);
        let mut lines = Vec::new();
        let mut at = 0;
        let mut agent = None;
        for id in &self.order {
            let Some(rec) = self.records.get(id) else {
                continue;
            };
            let this = agent_of(rec);
            if agent.as_ref() != Some(&this) {
                let n = self
                    .order
                    .iter()
                    .filter(|o| !self.is_closed(**o))
                    .filter(|o| self.records.get(o).is_some_and(|r| agent_of(r) == this))
                    .count();
                lines.push(Line::styled(format!("{this} \u{2014} {n} waiting"), bold));
                agent = Some(this);
            }
            let here = self.selected == Some(*id);
            if here {
                at = lines.len();
            }
            let waited = age(self.now_ms, rec.created_at.0);
            let marker = if here { "\u{203a} " } else { "  " };
            let what = summary(&rec.request);
            let room = width.saturating_sub(marker.width() + waited.width() + 2);
            let what = crate::inbox_view::cut(&what, room);
            let pad = width.saturating_sub(marker.width() + what.width() + waited.width());
            lines.push(Line::styled(
                format!("{marker}{what}{}{waited}", " ".repeat(pad.max(1))),
                if here { chosen } else { Style::new() },
            ));
            if let Some((_, why)) = self.closed.as_ref().filter(|(r, _)| r.id == *id) {
                lines.extend(
                    closed_text(why.as_deref())
                        .iter()
                        .flat_map(|l| wrap(l, width.saturating_sub(4).max(8)))
                        .map(|l| Line::styled(format!("    {l}"), bold)),
                );
            }
            let who = who_line(rec);
            if !who.is_empty() {
                lines.push(Line::styled(cut(&format!("    {who}"), width), dim));
            }
            if !rec.attached {
                lines.push(Line::styled(
                    cut(&format!("    ({DETACHED_TEXT})"), width),
                    dim,
                ));
            }
        }
        (lines, at)
    }

    /// Draws the list into `area` of `buf`: title with the count, the groups, the note and
    /// the key help; scrolled so the chosen row shows.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = usize::from(area.width);
        let height = usize::from(area.height);
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let dim = Style::new().add_modifier(Modifier::DIM);
        let mut rows: Vec<Line<'static>> = vec![
            Line::styled(
                cut(
                    &format!(
                        "ask-user inbox \u{2014} {} open question(s), oldest waiting first",
                        self.count()
                    ),
                    width,
                ),
                bold,
            ),
            Line::default(),
        ];
        let mut footer: Vec<Line<'static>> = Vec::new();
        for (i, line) in self.note.lines().enumerate() {
            // The verdict on one line; text kept under it (typed, not sent) wrapped whole.
            if i == 0 {
                footer.push(Line::styled(cut(line, width), bold));
            } else {
                footer.extend(wrap(line, width).into_iter().map(Line::raw));
            }
        }
        footer.push(Line::styled(cut(HELP_TEXT, width), dim));
        let room = height.saturating_sub(rows.len() + footer.len());
        if self.order.is_empty() {
            rows.push(Line::raw(EMPTY_TEXT));
        } else {
            let (lines, at) = self.lines(width);
            // Keep the chosen row and the line under it in view.
            let offset = (at + 2).saturating_sub(room).min(at);
            rows.extend(lines.into_iter().skip(offset).take(room));
        }
        while rows.len() < height.saturating_sub(footer.len()) {
            rows.push(Line::default());
        }
        rows.extend(footer);
        for (y, line) in (area.y..area.bottom()).zip(rows.iter()) {
            buf.set_line(area.x, y, line, area.width);
        }
    }
}

/// The keys the list knows in bytes typed in raw mode: Enter, Ctrl-C, letters, and the arrow,
/// Home and End sequences (CSI and SS3 forms); anything else is dropped.
pub(crate) fn keys_of(bytes: &[u8]) -> Vec<KeyEvent> {
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let mut keys = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' | b'\n' => keys.push(key(KeyCode::Enter)),
            3 => keys.push(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            0x1b if matches!(bytes.get(i + 1), Some(b'[' | b'O')) => {
                let code = match bytes.get(i + 2) {
                    Some(b'A') => Some(KeyCode::Up),
                    Some(b'B') => Some(KeyCode::Down),
                    Some(b'H') => Some(KeyCode::Home),
                    Some(b'F') => Some(KeyCode::End),
                    _ => None,
                };
                keys.extend(code.map(key));
                // Skip the sequence: parameters up to its final byte.
                i += 2;
                while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
            }
            b @ 0x20..=0x7e => keys.push(key(KeyCode::Char(char::from(b)))),
            _ => {}
        }
        i += 1;
    }
    keys
}

/// `text` broken into lines of at most `max` columns (by graphemes), nothing left out.
pub(crate) fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = 0;
    for g in unicode_segmentation::UnicodeSegmentation::graphemes(text, true) {
        let w = g.width();
        if used + w > max.max(1) && used > 0 {
            lines.push(String::new());
            used = 0;
        }
        used += w;
        if let Some(line) = lines.last_mut() {
            line.push_str(g);
        }
    }
    lines
}

/// `text` cut to `max` columns, ending in `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in unicode_segmentation::UnicodeSegmentation::graphemes(text, true) {
        let w = g.width();
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push('\u{2026}');
    out
}

#[cfg(test)]
mod tests;
