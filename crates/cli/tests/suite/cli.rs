//! The CLI without a terminal: stdout bytes, stderr lines and exit statuses.

use ask_user_core::definition::{ProviderFormat, definition};
use ask_user_core::{DELEGATED_CALLER_TEXT, NO_PROVIDER_TEXT};
use pretty_assertions::assert_eq;

use super::support::{BIN, Run, repo_file, run, run_env};

const DEPLOY_FILE: &str = "examples/deploy.json";

/// `ask-user ask --answers FILE` of the deploy example, FILE holding `answers`.
fn ask_deploy_answered(answers: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("answers.json");
    std::fs::write(&file, answers).unwrap();
    run(
        &[
            "ask",
            "--answers",
            file.to_str().unwrap(),
            repo_file(DEPLOY_FILE).to_str().unwrap(),
        ],
        "",
    )
}

#[test]
fn schema_prints_the_golden_bytes_of_every_format() {
    // A fresh process against the golden files committed by ask-user-core's definition test.
    let golden = |format: ProviderFormat| {
        std::fs::read_to_string(repo_file(&format!(
            "crates/core/tests/golden/definition/{format}.json"
        )))
        .unwrap()
    };
    let canonical = run(&["schema"], "");
    assert_eq!(
        (canonical.status, canonical.stdout.as_str()),
        (0, golden(ProviderFormat::Canonical).as_str())
    );
    for format in ProviderFormat::ALL {
        let out = run(&["schema", "--format", format.name()], "");
        assert_eq!((out.status, &out.stdout), (0, &golden(format)), "{format}");
        assert_eq!(out.stdout, definition(format), "{format}");
        for alias in format.aliases() {
            let out = run(&["schema", "--format", alias], "");
            assert_eq!(out.stdout, golden(format), "{alias}");
        }
    }
    let alias = run(&["schema", "--format", "deepseek"], "");
    assert_eq!(alias.stdout, golden(ProviderFormat::OpenAiChat));
}

/// `canonical, openai-chat, …`: every name of `ProviderFormat::ALL`, in order.
fn format_names() -> String {
    ProviderFormat::ALL.map(ProviderFormat::name).join(", ")
}

#[test]
fn schema_refuses_an_unknown_format() {
    let out = run(&["schema", "--format", "cohere"], "");
    assert_eq!(out.status, 2);
    assert!(out.stdout.is_empty());
    let expected = format!(
        "error: invalid value 'cohere' for '--format <NAME>'\n  [possible values: {}]\n",
        format_names()
    );
    assert!(out.stderr.starts_with(&expected), "{}", out.stderr);
    assert!(
        out.stderr.contains("openai-chat-strict, openai-responses, openai-responses-strict, anthropic, anthropic-strict, deepseek-strict"),
        "{}",
        out.stderr
    );
}

#[test]
fn schema_help_lists_every_format_and_says_what_strict_means() {
    let out = run(&["schema", "--help"], "");
    assert_eq!(out.status, 0);
    let help = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(&format!("[possible values: {}]", format_names())),
        "{help}"
    );
    for needle in [
        "`deepseek` is `openai-chat`",
        "A `*-strict` format turns on the provider's strict mode",
        "docs/tool-catalog.md",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}

#[test]
fn check_prints_the_canonical_request_and_names_each_leniency() {
    let sent = r#"{"question":"Deploy now?","header":null,"multiSelect":false,"choices":["Yes (Recommended)","No"],"color":"red"}"#;
    let out = run(&["check"], sent);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (
            0,
            r#"{"questions":[{"id":"q1","question":"Deploy now?","options":[{"label":"Yes (Recommended)"},{"label":"No"}],"multi_select":false}]}"#
        )
    );
    assert_eq!(
        out.stderr,
        "leniency: arguments: a single question object, read as a one-element questions array\n\
         leniency: questions[0].id: missing, set to \"q1\"\n\
         leniency: questions[0].header: null, read as absent\n\
         leniency: questions[0].choices: read as options\n\
         leniency: questions[0].choices[0]: a plain string, read as its label\n\
         leniency: questions[0].choices[1]: a plain string, read as its label\n\
         leniency: questions[0].multiSelect: read as multi_select\n\
         leniency: questions[0].color: unknown key, ignored\n"
    );
}

#[test]
fn check_reads_a_file_or_stdin() {
    let file = repo_file(DEPLOY_FILE);
    let from_file = run(&["check", file.to_str().unwrap()], "");
    let text = std::fs::read_to_string(&file).unwrap();
    let from_dash = run(&["check", "-"], &text);
    let from_stdin = run(&["check"], &text);
    assert_eq!(from_file.status, 0);
    assert_eq!(from_file.stderr, "");
    assert!(
        from_file
            .stdout
            .starts_with(r#"{"questions":[{"id":"env","question":"Which environment"#)
    );
    assert_eq!(from_dash.stdout, from_file.stdout);
    assert_eq!(from_stdin.stdout, from_file.stdout);
}

#[test]
fn check_refuses_invalid_arguments_with_the_model_facing_text() {
    let out = run(
        &["check"],
        r#"{"questions":[{"id":"a","question":" ","options":["x","x"]},{"id":"a","question":"b"}]}"#,
    );
    assert_eq!(out.status, 3);
    assert_eq!(out.stderr, "");
    let expected = ask_user_core::decode(
        r#"{"questions":[{"id":"a","question":" ","options":["x","x"]},{"id":"a","question":"b"}]}"#,
        &ask_user_core::Limits::default(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(out.stdout, expected);
    assert!(
        out.stdout
            .starts_with("Error: invalid arguments: questions[0].question: "),
        "{}",
        out.stdout
    );
}

#[test]
fn ask_with_invalid_arguments_exits_3_before_anyone_is_asked() {
    let out = run(&["ask"], r#"{"questions":[]}"#);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (
            3,
            "Error: invalid arguments: questions: empty, add at least one question"
        )
    );
    let out = run(&["ask"], "not json");
    assert_eq!(out.status, 3);
    assert!(
        out.stdout
            .starts_with("Error: invalid arguments: arguments: not valid JSON ("),
        "{}",
        out.stdout
    );
}

#[test]
fn ask_without_a_terminal_exits_6_at_once() {
    let out = run(&["ask", repo_file(DEPLOY_FILE).to_str().unwrap()], "");
    assert_eq!((out.status, out.stdout.as_str()), (6, NO_PROVIDER_TEXT));
    let out = run(
        &["ask", "--via", "terminal,terminal"],
        r#"{"question":"Go?"}"#,
    );
    assert_eq!((out.status, out.stdout.as_str()), (6, NO_PROVIDER_TEXT));
}

#[test]
fn ask_answers_from_data() {
    let out = ask_deploy_answered(
        r#"{"answers":[{"id":"checks","selected":["Load test","Unit tests (Recommended)"],"custom":" also lint "},{"id":"env","selected":["Production"]},{"id":"note","selected":[]}]}"#,
    );
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            r#"{"answers":[{"id":"env","selected":["Production"]},{"id":"checks","selected":["Unit tests (Recommended)","Load test"],"custom":"also lint"},{"id":"note","selected":[]}]}"#,
            ""
        )
    );
}

#[test]
fn scripted_answers_that_do_not_fit_exit_1() {
    let out = ask_deploy_answered(r#"{"answers":[{"id":"env","selected":["Moon"]}]}"#);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (
            1,
            "Error: the answer did not fit the questions (\"Moon\" is not one of the options of question \"env\"); ask again"
        )
    );
}

/// Data that leaves a question out is not an answer (a skip is explicit,
/// `"selected":[]`); `{"answers":[]}` used to exit 0 with every question skipped.
#[test]
fn scripted_answers_that_omit_a_question_exit_1() {
    let cases = [
        (r#"{"answers":[]}"#, "env"),
        (
            r#"{"answers":[{"id":"env","selected":["Production"]},{"id":"note","selected":[]}]}"#,
            "checks",
        ),
    ];
    for (data, omitted) in cases {
        let out = ask_deploy_answered(data);
        assert_eq!(
            (out.status, out.stdout.as_str()),
            (
                1,
                format!(
                    "Error: the answer did not fit the questions (question \"{omitted}\" is not answered; answer it, or skip it explicitly (nothing selected, no own answer)); ask again"
                )
                .as_str()
            ),
            "{data}"
        );
    }
}

#[test]
fn unreadable_answers_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, r#"{"answer":[]}"#).unwrap();
    let out = run(
        &["ask", "--answers", answers.to_str().unwrap()],
        r#"{"question":"Go?"}"#,
    );
    assert_eq!(out.status, 2);
    assert!(out.stdout.is_empty());
    // Our text, then serde_json's reason (only checked to name the missing field).
    let ours = format!(
        "ask-user: --answers {}: not {{\"answers\":[{{\"id\",\"selected\",\"custom\"?}}]}}: ",
        answers.display()
    );
    assert!(
        out.stderr.starts_with(&ours) && out.stderr[ours.len()..].contains("answers"),
        "{}",
        out.stderr
    );
    let missing = run(
        &["ask", "--answers", "/nonexistent/a.json"],
        r#"{"question":"Go?"}"#,
    );
    assert_eq!(missing.status, 2);
    assert!(
        missing
            .stderr
            .starts_with("ask-user: --answers /nonexistent/a.json: cannot read it: "),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_sub_agent_is_refused_with_exit_7() {
    let out = run(
        &["ask", "--delegated-by", "planner"],
        r#"{"question":"Go?"}"#,
    );
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (7, DELEGATED_CALLER_TEXT)
    );
    let out = run_env(
        &["ask"],
        r#"{"question":"Go?"}"#,
        &[("ASK_USER_DELEGATED_BY", "planner")],
    );
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (7, DELEGATED_CALLER_TEXT)
    );
}

#[test]
fn usage_errors_exit_2_and_say_what_to_do() {
    let out = run(&["ask", "--via", "carrier-pigeon"], r#"{"question":"Go?"}"#);
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (
            2,
            "",
            "ask-user: --via: unknown answerer \"carrier-pigeon\"; use one or more of: terminal, web, inbox, hub, none\n"
        )
    );
    let out = run(&["ask", "--via", " , "], r#"{"question":"Go?"}"#);
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (
            2,
            "",
            "ask-user: --via needs at least one of: terminal, web, inbox, hub, none\n"
        )
    );
    let out = run(&["ask", "/nonexistent/q.json"], "");
    assert_eq!(out.status, 2);
    assert!(
        out.stderr
            .starts_with("ask-user: cannot read /nonexistent/q.json: "),
        "{}",
        out.stderr
    );
    let out = run(&["ask", "--timeout", "0s"], "");
    assert_eq!(out.status, 2);
    assert!(
        out.stderr.contains("the timeout must be longer than zero"),
        "{}",
        out.stderr
    );
    let out = run(&["ask", "--timeout", "soon"], "");
    assert_eq!(out.status, 2);
    assert!(
        out.stderr
            .contains("invalid value 'soon' for '--timeout <DURATION>'"),
        "{}",
        out.stderr
    );
}

#[test]
fn help_shows_examples_and_exit_statuses_and_version_prints() {
    let help = run(&["--help"], "");
    assert_eq!(help.status, 0);
    for needle in [
        "Examples:",
        "ask-user ask examples/deploy.json",
        "4 dismissed, 5 timed out",
        "ask-user schema --format anthropic",
    ] {
        assert!(
            help.stdout.contains(needle),
            "{needle:?} in\n{}",
            help.stdout
        );
    }
    let ask_help = run(&["ask", "--help"], "");
    assert!(
        ask_help.stdout.contains("--timeout <DURATION>"),
        "{}",
        ask_help.stdout
    );
    assert!(
        ask_help.stdout.contains("--via <LIST>"),
        "{}",
        ask_help.stdout
    );
    let version = run(&["--version"], "");
    assert_eq!(
        (version.status, version.stdout.as_str()),
        (0, concat!("ask-user ", env!("CARGO_PKG_VERSION"), "\n"))
    );
    assert!(!BIN.is_empty());
}

/// `ask` and `mcp` take `--via`, `--answers` and `--timeout` from one registry
/// (`ask-user-via`, `ask-user-host`): the same names, the same checks, the same texts.
#[test]
fn ask_and_mcp_refuse_the_same_via_answers_and_timeout_with_the_same_text() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["--via", "carrier-pigeon"],
            "ask-user: --via: unknown answerer \"carrier-pigeon\"; use one or more of: terminal, web, inbox, hub, none\n",
        ),
        (
            &["--via", ","],
            "ask-user: --via needs at least one of: terminal, web, inbox, hub, none\n",
        ),
        (
            &["--via", "none,terminal"],
            "ask-user: --via none cannot be combined with other answerers\n",
        ),
        (
            &["--answers", "/nonexistent/a.json"],
            "ask-user: --answers /nonexistent/a.json: cannot read it: ",
        ),
    ];
    for (flags, text) in cases {
        for host in ["ask", "mcp"] {
            let args: Vec<&str> = [host].iter().chain(flags).copied().collect();
            let out = run(&args, r#"{"question":"Go?"}"#);
            assert_eq!((out.status, out.stdout.as_str()), (2, ""), "{args:?}");
            assert!(
                out.stderr.starts_with(text),
                "{args:?}: {:?} does not start with {text:?}",
                out.stderr
            );
        }
    }
    for host in ["ask", "mcp"] {
        let out = run(&[host, "--timeout", "0s"], "");
        assert_eq!(out.status, 2, "{host}");
        assert!(
            out.stderr.contains(
                "invalid value '0s' for '--timeout <DURATION>': the timeout must be longer than zero"
            ),
            "{host}: {}",
            out.stderr
        );
        let help = run(&[host, "--help"], "");
        assert!(
            help.stdout.contains("terminal")
                && help.stdout.contains("web")
                && help.stdout.contains("none"),
            "{host}: {}",
            help.stdout
        );
    }
    let nobody = run(&["ask", "--via", "none"], r#"{"question":"Go?"}"#);
    assert_eq!(
        (nobody.status, nobody.stdout.as_str()),
        (6, NO_PROVIDER_TEXT)
    );
}

#[test]
fn completions_are_generated_for_each_shell_and_load_in_bash() {
    for (shell, marker) in [
        ("bash", "complete -F _ask__user"),
        ("zsh", "#compdef ask-user"),
        ("fish", "complete -c ask-user"),
        ("elvish", "edit:completion:arg-completer[ask-user]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = run(&["completions", shell], "");
        assert_eq!(out.status, 0, "{shell}: {}", out.stderr);
        assert!(out.stdout.contains(marker), "{shell}: {}", out.stdout);
        // Every subcommand is offered.
        for sub in ["ask", "check", "schema", "mcp", "completions", "man"] {
            assert!(out.stdout.contains(sub), "{shell} lacks {sub}");
        }
    }
    // The bash script really loads and registers the completion.
    let loaded = ask_user_test_support::tool("bash")
        .arg("-c")
        .arg(format!(
            "source <('{BIN}' completions bash) && complete -p ask-user"
        ))
        .output()
        .unwrap();
    let registered = String::from_utf8_lossy(&loaded.stdout);
    assert!(
        registered.starts_with("complete ")
            && registered.trim_end().ends_with(" -F _ask__user ask-user"),
        "{registered:?} {}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    let out = run(&["completions", "tcsh"], "");
    assert_eq!(out.status, 2);
    assert!(
        out.stderr.contains("invalid value 'tcsh' for '<SHELL>'"),
        "{}",
        out.stderr
    );
}

#[test]
fn man_prints_one_page_with_every_subcommand_and_its_options() {
    let out = run(&["man"], "");
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with(".ie \\n(.g .ds Aq \\(aq"),
        "{}",
        &out.stdout[..200]
    );
    for needle in [
        ".TH ask-user 1",
        ".SH NAME",
        ".SH SUBCOMMANDS",
        ".SH \"ASK-USER ASK\"",
        ".SH \"ASK-USER MCP\"",
        ".SH \"ASK-USER MAN\"",
        "\\-\\-timeout",
        "\\-\\-via",
        "\\-\\-journal",
    ] {
        assert!(out.stdout.contains(needle), "{needle:?} in\n{}", out.stdout);
    }
}
