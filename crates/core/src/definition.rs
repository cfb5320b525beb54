//! The model-facing definition of `ask_user_question` (docs/contract.md §2) and its exports per provider.
//!
//! The definition is a constant: the same bytes on every run, platform and process, so a
//! provider's KV cache keeps the prompt prefix. It is written here as literal JSON text (not
//! built from a map, whose key order could change with a dependency's features); the golden
//! files under `tests/golden/` pin every export byte for byte.

use std::fmt;
use std::str::FromStr;

/// The tool's name.
pub const NAME: &str = "ask_user_question";

/// The tool's description (at most ~400 characters): when to use it, the `id` echo, the
/// always-available own answer (so no "Other" option), the recommended-first convention.
pub const DESCRIPTION: &str = "Ask the user when you need a confirmation, a choice, or missing information before going on. Give each question a stable id; the answer echoes it. The user can always type their own answer, so never add an \"Other\" option. If you recommend an option, put it first and append \" (Recommended)\" to its label. Put related questions in one call.";

/// The JSON Schema of the arguments, as compact JSON with a fixed key order.
pub const PARAMETERS: &str = r#"{"type":"object","properties":{"questions":{"type":"array","description":"Questions to ask, in order.","minItems":1,"items":{"type":"object","properties":{"id":{"type":"string","description":"Stable id, echoed in the answer."},"question":{"type":"string","description":"The question to ask."},"header":{"type":"string","description":"Optional short heading, e.g. \"Confirm\"."},"options":{"type":"array","description":"Optional choices, the recommended one first.","items":{"type":"object","properties":{"label":{"type":"string","description":"Short option label."},"description":{"type":"string","description":"One sentence on the tradeoff or impact."}},"required":["label"]}},"multi_select":{"type":"boolean","description":"Allow several options. Default false."}},"required":["id","question"]}}},"required":["questions"]}"#;

/// The JSON Schema of an answer (MCP `outputSchema`): `{"answers":[{"id","selected","custom"?}]}`.
pub const OUTPUT_SCHEMA: &str = r#"{"type":"object","properties":{"answers":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"selected":{"type":"array","items":{"type":"string"}},"custom":{"type":"string"}},"required":["id","selected"]}}},"required":["answers"]}"#;

/// A provider's tool-definition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderFormat {
    /// `{"name","description","parameters"}`: the canonical definition (the golden bytes).
    Canonical,
    /// DeepSeek and OpenAI Chat Completions: `{"type":"function","function":{…}}`.
    OpenAiChat,
    /// OpenAI Responses: `{"type":"function","name","description","parameters"}`.
    OpenAiResponses,
    /// Anthropic Messages: `{"name","description","input_schema"}`.
    Anthropic,
    /// Gemini function declaration: its OpenAPI schema subset, upper-case type names.
    Gemini,
    /// MCP `Tool`: `{"name","description","inputSchema","outputSchema"}`.
    Mcp,
}

impl ProviderFormat {
    /// Every format, in the order the docs list them.
    pub const ALL: [Self; 6] = [
        Self::Canonical,
        Self::OpenAiChat,
        Self::OpenAiResponses,
        Self::Anthropic,
        Self::Gemini,
        Self::Mcp,
    ];

    /// The name used on the command line (`ask-user schema --format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Canonical => "canonical",
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }
}

impl fmt::Display for ProviderFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown format name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown format \"{0}\"; use one of: canonical, openai-chat (or deepseek), openai-responses, anthropic, gemini, mcp"
)]
pub struct UnknownFormat(pub String);

impl FromStr for ProviderFormat {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "deepseek" | "openai" => Ok(Self::OpenAiChat),
            _ => Self::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| UnknownFormat(name.to_owned())),
        }
    }
}

/// The definition in `format`, as compact JSON; the same bytes on every call.
///
/// ```
/// use ask_user_core::definition::{definition, ProviderFormat};
/// let chat = definition(ProviderFormat::OpenAiChat);
/// assert!(chat.starts_with(r#"{"type":"function","function":{"name":"ask_user_question","#));
/// ```
pub fn definition(format: ProviderFormat) -> String {
    let description = json_string(DESCRIPTION);
    let head = format!(r#""name":"{NAME}","description":{description}"#);
    match format {
        ProviderFormat::Canonical => format!(r#"{{{head},"parameters":{PARAMETERS}}}"#),
        ProviderFormat::OpenAiChat => {
            format!(r#"{{"type":"function","function":{{{head},"parameters":{PARAMETERS}}}}}"#)
        }
        ProviderFormat::OpenAiResponses => {
            format!(r#"{{"type":"function",{head},"parameters":{PARAMETERS}}}"#)
        }
        ProviderFormat::Anthropic => format!(r#"{{{head},"input_schema":{PARAMETERS}}}"#),
        ProviderFormat::Gemini => {
            format!(r#"{{{head},"parameters":{}}}"#, gemini_schema(PARAMETERS))
        }
        ProviderFormat::Mcp => {
            format!(r#"{{{head},"inputSchema":{PARAMETERS},"outputSchema":{OUTPUT_SCHEMA}}}"#)
        }
    }
}

/// Gemini's schema subset names types in upper case (`OBJECT`, `STRING`, …). Our schema
/// uses nothing else outside that subset (no `additionalProperties`, `$ref` or `oneOf`).
fn gemini_schema(schema: &str) -> String {
    ["object", "array", "string", "boolean"]
        .iter()
        .fold(schema.to_owned(), |schema, ty| {
            schema.replace(
                &format!(r#""type":"{ty}""#),
                &format!(r#""type":"{}""#, ty.to_uppercase()),
            )
        })
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
