//! A store URL's password never reaches `--help` or an error text, whichever subcommand reads
//! `--store`/`ASK_USER_STORE` (docs/contract.md §9 "Operations": secrets in one redacting type).

const BIN: &str = env!("CARGO_BIN_EXE_ask-user");
const PASSWORD: &str = "hunter2-pw";

/// `ask-user ARGS` with a cleared environment: a private HOME and `env`.
fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let home = tempfile::tempdir().unwrap();
    let out = ask_user_test_support::hermetic_command(BIN, home.path())
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn help_never_prints_the_store_url_from_the_environment() {
    let url = format!("postgres://agent:{PASSWORD}@127.0.0.1:1/asks");
    let env = [("ASK_USER_STORE", url.as_str())];
    for args in [
        &["ask", "--help"][..],
        &["mcp", "--help"],
        &["history", "--help"],
        &["inbox", "--help"],
        &["hub", "serve", "--help"],
        &["hub", "login-link", "--help"],
    ] {
        let (status, text) = run(args, &env);
        assert_eq!(status, 0, "{args:?}: {text}");
        assert!(text.contains("--store"), "{args:?}: {text}");
        assert!(
            !text.contains(PASSWORD),
            "{args:?} printed the password: {text}"
        );
    }
}

#[test]
fn a_store_that_cannot_be_used_is_named_without_its_password() {
    for url in [
        format!("postgres://agent:{PASSWORD}@127.0.0.1:1/asks?connect_timeout=1"),
        format!("postgress://agent:{PASSWORD}@db/asks"),
        format!("postgres://127.0.0.1:1/asks?password={PASSWORD}&connect_timeout=1"),
    ] {
        let (status, text) = run(&["history"], &[("ASK_USER_STORE", url.as_str())]);
        assert_ne!(status, 0, "{url}: {text}");
        assert!(text.contains("cannot use this store"), "{url}: {text}");
        assert!(
            !text.contains(PASSWORD),
            "{url}: the password was printed: {text}"
        );
    }
}
