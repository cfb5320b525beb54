//! npm `@modelcontextprotocol/inspector` CLI against the stdio server.

use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{root, server_bin};

fn inspector(args: &[&str]) -> (Value, String) {
    let bin = root().join("tools/node/node_modules/.bin/mcp-inspector");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup first",
        bin.display()
    );
    let home = tempfile::tempdir().unwrap();
    let mut inspector = Command::new(&bin);
    ask_user_test_support::hermetic(&mut inspector, home.path());
    let output = inspector.args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "inspector {args:?} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (value, stderr)
}

#[test]
fn strict_schema_lint_passes_and_a_call_works() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#).unwrap();
    let answers = answers.to_string_lossy().into_owned();
    let bin = server_bin();

    let (listing, stderr) = inspector(&[
        "--cli",
        &bin,
        "--answers",
        &answers,
        "--method",
        "tools/list",
        "--strict",
    ]);
    assert_eq!(listing["tools"][0]["name"], "ask_user_question");
    assert_eq!(stderr.trim(), "", "the strict lint reported problems");

    let (result, _) = inspector(&[
        "--cli",
        &bin,
        "--answers",
        &answers,
        "--method",
        "tools/call",
        "--tool-name",
        "ask_user_question",
        "--tool-arg",
        r#"questions=[{"id":"go","question":"Deploy?","options":["Yes","No"]}]"#,
    ]);
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#}],
            "structuredContent": {"answers": [{"id": "go", "selected": ["Yes"]}]},
            "isError": false
        })
    );
}
