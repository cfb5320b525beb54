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
