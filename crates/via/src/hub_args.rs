//! `--hub URL`, `--hub-token-file FILE`, `--session-title TITLE` (docs/contract.md §9 "Agents"):
//! the flags both hosts (`ask-user ask` and `ask-user mcp`) use to ask through an ask-user hub,
//! spelled, documented and checked the same, and the settings of the hub answerer
//! (`ask-user-hub-client`) they give ([`crate::Options::hub`]).

use ask_user_hub_client::{CallerContext, HubClientConfig};

/// The `--via` entry of the hub.
pub const HUB_VIA: &str = "hub";

/// The refusal of `--hub` without a token (a usage error, exit 2).
pub const HUB_NEEDS_TOKEN: &str = "--hub needs the agent's token: ASK_USER_HUB_TOKEN or --hub-token-file FILE (ask-user hub token add NAME prints one)";

/// The refusal of a token on the command line, where every user of the machine reads it
/// (`ps`; a usage error, exit 2).
pub const HUB_TOKEN_IN_ARGV: &str = "--hub-token puts the token where every user of this machine can read it (ps): pass it in ASK_USER_HUB_TOKEN or a file (--hub-token-file FILE)";

/// The environment variable holding the agent's hub token.
pub const HUB_TOKEN_ENV: &str = "ASK_USER_HUB_TOKEN";

/// `--hub URL[,URL…]` (env `ASK_USER_HUB`), the token (env `ASK_USER_HUB_TOKEN`, or
/// `--hub-token-file FILE`, env `ASK_USER_HUB_TOKEN_FILE`; never on the command line) and
/// `--session-title` (env `ASK_USER_SESSION_TITLE`).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HubAskArgs {
    /// Ask through an ask-user hub: its URL (several, comma-separated: any replicas of one
    /// inbox). Alone it is the only answerer; add `hub` to --via to race it with others.
    #[cfg_attr(
        feature = "clap",
        arg(
            long = "hub",
            value_name = "URL",
            env = "ASK_USER_HUB",
            value_delimiter = ','
        )
    )]
    pub hub: Vec<String>,
    /// A file holding the agent's hub token (`ask-user hub token add NAME` prints one), read
    /// at start; the token may also come in ASK_USER_HUB_TOKEN, never on the command line.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "FILE",
            env = "ASK_USER_HUB_TOKEN_FILE",
            hide_env_values = true
        )
    )]
    pub hub_token_file: Option<std::path::PathBuf>,
    /// Refused: a token on the command line is readable by every user (`ps`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "TOKEN", hide = true))]
    pub hub_token: Option<String>,
    /// The session title shown to the human beside the question.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "TITLE", env = "ASK_USER_SESSION_TITLE")
    )]
    pub session_title: Option<String>,
}

impl HubAskArgs {
    /// Whether a hub URL was given (blanks do not count).
    #[must_use]
    pub fn given(&self) -> bool {
        self.hub.iter().any(|u| !u.trim().is_empty())
    }

    /// The hub client's settings: `Ok(None)` without `--hub`; `Err(`[`HUB_NEEDS_TOKEN`]`)`
    /// with `--hub` and no token. `key` is the call key (`ask --key`, shared with the local
    /// store: a retry with the same key and request re-attaches to the same hub ask); `None`
    /// gives every ask a random key (the MCP server, whose calls carry no key).
    ///
    /// The token is the first line of `--hub-token-file`, else `ASK_USER_HUB_TOKEN`.
    ///
    /// # Errors
    /// [`HUB_TOKEN_IN_ARGV`] when `--hub-token` is given; [`HUB_NEEDS_TOKEN`] when a URL is
    /// given without a token; an unreadable token file, named.
    pub fn client_config(&self, key: Option<&str>) -> Result<Option<HubClientConfig>, String> {
        if self.hub_token.is_some() {
            return Err(HUB_TOKEN_IN_ARGV.to_owned());
        }
        let urls: Vec<String> = self
            .hub
            .iter()
            .map(|u| u.trim().to_owned())
            .filter(|u| !u.is_empty())
            .collect();
        if urls.is_empty() {
            return Ok(None);
        }
        let token = match &self.hub_token_file {
            Some(file) => std::fs::read_to_string(file)
                .map_err(|e| format!("--hub-token-file {}: {e}", file.display()))?
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned(),
            None => std::env::var(HUB_TOKEN_ENV).unwrap_or_default(),
        };
        if token.is_empty() {
            return Err(HUB_NEEDS_TOKEN.to_owned());
        }
        check_urls_and_token(&urls, &token)?;
        let mut config = HubClientConfig::new(urls, token);
        config.key = key.filter(|k| !k.is_empty()).map(str::to_owned);
        config.context = CallerContext {
            project: std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string()),
            host: ask_user_core::host_name(),
            session: self.session_title.clone(),
        };
        Ok(Some(config))
    }
}

/// The refusal of a `--hub` URL that is not http(s) (a usage error, exit 2). It quotes no URL
/// (one may carry a password).
pub const HUB_URL_NOT_HTTP: &str = "--hub: each URL must start with http:// or https:// and name the hub's host (e.g. http://127.0.0.1:8765)";

/// The refusal of a hub token that cannot be sent in an HTTP header (a usage error, exit 2).
/// It quotes nothing of the token.
pub const HUB_TOKEN_UNUSABLE: &str = "the hub token must be one word of printable ASCII (as ask-user hub token add prints it): check ASK_USER_HUB_TOKEN for stray spaces, quotes or line breaks";

/// Refuses, before any ask, what can never reach a hub: a URL without an http(s) scheme and
/// host ([`HUB_URL_NOT_HTTP`]), a token no HTTP header can carry ([`HUB_TOKEN_UNUSABLE`]).
/// A token the hub does not know is only found out by asking (the hub may be down now).
fn check_urls_and_token(urls: &[String], token: &str) -> Result<(), String> {
    for url in urls {
        let lower = url.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("http://")
            .or_else(|| lower.strip_prefix("https://"));
        let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or(""));
        let host = host.map(|h| h.rsplit('@').next().unwrap_or(""));
        if host
            .is_none_or(|h| h.is_empty() || h.starts_with(':') || h.contains(char::is_whitespace))
        {
            return Err(HUB_URL_NOT_HTTP.to_owned());
        }
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(HUB_TOKEN_UNUSABLE.to_owned());
    }
    Ok(())
}

/// The `--via` names to build: with `--hub` and no `hub` among them, the hub alone (so
/// `--hub URL` is enough); otherwise as given (`--via hub,terminal` races both).
#[must_use]
pub fn via_names(hub_given: bool, via: &[String]) -> Vec<String> {
    if hub_given && !names_hub(via) {
        vec![HUB_VIA.to_owned()]
    } else {
        via.to_vec()
    }
}

/// Whether `via` names the hub.
#[must_use]
pub fn names_hub(via: &[String]) -> bool {
    via.iter().any(|v| v.trim() == HUB_VIA)
}
