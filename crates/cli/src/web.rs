//! `--via web`: the web answerer, bound before anything else runs so its URL (and, for an
//! address other devices can reach, a QR code) is on the screen before the question is.

use std::fs::OpenOptions;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::Arc;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};
use ask_user_web::WebAnswerer;

/// The CLI's presentation of the web answerer the registry bound on `addr` (the hook of
/// `ask_user_via::Options`): shows where to answer, the URL on stderr, and the URL with a QR
/// code on the terminal (`/dev/tty`, or stderr when that is the terminal), and shuts the server
/// down after the one ask. The QR code is left out for a loopback address, which a phone
/// cannot reach.
pub(crate) fn show(web: WebAnswerer, addr: SocketAddr) -> Result<Arc<dyn UserInteraction>, String> {
    show_banner(&web, addr);
    Ok(Arc::new(OneAsk(web)))
}

/// The web answerer for a process that asks once and exits: after the ask it shuts the server
/// down gracefully, so open pages receive how their question ended (answered here, withdrawn
/// because the terminal won) before the process goes.
struct OneAsk(WebAnswerer);

impl UserInteraction for OneAsk {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            let result = self.0.ask(request, cancel).await;
            self.0.shut_down().await;
            result
        })
    }

    fn is_available(&self) -> bool {
        self.0.is_available()
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

fn show_banner(web: &WebAnswerer, addr: SocketAddr) {
    let banner = banner(web, addr);
    let stderr = std::io::stderr();
    if stderr.is_terminal() {
        let _ = stderr.lock().write_all(banner.as_bytes());
        return;
    }
    let _ = writeln!(stderr.lock(), "ask-user: answer at {}", web.url());
    if let Ok(mut tty) = OpenOptions::new().write(true).open("/dev/tty") {
        // The terminal is in cooked mode here (the terminal UI starts later): plain lines.
        let _ = tty.write_all(banner.as_bytes());
    }
}
