//! Running the binary: without a controlling terminal (`setsid`), or in a tmux pane.

use std::path::{Path, PathBuf};
use std::process::Output;

use ask_user_test_support::TmuxPane;

/// The `ask-user` binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_ask-user");

/// A file of the repository (e.g. `examples/deploy.json`).
pub(crate) fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// What one run printed and how it exited.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) status: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `ask-user ARGS` in a new session without a controlling terminal (so `/dev/tty`
/// cannot open, wherever the tests run), with `stdin` piped in.
pub(crate) fn run(args: &[&str], stdin: &str) -> Run {
    run_env(args, stdin, &[])
}

/// [`run`] with extra environment variables, on top of a hermetic environment (a private
/// home, nothing of the test's own environment: no `ASK_USER_*`).
pub(crate) fn run_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    use std::io::Write;
    let home = tempfile::tempdir().unwrap();
    let mut child = ask_user_test_support::spawn_piped(
        ask_user_test_support::hermetic_command("setsid", home.path())
            .arg("--wait")
            .arg(BIN)
            .args(args)
            // Durable asks are tested in durable.rs with their own files; elsewhere a memory store
            // keeps runs apart and the user's state directory untouched.
            .env("ASK_USER_STORE", "memory")
            .envs(env.iter().copied()),
    );
    // A run that fails before reading its input (a usage error) closes the pipe early.
    match child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => panic!("stdin: {error}"),
        _ => {}
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        status: status.code().expect("exited, not killed"),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

/// One `ask-user` run in a tmux pane of its own (a private tmux server per test); every
/// [`TmuxPane`] method (keys, screen, waits, files) works on it.
///
/// The pane runs a script: it prints `MARKER`, runs `ask-user ARGS` with stdout and
/// stderr to files (stdin from a pipe, or the file given), records the exit status and
/// `stty -a`, prints `DONE`, then stays open so the screen can still be read.
pub(crate) struct Pane(TmuxPane);

impl std::ops::Deref for Pane {
    type Target = TmuxPane;

    fn deref(&self) -> &TmuxPane {
        &self.0
    }
}

impl Pane {
    /// Starts `ask-user ARGS` in an 80×24 pane, the question JSON piped to its stdin.
    pub(crate) fn ask(args: &[&str], question: &str) -> Self {
        Self::ask_sized(args, question, 80, 24)
    }

    /// [`Pane::ask`], but `ask-user` starts only when [`Pane::open_gate`] is called, so keys
    /// can be typed before the question appears.
    pub(crate) fn ask_gated(args: &[&str], question: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let made = ask_user_test_support::tool("mkfifo")
            .arg(dir.path().join("gate"))
            .status()
            .unwrap();
        assert!(made.success());
        Self::ask_in(dir, args, question, 80, 24)
    }

    /// [`Pane::ask`], run as a background job of a shell with job control (`set -m; … &`).
    pub(crate) fn ask_in_background(args: &[&str], question: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("background"), "").unwrap();
        Self::ask_in(dir, args, question, 80, 24)
    }

    /// Lets a gated `ask-user` start.
    pub(crate) fn open_gate(&self) {
        use std::io::Write;
        let mut gate = std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir().join("gate"))
            .unwrap();
        gate.write_all(b"go\n").unwrap();
    }

    /// [`Pane::ask`] in a pane of `width`×`height`.
    pub(crate) fn ask_sized(args: &[&str], question: &str, width: u16, height: u16) -> Self {
        Self::ask_in(tempfile::tempdir().unwrap(), args, question, width, height)
    }

    fn ask_in(
        dir: tempfile::TempDir,
        args: &[&str],
        question: &str,
        width: u16,
        height: u16,
    ) -> Self {
        std::fs::write(dir.path().join("question.json"), question).unwrap();
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        let script = format!(
            r#"#!/bin/sh
cd '{dir}'
export ASK_USER_STORE="${{ASK_USER_STORE:-memory}}"
echo MARKER
if [ -p gate ]; then read -r _ < gate; fi
if [ -e background ]; then
  set -m
  cat question.json | sh -c 'echo $$ > pid.txt; exec "$0" "$@"' '{bin}' ask {args} > out.txt 2> err.txt &
  wait $!
else
  cat question.json | sh -c 'echo $$ > pid.txt; exec "$0" "$@"' '{bin}' ask {args} > out.txt 2> err.txt
fi
echo $? > rc.tmp && mv rc.tmp rc.txt
stty -a > stty.txt
echo DONE
exec sleep 600
"#,
            dir = dir.path().display(),
            bin = BIN,
            args = quoted.join(" "),
        );
        Self(TmuxPane::start(dir, &script, width, height, "err.txt"))
    }

    /// Waits for `ask-user` to exit; returns its status, stdout and stderr.
    pub(crate) fn finished(&self) -> Run {
        self.wait_for("ask-user to exit", |_| self.file("rc.txt").is_some());
        self.wait_text("DONE");
        Run {
            status: self.file("rc.txt").unwrap().trim().parse().unwrap(),
            stdout: self.file("out.txt").unwrap(),
            stderr: self.file("err.txt").unwrap(),
        }
    }

    /// Sends `signal` to the running `ask-user`; asserts it was delivered.
    pub(crate) fn signal(&self, signal: ask_user_test_support::Signal) {
        assert!(ask_user_test_support::signal(
            self.pid().parse().unwrap(),
            signal
        ));
    }

    /// [`Pane::finished`], asserting `ask-user` exited with `status` and printed exactly
    /// `stdout`.
    pub(crate) fn finished_with(&self, status: i32, stdout: &str) -> Run {
        let run = self.finished();
        assert_eq!(
            (run.status, run.stdout.as_str()),
            (status, stdout),
            "stderr: {}",
            run.stderr
        );
        run
    }

    /// The pid of the running `ask-user`.
    pub(crate) fn pid(&self) -> String {
        self.wait_for("the pid file", |_| {
            self.file("pid.txt").is_some_and(|p| p.ends_with('\n'))
        });
        self.file("pid.txt").unwrap().trim().to_owned()
    }
}
