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
//! 4. [`display`] also counts blank-looking characters: a run of them (the Unicode spaces other
//!    than ASCII's, the zero-width space, the Braille blank U+2800, the Hangul fillers, and
//!    ASCII spaces beside them) is shown as `⟨1,330 blank characters⟩`; a single ASCII space
//!    stays, and so does a run of up to [`MAX_SPACES`] ASCII spaces alone.
//! 5. A direction mark (LRM, RLM, ALM) on a line that holds right-to-left letters (Hebrew,
//!    Arabic, …) is text; elsewhere it is shown as in 2.
//! 6. [`display`] flags a word (UAX #29) that mixes scripts with a TR39 mixed-script
//!    confusable in it (`раypal⟨mixed scripts⟩`, a Cyrillic `р` and `а`).
//! 7. [`display`] bounds the height of padded text: lines of only spaces are blank, runs of
//!    blank lines become one, blank lines at the start and end are dropped, and a run of lines
//!    holding only blank-looking characters becomes one line that counts them
//!    (`⟨1,500 blank characters on 1,500 lines⟩`).
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

use unicode_bidi::{BidiClass, bidi_class};
use unicode_security::confusable_detection::skeleton as tr39_skeleton;
use unicode_security::is_potential_mixed_script_confusable_char;
use unicode_security::mixed_script::AugmentedScriptSet;
use unicode_segmentation::UnicodeSegmentation;

/// The text as every surface shows it, on several lines: the rule of this module, with
/// blank runs counted, look-alike words flagged and runs of blank lines collapsed. The result
/// holds no control character except `\n`.
#[must_use]
pub fn display(text: &str) -> String {
    let mut lines: Vec<Line> = Vec::new();
    for line in text.split('\n') {
        // `\r\n` is one line break; a lone `\r` is shown (as a Control Picture).
        let line = line.strip_suffix('\r').unwrap_or(line);
        lines.push(Line::of(line));
    }
    join_lines(lines)
}

/// The text on one line: like [`display`], with each line break shown as `␤`.
#[must_use]
pub fn display_line(text: &str) -> String {
    display(text).replace('\n', "\u{2424}")
}

/// How a run of `n` blank-looking characters is shown (`⟨1,330 blank characters⟩`), in place
/// of the run: padding can neither push text out of view nor pass for a plain space.
#[must_use]
pub fn blank_run(n: usize) -> String {
    if n == 1 {
        "\u{27e8}1 blank character\u{27e9}".to_owned()
    } else {
        format!("\u{27e8}{} blank characters\u{27e9}", thousands(n))
    }
}

/// The flag shown right after a word that mixes scripts with a look-alike letter (a Cyrillic
/// `а` inside a Latin word): `раypal⟨mixed scripts⟩`.
pub const MIXED_SCRIPTS: &str = "\u{27e8}mixed scripts\u{27e9}";

/// Runs of ASCII spaces up to this long are kept as they are (alignment, indentation); a
/// longer run is shown counted, like any other blank run.
pub const MAX_SPACES: usize = 16;

/// What a label looks like, for comparing two labels (TR39 skeleton): controls, format and
/// invisible characters removed, whitespace runs made one space and trimmed, then the
/// confusable characters mapped to their prototypes (Cyrillic `А` → Latin `A`). Two labels
/// with the same skeleton look the same to the human.
#[must_use]
pub fn skeleton(text: &str) -> String {
    let mut visible = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_control() || is_hidden(c) {
            continue;
        }
        if c.is_whitespace() || is_blank(c) {
            pending_space = !visible.is_empty();
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
/// answer they are typing, shown grapheme by grapheme). Blank runs are not counted here.
#[must_use]
pub fn inert(text: &str) -> String {
    let mut out = Walker::new(false);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.out.push('\n');
        }
        out.line(line);
    }
    out.out
}

/// One line of [`display`]: nothing but ASCII spaces, nothing but blank-looking characters
/// (counted), or text.
enum Line {
    Empty,
    Blank(usize),
    Text(String),
}

impl Line {
    fn of(line: &str) -> Self {
        if line.chars().all(|c| c == ' ' || c == '\t') {
            return Line::Empty;
        }
        if line.chars().all(|c| c == ' ' || c == '\t' || is_blank(c)) {
            return Line::Blank(line.chars().count());
        }
        let mut w = Walker::new(true);
        w.line(line);
        Line::Text(flag_mixed_scripts(w.out.trim_end_matches(' ')))
    }
}

/// Lines joined: a run of empty lines is one (none at the start or the end); a run of lines
/// with blank-looking characters in it is one line saying how many there were.
fn join_lines(lines: Vec<Line>) -> String {
    let mut out = String::new();
    let mut chars = 0usize;
    let mut blank_lines = 0usize;
    let mut gap = false;
    let emit = |out: &mut String, text: &str, gap: bool| {
        if !out.is_empty() {
            out.push('\n');
            if gap {
                out.push('\n');
            }
        }
        out.push_str(text);
    };
    for line in lines {
        match line {
            Line::Empty => {
                gap = !out.is_empty() || chars > 0;
                // An empty line inside a run of blank ones counts with it.
                if chars > 0 {
                    blank_lines += 1;
                }
            }
            Line::Blank(n) => {
                chars += n;
                blank_lines += 1;
            }
            Line::Text(text) => {
                if chars > 0 {
                    emit(&mut out, &blank_lines_shown(chars, blank_lines), false);
                    chars = 0;
                    blank_lines = 0;
                    gap = false;
                }
                emit(&mut out, &text, gap);
                gap = false;
            }
        }
    }
    if chars > 0 {
        emit(&mut out, &blank_lines_shown(chars, blank_lines), false);
    }
    out
}

fn blank_lines_shown(chars: usize, lines: usize) -> String {
    let run = blank_run(chars);
    if lines > 1 {
        format!(
            "{} on {} lines\u{27e9}",
            run.trim_end_matches('\u{27e9}'),
            thousands(lines)
        )
    } else {
        run
    }
}

/// `n` with a comma between each group of three digits (`1,330`), as counts are shown.
#[must_use]
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Each word (Unicode UAX #29) that mixes scripts and holds a letter TR39 lists as a
/// mixed-script confusable gets [`MIXED_SCRIPTS`] after it (once: a flagged text is not
/// flagged again).
fn flag_mixed_scripts(line: &str) -> String {
    if line.is_ascii() {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    for word in line.split_word_bounds() {
        rest = &rest[word.len()..];
        out.push_str(word);
        if word.chars().any(char::is_alphabetic)
            && AugmentedScriptSet::for_str(word).is_empty()
            && word.chars().any(is_potential_mixed_script_confusable_char)
            && !rest.starts_with(MIXED_SCRIPTS)
        {
            out.push_str(MIXED_SCRIPTS);
        }
    }
    out
}

/// The character-by-character half of the rule, over one line.
struct Walker {
    out: String,
    /// Count blank runs ([`display`]) or keep them ([`inert`]).
    count_blanks: bool,
    run: usize,
    run_spaces_only: bool,
}

impl Walker {
    fn new(count_blanks: bool) -> Self {
        Self {
            out: String::new(),
            count_blanks,
            run: 0,
            run_spaces_only: true,
        }
    }

    fn line(&mut self, line: &str) {
        // A direction mark on a line with right-to-left letters is part of how it reads. The
        // letters are always shown as they are, so showing the shown text again keeps the same
        // marks: the decision never rests on what this walk turns into other text.
        let right_to_left = line.chars().any(is_rtl_letter);
        for cluster in line.graphemes(true) {
            let mut chars = cluster.chars();
            if right_to_left
                && let (Some(c), None) = (chars.next(), chars.next())
                && is_bidi_mark(c)
            {
                self.text(cluster);
                continue;
            }
            self.cluster(cluster);
        }
        self.flush(true);
    }

    fn text(&mut self, s: &str) {
        self.flush(false);
        self.out.push_str(s);
    }

    fn cluster(&mut self, cluster: &str) {
        let mut chars = cluster.chars();
        let Some(base) = chars.next() else {
            return;
        };
        self.alone(base);
        // A combining mark that starts a cluster has nothing to combine with (it follows a
        // control or the start): it shapes nothing, and the control shown before it (a tab
        // becomes a space) would give the same text another cluster next time, so it keeps no
        // joiner either.
        let shaping_base = !base.is_ascii()
            && !base.is_control()
            && !is_hidden(base)
            && !is_blank(base)
            && !unicode_normalization::char::is_combining_mark(base);
        let keycap = matches!(base, '0'..='9' | '#' | '*') && cluster.contains('\u{20e3}');
        let flag = base == '\u{1f3f4}' && is_subdivision_flag_tail(chars.as_str());
        // Whether a joiner here still follows what it shapes: an invisible shown as `\u{…}`
        // ends that (a joiner after it would follow the ASCII of the escape, and a second pass
        // would show it).
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
                self.out.push(c);
            } else {
                if c.is_control() || is_hidden(c) || is_blank(c) {
                    shaping = false;
                }
                self.alone(c);
            }
        }
    }

    fn alone(&mut self, c: char) {
        if self.count_blanks && (c == ' ' || c == '\t' || is_blank(c)) {
            self.run += 1;
            self.run_spaces_only &= c == ' ' || c == '\t';
            return;
        }
        self.flush(false);
        match c {
            '\t' => self.out.push(' '),
            '\u{7f}' => self.out.push('\u{2421}'),
            // C0 controls map onto the Control Pictures block U+2400–U+241F.
            '\u{0}'..='\u{1f}' => self
                .out
                .push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            c if is_hidden(c) => self.out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => self.out.push(c),
        }
    }

    /// Ends a blank run: ASCII spaces up to [`MAX_SPACES`] stay (at the end of a line they
    /// go); anything else is shown counted.
    fn flush(&mut self, line_end: bool) {
        let n = std::mem::take(&mut self.run);
        let spaces_only = std::mem::replace(&mut self.run_spaces_only, true);
        if n == 0 || (spaces_only && line_end) {
            return;
        }
        if spaces_only && n <= MAX_SPACES {
            self.out.extend(std::iter::repeat_n(' ', n));
        } else {
            self.out.push_str(&blank_run(n));
        }
    }
}

/// A letter of a right-to-left script (bidi class R or AL: Hebrew, Arabic, Syriac, Thaana,
/// N'Ko, …) that is shown as it is (not a format character such as the Syriac abbreviation
/// mark, nor a direction mark itself).
fn is_rtl_letter(c: char) -> bool {
    matches!(bidi_class(c), BidiClass::R | BidiClass::AL) && !is_hidden(c)
}

/// The implicit direction marks: left-to-right, right-to-left and the Arabic letter mark.
fn is_bidi_mark(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Characters that look blank (or draw nothing) but are not the ASCII space: the Unicode
/// spaces other than it (no-break, en/em, ideographic, …), the zero-width space and no-break
/// space, the word joiner, the Braille blank and the Hangul fillers.
fn is_blank(c: char) -> bool {
    matches!(
        c,
        '\u{a0}' | '\u{1680}' | '\u{115f}' | '\u{1160}' | '\u{2000}'
            ..='\u{200b}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{2060}'
                | '\u{2800}'
                | '\u{3000}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
    )
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
