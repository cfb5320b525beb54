//! Hardening through the real `ask-user-mcp` binary over stdio, driven with raw
//! JSON-RPC lines: the audit journal and the attention command, an unwritable journal at
//! startup, and a client that disappears while its question is pending.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use ask_user_core::Question;
use ask_user_host::{Entry, read};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::delivery::Fixture;
use super::support::server;

const ARGS: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#;

pub(super) struct Server {
    pub(super) child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The server's stderr, kept (not inherited, so a passing run prints nothing) and shown
    /// when the test fails.
    stderr: Option<std::thread::JoinHandle<String>>,
    /// The server's private HOME (its environment is cleared), kept while it runs.
    _home: tempfile::TempDir,
}

impl Server {
    /// Starts `ask-user-mcp` with `args` and completes the MCP handshake (a client without
    /// elicitation, protocol 2025-06-18).
    pub(super) fn start(args: &[&str]) -> Self {
        Self::start_env(args, &[])
    }

    /// [`Server::start`] with more environment variables.
    pub(super) fn start_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        let home = tempfile::tempdir().unwrap();
        let mut child = ask_user_test_support::spawn_piped(
            server(home.path())
                .args(args)
                .env("ASK_USER_STORE", "memory")
                .envs(env.iter().copied()),
        );
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let mut server = Self {
            child,
            stdin,
            stdout,
            stderr: Some(stderr),
            _home: home,
        };
        server.send(
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"hardening-test","version":"0"}}}),
        );
        let reply = server.receive();
        assert_eq!(reply["id"], 1, "{reply}");
        server.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        server
    }

    pub(super) fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

    pub(super) fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    pub(super) fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn call(&mut self, id: u64) {
        let arguments: Value = serde_json::from_str(ARGS).unwrap();
        self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"ask_user_question","arguments":arguments}}));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self.stderr.take().and_then(|t| t.join().ok());
        if std::thread::panicking() {
            eprintln!("server stderr:\n{}", stderr.unwrap_or_default());
        }
    }
}

/// Waits until `condition` holds (a generous deadline only turns a hang into a failure).
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The journal at `path` holds one answered call: its ask, then its outcome under the same
/// call id, `ANSWERED` with exactly `expected` (what the model read). Returns the ask's
/// questions. `what` names the case on failure.
fn assert_journaled_answer(path: &Path, expected: &str, what: &str) -> Vec<Question> {
    let lines = read(path).unwrap();
    let [
        Entry::Ask {
            call, questions, ..
        },
        Entry::Outcome {
            call: closed,
            code,
            text: logged,
            ..
        },
    ] = &lines[..]
    else {
        panic!("{what}: {lines:?}")
    };
    assert_eq!(
        (call, code.as_str(), logged.as_str()),
        (closed, "ANSWERED", expected),
        "{what}"
    );
    questions.clone()
}

/// The server's flags for asking on the web page (not opened, any free port) with the store
/// at `url`.
fn web_page_with_store(url: &str) -> [&str; 7] {
    [
        "--via",
        "web",
        "--no-open",
        "--web-addr",
        "127.0.0.1:0",
        "--store",
        url,
    ]
}

fn entries(path: &Path) -> Vec<Entry> {
    if path.exists() {
        read(path).unwrap()
    } else {
        Vec::new()
    }
}

#[test]
fn every_call_is_journaled_and_announced_before_the_client_reads_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, notified, answers) = (
        dir.path().join("journal.jsonl"),
        dir.path().join("notified.json"),
        dir.path().join("answers.json"),
    );
    std::fs::write(&answers, r#"{"answers":[{"id":"go","selected":["No"]}]}"#).unwrap();
    let notify = format!("cat > '{}.tmp' && mv '{0}.tmp' '{0}'", notified.display());
    let mut server = Server::start(&[
        "--answers",
        answers.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
        "--notify",
        &notify,
    ]);
    server.call(2);
    let reply = server.receive();
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(text, r#"{"answers":[{"id":"go","selected":["No"]}]}"#);
    // By the time the client has the result, both lines are on disk.
    let questions = assert_journaled_answer(&journal, &text, "stdio");
    assert_eq!(questions[0].id, "go");
    wait_until("the notify command got the request", || notified.exists());
    assert_eq!(
        std::fs::read_to_string(&notified).unwrap(),
        "{\"questions\":[{\"id\":\"go\",\"question\":\"Deploy now?\",\"options\":[{\"label\":\"Yes (Recommended)\"},{\"label\":\"No\"}],\"multi_select\":false}]}\n"
    );
}

#[test]
fn an_unwritable_journal_is_a_startup_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("journal.jsonl");
    let home = tempfile::tempdir().unwrap();
    let out = server(home.path())
        .args(["--via", "none", "--journal", path.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    // Our text around the OS's reason (ENOENT, as std words it).
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "ask-user-mcp: cannot open the journal file {}: {}\n",
            path.display(),
            std::io::Error::from_raw_os_error(2)
        )
    );
}

/// Logs to a pipe (a test, a log file) are plain text: no colour escapes.
#[test]
fn logs_to_a_pipe_carry_no_colour_codes() {
    let home = tempfile::tempdir().unwrap();
    let mut child = server(home.path())
        .args(["--via", "none", "--http", "127.0.0.1:0"])
        .env("ASK_USER_LOG", "info")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (lines, logged_lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut logged = String::new();
    // The endpoint is logged (info) as soon as the server listens.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !logged.contains("MCP endpoint: http://") {
        let left = deadline.saturating_duration_since(Instant::now());
        match logged_lines.recv_timeout(left) {
            Ok(line) => logged.push_str(&line),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(logged.contains(" INFO "), "{logged:?}");
    assert!(!logged.contains('\u{1b}'), "{logged:?}");
}

/// `--http` stops as the hub does: SIGTERM (a service manager's stop) drains like Ctrl-C and
/// exits 0. Before, only Ctrl-C drained; SIGTERM killed the process mid-response (exit 143).
#[test]
fn http_server_drains_on_sigterm_and_exits_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let mut command = server(home.path());
    let mut server = ask_user_test_support::Reaped(
        command
            .args(["--via", "none", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Listening (its handlers are installed before it binds): the endpoint line on stderr.
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("MCP endpoint http://") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server ended before it listened"
        );
    }
    assert!(ask_user_test_support::signal(
        server.id(),
        ask_user_test_support::Signal::TERM
    ));
    let (code, _, _) = server.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "the server's exit status on SIGTERM");
}

#[test]
fn a_client_that_disappears_has_its_pending_ask_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let mut server = Server::start(&[
        "--via",
        "web",
        "--no-open",
        "--journal",
        journal.to_str().unwrap(),
    ]);
    server.call(2);
    wait_until("the question is pending on the web page", || {
        matches!(entries(&journal)[..], [Entry::Ask { .. }])
    });
    // The client goes away: its end of stdio closes.
    drop(server.stdin.take());
    wait_until("the pending ask is cancelled", || {
        entries(&journal).len() == 2
    });
    let lines = entries(&journal);
    let Entry::Outcome { code, .. } = &lines[1] else {
        panic!("{lines:?}")
    };
    assert_eq!(code, "ASK_ABORTED");
    wait_until("the server exits", || {
        server.child.try_wait().unwrap().is_some()
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_in_both_eras_is_journaled_as_one_ask_and_one_outcome() {
    use super::support::{Target, client, text};
    for (mode, protocol) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let dir = tempfile::tempdir().unwrap();
        let (journal, notified) = (dir.path().join("j.jsonl"), dir.path().join("notified"));
        let target = Target::Stdio(vec![
            "--via".into(),
            "none".into(),
            "--journal".into(),
            journal.display().to_string(),
            "--notify".into(),
            format!("cat > '{}'", notified.display()),
        ]);
        let out = client(
            &target,
            mode,
            &["--arguments", ARGS, "--reply", r#"accept:{"go":"No"}"#],
        )
        .await;
        assert_eq!(out["protocol"], protocol);
        assert_eq!(text(&out), r#"{"answers":[{"id":"go","selected":["No"]}]}"#);
        assert_journaled_answer(&journal, text(&out), mode);
        wait_until("the notify command ran", || {
            std::fs::read_to_string(&notified).is_ok_and(|s| s.ends_with('\n'))
        });
    }
}

/// `--http` on all interfaces accepts a client that names the machine by
/// its LAN address (any IP literal), refuses other names, and follows the same
/// `HostPolicy` as the web page (the one policy both use).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_on_all_interfaces_accepts_ip_literal_hosts_like_the_page() {
    use ask_user_mcp::{AskUserServer, FOREIGN_HOST_TEXT, Routing, serve_http};
    use ask_user_serve::HostPolicy;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let bound = listener.local_addr().unwrap();
    let port = bound.port();
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(serve_http(
        AskUserServer::new(Routing::default()),
        listener,
        shutdown.clone(),
    ));
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let policy = HostPolicy::new(bound);
    let cases = [
        (format!("127.0.0.1:{port}"), true),
        (format!("localhost:{port}"), true),
        (format!("192.168.1.20:{port}"), true),
        (format!("[fe80::1]:{port}"), true),
        (format!("0.0.0.0:{port}"), true),
        (format!("rebind.example:{port}"), false),
        (format!("192.168.1.20:{}", port.wrapping_add(1)), false),
    ];
    for (host, accepted) in cases {
        assert_eq!(policy.allows(&host), accepted, "the page's policy, {host}");
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        let mut buf = [0u8; 4096];
        // Enough to see the status line and, for a refusal, its body.
        while !String::from_utf8_lossy(&reply).contains("\r\n\r\n") || !accepted {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
        }
        let reply = String::from_utf8_lossy(&reply);
        if accepted {
            assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{host}: {reply}");
        } else {
            assert!(
                reply.starts_with("HTTP/1.1 403 Forbidden\r\n"),
                "{host}: {reply}"
            );
            assert!(reply.ends_with(FOREIGN_HOST_TEXT), "{host}: {reply}");
        }
    }
    shutdown.cancel();
}

/// The standalone binary reports the registry's usage errors like `ask-user mcp` (exit 2).
#[test]
fn via_and_timeout_usage_errors_exit_2_with_the_registry_text() {
    for (args, text) in [
        (
            &["--via", "pigeon"][..],
            "ask-user-mcp: --via: unknown answerer \"pigeon\"; use one or more of: terminal, web, inbox, hub, none\n",
        ),
        (
            &["--via", "none,web"][..],
            "ask-user-mcp: --via none cannot be combined with other answerers\n",
        ),
    ] {
        let home = tempfile::tempdir().unwrap();
        let out = server(home.path())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), text, "{args:?}");
    }
    let home = tempfile::tempdir().unwrap();
    let out = server(home.path())
        .args(["--timeout", "0s"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "invalid value '0s' for '--timeout <DURATION>': the timeout must be longer than zero"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A store named with `--store` (or `ASK_USER_STORE`) that cannot be used is fatal before the
/// server serves anything: exit 2, the store's reason named (docs/contract.md §8).
#[test]
fn an_explicit_store_that_cannot_be_used_is_fatal_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    let home = tempfile::tempdir().unwrap();
    let out = server(home.path())
        .args(["--via", "none", "--store", &format!("sqlite:{path}")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "ask-user-mcp: --store sqlite:{path}: cannot use this store: store {path}: is a directory, not a store file\n"
        )
    );
    assert!(out.stdout.is_empty());
}

/// The default store that cannot be opened (a state directory that is a file): one warning,
/// then the server runs with a memory store and answers the handshake.
#[test]
fn the_default_store_unopenable_warns_once_and_the_server_runs() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("state"), "a file, not a directory").unwrap();
    let state = home.path().join("state").display().to_string();
    // The hermetic environment's XDG_STATE_HOME is `state`, the file.
    let mut child = ask_user_test_support::spawn_piped(server(home.path()).args(["--via", "none"]));
    let hello = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"t","version":"0"}}});
    writeln!(child.stdin.take().unwrap(), "{hello}").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains(r#""serverInfo""#), "{stdout}");
    ask_user_test_support::assert_default_store_warned_once(&stderr, &state);
}

/// Over stdio with a SQLite file: the client goes away (stdio closed) while its
/// question is on the web page, so the ask is detached, not withdrawn; the human answers it
/// elsewhere (the test records the outcome in the store as `ask-user inbox` does, standing in
/// for the human at the inbox); the host starts a new server process and retries the same call
/// (same client name, new session): the answer comes at once, and is then delivered.
#[test]
fn a_retry_in_a_new_server_process_gets_the_answer_given_while_detached() {
    let f = Fixture::new();
    let args = web_page_with_store(&f.url);
    let open = || f.runtime.block_on(f.store.list_open()).unwrap();

    let mut first = Server::start(&args);
    first.call(2);
    wait_until("the ask is stored", || !open().is_empty());
    drop(first.stdin.take());
    let _ = first.child.wait();
    let asks = open();
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert!(!asks[0].attached, "{asks:?}");
    let id = asks[0].id;

    f.answer(id);

    let mut second = Server::start(&args);
    second.call(2);
    let reply = second.receive();
    assert_eq!(
        reply["result"]["content"][0]["text"], r#"{"answers":[{"id":"go","selected":["No"]}]}"#,
        "{reply}"
    );
    wait_until("the answer is marked delivered", || f.delivered(id));
    assert!(open().is_empty());
}

/// A server killed (SIGKILL) while a call waits cannot detach its ask; it stops renewing the
/// ask's lease (test-only knob `ASK_USER_TEST_LEASE_MS`: 3 s), so a sweep marks the ask
/// detached, still open for the human (docs/contract.md §8 "Liveness"). While it lives, the
/// lease is renewed and the sweep leaves the ask attached.
#[test]
fn a_server_killed_while_a_call_waits_leaves_an_ask_the_sweep_marks_detached() {
    use ask_user_store::{Retention, Timestamp};
    let f = Fixture::new();
    let args = web_page_with_store(&f.url);
    let open = || f.runtime.block_on(f.store.list_open()).unwrap();
    let sweep = || {
        f.runtime
            .block_on(f.store.sweep(Timestamp::now(), Retention::default()))
            .unwrap()
    };

    let mut server = Server::start_env(&args, &[("ASK_USER_TEST_LEASE_MS", "3000")]);
    server.call(2);
    wait_until("the ask is stored", || !open().is_empty());
    std::thread::sleep(Duration::from_millis(4500));
    assert_eq!(sweep().expired, vec![], "a live server renews the lease");
    let asks = open();
    assert!(asks[0].attached, "{asks:?}");
    server.child.kill().unwrap();
    let _ = server.child.wait();
    wait_until("the lease runs out and the sweep detaches the ask", || {
        sweep().expired == vec![asks[0].id]
    });
    let after = open();
    assert_eq!((after.len(), after[0].attached), (1, false), "{after:?}");
    assert!(
        after[0].detached_at.is_some_and(|d| d <= Timestamp::now()),
        "detached as of the lease's end: {after:?}"
    );
}

/// The page's URL lets its holder answer, and a harness may show the server's stderr to the
/// model: it reaches stderr only with `--no-open` (docs/contract.md §7, §8).
#[test]
fn the_page_url_reaches_stderr_only_with_no_open() {
    for (no_open, expected) in [(false, false), (true, true)] {
        let mut args = vec!["--via", "web", "--store", "memory"];
        if no_open {
            args.push("--no-open");
        }
        let home = tempfile::tempdir().unwrap();
        let out = server(home.path())
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr
                .contains("ask-user: questions for clients without elicitation appear at http://"),
            expected,
            "--no-open {no_open}: {stderr}"
        );
        assert_eq!(
            stderr.contains("http://"),
            expected,
            "--no-open {no_open}: {stderr}"
        );
    }
}
