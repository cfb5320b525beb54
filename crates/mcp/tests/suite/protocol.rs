//! JSON-RPC at the edges, raw lines over stdio: a line that is not JSON gets a
//! parse error, and `arguments` that are not an object are a tool error result the model can
//! act on, never a protocol error.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::hardening::Server;

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let mut server = Server::start(&["--via", "none"]);
    server.send_line(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list""#);
    let reply = server.receive();
    assert_eq!(reply["id"], json!(null), "{reply}");
    assert_eq!(reply["error"]["code"], -32700);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error: the line is not JSON"),
        "{reply}"
    );
    server.send(json!({"jsonrpc":"2.0","id":6,"method":"ping"}));
    assert_eq!(
        server.receive(),
        json!({"jsonrpc":"2.0","id":6,"result":{}})
    );
}

#[test]
fn arguments_that_are_not_an_object_are_a_tool_error_result() {
    let mut server = Server::start(&["--via", "none"]);
    for (id, arguments) in [(2, json!("questions")), (3, json!([1, 2])), (4, json!(7))] {
        server.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"ask_user_question","arguments":arguments}}));
        let reply = server.receive();
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        let core = ask_user_core::decode(arguments.clone(), &Default::default())
            .unwrap_err()
            .to_string();
        assert_eq!(text, core);
        assert!(text.starts_with("Error: invalid arguments: "), "{text}");
    }
    // An unknown tool stays a protocol error, whatever its arguments.
    server.send(json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
        "params":{"name":"nope","arguments":"x"}}));
    let reply = server.receive();
    assert_eq!(
        reply["error"]["message"],
        "unknown tool \"nope\"; this server has only ask_user_question"
    );
}

#[test]
fn calls_sent_before_the_client_closes_stdin_still_get_their_results() {
    // The whole session in one piece, stdin closed behind it (`… | ask-user-mcp`): the
    // calls start after the end of input was seen, and need no human.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("session.jsonl");
    let mut lines = vec![
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
            "capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    for id in 2..6 {
        lines.push(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"ask_user_question","arguments":{"questions":[]}}}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let home = tempfile::tempdir().unwrap();
    let output = super::support::server(home.path())
        .args(["--via", "none"])
        .env("ASK_USER_STORE", "memory")
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    let replies: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let texts: Vec<&str> = replies
        .iter()
        .filter(|r| r["id"].as_u64().unwrap_or(0) >= 2)
        .map(|r| r["result"]["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts, ["Error: invalid arguments: questions: empty, add at least one question"; 4],
        "{replies:?}"
    );
}
