//! How the MCP server shows the web page, its fallback for clients that cannot elicit (the
//! hook of `ask_user_via::Options`; the registry builds every answerer).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    UserInteraction,
};
use ask_user_web::WebAnswerer;

/// Said when a question is shown only on the page and no browser could be opened (a log line
/// on stderr, and the progress message the client shows): where the question waits, never the
/// page's secret address (docs/contract.md §8).
pub const NO_BROWSER_TEXT: &str = "no browser could be opened: the question waits in `ask-user inbox` (restart the server with --no-open to have the page's address printed)";

/// Whether opening the browser has failed in this process (then [`NO_BROWSER_TEXT`] is the
/// progress message).
static NO_BROWSER: AtomicBool = AtomicBool::new(false);

/// Whether a question went to the page while no browser could be opened.
pub(crate) fn no_browser() -> bool {
    NO_BROWSER.load(Ordering::Relaxed)
}

/// Serves the web answerer the registry bound (on the current tokio runtime). Whenever a
/// question arrives while no page is open, the page is opened in the default browser; with
/// `no_open` its URL is printed on stderr instead (now and then), the only way the URL reaches
/// stderr (docs/contract.md §7, §8: a harness may show stderr to the model).
pub(crate) fn web(
    web: WebAnswerer,
    _addr: SocketAddr,
    no_open: bool,
) -> Result<Arc<dyn UserInteraction>, String> {
    web.serve()
        .map_err(|e| format!("cannot serve the page: {e}"))?;
    if no_open {
        eprintln!(
            "ask-user: questions for clients without elicitation appear at {}",
            web.url()
        );
    }
    Ok(Arc::new(BrowserPage {
        web,
        open: !no_open,
    }))
}

/// The web answerer, brought to the human's attention when a question arrives and no page
/// is open: opened in the default browser, or (`--no-open`) its URL printed on stderr.
#[derive(Debug)]
struct BrowserPage {
    web: WebAnswerer,
    open: bool,
}

impl BrowserPage {
    fn show(&self) {
        if self.web.state().open_pages() > 0 {
            return;
        }
        let url = self.web.url();
        if !self.open {
            eprintln!("ask-user: a question is waiting at {url}");
        } else if let Err(error) = open::that_detached(url) {
            // The error's text may name the command line, which holds the URL: only its kind.
            NO_BROWSER.store(true, Ordering::Relaxed);
            tracing::warn!(kind = %error.kind(), "{NO_BROWSER_TEXT}");
        }
    }
}

impl UserInteraction for BrowserPage {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        self.show();
        self.web.ask_decided(request, cancel, decide)
    }

    fn name(&self) -> Option<&str> {
        self.web.name()
    }

    fn is_available(&self) -> bool {
        self.web.is_available()
    }
}
