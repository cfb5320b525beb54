//! `ask-user hub …` (serve, tokens, sign-in links) and `ask-user ask --hub URL`
//! (docs/contract.md §9).

use ask_user_store::Store;
use std::net::SocketAddr;

use crate::Ended;

/// `ask-user hub`: one inbox for every agent on every machine.
#[derive(Debug, clap::Args)]
pub(crate) struct HubArgs {
    #[command(subcommand)]
    command: HubCommand,
}

/// Where the store is (every command of one hub names the same one).
#[derive(Debug, clap::Args)]
struct StoreArg {
    /// The store: sqlite:PATH, postgres://… (any number of replicas on one Postgres) or memory.
    /// Default: the embedded SQLite store.
    /// (A postgres:// URL may hold a password: `--help` never prints the environment's value.)
    #[arg(
        long,
        value_name = "URL",
        env = "ASK_USER_STORE",
        hide_env_values = true
    )]
    store: Option<ask_user_core::Secret>,
}

#[derive(Debug, clap::Subcommand)]
enum HubCommand {
    /// Serve the agent API (/v1/) and the human's inbox page.
    Serve {
        /// Where to listen. A non-loopback address needs TLS (a reverse proxy) and
        /// --insecure-http.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
        listen: SocketAddr,
        #[command(flatten)]
        store: StoreArg,
        /// The URL browsers use when the hub is behind a reverse proxy (https://hub.example.com).
        /// Must be https unless it is a loopback address or --insecure-http is given.
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
        /// Serve plain HTTP on a non-loopback address (only behind a TLS-terminating proxy,
        /// whose address --public-url gives).
        #[arg(long)]
        insecure_http: bool,
        /// TLS certificate chain (PEM): the hub serves https itself.
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<std::path::PathBuf>,
        /// TLS private key (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<std::path::PathBuf>,
        /// At most this many open connections.
        #[arg(long, value_name = "N", default_value_t = 1024)]
        max_connections: usize,
        /// The channels' configuration file (ntfy, Telegram, Slack, email; TOML). Default:
        /// $XDG_CONFIG_HOME/ask-user/config.toml (~/.config/…) when it exists. Channels need
        /// --public-url.
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
        /// Escalation ladder: notify each channel this long after the ask was made, while no
        /// answer has come (5m:telegram,20m:email); replaces the file's `escalate`. Channels
        /// not named get the ask at once.
        #[arg(long, value_name = "LADDER")]
        escalate: Option<String>,
    },
    /// Agent tokens: add NAME (prints the token once), list, revoke NAME.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Print a single-use sign-in link for the inbox, valid 15 minutes.
    LoginLink {
        #[command(flatten)]
        store: StoreArg,
        /// The hub's URL as the browser reaches it. Default: where `hub serve` on this store
        /// last served (its --public-url, else its --listen address), else
        /// http://127.0.0.1:8765.
        #[arg(long, value_name = "URL", env = "ASK_USER_HUB_PUBLIC_URL")]
        url: Option<String>,
    },
    /// Sign every browser out: revoke every session and unused sign-in link.
    RevokeSessions {
        #[command(flatten)]
        store: StoreArg,
    },
}

#[derive(Debug, clap::Subcommand)]
enum TokenCommand {
    /// Make a token for agent NAME and print it (once: only its hash is kept).
    Add {
        /// The agent's name, shown to the human beside its questions.
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// List the agents that have a token.
    List {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Revoke agent NAME's token.
    Revoke {
        /// The agent's name.
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

async fn open(store: &StoreArg) -> Result<Store, String> {
    let url = match &store.store {
        Some(u) => u.expose().to_owned(),
        None => format!(
            "sqlite:{}",
            ask_user_store::default_sqlite_path()
                .map_err(|e| e.to_string())?
                .display()
        ),
    };
    Store::open(&url).await.map_err(|e| e.to_string())
}

/// How long `hub serve` waits for a database that cannot be reached yet (starting, or its
/// network not up) before giving up.
const STORE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// [`open`], waiting up to [`STORE_WAIT`] for a store that cannot be reached yet (a Postgres
/// server starting beside the hub), saying so on stderr every few seconds.
async fn open_waiting(store: &StoreArg) -> Result<Store, String> {
    let Some(url) = store
        .store
        .as_ref()
        .map(ask_user_core::Secret::expose)
        .filter(|u| u.starts_with("postgres"))
    else {
        return open(store).await;
    };
    let start = std::time::Instant::now();
    let mut said = None::<std::time::Instant>;
    loop {
        match Store::open(url).await {
            Ok(store) => return Ok(store),
            Err(e @ ask_user_store::Error::Unreachable { .. }) if start.elapsed() < STORE_WAIT => {
                if said.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(5)) {
                    eprintln!("ask-user hub: waiting for the database ({e})");
                    said = Some(std::time::Instant::now());
                }
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn printed(stdout: String) -> Ended {
    Ended::Printed { stdout, status: 0 }
}

/// Runs `ask-user hub …`.
pub(crate) fn run(args: HubArgs) -> Ended {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Ended::Usage(format!("cannot start: {e}")),
    };
    match runtime.block_on(run_async(args)) {
        Ok(ended) => ended,
        Err(message) => Ended::Printed {
            stdout: String::new(),
            status: {
                eprintln!("ask-user hub: {message}");
                1
            },
        },
    }
}

async fn run_async(args: HubArgs) -> Result<Ended, String> {
    match args.command {
        HubCommand::Serve {
            listen,
            store,
            public_url,
            insecure_http,
            tls_cert,
            tls_key,
            max_connections,
            config: config_file,
            escalate,
        } => {
            let (config_file, channels) =
                match crate::hub_channels::load(config_file.as_deref(), escalate.as_deref()) {
                    Ok(c) => c,
                    Err(e) => return Ok(Ended::Usage(e)),
                };
            if let Err(e) = crate::hub_channels::need_public_url(
                config_file.as_deref(),
                &channels,
                public_url.as_deref(),
            ) {
                return Ok(Ended::Usage(e));
            }
            let tls = match (&tls_cert, &tls_key) {
                (Some(cert), Some(key)) => match ask_user_hub::HubTls::load(cert, key) {
                    Ok(tls) => Some(tls),
                    Err(e) => return Ok(Ended::Usage(e.to_string())),
                },
                _ => None,
            };
            if let Err(e) = ask_user_hub::check_transport(listen, tls.is_some(), insecure_http)
                .and_then(|()| {
                    ask_user_hub::check_public_url(
                        listen,
                        public_url.as_deref(),
                        tls.is_some(),
                        insecure_http,
                    )
                })
            {
                return Ok(Ended::Usage(e.to_string()));
            }
            let store = open_waiting(&store).await?;
            let listener = tokio::net::TcpListener::bind(listen)
                .await
                .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            let mut config = ask_user_hub::HubConfig::new(store.clone());
            config.public_url = public_url;
            config.max_connections = max_connections;
            let scheme = if tls.is_some() { "https" } else { "http" };
            config.tls = tls;
            let stop = tokio_util::sync::CancellationToken::new();
            let mut running = None;
            if let Some(public) = &config.public_url
                && !channels.is_empty()
            {
                // A public URL the hub refuses must not reach a notification first.
                let _checked = ask_user_hub::router(&config, bound).map_err(|e| e.to_string())?;
                let on_stop = stop.clone();
                let until = move || {
                    let stop = on_stop.clone();
                    async move { stop.cancelled().await }
                };
                let routes = match ask_user_channels::start_until(
                    &channels,
                    store.clone(),
                    public,
                    &until,
                ) {
                    Ok((routes, tasks)) => {
                        running = Some(tasks);
                        routes
                    }
                    Err(e) => {
                        let file = config_file
                            .as_deref()
                            .map_or_else(String::new, |f| format!("{}: ", f.display()));
                        return Ok(Ended::Usage(format!("{file}{e}")));
                    }
                };
                config.extra_routes = Some(routes);
                eprintln!("ask-user hub: channels: {}", channels.names().join(", "));
            }
            // SIGINT and SIGTERM (a service manager's stop) both drain: no new connection,
            // current responses finished, background tasks stopped.
            ask_user_serve::stop_on_signals(stop.clone())
                .map_err(|e| format!("cannot watch SIGINT and SIGTERM: {e}"))?;
            let served = format!("{scheme}://{bound}");
            crate::hub_url::record(&store, config.public_url.as_deref().unwrap_or(&served));
            eprintln!(
                "ask-user hub: serving on {scheme}://{bound} (store: {})",
                store.location()
            );
            let served = ask_user_hub::serve(listener, config, stop.clone()).await;
            // The channels' tasks stop with the hub (an error ends it too).
            stop.cancel();
            if let Some(tasks) = running {
                tasks.join().await;
            }
            served.map_err(|e| e.to_string())?;
            Ok(printed(String::new()))
        }
        HubCommand::Token(TokenCommand::Add { name, store }) => {
            let store = open(&store).await?;
            let token = ask_user_hub::add_token(&store, &name)
                .await
                .map_err(|e| e.to_string())?;
            Ok(printed(format!("{token}\n")))
        }
        HubCommand::Token(TokenCommand::List { store }) => {
            let store = open(&store).await?;
            let tokens = ask_user_hub::list_tokens(&store)
                .await
                .map_err(|e| e.to_string())?;
            Ok(printed(
                tokens
                    .into_iter()
                    .map(|(name, _)| format!("{name}\n"))
                    .collect(),
            ))
        }
        HubCommand::Token(TokenCommand::Revoke { name, store }) => {
            let store = open(&store).await?;
            ask_user_hub::revoke_token(&store, &name)
                .await
                .map_err(|e| e.to_string())?;
            Ok(printed(String::new()))
        }
        HubCommand::LoginLink { store, url } => {
            let store = open(&store).await?;
            let url = crate::hub_url::login_base(url, &store);
            let link = ask_user_hub::login_link(&store, &url)
                .await
                .map_err(|e| e.to_string())?;
            Ok(printed(format!("{link}\n")))
        }
        HubCommand::RevokeSessions { store } => {
            let store = open(&store).await?;
            let n = ask_user_hub::revoke_sessions(&store)
                .await
                .map_err(|e| e.to_string())?;
            Ok(printed(format!("revoked {n}\n")))
        }
    }
}

/// `ask-user ask --hub URL`: the options, shared with `ask-user mcp` (`ask_user_via::hub_args`).
pub(crate) use ask_user_via::hub_args::HubAskArgs;

/// The hub client's settings from `--hub`/`--hub-token` and the call's `--key` (see
/// [`HubAskArgs::client_config`]): `None` without `--hub`.
pub(crate) fn client_config(
    hub: &HubAskArgs,
    key: Option<&str>,
) -> Result<Option<ask_user_hub_client::HubClientConfig>, String> {
    hub.client_config(key)
}

pub(crate) use ask_user_via::hub_args::via_names;
