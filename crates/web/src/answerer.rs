//! The running web answerer: a bound socket serving [`crate::router`] in a task, its
//! capability URL and the URL as a QR code for a terminal.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    UserInteraction,
};
use ask_user_serve::Limits;
use qrcode::QrCode;
use qrcode::render::unicode::Dense1x2;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::config::WebConfig;
use crate::routes::router;
use crate::state::WebState;

/// Questions on a local web page, answered from a desktop browser or a phone.
///
/// [`WebAnswerer::start`] binds the configured address and serves the page in a task
/// ([`WebAnswerer::bind`] binds without a runtime and serves from the first `ask`). Every
/// [`UserInteraction::ask`] puts its batch on every open page at once (many may be pending);
/// the first valid answer wins, a dismissal gives [`AskError::Dismissed`], and a cancelled ask
/// is withdrawn from the pages live. Clones share one server; it stops when the last clone is
/// dropped.
#[derive(Debug, Clone)]
pub struct WebAnswerer {
    state: WebState,
    url: Arc<str>,
    server: Arc<Server>,
}

/// The bound socket until it is served, the serving task, and its shutdown.
#[derive(Debug)]
struct Server {
    listener: Mutex<Option<std::net::TcpListener>>,
    limits: Limits,
    task: Mutex<Option<JoinHandle<()>>>,
    shutdown: CancellationToken,
}

/// How long [`WebAnswerer::shut_down`] waits for open pages to receive their last events.
const STOP_GRACE: Duration = Duration::from_millis(1500);

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl WebAnswerer {
    /// Binds `config.addr` and starts serving in a background task of the current tokio
    /// runtime. Fails when the address cannot be bound (in use, not an address of this
    /// machine) or the OS random number generator fails.
    pub async fn start(config: WebConfig) -> std::io::Result<WebAnswerer> {
        let web = Self::bind(config)?;
        web.serve()?;
        Ok(web)
    }

    /// Binds `config.addr` now, without a tokio runtime, so the URL can be shown before
    /// anything else starts; serving begins with [`WebAnswerer::serve`] or the first `ask`
    /// (a browser that connects earlier waits in the socket's backlog). Fails like
    /// [`WebAnswerer::start`].
    pub fn bind(config: WebConfig) -> std::io::Result<WebAnswerer> {
        let limits = Limits {
            header_read_timeout: config.header_read_timeout,
            max_connections: config.max_connections,
        }
        .fit_open_files();
        let listener = std::net::TcpListener::bind(config.addr)?;
        listener.set_nonblocking(true)?;
        let bound = listener.local_addr()?;
        let state = WebState::new(&config, bound)?;
        let url = format!(
            "http://{}{}",
            display_authority(&config, bound),
            state.base_path()
        );
        let shutdown = state.shutdown_token().clone();
        tracing::info!(%bound, "web answerer bound");
        Ok(WebAnswerer {
            state,
            url: url.into(),
            server: Arc::new(Server {
                listener: Mutex::new(Some(listener)),
                limits,
                task: Mutex::new(None),
                shutdown,
            }),
        })
    }

    /// Starts serving on the current tokio runtime; does nothing when already serving.
    /// Fails outside a tokio runtime.
    pub fn serve(&self) -> std::io::Result<()> {
        let mut slot = self
            .server
            .listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(listener) = slot.take() else {
            return Ok(());
        };
        if tokio::runtime::Handle::try_current().is_err() {
            *slot = Some(listener);
            return Err(std::io::Error::other(
                "the web answerer must be served from within a tokio runtime",
            ));
        }
        let listener = TcpListener::from_std(listener)?;
        let app = router(self.state.clone());
        let stop = self.server.shutdown.clone();
        let task = tokio::spawn(ask_user_serve::serve(
            listener,
            app,
            stop,
            self.server.limits,
        ));
        *self
            .server
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(task);
        Ok(())
    }

    /// The capability URL, `http://HOST:PORT/<secret>/`. Whoever has it can answer; show it
    /// only to the human (terminal, stderr), never to the model.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL as a QR code in text: two modules per character cell using the Unicode half
    /// blocks `▀ ▄ █`, with a quiet zone, lines ending in `\n`. Drawn light-on-dark (blocks are
    /// the light modules), which suits the usual dark terminal background. Empty if the URL
    /// cannot be encoded (it always can: it is under 100 bytes unless `public_host` is huge).
    pub fn qr_code(&self) -> String {
        qr_text(&self.url)
    }

    /// The shared state (pending questions, open pages), e.g. for [`crate::router`] in tests.
    pub fn state(&self) -> &WebState {
        &self.state
    }

    /// Stops the server and waits (up to 1.5 s) until it has finished: open pages get the
    /// events still queued for them (a last withdrawal) and their streams end, responses in
    /// flight are sent, then the socket closes. Waiting asks fail, new ones are unavailable.
    /// A host about to exit calls this so the pages learn how their questions ended.
    /// (Dropping the last clone stops the server too, without waiting.)
    pub async fn shut_down(&self) {
        self.state.shut_down();
        let task = self
            .server
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(STOP_GRACE, task).await;
        }
    }
}

impl UserInteraction for WebAnswerer {
    /// Like [`WebState`]'s: a submission is acknowledged only once `decide` accepted it.
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        if let Err(error) = self.serve() {
            return Box::pin(async move {
                Err(AskError::Failed(format!(
                    "cannot serve the web page: {error}"
                )))
            });
        }
        self.state.ask_decided(request, cancel, decide)
    }

    fn name(&self) -> Option<&str> {
        self.state.name()
    }

    fn is_available(&self) -> bool {
        self.state.is_available()
    }
}

/// `text` as a terminal QR code (see [`WebAnswerer::qr_code`]).
pub(crate) fn qr_text(text: &str) -> String {
    match QrCode::new(text.as_bytes()) {
        Ok(code) => {
            let mut out = code
                .render::<Dense1x2>()
                .dark_color(Dense1x2::Light)
                .light_color(Dense1x2::Dark)
                .quiet_zone(true)
                .build();
            out.push('\n');
            out
        }
        Err(_) => String::new(),
    }
}

/// The `host:port` written into the URL: the configured public host, else the bound IP, else
/// (when bound to all interfaces) this machine's primary LAN address.
fn display_authority(config: &WebConfig, bound: SocketAddr) -> String {
    let port = bound.port();
    if let Some(host) = &config.public_host {
        return format!("{host}:{port}");
    }
    let ip = if bound.ip().is_unspecified() {
        primary_lan_ip().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
    } else {
        bound.ip()
    };
    SocketAddr::new(ip, port).to_string()
}

/// The address this machine would use to reach the outside: a UDP socket "connected" to a
/// documentation address (no packet is sent) reveals the source address the routing table
/// picks. `None` when there is no route (an offline machine).
fn primary_lan_ip() -> Option<IpAddr> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_unspecified()).then_some(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qr_code_is_half_blocks_with_a_quiet_zone() {
        let qr = qr_text("http://127.0.0.1:8765/00112233445566778899aabbccddeeff/");
        let lines: Vec<&str> = qr.lines().collect();
        assert!(lines.len() > 10);
        let width = lines[0].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() == width));
        assert!(qr.chars().all(|c| " ▀▄█\n".contains(c)));
        // Quiet zone drawn light: the first line is all full blocks.
        assert!(lines[0].chars().all(|c| c == '█'));
    }

    #[test]
    fn the_url_names_the_public_host_or_the_bound_ip() {
        let bound: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        assert_eq!(
            display_authority(&WebConfig::default(), bound),
            "127.0.0.1:8765"
        );
        let named = WebConfig {
            public_host: Some("mybox.local".into()),
            ..WebConfig::default()
        };
        assert_eq!(display_authority(&named, bound), "mybox.local:8765");
        let v6: SocketAddr = "[::1]:9".parse().unwrap();
        assert_eq!(display_authority(&WebConfig::default(), v6), "[::1]:9");
        let any: SocketAddr = "0.0.0.0:9".parse().unwrap();
        assert!(!display_authority(&WebConfig::default(), any).starts_with("0.0.0.0"));
    }
}
