//! Installed without a Rust toolchain (docs/contract.md §12): `scripts/dist` packs this test's
//! `ask-user` into the npm packages (the launcher and the linux-x64 package), the wheel and the
//! release archive with its shell installer; each is then installed from those files alone — no
//! registry: `npm install -g --offline`, `npx --offline`, `pip install --no-index`,
//! `uvx --offline`, the installer reading the archive beside it — into a fresh prefix and a fresh
//! HOME, with a PATH holding only the tools a user has (node, npm, python3, uv, a shell and
//! coreutils; no cargo, no rustc). Each installed `ask-user` answers `--version`, `schema`, an
//! `ask --answers` and `setup claude-code --print`, whose command survives the route (npx:
//! `npx -y ask-user@V`, uvx: `uvx ask-user@V`, never their caches' paths); `doctor` names the
//! route. The installer refuses an archive that does not match its checksum.
//!
//! The binary packed is the debug build the suite already has (`scripts/dist --binary`): CI
//! cannot wait for the portable release build (16 minutes on 2 cores, cargo-zigbuild against
//! glibc 2.17), which only `scripts/dist` without `--binary` runs, with the same packaging
//! steps after it. So this test checks the packaging and the install routes, not the
//! portability of the binary (scripts/dist checks that, with objdump). No step is timed; the
//! durations are printed for the record.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use ask_user_test_support::{hermetic_command, tool};

use super::support::{BIN, repo_file};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The only programs on the installs' PATH (symlinks into one directory): what installing
/// and running the packages needs, and nothing of a Rust toolchain.
const TOOLS: &[&str] = &[
    "sh",
    "bash",
    "env",
    "node",
    "npm",
    "npx",
    "python3",
    "uname",
    "dirname",
    "mktemp",
    "rm",
    "cp",
    "cut",
    "tar",
    "xz",
    "sha256sum",
    "mkdir",
    "chmod",
    "mv",
    "cat",
    "sed",
    "grep",
    "ls",
];

const QUESTION: &str = r#"{"questions":[{"id":"go","header":"Deploy","question":"Deploy now?","options":[{"label":"Yes"},{"label":"No"}]}]}"#;
const ANSWERS: &str = r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#;

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// A scratch directory: `tools/` (the installs' PATH), `home/` (a fresh HOME), the question
/// and the answers.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools");
        std::fs::create_dir_all(&tools).unwrap();
        for tool in TOOLS {
            let real = which(tool).unwrap_or_else(|| panic!("{tool} is not on PATH"));
            std::os::unix::fs::symlink(real, tools.join(tool)).unwrap();
        }
        // The interpreter itself, not a version manager's shim (pyenv's needs its own tools).
        let python = tool("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        let python = String::from_utf8(python.stdout).unwrap();
        std::fs::remove_file(tools.join("python3")).unwrap();
        std::os::unix::fs::symlink(python.trim(), tools.join("python3")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::write(dir.path().join("q.json"), QUESTION).unwrap();
        std::fs::write(dir.path().join("answers.json"), ANSWERS).unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `program ARGS`, successful, with `bin` (if any) and the tools alone on PATH, in the
    /// fresh HOME; its stdout.
    fn run(
        &self,
        bin: Option<&Path>,
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> String {
        let mut path: Vec<PathBuf> = bin.map(Path::to_path_buf).into_iter().collect();
        path.push(self.path("tools"));
        let home = self.path("home");
        let output = hermetic_command(program, &home)
            .args(args)
            .env("PATH", std::env::join_paths(&path).unwrap())
            .env("XDG_CACHE_HOME", home.join("cache"))
            .envs(env.iter().copied())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{} {args:?}: {}\n{}",
            program.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// What every installed `ask-user` does: `program ARGS…` runs it (`bin` on PATH). Returns
    /// the output of `setup claude-code --print` and of `doctor`.
    fn check(&self, bin: Option<&Path>, program: &Path, args: &[&str]) -> (String, String) {
        let run = |more: &[&str]| {
            let all: Vec<&str> = args.iter().chain(more).copied().collect();
            self.run(bin, program, &all, &[])
        };
        assert_eq!(run(&["--version"]).trim(), format!("ask-user {VERSION}"));
        let schema: serde_json::Value = serde_json::from_str(&run(&["schema"])).unwrap();
        assert_eq!(schema["name"], "ask_user_question", "{schema}");
        assert_eq!(
            run(&["ask", "--answers", "answers.json", "q.json"]).trim(),
            ANSWERS
        );
        (run(&["setup", "claude-code", "--print"]), run(&["doctor"]))
    }
}

/// The one file in `dir` named `prefix…suffix`, as a string.
fn artifact(dir: &Path, prefix: &str, suffix: &str) -> String {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{prefix}*{suffix} in {}: {found:?}",
        dir.display()
    );
    found[0].display().to_string()
}

/// `npm install -g` of `packages` (files) into `prefix`, offline, with the scratch's tools.
fn npm_install(scratch: &Scratch, tools: &Path, prefix: &str, packages: &[&str]) -> String {
    let mut args = vec![
        "install",
        "-g",
        "--offline",
        "--no-audit",
        "--no-fund",
        "--prefix",
        prefix,
    ];
    args.extend_from_slice(packages);
    scratch.run(None, &tools.join("npm"), &args, &[])
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = f();
    eprintln!("dist: {what}: {:.1} s", start.elapsed().as_secs_f64());
    value
}

/// `setup`'s Claude Code entry names `command` (and its args start with `args`).
fn assert_entry(setup: &str, command: &str, args: &[&str]) {
    let start = setup.find('{').unwrap();
    let end = setup[start..].find("\n}").unwrap() + start + 2;
    let entry: serde_json::Value = serde_json::from_str(&setup[start..end]).unwrap();
    assert_eq!(entry["command"], command, "{setup}");
    let mut expected: Vec<&str> = args.to_vec();
    expected.push("mcp");
    assert_eq!(entry["args"], serde_json::json!(expected), "{setup}");
}

#[test]
fn each_package_installs_from_its_file_without_a_rust_toolchain_and_works() {
    let scratch = Scratch::new();
    let dist = scratch.path("dist");
    // Packing needs cargo (maturin reads `cargo metadata`): the test's own PATH.
    let packed = timed("scripts/dist --binary (debug build)", || {
        let mut command = hermetic_command("bash", &scratch.path("home"));
        command
            .arg(repo_file("scripts/dist"))
            .args(["--binary", BIN, "--out"])
            .arg(&dist)
            // The debug binary is large: the fastest xz preset keeps CI's time small.
            .env("XZ_OPT", "-0")
            .stdin(Stdio::null());
        // cargo's and rustup's homes (the registry, the toolchain), which the fresh HOME lacks.
        for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
            let dir = std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(default)));
            if let Some(dir) = dir {
                command.env(var, dir);
            }
        }
        command.output().unwrap()
    });
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );

    let tools = scratch.path("tools");
    for tool in ["cargo", "rustc", "rustup"] {
        let found = scratch.run(
            None,
            &tools.join("sh"),
            &["-c", &format!("command -v {tool} || echo none")],
            &[],
        );
        assert_eq!(found.trim(), "none", "{tool} is on the installs' PATH");
    }
    let npm = dist.join("npm");
    let launcher = artifact(&npm, &format!("ask-user-{VERSION}"), ".tgz");
    let linux_x64 = artifact(&npm, "ask-user-linux-x64-", ".tgz");

    // npm install -g, from the two files: the launcher finds the platform package's binary.
    let prefix = scratch.path("npm-prefix");
    let prefix_text = prefix.display().to_string();
    timed("npm install -g", || {
        npm_install(&scratch, &tools, &prefix_text, &[&launcher, &linux_x64])
    });
    let bin = prefix.join("bin");
    let (setup, doctor) = scratch.check(Some(&bin), &bin.join("ask-user"), &[]);
    let installed = prefix
        .join("lib/node_modules/@ask-user/linux-x64/bin/ask-user")
        .canonicalize()
        .unwrap();
    assert_entry(&setup, &installed.display().to_string(), &[]);
    assert!(
        doctor.starts_with("installed as: the npm package;"),
        "{doctor}"
    );

    // The launcher alone (npm --omit=optional, or a platform without a package): exit 1 with a
    // line naming the missing package, not a stack trace.
    let alone = scratch.path("npm-launcher-alone");
    let alone_text = alone.display().to_string();
    npm_install(&scratch, &tools, &alone_text, &[&launcher]);
    let missing = hermetic_command(alone.join("bin/ask-user"), &scratch.path("home"))
        .arg("--version")
        .env("PATH", &tools)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.starts_with("ask-user: @ask-user/linux-x64 is not installed beside ask-user"),
        "{stderr}"
    );

    // npx, from the same files (the package checked above; here what `setup` writes): npm's
    // cache is not a path to write down.
    let (setup, doctor) = timed("npx (setup and doctor)", || {
        let npx = |command: &[&str]| {
            let mut args = vec![
                "--yes",
                "--offline",
                "--package",
                &launcher,
                "--package",
                &linux_x64,
                "--",
                "ask-user",
            ];
            args.extend(command);
            scratch.run(None, &tools.join("npx"), &args, &[])
        };
        (npx(&["setup", "claude-code", "--print"]), npx(&["doctor"]))
    });
    let pinned = format!("ask-user@{VERSION}");
    assert_entry(
        &setup,
        &tools.join("npx").display().to_string(),
        &["-y", &pinned],
    );
    assert!(!setup.contains("_npx"), "{setup}");
    assert!(doctor.starts_with("installed as: npx"), "{doctor}");

    // pip, into a fresh virtual environment, from the wheel alone.
    let venv = scratch.path("venv");
    let wheel = artifact(&dist.join("wheels"), "ask_user-", ".whl");
    timed("python3 -m venv", || {
        scratch.run(
            None,
            &tools.join("python3"),
            &["-m", "venv", &venv.display().to_string()],
            &[],
        )
    });
    timed("pip install --no-index", || {
        scratch.run(
            None,
            &venv.join("bin/pip"),
            &[
                "install",
                "--no-index",
                "--disable-pip-version-check",
                "-q",
                &wheel,
            ],
            &[],
        )
    });
    let (setup, doctor) = scratch.check(None, &venv.join("bin/ask-user"), &[]);
    assert_entry(
        &setup,
        &venv
            .join("bin/ask-user")
            .canonicalize()
            .unwrap()
            .display()
            .to_string(),
        &[],
    );
    assert!(
        doctor.starts_with("installed as: the Python package"),
        "{doctor}"
    );

    // uvx, from the same wheel: uv's cache is not a path to write down either.
    let uvx = repo_file(".venv/bin/uvx");
    assert!(
        uvx.is_file(),
        "{} is missing: run scripts/setup",
        uvx.display()
    );
    // On PATH as a user has it (with the venv's Python, which uvx runs the wheel with).
    let uv_bin = uvx.parent().unwrap();
    let (setup, doctor) = timed("uvx (install and the checks)", || {
        scratch.check(
            Some(uv_bin),
            &uvx,
            &["--offline", "--from", &wheel, "ask-user"],
        )
    });
    assert_entry(&setup, &uvx.display().to_string(), &[&pinned]);
    assert!(!setup.contains("archive-v"), "{setup}");
    assert!(doctor.starts_with("installed as: uvx"), "{doctor}");

    // The shell installer, reading the archive and its checksum beside it.
    let installed_dir = scratch.path("installed/bin");
    let installer = dist.join("archives/ask-user-installer.sh");
    timed("the shell installer", || {
        scratch.run(
            None,
            &tools.join("sh"),
            &[&installer.display().to_string()],
            &[("ASK_USER_INSTALL_DIR", &installed_dir.display().to_string())],
        )
    });
    let (setup, doctor) = scratch.check(Some(&installed_dir), &installed_dir.join("ask-user"), &[]);
    // An archive that does not match its checksum is refused, and nothing is installed.
    let tampered = scratch.path("tampered");
    std::fs::create_dir_all(&tampered).unwrap();
    for name in [
        "ask-user-installer.sh",
        "ask-user-x86_64-unknown-linux-gnu.tar.xz.sha256",
    ] {
        std::fs::copy(dist.join("archives").join(name), tampered.join(name)).unwrap();
    }
    let mut archive =
        std::fs::read(dist.join("archives/ask-user-x86_64-unknown-linux-gnu.tar.xz")).unwrap();
    archive.push(0);
    std::fs::write(
        tampered.join("ask-user-x86_64-unknown-linux-gnu.tar.xz"),
        archive,
    )
    .unwrap();
    let elsewhere = scratch.path("not-installed");
    let refused = hermetic_command(tools.join("sh"), &scratch.path("home"))
        .arg(tampered.join("ask-user-installer.sh"))
        .env("PATH", &tools)
        .env("ASK_USER_INSTALL_DIR", &elsewhere)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("does not match its checksum"), "{stderr}");
    assert!(!elsewhere.exists());
    assert_entry(
        &setup,
        &installed_dir
            .join("ask-user")
            .canonicalize()
            .unwrap()
            .display()
            .to_string(),
        &[],
    );
    assert!(doctor.starts_with("installed as: a binary"), "{doctor}");
}
