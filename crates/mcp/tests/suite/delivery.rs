//! "Delivered" on the wire (docs/contract.md §8): a result counts as delivered when it is sent
//! for a request that was not cancelled. Driven through the real `ask-user-mcp` binary over
//! stdio with raw JSON-RPC lines (so the test decides the exact order of the messages, which
//! no SDK client lets it do), with a SQLite store the test reads.
//!
//! The human answers in the store, as `ask-user inbox` does (the test stands in for the
//! human at the inbox); the page keeps the question meanwhile (`--via web --no-open`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ask_user_store::{AskId, Outcome, Responder, Store, Timestamp};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::server_bin;

pub(super) const ARGS: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#;

pub(super) const NO: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;

/// The server over its stdin/stdout, one JSON-RPC message per line.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    /// The server's stdout lines, read by a thread (so a test can watch the store meanwhile).
    lines: mpsc::Receiver<String>,
}

impl Raw {
    /// The server on `f`'s store, in an environment of its own (no inherited `ASK_USER_*`).
    fn start(f: &Fixture) -> Self {
        Self::start_with(f, &[])
    }

    /// [`Raw::start`] with extra environment variables (test knobs).
    fn start_with(f: &Fixture, env: &[(&str, &str)]) -> Self {
        Self::start_full(f, &["--via", "web", "--no-open"], env)
    }

    /// The server with `args` before its `--store`, and extra environment variables.
    fn start_full(f: &Fixture, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = f
            .hermetic(Command::new(server_bin()).args(args))
            .args(["--store", &f.url])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = read_lines(child.stdout.take().unwrap());
        let mut raw = Self {
            child,
            stdin,
            lines,
        };
        raw.send(
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"delivery-test","version":"0"}}}),
        );
        assert_eq!(raw.receive()["id"], 1);
        raw.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        raw
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a message from the server");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn call(&mut self, id: u64) {
        let arguments: Value = serde_json::from_str(ARGS).unwrap();
        self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"ask_user_question","arguments":arguments}}));
    }

    /// The result of request `id` (progress and other notifications skipped).
    fn result(&mut self, id: u64) -> Value {
        self.result_unless(id, || None)
    }

    /// The result of request `id`; panics as soon as `wrong` says why while waiting.
    fn result_unless(&mut self, id: u64, wrong: impl Fn() -> Option<String>) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.lines.recv_timeout(Duration::from_millis(20)) {
                Ok(line) => {
                    let message: Value =
                        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
                    if message["id"] == id {
                        return message;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Some(why) = wrong() {
                        panic!("{why}");
                    }
                    assert!(Instant::now() < deadline, "no result for request {id}");
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the server exited"),
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) struct Fixture {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) store: Store,
    pub(super) url: String,
    pub(super) dir: tempfile::TempDir,
}

/// The lines `stdout` prints, read on a thread of their own as they come.
pub(super) fn read_lines(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let stdout = BufReader::new(stdout);
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Fixture {
    /// `command` with a cleared environment and a home of its own in the fixture's folder.
    pub(super) fn hermetic<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        ask_user_test_support::hermetic(command, &home)
    }

    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let store = runtime.block_on(Store::open(&url)).unwrap();
        Self {
            runtime,
            store,
            url,
            dir,
        }
    }

    /// The one open ask, once there is one other than `not` (a generous deadline only turns
    /// a hang into a failure).
    pub(super) fn open_ask(&self, not: Option<AskId>) -> AskId {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let open = self.runtime.block_on(self.store.list_open()).unwrap();
            if let [rec] = &open[..]
                && Some(rec.id) != not
            {
                return rec.id;
            }
            assert!(Instant::now() < deadline, "no open ask: {open:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The human answers "No" (at the inbox).
    pub(super) fn answer(&self, id: AskId) {
        let answer = json!({"answers":[{"id":"go","selected":["No"]}]});
        let by = Responder {
            answerer: "the inbox".to_owned(),
            ..Responder::default()
        };
        self.runtime
            .block_on(self.store.record_outcome(
                id,
                &Outcome::Answered { answer, by },
                Timestamp::now(),
            ))
            .unwrap();
    }

    pub(super) fn delivered(&self, id: AskId) -> bool {
        self.runtime
            .block_on(self.store.get(id))
            .unwrap()
            .delivered_at
            .is_some()
    }

    /// Waits until ask `id` is marked delivered (the transport marks it once the result is
    /// written, so just after the client read it; a generous deadline only turns a hang into
    /// a failure).
    pub(super) fn wait_delivered(&self, id: AskId) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.delivered(id) {
            assert!(Instant::now() < deadline, "never marked delivered");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(super) fn asks(&self) -> usize {
        self.runtime
            .block_on(self.store.history(ask_user_store::HistoryPage {
                after: None,
                limit: 100,
            }))
            .unwrap()
            .len()
    }
}

pub(super) fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The client's `notifications/cancelled` crosses our result on the wire: it cancelled the
/// request before it read the result, so it drops it. The delivery is taken back, and the
/// same call retried gets the same answer at once; no second question is asked.
#[test]
fn a_cancel_that_crosses_the_result_leaves_the_answer_for_the_retry() {
    let f = Fixture::new();
    let mut server = Raw::start(&f);
    server.call(2);
    let id = f.open_ask(None);
    f.answer(id);
    let first = server.result(2);
    assert_eq!(text(&first), NO, "{first}");
    // The result was sent for a live request: delivered (once written), for now.
    f.wait_delivered(id);
    server.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":2,"reason":"timed out"}}));
    server.call(3);
    let retry = server.result_unless(3, || {
        let open = f.runtime.block_on(f.store.list_open()).unwrap();
        (!open.is_empty()).then(|| format!("the retry asked again: {open:?}"))
    });
    assert_eq!(text(&retry), NO, "{retry}");
    assert_eq!(f.asks(), 1, "no second ask");
    assert!(
        f.runtime.block_on(f.store.list_open()).unwrap().is_empty(),
        "no question shown"
    );
    // The retry's result went to a live request: delivered now.
    f.wait_delivered(id);
}

/// The server dies between the answer and its result (the failpoint `before-result` aborts
/// right before a `tools/call` result is written, as `kill -9` there would): the model read
/// nothing, so nothing is marked delivered, and the same call on a new server gets the answer
/// at once with no second question (the mark used to come before the write).
#[test]
fn a_server_killed_before_its_result_is_written_leaves_the_answer_for_the_retry() {
    let f = Fixture::new();
    let mut server = Raw::start_with(&f, &[("ASK_USER_TEST_FAILPOINT", "before-result")]);
    server.call(2);
    let id = f.open_ask(None);
    f.answer(id);
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the server never reached the failpoint"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !f.delivered(id),
        "marked delivered, but no result was written"
    );
    let mut retry = Raw::start(&f);
    retry.call(2);
    assert_eq!(text(&retry.result(2)), NO);
    assert_eq!(f.asks(), 1);
    f.wait_delivered(id);
}

/// Without a cancellation the result was delivered: the same call right after is a new
/// question (never the earlier answer by identical content). A cancellation for a request
/// nobody knows changes nothing.
#[test]
fn without_a_cancel_the_same_call_asks_anew() {
    let f = Fixture::new();
    let mut server = Raw::start(&f);
    server.call(2);
    let id = f.open_ask(None);
    f.answer(id);
    assert_eq!(text(&server.result(2)), NO);
    server.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":99}}));
    server.call(3);
    let again = f.open_ask(Some(id));
    assert_ne!(again, id);
    // Marked once written (just after the client read it), and it stays so.
    f.wait_delivered(id);
    f.answer(again);
    assert_eq!(text(&server.result(3)), NO);
    assert!(f.delivered(id), "the first answer stays delivered");
    assert_eq!(f.asks(), 2);
}

/// `--via inbox`: the server keeps a store, so the question waits there for `ask-user inbox`
/// and the answer recorded there is the call's result. It was refused with "this host keeps
/// no store".
#[test]
fn via_inbox_waits_in_the_store_for_the_inbox_s_answer() {
    let f = Fixture::new();
    let mut server = Raw::start_full(&f, &["--via", "inbox", "--no-elicitation"], &[]);
    server.call(2);
    let id = f.open_ask(None);
    f.answer(id);
    assert_eq!(text(&server.result(2)), NO);
    f.wait_delivered(id);
}
