//! ask-user as the `userQuestions` provider of DeepSeek's TypeScript harness
//! (`bindings/node`, docs/contract.md §7 "From TypeScript"): builds the package with its pinned
//! `tsc`, then runs its `node --test` files, which drive the published `ask_user_question` tool in
//! the published `ToolRuntime` (npm, pinned, installed by `scripts/setup`'s `npm ci`) against a
//! real `ask-user hub serve`, the human answering on the inbox page in real headless Chromium
//! (one session) or over the page's own endpoint; abort, `kill -9` of the harness process, and
//! `npm pack` installed in a fresh project and type-checked there.
//!
//! The `ask-user` binary is the one this workspace's test build made beside this test binary
//! (`cargo test --workspace` builds it; alone, `cargo build -p ask-user` first). Every process
//! gets a cleared environment: `PATH`, a temp `HOME`, the binary's path, and the npm cache that
//! `npm ci` filled (installs are `--offline`).

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ask_user_conformance::repo_root;

/// Generous: the whole node run on a small shared machine (each step inside has its own).
const DEADLINE: Duration = Duration::from_secs(600);

/// `target/<profile>/ask-user`, beside `target/<profile>/deps/<this test>`.
fn ask_user_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps")
        .join("ask-user");
    assert!(
        bin.is_file(),
        "{} is missing: cargo build -p ask-user (cargo test --workspace builds it)",
        bin.display()
    );
    bin
}

/// Kills the child when dropped (a failed assertion must not leave node or Chromium behind).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to its end within [`DEADLINE`]: (success, stdout + stderr).
fn run(cmd: &mut Command) -> (bool, String) {
    let mut child = Running(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs (installed by scripts/setup)"),
    );
    let mut out = child.0.stdout.take().expect("piped stdout");
    let mut err = child.0.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("wait on node") {
            break status;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "node did not end within {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = format!(
        "{}{}",
        reader.join().expect("stdout reader"),
        err_reader.join().expect("stderr reader")
    );
    (status.success(), text)
}

#[test]
fn the_reference_tool_asks_through_ask_user() {
    let dir = repo_root().join("bindings/node");
    assert!(
        dir.join("node_modules/@deepseek-ai/dsh-tool-ask-user")
            .is_dir()
            && dir.join("node_modules/typescript").is_dir(),
        "bindings/node/node_modules is missing: run scripts/setup"
    );
    let home = std::env::temp_dir().join(format!("ask-user-ts-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a temp HOME");
    let npm_cache = std::env::var_os("NPM_CONFIG_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".npm")))
        .expect("HOME or NPM_CONFIG_CACHE names the npm cache");
    let env = |cmd: &mut Command| {
        cmd.env_clear()
            .current_dir(&dir)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("NPM_CONFIG_CACHE", &npm_cache)
            .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
            .env("ASK_USER_BIN", ask_user_bin());
    };

    let mut tsc = Command::new("node");
    env(tsc.args(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"]));
    let (ok, out) = run(&mut tsc);
    assert!(ok, "tsc failed:\n{out}");

    let mut tests = Command::new("node");
    env(tests.args([
        "--test",
        "--test-reporter=tap",
        "test/provider.test.mjs",
        "test/package.test.mjs",
    ]));
    let (ok, out) = run(&mut tests);
    let _ = std::fs::remove_dir_all(&home);
    assert!(ok, "the node tests failed:\n{out}");
    assert!(out.contains("# fail 0"), "{out}");
    println!("{out}");
}
