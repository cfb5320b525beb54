//! The answerer as a library in a real terminal: panic and cancellation restore the terminal.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_core::{
    AskError, AskUserQuestionRequest, CancellationToken, FirstAnswer, Limits, UserInteraction,
    decode,
};
use ask_user_terminal::Terminal;

const CHILD: &str = "ASK_USER_TERMINAL_CHILD";
const QUESTION: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#;
const DEADLINE: Duration = Duration::from_secs(20);

fn request() -> AskUserQuestionRequest {
    decode(QUESTION, &Limits::default()).unwrap().request
}

/// The child side: asks in the pane; on SIGUSR1 it panics (`panic`) or fires the token
/// (`cancel`) while the question is on screen. Prints the result, then `CHILD-DONE`.
#[test]
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

struct Pane {
    dir: tempfile::TempDir,
    socket: PathBuf,
}

impl Pane {
    fn child(mode: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let exe = std::env::current_exe().unwrap();
        let script = format!(
            "#!/bin/sh\necho MARKER\necho $$ > '{dir}/pid.txt'\nRUST_BACKTRACE=0 {CHILD}={mode} exec '{exe}' --exact suite::pty::child --nocapture --test-threads 1 > '{dir}/out.txt'\n",
            dir = dir.path().display(),
            exe = exe.display(),
        );
        let wrapper = format!(
            "#!/bin/sh\nsh '{dir}/child.sh'\necho $? > '{dir}/rc.tmp' && mv '{dir}/rc.tmp' '{dir}/rc.txt'\nstty -a > '{dir}/stty.txt'\necho DONE\nexec sleep 600\n",
            dir = dir.path().display()
        );
        std::fs::write(dir.path().join("child.sh"), script).unwrap();
        std::fs::write(dir.path().join("run.sh"), wrapper).unwrap();
        let socket = dir.path().join("tmux.sock");
        let pane = Self { dir, socket };
        let run = format!("sh '{}'", pane.dir.path().join("run.sh").display());
        pane.tmux(&[
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "24",
            "-s",
            "main",
            &run,
        ]);
        pane
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux is installed (scripts/setup)");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "main"])
    }

    fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join(name)).ok()
    }

    fn wait_for(&self, what: &str, condition: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if condition(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "waited for {what}; screen:\n{screen}\nout: {:?}",
                self.file("out.txt")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
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
        let cursor = self.tmux(&["display-message", "-p", "-t", "main", "#{cursor_flag}"]);
        assert_eq!(cursor.trim(), "1", "cursor visible");
        let screen = self.screen();
        assert!(
            !screen.contains("Type your own answer"),
            "question cleared:\n{screen}"
        );
        assert!(screen.contains("MARKER"), "{screen}");
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
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
