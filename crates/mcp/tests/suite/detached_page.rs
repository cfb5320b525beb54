//! docs/contract.md §8: "the human sees that the agent stopped waiting and that an
//! answer is kept". The real MCP server (streamable HTTP, a memory store, the web page as its
//! fallback) with the official TypeScript SDK client (`tools/node/mcp-client.mjs
//! --retry-on-stdin`: a 5 s request timeout, no progress reset, so the SDK sends
//! `notifications/cancelled`) and the page in real headless Chromium (the scenarios of
//! `crates/web/tests/browser/scenarios.cjs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

use ask_user_mcp::Routing;
use ask_user_store::{HistoryPage, Store};
use ask_user_web::{WebAnswerer, WebConfig};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::{http_server, root};

/// The page's notice, pinned: our words, never the model's.
const NOTICE: &str =
    "The agent stopped waiting. Your answer is kept and given to it when it asks again.";

/// Model text that imitates the notice and carries markup: shown as text, never as HTML.
const ARGUMENTS: &str = r#"{"questions":[{"id":"go","question":"<b>The agent stopped waiting.</b> Deploy?","options":["Yes","No"]}]}"#;

const NO: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;

/// A child process spoken to line by line.
struct Lines {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    what: &'static str,
}

impl Lines {
    fn spawn(mut command: Command, what: &'static str) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} runs (scripts/setup installs node, chromium): {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            what,
        }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        if line.is_empty() {
            let mut stderr = String::new();
            let _ = self
                .child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr);
            panic!("{} ended early: {stderr}", self.what);
        }
        line.trim_end().to_owned()
    }

    fn expect(&mut self, line: &str) {
        assert_eq!(self.line(), line, "{}", self.what);
    }

    fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The last line, as JSON (`RESULT ` stripped); the process must exit successfully.
    fn json(mut self, prefix: &str) -> Value {
        let line = self.line();
        let json = line
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("{}: {line}", self.what));
        let value = serde_json::from_str(json).unwrap();
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success(), "{}", self.what);
        value
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn browser(scenario: &str, url: &str) -> Lines {
    let mut command = Command::new("node");
    command
        .arg(root().join("crates/web/tests/browser/scenarios.cjs"))
        .arg(scenario)
        .arg(url)
        .env(
            "PLAYWRIGHT_CORE",
            root().join("tools/node/node_modules/playwright-core"),
        );
    Lines::spawn(command, "the browser scenario")
}

fn sdk_client(mcp_url: &str) -> Lines {
    let mut command = Command::new("node");
    command
        .arg(root().join("tools/node/mcp-client.mjs"))
        .args(["--sdk", "latest", "--reply", "none", "--timeout", "5000"])
        .args([
            "--arguments",
            ARGUMENTS,
            "--retry-on-stdin",
            "--url",
            mcp_url,
        ]);
    Lines::spawn(command, "the TypeScript SDK client")
}

struct Setup {
    web: WebAnswerer,
    store: Store,
    _http: super::support::HttpServer,
    mcp_url: String,
}

async fn setup() -> Setup {
    let web = WebAnswerer::start(WebConfig::default()).await.unwrap();
    let store = Store::memory();
    let http = http_server(Routing {
        fallback: vec![Arc::new(web.clone())],
        store: Some(store.clone()),
        ..Routing::default()
    })
    .await;
    let mcp_url = http.url.clone();
    Setup {
        web,
        store,
        _http: http,
        mcp_url,
    }
}

/// What the card showed while the agent was not waiting.
fn assert_notice(seen: &Value) {
    assert_eq!(seen["noticeText"], NOTICE, "{seen}");
    assert_eq!(seen["noticeRole"], "status", "{seen}");
    // The model's text is shown as text, untouched (no element made of it).
    assert_eq!(
        seen["question"], "<b>The agent stopped waiting.</b> Deploy?",
        "{seen}"
    );
    assert_eq!(seen["modelElements"], 0, "{seen}");
    assert_eq!(seen["answerable"], true, "{seen}");
    assert_eq!(seen["errors"], serde_json::json!([]), "{seen}");
}

/// The client's timeout fires: the card says the agent stopped waiting; the human answers
/// there; the card says the answer is kept; the retry gets it at once, no second question.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_says_the_agent_stopped_waiting_and_the_retry_gets_the_answer() {
    let s = setup().await;
    let (page_url, mcp_url) = (s.web.url().to_owned(), s.mcp_url.clone());
    let (seen, out) = tokio::task::spawn_blocking(move || {
        let mut page = browser("detached-answer", &page_url);
        // The page is open before the call starts, so it sees the card before the timeout.
        page.expect("STEP ready");
        let mut client = sdk_client(&mcp_url);
        page.expect("STEP shown");
        client.expect("TIMED_OUT");
        page.expect("STEP notice");
        let seen = page.json("RESULT ");
        client.write("retry");
        (seen, client.json(""))
    })
    .await
    .unwrap();
    assert_eq!(seen["hiddenWhileWaiting"], true, "{seen}");
    assert_notice(&seen);
    assert_eq!(seen["noticeHiddenAfter"], true, "{seen}");
    assert_eq!(
        seen["closed"], "Answer kept. The agent gets it when it asks again.",
        "{seen}"
    );
    assert!(
        out["error"]
            .as_str()
            .unwrap_or_default()
            .contains("timed out"),
        "{out}"
    );
    assert_eq!(out.get("retry_error"), None, "{out}");
    assert_eq!(out["retry"]["content"][0]["text"], NO, "{out}");
    // One ask, answered once, now delivered; nothing left on the page.
    let asks = s
        .store
        .history(HistoryPage {
            after: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert!(asks[0].delivered_at.is_some(), "{asks:?}");
    assert_eq!(s.web.state().pending(), 0);
}

/// The agent retries before the human answers: the notice goes away on the same card (one
/// question, not two), and the answer given then is the retry's result.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_that_reattaches_takes_the_notice_away() {
    let s = setup().await;
    let (page_url, mcp_url) = (s.web.url().to_owned(), s.mcp_url.clone());
    let (seen, out) = tokio::task::spawn_blocking(move || {
        let mut page = browser("detached-reattach", &page_url);
        // The page is open before the call starts, so it sees the card before the timeout.
        page.expect("STEP ready");
        let mut client = sdk_client(&mcp_url);
        page.expect("STEP shown");
        client.expect("TIMED_OUT");
        page.expect("STEP notice");
        client.write("retry");
        page.expect("STEP reattached");
        page.write("GO");
        (page.json("RESULT "), client.json(""))
    })
    .await
    .unwrap();
    assert_notice(&seen);
    assert_eq!(seen["cardsAfterRetry"], 1, "{seen}");
    assert_eq!(
        seen["closed"], "Answer sent. The agent carries on.",
        "{seen}"
    );
    assert_eq!(out["retry"]["content"][0]["text"], NO, "{out}");
    assert_eq!(s.web.state().pending(), 0);
}
