//! The terminal's sanitiser on arbitrary model text: the shared text rule
//! (`ask_user_core::text::display` and `display_line`, which `ask_user_terminal::sanitize` and
//! `sanitize_line` are, called here directly so the fuzz build need not compile the terminal UI):
//! what reaches the screen holds no character a terminal could act on or that hides or
//! reorders text — no control (Cc) other than the newline, no format character (Cf: bidi
//! controls, zero-width characters, invisible tags, …) except the joiners the shared text rule
//! keeps inside a cluster and the implicit direction marks it keeps inside right-to-left text,
//! no line or paragraph separator — and sanitising twice changes nothing; `sanitize_line` holds
//! no newline at all.
#![no_main]

use ask_user_core::text::{display as sanitize, display_line as sanitize_line};
use libfuzzer_sys::fuzz_target;
use unicode_general_category::{GeneralCategory, get_general_category};

fn check_inert(text: &str, newline_allowed: bool) {
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' && newline_allowed {
            continue;
        }
        // Joiners inside a script's or an emoji's cluster stay (Persian ZWNJ, 👨‍👩‍👧): they
        // follow a visible non-ASCII character and hide nothing. So do the tags of a
        // subdivision flag (🏴 + tags). Anywhere else they must be shown.
        if matches!(c, '\u{200c}' | '\u{200d}')
            && i > 0
            && !chars[i - 1].is_ascii()
        {
            continue;
        }
        if ('\u{e0020}'..='\u{e007f}').contains(&c)
            && chars[..i].iter().rev().find(|p| !('\u{e0020}'..='\u{e007f}').contains(*p))
                == Some(&'\u{1f3f4}')
        {
            continue;
        }
        // LRM, RLM and ALM are text inside right-to-left text: kept only on a line that has
        // some (Hebrew, Arabic and their presentation forms).
        if matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}') && line_of(&chars, i).any(is_rtl) {
            continue;
        }
        let category = get_general_category(c);
        assert!(
            !matches!(
                category,
                GeneralCategory::Control
                    | GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
            ),
            "U+{:04X} ({category:?}) reaches the screen in {text:?}",
            c as u32
        );
    }
}

/// The characters of the line that holds `chars[i]`.
fn line_of(chars: &[char], i: usize) -> impl Iterator<Item = char> + '_ {
    let start = chars[..i].iter().rposition(|&c| c == '\n').map_or(0, |p| p + 1);
    let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |p| i + p);
    chars[start..end].iter().copied()
}

/// A letter of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, N'Ko, …, and their
/// presentation forms).
fn is_rtl(c: char) -> bool {
    matches!(c, '\u{590}'..='\u{8ff}' | '\u{fb1d}'..='\u{fdff}' | '\u{fe70}'..='\u{feff}' | '\u{10800}'..='\u{10fff}' | '\u{1e800}'..='\u{1efff}')
}

fuzz_target!(|text: String| {
    let shown = sanitize(&text);
    check_inert(&shown, true);
    assert_eq!(sanitize(&shown), shown, "sanitising twice changes the text");
    let line = sanitize_line(&text);
    check_inert(&line, false);
});
