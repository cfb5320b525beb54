//! The answerer as a library in a real terminal: panic and cancellation restore the terminal.

use std::process::Command;
use std::sync::Arc;

use ask_user_core::{
    AskError, AskUserQuestionRequest, CancellationToken, FirstAnswer, Limits, UserInteraction,
    decode,
};
use ask_user_terminal::Terminal;
use ask_user_test_support::TmuxPane;

const CHILD: &str = "ASK_USER_TERMINAL_CHILD";
const QUESTION: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#;

fn request() -> AskUserQuestionRequest {
    decode(QUESTION, &Limits::default()).unwrap().request
}

/// The child side: asks in the pane; on SIGUSR1 it panics (`panic`) or fires the token
/// (`cancel`) while the question is on screen. Prints the result, then `CHILD-DONE`.
///
/// Not a test of its own: the pty tests below run it (`--ignored --exact`) inside a tmux pane,
/// where it asserts the cancelled ask; a plain run lists it as ignored instead of passing it
/// without checking anything.
#[test]
#[ignore = "the child side of the pty tests, which run it in a tmux pane"]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let request = request();
    let result = runtime.block_on(async {
        let mut usr1 =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).unwrap();
        let cancel = CancellationToken::new();
        let terminal: Arc<dyn UserInteraction> = Arc::new(Terminal::new());
        let fan_out = FirstAnswer::new(vec![terminal]);
        let asking = fan_out.ask(&request, cancel.clone());
        tokio::pin!(asking);
        tokio::select! {
            result = &mut asking => result,
            _ = usr1.recv() => {
                if mode == "panic" {
                    panic!("boom while asking");
                }
                cancel.cancel();
                asking.await
            }
        }
    });
    println!("CHILD-RESULT {result:?}");
    assert_eq!(result, Err(AskError::Cancelled));
}

/// The child in a tmux pane; every [`TmuxPane`] method works on it.
struct Pane(TmuxPane);

impl std::ops::Deref for Pane {
    type Target = TmuxPane;

    fn deref(&self) -> &TmuxPane {
        &self.0
    }
}

impl Pane {
    fn child(mode: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let exe = std::env::current_exe().unwrap();
        let script = format!(
            "#!/bin/sh\necho MARKER\necho $$ > '{dir}/pid.txt'\nRUST_BACKTRACE=0 {CHILD}={mode} exec '{exe}' --ignored --exact suite::pty::child --nocapture --test-threads 1 > '{dir}/out.txt'\n",
            dir = dir.path().display(),
            exe = exe.display(),
        );
        let wrapper = format!(
            "#!/bin/sh\nsh '{dir}/child.sh'\necho $? > '{dir}/rc.tmp' && mv '{dir}/rc.tmp' '{dir}/rc.txt'\nstty -a > '{dir}/stty.txt'\necho DONE\nexec sleep 600\n",
            dir = dir.path().display()
        );
        std::fs::write(dir.path().join("child.sh"), script).unwrap();
        Self(TmuxPane::start(dir, &wrapper, 80, 24, "out.txt"))
    }

    /// Sends SIGUSR1 to the child (the pid the script recorded is the exec'd test binary).
    fn signal_child(&self) {
        let pid = self.file("pid.txt").unwrap();
        assert!(ask_user_test_support::signal(
            pid.trim().parse().unwrap(),
            ask_user_test_support::Signal::USR1
        ));
    }

    fn assert_restored(&self) {
        self.wait_for("the child to exit", |s| s.contains("DONE"));
        self.assert_cooked_with_cursor();
        let screen = self.screen();
        assert!(
            !screen.contains("Type your own answer"),
            "question cleared:\n{screen}"
        );
        assert!(screen.contains("MARKER"), "{screen}");
    }
}

#[test]
fn a_panic_while_asking_restores_the_terminal() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let pane = Pane::child("panic");
    pane.wait_for("the question", |s| s.contains("Type your own answer"));
    pane.signal_child();
    pane.assert_restored();
    let screen = pane.screen();
    assert!(
        screen.contains("MARKER") && screen.contains("boom while asking"),
        "the panic message (stderr) is readable where the question was:\n{screen}"
    );
    assert_ne!(pane.file("rc.txt").unwrap().trim(), "0");
}

#[test]
fn the_token_firing_withdraws_the_question() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let pane = Pane::child("cancel");
    pane.wait_for("the question", |s| s.contains("Type your own answer"));
    pane.signal_child();
    pane.assert_restored();
    let out = pane.file("out.txt").unwrap();
    assert!(out.contains("CHILD-RESULT Err(Cancelled)"), "{out}");
    assert_eq!(pane.file("rc.txt").unwrap().trim(), "0");
}

const SCENARIO: &str = "ASK_USER_TERMINAL_SCENARIO";

/// The child side of the scenario tests below (not the `child` above): `timed` asks with a
/// 90 s budget shown; `plain` asks (the pane sets `TERM=dumb`); `pair` runs two asks at once
/// in one process, as an MCP server with several sessions does. Prints each result.
#[test]
fn scenario_child() {
    let Ok(scenario) = std::env::var(SCENARIO) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = request();
    let second = decode(
        r#"{"questions":[{"id":"db","question":"Which database?","options":["SQLite","Postgres (Recommended)"]}]}"#,
        &Limits::default(),
    )
    .unwrap()
    .request;
    runtime.block_on(async {
        match scenario.as_str() {
            "timed" => {
                let terminal =
                    Terminal::new().with_timeout(Some(std::time::Duration::from_secs(90)));
                let result = terminal.ask(&first, CancellationToken::new()).await;
                println!("CHILD-RESULT {result:?}");
            }
            "plain" => {
                let result = Terminal::new().ask(&first, CancellationToken::new()).await;
                println!("CHILD-RESULT {result:?}");
            }
            "runtime" => {
                // The ask and a task beside it on one current-thread runtime, the terminal's
                // cursor query held in flight for 5 s (a terminal that never answers it): the
                // task writes its mark on the terminal at once unless the ask blocks the thread
                // with that I/O, in which case the mark comes only after the question is drawn.
                let cancel = CancellationToken::new();
                let terminal = Terminal::new();
                let ask = terminal.ask(&first, cancel.clone());
                let beside = async {
                    let mut tty = std::fs::OpenOptions::new()
                        .write(true)
                        .open("/dev/tty")
                        .unwrap();
                    std::io::Write::write_all(&mut tty, b"BESIDE-RAN\r\n").unwrap();
                    cancel.cancel();
                };
                let (result, ()) = tokio::join!(ask, beside);
                println!("CHILD-RESULT {result:?}");
            }
            _ => {
                let one = Terminal::new();
                let two = Terminal::new();
                let (a, b) = tokio::join!(one.ask(&first, CancellationToken::new()), async {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    two.ask(&second, CancellationToken::new()).await
                });
                println!("CHILD-RESULT {a:?}");
                println!("CHILD-RESULT {b:?}");
            }
        }
    });
}

/// A scenario child in an 80×24 pane; `env` is put before the command.
fn scenario(name: &str, env: &str) -> TmuxPane {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "#!/bin/sh\necho MARKER\n{env} RUST_BACKTRACE=0 {SCENARIO}={name} '{exe}' --exact suite::pty::scenario_child --nocapture --test-threads 1 > '{dir}/out.txt'\necho DONE\nexec sleep 600\n",
        dir = dir.path().display(),
        exe = exe.display(),
    );
    TmuxPane::start(dir, &script, 80, 24, "out.txt")
}

fn in_scenario() -> bool {
    std::env::var(SCENARIO).is_ok() || std::env::var(CHILD).is_ok()
}

#[test]
fn a_time_budget_shows_a_countdown() {
    // No countdown was shown.
    if in_scenario() {
        return;
    }
    let pane = scenario("timed", "");
    let first = pane.wait_for("a countdown", |s| s.contains(" left ·"));
    let shown = |s: &str| {
        s.split(" left")
            .next()
            .and_then(|head| head.split_whitespace().next_back())
            .map(str::to_owned)
    };
    let before = shown(&first).unwrap();
    assert!(before.starts_with("1:"), "{first}");
    pane.wait_for("the countdown to tick", |s| {
        shown(s).is_some_and(|t| t != before)
    });
    pane.keys(&["Enter"]);
    pane.wait_for("the answer", |_| {
        pane.file("out.txt")
            .is_some_and(|o| o.contains("CHILD-RESULT Ok"))
    });
}

#[test]
fn two_asks_at_once_take_turns() {
    // Both asks took raw mode and the keys at the same time.
    if in_scenario() {
        return;
    }
    let pane = scenario("pair", "");
    let screen = pane.wait_text("Deploy now?");
    assert!(
        !screen.contains("Which database?"),
        "one at a time:\n{screen}"
    );
    pane.keys(&["Enter"]);
    let screen = pane.wait_text("Which database?");
    assert!(
        screen.contains("✔ Deploy now? → Yes (Recommended)"),
        "{screen}"
    );
    pane.keys(&["Up", "Enter"]);
    let out = pane.wait_for("both answers", |_| {
        pane.file("out.txt")
            .is_some_and(|o| o.matches("CHILD-RESULT Ok").count() == 2)
    });
    let _ = out;
    let out = pane.file("out.txt").unwrap();
    assert!(
        out.contains("Yes (Recommended)") && out.contains("SQLite"),
        "{out}"
    );
    let stty_ok = pane.wait_text("DONE");
    assert!(stty_ok.contains("✔ Which database? → SQLite"), "{stty_ok}");
}

#[test]
fn term_dumb_gets_plain_lines_without_escapes() {
    // TERM=dumb got colour escapes and cursor moves.
    if in_scenario() {
        return;
    }
    let pane = scenario("plain", "TERM=dumb");
    pane.wait_text("Type a number, or your own answer");
    let with_attributes = pane.tmux(&["capture-pane", "-p", "-e", "-t", "main"]);
    assert!(
        !with_attributes.contains('\u{1b}'),
        "no colour or attribute: {with_attributes:?}"
    );
    let screen = pane.screen();
    assert!(screen.contains("*  1. Yes (Recommended)"), "{screen}");
    pane.type_text("2 more days");
    pane.keys(&["Enter"]);
    pane.wait_for("the answer", |_| {
        pane.file("out.txt")
            .is_some_and(|o| o.contains("CHILD-RESULT Ok"))
    });
    let out = pane.file("out.txt").unwrap();
    assert!(out.contains(r#"custom: Some("2 more days")"#), "{out}");
    assert!(pane.screen().contains("✔ Deploy now? → 2 more days"));
}

#[test]
fn terminal_io_never_blocks_the_callers_runtime() {
    // The terminal's synchronous tty I/O ran on the caller's async thread. `script` gives the
    // child a terminal that never answers the cursor-position query, and the knob holds that
    // query 5 s; a task beside the ask on the same current-thread runtime writes its mark on
    // the terminal and cancels the ask. `script`'s record of the terminal shows the order: the
    // mark before anything of the question (drawn only once the query ended). Proven by order,
    // not by a time limit.
    if in_scenario() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let command = format!(
        "RUST_BACKTRACE=0 {knob}=5000 {SCENARIO}=runtime '{exe}' --exact suite::pty::scenario_child --nocapture --test-threads 1 > '{dir}/out.txt'",
        knob = ask_user_terminal::CURSOR_QUERY_TEST_ENV,
        dir = dir.path().display(),
        exe = exe.display(),
    );
    let record = dir.path().join("terminal.txt");
    let mut script = Command::new("script");
    script
        .args(["-qfec", &command])
        .arg(&record)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TERM", "xterm-256color")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null());
    let (code, _, _) = ask_user_test_support::Reaped(script.spawn().unwrap())
        .finish(ask_user_test_support::DEADLINE);
    let status_ok = code == 0;
    let out = std::fs::read_to_string(dir.path().join("out.txt")).unwrap();
    assert!(status_ok, "{out}");
    assert!(out.contains("CHILD-RESULT Err(Cancelled)"), "{out}");
    let terminal = std::fs::read_to_string(&record).unwrap();
    let mark = terminal
        .find("BESIDE-RAN")
        .unwrap_or_else(|| panic!("the task beside never ran: {terminal:?}"));
    if let Some(question) = terminal.find("Deploy now?") {
        assert!(
            mark < question,
            "the task beside ran only after the question was drawn: {terminal:?}"
        );
    }
}

#[test]
fn term_vt100_gets_the_view_without_colour() {
    // `vt100` and `linux` got 256-colour escapes.
    if in_scenario() {
        return;
    }
    let pane = scenario("plain", "TERM=vt100");
    pane.wait_text("Type your own answer");
    let with_attributes = pane.tmux(&["capture-pane", "-p", "-e", "-t", "main"]);
    assert!(
        with_attributes.contains("\u{1b}[1m") || with_attributes.contains(";1m"),
        "bold is used: {with_attributes:?}"
    );
    for colour in ["38;5;", "48;5;", "\u{1b}[36m", "\u{1b}[32m", "\u{1b}[46m"] {
        assert!(
            !with_attributes.contains(colour),
            "no colour ({colour:?}): {with_attributes:?}"
        );
    }
    pane.keys(&["Enter"]);
    pane.wait_for("the answer", |_| {
        pane.file("out.txt")
            .is_some_and(|o| o.contains("CHILD-RESULT Ok"))
    });
}
