//! `--via terminal,web`: answerer names turned into answerers.
//!
//! To add an answerer, add its name to [`NAMES`] and one arm to [`answerer`]; `ask` races
//! everything this returns with a `FirstAnswer`.

use std::net::SocketAddr;
use std::sync::Arc;

use ask_user_core::UserInteraction;

/// The names `--via` accepts, in the order `--help` and errors list them.
pub(crate) const NAMES: [&str; 2] = ["terminal", "web"];

/// The answerers for `names` (blanks and duplicates ignored); `web_addr` is where `web` listens. An
/// unknown name is a usage error whose message lists the known names; a web address that
/// cannot be bound is a usage error too.
pub(crate) fn answerers(
    names: &[String],
    web_addr: SocketAddr,
) -> Result<Vec<Arc<dyn UserInteraction>>, String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()) {
        if name.is_empty() || seen.contains(&name) {
            continue;
        }
        seen.push(name);
        out.push(answerer(name, web_addr)?);
    }
    if out.is_empty() {
        return Err(format!("--via needs at least one of: {}", NAMES.join(", ")));
    }
    Ok(out)
}

fn answerer(name: &str, web_addr: SocketAddr) -> Result<Arc<dyn UserInteraction>, String> {
    match name {
        "terminal" => Ok(Arc::new(ask_user_terminal::Terminal::new())),
        "web" => crate::web::answerer(web_addr),
        other => Err(format!(
            "--via: unknown answerer \"{other}\"; use one or more of: {}",
            NAMES.join(", ")
        )),
    }
}
