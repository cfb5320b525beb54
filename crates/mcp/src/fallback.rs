//! Fallback answerers for clients that cannot elicit: the web page and the terminal.

use std::net::SocketAddr;
use std::sync::Arc;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide,
    UserInteraction,
};
use ask_user_web::{WebAnswerer, WebConfig};

use crate::args::RunError;

/// Starts the web answerer on `addr`; its URL is logged on stderr now and whenever a
/// question arrives while no page is open, and (unless `no_open`) opened in the default
/// browser then.
pub(crate) async fn web(
    addr: SocketAddr,
    no_open: bool,
) -> Result<Arc<dyn UserInteraction>, RunError> {
    let web = WebAnswerer::start(WebConfig::at(addr))
        .await
        .map_err(|e| RunError::Answerer(format!("cannot start the web page on {addr}: {e}")))?;
    eprintln!(
        "ask-user: questions for clients without elicitation appear at {}",
        web.url()
    );
    Ok(Arc::new(BrowserPage {
        web,
        open: !no_open,
    }))
}

/// The terminal this server runs in (`/dev/tty`), unavailable when there is none.
pub(crate) fn terminal() -> Arc<dyn UserInteraction> {
    Arc::new(ask_user_terminal::Terminal::new())
}

/// The web answerer, brought to the human's attention when a question arrives and no page
/// is open: the URL logged on stderr and opened in the default browser.
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
        eprintln!("ask-user: a question is waiting at {url}");
        if self.open
            && let Err(error) = open::that_detached(url)
        {
            tracing::warn!(%error, "cannot open the browser; open the URL by hand");
        }
    }
}

impl UserInteraction for BrowserPage {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        self.show();
        self.web.ask(request, cancel)
    }

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
