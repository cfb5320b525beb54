//! `examples/agent_loop.rs` itself, run in a real terminal (a tmux pane) against the fake
//! model: the human answers with real keys in the terminal answerer. Needs the example built
//! (`cargo test -p ask-user-rig` builds it; with a `--test` filter, build it first with
//! `cargo build -p ask-user-rig --example agent_loop`) and `tmux` (scripts/setup).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ask_user_test_support::TmuxPane;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::calls::DEEPSEEK_ARGS;
use super::fake_model::{FakeModel, ask_then_quote, last_tool_messages};

/// How long the example may take to finish once answered (generous: a loaded machine).
const FINISH: Duration = Duration::from_secs(60);

fn example() -> PathBuf {
    // target/<profile>/deps/all-… → target/<profile>/examples/agent_loop
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/agent_loop");
    assert!(
        path.exists(),
        "{} is not built: run `cargo build -p ask-user-rig --example agent_loop`",
        path.display()
    );
    path
}

/// Runs the example in a pane against `model`, presses `keys` once the question shows, and
/// returns (exit status, stdout) when it ends.
async fn run_example(model: &FakeModel, keys: &'static [&'static str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "cd '{}' && AGENT_BASE_URL='{}' AGENT_API_KEY=test-key AGENT_MODEL=deepseek-flash '{}' 'Set up the service' > out.txt 2> err.txt; echo $? > status.txt; sleep 5\n",
        dir.path().display(),
        model.base_url,
        example().display()
    );
    tokio::task::spawn_blocking(move || {
        let pane = TmuxPane::start(dir, &script, 100, 30, "err.txt");
        pane.wait_text("Which database should the new service use?");
        pane.keys(keys);
        let start = Instant::now();
        loop {
            if let Some(status) = pane.file("status.txt").filter(|s| s.ends_with('\n')) {
                return (status.trim().to_owned(), pane.file("out.txt").unwrap());
            }
            assert!(
                start.elapsed() < FINISH,
                "the example did not finish; screen:\n{}\nstderr: {}",
                pane.screen(),
                pane.file("err.txt").unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_asks_on_the_terminal_and_sends_the_answer_back() {
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    // "2" moves to the second option (SQLite; a digit never confirms by itself), Enter confirms.
    let (status, out) = run_example(&model, &["2", "Enter"]).await;
    let answer = r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    assert_eq!(
        (status.as_str(), out),
        ("0", format!("I received: {answer}\n"))
    );
    let requests = model.requests();
    assert_eq!(
        requests[0].body["messages"][1],
        json!({"role": "user", "content": "Set up the service"})
    );
    assert_eq!(
        last_tool_messages(&requests[1].body),
        vec![json!({"role": "tool", "tool_call_id": "call_0", "content": answer})]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_the_example_sends_the_dismissal_text() {
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let (status, out) = run_example(&model, &["C-c"]).await;
    let dismissed = "Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on.";
    assert_eq!(
        (status.as_str(), out),
        ("0", format!("I received: {dismissed}\n"))
    );
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![json!({"role": "tool", "tool_call_id": "call_0", "content": dismissed})]
    );
}

#[test]
fn the_example_says_what_is_missing_in_words_not_a_debug_dump() {
    let home = tempfile::tempdir().unwrap();
    let mut example = std::process::Command::new(example());
    let out = ask_user_test_support::hermetic(&mut example, home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "agent_loop: set AGENT_API_KEY (or DEEPSEEK_API_KEY) to the endpoint's API key\n"
    );
}
