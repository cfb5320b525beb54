//! The suite's spawning helpers keep the developer's environment out: cheap tests of the
//! helpers that start `ask-user` (directly, under `setsid`, `script` or `bash`) run again in a
//! child test process whose own environment holds a developer's `ASK_USER_*` settings — a hub
//! that refuses connections, a token, a store file, a delegating agent. Each still passes only
//! if the `ask-user` it started saw none of them; a store file appearing would say one did.

use ask_user_test_support::tool;

/// One cheap test per spawning helper: `run`/`run_env` (`setsid`), `run_headless` (`setsid`
/// with `--via web`), the completions' `bash`, the pseudo-terminal of `script`, `hub serve`,
/// the tmux pane of `Pane`, the hook's `spawn`, the hub tests' `ask_user_at`, the stored
/// asker of the exactly-once tests.
const UNDER_A_DEVELOPERS_ENVIRONMENT: [&str; 9] = [
    "suite::cli::ask_without_a_terminal_exits_6_at_once",
    "suite::cli::completions_are_generated_for_each_shell_and_load_in_bash",
    "suite::web::without_a_terminal_the_url_never_reaches_stderr",
    "suite::terminal::a_signal_while_the_terminal_is_being_set_up_still_restores_it",
    "suite::newcomer::login_link_prints_the_port_the_hub_serves_on",
    "suite::terminal::enter_accepts_the_recommended_option",
    "suite::hook::away_off_falls_through_and_away_on_asks",
    "suite::hub_abuse::help_never_prints_the_store_url",
    "suite::exactly_once_stored::no_terminal_and_no_stored_ask_is_nobody_can_answer_and_stores_nothing",
];

#[test]
fn spawned_processes_never_see_the_developers_ask_user_variables() {
    let dir = tempfile::tempdir().unwrap();
    let leak = dir.path().join("developers-store.sqlite3");
    let out = tool(std::env::current_exe().unwrap())
        .args(["--exact", "--test-threads", "2"])
        .args(UNDER_A_DEVELOPERS_ENVIRONMENT)
        .env("ASK_USER_HUB", "http://127.0.0.1:1")
        .env("ASK_USER_HUB_TOKEN", "the-developers-token")
        .env("ASK_USER_STORE", format!("sqlite:{}", leak.display()))
        .env("ASK_USER_DELEGATED_BY", "the-developers-agent")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && stdout.contains(&format!(
                "test result: ok. {} passed",
                UNDER_A_DEVELOPERS_ENVIRONMENT.len()
            )),
        "under a developer's ASK_USER_* variables:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !leak.exists(),
        "a spawned ask-user opened the developer's store"
    );
}
