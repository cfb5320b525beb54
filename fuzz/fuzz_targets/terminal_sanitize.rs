//! The terminal's sanitiser (`ask_user_terminal::sanitize`, pure) on arbitrary model text:
//! what reaches the screen holds no character a terminal could act on or that hides or
//! reorders text — no control (Cc) other than the newline, no format character (Cf: bidi
//! controls, zero-width characters, invisible tags, …), no line or paragraph separator — and
//! sanitising twice changes nothing; `sanitize_line` holds no newline at all.
#![no_main]

use ask_user_terminal::{sanitize, sanitize_line};
use libfuzzer_sys::fuzz_target;
use unicode_general_category::{GeneralCategory, get_general_category};

fn check_inert(text: &str, newline_allowed: bool) {
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' && newline_allowed {
            continue;
        }
        // The joiner of an emoji sequence (👨‍👩‍👧) stays: it joins two pictographs and
        // hides nothing. Anywhere else it must be shown.
        if c == '\u{200d}'
            && i > 0
            && !chars[i - 1].is_ascii()
            && chars.get(i + 1).is_some_and(|n| !n.is_ascii() && *n != '\u{200d}')
        {
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

fuzz_target!(|text: String| {
    let shown = sanitize(&text);
    check_inert(&shown, true);
    assert_eq!(sanitize(&shown), shown, "sanitising twice changes the text");
    let line = sanitize_line(&text);
    check_inert(&line, false);
});
