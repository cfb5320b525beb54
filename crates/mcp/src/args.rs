//! The command line of `ask-user mcp` (and the standalone `ask-user-mcp` binary).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::UserInteraction;
use ask_user_scripted::Scripted;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::serve::{serve_http, serve_stdio};
use crate::server::{AskUserServer, Routing};

/// A fallback answerer for clients that cannot elicit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// The local web page (opened in the default browser unless `--no-open`).
    Web,
    /// The terminal this server runs in (`/dev/tty`). Only when asked for: an MCP host usually
    /// owns that terminal.
    Terminal,
    /// No fallback: clients that cannot elicit get the no-answerer outcome.
    None,
}

/// `ask-user mcp`: serve `ask_user_question` to an MCP client.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at this address (endpoint `/mcp`) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// Where questions go when the client cannot show an elicitation form (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "web")]
    pub via: Vec<Via>,

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

    /// Give up when the human has not answered within this time (e.g. `5m`); default: wait.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub timeout: Option<Duration>,

    /// While a question is open, send the client a progress notification this often (when
    /// its request carried a progressToken), so hosts that reset their timeout on progress
    /// keep waiting.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "15s")]
    pub progress_interval: Duration,

    /// `--journal FILE` (audit journal) and `--notify CMD` (attention command).
    #[command(flatten)]
    pub host: ask_user_host::HostArgs,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The answers file could not be read or parsed.
    #[error("cannot use --answers {path}: {message}")]
    Answers {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A transport failed (binding the address, stdio closed abnormally).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A fallback answerer could not start.
    #[error("{0}")]
    Answerer(String),
    /// The `--journal` file cannot be written.
    #[error(transparent)]
    Journal(#[from] ask_user_host::JournalError),
}

impl McpArgs {
    /// The routing these flags describe; starts the fallback answerers (e.g. the web server).
    pub async fn routing(&self) -> Result<Routing, RunError> {
        let mut fallback: Vec<Arc<dyn UserInteraction>> = Vec::new();
        if let Some(path) = &self.answers {
            let text = std::fs::read_to_string(path).map_err(|e| RunError::Answers {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let script = Scripted::from_json(&text).map_err(|e| RunError::Answers {
                path: path.clone(),
                message: e.to_string(),
            })?;
            fallback.push(Arc::new(script));
        } else {
            for via in &self.via {
                match via {
                    Via::None => {}
                    Via::Web => {
                        fallback.push(crate::fallback::web(self.web_addr, self.no_open).await?);
                    }
                    Via::Terminal => fallback.push(crate::fallback::terminal()),
                }
            }
        }
        Ok(Routing {
            elicitation: !self.no_elicitation,
            fallback,
            timeout: self.timeout,
            journal: self.host.open_journal()?.map(Arc::new),
            notify: self.host.notify.clone(),
            progress_interval: self.progress_interval,
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
            let listener = TcpListener::bind(addr).await?;
            let bound = listener.local_addr()?;
            tracing::info!("MCP endpoint: http://{bound}/mcp");
            eprintln!("ask-user: MCP endpoint http://{bound}/mcp");
            let shutdown = CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                stop.cancel();
            });
            Ok(serve_http(server, listener, shutdown).await?)
        }
    }
}
