//! The real agent hosts end to end (crates/hosts-e2e): Claude Code (`claude -p`) and Codex
//! (`codex exec`) headless, each in a network namespace with only loopback, against the fake
//! model API, with `ask-user mcp` as their MCP server. The exact tool result each host hands
//! its model is pinned (Codex's varying `Wall time: N seconds` aside), and Gemini CLI's
//! (`gemini -p`). The interactive UIs are in `hosts_tui.rs`.

use ask_user_hosts_e2e::{Host, Run, Scenario, run};
use ask_user_test_support::hermetic_command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_ask-user");

/// Single-select, multi-select, free text and an own answer in one call (canonical shapes:
/// Gemini CLI checks the arguments against the schema before calling).
const BATCH: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"PostgreSQL (Recommended)"},{"label":"SQLite"}]},{"id":"langs","question":"Which languages?","options":[{"label":"Rust"},{"label":"Go"}],"multi_select":true},{"id":"name","question":"Service name?"},{"id":"region","question":"Which region?","options":[{"label":"eu-west"},{"label":"us-east"}]}]}"#;

const NO_PROVIDER: &str = "Error: no way to ask the user is available; ask your question in plain text in your reply instead.";

const HEADLESS: [Host; 2] = [Host::ClaudeCode, Host::Codex];

/// The one recorded result of `run`, as the host wrapped it, with Codex's wall time
/// replaced by `N` (it varies) and ids that vary dropped.
fn pinned(run: &Run) -> Vec<Value> {
    run.records
        .iter()
        .map(|record| {
            let mut result = record["result"].clone();
            if let Some(map) = result.as_object_mut() {
                map.remove("id");
            }
            match result.get_mut("output") {
                Some(Value::String(text)) => *text = no_wall_time(text),
                Some(Value::Array(parts)) => {
                    for part in parts {
                        if let Some(Value::String(text)) = part.get_mut("text") {
                            *text = no_wall_time(text);
                        }
                    }
                }
                _ => {}
            }
            result
        })
        .collect()
}

/// `Wall time: 0.0108 seconds…` → `Wall time: N seconds…`.
fn no_wall_time(text: &str) -> String {
    match text
        .strip_prefix("Wall time: ")
        .and_then(|rest| rest.split_once(" seconds"))
    {
        Some((_, after)) => format!("Wall time: N seconds{after}"),
        None => text.to_owned(),
    }
}

/// What `host` hands its model for a tool result whose text is `text` (`error`: isError).
fn wrapped(host: Host, call: u32, text: &str, error: bool) -> Value {
    match host {
        Host::ClaudeCode => {
            let mut block = json!({"type": "tool_result", "content": text});
            if error {
                block["is_error"] = json!(true);
            }
            block["tool_use_id"] = json!(format!("toolu_fake_{call}"));
            block["cache_control"] = json!({"type": "ephemeral"});
            block
        }
        // Codex drops isError and adds its own lead: as a part of its own before an error,
        // joined with the text (one string) for a success.
        Host::Codex if error => json!({
            "type": "function_call_output",
            "call_id": format!("call_fake_{call}"),
            "output": [
                {"type": "input_text", "text": "Wall time: N seconds\nOutput:"},
                {"type": "input_text", "text": text},
            ],
        }),
        Host::Codex => json!({
            "type": "function_call_output",
            "call_id": format!("call_fake_{call}"),
            "output": format!("Wall time: N seconds\nOutput:\n{text}"),
        }),
        Host::Gemini => unreachable!("not run here"),
    }
}

/// Headless hosts declare elicitation, then refuse every form at once: with no other
/// answerer the model reads the no-answerer text, never "the user dismissed the questions"
/// (what both hosts read before).
#[test]
fn a_headless_refusal_with_no_other_answerer_reads_the_no_answerer_text() {
    for host in HEADLESS {
        let out = run(
            host,
            BIN,
            &Scenario::new(BATCH).server_args(["--via", "none"]),
        );
        assert_eq!(
            pinned(&out),
            [wrapped(host, 1, NO_PROVIDER, true)],
            "{host:?}\n{}",
            out.diagnostics()
        );
    }
}

/// The question the headless host refused goes to the next answerer (here scripted answers
/// standing in for the page, the inbox or the hub), and the answer reaches the model.
#[test]
fn a_headless_refusal_goes_to_the_next_answerer() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"]},{"id":"name","selected":[],"custom":"billing-api"},{"id":"region","selected":[],"custom":"ap-south (Mumbai)"}]}"#,
    )
    .unwrap();
    let answer = r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"]},{"id":"name","selected":[],"custom":"billing-api"},{"id":"region","selected":[],"custom":"ap-south (Mumbai)"}]}"#;
    for host in HEADLESS {
        let scenario = Scenario::new(BATCH).server_args(["--answers", answers.to_str().unwrap()]);
        let out = run(host, BIN, &scenario);
        assert_eq!(
            pinned(&out),
            [wrapped(host, 1, answer, false)],
            "{host:?}\n{}",
            out.diagnostics()
        );
    }
}

/// A call still waiting at its limit ends with the still-open text instead of the host's own
/// timeout error, the ask stays open in the store, and the model's retry with the same
/// arguments re-attaches to it (one ask, not two). The limit is `--call-limit 2s` here; by
/// default it is 270 s for Codex (whose hard limit is 300 s).
#[test]
fn a_wait_past_the_limit_reads_still_open_and_the_retry_reattaches() {
    let still_open = ask_user_mcp::STILL_OPEN_TEXT;
    for host in HEADLESS {
        let scenario = Scenario::new(BATCH)
            .server_args(["--via", "web", "--no-open", "--call-limit", "2s"])
            .retries(1);
        let out = run(host, BIN, &scenario);
        assert_eq!(
            pinned(&out),
            [
                wrapped(host, 1, still_open, true),
                wrapped(host, 2, still_open, true)
            ],
            "{host:?}\n{}",
            out.diagnostics()
        );
        let store = format!("sqlite:{}", out.dir.path().join("store.sqlite3").display());
        let history = hermetic_command(BIN, out.dir.path())
            .args(["history", "--open", "--json", "--store", &store])
            .output()
            .unwrap();
        let asks: Value = serde_json::from_slice(&history.stdout).unwrap();
        assert_eq!(
            asks.as_array().map(Vec::len),
            Some(1),
            "{host:?}: one open ask, re-attached: {asks}"
        );
    }
}

/// No browser can be opened for the page (none on the server's PATH): the server's log says
/// where the question waits, without the page's secret address, and the model reads the
/// still-open text at the limit.
#[test]
fn without_a_browser_the_log_says_where_the_question_waits_and_never_the_url() {
    let host = Host::ClaudeCode;
    let mut scenario = Scenario::new(BATCH).server_args(["--via", "web", "--call-limit", "2s"]);
    scenario
        .server_env
        .push(("PATH".to_owned(), "/nonexistent".to_owned()));
    let out = run(host, BIN, &scenario);
    let still_open = ask_user_mcp::STILL_OPEN_TEXT;
    assert_eq!(
        pinned(&out),
        [wrapped(host, 1, still_open, true)],
        "{}",
        out.diagnostics()
    );
    assert!(
        out.server_log.contains(ask_user_mcp::NO_BROWSER_TEXT),
        "{}",
        out.server_log
    );
    assert!(!out.server_log.contains("http://"), "{}", out.server_log);
}

/// Gemini CLI (no elicitation): the question goes to the page, and at the limit the model
/// reads the still-open text inside Gemini's wrapper (about 6 s here).
#[test]
fn gemini_reads_still_open_at_the_limit() {
    let host = Host::Gemini;
    let scenario =
        Scenario::new(BATCH).server_args(["--via", "web", "--no-open", "--call-limit", "2s"]);
    let out = run(host, BIN, &scenario);
    // Gemini turns an isError result into one error text quoting the call and the result.
    let result = json!([{"functionResponse": {"name": "ask_user_question", "response": {
        "content": [{"type": "text", "text": ask_user_mcp::STILL_OPEN_TEXT}], "isError": true}}}]);
    let expected = format!(
        "MCP tool 'ask_user_question' reported tool error for function call: {{\"name\":\"ask_user_question\",\"args\":{BATCH}}} with response: {result}"
    );
    assert_eq!(out.texts(), [expected], "{}", out.diagnostics());
}

fn ask_user_in(home: &std::path::Path, args: &[&str]) -> (String, i32) {
    ask_user_in_with(home, &[], args)
}

/// `ask-user ARGS` in `home` (its config directory left to the default under it, as a user's
/// is) with `env` added: stdout and the exit code.
fn ask_user_in_with(
    home: &std::path::Path,
    env: &[(&str, &std::path::Path)],
    args: &[&str],
) -> (String, i32) {
    let out = hermetic_command(BIN, home)
        .env_remove("XDG_CONFIG_HOME")
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// `setup` writes the absolute path, keeps the user's settings, changes nothing the second
/// time; `doctor` starts the server as the host would and says what it sees. A bare
/// `command = "ask-user"` (the old README line: Codex then silently has no tool) is a problem.
#[test]
fn setup_is_idempotent_and_doctor_reports_what_each_host_sees() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "# my settings\nmodel = \"o3\"\n\n[mcp_servers.ask-user]\ncommand = \"ask-user\"\nargs = [\"mcp\"]\n").unwrap();
    let (report, status) = ask_user_in(home.path(), &["doctor"]);
    assert_eq!(status, 1, "{report}");
    assert!(
        report.contains("problem: the command is not an absolute path"),
        "{report}"
    );

    let (out, status) = ask_user_in(home.path(), &["setup", "codex", "--", "--via", "none"]);
    assert_eq!(status, 0, "{out}");
    let written = std::fs::read_to_string(&config).unwrap();
    let bin = std::fs::canonicalize(BIN).unwrap();
    assert_eq!(
        written,
        format!(
            "# my settings\nmodel = \"o3\"\n\n[mcp_servers.ask-user]\ncommand = {:?}\nargs = [\"mcp\", \"--via\", \"none\"]\nstartup_timeout_sec = 20\ntool_timeout_sec = 300\ndefault_tools_approval_mode = \"approve\"\n",
            bin.display().to_string()
        )
    );
    let (again, _) = ask_user_in(home.path(), &["setup", "codex", "--", "--via", "none"]);
    assert!(again.starts_with("unchanged: "), "{again}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), written);

    let (report, status) = ask_user_in(home.path(), &["doctor"]);
    assert_eq!(status, 0, "{report}");
    assert!(report.contains("claude-code: not set up"), "{report}");
    assert!(
        report.contains("started as codex would: codex-mcp-client 0.171.0 connected (protocol 2025-06-18); questions go to its own form"),
        "{report}"
    );
    assert!(
        report.contains("  tools/list: ask_user_question\n"),
        "{report}"
    );
    assert!(report.contains("ask-user ends them at 270 s"), "{report}");
}

/// Gemini CLI: the answer given on the next answerer (scripted answers standing in for the
/// page) reaches the model inside Gemini's `<untrusted_context>` wrapper of a success.
#[test]
fn gemini_reads_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    let answer = r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"langs","selected":["Rust","Go"]},{"id":"name","selected":[],"custom":"billing-api"},{"id":"region","selected":[],"custom":"ap-south (Mumbai)"}]}"#;
    std::fs::write(&answers, answer).unwrap();
    let scenario = Scenario::new(BATCH).server_args(["--answers", answers.to_str().unwrap()]);
    let out = run(Host::Gemini, BIN, &scenario);
    let expected = format!("<untrusted_context>\n{answer}\n</untrusted_context>");
    assert_eq!(out.texts(), [expected], "{}", out.diagnostics());
}

/// Codex with `approval_policy = "never"` declines every question form within milliseconds
/// (the questions go to the other answerers): `setup codex` and `doctor` say so, read from a
/// real config file in `$CODEX_HOME` — at the top, in the selected profile, or in a profile
/// used with `--profile`; `"on-request"` draws no warning.
#[test]
fn setup_and_doctor_warn_when_codex_declines_every_form() {
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join("elsewhere/codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = codex_home.join("config.toml");
    std::fs::write(&config, "approval_policy = \"never\"\n").unwrap();
    let in_codex_home =
        |args: &[&str]| ask_user_in_with(home.path(), &[("CODEX_HOME", &codex_home)], args);
    let why = "Codex declines every question form at once, so questions skip its own form and go to ask-user's other answerers (--via: the page, the hub); set approval_policy = \"on-request\" to answer in Codex";
    let file = config.display();
    let warning = format!("warning: approval_policy = \"never\" in {file}: {why}\n");

    let (out, status) = in_codex_home(&["setup", "codex", "--", "--via", "none"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.ends_with(&warning), "{out}");
    let (report, status) = in_codex_home(&["doctor"]);
    assert_eq!(status, 0, "a warning, not a problem: {report}");
    assert!(report.contains(&format!("\n  {warning}")), "{report}");

    // The selected profile decides; another profile is named for `--profile`.
    let written = std::fs::read_to_string(&config).unwrap();
    let on_request = written.replace(
        "approval_policy = \"never\"",
        "approval_policy = \"on-request\"",
    );
    let selected =
        format!("profile = \"ci\"\n{on_request}\n[profiles.ci]\napproval_policy = \"never\"\n");
    std::fs::write(&config, selected).unwrap();
    let (report, _) = in_codex_home(&["doctor"]);
    assert!(report.contains(&format!("\n  {warning}")), "{report}");
    let other = format!("{on_request}\n[profiles.yolo]\napproval_policy = \"never\"\n");
    std::fs::write(&config, other).unwrap();
    let (report, _) = in_codex_home(&["doctor"]);
    assert!(
        report.contains(&format!(
            "\n  warning: approval_policy = \"never\" in {file} for --profile yolo: with it, {why}\n"
        )),
        "{report}"
    );
    std::fs::write(&config, &on_request).unwrap();
    let (report, status) = in_codex_home(&["doctor"]);
    assert_eq!(status, 0, "{report}");
    assert!(!report.contains("warning:"), "{report}");
    assert!(
        report.contains("  tools/list: ask_user_question\n"),
        "{report}"
    );
}
