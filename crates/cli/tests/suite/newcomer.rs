//! What a newcomer meets first: hub misconfiguration is a usage error that says what to fix,
//! `hub login-link` links to where the hub really serves, and no help text shows rustdoc
//! link syntax.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use super::support::{BIN, run, run_env};

/// Generous: the machine is small and shared.
const DEADLINE: Duration = Duration::from_secs(90);

#[test]
fn a_hub_url_without_http_or_an_unusable_token_is_a_usage_error() {
    let url_text = "--hub: each URL must start with http:// or https:// and name the hub's host";
    let token_text = "the hub token must be one word of printable ASCII";
    for host in ["ask", "mcp"] {
        for (url, token, text) in [
            ("127.0.0.1:8765", "auh_good", url_text),
            ("hub.example.org", "auh_good", url_text),
            ("http://", "auh_good", url_text),
            ("ftp://hub.example.org", "auh_good", url_text),
            ("http://127.0.0.1:8765", "auh_a b", token_text),
            ("http://127.0.0.1:8765", "auh_x\n", token_text),
            ("http://127.0.0.1:8765", "\u{201c}auh_x\u{201d}", token_text),
        ] {
            let out = run_env(&[host, "--hub", url], "", &[("ASK_USER_HUB_TOKEN", token)]);
            assert_eq!(out.status, 2, "{host} --hub {url:?}: {}", out.stderr);
            assert!(
                out.stderr.contains(text),
                "{host} --hub {url:?}: {}",
                out.stderr
            );
            assert!(
                !out.stderr.contains("auh_"),
                "the token leaked: {}",
                out.stderr
            );
        }
    }
}

/// `hub serve` on a port of its own; `login-link` on the same store prints that port, and
/// `--url` still wins.
#[test]
fn login_link_prints_the_port_the_hub_serves_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
    let mut hub = ask_user_test_support::hermetic_command(BIN, dir.path())
        .args(["hub", "serve", "--listen", "127.0.0.1:0", "--store", &store])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stderr = hub.stderr.take().unwrap();
    let hub = Kill(hub);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(i) = line.find("serving on ") {
                let _ = tx.send(line[i + 11..].split(' ').next().unwrap().to_owned());
            }
        }
    });
    let served = rx
        .recv_timeout(DEADLINE)
        .expect("the hub printed its address");
    assert!(!served.ends_with(":8765"), "{served}");

    let link = |extra: &[&str]| {
        let mut args = vec!["hub", "login-link", "--store", &store];
        args.extend_from_slice(extra);
        let out = run_env(&args, "", &[("HOME", dir.path().to_str().unwrap())]);
        assert_eq!(out.status, 0, "{}", out.stderr);
        out.stdout
    };
    let printed = link(&[]);
    assert!(
        printed.starts_with(&format!("{served}/")),
        "{printed} (serving on {served})"
    );
    let printed = link(&["--url", "https://hub.example.org"]);
    assert!(printed.starts_with("https://hub.example.org/"), "{printed}");
    drop(hub);

    // A store no hub has served: the default address.
    let other = format!("sqlite:{}", dir.path().join("other.sqlite3").display());
    let out = run(&["hub", "login-link", "--store", &other], "");
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("http://127.0.0.1:8765/"),
        "{}",
        out.stdout
    );
}

/// The subcommands listed under "Commands:" in a help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn no_help_text_shows_rustdoc_link_syntax() {
    let mut todo = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let out = run(&args, "");
        assert_eq!(out.status, 0, "{args:?}: {}", out.stderr);
        seen += 1;
        for bad in ["[`", "`]", "](", "crate::", "Self::"] {
            assert!(
                !out.stdout.contains(bad),
                "`ask-user {}` shows {bad:?}:\n{}",
                args.join(" "),
                out.stdout
            );
        }
        for sub in subcommands(&out.stdout) {
            let mut next = path.clone();
            next.push(sub);
            todo.push(next);
        }
    }
    assert!(seen > 10, "only {seen} help texts found");
}
