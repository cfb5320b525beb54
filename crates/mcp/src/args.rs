//! The command line of `ask-user mcp` (and the standalone `ask-user-mcp` binary).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::UserInteraction;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::serve::{serve_http, serve_stdio};
use crate::server::{AskUserServer, Routing};

/// The lead of the `--via` help, before the registry's names (`ask-user-via`).
const VIA_LEAD: &str = "Where questions go when the client cannot show an elicitation form \
     (comma-separated; the first answer wins; `terminal` only when asked for, as an MCP host \
     usually owns that terminal)";

/// `ask-user mcp`: serve `ask_user_question` to an MCP client.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at this address (endpoint `/mcp`) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// Where questions go when the client cannot show an elicitation form: names from the
    /// answerer registry (`ask-user-via`), checked like `ask-user ask --via`.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "web",
        help = ask_user_via::help(VIA_LEAD),
        long_help = ask_user_via::long_help(VIA_LEAD),
    )]
    pub via: Vec<String>,

    /// Never ask through the client's elicitation form, always through `--via`.
    #[arg(long)]
    pub no_elicitation: bool,

    /// Do not open the web page in the default browser (its URL is still logged on stderr).
    #[arg(long)]
    pub no_open: bool,

    /// Where the web page listens (`0.0.0.0:8765` to answer from a phone on the LAN).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub web_addr: SocketAddr,

    /// Answer from this file (`{"answers":[…]}`, the output shape) instead of a human; replaces
    /// `--via`. For tests and automation.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,

    /// While a question is open, send the client a progress notification this often (when
    /// its request carried a progressToken), so hosts that reset their timeout on progress
    /// keep waiting.
    #[arg(long, value_name = "DURATION", value_parser = parse_interval, default_value = "15s")]
    pub progress_interval: Duration,

    /// A decline or cancel of the client's form sooner than this after it went out is the
    /// client's own refusal (a host running headless, e.g. `claude -p`, `codex exec`), not
    /// the human's: the question goes to `--via` instead. 0 takes every refusal as the human's.
    #[arg(long, value_name = "DURATION", value_parser = ask_user_core::time::parse_duration, default_value = "1s")]
    pub reaction_floor: Duration,

    /// End a call that is still waiting after this long with "the question is still open;
    /// call again with the same arguments" (the ask stays open for the retry). Default: 30 s
    /// before the client's own hard limit where one is known (Codex 300 s, Gemini CLI 600 s).
    #[arg(long, value_name = "DURATION", value_parser = ask_user_host::parse_timeout)]
    pub call_limit: Option<Duration>,

    /// Where asks are kept: sqlite:PATH, postgres://…, or memory. A call the client cancels
    /// leaves its ask open there (detached) for a retry of the same call, the web page and
    /// `ask-user inbox`.
    ///
    /// Default: the SQLite file ~/.local/state/ask-user/store.sqlite3 ($XDG_STATE_HOME), or
    /// via-hub.sqlite3 beside it with --hub (the hub holds the question; a hub serving the
    /// default store lists it once); when that cannot be opened, a warning and a memory store.
    /// A store named here that cannot be used is fatal, before the server starts. Not used
    /// with --answers.
    #[arg(
        long,
        value_name = "URL",
        env = ask_user_host::durable::STORE_ENV,
        hide_env_values = true
    )]
    pub store: Option<ask_user_core::Secret>,

    /// `--timeout DURATION`, `--journal FILE` (audit journal) and `--notify CMD` (attention
    /// command), as `ask-user ask` has them.
    #[command(flatten)]
    pub host: ask_user_host::HostArgs,

    /// `--hub URL` (env ASK_USER_HUB), `--hub-token-file` (or env ASK_USER_HUB_TOKEN) and
    /// `--session-title`, as `ask-user ask` has them. `--hub` alone makes the hub the only
    /// answerer: `--via` is replaced by `hub` and the client's elicitation form is not used
    /// (every question goes to the hub's inbox); with `hub` in `--via` the hub is one of the
    /// fallback answerers and elicitation comes first as usual.
    #[command(flatten)]
    pub hub: ask_user_via::hub_args::HubAskArgs,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A `--via` list or `--answers` file that cannot be used, or a fallback answerer that
    /// cannot start (a usage error: exit 2).
    #[error(transparent)]
    Usage(#[from] ask_user_via::ViaError),
    /// A transport failed (binding the address, stdio closed abnormally).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The `--journal` file cannot be written.
    #[error(transparent)]
    Journal(#[from] ask_user_host::JournalError),
    /// The store named with `--store`/`ASK_USER_STORE` cannot be used (a usage error: exit 2,
    /// before serving).
    #[error("{0}")]
    Store(String),
    /// `--hub` cannot be used as given (no token): a usage error (exit 2), before serving.
    #[error("{0}")]
    Hub(String),
}

impl McpArgs {
    /// Whether the hub takes every question: `--hub` given without `hub` in `--via` (then
    /// neither `--via`'s other answerers nor the client's elicitation form are used).
    #[must_use]
    pub fn hub_only(&self) -> bool {
        self.answers.is_none() && self.hub.given() && !ask_user_via::hub_args::names_hub(&self.via)
    }

    /// The routing these flags describe; starts the fallback answerers (e.g. the web server).
    pub async fn routing(&self) -> Result<Routing, RunError> {
        let fallback: Vec<Arc<dyn UserInteraction>> = match &self.answers {
            Some(path) => vec![ask_user_via::answers_file(path)?],
            None => {
                let show = |web, addr| crate::fallback::web(web, addr, self.no_open);
                let mut options = ask_user_via::Options::new(self.web_addr).with_show_web(&show);
                options.timeout = self.host.timeout;
                // Without `--answers` the server keeps a store (opened below), so `--via
                // inbox` can leave the question there for `ask-user inbox`.
                options.durable = true;
                // MCP calls carry no call key: each ask gets a random one, enough to
                // re-attach after a reconnect to another replica; a retried call re-attaches
                // through the local store's shower, which keeps the hub ask (docs/decisions.md
                // "MCP through the hub").
                options.hub = self.hub.client_config(None).map_err(RunError::Hub)?;
                let via = ask_user_via::hub_args::via_names(self.hub.given(), &self.via);
                ask_user_via::build(&via, &options)?
            }
        };
        let journal = self.host.open_journal()?.map(Arc::new);
        // Scripted answers (`--answers`) involve no human and keep nothing: no store.
        // Through a hub, the local record is kept beside the default store, not in it (a hub
        // serving that store on this machine would list the question twice).
        let default = ask_user_host::durable::DefaultStore::of_call(
            self.hub.given(),
            &ask_user_via::hub_args::via_names(self.hub.given(), &self.via),
        );
        let store = match &self.answers {
            Some(_) => None,
            None => Some(
                ask_user_host::durable::StoreArgs {
                    store: self.store.clone(),
                    key: None,
                }
                .open_for(default)
                .await
                .map_err(RunError::Store)?,
            ),
        };
        Ok(Routing {
            elicitation: !self.no_elicitation && !self.hub_only(),
            store,
            fallback,
            timeout: self.host.timeout,
            journal,
            notify: self.host.notify.clone(),
            progress_interval: self.progress_interval,
            reaction_floor: self.reaction_floor,
            call_limit: self.call_limit,
            ..Routing::default()
        })
    }
}

/// Runs the server the flags describe until the client goes away (stdio) or the process is
/// interrupted (HTTP).
pub async fn run(args: McpArgs) -> Result<(), RunError> {
    let server = AskUserServer::new(args.routing().await?);
    match args.http {
        None => Ok(serve_stdio(server).await?),
        Some(addr) => {
            // SIGINT and SIGTERM both drain; watched before the endpoint is announced, so a
            // stop sent once it is never finds the default action (death, exit 143).
            let shutdown = CancellationToken::new();
            ask_user_serve::stop_on_signals(shutdown.clone())?;
            let listener = TcpListener::bind(addr).await?;
            let bound = listener.local_addr()?;
            tracing::info!("MCP endpoint: http://{bound}/mcp");
            eprintln!("ask-user: MCP endpoint http://{bound}/mcp");
            Ok(serve_http(server, listener, shutdown).await?)
        }
    }
}

/// The error text of a zero `--progress-interval`.
pub(crate) const ZERO_INTERVAL: &str = "the progress interval must be longer than zero";

/// Parses `--progress-interval`: a humantime duration longer than zero and at most
/// [`ask_user_core::time::MAX_DURATION`] (a zero interval would tick without end).
///
/// # Errors
/// humantime's reason, [`ZERO_INTERVAL`] or [`ask_user_core::time::TOO_LONG`].
pub(crate) fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = ask_user_core::time::parse_duration(text)?;
    if interval.is_zero() {
        return Err(ZERO_INTERVAL.to_owned());
    }
    Ok(interval)
}
