//! Numbers and durations from flags and stored records never panic the binary: a duration
//! past the cap is a usage error (exit 2) that says why, and a stored time past year 9999
//! prints as that year's last second.

use ask_user_core::time::TOO_LONG;
use ask_user_store::{Asker, CallKey, NewAsk, Scope, Store, Timestamp};
use serde_json::Value;

use super::support::{run, run_env};

/// A duration humantime reads but `Instant::now() + d` cannot hold.
const HUGE: &str = "500000000000y";

fn assert_usage_error(args: &[&str], text: &str) {
    let out = run(args, "");
    assert_eq!(out.status, 2, "{args:?}: {}", out.stderr);
    assert!(out.stderr.contains(text), "{args:?}: {}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{args:?}: {}", out.stderr);
}

#[test]
fn a_timeout_too_long_to_add_to_now_is_a_usage_error() {
    for host in ["ask", "mcp"] {
        assert_usage_error(&[host, "--timeout", HUGE], TOO_LONG);
    }
}

#[test]
fn a_zero_or_huge_progress_interval_is_a_usage_error() {
    assert_usage_error(
        &["mcp", "--progress-interval", "0s"],
        "the progress interval must be longer than zero",
    );
    assert_usage_error(&["mcp", "--progress-interval", HUGE], TOO_LONG);
}

#[test]
fn history_shows_a_stored_time_past_9999_as_its_last_second() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = Store::open(&url).await.unwrap();
        let request = r#"{"questions":[{"id":"q","question":"Go?","options":["Yes","No"]}]}"#;
        let scope = Scope::Caller("far-future".to_owned());
        let ask = NewAsk {
            key: CallKey::new(&scope, request),
            created_at: Timestamp(i64::MAX),
            ..NewAsk::new(&scope, request, Asker::default())
        };
        store.open_ask(&ask).await.unwrap();
    });
    for args in [
        &["history", "--json", "--store", &url][..],
        &["history", "--store", &url],
    ] {
        let out = run_env(args, "", &[]);
        assert_eq!(out.status, 0, "{args:?}: {}", out.stderr);
        assert!(out.stdout.contains("9999-12-31T23:59:59"), "{}", out.stdout);
    }
    let out = run_env(&["history", "--json", "--store", &url], "", &[]);
    let rows: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{}", out.stdout);
}
