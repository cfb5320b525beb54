//! One text-safety rule for every surface (docs/contract.md §6 "Scripts render as scripts").
//!
//! Model text is shown to the human on a terminal, a page, a phone notification, a chat or a
//! mail. Every surface applies the same rule, so a question reads the same everywhere and
//! nothing in it can hide, reorder or impersonate other text:
//!
//! 1. The text is split into grapheme clusters (Unicode UAX #29, extended).
//! 2. The first character of a cluster is judged on its own: a newline stays a line break
//!    (`\r\n` too), a tab becomes one space, ESC and the other C0 controls become their
//!    Control Pictures (`␛`, `␇`, …), DEL becomes `␡`, and every C1 control, bidi control,
//!    format character, line or paragraph separator and default-ignorable (invisible)
//!    character is written visibly as `\u{hex}` — e.g. `\u{202e}`.
//! 3. A zero-width joiner, zero-width non-joiner or variation selector *inside* a cluster whose
//!    first character is a visible non-ASCII character (not a lone combining mark) is text: Persian `می‌خواهم`, Malayalam
//!    chillus, Sinhala conjuncts, emoji families and ZWJ sequences render whole. So does the
//!    emoji presentation selector of a keycap (`1️⃣`) and the tag sequence of a subdivision
//!    flag (🏴 + lowercase tags + cancel tag). Anything else inside a cluster is judged as in 2.
//! 4. [`display`] bounds the height of padded text: lines of only whitespace are blank, runs
//!    of blank lines become one, and blank lines at the start and end are dropped.
//!
//! Surfaces with markup (HTML, Slack mrkdwn, Markdown) escape the result for their markup
//! afterwards; the rule itself produces plain text. The answer still carries the model's labels
//! byte for byte: only what is shown changes.
//!
//! [`skeleton`] is the other half: what a label looks like, so options that look identical
//! (Unicode TR39 confusables, invisible characters, padding) are refused at validation.
//!
//! The cases of the rule, input → display, are a shared fixture
//! (`crates/core/tests/golden/text-safety.json`) every surface's tests read.

use unicode_security::confusable_detection::skeleton as tr39_skeleton;
use unicode_segmentation::UnicodeSegmentation;

/// The text as every surface shows it, on several lines: the rule of this module, with
/// runs of blank lines collapsed. The result holds no control character except `\n`.
#[must_use]
pub fn display(text: &str) -> String {
    collapse_blank_lines(&inert(text))
}

/// The text on one line: like [`display`], with each line break shown as `␤`.
#[must_use]
pub fn display_line(text: &str) -> String {
    display(text).replace('\n', "\u{2424}")
}

/// What a label looks like, for comparing two labels (TR39 skeleton): controls, format and
/// invisible characters removed, whitespace runs made one space and trimmed, then the
/// confusable characters mapped to their prototypes (Cyrillic `А` → Latin `A`). Two labels
/// with the same skeleton look the same to the human.
#[must_use]
pub fn skeleton(text: &str) -> String {
    let mut visible = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !visible.is_empty();
            continue;
        }
        if c.is_control() || is_hidden(c) {
            continue;
        }
        if pending_space {
            visible.push(' ');
            pending_space = false;
        }
        visible.push(c);
    }
    tr39_skeleton(&visible).collect()
}

/// Whether two labels look the same to the human (equal [`skeleton`]s).
#[must_use]
pub fn looks_alike(a: &str, b: &str) -> bool {
    skeleton(a) == skeleton(b)
}

/// The rule without the height bound: every character made safe as in [`display`], every
/// line and space kept as it was (for text whose layout is the human's own, such as the
/// answer they are typing, shown grapheme by grapheme).
#[must_use]
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for cluster in text.graphemes(true) {
        push_cluster(&mut out, cluster);
    }
    out
}

fn push_cluster(out: &mut String, cluster: &str) {
    if cluster == "\r\n" {
        out.push('\n');
        return;
    }
    let mut chars = cluster.chars();
    let Some(base) = chars.next() else {
        return;
    };
    push_alone(out, base);
    // A combining mark that starts a cluster has nothing to combine with (it follows a control
    // or the start): it shapes nothing, and the control shown before it (a tab becomes a space)
    // would give the same text another cluster next time, so it keeps no joiner either.
    let shaping_base = !base.is_ascii()
        && !base.is_control()
        && !is_hidden(base)
        && !unicode_normalization::char::is_combining_mark(base);
    let keycap = matches!(base, '0'..='9' | '#' | '*') && cluster.contains('\u{20e3}');
    let flag = base == '\u{1f3f4}' && is_subdivision_flag_tail(chars.as_str());
    // Whether a joiner here still follows what it shapes: an invisible shown as `\u{…}` ends
    // that (a joiner after it would follow the ASCII of the escape, and a second pass would
    // show it).
    let mut shaping = shaping_base;
    for c in chars {
        let kept = if is_joiner(c) || is_variation_selector(c) {
            shaping || (keycap && matches!(c, '\u{fe0e}' | '\u{fe0f}'))
        } else if ('\u{e0020}'..='\u{e007f}').contains(&c) {
            flag
        } else {
            false
        };
        if kept {
            out.push(c);
        } else {
            if c.is_control() || is_hidden(c) {
                shaping = false;
            }
            push_alone(out, c);
        }
    }
}

/// Tags after 🏴 that make a subdivision flag: 1–6 lowercase letters or digits as tag
/// characters, then the cancel tag, and nothing else.
fn is_subdivision_flag_tail(rest: &str) -> bool {
    let Some(spec) = rest.strip_suffix('\u{e007f}') else {
        return false;
    };
    let n = spec.chars().count();
    (1..=6).contains(&n)
        && spec
            .chars()
            .all(|c| matches!(c, '\u{e0030}'..='\u{e0039}' | '\u{e0061}'..='\u{e007a}'))
}

fn is_joiner(c: char) -> bool {
    matches!(c, '\u{200c}' | '\u{200d}')
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' | '\u{180b}'..='\u{180d}' | '\u{180f}')
}

/// Characters that draw nothing, reorder text or are default-ignorable: C1 controls, every
/// format character (general category Cf), the line and paragraph separators, and the
/// default-ignorable code points (Hangul fillers, the combining grapheme joiner, variation
/// selectors, tags, …). Checked against the categories by the `terminal_sanitize` fuzz target.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{80}'..='\u{9f}'
        | '\u{ad}'
        | '\u{34f}'
        | '\u{600}'..='\u{605}'
        | '\u{61c}'
        | '\u{6dd}'
        | '\u{70f}'
        | '\u{890}'..='\u{891}'
        | '\u{8e2}'
        | '\u{115f}'..='\u{1160}'
        | '\u{17b4}'..='\u{17b5}'
        | '\u{180b}'..='\u{180f}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}'
        | '\u{3164}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{feff}'
        | '\u{ffa0}'
        | '\u{fff0}'..='\u{fffb}'
        | '\u{110bd}'
        | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e0fff}')
}

fn push_alone(out: &mut String, c: char) {
    match c {
        '\n' => out.push('\n'),
        '\t' => out.push(' '),
        '\u{7f}' => out.push('\u{2421}'),
        // C0 controls map onto the Control Pictures block U+2400–U+241F.
        '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
        c if is_hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = false;
    for line in text.split('\n') {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
            if blank_run {
                out.push('\n');
            }
        }
        blank_run = false;
        out.push_str(line);
    }
    out
}
