//! A request the client drops without a word, and a question asked again (docs/contract.md §8
//! "No answer the human did not give to this call"): Gemini CLI's Esc abandons its `tools/call`
//! and sends no `notifications/cancelled`, so the answer the human then gives is sent to a
//! request nobody reads. That result counts as delivered, like any result sent to a request the
//! client did not cancel: the identical call after it asks the human anew, and so does the
//! identical call after an answer the model read (a model asking again on purpose).
//!
//! The client is PyPI `mcp` 2.3.0 (`tests/dropping_client.py`), which abandons a request with
//! its own `cancel_on_abandon` switched off, over stdio to the real `ask-user-mcp` binary with
//! a SQLite store the test reads. The human answers in the store, as `ask-user inbox` does (the
//! test stands in for the human at the inbox); the page keeps the question meanwhile.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::delivery::{ARGS, Fixture, NO, read_lines};
use super::support::{python, root, server_bin};

/// The Python client, driven one command at a time.
struct Dropping {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    log: std::path::PathBuf,
}

impl Dropping {
    /// The client and its server on `f`'s store.
    fn start(f: &Fixture) -> Self {
        let log = f.dir.path().join("client.log");
        let mut command = Command::new(python());
        f.hermetic(&mut command)
            .arg(root().join("crates/mcp/tests/dropping_client.py"))
            .arg(ARGS)
            .arg(server_bin())
            .args(["--via", "web", "--no-open", "--store", &f.url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = read_lines(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            lines,
            log,
        }
    }

    /// Sends `verb name` and returns the client's reply.
    fn command(&mut self, verb: &str, name: &str) -> Value {
        writeln!(self.stdin, "{verb} {name}").unwrap();
        self.stdin.flush().unwrap();
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("no reply to `{verb} {name}` ({e}); the client's stderr:\n{log}")
            });
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    /// Starts request `name` (the question becomes pending in the store).
    fn call(&mut self, name: &str) {
        assert_eq!(self.command("call", name), json!({"called": name}));
    }

    /// The text of request `name`'s result.
    fn result(&mut self, name: &str) -> String {
        let reply = self.command("result", name);
        assert_eq!(reply["isError"], false, "{reply}");
        reply["text"].as_str().unwrap().to_owned()
    }

    /// Request `name` was dropped, and the human's answer was sent to it and marked delivered.
    fn drop_and_answer(&mut self, f: &Fixture, name: &str) -> ask_user_store::AskId {
        self.call(name);
        let id = f.open_ask(None);
        assert_eq!(self.command("drop", name), json!({"dropped": name}));
        f.answer(id);
        f.wait_delivered(id);
        id
    }
}

impl Drop for Dropping {
    fn drop(&mut self) {
        // End of input ends the client, which ends its server.
        let _ = writeln!(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer sent to a dropped request counts as delivered: the identical retry is a new
/// question for the human, never that answer unseen.
#[test]
fn an_answer_sent_to_a_dropped_request_is_not_handed_to_the_identical_retry() {
    let f = Fixture::new();
    let mut client = Dropping::start(&f);
    let id = client.drop_and_answer(&f, "a");

    client.call("b");
    let again = f.open_ask(Some(id));
    assert_ne!(again, id);
    assert!(f.delivered(id));
    f.answer(again);
    assert_eq!(client.result("b"), NO);
    assert_eq!(f.asks(), 2);
}

/// The model read the answer and asks the identical question again in the same session (a
/// rollback happened in between): the human is asked anew, at once or later.
#[test]
fn the_identical_question_after_a_read_answer_asks_anew() {
    let f = Fixture::new();
    let mut client = Dropping::start(&f);
    client.call("a");
    let id = f.open_ask(None);
    f.answer(id);
    assert_eq!(client.result("a"), NO);
    f.wait_delivered(id);

    client.call("b");
    let again = f.open_ask(Some(id));
    assert_ne!(again, id);
    f.answer(again);
    assert_eq!(client.result("b"), NO);
    assert_eq!(f.asks(), 2);
}
