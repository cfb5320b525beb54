//! `ask_user_rig::agent_loop` against the fake model, answered by the scripted answerer.

use std::sync::{Arc, Mutex};

use ask_user_core::definition::{ProviderFormat, definition};
use ask_user_core::{AskError, AskUserQuestionTool, ExecutionContext};
use std::time::Duration;

use ask_user_rig::agent_loop::{
    AgentLoop, DEFAULT_MODEL, Endpoint, LoopError, Retry, unknown_tool_text,
};
use ask_user_scripted::Scripted;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::calls::{
    DEEPSEEK_ARGS, TWO_CALLS, assert_dismissal_reached_the_model, assert_two_calls_answered,
    two_call_answerer,
};
use super::fake_model::{FakeModel, Reply, ask_then_quote, last_tool_messages, tool_calls};

fn user(task: &str) -> Vec<Value> {
    vec![json!({"role": "user", "content": task})]
}

fn agent(model: &FakeModel, answerer: Scripted) -> AgentLoop {
    let endpoint = Endpoint::new(&model.base_url, "test-key", DEFAULT_MODEL);
    // Retries wait a millisecond here, so a test of them takes no time.
    AgentLoop::new(endpoint, AskUserQuestionTool::new(Arc::new(answerer))).with_retry(Retry {
        attempts: 3,
        base: Duration::from_millis(1),
        max: Duration::from_millis(1),
    })
}

#[tokio::test]
async fn a_real_model_call_is_answered_and_the_tool_message_carries_the_answer_bytes() {
    // A thinking model's reply: the loop must send it back as received, reasoning included.
    let mut call = tool_calls(&[("call_0", DEEPSEEK_ARGS)]);
    call["reasoning_content"] = json!("The user has to choose the database.");
    let reply = call.clone();
    let model = FakeModel::start(move |round, body| match round {
        0 => Reply::Message(reply.clone()),
        _ => Reply::Message(super::fake_model::quote(body)),
    })
    .await;
    let answerer =
        Scripted::from_json(r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#).unwrap();
    let finished = agent(&model, answerer)
        .run(user("Set up the service"), &ExecutionContext::default())
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    // First request: the user message and the core's definition, byte for byte.
    let first = &requests[0];
    assert_eq!(first.authorization.as_deref(), Some("Bearer test-key"));
    assert_eq!(first.body["model"], "deepseek-flash");
    assert_eq!(first.body["messages"], json!(user("Set up the service")));
    assert!(
        first.raw.contains(&format!(
            r#""tools":[{}]"#,
            definition(ProviderFormat::OpenAiChat)
        )),
        "{}",
        first.raw
    );
    // Second request: the assistant's call as received, then exactly one tool message whose
    // content is the answer's compact JSON.
    let answer = r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages,
        vec![
            json!({"role": "user", "content": "Set up the service"}),
            call,
            json!({"role": "tool", "tool_call_id": "call_0", "content": answer}),
        ]
    );
    // The tool message's bytes on the wire.
    assert!(
        requests[1].raw.contains(
            r#"{"role":"tool","tool_call_id":"call_0","content":"{\"answers\":[{\"id\":\"db\",\"selected\":[\"SQLite\"]}]}"}]"#
        ),
        "{}",
        requests[1].raw
    );
    assert_eq!(finished.answer, format!("I received: {answer}"));
    assert_eq!(finished.messages.len(), 4);
    assert_eq!(finished.messages[..3], messages[..]);
}

#[tokio::test]
async fn a_dismissal_reaches_the_model_as_the_error_text() {
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let finished = agent(&model, Scripted::from_fn(|_| Err(AskError::Dismissed)))
        .run(user("Set up the service"), &ExecutionContext::default())
        .await
        .unwrap();
    assert_dismissal_reached_the_model(&model, &finished.answer);
}

#[tokio::test]
async fn two_tool_calls_in_one_response_are_both_answered_in_order() {
    let model = FakeModel::start(ask_then_quote(TWO_CALLS)).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let finished = agent(&model, two_call_answerer(asked.clone()))
        .run(user("Ship it"), &ExecutionContext::default())
        .await
        .unwrap();
    assert_two_calls_answered(&model, &asked, &finished.answer);
}

#[tokio::test]
async fn invalid_arguments_and_unknown_tools_get_their_error_texts() {
    let model = FakeModel::start(|round, body| match round {
        0 => Reply::Message(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "ask_user_question", "arguments": r#"{"questions":[]}"#}},
            {"id": "c2", "type": "function",
             "function": {"name": "run_shell", "arguments": r#"{"cmd":"ls"}"#}},
        ]})),
        _ => Reply::Message(super::fake_model::quote(body)),
    })
    .await;
    let answerer = Scripted::from_fn(|_| panic!("nobody is asked"));
    agent(&model, answerer)
        .run(user("Go"), &ExecutionContext::default())
        .await
        .unwrap();
    assert_eq!(
        unknown_tool_text("run_shell"),
        r#"Error: there is no tool named "run_shell"; the only tool is ask_user_question"#
    );
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![
            json!({"role": "tool", "tool_call_id": "c1",
                   "content": "Error: invalid arguments: questions: empty, add at least one question"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": unknown_tool_text("run_shell")}),
        ]
    );
}

#[tokio::test]
async fn the_loop_stops_on_an_error_status_and_after_its_round_budget() {
    let model = FakeModel::start(|_, _| Reply::Status(401, r#"{"error":"bad key"}"#)).await;
    let error = agent(&model, Scripted::from_fn(|_| Err(AskError::Dismissed)))
        .run(user("Go"), &ExecutionContext::default())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"the endpoint answered 401 Unauthorized: {"error":"bad key"}"#
    );

    let model = FakeModel::start(|_, _| Reply::Message(tool_calls(&[("c", DEEPSEEK_ARGS)]))).await;
    let error = agent(&model, Scripted::from_fn(|_| Err(AskError::Dismissed)))
        .with_max_rounds(3)
        .run(user("Go"), &ExecutionContext::default())
        .await
        .unwrap_err();
    assert!(matches!(error.error, LoopError::TooManyRounds(3)));
    assert_eq!(
        error.to_string(),
        "the model was still calling tools after 3 model calls"
    );
    assert_eq!(model.requests().len(), 3);
}

#[test]
fn the_endpoint_comes_from_the_environment_with_deepseek_as_default() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert_eq!(
        Endpoint::from_lookup(env(&[("DEEPSEEK_API_KEY", "sk-d")])).unwrap(),
        Endpoint::new("https://api.deepseek.com", "sk-d", "deepseek-flash")
    );
    assert_eq!(
        Endpoint::from_lookup(env(&[
            ("AGENT_API_KEY", "sk-a"),
            ("DEEPSEEK_API_KEY", "sk-d"),
            ("AGENT_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("AGENT_MODEL", "local"),
        ]))
        .unwrap(),
        Endpoint::new("http://127.0.0.1:8080/v1", "sk-a", "local")
    );
    let missing = Endpoint::from_lookup(env(&[])).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "set AGENT_API_KEY (or DEEPSEEK_API_KEY) to the endpoint's API key"
    );
    assert!(!format!("{:?}", Endpoint::new("u", "sk-secret", "m")).contains("sk-secret"));
}

#[tokio::test]
async fn an_aborted_turn_stops_the_loop() {
    // Cancelled before the run: no request is sent.
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let cancelled = ExecutionContext::default();
    cancelled.cancel.cancel();
    let error = agent(&model, Scripted::from_fn(|_| panic!("nobody is asked")))
        .run(user("Go"), &cancelled)
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "the turn was aborted");
    assert_eq!(model.requests().len(), 0);

    // Cancelled while the human is asked: the call ends as aborted and the model is not
    // called again.
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let context = ExecutionContext::default();
    let token = context.cancel.clone();
    let answerer = Scripted::from_fn(move |_| {
        token.cancel();
        Err(AskError::Cancelled)
    });
    let error = agent(&model, answerer)
        .run(user("Go"), &context)
        .await
        .unwrap_err();
    assert!(matches!(error.error, LoopError::Aborted));
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_on_the_same_conversation() {
    let answer = r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    let model = FakeModel::start(|round, body| match round {
        0 => Reply::Message(tool_calls(&[("call_0", DEEPSEEK_ARGS)])),
        1 => Reply::RetryAfter(429, r#"{"error":"rate limited"}"#, 0),
        2 => Reply::Status(503, "overloaded"),
        _ => Reply::Message(super::fake_model::quote(body)),
    })
    .await;
    let asked = Arc::new(Mutex::new(0));
    let count = asked.clone();
    let answerer = Scripted::from_fn(move |_| {
        *count.lock().unwrap() += 1;
        Ok(serde_json::from_str(r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#).unwrap())
    });
    let finished = agent(&model, answerer)
        .run(user("Go"), &ExecutionContext::default())
        .await
        .unwrap();
    assert_eq!(finished.answer, format!("I received: {answer}"));
    assert_eq!(*asked.lock().unwrap(), 1, "the human is asked once");
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    // Each retry sent the same conversation, the human's answer included.
    assert_eq!(requests[1].raw, requests[2].raw);
    assert_eq!(requests[2].raw, requests[3].raw);
}

#[tokio::test]
async fn a_loop_that_stops_returns_the_conversation_with_the_answers_and_goes_on_from_it() {
    let answer = r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    let down = Arc::new(Mutex::new(true));
    let is_down = down.clone();
    let model = FakeModel::start(move |round, body| match round {
        0 => Reply::Message(tool_calls(&[("call_0", DEEPSEEK_ARGS)])),
        _ if *is_down.lock().unwrap() => Reply::Status(500, "down"),
        _ => Reply::Message(super::fake_model::quote(body)),
    })
    .await;
    let answerer =
        || Scripted::from_json(r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#).unwrap();
    let stopped = agent(&model, answerer())
        .run(user("Go"), &ExecutionContext::default())
        .await
        .unwrap_err();
    assert_eq!(
        stopped.to_string(),
        "the endpoint answered 500 Internal Server Error: down"
    );
    assert_eq!(
        model.requests().len(),
        1 + 3,
        "one call, then three sends of the next"
    );
    let last = stopped.messages.last().unwrap();
    assert_eq!(
        last,
        &json!({"role": "tool", "tool_call_id": "call_0", "content": answer})
    );
    // Going on from the saved conversation asks nobody again.
    *down.lock().unwrap() = false;
    let finished = agent(
        &model,
        Scripted::from_fn(|_| panic!("the human already answered")),
    )
    .run(stopped.messages, &ExecutionContext::default())
    .await
    .unwrap();
    assert_eq!(finished.answer, format!("I received: {answer}"));
}

#[tokio::test]
async fn a_reply_cut_at_the_token_limit_is_not_a_final_answer() {
    let model = FakeModel::start(|_, _| {
        Reply::Finished(super::fake_model::text("The plan is to fir"), "length")
    })
    .await;
    let stopped = agent(&model, Scripted::from_fn(|_| panic!("nobody is asked")))
        .run(user("Go"), &ExecutionContext::default())
        .await
        .unwrap_err();
    assert!(matches!(&stopped.error, LoopError::Truncated(r) if r == "length"));
    assert_eq!(
        stopped.to_string(),
        "the model's reply was cut short (finish_reason \"length\"); raise the endpoint's max_tokens or shorten the task"
    );
    // Not retried: the same request would be cut again.
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn retry_waits_double_up_to_the_cap_and_follow_retry_after() {
    let retry = Retry::default();
    let s = Duration::from_secs;
    assert_eq!(retry.delay(1, None), s(1));
    assert_eq!(retry.delay(2, None), s(2));
    assert_eq!(retry.delay(4, None), s(8));
    assert_eq!(retry.delay(40, None), s(60));
    assert_eq!(retry.delay(1, Some(s(7))), s(7));
    assert_eq!(retry.delay(1, Some(s(3600))), s(60));
}

/// A stopped loop's conversation (the human's answers in it) is saved only for its user: a new
/// file of mode 0600 under a name nobody can plant beforehand, never through an existing file
/// or link.
#[test]
fn a_saved_conversation_is_readable_by_its_user_only_and_never_written_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let messages = vec![serde_json::json!({"role": "tool", "content": "my answer"})];
    let first = ask_user_rig::agent_loop::save_conversation(dir.path(), &messages).unwrap();
    assert!(first.starts_with(dir.path()), "{}", first.display());
    let mode = std::fs::metadata(&first).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let back: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    assert_eq!(back, messages);
    let second = ask_user_rig::agent_loop::save_conversation(dir.path(), &messages).unwrap();
    assert_ne!(first, second, "each save is a new file");
    // The old fixed name, planted as a link elsewhere, is not written through.
    let elsewhere = dir.path().join("elsewhere.json");
    let planted = dir.path().join(format!(
        "agent-loop-conversation-{}.json",
        std::process::id()
    ));
    std::os::unix::fs::symlink(&elsewhere, &planted).unwrap();
    ask_user_rig::agent_loop::save_conversation(dir.path(), &messages).unwrap();
    assert!(!elsewhere.exists());
}
