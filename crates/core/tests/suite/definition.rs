//! The model-facing definition (docs/contract.md §2): golden bytes per provider format.
//!
//! On a mismatch the current bytes are written next to the golden file as `*.current.json`;
//! `ASK_USER_BLESS=1 cargo test -p ask-user-core` rewrites the golden files (review the diff).

use std::path::PathBuf;

use ask_user_core::definition::{
    DESCRIPTION, NAME, OUTPUT_SCHEMA, PARAMETERS, ProviderFormat, definition,
};
use serde_json::Value;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/definition")
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
}

#[test]
fn the_definition_is_the_same_bytes_on_every_call() {
    for format in ProviderFormat::ALL {
        assert_eq!(definition(format), definition(format));
    }
}

#[test]
fn every_export_is_valid_json_carrying_the_same_schema() {
    let parameters: Value = serde_json::from_str(PARAMETERS).unwrap();
    let output: Value = serde_json::from_str(OUTPUT_SCHEMA).unwrap();
    let get = |format, pointer: &str| -> Value {
        let value: Value = serde_json::from_str(&definition(format)).unwrap();
        value.pointer(pointer).cloned().unwrap_or(Value::Null)
    };
    assert_eq!(get(ProviderFormat::Canonical, "/parameters"), parameters);
    assert_eq!(
        get(ProviderFormat::OpenAiChat, "/function/parameters"),
        parameters
    );
    assert_eq!(get(ProviderFormat::OpenAiChat, "/function/name"), NAME);
    assert_eq!(
        get(ProviderFormat::OpenAiResponses, "/parameters"),
        parameters
    );
    assert_eq!(get(ProviderFormat::Anthropic, "/input_schema"), parameters);
    assert_eq!(get(ProviderFormat::Mcp, "/inputSchema"), parameters);
    assert_eq!(get(ProviderFormat::Mcp, "/outputSchema"), output);
    assert_eq!(get(ProviderFormat::Gemini, "/parameters/type"), "OBJECT");
    assert_eq!(
        get(
            ProviderFormat::Gemini,
            "/parameters/properties/questions/items/properties/multi_select/type"
        ),
        "BOOLEAN"
    );
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
    }
    assert_eq!(
        "deepseek".parse::<ProviderFormat>(),
        Ok(ProviderFormat::OpenAiChat)
    );
    assert_eq!(
        "claude".parse::<ProviderFormat>().unwrap_err().to_string(),
        r#"unknown format "claude"; use one of: canonical, openai-chat (or deepseek), openai-responses, anthropic, gemini, mcp"#
    );
}
