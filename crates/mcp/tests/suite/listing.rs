//! The tool as listed: the core's definition, byte for byte.

use ask_user_core::definition::{ProviderFormat, definition};
use pretty_assertions::assert_eq;

#[test]
fn the_listed_tool_serialises_to_the_core_mcp_export() {
    let listed = serde_json::to_string(&ask_user_mcp::tool()).unwrap();
    assert_eq!(listed, definition(ProviderFormat::Mcp));
}
