use std::time::Duration;

use ask_user_store::{AskId, AskRecord, Asker, CallKey, Scope, Timestamp};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::{Action, InboxView};

const MIN: i64 = 60_000;

fn ask(id: i64, agent: &str, minutes_ago: i64, question: &str) -> AskRecord {
    let request = format!(
        r#"{{"questions":[{{"id":"q","header":"H{id}","question":"{question}","options":[{{"label":"Yes"}}],"multi_select":false}}]}}"#
    );
    AskRecord {
        id: AskId(id),
        key: CallKey::new(&Scope::Caller(format!("s{id}")), &request),
        request,
        asker: Asker {
            agent: Some(agent.to_owned()),
            project: Some("~/src/app".to_owned()),
            host: Some("laptop".to_owned()),
            session: Some(format!("session {id}")),
            pid: None,
            process: None,
        },
        created_at: Timestamp(100 * MIN - minutes_ago * MIN),
        grace: Duration::from_secs(86_400),
        attached: id != 3,
        detached_at: None,
        lease_until: None,
        closed: None,
        delivered_at: None,
    }
}

fn screen(view: &InboxView, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| view.render(f.area(), f.buffer_mut()))
        .unwrap();
    terminal.backend().to_string()
}

fn key(view: &mut InboxView, code: KeyCode) -> Action {
    view.key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn three() -> Vec<AskRecord> {
    vec![
        ask(1, "claude-code", 5, "Run the migration?"),
        ask(2, "codex", 40, "Delete branches?"),
        ask(3, "claude-code", 2, "Which region?"),
    ]
}

#[test]
fn grouped_by_agent_oldest_waiting_first_with_counts_and_who_asks() {
    let mut view = InboxView::default();
    assert_eq!(view.update(three(), 100 * MIN), 3);
    assert_snapshot!("inbox_list", screen(&view, 70, 14));
    assert_eq!(
        view.selected(),
        Some(AskId(2)),
        "the longest wait is chosen first"
    );
}

#[test]
fn an_arrival_never_moves_the_selection() {
    // Reading ask 1 (second in the list), a new ask arrives: Enter still opens ask 1.
    let mut view = InboxView::default();
    view.update(three(), 100 * MIN);
    key(&mut view, KeyCode::Down);
    assert_eq!(view.selected(), Some(AskId(1)));
    let mut more = three();
    more.push(ask(4, "aider", 90, "Force push?"));
    more.push(ask(5, "claude-code", 0, "Rename?"));
    assert_eq!(view.update(more, 100 * MIN), 2);
    assert_eq!(key(&mut view, KeyCode::Enter), Action::Open(AskId(1)));
    assert_snapshot!("inbox_arrival", screen(&view, 70, 18));
}

#[test]
fn digits_never_open_anything_and_a_closed_selection_stays_until_the_human_moves() {
    // Found: when the chosen ask closed the selection jumped to another agent's ask, and
    // Enter, `2`, Enter at human speed stored "No" for that agent.
    let mut view = InboxView::default();
    view.update(three(), 100 * MIN);
    for c in ['1', '2', '8'] {
        assert_eq!(key(&mut view, KeyCode::Char(c)), Action::Stay);
    }
    key(&mut view, KeyCode::Down);
    assert_eq!(view.selected(), Some(AskId(1)));
    let rest: Vec<AskRecord> = three().into_iter().filter(|r| r.id != AskId(1)).collect();
    view.update(rest.clone(), 100 * MIN);
    assert_eq!(view.selected(), Some(AskId(1)), "the selection stays on it");
    assert_eq!(view.closed_without_why(), Some(AskId(1)));
    view.closed_why(AskId(1), "answered on the hub page");
    assert_eq!(view.closed_without_why(), None);
    // Another refresh (an arrival, time passing) keeps it too.
    view.update(rest.clone(), 100 * MIN);
    assert_eq!(view.selected(), Some(AskId(1)));
    assert_eq!(view.count(), 2, "the closed ask is not counted as open");
    let shown = screen(&view, 70, 14);
    assert!(shown.contains("answered on the hub page"), "{shown}");
    assert_snapshot!("inbox_closed_selected", shown);
    assert_eq!(
        key(&mut view, KeyCode::Enter),
        Action::Stay,
        "Enter never opens another ask in its place"
    );
    assert_eq!(view.selected(), Some(AskId(1)));
    // The human moves: the closed ask leaves the list.
    key(&mut view, KeyCode::Down);
    assert_eq!(view.selected(), Some(AskId(3)));
    key(&mut view, KeyCode::Up);
    key(&mut view, KeyCode::Up);
    assert_eq!(view.selected(), Some(AskId(2)));
    assert!(!screen(&view, 70, 14).contains("Run the migration?"));
    assert_eq!(key(&mut view, KeyCode::Char('q')), Action::Quit);
}

#[test]
fn an_ask_answered_here_lets_the_selection_go_to_the_next() {
    let mut view = InboxView::default();
    view.update(three(), 100 * MIN);
    key(&mut view, KeyCode::Down);
    view.answered_here(AskId(1));
    let rest: Vec<AskRecord> = three().into_iter().filter(|r| r.id != AskId(1)).collect();
    view.update(rest, 100 * MIN);
    assert_eq!(view.selected(), Some(AskId(3)));
}

#[test]
fn an_empty_inbox_says_it_waits() {
    let mut view = InboxView::default();
    view.update(Vec::new(), 0);
    view.note = "Taken: your answer is stored and goes to the agent.".to_owned();
    assert_snapshot!("inbox_empty", screen(&view, 60, 6));
    assert_eq!(key(&mut view, KeyCode::Enter), Action::Stay);
}

#[test]
fn raw_bytes_become_the_keys_the_list_knows() {
    let keys: Vec<KeyCode> = super::keys_of(b"\x1b[A\x1bOB\r q\x1b[1;5H\x1b[F\x03")
        .into_iter()
        .map(|k| k.code)
        .collect();
    assert_eq!(
        keys,
        [
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Enter,
            KeyCode::Char(' '),
            KeyCode::Char('q'),
            KeyCode::End,
            KeyCode::Char('c'),
        ]
    );
}

#[test]
fn every_case_of_the_shared_text_rule_shows_on_its_row_as_pinned() {
    // The list row of an ask shows its question by the one text rule every surface uses
    // (crates/core/tests/golden/text-safety.json, the one-line form). Zero-width direction
    // marks draw no cell, so they are left out of what the screen is compared with.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/golden/text-safety.json");
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for case in fixture["cases"].as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let expected: String = case["line"]
            .as_str()
            .unwrap()
            .chars()
            .filter(|c| !matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}'))
            .collect();
        if unicode_width::UnicodeWidthStr::width(expected.as_str()) > 160 {
            continue;
        }
        let mut rec = ask(1, "codex", 5, "x");
        rec.request = serde_json::json!({"questions": [{"id": "q", "question": input,
            "options": [{"label": "Yes"}], "multi_select": false}]})
        .to_string();
        let mut view = InboxView::default();
        view.update(vec![rec], 100 * MIN);
        let shown = screen(&view, 200, 6);
        let row = shown
            .lines()
            .find(|l| l.contains('\u{203a}'))
            .unwrap_or_else(|| panic!("no selected row in {shown}"));
        assert!(
            row.contains(&expected),
            "{}: the row {row:?} does not show {expected:?}",
            case["name"]
        );
        checked += 1;
    }
    assert!(checked > 30, "only {checked} cases fit a row");
}
