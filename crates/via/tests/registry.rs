//! The answerer registry: names, checks, error texts and the factory (both hosts use these;
//! `crates/cli/tests` and `crates/mcp/tests` check the hosts report them the same).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ask_user_core::UserInteraction;
use ask_user_via::{ANSWERERS, Options, ViaError, answers_file, build, help, long_help, resolve};
use pretty_assertions::assert_eq;

/// The error of `result`, whose answerers have no `Debug`.
fn err<T>(result: Result<T, ViaError>) -> ViaError {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn list(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn names_of(chosen: &[&ask_user_via::Answerer]) -> Vec<&'static str> {
    chosen.iter().map(|a| a.name).collect()
}

#[test]
fn the_registry_lists_every_answerer_once_with_a_help_line() {
    let names: Vec<_> = ANSWERERS.iter().map(|a| a.name).collect();
    assert_eq!(names, ["terminal", "web", "inbox", "hub", "none"]);
    for a in ANSWERERS {
        assert!(!a.help.is_empty() && !a.help.contains('\n'), "{}", a.name);
        assert!(a.name.bytes().all(|b| b.is_ascii_lowercase()), "{}", a.name);
    }
    assert_eq!(ask_user_via::names(), "terminal, web, inbox, hub, none");
}

#[test]
fn resolve_skips_blanks_and_repeats_and_keeps_the_order() {
    assert_eq!(
        names_of(&resolve(&list(&[" web", "terminal ", "", "web"])).unwrap()),
        ["web", "terminal"]
    );
    assert_eq!(names_of(&resolve(&list(&["none"])).unwrap()), ["none"]);
}

#[test]
fn every_usage_error_text_is_pinned() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["terminal", "carrier-pigeon"],
            r#"--via: unknown answerer "carrier-pigeon"; use one or more of: terminal, web, inbox, hub, none"#,
        ),
        (
            &["Terminal"],
            r#"--via: unknown answerer "Terminal"; use one or more of: terminal, web, inbox, hub, none"#,
        ),
        (
            &[" ", ""],
            "--via needs at least one of: terminal, web, inbox, hub, none",
        ),
        (
            &[],
            "--via needs at least one of: terminal, web, inbox, hub, none",
        ),
        (
            &["none", "web"],
            "--via none cannot be combined with other answerers",
        ),
    ];
    for (input, text) in cases {
        assert_eq!(
            resolve(&list(input)).unwrap_err().to_string(),
            text,
            "{input:?}"
        );
        assert_eq!(
            err(build(
                &list(input),
                &Options::new("127.0.0.1:0".parse().unwrap())
            ))
            .to_string(),
            text,
            "{input:?}"
        );
    }
}

#[test]
fn an_unknown_name_is_refused_before_anything_starts() {
    let shown = AtomicUsize::new(0);
    let show = |web, _| {
        shown.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(web) as Arc<dyn UserInteraction>)
    };
    let options = Options::new("127.0.0.1:0".parse().unwrap()).with_show_web(&show);
    assert!(matches!(
        build(&list(&["web", "nope"]), &options),
        Err(ViaError::Unknown { .. })
    ));
    assert_eq!(shown.load(Ordering::SeqCst), 0);
}

#[test]
fn build_makes_one_answerer_per_name_and_none_makes_nobody() {
    let shown = AtomicUsize::new(0);
    let show = |web, addr: std::net::SocketAddr| {
        assert!(addr.ip().is_loopback());
        shown.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(web) as Arc<dyn UserInteraction>)
    };
    let options = Options::new("127.0.0.1:0".parse().unwrap()).with_show_web(&show);
    assert_eq!(
        build(&list(&["terminal", "web"]), &options).unwrap().len(),
        2
    );
    assert_eq!(shown.load(Ordering::SeqCst), 1);
    assert!(build(&list(&["none"]), &options).unwrap().is_empty());
}

#[test]
fn a_web_address_in_use_is_a_start_error_naming_the_answerer_and_address() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let error = err(build(&list(&["web"]), &Options::new(addr)));
    assert!(matches!(error, ViaError::Start { name: "web", .. }));
    // The OS's reason follows; only our part is pinned.
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("--via web: cannot listen on {addr}: ")),
        "{text}"
    );
}

#[test]
fn a_failing_presentation_hook_is_a_start_error() {
    let show = |_, _| Err::<Arc<dyn UserInteraction>, _>("no screen".to_owned());
    let options = Options::new("127.0.0.1:0".parse().unwrap()).with_show_web(&show);
    assert_eq!(
        err(build(&list(&["web"]), &options)).to_string(),
        "--via web: no screen"
    );
}

#[test]
fn help_is_built_from_the_registry() {
    assert_eq!(
        help("Who asks"),
        "Who asks: terminal, web, inbox, hub, none"
    );
    assert_eq!(
        long_help("Who asks"),
        "Who asks:\n  terminal  the terminal this process runs in (/dev/tty); unavailable when there is none\n  web       a local web page (--web-addr), answered from a browser or a phone\n  inbox     nobody here: the question waits in the store for `ask-user inbox` in another terminal (headless agents)\n  hub       an ask-user hub's inbox (--hub URL, ASK_USER_HUB_TOKEN): one inbox for every agent\n  none      nobody: every ask ends with the no-answerer outcome (alone only)"
    );
}

#[test]
fn answers_file_errors_name_the_file_and_the_expected_shape() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let text = err(answers_file(&missing)).to_string();
    // The OS's reason follows; only our part is pinned.
    assert!(
        text.starts_with(&format!(
            "--answers {}: cannot read it: ",
            missing.display()
        )),
        "{text}"
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"answer":[]}"#).unwrap();
    let text = err(answers_file(&bad)).to_string();
    // serde_json's reason follows; only our part is pinned.
    assert!(
        text.starts_with(&format!(
            r#"--answers {}: not {{"answers":[{{"id","selected","custom"?}}]}}: "#,
            bad.display()
        )),
        "{text}"
    );
    let good = dir.path().join("good.json");
    std::fs::write(&good, r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#).unwrap();
    assert!(answers_file(&good).is_ok());
}

#[test]
fn inbox_needs_a_host_that_keeps_a_store() {
    let options = Options::new("127.0.0.1:0".parse().unwrap());
    assert_eq!(
        err(build(&list(&["inbox"]), &options)).to_string(),
        "--via inbox: this host keeps no store, so nothing here can wait for `ask-user inbox`"
    );
    let mut durable = Options::new("127.0.0.1:0".parse().unwrap());
    durable.durable = true;
    let built = build(&list(&["inbox"]), &durable).unwrap();
    assert_eq!(built.len(), 1);
    assert_eq!(built[0].name(), Some("the inbox"));
    assert!(built[0].is_available(), "waits for another process");
}

#[test]
fn hub_without_its_url_and_token_cannot_start() {
    let options = Options::new("127.0.0.1:0".parse().unwrap());
    assert_eq!(
        err(build(&list(&["hub"]), &options)).to_string(),
        "--via hub: needs the hub's URL and this agent's token: --hub URL and ASK_USER_HUB_TOKEN or --hub-token-file FILE"
    );
}
