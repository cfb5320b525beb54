//! The model calls and the scripted answers the suites share.

use std::sync::{Arc, Mutex};

use ask_user_core::{AnswerItem, Answers};
use ask_user_scripted::Scripted;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::fake_model::{FakeModel, last_tool_messages};

/// What DeepSeek wrote for this tool: camelCase `multiSelect`, options as plain strings, spaces
/// after separators (lenient shapes the core accepts).
pub const DEEPSEEK_ARGS: &str = r#"{"questions": [{"id": "db", "header": "Database", "question": "Which database should the new service use?", "multiSelect": false, "options": ["PostgreSQL (Recommended)", "SQLite", "MySQL"]}]}"#;

/// Two calls in one response: asked one after the other in call order, answered in order.
pub const TWO_CALLS: &[(&str, &str)] = &[
    (
        "call_a",
        r#"{"questions":[{"id":"deploy","question":"Deploy to production now?","options":["Yes","No"]}]}"#,
    ),
    (
        "call_b",
        r#"{"questions":[{"id":"name","question":"What should the release be called?"}]}"#,
    ),
];

/// Answers `deploy` with "Yes" and `name` with the own answer "v2", recording the order asked.
pub fn two_call_answerer(asked: Arc<Mutex<Vec<String>>>) -> Scripted {
    Scripted::from_fn(move |request| {
        let id = request.questions()[0].id.clone();
        asked.lock().unwrap().push(id.clone());
        let item = match id.as_str() {
            "deploy" => AnswerItem::selected(&id, ["Yes"]),
            _ => AnswerItem::custom(&id, "v2"),
        };
        Ok(Answers {
            answers: vec![item],
        })
    })
}

/// After [`TWO_CALLS`] answered by [`two_call_answerer`]: both were asked in call order, the
/// model's second request carries both results in that order, and its final `answer` quotes
/// both.
pub fn assert_two_calls_answered(model: &FakeModel, asked: &Mutex<Vec<String>>, answer: &str) {
    assert_eq!(*asked.lock().unwrap(), ["deploy", "name"]);
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![
            json!({"role": "tool", "tool_call_id": "call_a",
                   "content": r#"{"answers":[{"id":"deploy","selected":["Yes"]}]}"#}),
            json!({"role": "tool", "tool_call_id": "call_b",
                   "content": r#"{"answers":[{"id":"name","selected":[],"custom":"v2"}]}"#}),
        ]
    );
    assert_eq!(
        answer,
        r#"I received: {"answers":[{"id":"deploy","selected":["Yes"]}]} | {"answers":[{"id":"name","selected":[],"custom":"v2"}]}"#
    );
}

/// After one call answered by a dismissal: the model read exactly the core's dismissal text
/// as the call's result, and its final `answer` quotes it.
pub fn assert_dismissal_reached_the_model(model: &FakeModel, answer: &str) {
    let dismissed = "Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on.";
    assert_eq!(
        last_tool_messages(&model.requests()[1].body),
        vec![json!({"role": "tool", "tool_call_id": "call_0", "content": dismissed})]
    );
    assert_eq!(answer, format!("I received: {dismissed}"));
}
