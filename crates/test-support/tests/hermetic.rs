//! The hermetic rule, held by a count: a test spawns a process through this crate's
//! [`ask_user_test_support::hermetic_command`] (a cleared environment, a private HOME and XDG
//! dirs) or, for a third-party tool, [`ask_user_test_support::tool`] (a cleared environment but
//! `PATH` and the locale), so no `ASK_USER_*` variable, hub, token or default store of the
//! developer's reaches it. The
//! `Command::new(` calls written in `crates/*/tests` are counted here (a helper that passes its
//! command through the builder counts once, however many tests use it): the count may only go
//! down (lower [`MOST`] when a change removes some); a new test spawns through an existing
//! helper or the builder instead.

use std::path::{Path, PathBuf};

/// The bare `Command::new(` spawns in `crates/*/tests` today (none in the CLI's tests), most of
/// them tools (node, Python, curl, openssl, setsid) that each set their own environment.
const MOST: usize = 19;

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn bare_spawns_in_tests_never_grow() {
    let crates = ask_user_test_support::repo_root().join("crates");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap().flatten() {
        rust_files(&krate.path().join("tests"), &mut files);
    }
    files.sort();
    assert!(
        files.len() > 20,
        "no test files found under {}",
        crates.display()
    );
    let this = Path::new(file!()).file_name().unwrap();
    let mut bare = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.ends_with(Path::new("test-support/tests").join(this)))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("Command::new(") {
                bare.push(format!("{}:{}", file.display(), n + 1));
            }
        }
    }
    assert!(
        bare.len() <= MOST,
        "{} bare `Command::new(` spawns in crates/*/tests, more than {MOST}: spawn through \
         ask_user_test_support::hermetic_command or tool instead. All of them:\n{}",
        bare.len(),
        bare.join("\n")
    );
}
