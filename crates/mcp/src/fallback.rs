//! Fallback answerers for clients that cannot elicit: the web page and the terminal.

use std::sync::Arc;

use ask_user_core::UserInteraction;

use crate::args::RunError;

/// The web answerer (not built into this host yet: unavailable).
pub(crate) async fn web(_no_open: bool) -> Result<Option<Arc<dyn UserInteraction>>, RunError> {
    tracing::warn!("the web answerer is not available in this build");
    Ok(None)
}

/// The terminal answerer (not built into this host yet: unavailable).
pub(crate) fn terminal() -> Result<Option<Arc<dyn UserInteraction>>, RunError> {
    tracing::warn!("the terminal answerer is not available in this build");
    Ok(None)
}
