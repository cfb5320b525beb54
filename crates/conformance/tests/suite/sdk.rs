//! Every provider export checked with the provider's own SDK, through
//! `tools/check_exports.py` in the venv of `scripts/setup` (versions pinned in
//! `tools/requirements.txt`): OpenAI's `ChatCompletionFunctionToolParam` and
//! `FunctionToolParam`, Anthropic's `ToolParam`, Google GenAI's `FunctionDeclaration` (a round
//! trip that drops nothing), MCP's `Tool`; strict exports must be a fixed point of the SDK's
//! own strict-schema transform. Nothing is mocked: the SDK packages are the real ones.
//!
//! Each check is shown to fail on a broken export (the Responses export without `strict`,
//! the bug of the issue, among them), so a checker that accepts everything would not pass.
//!
//! DeepSeek publishes no SDK type: its strict export is checked against DeepSeek's documented
//! rules in `ask-user-core`'s definition tests (Rust only); here it also passes OpenAI's
//! Chat Completions type, whose shape DeepSeek's API follows.

use ask_user_conformance::run_python_tool;
use ask_user_core::definition::{
    PARAMETERS, PARAMETERS_STRICT, PARAMETERS_STRICT_ANTHROPIC, PARAMETERS_STRICT_DEEPSEEK,
    ProviderFormat, definition,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Runs every check in one Python process; one list of problems per check.
fn check(items: &[Value]) -> Vec<Vec<String>> {
    let output = run_python_tool("check_exports.py", &serde_json::to_vec(items).unwrap());
    let problems: Vec<Vec<String>> = serde_json::from_slice(&output).unwrap();
    assert_eq!(problems.len(), items.len());
    problems
}

fn export(format: &str, export: Value) -> Value {
    json!({ "kind": "export", "format": format, "export": export })
}

fn parsed(format: ProviderFormat) -> Value {
    serde_json::from_str(&definition(format)).unwrap()
}

#[test]
fn every_export_validates_against_its_providers_sdk_types() {
    let items: Vec<Value> = ProviderFormat::ALL
        .into_iter()
        .map(|f| export(f.name(), parsed(f)))
        .collect();
    let problems = check(&items);
    let found: Vec<(&str, &Vec<String>)> = ProviderFormat::ALL
        .iter()
        .map(|f| f.name())
        .zip(&problems)
        .filter(|(_, p)| !p.is_empty())
        .collect();
    assert_eq!(found, Vec::<(&str, &Vec<String>)>::new());
}

#[test]
fn the_sdk_checks_refuse_broken_exports() {
    let schema = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
    // The Responses export before the strict variants: no `strict`, which the Responses API reads as true.
    let mut no_strict = parsed(ProviderFormat::OpenAiResponses);
    no_strict.as_object_mut().unwrap().remove("strict");
    // Strict exports carrying a schema their provider's strict mode reads differently.
    let mut chat_lenient_schema = parsed(ProviderFormat::OpenAiChatStrict);
    chat_lenient_schema["function"]["parameters"] = schema(PARAMETERS);
    let mut anthropic_type_lists = parsed(ProviderFormat::AnthropicStrict);
    anthropic_type_lists["input_schema"] = schema(PARAMETERS_STRICT);
    let mut responses_not_strict = parsed(ProviderFormat::OpenAiResponsesStrict);
    responses_not_strict["strict"] = json!(false);
    // Keys the provider's type does not know, or that a round trip drops.
    let mut chat_unknown_key = parsed(ProviderFormat::OpenAiChat);
    chat_unknown_key["function"]["strict_mode"] = json!(true);
    let mut gemini_unknown_keyword = parsed(ProviderFormat::Gemini);
    gemini_unknown_keyword["parameters"]["$comment"] = json!("dropped");
    let mut mcp_dropped = parsed(ProviderFormat::Mcp);
    mcp_dropped["input_schema"] = schema(PARAMETERS);
    let mut anthropic_no_name = parsed(ProviderFormat::Anthropic);
    anthropic_no_name.as_object_mut().unwrap().remove("name");

    let cases = [
        ("openai-responses", no_strict, "strict: Field required"),
        (
            "openai-chat-strict",
            chat_lenient_schema,
            "the OpenAI SDK's strict transform changes the schema",
        ),
        (
            "anthropic-strict",
            anthropic_type_lists,
            "the Anthropic SDK's strict transform refuses the schema",
        ),
        (
            "openai-responses-strict",
            responses_not_strict,
            "strict: not true",
        ),
        (
            "openai-chat",
            chat_unknown_key,
            "function.strict_mode: not a field of FunctionDefinition",
        ),
        ("gemini", gemini_unknown_keyword, "parameters.$comment"),
        ("mcp", mcp_dropped, "Tool round trip changes the export"),
        ("anthropic", anthropic_no_name, "name: Field required"),
    ];
    let items: Vec<Value> = cases
        .iter()
        .map(|(format, broken, _)| export(format, broken.clone()))
        .collect();
    for ((format, _, expected), problems) in cases.iter().zip(check(&items)) {
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{format}: expected a problem containing {expected:?}, got {problems:?}"
        );
    }
}

#[test]
fn strict_schemas_admit_what_a_strict_model_sends_and_refuse_the_lenient_form() {
    // The same verdicts as the Rust validator of ask-user-core's `strict` tests, here from a
    // real JSON Schema implementation (jsonschema, Draft 2020-12).
    let lenient = json!({"questions": [
        {"id": "db", "question": "Which database?", "options": [{"label": "PostgreSQL"}]},
        {"id": "name", "question": "What name?"}
    ]});
    let nulls = json!({"questions": [
        {"id": "db", "question": "Which database?", "header": null,
         "options": [{"label": "PostgreSQL", "description": null}], "multi_select": null},
        {"id": "name", "question": "What name?", "header": null, "options": [], "multi_select": false}
    ]});
    let neutral = json!({"questions": [
        {"id": "db", "question": "Which database?", "header": "",
         "options": [{"label": "PostgreSQL", "description": ""}], "multi_select": false},
        {"id": "name", "question": "What name?", "header": "", "options": [], "multi_select": false}
    ]});
    let extra_key = json!({"questions": [
        {"id": "name", "question": "What name?", "header": null, "options": [],
         "multi_select": null, "urgency": "high"}
    ]});
    let empty = json!({"questions": []});
    let schemas = [
        ("canonical", PARAMETERS),
        ("openai strict", PARAMETERS_STRICT),
        ("anthropic strict", PARAMETERS_STRICT_ANTHROPIC),
        ("deepseek strict", PARAMETERS_STRICT_DEEPSEEK),
    ];
    let instances = [
        ("lenient", &lenient),
        ("nulls", &nulls),
        ("neutral", &neutral),
        ("extra key", &extra_key),
        ("empty", &empty),
    ];
    let mut items = Vec::new();
    for (_, schema) in schemas {
        for (_, instance) in instances {
            let schema: Value = serde_json::from_str(schema).unwrap();
            items.push(json!({"kind": "instance", "schema": schema, "instance": instance}));
        }
    }
    let verdicts: Vec<bool> = check(&items).iter().map(Vec::is_empty).collect();
    let table: Vec<(&str, Vec<(&str, bool)>)> = schemas
        .iter()
        .zip(verdicts.chunks(instances.len()))
        .map(|((name, _), row)| {
            (
                *name,
                instances
                    .iter()
                    .map(|(i, _)| *i)
                    .zip(row.iter().copied())
                    .collect(),
            )
        })
        .collect();
    // OpenAI's and Anthropic's strict schemas accept and refuse the same instances.
    let strict = vec![
        ("lenient", false),
        ("nulls", true),
        ("neutral", true),
        ("extra key", false),
        ("empty", false),
    ];
    let expected = vec![
        (
            "canonical",
            vec![
                ("lenient", true),
                ("nulls", false),
                ("neutral", true),
                ("extra key", false),
                ("empty", false),
            ],
        ),
        ("openai strict", strict.clone()),
        ("anthropic strict", strict),
        (
            "deepseek strict",
            vec![
                ("lenient", false),
                ("nulls", false),
                ("neutral", true),
                ("extra key", false),
                // DeepSeek's strict mode has no minItems; the decoder refuses an empty batch.
                ("empty", true),
            ],
        ),
    ];
    assert_eq!(table, expected);
}
