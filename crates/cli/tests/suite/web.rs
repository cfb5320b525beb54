//! `ask-user ask --via web` and `--via terminal,web` end to end: the real binary, the page in
//! real headless Chromium (the scenarios of `crates/web/tests/browser/scenarios.cjs`), and for
//! the race the terminal in a real pseudo-terminal (tmux).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout};

use ask_user_test_support::{hermetic_command, spawn_with_input};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

use super::support::{BIN, Pane, repo_file};

const DB: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)","description":"Runs in production already."},{"label":"SQLite","description":"One file."}]}]}"#;

/// A browser scenario from the web crate (`node scenarios.cjs NAME URL`), driven line by line.
struct Browser {
    child: Child,
    stdout: BufReader<ChildStdout>,
    /// Chromium's private home.
    _home: TempDir,
}

impl Browser {
    fn start(scenario: &str, url: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let mut child = ask_user_test_support::spawn_piped(
            hermetic_command("node", home.path())
                .arg(repo_file("crates/web/tests/browser/scenarios.cjs"))
                .arg(scenario)
                .arg(url)
                .env(
                    "PLAYWRIGHT_CORE",
                    repo_file("tools/node/node_modules/playwright-core"),
                ),
        );
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdout,
            _home: home,
        }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        if line.is_empty() {
            let mut stderr = String::new();
            self.child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            panic!("browser scenario ended early: {stderr}");
        }
        line.trim_end().to_owned()
    }

    fn step(&mut self, name: &str) {
        assert_eq!(self.line(), format!("STEP {name}"));
    }

    fn result(mut self) -> serde_json::Value {
        let line = self.line();
        let json = line
            .strip_prefix("RESULT ")
            .unwrap_or_else(|| panic!("{line}"));
        let value = serde_json::from_str(json).unwrap();
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
        value
    }
}

/// An `ask-user` started by a test and the private home it runs in (removed after it).
struct Asker {
    child: Child,
    _home: TempDir,
}

impl Asker {
    /// Starts `ask-user ask ARGS` in a private home without a controlling terminal, with a
    /// memory store (durable asks are tested in durable.rs) and `env`, DB on stdin.
    fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let home = tempfile::tempdir().unwrap();
        let child = spawn_with_input(
            hermetic_command("setsid", home.path())
                .arg("--wait")
                .arg(BIN)
                .arg("ask")
                .args(args)
                .env("ASK_USER_STORE", "memory")
                .envs(env.iter().copied()),
            DB.as_bytes(),
        );
        Self { child, _home: home }
    }
}

/// The page's URL, the first line `--print-url` writes on the child's stderr (the rest stays
/// unread on it).
fn printed_url(child: &mut Child) -> String {
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line
        .strip_prefix("ask-user: answer at ")
        .unwrap_or_else(|| panic!("the URL on stderr: {line:?}"))
        .trim_end()
        .to_owned();
    child.stderr = Some(stderr.into_inner());
    url
}

/// Starts `ask-user ask --print-url ARGS` without a controlling terminal, DB on stdin;
/// returns the child and the URL it printed on stderr (only because of `--print-url`).
fn spawn_web(args: &[&str]) -> (Asker, String) {
    let mut asker = Asker::start(&[&["--print-url"], args].concat(), &[]);
    let url = printed_url(&mut asker.child);
    (asker, url)
}

fn output(asker: Asker) -> (i32, String, String) {
    let out = asker.child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn via_web_answers_from_the_page_and_prints_only_the_answer() {
    let (child, url) = spawn_web(&["--via", "web"]);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let seen = Browser::start("single", &url).result();
    assert_eq!(seen["closed"], "Answer sent. The agent carries on.");
    assert_eq!(
        output(child),
        (
            0,
            r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#.to_owned(),
            String::new()
        )
    );
}

#[test]
fn via_web_dismissed_on_the_page_exits_4() {
    let (child, url) = spawn_web(&["--via", "web"]);
    Browser::start("dismiss", &url).result();
    let (status, stdout, _) = output(child);
    assert_eq!(
        (status, stdout.as_str()),
        (4, ask_user_core::DISMISSED_TEXT)
    );
}

#[test]
fn web_addr_sets_the_listening_address_and_a_used_one_is_a_usage_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let run = super::support::run(
        &[
            "ask",
            "--via",
            "web",
            "--web-addr",
            &format!("127.0.0.1:{port}"),
        ],
        DB,
    );
    assert_eq!(run.status, 2);
    assert!(
        run.stderr.starts_with(&format!(
            "ask-user: --via web: cannot listen on 127.0.0.1:{port}: "
        )),
        "{}",
        run.stderr
    );
    drop(taken);
    let (mut child, url) = spawn_web(&["--via", "web", "--web-addr", &format!("127.0.0.1:{port}")]);
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{port}/")),
        "{url}"
    );
    child.child.kill().unwrap();
    let _ = child.child.wait();

    let run = super::support::run(&["ask", "--via", "web", "--web-addr", "nowhere"], DB);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr
            .contains("invalid value 'nowhere' for '--web-addr <ADDR>'"),
        "{}",
        run.stderr
    );
}

/// The URL as the terminal shows it; stderr must not carry it (no `--print-url`).
fn url_from(pane: &Pane) -> String {
    let screen = pane.screen();
    let url = screen
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("the URL on the terminal:\n{screen}"))
        .to_owned();
    let err = pane.file("err.txt").unwrap_or_default();
    assert!(!err.contains("http://"), "no URL on stderr: {err:?}");
    url
}

#[test]
fn terminal_and_web_race_the_page_answers_and_the_terminal_withdraws() {
    let pane = Pane::ask(&["--via", "terminal,web"], DB);
    let screen = pane.wait_text("Type your own answer");
    let url = url_from(&pane);
    assert!(
        screen.contains("Answer in a browser on this machine"),
        "{screen}"
    );
    Browser::start("single", &url).result();
    pane.finished_with(0, r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#);
    let screen = pane.screen();
    assert!(
        !screen.contains("Type your own answer"),
        "withdrawn:\n{screen}"
    );
}

#[test]
fn terminal_and_web_race_the_terminal_answers_and_the_page_withdraws() {
    let pane = Pane::ask(&["--via", "terminal,web"], DB);
    pane.wait_text("Type your own answer");
    let mut page = Browser::start("withdrawn", &url_from(&pane));
    page.step("shown");
    pane.keys(&["Enter"]);
    let seen = page.result();
    assert_eq!(seen["closed"], "Not taken here: answered in the terminal.");
    pane.finished_with(
        0,
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#,
    );
}

#[test]
fn a_lan_address_shows_a_qr_code_and_the_page_answers_over_it() {
    let pane = Pane::ask_sized(&["--via", "web", "--web-addr", "0.0.0.0:0"], DB, 100, 60);
    let screen = pane.wait_text("Scan with a phone on this network, or open in a browser:");
    let url = url_from(&pane);
    assert!(
        !url.starts_with("http://0.0.0.0"),
        "a reachable address: {url}"
    );
    assert!(screen.contains(&url), "{screen}");
    let qr_rows = screen
        .lines()
        .filter(|l| l.contains("█") && l.trim().chars().all(|c| " ▀▄█".contains(c)))
        .count();
    assert!(qr_rows > 15, "a QR code above the URL:\n{screen}");
    Browser::start("single", &url).result();
    pane.finished_with(0, r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#);
}

/// `ask --via web` without a terminal, `--print-url` or a desktop.
fn run_headless(args: &[&str], env: &[(&str, &str)]) -> Asker {
    Asker::start(args, env)
}

/// Who may answer (docs/contract.md §8): a harness that shows stderr to the model must not
/// hand it the capability URL. Without a terminal, `--print-url` or a desktop, `--via web`
/// is unavailable and says so without the URL.
#[test]
fn without_a_terminal_the_url_never_reaches_stderr() {
    let (status, stdout, stderr) = output(run_headless(&["--via", "web"], &[]));
    assert_eq!(
        (status, stdout.as_str(), stderr.as_str()),
        (
            6,
            ask_user_core::NO_PROVIDER_TEXT,
            "ask-user: --via web: no terminal to show the page's address on and no desktop browser to open it in; pass --print-url to print it on stderr\n"
        )
    );
}

/// With no terminal but a desktop, the page opens in the desktop's browser (a stand-in
/// `xdg-open` on PATH records the URL; headless Chromium then answers on it); stderr says so
/// without the URL.
#[test]
fn without_a_terminal_the_page_opens_in_the_desktop_browser() {
    let dir = tempfile::tempdir().unwrap();
    let opened = dir.path().join("opened");
    let launcher = dir.path().join("xdg-open");
    std::fs::write(
        &launcher,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" > {}.tmp && mv {0}.tmp {0}\n",
            opened.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let child = run_headless(&["--via", "web"], &[("PATH", &path), ("DISPLAY", ":99")]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let url = loop {
        if let Ok(text) = std::fs::read_to_string(&opened) {
            break text.trim_end().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the browser was never opened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    Browser::start("single", &url).result();
    let (status, stdout, stderr) = output(child);
    assert_eq!(
        (status, stdout.as_str(), stderr.as_str()),
        (
            0,
            r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#,
            "ask-user: the question is open in your browser\n"
        )
    );
}

/// The security trial re-run against the real binary: with `ulimit -n 256`
/// (soft and hard, so nothing can be raised), 300 connections that send nothing or half a
/// request do not stop the human's `GET /<key>/`, and the page still answers.
#[test]
fn three_hundred_silent_connections_do_not_lock_the_human_out() {
    use std::net::TcpStream;
    use std::time::Duration;

    // A cleared environment and a memory store: never the developer's default store.
    let home = tempfile::tempdir().unwrap();
    let child = spawn_with_input(
        hermetic_command("sh", home.path())
            .arg("-c")
            .arg("ulimit -n 256 && exec setsid --wait \"$0\" ask --print-url --via web")
            .arg(BIN)
            .env("ASK_USER_STORE", "memory"),
        DB.as_bytes(),
    );
    let mut child = Asker { child, _home: home };
    let url = printed_url(&mut child.child);
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();

    let mut flood = Vec::new();
    for i in 0..300 {
        let Ok(mut conn) = TcpStream::connect(addr) else {
            continue;
        };
        if i % 2 == 1 {
            let _ = conn.write_all(format!("GET /{path} HTTP/1.1\r\nHost: {addr}\r\n").as_bytes());
        }
        flood.push(conn);
    }
    assert!(flood.len() > 256, "the flood got in: {}", flood.len());

    let mut human = TcpStream::connect(addr).unwrap();
    human
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    human
        .write_all(
            format!("GET /{path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
    let mut page = String::new();
    human
        .read_to_string(&mut page)
        .expect("the human's GET was answered in time");
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");

    Browser::start("single", &url).result();
    drop(flood);
    let (status, stdout, _) = output(child);
    assert_eq!(
        (status, stdout.as_str()),
        (0, r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#)
    );
}
