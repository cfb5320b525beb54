//! The question card, shared with the hub's inbox (docs/contract.md §9: "the same card UI,
//! keys and rules as the local page"): one implementation of the card (`assets/cards.js`,
//! `assets/cards.html`) and its style (`assets/app.css`), served by this crate's page and by
//! `ask-user-hub`'s inbox.
//!
//! A page that shows cards puts [`CARD_TEMPLATES`] into its HTML (see [`with_card_templates`]),
//! links [`CARD_STYLE`] and loads [`CARD_SCRIPT`] before its own script; the script then offers
//! `window.askUserCards` (`buildCard`, `collect`, `showError`, `closeCard`, `closedText`,
//! `KIND`, `inert`).

/// The card script: builds cards from the templates and implements their keys and rules.
pub const CARD_SCRIPT: &str = include_str!("assets/cards.js");

/// The card templates (`t-batch`, `t-question`, `t-option`), an HTML fragment.
pub const CARD_TEMPLATES: &str = include_str!("assets/cards.html");

/// The style sheet of the local page, cards included.
pub const CARD_STYLE: &str = include_str!("assets/app.css");

/// The marker a page's HTML carries where the card templates go.
pub const TEMPLATES_MARKER: &str = "<!-- cards.html -->";

/// `page` with [`CARD_TEMPLATES`] in place of its (first) [`TEMPLATES_MARKER`]; `page` unchanged
/// when it has none.
#[must_use]
pub fn with_card_templates(page: &str) -> String {
    page.replacen(TEMPLATES_MARKER, CARD_TEMPLATES, 1)
}

/// One question's text as a card shows it, prepared on the server by the one text-safety rule
/// of every surface ([`ask_user_core::text`], docs/contract.md §6 "Text safety"): the page
/// puts these strings on screen with `textContent` and applies no rule of its own. Sent
/// beside the model's own text (which the answer carries byte for byte) as `shown`:
/// `{"header"?,"question","options":[{"label","description"?}]}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShownQuestion {
    /// The header on one line; absent when the question has none (or an empty one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The question, on several lines.
    pub question: String,
    /// The options, in order.
    pub options: Vec<ShownOption>,
}

/// One option's text as a card shows it (see [`ShownQuestion`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShownOption {
    /// The label on one line, without its `(Recommended)` suffix (the card shows a badge).
    pub label: String,
    /// The description, on several lines; absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl ShownQuestion {
    /// `question`'s text as the card shows it.
    #[must_use]
    pub fn of(question: &ask_user_core::Question) -> Self {
        ShownQuestion {
            header: question
                .header
                .as_deref()
                .filter(|h| !h.is_empty())
                .map(ask_user_core::text::display_line),
            question: ask_user_core::text::display(&question.question),
            options: question
                .options
                .iter()
                .map(|o| ShownOption {
                    label: shown_label(&o.label),
                    description: o
                        .description
                        .as_deref()
                        .filter(|d| !d.is_empty())
                        .map(ask_user_core::text::display),
                })
                .collect(),
        }
    }
}

/// An option label as a card shows it: one line by the shared rule, without a trailing
/// `(Recommended)` (when something precedes it: the card shows a badge instead).
#[must_use]
pub fn shown_label(label: &str) -> String {
    let trimmed = label.trim_end();
    match trimmed.strip_suffix(ask_user_core::RECOMMENDED_SUFFIX) {
        Some(rest) if !rest.trim_end().is_empty() => {
            ask_user_core::text::display_line(rest.trim_end())
        }
        _ => ask_user_core::text::display_line(label),
    }
}

/// Answers (`{"answers":[…]}`) as the page shows them: `[{"id","selected":[label…],"custom"?}]`
/// with each label as its option shows it ([`shown_label`]) and the own answer on one line.
#[must_use]
pub fn shown_answers(answers: &serde_json::Value) -> Option<serde_json::Value> {
    answers["answers"].as_array().map(|items| {
        items
            .iter()
            .map(|a| {
                let selected: Vec<String> = a["selected"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(serde_json::Value::as_str)
                    .map(shown_label)
                    .collect();
                let mut shown = serde_json::json!({"id": a["id"], "selected": selected});
                if let Some(c) = a["custom"].as_str() {
                    shown["custom"] =
                        serde_json::Value::String(ask_user_core::text::display_line(c));
                }
                shown
            })
            .collect::<serde_json::Value>()
    })
}

/// An answer the human gave before to the same question, delivered to its agent, as a card
/// offers it: one tap, "Send the same answer again (given 10:42: Yes)" — the human's own act
/// for this ask (docs/contract.md §8 "The same answer again"; the card script's
/// `addSendAgain`). Sent as `previous`:
/// `{"state":"answered","closed_at":MS,"answers":{"answers":[…]},"shown":{"answers":[…]}}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PreviousAnswer {
    /// Always `answered` (the card's summary reads it).
    state: &'static str,
    /// When it was given (Unix ms).
    closed_at: i64,
    /// The answers, as the card sends them again.
    answers: serde_json::Value,
    /// The answers as the card shows them ([`shown_answers`]).
    shown: ShownAnswers,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct ShownAnswers {
    answers: serde_json::Value,
}

impl PreviousAnswer {
    /// The offer of `answers` (`{"answers":[…]}`) given at `closed_at` (Unix ms); `None` when
    /// they are not in that shape.
    #[must_use]
    pub fn of(closed_at: i64, answers: serde_json::Value) -> Option<Self> {
        let shown = shown_answers(&answers)?;
        Some(Self {
            state: "answered",
            closed_at,
            answers,
            shown: ShownAnswers { answers: shown },
        })
    }

    /// The offer of the core's [`ask_user_core::GivenBefore`] (what a host hands the race).
    #[must_use]
    pub fn from_core(given: &ask_user_core::GivenBefore) -> Option<Self> {
        let ms = given
            .given_at
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Self::of(ms, serde_json::to_value(&given.answers).ok()?)
    }
}
