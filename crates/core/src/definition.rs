//! The model-facing definition of `ask_user_question` (docs/contract.md §2) and its exports per provider.
//!
//! The definition is a constant: the same bytes on every run, platform and process, so a
//! provider's KV cache keeps the prompt prefix. It is written here as literal JSON text (not
//! built from a map, whose key order could change with a dependency's features); the golden
//! files under `tests/golden/` pin every export byte for byte.
//!
//! A harness gets the tool for its provider from [`definition`]; [`ProviderFormat::ALL`] lists
//! every format, the `*Strict` ones turning on the provider's strict mode:
//!
//! ```
//! use ask_user_core::definition::{definition, ProviderFormat};
//! let tools: Vec<String> = ProviderFormat::ALL.into_iter().map(definition).collect();
//! assert_eq!(tools.len(), ProviderFormat::ALL.len());
//! let format: ProviderFormat = "anthropic-strict".parse().unwrap();
//! assert!(format.is_strict() && definition(format).ends_with(r#""strict":true}"#));
//! ```

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

/// The arguments' schema for OpenAI's strict mode (Chat Completions and Responses): every
/// object closed (`additionalProperties: false`) with every property required; the optional
/// text and flag fields are nullable (`["string","null"]`, `null` reads as absent), and
/// `options` is a required array (`[]` for a free-text question).
pub const PARAMETERS_STRICT: &str = r#"{"type":"object","properties":{"questions":{"type":"array","description":"Questions to ask, in order.","minItems":1,"items":{"type":"object","properties":{"id":{"type":"string","description":"Stable id, echoed in the answer."},"question":{"type":"string","description":"The question to ask."},"header":{"type":["string","null"],"description":"Optional short heading, e.g. \"Confirm\"."},"options":{"type":"array","description":"Choices, the recommended one first; [] for free text.","items":{"type":"object","properties":{"label":{"type":"string","description":"Short option label."},"description":{"type":["string","null"],"description":"One sentence on the tradeoff or impact."}},"required":["label","description"],"additionalProperties":false}},"multi_select":{"type":["boolean","null"],"description":"Allow several options. Default false."}},"required":["id","question","header","options","multi_select"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}"#;

/// [`PARAMETERS_STRICT`] for Anthropic's strict tool use: the same shape, nullable fields
/// written as `anyOf` with `{"type":"null"}` (the Anthropic SDK's strict-schema transform
/// accepts one type name per schema, not a list).
pub const PARAMETERS_STRICT_ANTHROPIC: &str = r#"{"type":"object","properties":{"questions":{"type":"array","description":"Questions to ask, in order.","minItems":1,"items":{"type":"object","properties":{"id":{"type":"string","description":"Stable id, echoed in the answer."},"question":{"type":"string","description":"The question to ask."},"header":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"Optional short heading, e.g. \"Confirm\"."},"options":{"type":"array","description":"Choices, the recommended one first; [] for free text.","items":{"type":"object","properties":{"label":{"type":"string","description":"Short option label."},"description":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"One sentence on the tradeoff or impact."}},"required":["label","description"],"additionalProperties":false}},"multi_select":{"anyOf":[{"type":"boolean"},{"type":"null"}],"description":"Allow several options. Default false."}},"required":["id","question","header","options","multi_select"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}"#;

/// The arguments' schema for DeepSeek's strict function calling (beta). Its documented
/// subset has no `null` type and no `minItems`, so every field is required with a neutral
/// value for "none" that the decoder reads as absent: `""` for a heading or an option's
/// description, `[]` for no options, `false` for a single choice.
pub const PARAMETERS_STRICT_DEEPSEEK: &str = r#"{"type":"object","properties":{"questions":{"type":"array","description":"Questions to ask, in order.","items":{"type":"object","properties":{"id":{"type":"string","description":"Stable id, echoed in the answer."},"question":{"type":"string","description":"The question to ask."},"header":{"type":"string","description":"Short heading, e.g. \"Confirm\"; \"\" for none."},"options":{"type":"array","description":"Choices, the recommended one first; [] for free text.","items":{"type":"object","properties":{"label":{"type":"string","description":"Short option label."},"description":{"type":"string","description":"One sentence on the tradeoff or impact; \"\" for none."}},"required":["label","description"],"additionalProperties":false}},"multi_select":{"type":"boolean","description":"Allow several options."}},"required":["id","question","header","options","multi_select"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}"#;

/// A provider's tool-definition format.
///
/// The `*Strict` formats turn on the provider's strict mode (constrained decoding: the
/// model's arguments always match the schema) at the cost of a longer schema and explicit
/// `null`s or neutral values for every optional field; see docs/tool-catalog.md for the
/// sizes and when to choose them. The non-strict formats never change their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderFormat {
    /// `{"name","description","parameters"}`: the canonical definition (the golden bytes).
    Canonical,
    /// DeepSeek and OpenAI Chat Completions: `{"type":"function","function":{…}}`, no
    /// `strict` key (Chat Completions defaults to non-strict).
    OpenAiChat,
    /// OpenAI Chat Completions in strict mode: `"strict":true` and [`PARAMETERS_STRICT`].
    OpenAiChatStrict,
    /// OpenAI Responses: `{"type":"function","name","description","parameters","strict":false}`.
    /// `strict` is explicit because Responses treats a missing one as strict and would make
    /// every optional field mandatory.
    OpenAiResponses,
    /// OpenAI Responses in strict mode: `"strict":true` and [`PARAMETERS_STRICT`].
    OpenAiResponsesStrict,
    /// Anthropic Messages: `{"name","description","input_schema"}`.
    Anthropic,
    /// Anthropic strict tool use: `"strict":true` and [`PARAMETERS_STRICT_ANTHROPIC`].
    AnthropicStrict,
    /// DeepSeek strict function calling (beta, `https://api.deepseek.com/beta`): the Chat
    /// Completions shape with `"strict":true` and [`PARAMETERS_STRICT_DEEPSEEK`].
    DeepSeekStrict,
    /// Gemini function declaration: its OpenAPI schema subset, upper-case type names.
    Gemini,
    /// MCP `Tool`: `{"name","description","inputSchema","outputSchema"}`.
    Mcp,
}

impl ProviderFormat {
    /// Every format, in the order the docs list them.
    pub const ALL: [Self; 10] = [
        Self::Canonical,
        Self::OpenAiChat,
        Self::OpenAiChatStrict,
        Self::OpenAiResponses,
        Self::OpenAiResponsesStrict,
        Self::Anthropic,
        Self::AnthropicStrict,
        Self::DeepSeekStrict,
        Self::Gemini,
        Self::Mcp,
    ];

    /// The name used on the command line (`ask-user schema --format NAME`) and in the names
    /// of the golden files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Canonical => "canonical",
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiChatStrict => "openai-chat-strict",
            Self::OpenAiResponses => "openai-responses",
            Self::OpenAiResponsesStrict => "openai-responses-strict",
            Self::Anthropic => "anthropic",
            Self::AnthropicStrict => "anthropic-strict",
            Self::DeepSeekStrict => "deepseek-strict",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }

    /// Other names [`FromStr`] accepts for this format (`deepseek` and `openai` for
    /// [`ProviderFormat::OpenAiChat`]).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Self::OpenAiChat => &["deepseek", "openai"],
            _ => &[],
        }
    }

    /// Whether this export turns on the provider's strict mode.
    pub fn is_strict(self) -> bool {
        matches!(
            self,
            Self::OpenAiChatStrict
                | Self::OpenAiResponsesStrict
                | Self::AnthropicStrict
                | Self::DeepSeekStrict
        )
    }

    /// Every name with its first alias, for help and error texts:
    /// `canonical, openai-chat (or deepseek), openai-chat-strict, …`.
    pub fn names_for_help() -> String {
        Self::ALL
            .iter()
            .map(|f| match f.aliases().first() {
                Some(alias) => format!("{} (or {alias})", f.name()),
                None => f.name().to_owned(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for ProviderFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown format name; displays as `unknown format "NAME"; use one of: …` with every
/// name of [`ProviderFormat::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format \"{0}\"; use one of: {names}", names = ProviderFormat::names_for_help())]
pub struct UnknownFormat(pub String);

impl FromStr for ProviderFormat {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == name || f.aliases().contains(&name))
            .ok_or_else(|| UnknownFormat(name.to_owned()))
    }
}

/// The definition in `format`, as compact JSON; the same bytes on every call.
///
/// ```
/// use ask_user_core::definition::{definition, ProviderFormat};
/// let chat = definition(ProviderFormat::OpenAiChat);
/// assert!(chat.starts_with(r#"{"type":"function","function":{"name":"ask_user_question","#));
/// let strict = definition(ProviderFormat::OpenAiResponsesStrict);
/// assert!(strict.ends_with(r#","strict":true}"#));
/// ```
pub fn definition(format: ProviderFormat) -> String {
    let description = json_string(DESCRIPTION);
    let head = format!(r#""name":"{NAME}","description":{description}"#);
    match format {
        ProviderFormat::Canonical => format!(r#"{{{head},"parameters":{PARAMETERS}}}"#),
        ProviderFormat::OpenAiChat => {
            format!(r#"{{"type":"function","function":{{{head},"parameters":{PARAMETERS}}}}}"#)
        }
        ProviderFormat::OpenAiChatStrict => format!(
            r#"{{"type":"function","function":{{{head},"parameters":{PARAMETERS_STRICT},"strict":true}}}}"#
        ),
        ProviderFormat::OpenAiResponses => {
            format!(r#"{{"type":"function",{head},"parameters":{PARAMETERS},"strict":false}}"#)
        }
        ProviderFormat::OpenAiResponsesStrict => format!(
            r#"{{"type":"function",{head},"parameters":{PARAMETERS_STRICT},"strict":true}}"#
        ),
        ProviderFormat::Anthropic => format!(r#"{{{head},"input_schema":{PARAMETERS}}}"#),
        ProviderFormat::AnthropicStrict => {
            format!(r#"{{{head},"input_schema":{PARAMETERS_STRICT_ANTHROPIC},"strict":true}}"#)
        }
        ProviderFormat::DeepSeekStrict => format!(
            r#"{{"type":"function","function":{{{head},"parameters":{PARAMETERS_STRICT_DEEPSEEK},"strict":true}}}}"#
        ),
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
