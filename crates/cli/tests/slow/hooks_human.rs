//! The hooks as a user sets them up (`ask-user setup`, `ask-user away on`), the human answering
//! in `ask-user inbox` in a real terminal (tmux) while the real host waits on the hook.

use ask_user_test_support::TmuxPane;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::hooks::{PROMPT_TOOL, escalated_touch, hooked_flags};
use super::hooks_host::{BIN, Lab, Turn, claude, claude_tui, claude_tui_in, codex, pointed};

/// In the inbox's list, opens the first ask and picks option `n` (1-based) of its question.
fn pick(pane: &TmuxPane, question: &str, n: usize, option: &str) {
    pane.wait_text(question);
    pane.type_text("1");
    pane.keys(&["Enter"]);
    pane.wait_text("› 1. ");
    for _ in 1..n {
        pane.keys(&["Down"]);
    }
    pane.wait_text(&format!("› {n}. {option}"));
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");
}

fn one_question() -> Value {
    json!({"questions": [{"question": "Which database?", "header": "Database", "multiSelect": false,
        "options": [{"label": "Postgres", "description": "Managed."}, {"label": "SQLite", "description": "One file."}]}]})
}

#[test]
fn setup_claude_code_then_away_on_asks_permission_and_questions_in_the_inbox() {
    let lab = Lab::new();
    // The user's own settings: a permission rule and a hook of theirs on every permission.
    let seen = lab.path("user-hook.log");
    let mine = json!({"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PermissionRequest": [
        {"matcher": "*", "hooks": [{"type": "command", "command": format!("echo seen >> '{}'", seen.display())}]},
    ]}});
    std::fs::create_dir_all(lab.path("home/.claude")).unwrap();
    lab.write("home/.claude/settings.json", &mine.to_string());
    let report = lab.ask_user(&["setup", "claude-code"]);
    assert!(report.contains("updated: "), "{report}");
    assert_eq!(
        lab.ask_user(&["setup", "claude-code"])
            .matches("unchanged: ")
            .count(),
        2
    );
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path("home/.claude/settings.json")).unwrap(),
    )
    .unwrap();
    let bin = std::fs::canonicalize(BIN).unwrap();
    let ours = json!({"type": "command", "command": format!("'{}' hook claude-code --wait 59m", bin.display()), "timeout": 3600,
        "statusMessage": "ask-user: waiting for your answer in `ask-user inbox`"});
    assert_eq!(
        settings["hooks"]["PermissionRequest"],
        json!([{"matcher": "*", "hooks": [mine["hooks"]["PermissionRequest"][0]["hooks"][0], ours]}])
    );
    assert_eq!(
        settings["permissions"]["allow"],
        json!(["Bash(ls:*)", "mcp__ask-user__ask_user_question"])
    );
    lab.ask_user(&["away", "on"]);

    // A permission, allowed in the inbox while `claude -p` waits (no permission prompt tool:
    // with one, `-p` asks that tool instead and ignores the PermissionRequest hook's decision).
    let made = lab.path("work/made");
    let turn = Turn::call(
        "Bash",
        json!({"command": format!("touch '{}'", made.display()), "description": "Make a file"}),
    );
    let running = claude(&lab, &turn, &[] as &[&str]);
    let inbox = lab.inbox();
    pick(
        &inbox,
        "[Permission] Allow the agent to use Bash?",
        1,
        "Allow once",
    );
    let run = running.finish();
    assert_eq!(run.texts(), ["(Bash completed with no output)"], "{run:?}");
    assert!(made.exists());
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "seen\n",
        "the user's hook ran too"
    );
    drop(inbox);

    // A question, dismissed in the inbox: a deny with the dismissal's text.
    let running = claude(
        &lab,
        &Turn::call("AskUserQuestion", one_question()),
        &PROMPT_TOOL,
    );
    let inbox = lab.inbox();
    inbox.wait_text("[Database] Which database?");
    inbox.type_text("1");
    inbox.keys(&["Enter"]);
    inbox.wait_text("› 1. Postgres");
    inbox.keys(&["C-c"]);
    inbox.wait_text("Taken: the agent is told you dismissed the question.");
    let run = running.finish();
    assert_eq!(
        run.texts(),
        [
            "PreToolUse:AskUserQuestion hook error: Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on."
        ],
        "{run:?}"
    );
}

/// The words of the hook's still-open reply (`hook_map::STILL_OPEN`).
const STILL_OPEN: &str = "The user has not answered yet and the question is still open for them; ask again with the same input to get their answer (do not assume one).";

/// One question asked by `claude -p` through the hook `ask-user hook claude-code --always --via
/// inbox HOOK_FLAGS`, which Claude Code kills after `timeout` seconds; the model asks again
/// (up to `retries` times) while the reply contains `still_open`. The human picks option `n`,
/// `label`, in the inbox: every reply before the last is `unanswered` (at least one), the last
/// reads the answer.
fn asked_again_until_answered(
    hook_flags: &str,
    timeout: u64,
    (still_open, retries): (&'static str, u32),
    (n, label): (usize, &str),
    unanswered: &str,
) {
    let lab = Lab::new();
    let hook_flags = format!("--always --via inbox {hook_flags}");
    let hook = lab.hook("claude-code", hook_flags.trim_end());
    let flags = hooked_flags(&lab, &hook, timeout, &[]);
    let turn = Turn {
        still_open: Some(still_open),
        retries,
        ..Turn::call("AskUserQuestion", one_question())
    };
    let running = claude(&lab, &turn, &flags);
    running.wait_records(1);
    let inbox = lab.inbox();
    pick(&inbox, "[Database] Which database?", n, label);
    let run = running.finish();
    let texts = run.texts();
    let (last, before) = texts.split_last().unwrap();
    assert!(!before.is_empty(), "{run:?}");
    for text in before {
        assert_eq!(text, unanswered);
    }
    assert_eq!(
        last,
        &format!(
            "Your questions have been answered: \"Which database?\"=\"{label}\". You can now continue with these answers in mind."
        )
    );
}

#[test]
fn a_hook_that_stops_waiting_leaves_the_question_open_and_the_retry_gets_the_answer() {
    // The hook stops waiting after 1 s, long before the host's 30 s would kill it.
    asked_again_until_answered(
        "--wait 1s",
        30,
        ("still open for them", 200),
        (2, "SQLite"),
        &format!("PreToolUse:AskUserQuestion hook error: {STILL_OPEN}"),
    );
}

#[test]
fn setup_codex_writes_the_hooks_codex_runs_and_the_inbox_allows() {
    let lab = Lab::new();
    lab.ask_user(&["setup", "codex"]);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(lab.path("codex/hooks.json")).unwrap())
            .unwrap();
    let printed: Value =
        serde_json::from_str(&lab.ask_user(&["hook", "codex", "--settings"])).unwrap();
    assert_eq!(written, printed, "setup writes what --settings prints");
    lab.ask_user(&["away", "on"]);
    let made = lab.path("work/made");
    let running = codex(&lab, &escalated_touch(&made));
    let inbox = lab.inbox();
    pick(
        &inbox,
        "[Permission] Allow the agent to use Bash?",
        1,
        "Allow once",
    );
    let run = running.finish();
    let texts = run.texts();
    assert!(
        texts.len() == 1 && texts[0].contains("Process exited with code 0"),
        "{run:?}"
    );
    assert!(made.exists(), "{}\n{}", run.stdout, run.stderr);
}

/// What `claude -p` reads when it killed the hook at its timeout: it then asks its permission
/// prompt tool, which `ask-user mcp`'s question tool is not.
const KILLED: &str = "<tool_use_error>Error calling tool (AskUserQuestion): Error: ask_user_question is not a permission prompt tool: this permission request was not shown to the user and is denied.</tool_use_error>";

#[test]
fn a_hook_killed_at_the_hosts_timeout_leaves_the_question_open_for_the_retry() {
    // No --wait: Claude Code kills the hook at its 2 s timeout, and the model asks again.
    asked_again_until_answered(
        "",
        2,
        ("not a permission prompt tool", 100),
        (1, "Postgres"),
        KILLED,
    );
}

/// A person looks at the dialog before the next key. This models reading time, not
/// synchronisation: Claude Code's dialog drops a key that comes the moment it redrew (seen: an
/// Enter right after the Down that moved the pointer was ignored, 1 run in ~10 under load), as
/// the hosts' TUI tests found for its forms (tests/slow/hosts_tui.rs `read_the_form`).
fn a_person_reads() {
    std::thread::sleep(std::time::Duration::from_millis(1500));
}

#[test]
fn interactive_claude_keeps_its_own_dialog_while_away_is_off_and_asks_the_inbox_while_on() {
    let lab = Lab::new();
    lab.ask_user(&["setup", "claude-code"]);
    let answered = "Your questions have been answered: \"Which database?\"=\"SQLite\". You can now continue with these answers in mind.";

    // Away off: the hook falls through and Claude Code shows its own dialog, answered there.
    let tui = claude_tui(
        &lab,
        &Turn::call("AskUserQuestion", one_question()),
        "Ask me",
    );
    tui.pane.wait_text("Enter to select");
    tui.pane
        .wait_for("the pointer on Postgres", |s| pointed(s, "1. Postgres"));
    a_person_reads();
    tui.pane.keys(&["Down"]);
    tui.pane
        .wait_for("the pointer on SQLite", |s| pointed(s, "2. SQLite"));
    a_person_reads();
    tui.pane.keys(&["Enter"]);
    tui.pane.wait_text("· Which database? → SQLite");
    assert_eq!(tui.texts(1), [answered]);
    drop(tui);

    // Away on: no dialog in the terminal; the question is answered in the inbox.
    lab.ask_user(&["away", "on"]);
    let tui = claude_tui(
        &lab,
        &Turn::call("AskUserQuestion", one_question()),
        "Ask me",
    );
    // While the hook waits, Claude Code's own screen says where the question is (the handler's
    // statusMessage that setup wrote).
    tui.pane
        .wait_text("ask-user: waiting for your answer in `ask-user inbox`");
    let inbox = lab.inbox();
    pick(&inbox, "[Database] Which database?", 2, "SQLite");
    tui.pane.wait_text("· Which database? → SQLite");
    assert!(!tui.pane.screen().contains("Enter to select"));
    assert_eq!(tui.texts(1), [answered]);
}

/// The phone path as a new user sets it up: a hub in `ns` with the agent token `laptop-claude`
/// in a file of mode 0600, and `ask-user setup claude-code --hub URL --hub-token-file FILE`.
fn phone_path(lab: &Lab) -> (ask_user_hosts_e2e::Netns, super::hooks_host::LabHub) {
    let ns = ask_user_hosts_e2e::Netns::new();
    let hub = lab.hub(&ns, "laptop-claude");
    let token = lab.path("hub.token").display().to_string();
    lab.ask_user(&[
        "setup",
        "claude-code",
        "--hub",
        &hub.url,
        "--hub-token-file",
        &token,
    ]);
    (ns, hub)
}

/// The phone path, set up in one command, with the real interactive Claude Code: `setup
/// claude-code --hub URL --hub-token-file FILE` and `away on`; Claude Code's own question
/// (AskUserQuestion) waits with its screen saying where, becomes a card on the hub's inbox under
/// the token's name, the human answers it there, and the model reads that answer.
#[test]
fn interactive_claude_set_up_with_a_hub_asks_its_own_question_on_the_hub_page() {
    let lab = Lab::new();
    let (ns, hub) = phone_path(&lab);
    lab.ask_user(&["away", "on"]);
    let tui = claude_tui_in(
        &lab,
        ns,
        &Turn::call("AskUserQuestion", one_question()),
        "Ask me",
        false,
    );
    tui.pane.wait_for("the hook's status names the hub", |s| {
        s.contains("ask-user: waiting for your answer") && s.contains(&hub.url)
    });
    let (ask, reply) = hub.human_answers(
        &lab,
        tui.ns(),
        serde_json::json!([{"id": "q1", "selected": ["SQLite"]}]),
    );
    assert_eq!(reply, serde_json::json!({"sent": true}));
    assert_eq!(ask["agent"], "laptop-claude");
    tui.pane.wait_text("· Which database? → SQLite");
    assert!(!tui.pane.screen().contains("Enter to select"));
    assert_eq!(
        tui.texts(1),
        [
            "Your questions have been answered: \"Which database?\"=\"SQLite\". You can now continue with these answers in mind."
        ]
    );
}

/// The same one-command phone path for the MCP tool itself, with the real interactive Claude
/// Code: its `ask_user_question` call (the entry setup wrote, `mcp --hub URL`: the hub the only
/// answerer, no form in the terminal) is a card on the hub's inbox, answered there, and the model
/// reads the answer as the tool's result.
#[test]
fn interactive_claude_set_up_with_a_hub_asks_the_tool_on_the_hub_page() {
    let lab = Lab::new();
    let (ns, hub) = phone_path(&lab);
    let arguments = serde_json::json!({"questions": [{"id": "db", "header": "Database",
        "question": "Which database?",
        "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]}]});
    let tui = claude_tui_in(
        &lab,
        ns,
        &Turn::call("mcp__ask-user__ask_user_question", arguments),
        "Ask me",
        true,
    );
    let (ask, reply) = hub.human_answers(
        &lab,
        tui.ns(),
        serde_json::json!([{"id": "db", "selected": ["SQLite"]}]),
    );
    assert_eq!(reply, serde_json::json!({"sent": true}));
    assert_eq!(ask["agent"], "laptop-claude");
    assert_eq!(
        tui.texts(1),
        [r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#]
    );
    assert!(!tui.pane.screen().contains("Enter to select"));
}

/// An Allow on the phone for the real interactive Claude Code, set up in one command, in the
/// permission mode `doctor` tells a user to set (`permissions.defaultMode: "default"`; in auto
/// mode Claude Code decides its prompts itself): its permission prompt for `touch FILE` is a card
/// on the hub's inbox naming the exact command, the human allows it once there, the command
/// runs, and the model reads Bash's result.
#[test]
fn interactive_claude_set_up_with_a_hub_asks_permission_on_the_hub_page_and_runs_the_command() {
    let lab = Lab::new();
    let (ns, hub) = phone_path(&lab);
    lab.ask_user(&["away", "on"]);
    let settings = lab.path("home/.claude/settings.json");
    let mut user: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    user["permissions"]["defaultMode"] = json!("default");
    std::fs::write(&settings, user.to_string()).unwrap();
    let made = lab.path("work/made");
    let command = format!("touch '{}'", made.display());
    let tui = claude_tui_in(
        &lab,
        ns,
        &Turn::call(
            "Bash",
            json!({"command": command, "description": "Make a file"}),
        ),
        "Make a file",
        false,
    );
    let (ask, reply) = hub.human_answers(
        &lab,
        tui.ns(),
        json!([{"id": "permission", "selected": ["Allow once"]}]),
    );
    assert_eq!(reply, json!({"sent": true}));
    assert_eq!(ask["agent"], "laptop-claude");
    assert!(
        ask["questions"][0]["question"]
            .as_str()
            .is_some_and(|q| q.contains(&command)),
        "{ask}"
    );
    assert_eq!(tui.texts(1), ["(Bash completed with no output)"]);
    assert!(made.exists());
}
