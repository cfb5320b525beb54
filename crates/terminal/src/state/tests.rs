use ask_user_core::{AnswerItem, Answers, AskUserQuestionRequest, Limits, decode};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pretty_assertions::assert_eq;

use super::{AskState, Notice, Step};

pub(crate) fn request(json: &str) -> AskUserQuestionRequest {
    decode(json, &Limits::default()).unwrap().request
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Presses the keys in order and returns the last step.
fn press(state: &mut AskState<'_>, keys: &[KeyCode]) -> Step {
    let mut step = Step::Stay;
    for code in keys {
        step = state.handle_key(key(*code));
    }
    step
}

fn typed(text: &str) -> Vec<KeyCode> {
    text.chars().map(KeyCode::Char).collect()
}

const DB: &str = r#"{"questions":[{"id":"db","question":"Which database?","options":["SQLite","PostgreSQL (Recommended)","MySQL"]}]}"#;
const MULTI: &str = r#"{"questions":[{"id":"f","question":"Features?","multi_select":true,"options":["Auth (Recommended)","Billing","Search"]}]}"#;
const FREE: &str = r#"{"questions":[{"id":"name","question":"Service name?"}]}"#;
const BATCH: &str = r#"{"questions":[{"id":"a","question":"A?","options":["A1 (Recommended)","A2"]},{"id":"b","question":"B?","options":["B1","B2 (Recommended)"]},{"id":"c","question":"C?"}]}"#;

fn done(items: Vec<AnswerItem>) -> Step {
    Step::Done(Answers { answers: items })
}

#[test]
fn enter_takes_the_recommended_option() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    assert_eq!(state.state().cursor, 1);
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::selected(
            "db",
            ["PostgreSQL (Recommended)"]
        )])
    );
}

#[test]
fn arrows_move_and_stop_at_the_ends() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Up, KeyCode::Up]);
    assert_eq!(state.state().cursor, 0);
    press(&mut state, &[KeyCode::Down; 5]);
    assert_eq!(state.state().cursor, 3, "the own-answer row is last");
    press(&mut state, &[KeyCode::Up, KeyCode::Up]);
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::selected(
            "db",
            ["PostgreSQL (Recommended)"]
        )])
    );
}

#[test]
fn letters_are_never_navigation() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    let mut keys = typed("keep it simple");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("db", "keep it simple")])
    );
}

#[test]
fn a_digit_moves_and_never_confirms() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    assert_eq!(press(&mut state, &[KeyCode::Char('3')]), Step::Stay);
    assert_eq!(state.state().cursor, 2);
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::selected("db", ["MySQL"])])
    );
}

#[test]
fn a_digit_followed_by_text_becomes_the_text() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    let mut keys = typed("2 replicas please");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("db", "2 replicas please")])
    );
    let mut state = AskState::new(&request);
    press(&mut state, &typed("9"));
    assert_eq!(state.state().text.text(), "9", "no option 9: it is text");
}

#[test]
fn two_digits_reach_options_past_nine_and_backspace_takes_a_number_back() {
    let options: Vec<String> = (1..=12).map(|i| format!("\"R{i}\"")).collect();
    let json = format!(
        r#"{{"questions":[{{"id":"r","question":"Where?","multi_select":true,"options":[{}]}}]}}"#,
        options.join(",")
    );
    let request = request(&json);
    let mut state = AskState::new(&request);
    press(&mut state, &typed("1"));
    assert_eq!(state.state().chosen[0], true);
    press(&mut state, &typed("2"));
    assert_eq!(state.state().cursor, 11);
    assert_eq!(
        state.state().chosen.iter().filter(|c| **c).count(),
        1,
        "the toggle of 1 was undone: only 12"
    );
    assert!(state.state().chosen[11]);
    press(&mut state, &[KeyCode::Backspace]);
    assert!(
        state.state().chosen.iter().all(|c| !c),
        "the number taken back"
    );
    press(&mut state, &typed("3x"));
    assert_eq!(state.state().text.text(), "3x");
    assert!(
        state.state().chosen.iter().all(|c| !c),
        "the toggle of 3 undone"
    );
}

#[test]
fn multi_select_toggles_with_space_and_digits() {
    let request = request(MULTI);
    let mut state = AskState::new(&request);
    assert_eq!(
        state.state().chosen,
        [true, false, false],
        "recommended pre-chosen"
    );
    press(
        &mut state,
        &[KeyCode::Char('3'), KeyCode::Up, KeyCode::Char(' ')],
    );
    assert_eq!(state.state().chosen, [true, true, true]);
    press(&mut state, &[KeyCode::Char(' ')]);
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::selected(
            "f",
            ["Auth (Recommended)", "Search"]
        )])
    );
}

#[test]
fn empty_multi_select_asks_once_more_then_skips() {
    let request = request(MULTI);
    let mut state = AskState::new(&request);
    assert_eq!(
        press(&mut state, &[KeyCode::Char('1'), KeyCode::Enter]),
        Step::Stay
    );
    assert_eq!(state.notice, Some(Notice::ConfirmEmpty));
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::skipped("f")])
    );
}

#[test]
fn any_other_key_cancels_the_empty_confirmation() {
    let request = request(MULTI);
    let mut state = AskState::new(&request);
    press(
        &mut state,
        &[KeyCode::Char('1'), KeyCode::Enter, KeyCode::Char('2')],
    );
    assert_eq!(state.notice, None);
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::selected("f", ["Billing"])])
    );
}

#[test]
fn own_answer_typed_inline_overrides_in_single_select() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    let mut keys = vec![KeyCode::Down, KeyCode::Down];
    keys.extend(typed("DuckDB 1 jk"));
    keys.extend([
        KeyCode::Backspace,
        KeyCode::Backspace,
        KeyCode::Backspace,
        KeyCode::Enter,
    ]);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("db", "DuckDB 1")])
    );
}

#[test]
fn typing_on_an_option_row_jumps_to_the_own_answer() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    let mut keys = typed("Oracle");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("db", "Oracle")])
    );
}

#[test]
fn multi_select_keeps_chosen_options_beside_the_own_answer() {
    let request = request(MULTI);
    let mut state = AskState::new(&request);
    let mut keys = typed("Exports");
    keys.push(KeyCode::Enter);
    let mut expected = AnswerItem::selected("f", ["Auth (Recommended)"]);
    expected.custom = Some("Exports".to_owned());
    assert_eq!(press(&mut state, &keys), done(vec![expected]));
}

#[test]
fn free_text_question_types_at_once_and_empty_enter_asks_again() {
    let request = request(FREE);
    let mut state = AskState::new(&request);
    assert!(state.on_text_row());
    assert_eq!(press(&mut state, &[KeyCode::Enter]), Step::Stay);
    assert_eq!(state.notice, Some(Notice::ConfirmEmpty));
    let mut keys = typed("  billing-api ");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("name", "billing-api")])
    );
}

#[test]
fn esc_skips_one_question_and_ctrl_c_dismisses_all() {
    let request = request(BATCH);
    let mut state = AskState::new(&request);
    assert_eq!(press(&mut state, &[KeyCode::Esc]), Step::Stay);
    assert_eq!(state.current, 1);
    assert_eq!(
        press(&mut state, &[KeyCode::Esc, KeyCode::Esc, KeyCode::Esc]),
        Step::Stay
    );
    assert_eq!(state.current, 2);
    assert_eq!(
        state.notice,
        Some(Notice::ConfirmSkipLast),
        "Esc on the last question never sends by itself"
    );
    press(&mut state, &[KeyCode::Down]);
    assert_eq!(state.notice, None, "any other key keeps it open");
    assert_eq!(
        press(&mut state, &[KeyCode::Esc, KeyCode::Enter]),
        done(vec![
            AnswerItem::skipped("a"),
            AnswerItem::skipped("b"),
            AnswerItem::skipped("c"),
        ])
    );
    let mut state = AskState::new(&request);
    assert_eq!(
        state.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Step::Dismissed
    );
}

#[test]
fn several_questions_in_order_with_a_way_back() {
    let request = request(BATCH);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Char('2')]);
    assert_eq!(state.current, 0, "a digit never confirms");
    press(&mut state, &[KeyCode::Enter]);
    assert_eq!(state.current, 1);
    press(&mut state, &[KeyCode::Left]);
    assert_eq!(state.current, 0);
    assert_eq!(state.state().cursor, 1, "the earlier choice is kept");
    press(&mut state, &[KeyCode::Enter, KeyCode::Enter]);
    assert_eq!(state.current, 2);
    press(&mut state, &[KeyCode::Backspace; 3]);
    assert_eq!(state.current, 2, "Backspace never leaves the question");
    press(&mut state, &[KeyCode::BackTab]);
    assert_eq!(state.current, 1);
    press(&mut state, &[KeyCode::BackTab, KeyCode::BackTab]);
    assert_eq!(state.current, 0, "no question before the first");
    let mut keys = vec![KeyCode::Char('1'), KeyCode::Enter, KeyCode::Enter];
    keys.extend(typed("soon"));
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![
            AnswerItem::selected("a", ["A1 (Recommended)"]),
            AnswerItem::selected("b", ["B2 (Recommended)"]),
            AnswerItem::custom("c", "soon"),
        ])
    );
}

#[test]
fn a_submission_normalise_refuses_stays_open_with_the_reason() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    // The keys cannot produce this; a stale answer (e.g. a label renamed under the view) can.
    state.questions[0].answer = Some(AnswerItem::selected("db", ["Oracle"]));
    assert_eq!(state.submit(), Step::Stay);
    assert_eq!(
        state.notice,
        Some(Notice::Refused(
            "\"Oracle\" is not one of the options of question \"db\"".to_owned()
        ))
    );
}

#[test]
fn pasted_text_goes_into_the_own_answer_without_confirming() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    state.paste("Cockroach\r\nDB\u{1b}[2J");
    assert_eq!(state.state().text.text(), "Cockroach DB[2J");
    assert!(state.on_text_row());
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::custom("db", "Cockroach DB[2J")])
    );
}

#[test]
fn editing_keys_in_the_own_answer() {
    let request = request(BATCH);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Enter, KeyCode::Enter]);
    assert_eq!(state.current, 2);
    press(&mut state, &typed("roll back  soon "));
    state.handle_key(KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL));
    assert_eq!(state.state().text.text(), "roll back  ");
    press(&mut state, &[KeyCode::Left, KeyCode::Home]);
    assert_eq!(state.current, 2, "← and Home move the caret");
    press(&mut state, &typed(">"));
    state.handle_key(KeyEvent::new(KeyCode::Char('e'), KeyModifiers::CONTROL));
    press(&mut state, &typed("<"));
    assert_eq!(state.state().text.text(), ">roll back  <");
    state.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(state.state().text.text(), "");
    press(&mut state, &[KeyCode::Left]);
    assert_eq!(state.current, 1, "with no text, ← goes back");
}

#[test]
fn scrolling_keys_move_the_view_never_the_choice() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    state.view.follow_offset.set(5);
    press(&mut state, &[KeyCode::Up, KeyCode::Up, KeyCode::Up]);
    assert_eq!((state.state().cursor, state.peek), (0, 2));
    press(&mut state, &[KeyCode::Down]);
    assert_eq!(state.peek, 0);
    press(&mut state, &[KeyCode::Home]);
    assert_eq!(
        (state.state().cursor, state.peek),
        (1, 5),
        "Home scrolls to the top and leaves the choice"
    );
    press(&mut state, &[KeyCode::End]);
    assert_eq!(
        (state.state().cursor, state.peek),
        (1, 0),
        "End scrolls back"
    );
    state.view.window.set(3);
    press(&mut state, &[KeyCode::PageUp]);
    assert_eq!((state.state().cursor, state.peek), (1, 2));
    press(&mut state, &[KeyCode::PageDown]);
    assert_eq!((state.state().cursor, state.peek), (1, 0));
    let control = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    assert_eq!(state.handle_key(control('l')), Step::Redraw);
    assert_eq!(state.handle_key(control('z')), Step::Suspend);
}

const FIVE: &str = r#"{"questions":[{"id":"f","question":"Which?","multi_select":true,"options":["O1","O2","O3","O4","O5"]}]}"#;
const FIVE_SINGLE: &str =
    r#"{"questions":[{"id":"s","question":"Which?","options":["O1","O2","O3","O4","O5"]}]}"#;

#[test]
fn a_digit_that_cannot_extend_a_number_starts_the_next_one() {
    // Issue finding: `1` `3` in a five-option multi-select sent custom "13" with nothing ticked.
    let request = request(FIVE);
    let mut state = AskState::new(&request);
    let mut keys = typed("13");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::selected("f", ["O1", "O3"])])
    );
    // Single-select `2` `3` sent custom "23": it is option 3, under the cursor.
    let request = super::tests::request(FIVE_SINGLE);
    let mut state = AskState::new(&request);
    press(&mut state, &typed("23"));
    assert_eq!(state.state().cursor, 2);
    assert_eq!(state.state().text.text(), "");
    assert_eq!(
        press(&mut state, &[KeyCode::Enter]),
        done(vec![AnswerItem::selected("s", ["O3"])])
    );
}

#[test]
fn digits_followed_by_text_are_all_text_again() {
    let request = request(FIVE);
    let mut state = AskState::new(&request);
    let mut keys = typed("13 apples");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem {
            custom: Some("13 apples".into()),
            ..AnswerItem::skipped("f")
        }]),
        "nothing stays ticked by the digits of a sentence"
    );
    let mut state = AskState::new(&request);
    press(&mut state, &typed("10"));
    assert_eq!(
        state.state().text.text(),
        "10",
        "0 is no option: the digits are text"
    );
}

#[test]
fn a_number_waits_a_short_time_for_its_next_digit() {
    let options: Vec<String> = (1..=12).map(|i| format!("\"R{i}\"")).collect();
    let json = format!(
        r#"{{"questions":[{{"id":"r","question":"Where?","options":[{}]}}]}}"#,
        options.join(",")
    );
    let request = request(&json);
    let start = std::time::Instant::now();
    let mut state = AskState::new(&request);
    state.handle_key_at(key(KeyCode::Char('1')), start);
    state.handle_key_at(key(KeyCode::Char('2')), start + super::NUMBER_TIMEOUT / 2);
    assert_eq!(state.state().cursor, 11, "in time: option 12");
    let mut state = AskState::new(&request);
    state.handle_key_at(key(KeyCode::Char('1')), start);
    state.handle_key_at(key(KeyCode::Char('2')), start + super::NUMBER_TIMEOUT * 2);
    assert_eq!(
        state.state().cursor,
        1,
        "too late: the next number, option 2"
    );
}

#[test]
fn ctrl_c_with_answers_or_text_in_progress_asks_once_more() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let request = request(BATCH);
    // Nothing to lose: one Ctrl-C dismisses.
    let mut state = AskState::new(&request);
    assert_eq!(state.handle_key(ctrl_c), Step::Dismissed);
    // One answer given: Ctrl-C asks, any other key keeps everything, a second Ctrl-C dismisses.
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Enter]);
    assert_eq!(state.handle_key(ctrl_c), Step::Stay);
    assert_eq!(state.notice, Some(Notice::ConfirmDismiss));
    press(&mut state, &[KeyCode::Down]);
    assert_eq!(state.notice, None);
    assert_eq!(
        state.handle_key(ctrl_c),
        Step::Stay,
        "asked again after another key"
    );
    assert_eq!(state.handle_key(ctrl_c), Step::Dismissed);
    // Typed text: the same.
    let mut state = AskState::new(&request);
    press(&mut state, &typed("wait"));
    assert_eq!(state.handle_key(ctrl_c), Step::Stay);
    assert_eq!(state.state().text.text(), "wait");
    assert_eq!(state.handle_key(ctrl_c), Step::Dismissed);
}

#[test]
fn numbers_separated_by_spaces_toggle_each_option() {
    // Found: `1` Space `3` (or "1 3 5") ticked nothing and sent the text "1 3 5".
    let request = request(FIVE);
    for typed_keys in ["1 3 5", "1  3 5 ", "13 5"] {
        let mut state = AskState::new(&request);
        let mut keys = typed(typed_keys);
        keys.push(KeyCode::Enter);
        assert_eq!(
            press(&mut state, &keys),
            done(vec![AnswerItem::selected("f", ["O1", "O3", "O5"])]),
            "{typed_keys:?}"
        );
    }
    // Space right after a number keeps the number's toggle (it does not toggle it back).
    let mut state = AskState::new(&request);
    press(&mut state, &typed("2 "));
    assert_eq!(state.state().chosen, [false, true, false, false, false]);
    assert_eq!(state.state().text.text(), "");
    // Spaces between numbers only separate them, however many.
    press(&mut state, &typed(" "));
    assert_eq!(state.state().chosen, [false, true, false, false, false]);
    // Once another key ended the numbers, Space is the footer's "Space toggle" again.
    press(
        &mut state,
        &[KeyCode::Down, KeyCode::Up, KeyCode::Char(' ')],
    );
    assert_eq!(state.state().chosen, [false, false, false, false, false]);
    // A number after a Space is a number of its own, even where the two digits would make one.
    let options: Vec<String> = (1..=12).map(|i| format!("\"R{i}\"")).collect();
    let json = format!(
        r#"{{"questions":[{{"id":"r","question":"Where?","multi_select":true,"options":[{}]}}]}}"#,
        options.join(",")
    );
    let request = super::tests::request(&json);
    let mut state = AskState::new(&request);
    press(&mut state, &typed("1 2"));
    assert_eq!(
        state.state().chosen.iter().filter(|c| **c).count(),
        2,
        "1 and 2, not 12"
    );
}

#[test]
fn numbers_and_spaces_followed_by_words_are_the_sentence_typed() {
    let request = request(FIVE);
    let mut state = AskState::new(&request);
    let mut keys = typed("1 3 apples");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem {
            custom: Some("1 3 apples".into()),
            ..AnswerItem::skipped("f")
        }]),
        "the toggles of 1 and 3 undone, every character kept"
    );
}

#[test]
fn a_number_then_space_in_a_single_select_is_the_option() {
    // Found: `2` Space sent the text "2".
    let request = request(FIVE_SINGLE);
    let mut state = AskState::new(&request);
    let mut keys = typed("2 ");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::selected("s", ["O2"])])
    );
    let mut state = AskState::new(&request);
    let mut keys = typed("2 servers");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("s", "2 servers")])
    );
}

#[test]
fn the_own_answer_rows_number_moves_there_without_typing_itself() {
    // Found: the own-answer row is numbered, but its digit typed itself ("3ship it").
    let request = request(DB);
    let mut state = AskState::new(&request);
    press(&mut state, &typed("4"));
    assert!(state.on_text_row());
    assert_eq!(state.state().text.text(), "", "the number is not text");
    let mut keys = typed("ship it");
    keys.push(KeyCode::Enter);
    assert_eq!(
        press(&mut state, &keys),
        done(vec![AnswerItem::custom("db", "ship it")])
    );
    // In a multi-select it moves without toggling anything, and keeps what was chosen.
    let request = super::tests::request(MULTI);
    let mut state = AskState::new(&request);
    press(&mut state, &typed("4"));
    assert!(state.on_text_row());
    assert_eq!(state.state().chosen, [true, false, false]);
    assert_eq!(state.state().text.text(), "");
    // Backspace takes the move back.
    press(&mut state, &[KeyCode::Backspace]);
    assert_eq!(state.state().cursor, 0);
    // Ten rows: `1` `0` reaches the own-answer row of nine options.
    let options: Vec<String> = (1..=9).map(|i| format!("\"R{i}\"")).collect();
    let json = format!(
        r#"{{"questions":[{{"id":"r","question":"Where?","options":[{}]}}]}}"#,
        options.join(",")
    );
    let request = super::tests::request(&json);
    let mut state = AskState::new(&request);
    press(&mut state, &typed("10"));
    assert!(state.on_text_row());
    assert_eq!(state.state().text.text(), "");
}
