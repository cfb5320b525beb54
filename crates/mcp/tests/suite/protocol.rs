//! JSON-RPC at the edges (issue 10), raw lines over stdio: a line that is not JSON gets a
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
    let mut server = Server::start(&["--via", "none"]);
    server.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"ask_user_question","arguments":{"questions":[]}}}));
    server.close_stdin();
    let reply = server.receive();
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "Error: invalid arguments: questions: empty, add at least one question"
    );
}
