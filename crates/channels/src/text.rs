//! The plain text every channel starts from: who asks, the heading, the question and its
//! options (docs/contract.md §9 "Who asks", §10). Plain text only; a channel with markup
//! escapes these strings itself.
//!
//! Every model-supplied or caller-supplied string goes through the one text-safety rule of
//! every surface ([`ask_user_core::text`], docs/contract.md §6 "Text safety"): bidi controls
//! and invisible characters shown visibly and inertly (`\u{202e}`), joiners inside a script's
//! cluster kept, runs of blank lines collapsed. A button or link names its option by
//! [`label`].

use ask_user_core::Question;
use ask_user_core::text::{display, display_line, thousands};
use ask_user_store::Asker;

use crate::channel::Notice;

/// Who asks, one line: the agent's name, then the project and host when known
/// (`claude-code · ~/src/app · laptop`); `An agent` when nothing is known.
#[must_use]
pub fn who(asker: &Asker) -> String {
    let parts: Vec<String> = [&asker.agent, &asker.project, &asker.host]
        .into_iter()
        .filter_map(|p| p.as_deref())
        .map(display_line)
        .filter(|p| !p.trim().is_empty())
        .collect();
    if parts.is_empty() {
        "An agent".to_owned()
    } else {
        parts.join(" \u{b7} ")
    }
}

/// The title: who asks, and the first question's header when it has one
/// (`claude-code asks: Deploy`); without a header, `claude-code asks`.
#[must_use]
pub fn title(notice: &Notice) -> String {
    let who = who(&notice.asker);
    match notice.questions.first().and_then(|q| q.header.as_deref()) {
        Some(h) if !display_line(h).trim().is_empty() => {
            format!("{who} asks: {}", display_line(h))
        }
        _ => format!("{who} asks"),
    }
}

/// The body: each question, then its options one a line (`1. label — description`), and
/// `(choose one or more)` for a multi-select. Questions are separated by a blank line. With
/// an answer given before on offer ([`Notice::again`]), that answer last, whole
/// ([`again`]).
#[must_use]
pub fn body(notice: &Notice) -> String {
    let mut parts: Vec<String> = notice.questions.iter().map(question_text).collect();
    if let Some(offered) = &notice.again {
        parts.push(again(&notice.questions, &offered.given));
    }
    parts.join("\n\n")
}

/// The button that sends the answer given before again.
pub const SAME_ANSWER_AGAIN: &str = "Same answer again";

/// The answer `given` before to the same questions, as the message shows it: when (UTC), then
/// each question's answer (`Question 2: “Staging”`; one question: just the answer), whole.
#[must_use]
pub fn again(questions: &[Question], given: &ask_user_core::GivenBefore) -> String {
    let at = ask_user_core::time::rfc3339_seconds(given.given_at);
    let at = format!(
        "{} {} UTC",
        &at[..10.min(at.len())],
        at.get(11..16).unwrap_or("")
    );
    let mut s = format!(
        "You answered this before ({at}); \u{201c}{SAME_ANSWER_AGAIN}\u{201d} sends it again:"
    );
    for item in &given.answers.answers {
        let mut said: Vec<String> = item
            .selected
            .iter()
            .chain(item.custom.iter())
            .map(|a| format!("\u{201c}{}\u{201d}", display_line(a)))
            .collect();
        if said.is_empty() {
            said.push("skipped".to_owned());
        }
        let said = said.join(", ");
        match questions.iter().position(|q| q.id == item.id) {
            Some(i) if questions.len() > 1 => s.push_str(&format!("\nQuestion {}: {said}", i + 1)),
            _ => s.push_str(&format!("\n{said}")),
        }
    }
    s
}

/// An option's label as a button, link or list item shows it: one line, by the shared rule.
#[must_use]
pub fn label(label: &str) -> String {
    display_line(label)
}

/// A question's text as a channel shows it (several lines, by the shared rule).
#[must_use]
pub fn question(text: &str) -> String {
    display(text)
}

fn question_text(q: &Question) -> String {
    let mut s = display(&q.question);
    if q.multi_select && !q.options.is_empty() {
        s.push_str(" (choose one or more)");
    }
    for (i, o) in q.options.iter().enumerate() {
        s.push_str(&format!("\n{}. {}", i + 1, label(&o.label)));
        if let Some(d) = o.description.as_deref().map(display_line)
            && !d.trim().is_empty()
        {
            s.push_str(" \u{2014} ");
            s.push_str(&d);
        }
    }
    s
}

/// `s` cut to at most `max` bytes at a character boundary, ending with `…` when cut.
#[must_use]
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let ell = "\u{2026}";
    let mut end = max.saturating_sub(ell.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ell}", &s[..end])
}

/// A channel's text as sent: the whole of it, or the start of it and a line saying it was
/// cut ([`fit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// The text to send.
    pub text: String,
    /// Whether it was cut: then the message offers no answer at all, only the page
    /// (docs/contract.md §10 "A cut message has no buttons").
    pub cut: bool,
}

/// What a link or button to the page says on a cut message.
pub const OPEN_TO_ANSWER: &str = "Open to answer";

/// The line a cut text ends with: how much is not shown, and where all of it is.
#[must_use]
pub fn cut_note(hidden: usize) -> String {
    format!(
        "\u{2026}\n\n\u{2702} Cut: {} more character{} not shown here. This message cannot be answered; open the page to see all of it and answer.",
        thousands(hidden),
        if hidden == 1 { "" } else { "s" }
    )
}

/// `full` (already shown by the rule) as it fits the channel: `fits` judges a candidate in
/// its final form (escaped for the channel's markup, counted the channel's way). When `full`
/// does not fit, the longest start of it that fits together with [`cut_note`].
#[must_use]
pub fn fit(full: &str, fits: impl Fn(&str) -> bool) -> Fitted {
    if fits(full) {
        return Fitted {
            text: full.to_owned(),
            cut: false,
        };
    }
    let bounds: Vec<usize> = full.char_indices().map(|(i, _)| i).collect();
    let total = bounds.len();
    let candidate = |k: usize| {
        let end = bounds.get(k).copied().unwrap_or(full.len());
        format!("{}{}", full[..end].trim_end(), cut_note(total - k))
    };
    // The largest number of characters kept that still fits (0 when nothing does).
    let (mut lo, mut hi) = (0usize, total);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(&candidate(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Fitted {
        text: candidate(lo),
        cut: true,
    }
}
