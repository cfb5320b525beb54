//! # ask-user-via
//!
//! The answerer registry: the one list of answerers a host can ask through (`--via NAME,…` in
//! both `ask-user ask` and `ask-user mcp`), their help text, and the one factory that builds
//! them, so both hosts accept the same names with the same checks and the same error texts.
//!
//! - [`ANSWERERS`]: every name `--via` accepts, in the order help and errors list them, each
//!   with its one-line help ([`Answerer`]).
//! - [`build`]: a `--via` list (as typed, comma-split by clap) plus the shared [`Options`] →
//!   the answerers to race (`FirstAnswer`), or a [`ViaError`] the host reports as a usage
//!   error (exit 2). Every name is checked before anything starts, so a typo after `web` never
//!   binds a port.
//! - [`help`] and [`long_help`]: the `--via` help both hosts show, built from [`ANSWERERS`].
//! - [`answers_file`]: `--answers FILE` (the scripted answerer), read the same way by both hosts.
//! - [`hub_args`]: the `--hub URL`, `--hub-token-file`, `--session-title` flags (clap
//!   definitions with the `clap` feature) both hosts
//!   flatten, and the [`Options::hub`] settings they give (docs/contract.md §9).
//!
//! ## Adding an answerer
//!
//! One entry in [`ANSWERERS`]: a name, a help line and a `build` function from [`Options`] to
//! the answerer. The durable inbox (`--via inbox`) and the hub (`--via hub`) are meant to come
//! in exactly this way: their settings (the store, the hub URL and token) become fields of
//! [`Options`], which every host fills from its own flags; nothing else in the hosts changes.
//!
//! What legitimately differs between hosts stays with the host, as a hook in [`Options`]: how a
//! bound web page is brought to the human ([`Options::show_web`]: the CLI draws the URL and a
//! QR code on the terminal and stops the server after its one ask; the MCP server logs the URL
//! and opens the browser when a question arrives).
//!
//! Depends on the core and the answerer crates (terminal, web, scripted); the hosts depend on
//! it. It never depends on a host.
//!
//! ```
//! use ask_user_via::{Options, build, resolve};
//!
//! let options = Options::new("127.0.0.1:0".parse()?);
//! let answerers = build(&["terminal".to_owned()], &options)?;
//! assert_eq!(answerers.len(), 1);
//!
//! let typo = resolve(&["termnial".to_owned()]).unwrap_err();
//! assert_eq!(
//!     typo.to_string(),
//!     r#"--via: unknown answerer "termnial"; use one or more of: terminal, web, inbox, hub, none"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::UserInteraction;
use ask_user_scripted::Scripted;
use ask_user_web::{WebAnswerer, WebConfig};

pub mod hub_args;

/// One answerer a host can ask through: its `--via` name, its help line, and how it is built.
#[derive(Debug, Clone, Copy)]
pub struct Answerer {
    /// The name `--via` accepts (lowercase ASCII, no comma).
    pub name: &'static str,
    /// One line for `--help`: who answers and where.
    pub help: &'static str,
    build: Build,
}

/// Builds an answerer from the shared options: `Ok(None)` for an entry that adds nobody
/// (`none`); `Err` is the reason it cannot start, shown after `--via NAME: `.
type Build = fn(&Options<'_>) -> Result<Option<Arc<dyn UserInteraction>>, String>;

/// Every answerer `--via` accepts, in the order `--help` and the errors list them.
pub const ANSWERERS: &[Answerer] = &[
    Answerer {
        name: "terminal",
        help: "the terminal this process runs in (/dev/tty); unavailable when there is none",
        build: terminal,
    },
    Answerer {
        name: "web",
        help: "a local web page (--web-addr), answered from a browser or a phone",
        build: web,
    },
    Answerer {
        name: "inbox",
        help: "nobody here: the question waits in the store for `ask-user inbox` in another terminal (headless agents)",
        build: inbox,
    },
    Answerer {
        name: "hub",
        help: "an ask-user hub's inbox (--hub URL, ASK_USER_HUB_TOKEN): one inbox for every agent",
        build: hub,
    },
    Answerer {
        name: "none",
        help: "nobody: every ask ends with the no-answerer outcome (alone only)",
        build: none,
    },
];

/// The name of the entry that adds no answerer; it cannot be combined with others.
const NONE: &str = "none";

/// How a host shows a bound web page to its human; its `Err` is a startup failure.
pub type ShowWeb<'a> =
    dyn Fn(WebAnswerer, SocketAddr) -> Result<Arc<dyn UserInteraction>, String> + 'a;

/// What building an answerer may need, filled by the host from its own flags.
pub struct Options<'a> {
    /// Where `web` listens (`--web-addr`).
    pub web_addr: SocketAddr,
    /// How the host brings the bound page (and its address as given) to the human; by default
    /// the page itself, shown to nobody.
    pub show_web: &'a ShowWeb<'a>,
    /// Whether the host keeps its asks in a store another process can answer from (the CLI's
    /// `ask`); `inbox` is refused without it.
    pub durable: bool,
    /// The host's time budget (`--timeout`), for answerers that show it (the terminal's
    /// and the web page's countdowns); the budget itself is kept by the core, not by the answerers.
    pub timeout: Option<Duration>,
    /// Where `hub` asks (`--hub URL`, the token); `None`: `hub` cannot start.
    pub hub: Option<ask_user_hub_client::HubClientConfig>,
}

impl fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("web_addr", &self.web_addr)
            .finish_non_exhaustive()
    }
}

fn page_only(web: WebAnswerer, _: SocketAddr) -> Result<Arc<dyn UserInteraction>, String> {
    Ok(Arc::new(web))
}

impl Options<'static> {
    /// Options with `web` listening on `web_addr` and no host presentation hook.
    pub fn new(web_addr: SocketAddr) -> Self {
        Self {
            web_addr,
            show_web: &page_only,
            durable: false,
            timeout: None,
            hub: None,
        }
    }
}

impl Options<'_> {
    /// The same options with `show` as the web page's presentation hook.
    pub fn with_show_web<'b>(self, show: &'b ShowWeb<'b>) -> Options<'b> {
        Options {
            web_addr: self.web_addr,
            show_web: show,
            durable: self.durable,
            timeout: self.timeout,
            hub: self.hub,
        }
    }
}

fn terminal(options: &Options<'_>) -> Result<Option<Arc<dyn UserInteraction>>, String> {
    Ok(Some(Arc::new(
        ask_user_terminal::Terminal::new().with_timeout(options.timeout),
    )))
}

fn web(options: &Options<'_>) -> Result<Option<Arc<dyn UserInteraction>>, String> {
    let addr = options.web_addr;
    let config = WebConfig {
        timeout: options.timeout,
        ..WebConfig::at(addr)
    };
    let web = WebAnswerer::bind(config).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    (options.show_web)(web, addr).map(Some)
}

/// The refusal of `--via inbox` by a host that keeps no store.
pub const INBOX_NEEDS_STORE: &str =
    "this host keeps no store, so nothing here can wait for `ask-user inbox`";

fn inbox(options: &Options<'_>) -> Result<Option<Arc<dyn UserInteraction>>, String> {
    if !options.durable {
        return Err(INBOX_NEEDS_STORE.to_owned());
    }
    Ok(Some(Arc::new(InboxWait)))
}

/// `--via inbox`: nobody answers in this process. The question waits in the store until an
/// `ask-user inbox` (another process) records the outcome; the host's store link (which
/// watches the store for every ask) then settles the call. Always available; withdraws on
/// cancel.
struct InboxWait;

impl ask_user_core::UserInteraction for InboxWait {
    fn ask_decided<'a>(
        &'a self,
        _request: &'a ask_user_core::AskUserQuestionRequest,
        cancel: ask_user_core::CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> ask_user_core::BoxFuture<'a, Result<ask_user_core::Answers, ask_user_core::AskError>> {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(ask_user_core::AskError::Cancelled)
        })
    }

    fn name(&self) -> Option<&str> {
        Some("the inbox")
    }
}

fn hub(options: &Options<'_>) -> Result<Option<Arc<dyn UserInteraction>>, String> {
    let mut config = options.hub.clone().ok_or_else(|| {
        "needs the hub's URL and this agent's token: --hub URL and ASK_USER_HUB_TOKEN or --hub-token-file FILE".to_owned()
    })?;
    // The hub's page counts down to the budget, as the terminal and the local page do.
    config.timeout = options.timeout;
    let answerer = ask_user_hub_client::HubAnswerer::new(config).map_err(|e| e.to_string())?;
    Ok(Some(Arc::new(answerer)))
}

fn none(_: &Options<'_>) -> Result<Option<Arc<dyn UserInteraction>>, String> {
    Ok(None)
}

/// A `--via` list or `--answers` file a host cannot use: a usage error (exit 2) whose text
/// says what to type instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ViaError {
    /// A name that is not in [`ANSWERERS`].
    #[error("--via: unknown answerer \"{name}\"; use one or more of: {}", names())]
    Unknown {
        /// The name as typed (trimmed).
        name: String,
    },
    /// The list names nobody (only blanks).
    #[error("--via needs at least one of: {}", names())]
    Empty,
    /// `none` together with other names.
    #[error("--via none cannot be combined with other answerers")]
    NoneWithOthers,
    /// An answerer could not start (e.g. the web address is in use).
    #[error("--via {name}: {message}")]
    Start {
        /// The answerer's name.
        name: &'static str,
        /// Why, from the answerer.
        message: String,
    },
    /// The `--answers` file cannot be read.
    #[error("--answers {}: cannot read it: {source}", path.display())]
    AnswersUnreadable {
        /// The file.
        path: PathBuf,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// The `--answers` file is not answers in the output shape.
    #[error("--answers {}: not {{\"answers\":[{{\"id\",\"selected\",\"custom\"?}}]}}: {reason}", path.display())]
    AnswersInvalid {
        /// The file.
        path: PathBuf,
        /// serde_json's reason.
        reason: String,
    },
}

/// The names of [`ANSWERERS`], comma-separated, in order.
pub fn names() -> String {
    ANSWERERS
        .iter()
        .map(|a| a.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entries `list` names, in order: blanks (`--via " , "`) and repeats are skipped; an
/// unknown name, an empty list or `none` beside another name is a [`ViaError`]. Nothing is
/// started.
pub fn resolve(list: &[String]) -> Result<Vec<&'static Answerer>, ViaError> {
    let mut chosen: Vec<&'static Answerer> = Vec::new();
    for name in list.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let entry = ANSWERERS
            .iter()
            .find(|a| a.name == name)
            .ok_or_else(|| ViaError::Unknown {
                name: name.to_owned(),
            })?;
        if !chosen.iter().any(|c| c.name == entry.name) {
            chosen.push(entry);
        }
    }
    if chosen.is_empty() {
        return Err(ViaError::Empty);
    }
    if chosen.len() > 1 && chosen.iter().any(|c| c.name == NONE) {
        return Err(ViaError::NoneWithOthers);
    }
    Ok(chosen)
}

/// The answerers `list` names ([`resolve`]), built in order with `options`; `none` gives an
/// empty list (every ask then ends with the no-answerer outcome). The first answerer that
/// cannot start ends the build with [`ViaError::Start`].
pub fn build(
    list: &[String],
    options: &Options<'_>,
) -> Result<Vec<Arc<dyn UserInteraction>>, ViaError> {
    let mut out = Vec::new();
    for entry in resolve(list)? {
        let built = (entry.build)(options).map_err(|message| ViaError::Start {
            name: entry.name,
            message,
        })?;
        out.extend(built);
    }
    Ok(out)
}

/// The short `--via` help: `lead` followed by the names, e.g. `"Who asks: terminal, web, inbox, hub, none"`.
pub fn help(lead: &str) -> String {
    format!("{lead}: {}", names())
}

/// The long `--via` help: `lead`, then one line per answerer with its help.
pub fn long_help(lead: &str) -> String {
    let mut text = format!("{lead}:");
    for a in ANSWERERS {
        text.push_str(&format!("\n  {:<9} {}", a.name, a.help));
    }
    text
}

/// `--answers FILE`: the scripted answerer reading `{"answers":[…]}` (the output shape) from
/// `path`; unreadable or malformed data is a [`ViaError`].
pub fn answers_file(path: &Path) -> Result<Arc<dyn UserInteraction>, ViaError> {
    let text = std::fs::read_to_string(path).map_err(|source| ViaError::AnswersUnreadable {
        path: path.to_owned(),
        source,
    })?;
    let script = Scripted::from_json(&text).map_err(|e| ViaError::AnswersInvalid {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(Arc::new(script))
}
