//! Spawned processes that cannot touch the developer's state or outlive the test.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use rustix::process::Signal;

/// Sends `signal` to process `pid` (no `kill` process spawned); whether it was delivered
/// (`false`: no such process, e.g. it ended already).
pub fn signal(pid: u32, signal: Signal) -> bool {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    pid.is_some_and(|pid| rustix::process::kill_process(pid, signal).is_ok())
}

/// Sends `signal` to every process of group `pgid` (a child started in a group of its own);
/// whether it was delivered.
pub fn signal_group(pgid: u32, signal: Signal) -> bool {
    let pid = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    pid.is_some_and(|pid| rustix::process::kill_process_group(pid, signal).is_ok())
}

/// Clears `command`'s environment down to what an `ask-user` process needs: `PATH`, and a
/// private `HOME` with `XDG_STATE_HOME`/`XDG_CONFIG_HOME` under `home` — so neither the
/// developer's default store (`~/.local/state/ask-user`), config, hub, token nor any
/// `ASK_USER_*` variable of the test's own environment reaches it. Add what the test needs
/// with `.env(…)` afterwards.
pub fn hermetic<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    command
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
}

/// `Command::new(program)` made [`hermetic`] with `home` as its private home: the one way a
/// test starts an `ask-user` process (or a wrapper of it such as `setsid`, `unshare`,
/// `faketime`, `sh -c`), or a tool that must write under a home of the test's (node driving
/// Chromium, the PyPI `mcp` client).
pub fn hermetic_command(program: impl AsRef<OsStr>, home: &Path) -> Command {
    let mut command = Command::new(program);
    hermetic(&mut command, home);
    command
}

/// The variables of the test's own environment a [`tool`] keeps: where programs are and the
/// locale (a tool may print or read UTF-8).
const TOOL_ENV: [&str; 4] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE"];

/// `Command::new(program)` for a third-party tool (bash, curl, openssl, mkfifo, chown,
/// `script`, …) with a cleared environment: only `PATH` and the locale (`LANG`, `LC_ALL`,
/// `LC_CTYPE`) of the test's own environment, no `HOME` — so no `ASK_USER_*` variable, hub,
/// token or store of the developer's reaches the tool or anything it starts. Add what the tool
/// needs with `.env(…)`; a tool that writes under its home gets one with [`hermetic_command`].
pub fn tool(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_clear();
    for name in TOOL_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    if std::env::var_os("PATH").is_none() {
        command.env("PATH", "/usr/bin:/bin");
    }
    command
}

/// Starts `command` with stdin, stdout and stderr piped, writes `input` to its stdin and
/// closes it: an `ask-user` process asked a question the way an agent asks it. The caller
/// reaps the child (or wraps it in [`Reaped`], see [`Reaped::with_input`]).
pub fn spawn_with_input(command: &mut Command, input: &[u8]) -> Child {
    let mut child = spawn_piped(command);
    child.stdin.take().unwrap().write_all(input).unwrap();
    child
}

/// Starts `command` with stdin, stdout and stderr piped; panics naming the program when it
/// cannot start.
pub fn spawn_piped(command: &mut Command) -> Child {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{:?} runs: {error}", command.get_program()))
}

/// A child killed (SIGKILL) and reaped when dropped, also when the test panics: no test
/// leaves a process behind. Derefs to the [`Child`].
#[derive(Debug)]
pub struct Reaped(pub Child);

impl Reaped {
    /// Starts `command` with stdin, stdout and stderr piped, writes `input` to its stdin and
    /// closes it: an `ask-user` process asked a question the way an agent asks it.
    pub fn with_input(command: &mut Command, input: &[u8]) -> Reaped {
        Reaped(spawn_with_input(command, input))
    }

    /// Waits, at most `within`, for the child to end, reading what is left of its stdout and
    /// stderr meanwhile (a child that fills a pipe is never stuck on it): its exit code (-1 when
    /// a signal ended it), stdout and stderr. A stream taken or not piped reads as empty.
    ///
    /// # Panics
    /// When the child has not ended within `within` (it is then killed, as on every drop).
    pub fn finish(mut self, within: Duration) -> (i32, String, String) {
        fn drain(stream: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                if let Some(mut stream) = stream {
                    let _ = stream.read_to_end(&mut text);
                }
                String::from_utf8_lossy(&text).into_owned()
            })
        }
        let out = drain(self.0.stdout.take());
        let err = drain(self.0.stderr.take());
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the child did not end within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        (
            status.code().unwrap_or(-1),
            out.join().unwrap(),
            err.join().unwrap(),
        )
    }
}

impl std::ops::Deref for Reaped {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
