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
        let status = Command::new("kill")
            .args(["-USR1", pid.trim()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn assert_restored(&self) {
        self.wait_for("the child to exit", |s| s.contains("DONE"));
        let stty = self.file("stty.txt").unwrap();
        let flags: Vec<&str> = stty.split_whitespace().collect();
        assert!(
            flags.contains(&"icanon") && flags.contains(&"echo"),
            "cooked mode again:\n{stty}"
        );
        assert_eq!(self.display("#{cursor_flag}"), "1", "cursor visible");
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
