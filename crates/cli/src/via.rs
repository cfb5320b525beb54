//! `--via terminal,web`: answerer names turned into answerers.
//!
//! To add an answerer, add its name to [`NAMES`] and one arm to [`answerer`]; `ask` races
//! everything this returns with a `FirstAnswer`.

use std::sync::Arc;

use ask_user_core::UserInteraction;

/// The names `--via` accepts, in the order `--help` and errors list them.
pub(crate) const NAMES: [&str; 2] = ["terminal", "web"];

/// The answerers for `names` (duplicates ignored). An unknown name, or one not built yet, is
/// a usage error whose message lists the known names.
pub(crate) fn answerers(names: &[String]) -> Result<Vec<Arc<dyn UserInteraction>>, String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()) {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        out.push(answerer(name)?);
    }
    if out.is_empty() {
        return Err(format!("--via needs at least one of: {}", NAMES.join(", ")));
    }
    Ok(out)
}

fn answerer(name: &str) -> Result<Arc<dyn UserInteraction>, String> {
    match name {
        "terminal" => Ok(Arc::new(ask_user_terminal::Terminal::new())),
        // The web helper replaces this arm with the web answerer (and adds `--web-addr`).
        "web" => Err("--via web: the web answerer is not built yet".to_owned()),
        other => Err(format!(
            "--via: unknown answerer \"{other}\"; use one or more of: {}",
            NAMES.join(", ")
        )),
    }
}
