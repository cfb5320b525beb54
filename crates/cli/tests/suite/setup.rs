//! `ask-user setup` on hostile config files in a temporary HOME (docs/contract.md §7 "Setup
//! never harms a config"): symlinks (dangling or not), FIFOs, devices, huge files, files of
//! another user, a refusal halfway, the user's own settings in ask-user's entry, comments, key
//! order, number text and file modes; and the phone path in one command (`--hub`, `--hooks`).

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;

use ask_user_test_support::{DEADLINE, hermetic_command, tool};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{BIN, Run};

/// A temporary HOME with its config folders.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    /// The hub token written to the file `token` of the home, with permissions `mode`; its path.
    fn token_file(&self, mode: u32) -> String {
        let file = self.path("token");
        std::fs::write(&file, TOKEN).unwrap();
        std::fs::set_permissions(&file, PermissionsExt::from_mode(mode)).unwrap();
        file.display().to_string()
    }

    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::create_dir_all(dir.path().join(".codex")).unwrap();
        Self { dir }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.path(file), text).unwrap();
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).unwrap()
    }

    fn exists(&self, file: &str) -> bool {
        self.path(file).symlink_metadata().is_ok()
    }

    fn mode(&self, file: &str) -> u32 {
        std::fs::metadata(self.path(file)).unwrap().mode() & 0o7777
    }

    /// `ask-user ARGS` with this HOME and a cleared environment plus `env`; a run that has
    /// not ended by [`DEADLINE`] is killed and fails the test (a hang, e.g. on a FIFO).
    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = hermetic_command(BIN, self.dir.path());
        command
            .env_remove("XDG_CONFIG_HOME")
            .envs(env.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = command.spawn().unwrap();
        let pid = child.id();
        let (done, outcome) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(child.wait_with_output());
        });
        let Ok(output) = outcome.recv_timeout(DEADLINE) else {
            ask_user_test_support::signal(pid, ask_user_test_support::Signal::KILL);
            panic!("ask-user {args:?} did not end within {DEADLINE:?}");
        };
        let output = output.unwrap();
        Run {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// [`Home::run`], asserting it exited 0.
    fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        assert_eq!(run.status, 0, "{run:?}");
        run
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn canonical_bin() -> String {
    std::fs::canonicalize(BIN).unwrap().display().to_string()
}

/// A refusal exits 2, names the file and why, and says nothing was changed.
fn assert_refused(run: &Run, file: &Path, why: &str) {
    assert_eq!(run.status, 2, "{run:?}");
    let shown = file.display().to_string();
    assert!(run.stderr.contains(&shown), "{run:?}");
    assert!(run.stderr.contains(why), "{run:?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:?}");
}

/// A symlink is refused by name, dangling or not, and never followed: no file appears
/// outside HOME, the link and its target stay as they were, and the other file of the host
/// (written first before) is not touched either.
#[test]
fn a_symlinked_config_is_refused_by_name_and_never_followed() {
    let home = Home::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("claude.json");
    symlink(&target, home.path(".claude.json")).unwrap();
    let run = home.run(&["setup", "claude-code"]);
    assert_refused(&run, &home.path(".claude.json"), "symbolic link");
    assert!(!target.exists(), "followed a dangling link");
    assert!(!home.exists(".claude/settings.json"));

    // A link to a real file of the user: refused too; the target keeps its bytes.
    std::fs::remove_file(home.path(".claude.json")).unwrap();
    let settings = outside.path().join("settings.json");
    std::fs::write(&settings, "{\"model\":\"opus\"}").unwrap();
    symlink(&settings, home.path(".claude/settings.json")).unwrap();
    let run = home.run(&["setup", "claude-code"]);
    assert_refused(&run, &home.path(".claude/settings.json"), "symbolic link");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{\"model\":\"opus\"}"
    );
    assert!(!home.exists(".claude.json"), "a refusal changed a file");

    // A symlinked config folder is not followed out either.
    std::fs::remove_file(home.path(".claude/settings.json")).unwrap();
    std::fs::remove_dir(home.path(".claude")).unwrap();
    symlink(outside.path(), home.path(".claude")).unwrap();
    let run = home.run(&["setup", "claude-code"]);
    assert_refused(&run, &home.path(".claude"), "symbolic link");
    assert!(!home.exists(".claude.json"));
}

/// A refusal changes nothing: a broken settings.json leaves ~/.claude.json unwritten.
#[test]
fn a_refusal_writes_no_file() {
    let home = Home::new();
    home.write(".claude.json", "{\"theme\":\"dark\"}\n");
    home.write(".claude/settings.json", "{\"hooks\": {\"PreToolUse\": {}}}");
    let run = home.run(&["setup", "claude-code"]);
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stderr.contains("nothing was changed"), "{run:?}");
    assert_eq!(home.read(".claude.json"), "{\"theme\":\"dark\"}\n");
    assert_eq!(
        home.read(".claude/settings.json"),
        "{\"hooks\": {\"PreToolUse\": {}}}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(home.path(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["settings.json"]);
}

/// A FIFO is refused without being opened (no hang), a device without being read, a file
/// over 1 MiB without being read whole, a file of another user without being touched.
#[test]
fn fifos_devices_huge_files_and_other_users_files_are_refused() {
    let home = Home::new();
    let fifo = home.path(".claude.json");
    let made = tool("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let run = home.run(&["setup", "claude-code"]);
    assert_refused(&run, &fifo, "is a FIFO");
    std::fs::remove_file(&fifo).unwrap();

    let made = tool("mknod")
        .arg(home.path(".claude.json"))
        .args(["c", "1", "5"])
        .status()
        .unwrap();
    if made.success() {
        let run = home.run(&["setup", "claude-code"]);
        assert_refused(&run, &home.path(".claude.json"), "is a device");
        std::fs::remove_file(home.path(".claude.json")).unwrap();
    }

    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(1 << 20));
    home.write(".claude.json", &huge);
    let run = home.run(&["setup", "claude-code"]);
    assert_refused(&run, &home.path(".claude.json"), "over 1 MiB");
    assert_eq!(home.read(".claude.json"), huge);
    std::fs::remove_file(home.path(".claude.json")).unwrap();

    // Root runs the tests here: a file owned by `nobody` stands for another user's.
    home.write(".claude.json", "{}");
    let owned = tool("chown")
        .arg("65534")
        .arg(home.path(".claude.json"))
        .status()
        .unwrap();
    if owned.success() && std::fs::metadata(home.path(".claude.json")).unwrap().uid() == 65534 {
        let run = home.run(&["setup", "claude-code"]);
        assert_refused(&run, &home.path(".claude.json"), "owned by another user");
        assert_eq!(home.read(".claude.json"), "{}");
    }
}

/// Running setup again keeps the user's own `env` and extra flags in ask-user's entry (its
/// command updated), every other setting, the key order and the exact text of numbers.
#[test]
fn setup_keeps_the_users_env_extra_flags_key_order_and_number_text() {
    let home = Home::new();
    let before = r#"{
  "numStartups": 12345678901234567890123,
  "ratio": 1.50,
  "tiny": 1e-400,
  "mcpServers": {
    "ask-user": {
      "type": "stdio",
      "command": "/old/ask-user",
      "args": ["mcp", "--via", "web,inbox", "--session-title", "laptop"],
      "env": {"ASK_USER_HUB_TOKEN_FILE": "/home/u/.config/ask-user/hub-token"},
      "mine": true
    },
    "other": {"command": "x"}
  },
  "zeta": -0.0
}
"#;
    home.write(".claude.json", before);
    home.ok(&["setup", "claude-code"]);
    let after = home.read(".claude.json");
    for number in ["12345678901234567890123", "1.50", "1e-400", "-0.0"] {
        assert!(after.contains(number), "{number} lost in {after}");
    }
    let parsed = json_of(&after.replace("1e-400", "0"));
    let keys: Vec<&String> = parsed.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["numStartups", "ratio", "tiny", "mcpServers", "zeta"]);
    assert_eq!(
        parsed["mcpServers"]["ask-user"],
        json!({
            "type": "stdio",
            "command": canonical_bin(),
            "args": ["mcp", "--via", "web,inbox", "--session-title", "laptop"],
            "env": {"ASK_USER_HUB_TOKEN_FILE": "/home/u/.config/ask-user/hub-token"},
            "mine": true
        })
    );
    // New flags replace the same flags and keep the others.
    home.ok(&["setup", "claude-code", "--", "--via", "web"]);
    let parsed = json_of(&home.read(".claude.json").replace("1e-400", "0"));
    assert_eq!(
        parsed["mcpServers"]["ask-user"]["args"],
        json!(["mcp", "--via", "web", "--session-title", "laptop"])
    );
    assert_eq!(
        parsed["mcpServers"]["ask-user"]["env"],
        json!({"ASK_USER_HUB_TOKEN_FILE": "/home/u/.config/ask-user/hub-token"})
    );
}

/// Codex's config keeps its comments, the user's keys in ask-user's table and its `env`.
#[test]
fn codex_keeps_comments_and_the_users_keys_in_its_table() {
    let home = Home::new();
    home.write(
        ".codex/config.toml",
        "# top comment\nmodel = \"o3\" # inline\n\n# about ask-user\n[mcp_servers.ask-user]\n# the binary\ncommand = \"/old/ask-user\" # old path\nargs = [\"mcp\", \"--via\", \"web\"]\nenabled = true\n\n[mcp_servers.ask-user.env]\nASK_USER_HUB_TOKEN_FILE = \"/t\" # token\n\n# after\n[other]\nx = 1\n",
    );
    home.ok(&["setup", "codex"]);
    let bin = canonical_bin();
    assert_eq!(
        home.read(".codex/config.toml"),
        format!(
            "# top comment\nmodel = \"o3\" # inline\n\n# about ask-user\n[mcp_servers.ask-user]\n# the binary\ncommand = {bin:?} # old path\nargs = [\"mcp\", \"--via\", \"web\"]\nenabled = true\nstartup_timeout_sec = 20\ntool_timeout_sec = 300\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.ask-user.env]\nASK_USER_HUB_TOKEN_FILE = \"/t\" # token\n\n# after\n[other]\nx = 1\n"
        )
    );
}

/// A file's mode is kept (never widened: 0600 stays 0600, 0640 stays 0640); a new file is
/// 0600; a world-writable config folder draws a warning.
#[test]
fn modes_are_kept_and_a_world_writable_folder_draws_a_warning() {
    let home = Home::new();
    home.write(".claude.json", "{}");
    std::fs::set_permissions(home.path(".claude.json"), PermissionsExt::from_mode(0o600)).unwrap();
    home.write(".claude/settings.json", "{}");
    std::fs::set_permissions(
        home.path(".claude/settings.json"),
        PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    let run = home.ok(&["setup", "claude-code"]);
    assert_eq!(home.mode(".claude.json"), 0o600);
    assert_eq!(home.mode(".claude/settings.json"), 0o640);
    assert!(!run.stdout.contains("warning"), "{run:?}");

    home.ok(&["setup", "codex"]);
    assert_eq!(home.mode(".codex/config.toml"), 0o600);
    assert_eq!(home.mode(".codex/hooks.json"), 0o600);

    std::fs::set_permissions(home.path(".claude"), PermissionsExt::from_mode(0o777)).unwrap();
    std::fs::remove_file(home.path(".claude/settings.json")).unwrap();
    let run = home.ok(&["setup", "claude-code"]);
    let folder = home.path(".claude").display().to_string();
    assert!(
        run.stdout
            .contains(&format!("warning: {folder} is writable by every user")),
        "{run:?}"
    );
}

/// All the strings of the hook commands in a settings file, by event.
fn hook_commands(settings: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (event, groups) in settings["hooks"].as_object().into_iter().flatten() {
        for group in groups.as_array().into_iter().flatten() {
            for handler in group["hooks"].as_array().into_iter().flatten() {
                out.push((
                    event.clone(),
                    group["matcher"].as_str().unwrap_or_default().to_owned(),
                    handler["command"].as_str().unwrap_or_default().to_owned(),
                ));
            }
        }
    }
    out
}

/// Every file under `dir` holding `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = path.symlink_metadata().unwrap();
        if meta.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if meta.is_file() && std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle))
        {
            found.push(path);
        }
    }
    found
}

const TOKEN: &str = "aut_0123456789abcdef0123456789abcdef";

/// `setup claude-code --hub URL` wires the MCP entry and every hook to the hub, the token
/// kept only in a file of mode 0600 that setup names; it says what it installed and how to
/// change it.
#[test]
fn one_command_wires_the_tool_and_the_hooks_to_the_hub() {
    let home = Home::new();
    let url = "https://hub.example:8765";
    let run = home.run_env(
        &["setup", "claude-code", "--hub", url],
        &[("ASK_USER_HUB_TOKEN", TOKEN)],
    );
    assert_eq!(run.status, 0, "{run:?}");
    let token_file = home.path(".config/ask-user/hub-token");
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        format!("{TOKEN}\n")
    );
    assert_eq!(home.mode(".config/ask-user/hub-token"), 0o600);
    assert_eq!(
        files_holding(home.dir.path(), TOKEN),
        std::slice::from_ref(&token_file)
    );
    let token_path = token_file.display().to_string();

    let claude = json_of(&home.read(".claude.json"));
    assert_eq!(
        claude["mcpServers"]["ask-user"]["args"],
        json!(["mcp", "--hub", url, "--hub-token-file", token_path])
    );
    let settings = json_of(&home.read(".claude/settings.json"));
    let hub_flags = format!("'--hub' '{url}' '--hub-token-file' '{token_path}'");
    let bin = canonical_bin();
    let command = format!("'{bin}' hook claude-code --wait 59m {hub_flags}");
    assert_eq!(
        hook_commands(&settings),
        [
            (
                "PreToolUse".to_owned(),
                "AskUserQuestion|ExitPlanMode".to_owned(),
                command.clone()
            ),
            ("PermissionRequest".to_owned(), "*".to_owned(), command),
        ]
    );
    // While a hook waits, Claude Code's own screen says where the question is.
    assert_eq!(
        settings["hooks"]["PermissionRequest"][0]["hooks"][0]["statusMessage"],
        format!("ask-user: waiting for your answer on the hub ({url})")
    );
    for said in [
        &format!("stored the hub token from ASK_USER_HUB_TOKEN in {token_path} (mode 0600)"),
        "questions (PreToolUse AskUserQuestion), plan approvals (PreToolUse ExitPlanMode), permission prompts (PermissionRequest \"*\": every tool)",
        &format!(
            "Answers: on the hub at {url} (the token read from {token_path}), for the tool and the hooks alike."
        ),
        "`ask-user setup claude-code --hooks questions,plans,permissions` (any of them) or `--hooks none`",
        "--permission-mode default",
    ] {
        assert!(run.stdout.contains(said), "{said:?} not in {}", run.stdout);
    }

    // Again without --hub: the hub stays (the user's flags are kept), on the hooks too.
    let again = home.run(&["setup", "claude-code"]);
    assert_eq!(again.status, 0, "{again:?}");
    assert_eq!(again.stdout.matches("unchanged: ").count(), 2, "{again:?}");

    // Fewer hooks: the others are removed; none: all of ours are.
    home.ok(&["setup", "claude-code", "--hooks", "permissions"]);
    let settings = json_of(&home.read(".claude/settings.json"));
    let events: Vec<_> = hook_commands(&settings)
        .into_iter()
        .map(|(e, m, _)| (e, m))
        .collect();
    assert_eq!(events, [("PermissionRequest".to_owned(), "*".to_owned())]);
    let run = home.ok(&["setup", "claude-code", "--hooks", "none"]);
    assert!(run.stdout.contains("Hooks: none"), "{run:?}");
    let settings = json_of(&home.read(".claude/settings.json"));
    assert_eq!(settings["hooks"], json!({}));
    assert_eq!(
        settings["permissions"]["allow"],
        json!(["mcp__ask-user__ask_user_question"])
    );
}

/// The token never goes into a readable file: `--hub-token` after `--` is refused (nothing
/// written), `--hub` without a token or with a token file others can read is refused; `--hub`
/// after `--` reaches the hooks too; Codex gets its permission hook on the hub.
#[test]
fn the_hub_token_is_never_written_where_others_read_it() {
    let home = Home::new();
    let run = home.run(&[
        "setup",
        "claude-code",
        "--",
        "--hub",
        "http://127.0.0.1:1",
        "--hub-token",
        TOKEN,
    ]);
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stderr.contains("--hub-token-file"), "{run:?}");
    assert!(!run.stderr.contains(TOKEN), "{run:?}");
    assert_eq!(files_holding(home.dir.path(), TOKEN), Vec::<PathBuf>::new());
    assert!(!home.exists(".claude.json"));

    let run = home.run(&["setup", "claude-code", "--hub", "http://127.0.0.1:1"]);
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stderr.contains("ASK_USER_HUB_TOKEN"), "{run:?}");
    assert!(!home.exists(".claude.json"));

    let shared_path = home.token_file(0o644);
    let run = home.run(&[
        "setup",
        "codex",
        "--hub",
        "http://127.0.0.1:1",
        "--hub-token-file",
        &shared_path,
    ]);
    assert_eq!(run.status, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!("chmod 600 {shared_path}")),
        "{run:?}"
    );
    assert!(!home.exists(".codex/config.toml"));

    std::fs::set_permissions(&shared_path, PermissionsExt::from_mode(0o600)).unwrap();
    home.ok(&[
        "setup",
        "codex",
        "--",
        "--hub",
        "http://127.0.0.1:1",
        "--hub-token-file",
        &shared_path,
    ]);
    let hooks = json_of(&home.read(".codex/hooks.json"));
    let bin = canonical_bin();
    assert_eq!(
        hook_commands(&hooks),
        [(
            "PermissionRequest".to_owned(),
            "*".to_owned(),
            format!(
                "'{bin}' hook codex --wait 59m '--hub' 'http://127.0.0.1:1' '--hub-token-file' '{shared_path}'"
            )
        )]
    );
    assert!(
        home.read(".codex/config.toml").contains(&format!(
            "args = [\"mcp\", \"--hub\", \"http://127.0.0.1:1\", \"--hub-token-file\", {shared_path:?}]"
        )),
        "{}",
        home.read(".codex/config.toml")
    );
    let run = home.run(&["setup", "codex", "--hooks", "questions"]);
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stderr.contains("it has: permissions"), "{run:?}");
}

/// `setup --help` says which hooks are installed (PermissionRequest "*" included) and how to
/// opt out.
#[test]
fn setup_help_names_the_hooks_and_the_opt_out() {
    let home = Home::new();
    let run = home.ok(&["setup", "--help"]);
    for said in [
        "PermissionRequest \"*\"",
        "--hooks none",
        "AskUserQuestion|ExitPlanMode",
        "mode 0600",
    ] {
        assert!(run.stdout.contains(said), "{said:?} not in {}", run.stdout);
    }
}

/// `doctor` says when Claude Code's permission mode keeps its permission prompts from the hook
/// (auto, bypassPermissions, dontAsk), with the fix; a mode that lets them through is named too.
#[test]
fn doctor_reports_the_permission_mode_that_keeps_prompts_from_the_hook() {
    let home = Home::new();
    home.ok(&["setup", "claude-code"]);
    let settings_file = home.path(".claude/settings.json");
    let mut settings = json_of(&home.read(".claude/settings.json"));
    let shown = settings_file.display().to_string();

    let run = home.run(&["doctor"]);
    assert!(
        run.stdout.contains(&format!(
            "  warning: no permissions.defaultMode in {shown}: Claude Code may start in auto mode"
        )),
        "{run:?}"
    );
    for mode in ["auto", "bypassPermissions", "dontAsk"] {
        settings["permissions"]["defaultMode"] = json!(mode);
        home.write(".claude/settings.json", &settings.to_string());
        let run = home.run(&["doctor"]);
        assert_eq!(run.status, 0, "a warning, not a problem: {run:?}");
        assert!(
            run.stdout.contains(&format!(
                "  warning: permission mode {mode:?} (permissions.defaultMode in {shown}): Claude Code decides permission prompts itself, so they never reach ask-user's PermissionRequest hook; set \"defaultMode\": \"default\" there, or start claude with --permission-mode default\n"
            )),
            "{run:?}"
        );
    }
    settings["permissions"]["defaultMode"] = json!("default");
    home.write(".claude/settings.json", &settings.to_string());
    let run = home.run(&["doctor"]);
    assert!(
        run.stdout
            .contains("  permission mode: \"default\": permission prompts reach the hook\n"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("warning"), "{run:?}");
}

/// `doctor` lists the hooks setup installed for a host, where they ask (the hub or the inbox)
/// and whether they ask now (the away switch).
#[test]
fn doctor_lists_the_hooks_where_they_ask_and_the_away_switch() {
    let home = Home::new();
    let token = home.token_file(0o600);
    home.ok(&[
        "setup",
        "claude-code",
        "--hooks",
        "questions,permissions",
        "--hub",
        "http://127.0.0.1:1",
        "--hub-token-file",
        &token,
    ]);
    home.ok(&["setup", "codex"]);

    let run = home.run(&["doctor"]);
    assert!(
        run.stdout.contains("  hooks: PreToolUse \"AskUserQuestion\", PermissionRequest \"*\"; they ask through the hub at http://127.0.0.1:1 while `ask-user away on` (now off: the host's own dialogs)\n"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("  hooks: PermissionRequest \"*\"; they ask in `ask-user inbox` while `ask-user away on` (now off: the host's own dialogs)\n"),
        "{run:?}"
    );
    home.ok(&["away", "on"]);
    let run = home.run(&["doctor"]);
    assert!(
        run.stdout.contains("while `ask-user away on` (now on)\n"),
        "{run:?}"
    );
}

/// A token an earlier setup (or the user) left in ask-user's own entry is taken out, with a
/// warning; the other flags stay.
#[test]
fn a_token_left_in_the_entry_is_removed_with_a_warning() {
    let home = Home::new();
    home.write(
        ".claude.json",
        &json!({"mcpServers": {"ask-user": {"command": "/old/ask-user",
            "args": ["mcp", "--hub", "http://127.0.0.1:1", "--hub-token", TOKEN, "--via", "hub"]}}})
        .to_string(),
    );
    let run = home.ok(&["setup", "claude-code", "--hooks", "none"]);
    let claude = json_of(&home.read(".claude.json"));
    assert_eq!(
        claude["mcpServers"]["ask-user"]["args"],
        json!(["mcp", "--hub", "http://127.0.0.1:1", "--via", "hub"])
    );
    assert_eq!(files_holding(home.dir.path(), TOKEN), Vec::<PathBuf>::new());
    assert!(
        run.stdout.contains("warning: removed --hub-token from "),
        "{run:?}"
    );
    assert!(
        !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN),
        "{run:?}"
    );
}
