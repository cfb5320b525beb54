//! The terminal shows model text by the shared text-safety rule: every case of
//! `crates/core/tests/golden/text-safety.json` comes out of `sanitize` as pinned there.

use ask_user_terminal::{sanitize, sanitize_line};
use pretty_assertions::assert_eq;

#[test]
fn every_case_of_the_shared_fixture_shows_as_pinned() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/golden/text-safety.json");
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 20, "the fixture is read");
    for case in cases {
        let input = case["input"].as_str().unwrap();
        assert_eq!(
            sanitize(input),
            case["display"].as_str().unwrap(),
            "{}",
            case["name"]
        );
        assert_eq!(
            sanitize_line(input),
            case["line"].as_str().unwrap(),
            "{}",
            case["name"]
        );
    }
}
