//! The `ask_user_question` tool as MCP sees it: its listing and its results.

use std::sync::Arc;

use ask_user_core::Outcome;
use ask_user_core::definition::{DESCRIPTION, NAME, OUTPUT_SCHEMA, PARAMETERS};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};

/// The tool as listed in `tools/list`: the core's name and description, `inputSchema` the
/// core's `PARAMETERS` and `outputSchema` its `OUTPUT_SCHEMA`, key order kept (serde_json's
/// `preserve_order`), so the listing carries the golden bytes.
pub fn tool() -> Tool {
    let mut tool = Tool::default();
    tool.name = NAME.into();
    tool.description = Some(DESCRIPTION.into());
    tool.input_schema = Arc::new(schema(PARAMETERS));
    tool.output_schema = Some(Arc::new(schema(OUTPUT_SCHEMA)));
    tool
}

fn schema(text: &str) -> JsonObject {
    // The constants are object literals pinned by the core's golden tests.
    serde_json::from_str(text).unwrap_or_default()
}

/// An outcome as a `tools/call` result: the model-facing text as the one text block; for an
/// answer also `structuredContent` (the same answers as JSON); for an error `isError: true`
/// and no structured content.
pub fn call_result(outcome: &Outcome) -> CallToolResult {
    let text = vec![ContentBlock::text(outcome.text())];
    if outcome.is_error() {
        return CallToolResult::error(text);
    }
    let mut result = CallToolResult::success(text);
    result.structured_content = outcome.structured();
    result
}
