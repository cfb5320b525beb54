//! The own-answer editor: one line of text and a caret, edited by whole graphemes.
//!
//! Hand-rolled on `unicode-segmentation` rather than `ratatui-textarea` (0.9.4): that widget
//! deletes one code point per Backspace (a family emoji loses a part), and it draws itself in
//! a rectangle with its own scrolling, while the own answer is wrapped inside the option list.
//! Keys (readline's): ←/→ and Ctrl-B/Ctrl-F by grapheme, Home/End and Ctrl-A/Ctrl-E to the
//! ends, Backspace/Delete one grapheme, Ctrl-W the word before the caret, Ctrl-U everything
//! before the caret, Ctrl-K everything after it.

use unicode_segmentation::UnicodeSegmentation;

/// A single line of text with a caret (a byte offset, always on a grapheme boundary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Editor {
    text: String,
    caret: usize,
}

impl Editor {
    /// The text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The caret as a byte offset into [`Self::text`].
    pub(crate) fn caret(&self) -> usize {
        self.caret
    }

    /// Whether there is no text.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Inserts `s` at the caret and moves the caret after it.
    pub(crate) fn insert(&mut self, s: &str) {
        self.text.insert_str(self.caret, s);
        self.caret += s.len();
        // An inserted combining mark can merge with the grapheme before the caret; the caret
        // stays valid because it is after the insertion.
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.caret]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.caret..]
            .graphemes(true)
            .next()
            .map_or(self.caret, |g| self.caret + g.len())
    }

    /// Moves the caret one grapheme left.
    pub(crate) fn left(&mut self) {
        self.caret = self.prev_boundary();
    }

    /// Moves the caret one grapheme right.
    pub(crate) fn right(&mut self) {
        self.caret = self.next_boundary();
    }

    /// Moves the caret to the start.
    pub(crate) fn home(&mut self) {
        self.caret = 0;
    }

    /// Moves the caret to the end.
    pub(crate) fn end(&mut self) {
        self.caret = self.text.len();
    }

    /// Deletes the grapheme before the caret.
    pub(crate) fn backspace(&mut self) {
        let start = self.prev_boundary();
        self.text.replace_range(start..self.caret, "");
        self.caret = start;
    }

    /// Deletes the grapheme after the caret.
    pub(crate) fn delete(&mut self) {
        let end = self.next_boundary();
        self.text.replace_range(self.caret..end, "");
    }

    /// Deletes the word before the caret and the spaces between it and the caret.
    pub(crate) fn delete_word(&mut self) {
        let before = &self.text[..self.caret];
        let trimmed = before.trim_end().len();
        let start = before[..trimmed].rfind(' ').map_or(0, |i| i + 1);
        self.text.replace_range(start..self.caret, "");
        self.caret = start;
    }

    /// Deletes everything before the caret.
    pub(crate) fn delete_to_start(&mut self) {
        self.text.replace_range(..self.caret, "");
        self.caret = 0;
    }

    /// Deletes everything after the caret.
    pub(crate) fn delete_to_end(&mut self) {
        self.text.truncate(self.caret);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn typed(s: &str) -> Editor {
        let mut e = Editor::default();
        e.insert(s);
        e
    }

    #[test]
    fn backspace_removes_a_whole_emoji_sequence() {
        let mut e = typed("hi 👨‍👩‍👧");
        e.backspace();
        assert_eq!(e.text(), "hi ");
        let mut e = typed("cafe\u{301}");
        e.backspace();
        assert_eq!(e.text(), "caf");
    }

    #[test]
    fn the_caret_moves_by_grapheme_and_inserts_where_it_is() {
        let mut e = typed("a👍🏽b");
        e.left();
        e.left();
        e.insert("X");
        assert_eq!(e.text(), "aX👍🏽b");
        e.right();
        e.delete();
        assert_eq!(e.text(), "aX👍🏽");
        e.home();
        e.insert(">");
        e.end();
        e.insert("<");
        assert_eq!(e.text(), ">aX👍🏽<");
    }

    #[test]
    fn word_and_line_deletion_around_the_caret() {
        let mut e = typed("roll back  soon ");
        e.delete_word();
        assert_eq!(e.text(), "roll back  ");
        e.home();
        e.right();
        e.delete_to_end();
        assert_eq!(e.text(), "r");
        let mut e = typed("abc def");
        e.left();
        e.left();
        e.delete_to_start();
        assert_eq!((e.text(), e.caret()), ("ef", 0));
    }
}
