//! `ask-user hook` with the real hosts end to end (tests/slow/hooks_host.rs): Claude Code 2.1.332
//! (`claude -p`) and Codex 0.171.0 (`codex exec`) run the hook for their own tools, called by
//! the FAKE model API, and the exact text each model reads is pinned. The human is either a
//! scripted answer file (`hook --answers`, a real ask-user process with no human) or
//! `ask-user inbox` in a real terminal (tmux) on the lab user's default store.

use super::hooks_host;

use ask_user_hosts_e2e::Netns;
use hooks_host::{Lab, Turn, claude, claude_in, codex, codex_in};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

pub(super) const PROMPT_TOOL: [&str; 2] = [
    "--permission-prompt-tool",
    "mcp__ask-user__ask_user_question",
];

/// Claude Code's AskUserQuestion input: a single-select and a multi-select.
fn two_questions() -> Value {
    json!({"questions": [
        {"question": "Which database?", "header": "Database", "multiSelect": false, "options": [
            {"label": "Postgres", "description": "Managed, with backups."},
            {"label": "SQLite", "description": "One file."},
        ]},
        {"question": "Which checks should run?", "header": "Checks", "multiSelect": true, "options": [
            {"label": "Lint", "description": "clippy"},
            {"label": "Tests", "description": "cargo test"},
        ]},
    ]})
}

/// `claude -p`'s flags for a turn whose PreToolUse hook on AskUserQuestion and ExitPlanMode runs
/// `hook` (a `timeout` s limit), with ask-user's MCP server alone (no form), then `extra` and
/// the permission prompt tool.
pub(super) fn hooked_flags(lab: &Lab, hook: &str, timeout: u64, extra: &[&str]) -> Vec<String> {
    let settings = lab.settings("PreToolUse", "AskUserQuestion|ExitPlanMode", hook, timeout);
    let mcp = lab.mcp_config(None);
    let mut flags = vec!["--settings".to_owned(), settings.display().to_string()];
    flags.extend(["--strict-mcp-config".to_owned(), "--mcp-config".to_owned()]);
    flags.push(mcp.display().to_string());
    flags.extend(extra.iter().chain(&PROMPT_TOOL).map(|f| f.to_string()));
    flags
}

/// `claude -p` calling AskUserQuestion, the hook answering from `answers`: the model's texts.
fn ask_claude(answers: Value) -> Vec<String> {
    let lab = Lab::new();
    let flags = hooked_flags(&lab, &lab.scripted_hook(answers), 60, &[]);
    let run = claude(
        &lab,
        &Turn::call("AskUserQuestion", two_questions()),
        &flags,
    )
    .finish();
    assert_eq!(run.records.len(), 1, "{run:?}\n{}", lab.hook_log());
    run.texts()
}

#[test]
fn claude_p_reads_the_labels_chosen_one_and_several() {
    let texts = ask_claude(json!({"answers": [
        {"id": "q1", "selected": ["Postgres"]},
        {"id": "q2", "selected": ["Lint", "Tests"]},
    ]}));
    assert_eq!(
        texts,
        [
            "Your questions have been answered: \"Which database?\"=\"Postgres\", \"Which checks should run?\"=\"Lint, Tests\". You can now continue with these answers in mind."
        ]
    );
}

#[test]
fn claude_p_reads_an_own_answer_and_leaves_a_skipped_question_out() {
    let texts = ask_claude(json!({"answers": [
        {"id": "q1", "selected": [], "custom": "Postgres 16, on the existing cluster"},
        {"id": "q2", "selected": []},
    ]}));
    assert_eq!(
        texts,
        [
            "The user answered: \"Which database?\"=\"Postgres 16, on the existing cluster\". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say."
        ]
    );
}

#[test]
fn claude_p_reads_no_answer_when_every_question_was_skipped() {
    let texts = ask_claude(json!({"answers": [
        {"id": "q1", "selected": []},
        {"id": "q2", "selected": []},
    ]}));
    assert_eq!(texts, ["The user did not answer the questions."]);
}

#[test]
fn claude_p_no_answer_in_the_hooks_time_is_a_deny() {
    let lab = Lab::new();
    let hook = lab.hook("claude-code", "--always --via inbox --timeout 1s");
    let flags = hooked_flags(&lab, &hook, 60, &[]);
    let run = claude(
        &lab,
        &Turn::call("AskUserQuestion", two_questions()),
        &flags,
    )
    .finish();
    assert_eq!(
        run.texts(),
        [
            "PreToolUse:AskUserQuestion hook error: Error: no answer within 1s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later."
        ],
        "{run:?}\n{}",
        lab.hook_log()
    );
}

const PLAN: &str = "1. Add the migration.\n2. Backfill the column.\n3. Switch reads.";

fn plan_claude(answers: Value) -> Vec<String> {
    let lab = Lab::new();
    let flags = hooked_flags(
        &lab,
        &lab.scripted_hook(answers),
        60,
        &["--permission-mode", "plan"],
    );
    let run = claude(
        &lab,
        &Turn::call("ExitPlanMode", json!({"plan": PLAN})),
        &flags,
    )
    .finish();
    assert_eq!(run.records.len(), 1, "{run:?}\n{}", lab.hook_log());
    run.texts()
}

#[test]
fn claude_p_plan_approved_leaves_plan_mode() {
    let texts = plan_claude(json!({"answers": [{"id": "plan", "selected": ["Approve"]}]}));
    assert_eq!(
        texts,
        ["User has approved exiting plan mode. You can now proceed."]
    );
}

#[test]
fn claude_p_plan_kept_reads_the_humans_words() {
    let texts = plan_claude(json!({"answers": [
        {"id": "plan", "selected": [], "custom": "Backfill in batches of 10k first."},
    ]}));
    assert_eq!(
        texts,
        [
            "PreToolUse:ExitPlanMode hook error: The user did not approve the plan: Backfill in batches of 10k first."
        ]
    );
}

/// The hook command `ask-user hook HOST FLAGS` that also appends the decision it prints (the
/// JSON the host reads) to the lab's `decisions.log`, keeping the hook's exit status.
fn recording_hook(lab: &Lab, host: &str, flags: &str) -> String {
    format!(
        "out=$({}); s=$?; printf '%s\\n' \"$out\" | tee -a '{}'; exit $s",
        lab.hook(host, flags),
        lab.path("decisions.log").display()
    )
}

/// `--hub URL --hub-token-file FILE` for a hook asking through `hub`.
fn hub_flags(lab: &Lab, hub: &hooks_host::LabHub) -> String {
    format!(
        "--always --hub {} --hub-token-file '{}'",
        hub.url,
        lab.path("hub.token").display()
    )
}

/// The decisions the hooks printed, one JSON value a line.
fn decisions(lab: &Lab) -> Vec<Value> {
    std::fs::read_to_string(lab.path("decisions.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// ExitPlanMode through a hub (`hook claude-code --hub URL`, hub and host in one loopback-only
/// namespace): the question is a card on the hub's inbox under the token's name; the human
/// types their own words there instead of approving (keep planning), over the page's own answer
/// endpoint, and `claude -p` hands the model exactly those words; the decision the hook printed
/// is pinned.
#[test]
fn claude_p_plan_kept_on_the_hub_page_reads_the_humans_words() {
    let lab = Lab::new();
    let ns = Netns::new();
    let hub = lab.hub(&ns, "laptop-claude");
    let hook = recording_hook(&lab, "claude-code", &hub_flags(&lab, &hub));
    let flags = hooked_flags(&lab, &hook, 60, &["--permission-mode", "plan"]);
    let running = claude_in(
        &lab,
        ns,
        &Turn::call("ExitPlanMode", json!({"plan": PLAN})),
        &flags,
    );
    let words = "Backfill in batches of 10k first.";
    let (ask, reply) = hub.human_answers(
        &lab,
        running.ns(),
        json!([{"id": "plan", "selected": [], "custom": words}]),
    );
    assert_eq!(reply, json!({"sent": true}));
    assert_eq!(ask["agent"], "laptop-claude");
    // Claude Code puts the plan into ExitPlanMode's input only from its plan file, which the
    // fake model (one tool call) never wrote: the hook got `tool_input: {}`, and the card says
    // there is no plan instead of asking to approve one over nothing.
    assert_eq!(
        ask["questions"][0]["question"],
        "Claude Code asks to leave plan mode and start working, and sent no plan to show (it shows only a plan it wrote to its plan file). Approve only if you know what it will do."
    );
    assert_eq!(
        ask["questions"][0]["options"],
        json!([
            {"label": "Approve", "description": "Claude Code leaves plan mode and starts working."},
            {"label": "Keep planning", "description": "Claude Code keeps planning; your own answer tells it what to change."},
        ])
    );
    let run = running.finish();
    assert_eq!(
        run.texts(),
        [format!(
            "PreToolUse:ExitPlanMode hook error: The user did not approve the plan: {words}"
        )],
        "{run:?}\n{}",
        lab.hook_log()
    );
    assert_eq!(
        decisions(&lab),
        [json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": format!("The user did not approve the plan: {words}"),
        }})]
    );
}

/// `claude -p` calling Bash (`touch made`), the PermissionRequest hook answering `answers`:
/// the model's texts and whether the command ran.
fn bash_claude(answers: Value) -> (Vec<String>, bool) {
    let lab = Lab::new();
    let settings = lab.settings("PermissionRequest", "*", &lab.scripted_hook(answers), 60);
    let made = lab.path("work/made");
    let turn = Turn::call(
        "Bash",
        json!({"command": format!("touch '{}'", made.display()), "description": "Make a file"}),
    );
    let flags = ["--settings", settings.to_str().unwrap()];
    let run = claude(&lab, &turn, &flags).finish();
    assert_eq!(run.records.len(), 1, "{run:?}\n{}", lab.hook_log());
    (run.texts(), made.exists())
}

#[test]
fn claude_p_permission_allowed_runs_the_command() {
    let (texts, ran) = bash_claude(json!({"answers": [
        {"id": "permission", "selected": ["Allow once"]},
    ]}));
    assert_eq!(
        (texts, ran),
        (vec!["(Bash completed with no output)".to_owned()], true)
    );
}

#[test]
fn claude_p_permission_denied_reads_the_humans_reason() {
    let (texts, ran) = bash_claude(json!({"answers": [
        {"id": "permission", "selected": [], "custom": "Not on a Friday."},
    ]}));
    assert_eq!(
        (texts, ran),
        (
            vec!["The user denied this tool call: Not on a Friday.".to_owned()],
            false
        )
    );
}

/// "Always allow", as Claude Code offers it: the hook offers each of Claude Code's
/// `permission_suggestions` as an option naming its exact rule; choosing it allows the call with
/// that suggestion as `updatedPermissions`, and Claude Code keeps the rule where it said.
#[test]
fn claude_p_permission_always_allowed_adds_the_hosts_own_rule() {
    let lab = Lab::new();
    let answers = json!({"answers": [{"id": "permission", "selected": [
        "Always allow `Bash(git init *)` in this project (your local settings)"
    ]}]});
    let event = lab.path("event.json");
    let hook = format!("tee '{}' | {}", event.display(), lab.scripted_hook(answers));
    let settings = lab.settings("PermissionRequest", "*", &hook, 60);
    let turn = Turn::call(
        "Bash",
        json!({"command": "git init -q", "description": "Make a repository"}),
    );
    let flags = ["--settings", settings.to_str().unwrap()];
    let run = claude(&lab, &turn, &flags).finish();
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(&event).unwrap_or_default())
        .unwrap_or_default();
    assert_eq!(
        sent["permission_suggestions"],
        json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "git init *"}],
            "behavior": "allow", "destination": "localSettings"}]),
        "{sent:#}"
    );
    assert_eq!(
        run.texts(),
        ["(Bash completed with no output)"],
        "{run:?}\n{}",
        lab.hook_log()
    );
    assert!(lab.path("work/.git").is_dir());
    let local: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path("work/.claude/settings.local.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(
        local["permissions"]["allow"],
        json!(["Bash(git init *)"]),
        "{local:#}"
    );
}

/// Claude Code's own rule, pinned: in `-p` with a permission prompt tool (which AskUserQuestion
/// needs there), a permission is asked of that tool too, and the first decision counts: a hook
/// waiting for a human loses to it. `ask-user mcp`'s tool is no permission tool, so the call
/// fails (a deny) and says so in plain words. The hook here waits for a human in the inbox who never answers (a hook that
/// answers at once may win the race, so that case is not pinned).
#[test]
fn claude_p_with_a_permission_prompt_tool_asks_that_tool_not_the_permission_hook() {
    let lab = Lab::new();
    let hook = lab.hook("claude-code", "--always --via inbox --wait 8s");
    let settings = lab.settings("PermissionRequest", "*", &hook, 60);
    let mcp = lab.mcp_config(None);
    let made = lab.path("work/made");
    let turn = Turn::call(
        "Bash",
        json!({"command": format!("touch '{}'", made.display())}),
    );
    let mut flags = vec!["--settings", settings.to_str().unwrap()];
    flags.extend(["--strict-mcp-config", "--mcp-config", mcp.to_str().unwrap()]);
    flags.extend(PROMPT_TOOL);
    let run = claude(&lab, &turn, &flags).finish();
    assert_eq!(
        run.texts(),
        [
            "<tool_use_error>Error calling tool (Bash): Error: ask_user_question is not a permission prompt tool: this permission request was not shown to the user and is denied.</tool_use_error>"
        ],
        "{run:?}"
    );
    assert!(!made.exists());
}

#[test]
fn claude_p_elicitation_form_is_answered_as_content() {
    let lab = Lab::new();
    let schema = json!({"type": "object", "properties": {
        "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]},
        "confirm": {"type": "boolean", "title": "Run migrations"},
        "replicas": {"type": "integer", "title": "Replicas"},
    }, "required": ["environment", "confirm"]});
    let hook = lab.scripted_hook(json!({"answers": [
        {"id": "f1", "selected": ["production"]},
        {"id": "f2", "selected": ["Yes"]},
        {"id": "f3", "selected": [], "custom": " 3 "},
    ]}));
    let settings = lab.settings("Elicitation", "deployer", &hook, 60);
    let mcp = lab.mcp_config(Some(&schema));
    let flags = [
        "--settings",
        settings.to_str().unwrap(),
        "--strict-mcp-config",
        "--mcp-config",
        mcp.to_str().unwrap(),
        "--allowedTools",
        "mcp__deployer__deploy",
    ];
    let run = claude(
        &lab,
        &Turn::call("mcp__deployer__deploy", json!({})),
        &flags,
    )
    .finish();
    assert_eq!(
        run.texts(),
        [
            r#"form: {"action":"accept","content":{"environment":"production","confirm":true,"replicas":3}}"#
        ],
        "{run:?}\n{}",
        lab.hook_log()
    );
}

#[test]
fn codex_permission_denied_reads_the_humans_reason() {
    let lab = Lab::new();
    let answers = lab.write(
        "answers.json",
        r#"{"answers":[{"id":"permission","selected":[],"custom":"Not on a Friday."}]}"#,
    );
    let hook = lab.hook(
        "codex",
        &format!("--always --answers '{}'", answers.display()),
    );
    let hooks = json!({"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [
        {"type": "command", "command": hook, "timeout": 60},
    ]}]}});
    lab.write("codex/hooks.json", &hooks.to_string());
    let made = lab.path("work/made");
    let run = codex(&lab, &escalated_touch(&made)).finish();
    assert_eq!(
        run.texts(),
        [
            "exec_command failed: CreateProcess { message: \"Rejected(\\\"The user denied this tool call: Not on a Friday.\\\")\" }"
        ],
        "{run:?}\n{}",
        lab.hook_log()
    );
    assert!(!made.exists());
}

/// Codex's PermissionRequest through `$CODEX_HOME/hooks.json` and a hub (`hook codex --hub
/// URL`, hub and host in one loopback-only namespace; hook trust bypassed for the run, as in
/// the other Codex test): the escalation is a card on the hub's inbox under the token's name,
/// the human allows it once there, the command runs, and the decision the hook printed is
/// pinned.
#[test]
fn codex_permission_allowed_on_the_hub_page_runs_the_command() {
    let lab = Lab::new();
    let ns = Netns::new();
    let hub = lab.hub(&ns, "laptop-codex");
    let hook = recording_hook(&lab, "codex", &hub_flags(&lab, &hub));
    let hooks = json!({"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [
        {"type": "command", "command": hook, "timeout": 60},
    ]}]}});
    lab.write("codex/hooks.json", &hooks.to_string());
    let made = lab.path("work/made");
    let running = codex_in(&lab, ns, &escalated_touch(&made));
    let (ask, reply) = hub.human_answers(
        &lab,
        running.ns(),
        json!([{"id": "permission", "selected": ["Allow once"]}]),
    );
    assert_eq!(reply, json!({"sent": true}));
    assert_eq!(ask["agent"], "laptop-codex");
    let run = running.finish();
    assert!(made.exists(), "{run:?}\n{}", lab.hook_log());
    assert_eq!(
        decisions(&lab),
        [json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }})]
    );
    assert_eq!(
        ask["questions"][0]["question"],
        format!(
            "Allow the agent to use Bash?\n\ntouch '{}'\n\ndescription: Make a file?",
            made.display()
        )
    );
    let texts = run.texts();
    assert!(
        texts.len() == 1 && texts[0].contains("Process exited with code 0"),
        "{texts:?}"
    );
}

/// Codex's `exec_command` asking to run `touch FILE` outside the sandbox (an approval).
pub(super) fn escalated_touch(file: &std::path::Path) -> Turn {
    Turn::call(
        "exec_command",
        json!({"cmd": format!("touch '{}'", file.display()),
            "sandbox_permissions": "require_escalated", "justification": "Make a file?"}),
    )
}
