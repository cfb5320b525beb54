//! `ask-user hook` and `ask-user away` as real processes: hook events on stdin, answered in
//! `ask-user inbox` in a real pseudo-terminal (tmux), a real SQLite store; the host's JSON on
//! stdout. Every process gets a cleared environment with its own state directory.

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use ask_user_test_support::{DEADLINE, TmuxPane, hermetic_command, spawn_with_input};
use pretty_assertions::assert_eq;

use super::support::BIN;

const PERMISSION: &str = r#"{"session_id":"s-1","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}"#;
const ALLOWED: &str = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;

/// `ask-user ARGS` with a cleared environment whose state directory is `state`, `stdin` piped
/// in; stdout and stderr piped.
fn spawn(state: &Path, args: &[&str], stdin: &str) -> Child {
    spawn_with_input(
        hermetic_command("setsid", state)
            .arg("--wait")
            .arg(BIN)
            .args(args)
            .env("XDG_STATE_HOME", state)
            .current_dir(state),
        stdin.as_bytes(),
    )
}

fn run(state: &Path, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = spawn(state, args, stdin).wait_with_output().unwrap();
    (
        status.code(),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

/// The states of the store's asks (`ask-user history --json`).
fn states(state: &Path, url: &str) -> Vec<String> {
    let (status, stdout, stderr) = run(state, &["history", "--json", "--store", url], "");
    assert_eq!(status, Some(0), "{stderr}");
    let history: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    history
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["state"].as_str().unwrap().to_owned())
        .collect()
}

fn wait_states(state: &Path, url: &str, want: &[&str]) {
    let start = Instant::now();
    while states(state, url) != want {
        assert!(start.elapsed() < DEADLINE * 3, "waited for {want:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `ask-user hook claude-code --always --via inbox --store URL`.
fn hook_via_inbox(url: &str) -> [&str; 7] {
    [
        "hook",
        "claude-code",
        "--always",
        "--via",
        "inbox",
        "--store",
        url,
    ]
}

/// `ask-user inbox --store URL` in a 100×30 pane.
fn inbox_pane(url: &str) -> TmuxPane {
    let pane_dir = tempfile::tempdir().unwrap();
    let script = format!("exec '{BIN}' inbox --store '{url}' 2> inbox.err\n");
    TmuxPane::start(pane_dir, &script, 100, 30, "inbox.err")
}

#[test]
fn a_killed_hooks_permission_is_answered_in_the_inbox_and_the_same_event_gets_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path();
    let url = format!("sqlite:{}", state.join("store.sqlite3").display());
    let args = hook_via_inbox(&url);
    let mut first = spawn(state, &args, PERMISSION);
    wait_states(state, &url, &["open"]);
    // Grouped under the host and its session, not "unnamed agent".
    let (_, stdout, _) = run(state, &["history", "--json", "--store", &url], "");
    let history: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (
            &history[0]["asker"]["agent"],
            &history[0]["asker"]["session"]
        ),
        (&serde_json::json!("claude-code"), &serde_json::json!("s-1")),
        "{history:#}"
    );
    first.kill().unwrap(); // the host killed the hook at its timeout
    first.wait().unwrap();

    let pane = inbox_pane(&url);
    pane.wait_text("[Permission] Allow the agent to use Bash?");
    pane.type_text("1");
    pane.keys(&["Enter"]);
    pane.wait_text("make deploy");
    pane.wait_text("› 1. Allow once");
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");

    // The same event again: the stored answer at once, as the host's JSON.
    let (status, stdout, stderr) = run(state, &args, PERMISSION);
    assert_eq!((status, stdout.as_str()), (Some(0), ALLOWED), "{stderr}");
    assert_eq!(states(state, &url), ["answered"]);
}

#[test]
fn away_off_falls_through_and_away_on_asks() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path();
    let url = format!("sqlite:{}", state.join("store.sqlite3").display());
    let hook = ["hook", "claude-code", "--via", "inbox", "--store", &url];
    assert_eq!(
        run(state, &["away"], ""),
        (
            Some(0),
            "away: off (hooks fall through to the host's own dialogs)\n".to_owned(),
            String::new()
        )
    );
    // Not away: nothing printed, the host shows its own dialog; nothing stored.
    assert_eq!(
        run(state, &hook, PERMISSION),
        (Some(0), String::new(), String::new())
    );
    assert!(!state.join("store.sqlite3").exists());

    let (status, stdout, _) = run(state, &["away", "on"], "");
    assert_eq!(
        (status, stdout.as_str()),
        (Some(0), "away: on (hooks ask through ask-user)\n")
    );
    let mut asking = spawn(state, &hook, PERMISSION);
    wait_states(state, &url, &["open"]);
    asking.kill().unwrap();
    asking.wait().unwrap();

    let (_, stdout, _) = run(state, &["away", "off"], "");
    assert_eq!(
        stdout,
        "away: off (hooks fall through to the host's own dialogs)\n"
    );
    // The terminal is the host's: refused.
    let (status, _, stderr) = run(
        state,
        &["hook", "claude-code", "--always", "--via", "terminal"],
        PERMISSION,
    );
    assert_eq!(
        (status, stderr.as_str()),
        (
            Some(2),
            "ask-user: hook: --via terminal is not allowed: the agent host owns this terminal\n"
        )
    );
}

#[test]
fn claude_codes_question_answered_in_the_inbox_comes_back_as_updated_input() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path();
    let url = format!("sqlite:{}", state.join("store.sqlite3").display());
    let event = serde_json::json!({
        "session_id": "s-2", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "AskUserQuestion", "tool_use_id": "toolu_9",
        "tool_input": {"questions": [{"question": "Which database?", "header": "Database",
            "options": [{"label": "Postgres"}, {"label": "SQLite"}], "multiSelect": false}]},
    });
    let args = hook_via_inbox(&url);
    let asking = spawn(state, &args, &event.to_string());
    wait_states(state, &url, &["open"]);
    let pane = inbox_pane(&url);
    pane.wait_text("[Database] Which database?");
    pane.type_text("1");
    pane.keys(&["Enter"]);
    pane.wait_text("› 1. Postgres");
    pane.keys(&["Down"]);
    pane.wait_text("› 2. SQLite");
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");
    let out = asking.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        reply,
        serde_json::json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {
                "questions": event["tool_input"]["questions"],
                "answers": {"Which database?": "SQLite"},
            },
        }})
    );
    assert_eq!(states(state, &url), ["answered"]);
}
