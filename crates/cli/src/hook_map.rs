//! The mappings of `ask-user hook` (docs/contract.md §7 "Host hooks"): an agent host's hook
//! event, as JSON on stdin, becomes `ask_user_question` arguments; the outcome becomes the exact
//! JSON the host reads on stdout. Pure: no I/O, so every mapping is a golden-file test.
//!
//! Events answered (anything else falls through: nothing is printed and the host goes on as if
//! there were no hook):
//!
//! - Claude Code `PreToolUse` for `AskUserQuestion`: the questions as they are; the answer goes
//!   back as `permissionDecision: "allow"` with `updatedInput` = the original `questions` plus
//!   `answers` (question text → the chosen label, several joined with `", "`, or the human's own
//!   text); a skipped question is left out of `answers`;
//! - Claude Code `PreToolUse` for `ExitPlanMode`: the plan as the question, "Approve" →
//!   `allow`, "Keep planning" or own words → `deny` with the human's words as the reason;
//! - `PermissionRequest` (Claude Code and Codex): the tool and its input, "Allow once" →
//!   `decision.behavior: "allow"`, "Deny" or own words → `deny` with the human's words;
//! - Claude Code `Elicitation` (an MCP server's form, `mode: "form"`): one question per field
//!   ([`crate::hook_elicit`]); the answers → `action: "accept"` with `content`, a dismissal →
//!   `decline`, any other outcome → `cancel`.
//!
//! Every outcome that is not a human's answer (dismissed, timed out, nobody reachable, failed)
//! is a deny whose reason is the ask's model-facing text: nothing is allowed without a human.

use ask_user_core::{AnswerItem, Outcome};
use serde_json::{Value, json};

/// The agent hosts whose hooks `ask-user hook` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HookHost {
    /// Claude Code: PreToolUse (AskUserQuestion, ExitPlanMode), PermissionRequest, Elicitation.
    ClaudeCode,
    /// Codex: PermissionRequest.
    Codex,
}

impl HookHost {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
        }
    }
}

/// The longest tool input or plan shown in a question (the core caps texts at 4,000 chars).
const SHOWN_CHARS: usize = 3_000;

/// Option labels of a plan approval.
const APPROVE: &str = "Approve";
const KEEP_PLANNING: &str = "Keep planning";
/// Option labels of a permission prompt.
const ALLOW_ONCE: &str = "Allow once";
const DENY: &str = "Deny";

/// What the hook asks, and how the answer goes back.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `AskUserQuestion`: the original questions (given back in `updatedInput`) and their texts.
    Questions {
        questions: Value,
        texts: Vec<String>,
    },
    /// `ExitPlanMode`: its input, given back as `updatedInput` on approval (Claude Code asks
    /// its own prompt for an `allow` without one: the tool needs the user).
    Plan(Value),
    /// A permission prompt, with the host's own "always allow" choices offered as options:
    /// each option's label and the host's suggestion it gives back (`updatedPermissions`).
    Permission(Vec<(String, Value)>),
    /// An MCP server's form.
    Form(Vec<crate::hook_elicit::Field>),
}

/// One hook event to ask the human about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HookAsk {
    /// The `ask_user_question` arguments (JSON).
    pub(crate) arguments: String,
    /// The call key: the same hook event asked again re-attaches to its ask.
    pub(crate) key: String,
    /// The host's session id (`session_id`), shown beside the question as its session.
    pub(crate) session: Option<String>,
    kind: Kind,
}

/// Reads a hook event; `Ok(None)` for an event `ask-user hook` does not answer (fall through).
///
/// # Errors
/// The input is not a JSON object (a usage error: the host did not send a hook event).
pub(crate) fn parse(host: HookHost, input: &str) -> Result<Option<HookAsk>, String> {
    let event: Value =
        serde_json::from_str(input).map_err(|e| format!("the hook input is not JSON ({e})"))?;
    if !event.is_object() {
        return Err("the hook input is not a JSON object".to_owned());
    }
    let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
    let tool = text("tool_name");
    let input = event.get("tool_input").cloned().unwrap_or(Value::Null);
    let (kind, arguments) = match (host, text("hook_event_name"), tool) {
        (HookHost::ClaudeCode, "PreToolUse", "AskUserQuestion") => {
            let Some((questions, texts, arguments)) = questions(&input) else {
                return Ok(None);
            };
            (Kind::Questions { questions, texts }, arguments)
        }
        (HookHost::ClaudeCode, "PreToolUse", "ExitPlanMode") => {
            let plan = input
                .get("plan")
                .and_then(Value::as_str)
                .unwrap_or_default();
            (Kind::Plan(input.clone()), plan_arguments(plan))
        }
        (_, "PermissionRequest", tool) if !tool.is_empty() => {
            let offered = offered_rules(event.get("permission_suggestions"));
            let arguments = permission_arguments(tool, &input, &offered);
            (Kind::Permission(offered), arguments)
        }
        (HookHost::ClaudeCode, "Elicitation", _) if matches!(text("mode"), "" | "form") => {
            let schema = event
                .get("requested_schema")
                .cloned()
                .unwrap_or(Value::Null);
            let Some((fields, arguments)) = crate::hook_elicit::questions(text("message"), &schema)
            else {
                return Ok(None);
            };
            (Kind::Form(fields), arguments)
        }
        _ => return Ok(None),
    };
    // Not the tool-use id: a model asking again (after a hook that stopped waiting, or was
    // killed) sends a new one, and must find the same ask. The event's own content is the key.
    let form = event
        .get("requested_schema")
        .cloned()
        .unwrap_or(Value::Null);
    let call = fnv1a(&format!(
        "{tool}\n{input}\n{}\n{}\n{form}",
        text("mcp_server_name"),
        text("message")
    ));
    Ok(Some(HookAsk {
        arguments,
        key: format!("{}:{}:{call:016x}", host.name(), text("session_id")),
        session: Some(text("session_id").to_owned()).filter(|s| !s.is_empty()),
        kind,
    }))
}

/// The JSON the host reads for `outcome`.
pub(crate) fn reply(ask: &HookAsk, outcome: &Outcome) -> String {
    let value = match (&ask.kind, outcome) {
        (Kind::Questions { questions, texts }, Outcome::Answered(answers)) => {
            let mut given = serde_json::Map::new();
            for item in &answers.answers {
                if let (Some(text), Some(answer)) = (question_text(texts, &item.id), joined(item)) {
                    given.insert(text.to_owned(), Value::String(answer));
                }
            }
            pre_tool_use_allow(json!({"questions": questions, "answers": given}))
        }
        (Kind::Plan(input), Outcome::Answered(answers)) => match first(answers) {
            Some(item) if item.selected.iter().any(|l| l == APPROVE) => {
                pre_tool_use_allow(input.clone())
            }
            item => pre_tool_use_deny(&said(
                item,
                "The user wants to keep planning and did not approve the plan.",
                "The user did not approve the plan: ",
            )),
        },
        (Kind::Permission(offered), Outcome::Answered(answers)) => match first(answers) {
            Some(item) if item.selected.iter().any(|l| l == ALLOW_ONCE) => {
                permission(json!({"behavior": "allow"}))
            }
            Some(item)
                if let Some((_, suggestion)) = offered
                    .iter()
                    .find(|(label, _)| item.selected.contains(label)) =>
            {
                // Exactly the rule the host offered, as it offered it.
                permission(json!({"behavior": "allow", "updatedPermissions": [suggestion]}))
            }
            item => permission(json!({"behavior": "deny", "message": said(
                item,
                "The user denied this tool call.",
                "The user denied this tool call: ",
            )})),
        },
        (Kind::Permission(_), other) => {
            permission(json!({"behavior": "deny", "message": other.text()}))
        }
        (Kind::Form(fields), Outcome::Answered(answers)) => elicitation(
            "accept",
            Some(crate::hook_elicit::content(fields, &answers.answers)),
        ),
        (Kind::Form(_), Outcome::Dismissed) => elicitation("decline", None),
        (Kind::Form(_), _) => elicitation("cancel", None),
        (_, other) => pre_tool_use_deny(&other.text()),
    };
    value.to_string()
}

/// What the model reads when the hook stopped waiting (`--wait`) while the question stays open
/// for the human: asking again re-attaches to it and gets the answer given meanwhile.
pub(crate) const STILL_OPEN: &str = "The user has not answered yet and the question is still open for them; ask again with the same input to get their answer (do not assume one).";

/// The JSON the host reads when the hook stopped waiting and the ask stays open: a deny (a
/// form: `cancel`) whose reason is [`STILL_OPEN`]; nothing is allowed.
pub(crate) fn still_open(ask: &HookAsk) -> String {
    let value = match &ask.kind {
        Kind::Permission(_) => permission(json!({"behavior": "deny", "message": STILL_OPEN})),
        Kind::Form(_) => elicitation("cancel", None),
        Kind::Questions { .. } | Kind::Plan(_) => pre_tool_use_deny(STILL_OPEN),
    };
    value.to_string()
}

fn pre_tool_use_allow(updated_input: Value) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": updated_input,
    }})
}

fn pre_tool_use_deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
}

fn elicitation(action: &str, content: Option<serde_json::Map<String, Value>>) -> Value {
    let mut output = json!({"hookEventName": "Elicitation", "action": action});
    if let Some(content) = content {
        output["content"] = Value::Object(content);
    }
    json!({ "hookSpecificOutput": output })
}

fn permission(decision: Value) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": decision,
    }})
}

/// `AskUserQuestion`'s `questions` → (the originals, their texts, the ask's arguments); `None`
/// when there are none to ask.
fn questions(input: &Value) -> Option<(Value, Vec<String>, String)> {
    let originals = input.get("questions")?.as_array()?;
    let mut texts = Vec::new();
    let mut asked = Vec::new();
    for (n, q) in originals.iter().enumerate() {
        let text = q
            .get("question")
            .and_then(Value::as_str)
            .unwrap_or_default();
        texts.push(text.to_owned());
        let options: Vec<Value> = q
            .get("options")
            .and_then(Value::as_array)
            .map(|options| {
                options
                    .iter()
                    .map(|o| {
                        let mut option =
                            json!({"label": o.get("label").cloned().unwrap_or(Value::Null)});
                        if let Some(description) = o.get("description").filter(|d| d.is_string()) {
                            option["description"] = description.clone();
                        }
                        option
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut question = json!({
            "id": format!("q{}", n + 1),
            "question": text,
            "options": options,
            "multi_select": q.get("multiSelect").and_then(Value::as_bool).unwrap_or(false),
        });
        if let Some(header) = q.get("header").filter(|h| h.is_string()) {
            question["header"] = header.clone();
        }
        asked.push(question);
    }
    if asked.is_empty() {
        return None;
    }
    let arguments = json!({"questions": asked}).to_string();
    Some((Value::Array(originals.clone()), texts, arguments))
}

/// The question of an ExitPlanMode with no plan text: Claude Code puts the plan into the tool's
/// input only when its plan file exists (the model's own `plan` argument is dropped), so the
/// human is told there is none rather than asked to approve a plan over nothing.
const NO_PLAN: &str = "Claude Code asks to leave plan mode and start working, and sent no plan to show (it shows only a plan it wrote to its plan file). Approve only if you know what it will do.";

fn plan_arguments(plan: &str) -> String {
    let question = if plan.trim().is_empty() {
        NO_PLAN.to_owned()
    } else {
        format!(
            "Claude Code asks you to approve its plan:\n\n{}",
            shown(plan)
        )
    };
    json!({"questions": [{
        "id": "plan",
        "header": "Plan",
        "question": question,
        "options": [
            {"label": APPROVE, "description": "Claude Code leaves plan mode and starts working."},
            {"label": KEEP_PLANNING, "description": "Claude Code keeps planning; your own answer tells it what to change."},
        ],
        "multi_select": false,
    }]})
    .to_string()
}

/// The host's "always allow" suggestions (Claude Code's `permission_suggestions`) that ask-user
/// can name exactly, as (option label, the suggestion): an `addRules` of allow rules, an
/// `addDirectories`, a `setMode`. Anything else is not offered (never a choice the host did
/// not offer; never one whose effect the label cannot say).
fn offered_rules(suggestions: Option<&Value>) -> Vec<(String, Value)> {
    let mut offered: Vec<(String, Value)> = Vec::new();
    for suggestion in suggestions.and_then(Value::as_array).into_iter().flatten() {
        let Some(label) = suggestion_label(suggestion) else {
            continue;
        };
        if offered.iter().all(|(l, _)| *l != label) && label != ALLOW_ONCE && label != DENY {
            offered.push((label, suggestion.clone()));
        }
    }
    offered
}

/// Where a suggestion's rule is kept, in words.
fn destination(suggestion: &Value) -> String {
    match suggestion.get("destination").and_then(Value::as_str) {
        Some("session") => "for this session".to_owned(),
        Some("localSettings") => "in this project (your local settings)".to_owned(),
        Some("projectSettings") => "in this project (its shared settings)".to_owned(),
        Some("userSettings") => "in all your projects".to_owned(),
        Some(other) => format!("({other})"),
        None => "(where Claude Code chooses)".to_owned(),
    }
}

/// The option label naming a suggestion's exact rule ("Always allow `Bash(npm test:*)` in this
/// project (your local settings)"); `None` for one not offered.
fn suggestion_label(suggestion: &Value) -> Option<String> {
    let text = |key: &str| suggestion.get(key).and_then(Value::as_str);
    let quoted = |items: Vec<String>| -> Option<String> {
        (!items.is_empty()).then(|| {
            items
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let what = match text("type")? {
        "addRules" if text("behavior") == Some("allow") => {
            let rules = suggestion.get("rules")?.as_array()?;
            let mut named = Vec::new();
            for rule in rules {
                let tool = rule.get("toolName")?.as_str()?;
                named.push(match rule.get("ruleContent").and_then(Value::as_str) {
                    Some(content) => format!("{tool}({content})"),
                    None => tool.to_owned(),
                });
            }
            format!("Always allow {}", quoted(named)?)
        }
        "addDirectories" => {
            let directories = suggestion.get("directories")?.as_array()?;
            let named: Option<Vec<String>> = directories
                .iter()
                .map(|d| d.as_str().map(str::to_owned))
                .collect();
            format!("Allow, and always allow access to {}", quoted(named?)?)
        }
        "setMode" => format!("Allow, and switch to `{}` mode", text("mode")?),
        _ => return None,
    };
    Some(format!("{what} {}", destination(suggestion)))
}

/// The question of a permission prompt: the tool, then every field of its input — `command`
/// first, in full, then each other key and value — so what is allowed is what was shown.
/// A request too long to show whole offers no allow at all (only Deny): its end would be
/// hidden.
fn permission_arguments(tool: &str, input: &Value, offered: &[(String, Value)]) -> String {
    let mut fields = Vec::new();
    if let Some(command) = input.get("command").and_then(Value::as_str) {
        fields.push(command.to_owned());
    }
    match input.as_object() {
        Some(map) => {
            for (key, value) in map {
                if key == "command" && value.is_string() {
                    continue;
                }
                let value = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                fields.push(format!("{key}: {value}"));
            }
        }
        None if !input.is_null() => fields.push(input.to_string()),
        None => {}
    }
    let full = format!("Allow the agent to use {tool}?\n\n{}", fields.join("\n\n"));
    let deny = json!({"label": DENY, "description": "Your own answer is passed on as the reason."});
    let limit = ask_user_core::Limits::default().max_text_chars;
    let total = full.chars().count();
    let (question, options) = if total <= limit {
        let mut options = vec![json!({"label": ALLOW_ONCE, "description": "This call only."})];
        for (label, _) in offered {
            options.push(json!({"label": label, "description": "Allow this call, and make this change to Claude Code's permissions, exactly as Claude Code offers it."}));
        }
        options.push(deny);
        (full, options)
    } else {
        let note = "\n… (the request is too long to show whole here, so it cannot be allowed from here: answer in the agent host's own dialog, or deny)";
        let keep = limit - note.chars().count() - 60;
        let cut: String = full.chars().take(keep).collect();
        (
            format!(
                "{cut}\n… ({} more characters, not shown){note}",
                total - keep
            ),
            vec![deny],
        )
    };
    json!({"questions": [{
        "id": "permission",
        "header": "Permission",
        "question": question,
        "options": options,
        "multi_select": false,
    }]})
    .to_string()
}

/// `text` cut to [`SHOWN_CHARS`], saying how much was left out.
fn shown(text: &str) -> String {
    let total = text.chars().count();
    if total <= SHOWN_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    format!(
        "{cut}\n… ({} more characters, not shown)",
        total - SHOWN_CHARS
    )
}

fn question_text<'a>(texts: &'a [String], id: &str) -> Option<&'a str> {
    let n: usize = id.strip_prefix('q')?.parse().ok()?;
    texts.get(n.checked_sub(1)?).map(String::as_str)
}

/// What Claude Code reads for one answered question: labels joined with `", "`, the human's
/// own text after them; `None` for a skip.
fn joined(item: &AnswerItem) -> Option<String> {
    let mut parts: Vec<&str> = item.selected.iter().map(String::as_str).collect();
    parts.extend(item.custom.as_deref());
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn first(answers: &ask_user_core::Answers) -> Option<&AnswerItem> {
    answers.answers.first()
}

/// The reason given to the model: the human's own words after `lead`, else `plain`.
fn said(item: Option<&AnswerItem>, plain: &str, lead: &str) -> String {
    match item.and_then(|i| i.custom.as_deref()) {
        Some(words) => format!("{lead}{words}"),
        None => plain.to_owned(),
    }
}

/// 64-bit FNV-1a: a stable key for a hook event (stable across builds, unlike std's hasher).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "hook_map_tests.rs"]
mod tests;
