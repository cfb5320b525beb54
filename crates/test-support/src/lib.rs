//! # ask-user-test-support
//!
//! [`TmuxPane`]: a shell script running in a real terminal — a tmux pane on a private tmux
//! server (its own socket, no user config) — that tests type into ([`TmuxPane::keys`],
//! [`TmuxPane::type_text`], [`TmuxPane::paste`]) and read ([`TmuxPane::screen`],
//! [`TmuxPane::wait_for`], [`TmuxPane::file`]). The server is killed when the pane drops.
//! Needs `tmux` on `PATH` (`scripts/setup` installs it).
//!
//! [`hermetic`]/[`hermetic_command`], [`tool`] and [`Reaped`]: every spawned binary gets a
//! cleared environment (a private home for `ask-user`; `PATH` and the locale alone for a
//! third-party tool), and is killed when the test ends, even by a panic. [`spawn_piped`] and
//! [`spawn_with_input`]: a child with its three streams piped, fed its stdin.
//!
//! [`browser_tools`] (playwright-core and axe-core, checked present) and [`right_to_left`]: what
//! the browser tests of the hub and of the web page share.
//!
//! [`postgres`]: a throwaway Postgres cluster and fresh databases on it.
//!
//! [`FakeSmtp`]: a real SMTP server (aiosmtpd) requiring STARTTLS, on a certificate made by
//! [`self_signed`].
//!
//! `answerers` (feature `answerers`): stand-in answerers (fixed, waiting, unavailable,
//! offering through the race) for the tests of the core and of the hosts.
//!
//! `fakes` (feature `fakes`): in-process fakes of ntfy, Slack and Telegram.
#![deny(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "answerers")]
pub mod answerers;
#[cfg(feature = "fakes")]
pub mod fakes;
pub mod postgres;
mod process;
mod smtp;
pub use process::{
    Reaped, Signal, hermetic, hermetic_command, signal, signal_group, spawn_piped,
    spawn_with_input, tool,
};
pub use smtp::{FakeSmtp, self_signed};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A loopback port free a moment ago (bound, then released): for a server whose URL must be
/// known before it starts, or that is restarted on the same port. Another process may take it
/// in between; a server that cannot bind it fails loudly.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The repository's root (this crate is `crates/test-support` in it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What a browser test's node script needs, installed by `scripts/setup`: playwright-core's
/// folder (for `PLAYWRIGHT_CORE`) and axe-core's script (for `AXE_CORE`). Panics, naming
/// `scripts/setup`, when playwright-core or Debian's `/usr/bin/chromium` is missing.
pub fn browser_tools() -> (PathBuf, PathBuf) {
    let modules = repo_root().join("tools/node/node_modules");
    let playwright = modules.join("playwright-core");
    assert!(
        playwright.join("package.json").exists(),
        "playwright-core is missing at {}: run scripts/setup",
        playwright.display()
    );
    assert!(
        Path::new("/usr/bin/chromium").exists(),
        "/usr/bin/chromium is missing: run scripts/setup"
    );
    (playwright, modules.join("axe-core/axe.min.js"))
}

/// Whether `text` runs right to left under `dir="auto"`: its first letter is Hebrew, Arabic or
/// Persian.
pub fn right_to_left(text: &str) -> bool {
    text.chars().find(|c| c.is_alphabetic()).is_some_and(
        |c| matches!(c, '\u{590}'..='\u{8ff}' | '\u{fb1d}'..='\u{fdff}' | '\u{fe70}'..='\u{fefe}'),
    )
}

/// The resident set size of this process in KiB (Linux `/proc/self/status`; 0 where it cannot
/// be read): for the benches' memory figures.
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `stderr` of an `ask-user` process whose default store (under the state directory `state`)
/// cannot be opened holds exactly one warning: that one, saying the ask is kept in memory.
pub fn assert_default_store_warned_once(stderr: &str, state: &str) {
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with(&format!(
            "ask-user: warning: the default store {state}/ask-user/store.sqlite3 cannot be opened ("
        )) && warnings[0]
            .ends_with("); this ask is kept in memory only (pass --store to choose another)"),
        "{stderr}"
    );
}

/// The arguments (JSON) of a permission request taller than any screen: "Allow the agent to
/// use Bash?" over a 150-line command (`echo step N`), options "Allow once" and "Deny", for the
/// pages' "all of it was in view" tests.
pub fn tall_permission_request() -> String {
    let command: Vec<String> = (1..=150).map(|i| format!("echo step {i}")).collect();
    format!(
        r#"{{"questions":[{{"id":"permission","header":"Permission","question":"Allow the agent to use Bash?\n\n{}","options":[{{"label":"Allow once","description":"This call only."}},{{"label":"Deny","description":"Your own answer is passed on as the reason."}}]}}]}}"#,
        command.join("\\n")
    )
}

/// How long a condition on the screen may take before the test fails (generous: CI machines
/// are slow; a passing test never waits for it).
pub const DEADLINE: Duration = Duration::from_secs(20);

/// The whole environment of a pane's tmux server, so of the script it runs: `PATH`, the locale
/// and `TERM` passed through (tmux draws UTF-8 only under a UTF-8 locale), and a private `HOME`
/// with its XDG folders under `dir/home` — nothing else of the test's own environment (no
/// `ASK_USER_*`, no `TMUX`, no `NO_COLOR`) reaches the program under test.
fn pane_env(dir: &Path) -> Vec<(String, std::ffi::OsString)> {
    let home = dir.join("home");
    let mut env: Vec<(String, std::ffi::OsString)> = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM"]
        .into_iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (name.to_owned(), value)))
        .collect();
    env.push(("HOME".into(), home.clone().into()));
    env.push(("XDG_STATE_HOME".into(), home.join("state").into()));
    env.push(("XDG_CONFIG_HOME".into(), home.join("config").into()));
    env
}

/// A script in a tmux pane of its own; its working files live in [`TmuxPane::dir`].
#[derive(Debug)]
pub struct TmuxPane {
    dir: tempfile::TempDir,
    socket: PathBuf,
    /// A file of `dir` whose text a failed wait shows beside the screen (e.g. stderr).
    diagnostics: &'static str,
}

impl TmuxPane {
    /// Writes `script` to `dir/run.sh` and runs it with `sh` in a `width`×`height` pane.
    /// A failed wait also shows the file `diagnostics` of `dir`.
    pub fn start(
        dir: tempfile::TempDir,
        script: &str,
        width: u16,
        height: u16,
        diagnostics: &'static str,
    ) -> Self {
        let run = dir.path().join("run.sh");
        std::fs::write(&run, script).unwrap();
        let socket = dir.path().join("tmux.sock");
        let pane = Self {
            dir,
            socket,
            diagnostics,
        };
        pane.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-s",
            "main",
            &format!("sh '{}'", run.display()),
        ]);
        pane
    }

    /// The folder of the script and the files it writes.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `tmux ARGS` against this pane's server; panics with tmux's stderr on failure.
    pub fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .env_clear()
            .envs(pane_env(self.dir.path()))
            .output()
            .expect("tmux is installed (scripts/setup)");
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "main"])
    }

    /// Waits until the screen satisfies `condition` (checked every 20 ms, for at most
    /// [`DEADLINE`]); returns that screen.
    pub fn wait_for(&self, what: &str, condition: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if condition(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "waited {DEADLINE:?} for {what}; the screen:\n{screen}\n{}: {}",
                self.diagnostics,
                self.file(self.diagnostics).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?} on screen"), |s| s.contains(text))
    }

    /// Sends tmux key names (`Enter`, `Down`, `Space`, `Escape`, `C-c`, `BTab`, …).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "main"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "main", "-l", text]);
    }

    /// Pastes `text` as a terminal does when the application asked for bracketed paste.
    pub fn paste(&self, text: &str) {
        self.tmux(&["set-buffer", "--", text]);
        self.tmux(&["paste-buffer", "-p", "-t", "main"]);
    }

    /// After the program under test exited: the pane's terminal is in cooked mode again
    /// (canonical input, echo; the script wrote `stty -a` into the file `stty.txt` of
    /// [`TmuxPane::dir`]) and the cursor shows.
    pub fn assert_cooked_with_cursor(&self) {
        let stty = self.file("stty.txt").unwrap();
        let flags: Vec<&str> = stty.split_whitespace().collect();
        assert!(
            flags.contains(&"icanon") && flags.contains(&"echo"),
            "cooked mode again:\n{stty}"
        );
        assert_eq!(self.display("#{cursor_flag}"), "1", "cursor visible");
    }

    /// A tmux format for the pane, e.g. `#{pane_title}` or `#{cursor_flag}`.
    pub fn display(&self, format: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "main", format])
            .trim_end()
            .to_owned()
    }

    /// Resizes the pane (the window) to `width`×`height`.
    pub fn resize(&self, width: u16, height: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            "main",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// A file of [`Self::dir`], if it exists yet.
    pub fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join(name)).ok()
    }
}

impl Drop for TmuxPane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
