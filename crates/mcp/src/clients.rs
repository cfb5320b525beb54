//! What the server knows about particular MCP clients, found by the `clientInfo.name` they
//! send in `initialize` (docs/decisions.md "Per-client forms and call limits").
//!
//! | client (`clientInfo.name`) | form shapes | hard limit on a call | call ends after |
//! | --- | --- | --- | --- |
//! | `codex-mcp-client` (Codex CLI) | [`FormStyle::Codex`] | 300 s (progress does not extend it) | 270 s |
//! | `gemini-cli-mcp-client` (Gemini CLI) | by version (it does not elicit) | 600 s | 570 s |
//! | anyone else | by version ([`FormStyle::for_version`]) | none known | never |
//!
//! A call that reaches its client's limit would end in the host's own error (Codex: a
//! 22-line backtrace the model reads). Instead the server ends it [`MARGIN`] before, with
//! [`STILL_OPEN_TEXT`]: the ask stays open (detached, as when a client cancels) and the
//! model's retry with the same arguments re-attaches to it (docs/contract.md §8).

use std::future::Future;
use std::time::Duration;

use ask_user_elicit::FormStyle;
use rmcp::model::{CallToolResult, ContentBlock, ProtocolVersion};
use tokio_util::sync::CancellationToken;

/// How long before a client's hard limit the server ends the call itself.
pub const MARGIN: Duration = Duration::from_secs(30);

/// What the model reads when a call ended before its client's hard limit while the question
/// is still open (an `isError` result: it is not an answer).
pub const STILL_OPEN_TEXT: &str = "Error: the user has not answered yet and the question is still open for them; call ask_user_question again with the same arguments to get the answer (do not assume one).";

/// Codex CLI's `clientInfo.name`.
pub const CODEX: &str = "codex-mcp-client";
/// Gemini CLI's `clientInfo.name`.
pub const GEMINI_CLI: &str = "gemini-cli-mcp-client";

/// The form shapes for a client named `name` that negotiated `version`: Codex gets
/// [`FormStyle::Codex`] (its form UI cannot submit a choice beside an empty text field), every
/// other client the shapes of its version.
pub fn form_style(name: Option<&str>, version: Option<&ProtocolVersion>) -> FormStyle {
    match name {
        Some(CODEX) => FormStyle::Codex,
        _ => FormStyle::for_version(version),
    }
}

/// The hard limit a client named `name` puts on one `tools/call`, when known.
pub fn hard_limit(name: Option<&str>) -> Option<Duration> {
    match name {
        Some(CODEX) => Some(Duration::from_secs(300)),
        Some(GEMINI_CLI) => Some(Duration::from_secs(600)),
        _ => None,
    }
}

/// How long a call from a client named `name` may wait for the human before it ends with
/// [`STILL_OPEN_TEXT`]: `configured` (`--call-limit`) when given, else [`MARGIN`] before the
/// client's [`hard_limit`], else no limit.
pub fn call_limit(name: Option<&str>, configured: Option<Duration>) -> Option<Duration> {
    configured.or_else(|| hard_limit(name).map(|limit| limit.saturating_sub(MARGIN)))
}

/// Waits for `call`; when `limit` passes first, fires `cancel` (the call's answerers stop
/// waiting and a stored ask is left detached, as when the client cancels) and keeps waiting
/// for the call to end. Returns its outcome and whether the limit ended it.
pub(crate) async fn ending_at<T>(
    limit: Option<Duration>,
    cancel: &CancellationToken,
    call: impl Future<Output = T>,
) -> (T, bool) {
    tokio::pin!(call);
    let Some(limit) = limit else {
        return (call.await, false);
    };
    tokio::select! {
        outcome = &mut call => (outcome, false),
        () = tokio::time::sleep(limit) => {
            tracing::info!(
                limit_s = limit.as_secs_f64(),
                "the call reached its client's limit; the question stays open for the retry"
            );
            cancel.cancel();
            (call.await, true)
        }
    }
}

/// The result of a call ended by its limit while the question is open: [`STILL_OPEN_TEXT`],
/// `isError: true`.
pub(crate) fn still_open() -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(STILL_OPEN_TEXT)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_clients_get_their_shapes_and_limits() {
        let old = ProtocolVersion::V_2025_06_18;
        assert_eq!(form_style(Some(CODEX), Some(&old)), FormStyle::Codex);
        assert_eq!(
            form_style(Some("claude-code"), Some(&old)),
            FormStyle::Primitive
        );
        assert_eq!(
            form_style(None, Some(&ProtocolVersion::V_2025_11_25)),
            FormStyle::Titled
        );
        assert_eq!(
            call_limit(Some(CODEX), None),
            Some(Duration::from_secs(270))
        );
        assert_eq!(
            call_limit(Some(GEMINI_CLI), None),
            Some(Duration::from_secs(570))
        );
        assert_eq!(call_limit(Some("claude-code"), None), None);
        let two = Some(Duration::from_secs(2));
        assert_eq!(call_limit(Some("claude-code"), two), two);
    }
}
