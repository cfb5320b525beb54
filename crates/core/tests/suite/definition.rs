//! The model-facing definition (docs/contract.md §2): golden bytes per provider format, the
//! same bytes in a fresh process, and the strict exports against each provider's documented
//! strict-mode rules (the providers' SDKs check them too, in `crates/conformance`).
//!
//! On a mismatch the current bytes are written next to the golden file as `*.current.json`;
//! `ASK_USER_BLESS=1 cargo test -p ask-user-core` rewrites the golden files (review the diff).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use ask_user_core::definition::{
    DESCRIPTION, NAME, OUTPUT_SCHEMA, PARAMETERS, PARAMETERS_STRICT, PARAMETERS_STRICT_ANTHROPIC,
    PARAMETERS_STRICT_DEEPSEEK, ProviderFormat, definition,
};
use serde_json::{Map, Value};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/definition")
}

/// `node`'s `required` names every one of its properties, in their order.
fn assert_every_property_required(node: &Map<String, Value>, what: &str) {
    let properties: Vec<&str> = node["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let required: Vec<&str> = node["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(properties, required, "{what}: every property required");
}

#[test]
fn every_export_matches_its_golden_bytes() {
    let dir = golden_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let bless = std::env::var_os("ASK_USER_BLESS").is_some();
    let mut stale = Vec::new();
    for format in ProviderFormat::ALL {
        let path = dir.join(format!("{format}.json"));
        let current = definition(format);
        if bless {
            std::fs::write(&path, &current).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        if golden != current {
            std::fs::write(dir.join(format!("{format}.current.json")), &current).unwrap();
            stale.push(format.name());
        }
    }
    assert!(
        stale.is_empty(),
        "definition bytes changed for {stale:?}: this breaks providers' prompt caches. \
         Review tests/golden/definition/*.current.json and rerun with ASK_USER_BLESS=1 if intended."
    );
    // No golden file outlives its format (a renamed format would leave its old bytes behind).
    let expected: BTreeSet<String> = ProviderFormat::ALL
        .iter()
        .map(|f| format!("{f}.json"))
        .collect();
    let committed: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".current.json"))
        .collect();
    assert_eq!(committed, expected, "golden files and formats differ");
}

/// The child half of [`a_fresh_process_gives_the_same_bytes`], not a check of its own (so
/// ignored in ordinary runs): prints every export, one per line.
#[test]
#[ignore = "run by a_fresh_process_gives_the_same_bytes in a child process"]
fn print_exports_for_a_parent_process() {
    // libtest writes "test NAME ... " without a newline before the test's own output.
    println!();
    for format in ProviderFormat::ALL {
        println!("export {format} {}", definition(format));
    }
}

#[test]
fn a_fresh_process_gives_the_same_bytes() {
    // Another process has other hash seeds, addresses and allocation order: nothing of that
    // may reach the bytes (the golden test above compares with bytes of an earlier build).
    let home = tempfile::tempdir().unwrap();
    let mut process = Command::new(std::env::current_exe().unwrap());
    let output = ask_user_test_support::hermetic(&mut process, home.path())
        .args([
            "--exact",
            "suite::definition::print_exports_for_a_parent_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let printed: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("export "))
        .map(|rest| {
            let (name, bytes) = rest.split_once(' ').unwrap();
            (name.to_owned(), bytes.to_owned())
        })
        .collect();
    let names: Vec<&str> = printed.iter().map(|(name, _)| name.as_str()).collect();
    let all: Vec<&str> = ProviderFormat::ALL.map(ProviderFormat::name).to_vec();
    assert_eq!(names, all);
    for ((name, bytes), format) in printed.iter().zip(ProviderFormat::ALL) {
        assert!(
            *bytes == definition(format),
            "{name} differs in a fresh process"
        );
    }
}

#[test]
fn every_export_is_valid_json_carrying_the_same_schema() {
    let parameters: Value = serde_json::from_str(PARAMETERS).unwrap();
    let strict: Value = serde_json::from_str(PARAMETERS_STRICT).unwrap();
    let anthropic_strict: Value = serde_json::from_str(PARAMETERS_STRICT_ANTHROPIC).unwrap();
    let deepseek_strict: Value = serde_json::from_str(PARAMETERS_STRICT_DEEPSEEK).unwrap();
    let output: Value = serde_json::from_str(OUTPUT_SCHEMA).unwrap();
    let get = |format, pointer: &str| -> Value {
        let value: Value = serde_json::from_str(&definition(format)).unwrap();
        value.pointer(pointer).cloned().unwrap_or(Value::Null)
    };
    use ProviderFormat as F;
    assert_eq!(get(F::Canonical, "/parameters"), parameters);
    assert_eq!(get(F::OpenAiChat, "/function/parameters"), parameters);
    assert_eq!(get(F::OpenAiChat, "/function/name"), NAME);
    assert_eq!(get(F::OpenAiChatStrict, "/function/parameters"), strict);
    assert_eq!(get(F::OpenAiResponses, "/parameters"), parameters);
    assert_eq!(get(F::OpenAiResponsesStrict, "/parameters"), strict);
    assert_eq!(get(F::Anthropic, "/input_schema"), parameters);
    assert_eq!(get(F::AnthropicStrict, "/input_schema"), anthropic_strict);
    assert_eq!(
        get(F::DeepSeekStrict, "/function/parameters"),
        deepseek_strict
    );
    assert_eq!(get(F::Mcp, "/inputSchema"), parameters);
    assert_eq!(get(F::Mcp, "/outputSchema"), output);
    assert_eq!(get(F::Gemini, "/parameters/type"), "OBJECT");
    assert_eq!(
        get(
            F::Gemini,
            "/parameters/properties/questions/items/properties/multi_select/type"
        ),
        "BOOLEAN"
    );
    // `strict`: said explicitly where the API would otherwise choose (Responses treats a
    // missing `strict` as true), true in every strict export, absent elsewhere.
    for format in ProviderFormat::ALL {
        let value: Value = serde_json::from_str(&definition(format)).unwrap();
        let strict = value.get("strict").or(value.pointer("/function/strict"));
        let expected = match format {
            F::OpenAiResponses => Some(&Value::Bool(false)),
            _ if format.is_strict() => Some(&Value::Bool(true)),
            _ => None,
        };
        assert_eq!(strict, expected, "{format}");
    }
    for format in ProviderFormat::ALL {
        let text = definition(format);
        assert!(
            !text.contains('\n') && !text.contains(": "),
            "{format} is not compact"
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        let description = value
            .pointer("/description")
            .or(value.pointer("/function/description"));
        assert_eq!(
            description.and_then(Value::as_str),
            Some(DESCRIPTION),
            "{format}"
        );
    }
}

/// Every schema node under `schema` (itself, properties, items, anyOf branches), with a path.
fn nodes<'v>(schema: &'v Value, path: &str, out: &mut Vec<(String, &'v Map<String, Value>)>) {
    let Some(map) = schema.as_object() else {
        panic!("{path}: a schema must be an object, got {schema}");
    };
    out.push((path.to_owned(), map));
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            nodes(property, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = map.get("items") {
        nodes(items, &format!("{path}[]"), out);
    }
    for (i, branch) in map
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        nodes(branch, &format!("{path}|{i}"), out);
    }
}

fn schema_nodes(schema: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    nodes(schema, "$", &mut out);
    out
}

/// The names a schema node's `type` allows (`"string"`, `["string","null"]` or an anyOf of
/// single types).
fn types(node: &Map<String, Value>) -> Vec<&str> {
    match (node.get("type"), node.get("anyOf")) {
        (Some(Value::String(ty)), _) => vec![ty.as_str()],
        (Some(Value::Array(tys)), _) => tys.iter().filter_map(Value::as_str).collect(),
        (None, Some(Value::Array(branches))) => branches
            .iter()
            .filter_map(|b| b.get("type").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn strict_exports_close_every_object_require_every_field_and_keep_the_field_names() {
    let canonical: Value = serde_json::from_str(PARAMETERS).unwrap();
    let optional: BTreeSet<String> = schema_nodes(&canonical)
        .into_iter()
        .filter_map(|(path, node)| {
            let properties = node.get("properties")?.as_object()?;
            let required = node["required"].as_array().unwrap();
            Some(
                properties
                    .keys()
                    .filter(|k| !required.contains(&Value::String((*k).clone())))
                    .map(|k| format!("{path}.{k}"))
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .collect();
    assert_eq!(
        optional.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "$.questions[].header",
            "$.questions[].multi_select",
            "$.questions[].options",
            "$.questions[].options[].description"
        ]
    );
    let paths = |schema: &Value| -> Vec<String> {
        schema_nodes(schema)
            .into_iter()
            .map(|(path, _)| path)
            .filter(|path| !path.contains('|'))
            .collect()
    };
    for (name, text) in [
        ("openai", PARAMETERS_STRICT),
        ("anthropic", PARAMETERS_STRICT_ANTHROPIC),
        ("deepseek", PARAMETERS_STRICT_DEEPSEEK),
    ] {
        let schema: Value = serde_json::from_str(text).unwrap();
        assert_eq!(paths(&schema), paths(&canonical), "{name}: the same fields");
        for (path, node) in schema_nodes(&schema) {
            if node.get("properties").is_some_and(Value::is_object) {
                assert_every_property_required(node, &format!("{name} {path}"));
                assert_eq!(
                    node.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{name} {path}: closed"
                );
            }
            let nullable = types(node).contains(&"null");
            // Optional fields may be null where the provider has a null type; `options`
            // stays an array ([] for free text), and DeepSeek has no null at all.
            let expect_null =
                name != "deepseek" && optional.contains(&path) && path != "$.questions[].options";
            if !path.contains('|') {
                assert_eq!(nullable, expect_null, "{name} {path}: nullable");
            }
        }
    }
}

/// The keywords a strict schema node may use, per provider, from their documentation:
/// OpenAI's function-calling and structured-outputs guides, Anthropic's structured-outputs
/// "JSON Schema limitations", DeepSeek's "strict Mode (Beta)" section of
/// <https://api-docs.deepseek.com/guides/function_calling>.
fn allowed_keywords(provider: &str, types: &[&str]) -> Vec<&'static str> {
    let mut allowed = vec!["type", "description"];
    if types.contains(&"object") {
        allowed.extend(["properties", "required", "additionalProperties"]);
    }
    if types.contains(&"array") {
        allowed.push("items");
        if provider != "deepseek" {
            allowed.push("minItems");
        }
    }
    if types.contains(&"string") {
        allowed.extend(["pattern", "format", "enum"]);
    }
    // All three document anyOf (Anthropic's strict nullable fields use it).
    allowed.push("anyOf");
    allowed
}

#[test]
fn strict_exports_use_only_keywords_their_provider_supports() {
    for (provider, text) in [
        ("openai", PARAMETERS_STRICT),
        ("anthropic", PARAMETERS_STRICT_ANTHROPIC),
        ("deepseek", PARAMETERS_STRICT_DEEPSEEK),
    ] {
        let schema: Value = serde_json::from_str(text).unwrap();
        for (path, node) in schema_nodes(&schema) {
            let types = types(node);
            let allowed = allowed_keywords(provider, &types);
            for key in node.keys() {
                assert!(
                    allowed.contains(&key.as_str()),
                    "{provider} {path}: {key} is not supported in strict mode"
                );
            }
            // Anthropic supports minItems of 0 or 1 only, and one type name per schema.
            if provider == "anthropic" {
                assert!(
                    node.get("minItems").is_none_or(|n| n == 0 || n == 1),
                    "{path}"
                );
                assert!(!node.get("type").is_some_and(Value::is_array), "{path}");
            }
        }
    }
}

#[test]
fn deepseek_strict_follows_deepseeks_documented_rules() {
    // DeepSeek publishes no SDK type; these are the rules of "strict Mode (Beta)" in
    // https://api-docs.deepseek.com/guides/function_calling: every function sets
    // `"strict": true` (sent to https://api.deepseek.com/beta); supported types are object,
    // string, number, integer, boolean, array, enum and anyOf; every object lists all its
    // properties as required and sets `additionalProperties: false`; strings may use
    // `pattern` and `format` (email, hostname, ipv4, ipv6, uuid), not minLength/maxLength;
    // arrays may not use minItems/maxItems.
    let export: Value = serde_json::from_str(&definition(ProviderFormat::DeepSeekStrict)).unwrap();
    assert_eq!(export["type"], "function");
    assert_eq!(export["function"]["strict"], true);
    let name = export["function"]["name"].as_str().unwrap();
    assert!(
        name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{name}"
    );
    let parameters = &export["function"]["parameters"];
    assert_eq!(parameters["type"], "object", "the parameters are an object");
    for (path, node) in schema_nodes(parameters) {
        if node.contains_key("anyOf") {
            continue;
        }
        let ty = node
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{path}: one type name per schema ({node:?})"));
        assert!(
            ["object", "string", "number", "integer", "boolean", "array"].contains(&ty),
            "{path}: type {ty} is not supported"
        );
        let supported: &[&str] = match ty {
            "object" => &[
                "type",
                "description",
                "properties",
                "required",
                "additionalProperties",
            ],
            "string" => &["type", "description", "pattern", "format", "enum"],
            "array" => &["type", "description", "items"],
            "boolean" => &["type", "description"],
            _ => &[
                "type",
                "description",
                "const",
                "default",
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
                "enum",
            ],
        };
        for key in node.keys() {
            assert!(
                supported.contains(&key.as_str()),
                "{path}: {key} is not supported for {ty}"
            );
        }
        if let Some(format) = node.get("format") {
            assert!(
                ["email", "hostname", "ipv4", "ipv6", "uuid"].contains(&format.as_str().unwrap()),
                "{path}: format {format}"
            );
        }
        if ty == "object" {
            assert_every_property_required(node, &path);
            assert_eq!(node["additionalProperties"], false, "{path}");
        }
    }
}

#[test]
fn gemini_export_stays_within_its_schema_subset() {
    // Gemini's function declarations refuse these JSON Schema keywords.
    let text = definition(ProviderFormat::Gemini);
    for refused in [
        "additionalProperties",
        "$ref",
        "$schema",
        "oneOf",
        "anyOf",
        "const",
        "default",
    ] {
        assert!(
            !text.contains(&format!("\"{refused}\"")),
            "gemini export uses {refused}"
        );
    }
}

#[test]
fn the_description_says_what_the_model_needs_within_400_characters() {
    assert!(
        DESCRIPTION.chars().count() <= 400,
        "{} characters",
        DESCRIPTION.chars().count()
    );
    for needle in [
        "confirmation",
        "choice",
        "missing information",
        "id",
        "own answer",
        "\"Other\"",
        "(Recommended)",
    ] {
        assert!(DESCRIPTION.contains(needle), "description lacks {needle}");
    }
}

#[test]
fn format_names_parse_and_unknown_ones_are_refused() {
    for format in ProviderFormat::ALL {
        assert_eq!(format.name().parse::<ProviderFormat>(), Ok(format));
        for alias in format.aliases() {
            assert_eq!(alias.parse::<ProviderFormat>(), Ok(format));
        }
    }
    assert_eq!(
        "deepseek".parse::<ProviderFormat>(),
        Ok(ProviderFormat::OpenAiChat)
    );
    assert_eq!(
        "deepseek-strict".parse::<ProviderFormat>(),
        Ok(ProviderFormat::DeepSeekStrict)
    );
    assert_eq!(
        "claude".parse::<ProviderFormat>().unwrap_err().to_string(),
        r#"unknown format "claude"; use one of: canonical, openai-chat (or deepseek), openai-chat-strict, openai-responses, openai-responses-strict, anthropic, anthropic-strict, deepseek-strict, gemini, mcp"#
    );
    let strict: Vec<&str> = ProviderFormat::ALL
        .into_iter()
        .filter(|f| f.is_strict())
        .map(ProviderFormat::name)
        .collect();
    assert_eq!(
        strict,
        [
            "openai-chat-strict",
            "openai-responses-strict",
            "anthropic-strict",
            "deepseek-strict"
        ]
    );
}
