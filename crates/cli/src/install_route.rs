//! How this `ask-user` was installed, and the command a host entry should run so that it keeps
//! working for that install route (docs/contract.md §7 "Setup").
//!
//! `ask-user setup` registers a command with an agent host that the host runs for weeks. The
//! running binary's own path is right when it stays put (npm's global or a project's package,
//! a Python environment, `cargo install`, the installer) but not when it lives in a cache that
//! is cleared or replaced: `npx` and `uvx` (and `pipx run`) run the binary from their cache.
//! Those routes get the command that fetches it again instead (`npx -y ask-user@VERSION`,
//! `uvx ask-user@VERSION`, `pipx run --spec ask-user==VERSION ask-user`), pinned to this version.
//!
//! [`detect`] reads only the binary's path and the environment given to it, so each route is
//! unit-tested with made-up paths; [`current`] feeds it the real ones. [`relaunch`] rewrites the
//! entries `setup` computed for the binary's path into the route's command.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::setup::Entry;

/// This build's version, which the cache routes pin.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The ways ask-user gets onto a machine, as seen from the binary's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Run by `npx` from npm's cache (`…/_npx/…`), which npm may clear.
    Npx,
    /// The npm package installed (`npm install -g ask-user`, or in a project).
    Npm,
    /// Run by `uvx` (`uv tool run`) from uv's cache (`…/archive-vN/…`).
    Uvx,
    /// Run by `pipx run` from pipx's cache of temporary environments.
    PipxRun,
    /// The wheel installed in a Python environment (pip, `uv tool install`, pipx install).
    Python,
    /// `cargo install` (`$CARGO_HOME/bin`).
    Cargo,
    /// A build in a source checkout (`target/…`): gone on `cargo clean`.
    Checkout,
    /// Anywhere else: the shell installer, a release archive, a package manager.
    Binary,
}

impl Route {
    /// Whether the binary's path is in a cache that can vanish (the entry then re-fetches).
    pub(crate) fn is_cache(self) -> bool {
        matches!(self, Route::Npx | Route::Uvx | Route::PipxRun)
    }

    /// What `doctor` calls the route.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Route::Npx => "npx (npm's cache, which npm may clear)",
            Route::Npm => "the npm package",
            Route::Uvx => "uvx (uv's cache, which uv may clear)",
            Route::PipxRun => "pipx run (pipx's cache, which pipx clears)",
            Route::Python => "the Python package (a pip, uv or pipx environment)",
            Route::Cargo => "cargo install",
            Route::Checkout => "a build in a source checkout (gone on `cargo clean`)",
            Route::Binary => "a binary (the installer, a release archive or a package manager)",
        }
    }
}

/// The command a host entry runs, before `mcp` or `hook HOST`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    /// How ask-user was installed.
    pub(crate) route: Route,
    /// The program: this binary, or the launcher that fetches it (absolute when found on PATH).
    pub(crate) program: String,
    /// The launcher's arguments naming ask-user and its version (none for the binary itself).
    pub(crate) args: Vec<String>,
}

impl Launch {
    /// The command as one shell line (each word single-quoted when it needs it), as hook
    /// entries run it.
    pub(crate) fn shell_words(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|word| shell_quote(word))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=@:+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The route of the binary at `exe` (canonical), given the environment (`env`) and a lookup of
/// programs on PATH (`which`).
pub(crate) fn detect(
    exe: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) -> Launch {
    let names: Vec<&str> = exe
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect();
    let has = |name: &str| names.contains(&name);
    let pair = |a: &str, b: &str| names.windows(2).any(|w| w[0] == a && w[1] == b);
    let under = |var: &str| env(var).is_some_and(|dir| !dir.is_empty() && exe.starts_with(dir));
    let home = env("HOME").map(PathBuf::from);
    let cargo_bin = env("CARGO_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".cargo")))
        .map(|dir| dir.join("bin"));
    let bin_dir = exe.parent();

    let route = if has("_npx") {
        Route::Npx
    } else if has("node_modules") {
        Route::Npm
    } else if under("UV_CACHE_DIR") || names.iter().any(|n| is_uv_archive(n)) {
        Route::Uvx
    } else if under("PIPX_VENV_CACHEDIR") || pair("pipx", ".cache") || pair(".cache", "pipx") {
        Route::PipxRun
    } else if bin_dir.is_some_and(|bin| {
        bin.parent()
            .is_some_and(|venv| venv.join("pyvenv.cfg").is_file())
            || bin.join("python3").exists()
    }) {
        Route::Python
    } else if bin_dir.is_some_and(|bin| Some(bin) == cargo_bin.as_deref()) {
        Route::Cargo
    } else if has("target")
        && names
            .iter()
            .rev()
            .nth(1)
            .is_some_and(|profile| matches!(*profile, "debug" | "release"))
    {
        Route::Checkout
    } else {
        Route::Binary
    };

    let launcher = |program: &str| {
        which(program).map_or_else(|| program.to_owned(), |p| p.display().to_string())
    };
    let (program, args) = match route {
        Route::Npx => (
            launcher("npx"),
            vec!["-y".into(), format!("ask-user@{VERSION}")],
        ),
        Route::Uvx => (launcher("uvx"), vec![format!("ask-user@{VERSION}")]),
        Route::PipxRun => (
            launcher("pipx"),
            vec![
                "run".into(),
                "--spec".into(),
                format!("ask-user=={VERSION}"),
                "ask-user".into(),
            ],
        ),
        _ => (exe.display().to_string(), Vec::new()),
    };
    Launch {
        route,
        program,
        args,
    }
}

/// uv's cache keeps the environments `uvx` runs in `archive-vN/<hash>/`.
fn is_uv_archive(name: &str) -> bool {
    name.strip_prefix("archive-v")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The route of the binary at `exe` (this one's canonical path), from the process's
/// environment and PATH.
pub(crate) fn for_binary(exe: &Path) -> Launch {
    detect(exe, &|var| std::env::var_os(var), &which)
}

/// The route of the running binary.
pub(crate) fn current() -> Result<Launch, String> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find this binary's path: {e}"))?;
    Ok(for_binary(&exe))
}

/// The first executable `program` on PATH.
fn which(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|path| {
            path.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `doctor`'s line: the route it sees and the command `setup` writes for it.
pub(crate) fn doctor_line() -> String {
    match current() {
        Ok(launch) => format!(
            "installed as: {}; `ask-user setup` writes: {} mcp\n",
            launch.route.describe(),
            launch.shell_words()
        ),
        Err(error) => format!("installed as: unknown ({error})\n"),
    }
}

/// `entries`, computed for the binary at `binary`, rewritten to run `launch` instead: each
/// server entry's `command` (and its `args`, prefixed), each hook's command line.
pub(crate) fn relaunch(entries: Vec<Entry>, binary: &Path, launch: &Launch) -> Vec<Entry> {
    if !launch.route.is_cache() {
        return entries;
    }
    let old = binary.display().to_string();
    let old_hook = format!("'{}' ", old.replace('\'', "'\\''"));
    let new_hook = format!("{} ", launch.shell_words());
    let prefixed = |args: &Value| {
        let mut all: Vec<Value> = launch.args.iter().cloned().map(Value::String).collect();
        all.extend(args.as_array().into_iter().flatten().cloned());
        Value::Array(all)
    };
    let server = |value: &mut Value| {
        if value.get("command").and_then(Value::as_str) == Some(old.as_str()) {
            let args = prefixed(value.get("args").unwrap_or(&Value::Null));
            value["command"] = Value::String(launch.program.clone());
            value["args"] = args;
        }
    };
    entries
        .into_iter()
        .map(|mut entry| {
            match &mut entry {
                Entry::Json { value, .. } => server(value),
                Entry::TomlTable { values, .. } => {
                    if values
                        .iter()
                        .any(|(k, v)| k == "command" && v.as_str() == Some(old.as_str()))
                    {
                        for (key, value) in values.iter_mut() {
                            match key.as_str() {
                                "command" => *value = Value::String(launch.program.clone()),
                                "args" => *value = prefixed(value),
                                _ => {}
                            }
                        }
                    }
                }
                Entry::JsonHooks { hooks, .. } => rewrite_hooks(hooks, &old_hook, &new_hook),
                Entry::JsonListItem { .. } => {}
            }
            entry
        })
        .collect()
}

/// Every `"command"` string under `value` that starts with `old` starts with `new` instead.
fn rewrite_hooks(value: &mut Value, old: &str, new: &str) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    Value::String(command) if key == "command" => {
                        if let Some(rest) = command.strip_prefix(old) {
                            *command = format!("{new}{rest}");
                        }
                    }
                    other => rewrite_hooks(other, old, new),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite_hooks(i, old, new)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::setup::{Homes, HookSet, SetupHost, Wiring, apply};

    /// `setup`'s entries for `host`, the binary at `binary`, `mcp` then `args`, every hook.
    fn entries(host: SetupHost, binary: &Path, args: &[String], homes: &Homes) -> Vec<Entry> {
        let wiring = Wiring {
            binary: binary.to_path_buf(),
            mcp_args: std::iter::once("mcp".to_owned())
                .chain(args.iter().cloned())
                .collect(),
            hooks: vec![HookSet::Questions, HookSet::Plans, HookSet::Permissions],
            hook_flags: Vec::new(),
            waiting_where: "ask-user: waiting for your answer in `ask-user inbox`".to_owned(),
        };
        crate::setup::entries(host, &wiring, homes)
    }

    fn detect_with(exe: &str, vars: &[(&str, &str)]) -> Launch {
        let vars: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        let which = |program: &str| Some(PathBuf::from(format!("/usr/bin/{program}")));
        detect(Path::new(exe), &|var| vars.get(var).cloned(), &which)
    }

    const HOME: (&str, &str) = ("HOME", "/home/u");

    #[test]
    fn npx_runs_from_its_cache_so_the_entry_runs_npx_pinned_to_this_version() {
        let launch = detect_with(
            "/home/u/.npm/_npx/6a1b2c/node_modules/@ask-user/linux-x64/bin/ask-user",
            &[HOME],
        );
        assert_eq!(
            launch,
            Launch {
                route: Route::Npx,
                program: "/usr/bin/npx".into(),
                args: vec!["-y".into(), format!("ask-user@{VERSION}")],
            }
        );
        assert!(launch.route.is_cache());
    }

    #[test]
    fn an_installed_npm_package_keeps_its_path() {
        let exe = "/usr/local/lib/node_modules/@ask-user/linux-x64/bin/ask-user";
        let launch = detect_with(exe, &[HOME]);
        assert_eq!(launch.route, Route::Npm);
        assert_eq!(launch.program, exe);
        assert!(launch.args.is_empty());
        let project = "/srv/app/node_modules/@ask-user/linux-x64/bin/ask-user";
        assert_eq!(detect_with(project, &[HOME]).route, Route::Npm);
    }

    #[test]
    fn uvx_runs_from_uvs_cache_wherever_that_is() {
        let expected = vec![format!("ask-user@{VERSION}")];
        let launch = detect_with("/home/u/.cache/uv/archive-v0/Xy12/bin/ask-user", &[HOME]);
        assert_eq!(
            (launch.route, launch.program.as_str()),
            (Route::Uvx, "/usr/bin/uvx")
        );
        assert_eq!(launch.args, expected);
        let custom = detect_with(
            "/data/uvc/builds/Xy12/bin/ask-user",
            &[HOME, ("UV_CACHE_DIR", "/data/uvc")],
        );
        assert_eq!(custom.route, Route::Uvx);
    }

    #[test]
    fn pipx_run_runs_from_its_cache() {
        for exe in [
            "/home/u/.local/pipx/.cache/4f2a/bin/ask-user",
            "/home/u/.cache/pipx/4f2a/bin/ask-user",
        ] {
            let launch = detect_with(exe, &[HOME]);
            assert_eq!(launch.route, Route::PipxRun, "{exe}");
            assert_eq!(
                launch.shell_words(),
                format!("/usr/bin/pipx run --spec ask-user=={VERSION} ask-user")
            );
        }
    }

    #[test]
    fn a_python_environment_cargo_a_checkout_and_anything_else_keep_the_binarys_path() {
        let venv = tempfile::tempdir().unwrap();
        std::fs::write(venv.path().join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let exe = venv.path().join("bin/ask-user");
        let launch = detect_with(exe.to_str().unwrap(), &[HOME]);
        assert_eq!(launch.route, Route::Python);
        assert_eq!(launch.program, exe.display().to_string());

        assert_eq!(
            detect_with("/home/u/.cargo/bin/ask-user", &[HOME]).route,
            Route::Cargo
        );
        assert_eq!(
            detect_with(
                "/opt/cargo/bin/ask-user",
                &[HOME, ("CARGO_HOME", "/opt/cargo")]
            )
            .route,
            Route::Cargo
        );
        assert_eq!(
            detect_with("/src/ask-user/target/release/ask-user", &[HOME]).route,
            Route::Checkout
        );
        let installed = detect_with("/home/u/.local/bin/ask-user", &[HOME]);
        assert_eq!(installed.route, Route::Binary);
        assert_eq!(installed.shell_words(), "/home/u/.local/bin/ask-user");
        assert!(!installed.route.is_cache());
    }

    fn homes() -> Homes {
        Homes {
            home: PathBuf::from("/home/u"),
            codex_home: PathBuf::from("/home/u/.codex"),
        }
    }

    const CACHED: &str = "/home/u/.npm/_npx/6a1b2c/node_modules/@ask-user/linux-x64/bin/ask-user";

    #[test]
    fn setup_entries_for_npx_run_npx_never_the_cache_path() {
        let binary = Path::new(CACHED);
        let launch = detect_with(CACHED, &[HOME]);
        let pinned = format!("ask-user@{VERSION}");
        let claude = relaunch(
            entries(
                SetupHost::ClaudeCode,
                binary,
                &["--via".into(), "inbox".into()],
                &homes(),
            ),
            binary,
            &launch,
        );
        let text: Value = serde_json::from_str(&apply(&claude[0], None).unwrap()).unwrap();
        assert_eq!(
            text["mcpServers"]["ask-user"],
            json!({"type": "stdio", "command": "/usr/bin/npx",
                   "args": ["-y", pinned, "mcp", "--via", "inbox"], "env": {}})
        );
        let hooks = apply(&claude[2], None).unwrap();
        assert!(!hooks.contains("_npx"), "{hooks}");
        let hooks: Value = serde_json::from_str(&hooks).unwrap();
        assert_eq!(
            hooks["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
            json!(format!(
                "/usr/bin/npx -y {pinned} hook claude-code --wait 59m"
            ))
        );

        let codex = relaunch(
            entries(SetupHost::Codex, binary, &[], &homes()),
            binary,
            &launch,
        );
        let toml = apply(&codex[0], None).unwrap();
        assert!(
            toml.contains(&format!(
                "command = \"/usr/bin/npx\"\nargs = [\"-y\", \"{pinned}\", \"mcp\"]\n"
            )),
            "{toml}"
        );
        assert!(!apply(&codex[1], None).unwrap().contains("_npx"));
        for host in [SetupHost::Gemini, SetupHost::Cursor] {
            let entry = &relaunch(entries(host, binary, &[], &homes()), binary, &launch)[0];
            let text = apply(entry, None).unwrap();
            assert!(!text.contains("_npx"), "{text}");
            assert!(text.contains("\"/usr/bin/npx\""), "{text}");
        }
    }

    #[test]
    fn setup_entries_for_a_stable_path_are_unchanged() {
        let binary = Path::new("/usr/local/lib/node_modules/@ask-user/linux-x64/bin/ask-user");
        let launch = detect_with(binary.to_str().unwrap(), &[HOME]);
        for host in SetupHost::ALL {
            let before = entries(host, binary, &[], &homes());
            assert_eq!(relaunch(before.clone(), binary, &launch), before);
        }
    }

    #[test]
    fn shell_words_quote_what_needs_it() {
        let launch = Launch {
            route: Route::Binary,
            program: "/home/u/My Tools/ask-user".into(),
            args: vec!["it's".into()],
        };
        assert_eq!(
            launch.shell_words(),
            r"'/home/u/My Tools/ask-user' 'it'\''s'"
        );
    }
}
