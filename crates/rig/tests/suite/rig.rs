//! `AskUser` in a rig agent (rig-agent 0.44 over rig-core's OpenAI-compatible chat-completions
//! client, DeepSeek dialect, and OpenAI's for the main case) against the fake model, answered by the scripted answerer.

use std::sync::{Arc, Mutex};

use ask_user_core::definition::{ProviderFormat, definition};
use ask_user_core::{AskError, Caller, ExecutionContext};
use ask_user_rig::AskUser;
use ask_user_scripted::Scripted;
use pretty_assertions::assert_eq;
use rig_agent::AgentBuilder;
use rig_agent::tool::ToolContext;
use rig_core::providers::openai::OpenAIConfig;
use rig_core::providers::openai::wire::{DEEPSEEK, Dialect, OPENAI};
use serde_json::json;

use super::calls::{
    DEEPSEEK_ARGS, TWO_CALLS, assert_dismissal_reached_the_model, assert_two_calls_answered,
    two_call_answerer,
};
use super::fake_model::{FakeModel, ask_then_quote, last_tool_messages};

fn agent(model: &FakeModel, tool: AskUser) -> rig_agent::Agent {
    agent_on(&DEEPSEEK, model, tool)
}

fn agent_on(dialect: &Dialect, model: &FakeModel, tool: AskUser) -> rig_agent::Agent {
    let http = rig_reqwest::ReqwestClient::from(rig_reqwest::reqwest::Client::new());
    let chat = OpenAIConfig::with_key(dialect, "test-key")
        .with_base_url(&model.base_url)
        .connect(http)
        .chat("deepseek-chat");
    AgentBuilder::new(chat).tool(tool).build()
}

#[tokio::test]
async fn a_real_model_call_is_answered_and_the_tool_message_carries_the_answer_bytes() {
    answer_through(&DEEPSEEK).await;
}

/// The same turn with rig's plain OpenAI dialect of the client.
#[tokio::test]
async fn the_openai_dialect_carries_the_same_tool_message() {
    answer_through(&OPENAI).await;
}

async fn answer_through(dialect: &Dialect) {
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let answerer =
        Scripted::from_json(r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#).unwrap();
    let answer = agent_on(dialect, &model, AskUser::new(answerer))
        .prompt("Set up the service")
        .max_turns(3)
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].authorization.as_deref(),
        Some("Bearer test-key")
    );
    // rig sends the core's definition unchanged.
    let tools = requests[0].body["tools"].clone();
    let expected: serde_json::Value =
        serde_json::from_str(&definition(ProviderFormat::OpenAiChat)).unwrap();
    assert_eq!(tools, json!([expected]));
    let answer_json = r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    assert_eq!(
        last_tool_messages(&requests[1].body),
        vec![json!({"role": "tool", "tool_call_id": "call_0", "content": answer_json})]
    );
    // The call rig sent back is the model's call (rig re-serialises the arguments compactly).
    let messages = requests[1].body["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2]["tool_calls"][0];
    assert_eq!(call["id"], "call_0");
    assert_eq!(call["function"]["name"], "ask_user_question");
    let sent: serde_json::Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        sent,
        serde_json::from_str::<serde_json::Value>(DEEPSEEK_ARGS).unwrap()
    );
    assert_eq!(answer.to_string(), format!("I received: {answer_json}"));
}

#[tokio::test]
async fn a_dismissal_reaches_the_model_as_exactly_the_error_text() {
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let tool = AskUser::new(Scripted::from_fn(|_| Err(AskError::Dismissed)));
    let answer = agent(&model, tool)
        .prompt("Set up the service")
        .max_turns(3)
        .await
        .unwrap();
    assert_dismissal_reached_the_model(&model, &answer.to_string());
}

#[tokio::test]
async fn two_tool_calls_in_one_response_are_both_answered_in_order() {
    let model = FakeModel::start(ask_then_quote(TWO_CALLS)).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let tool = AskUser::new(two_call_answerer(asked.clone()));
    let answer = agent(&model, tool)
        .prompt("Ship it")
        .max_turns(3)
        .await
        .unwrap();
    assert_two_calls_answered(&model, &asked, &answer.to_string());
}

#[tokio::test]
async fn invalid_arguments_reach_the_model_as_the_core_text() {
    let model = FakeModel::start(ask_then_quote(&[("c1", r#"{"questions":[]}"#)])).await;
    let tool = AskUser::new(Scripted::from_fn(|_| panic!("nobody is asked")));
    agent(&model, tool).prompt("Go").max_turns(3).await.unwrap();
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![json!({"role": "tool", "tool_call_id": "c1",
                    "content": "Error: invalid arguments: questions: empty, add at least one question"})]
    );
}

#[tokio::test]
async fn the_run_context_reaches_the_call_a_sub_agent_is_refused() {
    let model = FakeModel::start(ask_then_quote(&[("call_0", DEEPSEEK_ARGS)])).await;
    let tool = AskUser::new(Scripted::from_fn(|_| panic!("nobody is asked")));
    let context = ExecutionContext::default().with_caller(Caller::Delegated {
        parent: "planner".to_owned(),
    });
    agent(&model, tool)
        .prompt("Go")
        .max_turns(3)
        .tool_context(ToolContext::new().with_scope(Arc::new(context)))
        .await
        .unwrap();
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![json!({"role": "tool", "tool_call_id": "call_0",
                    "content": "Error: sub-agents cannot ask the user; put the question in your final result so the agent that started you can ask it."})]
    );
}

/// Arguments that are not a JSON object never reach the tool: rig answers them itself, with its
/// own text (the loop gives them to the core, which reads empty arguments as `{}`).
#[tokio::test]
async fn rig_answers_arguments_that_are_not_an_object_itself() {
    let model = FakeModel::start(ask_then_quote(&[("c1", r#"["Deploy?"]"#)])).await;
    let tool = AskUser::new(Scripted::from_fn(|_| panic!("nobody is asked")));
    agent(&model, tool).prompt("Go").max_turns(3).await.unwrap();
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![json!({"role": "tool", "tool_call_id": "c1",
                    "content": r#"The arguments for tool `ask_user_question` are not a JSON object: ["Deploy?"]. Call the tool again with a JSON object as its arguments."#})]
    );
}
