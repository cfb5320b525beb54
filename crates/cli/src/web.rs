//! `--via web`: the web answerer, bound before anything else runs so its URL (and, for an
//! address other devices can reach, a QR code) is on the screen before the question is.
//!
//! Who may answer (docs/contract.md §8): the capability URL lets whoever holds it answer, so
//! it goes only where the human, and not the model, reads: the terminal (`/dev/tty`). On
//! stderr — which a harness may show to the model — only with `ask --print-url`. With no
//! terminal and no `--print-url`, the page is opened in the desktop's browser when there is
//! one; otherwise `--via web` is unavailable (nobody could reach the page).

use std::fs::OpenOptions;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    UserInteraction,
};
use ask_user_web::WebAnswerer;

/// What stderr says when the page could be shown nowhere (no URL in it).
pub(crate) const NOWHERE_TEXT: &str = "ask-user: --via web: no terminal to show the page's address on and no desktop browser to open it in; pass --print-url to print it on stderr";

/// What stderr says when the page was opened in the desktop's browser (no URL in it).
pub(crate) const OPENED_TEXT: &str = "ask-user: the question is open in your browser";

/// The CLI's presentation of the web answerer the registry bound on `addr` (the hook of
/// `ask_user_via::Options`): shows the page to the human (see the module doc) and shuts the
/// server down after the one ask. `print_url` (`ask --print-url`) also prints the URL on
/// stderr. When it can be shown nowhere, the answerer is unavailable.
pub(crate) fn show(
    web: WebAnswerer,
    addr: SocketAddr,
    print_url: bool,
) -> Result<Arc<dyn UserInteraction>, String> {
    let reachable = show_page(&web, addr, print_url);
    Ok(Arc::new(OneAsk { web, reachable }))
}

/// The web answerer for a process that asks once and exits: after the ask it shuts the server
/// down gracefully, so open pages receive how their question ended (answered here, withdrawn
/// because the terminal won) before the process goes.
struct OneAsk {
    web: WebAnswerer,
    /// Whether the human was shown the page (terminal, stderr, browser).
    reachable: bool,
}

impl UserInteraction for OneAsk {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            if !self.reachable {
                return Err(AskError::Unavailable(
                    "nobody can be shown the web page".to_owned(),
                ));
            }
            let result = self.web.ask_decided(request, cancel, decide).await;
            self.web.shut_down().await;
            result
        })
    }

    fn name(&self) -> Option<&str> {
        self.web.name()
    }

    fn is_available(&self) -> bool {
        self.reachable && self.web.is_available()
    }
}

/// What the terminal shows: the QR code (unless loopback), then the URL line.
fn banner(web: &WebAnswerer, addr: SocketAddr) -> String {
    let mut text = String::new();
    if !addr.ip().is_loopback() {
        text.push_str(&web.qr_code());
        text.push_str("Scan with a phone on this network, or open in a browser:\n");
    } else {
        text.push_str(
            "Answer in a browser on this machine (--web-addr 0.0.0.0:PORT for a phone):\n",
        );
    }
    text.push_str(web.url());
    text.push('\n');
    text
}

/// Shows the page to the human; `false` when it could be shown nowhere.
fn show_page(web: &WebAnswerer, addr: SocketAddr, print_url: bool) -> bool {
    let mut shown = false;
    if let Ok(mut tty) = OpenOptions::new().write(true).open("/dev/tty") {
        // The terminal is in cooked mode here (the terminal UI starts later): plain lines.
        shown = tty.write_all(banner(web, addr).as_bytes()).is_ok();
    }
    if print_url {
        shown |= writeln!(
            std::io::stderr().lock(),
            "ask-user: answer at {}",
            web.url()
        )
        .is_ok();
    }
    if shown {
        return true;
    }
    if has_desktop() && open::that_detached(web.url()).is_ok() {
        eprintln!("{OPENED_TEXT}");
        return true;
    }
    eprintln!("{NOWHERE_TEXT}");
    false
}

/// Whether a desktop session is there to open a browser in: always on macOS and Windows; on
/// other systems when `DISPLAY` or `WAYLAND_DISPLAY` is set.
fn has_desktop() -> bool {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}
