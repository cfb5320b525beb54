//! Model text made inert for the screen (docs/contract.md §6, "Text safety: one rule on every
//! surface").
//!
//! The terminal applies the rule every surface shares, [`ask_user_core::text`]: controls and
//! escape sequences shown as Control Pictures (`ESC ] 0 ; t BEL` shows as `␛]0;t␇`: no title
//! change, no colour, no clear), bidi controls and invisible characters written visibly
//! (`\u{202e}`), joiners and variation selectors inside a script's grapheme cluster kept as
//! text (Persian, Malayalam, Sinhala, emoji families and flags render whole), and runs of blank
//! lines collapsed so padding cannot push the question off screen.
//!
//! The answer still carries the model's labels byte for byte; only the screen sees this.

/// The text as it may be drawn: no control characters except `\n`
/// ([`ask_user_core::text::display`]).
#[must_use]
pub fn sanitize(text: &str) -> String {
    ask_user_core::text::display(text)
}

/// The text on one line: like [`sanitize`], and a newline shown as `␤`.
#[must_use]
pub fn sanitize_line(text: &str) -> String {
    ask_user_core::text::display_line(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn escape_sequences_are_shown_inert() {
        assert_eq!(sanitize("\u{1b}]0;PWNED\u{7}"), "␛]0;PWNED␇");
        assert_eq!(sanitize("a\u{1b}[2Jb"), "a␛[2Jb");
        assert_eq!(sanitize("\u{9b}31m"), "\\u{9b}31m");
    }

    #[test]
    fn controls_and_invisibles_become_visible() {
        assert_eq!(sanitize("a\rb\u{8}c\u{7f}"), "a␍b␈c␡");
        assert_eq!(sanitize("x\u{202e}y\u{2066}z"), "x\\u{202e}y\\u{2066}z");
        assert_eq!(
            sanitize("zero\u{200b}width\u{feff}"),
            "zero\u{27e8}1 blank character\u{27e9}width\u{27e8}1 blank character\u{27e9}"
        );
        assert_eq!(sanitize("tab\there"), "tab here");
    }

    #[test]
    fn every_format_character_and_separator_becomes_visible() {
        // Found by the terminal_sanitize fuzz target: these passed through unseen.
        assert_eq!(
            sanitize("a\u{e0041}\u{e0042}b"),
            "a\\u{e0041}\\u{e0042}b",
            "tag characters can hide text from the human"
        );
        assert_eq!(
            sanitize("1\u{2028}2\u{2029}3\u{206a}4\u{180e}5\u{600}6\u{fff9}7"),
            "1\\u{2028}2\\u{2029}3\\u{206a}4\\u{180e}5\\u{600}6\\u{fff9}7"
        );
    }

    #[test]
    fn an_emoji_sequence_keeps_its_joiner_and_a_stray_joiner_shows() {
        assert_eq!(sanitize("👨\u{200d}👩\u{200d}👧"), "👨\u{200d}👩\u{200d}👧");
        assert_eq!(sanitize("🏃\u{200d}♀\u{fe0f}"), "🏃\u{200d}♀\u{fe0f}");
        assert_eq!(sanitize("a\u{200d}b"), "a\\u{200d}b");
        assert_eq!(sanitize("\u{200d}x"), "\\u{200d}x");
        let family = sanitize("👨\u{200d}👩");
        assert_eq!(
            sanitize(&family),
            family,
            "sanitising twice changes nothing"
        );
    }

    #[test]
    fn ordinary_text_and_newlines_pass() {
        assert_eq!(
            sanitize("Déployer en prod ? 部署 🚀\nline 2"),
            "Déployer en prod ? 部署 🚀\nline 2"
        );
        assert_eq!(sanitize_line("a\nb"), "a␤b");
    }
}
