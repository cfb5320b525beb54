//! Model text made inert for the screen (docs/contract.md §6: "control and escape sequences are shown
//! inert, never interpreted").
//!
//! Everything a terminal could act on, or that could hide or reorder text, is replaced by a
//! visible stand-in, so the human sees that it was there:
//!
//! - ESC → `␛` (so `ESC ] 0 ; t BEL` shows as `␛]0;t␇`: no title change, no colour, no clear);
//! - other C0 controls and DEL → their Control Pictures (`␇`, `␈`, `␍`, `␡`, …);
//!   a newline is kept as a line break, a tab becomes one space;
//! - C1 controls (U+0080–U+009F, e.g. the 8-bit CSI U+009B) → `\u{9b}`;
//! - bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the marks
//!   U+200E, U+200F, U+061C, zero-width or invisible characters (U+200B–U+200D,
//!   U+2060–U+2064, U+FEFF, U+00AD), invisible tag characters (U+E0000–U+E007F), the line and
//!   paragraph separators (U+2028, U+2029) and every other format character (general
//!   category Cf) → `\u{202e}` and so on — except the zero-width joiner between two
//!   pictographs, which makes an emoji sequence (👨‍👩‍👧) and hides nothing.
//!
//! The answer still carries the model's labels byte for byte; only the screen sees this.

/// The text as it may be drawn: no control characters except `\n`.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut previous = None;
    while let Some(c) = chars.next() {
        // The zero-width joiner of an emoji sequence (👨‍👩‍👧) joins two pictographs into
        // one picture and hides nothing: it stays.
        if c == '\u{200d}'
            && previous.is_some_and(joins_after)
            && chars.peek().copied().is_some_and(is_pictographic)
        {
            out.push(c);
        } else {
            push_inert(&mut out, c);
        }
        previous = Some(c);
    }
    out
}

/// Pictographs (roughly Unicode's `Extended_Pictographic`): what an emoji ZWJ sequence joins.
fn is_pictographic(c: char) -> bool {
    matches!(c,
        '\u{a9}' | '\u{ae}' | '\u{203c}' | '\u{2049}' | '\u{2122}' | '\u{2139}'
        | '\u{2194}'..='\u{21aa}' | '\u{231a}'..='\u{23ff}' | '\u{24c2}'
        | '\u{25aa}'..='\u{27bf}' | '\u{2934}'..='\u{2935}' | '\u{2b05}'..='\u{2b55}'
        | '\u{3030}' | '\u{303d}' | '\u{3297}' | '\u{3299}' | '\u{1f000}'..='\u{1faff}')
}

/// What may stand before the joiner of an emoji sequence: a pictograph, the emoji
/// presentation selector, or a skin-tone modifier.
fn joins_after(c: char) -> bool {
    is_pictographic(c) || c == '\u{fe0f}' || ('\u{1f3fb}'..='\u{1f3ff}').contains(&c)
}

/// The text on one line: like [`sanitize`], and a newline shown as `␤`.
pub fn sanitize_line(text: &str) -> String {
    sanitize(text).replace('\n', "␤")
}

fn push_inert(out: &mut String, c: char) {
    match c {
        '\n' => out.push('\n'),
        '\t' => out.push(' '),
        '\u{7f}' => out.push('␡'),
        // C0 controls map onto the Control Pictures block U+2400–U+241F.
        '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('�')),
        // C1 controls, then every format character (general category Cf, Unicode 15.1) and
        // the line and paragraph separators; checked against the category by the
        // `terminal_sanitize` fuzz target.
        '\u{80}'..='\u{9f}'
        | '\u{ad}'
        | '\u{600}'..='\u{605}'
        | '\u{61c}'
        | '\u{6dd}'
        | '\u{70f}'
        | '\u{890}'..='\u{891}'
        | '\u{8e2}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}'
        | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0001}'
        | '\u{e0020}'..='\u{e007f}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
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
            "zero\\u{200b}width\\u{feff}"
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
        assert_eq!(sanitize("👨\u{200d}x"), "👨\\u{200d}x");
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
