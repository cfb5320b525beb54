//! Every visual state as an insta snapshot on a fixed-size buffer.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::render;
use crate::layout::Theme;
use crate::state::tests::request;
use crate::state::{AskState, Notice};

const DEPLOY: &str = include_str!("../../../../examples/deploy.json");

fn screen(state: &AskState<'_>, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| {
            render(
                state,
                frame.area(),
                frame.buffer_mut(),
                Theme { color: true },
            )
        })
        .unwrap();
    terminal.backend().to_string()
}

fn press(state: &mut AskState<'_>, keys: &[KeyCode]) {
    for code in keys {
        state.handle_key(KeyEvent::new(*code, KeyModifiers::NONE));
    }
}

#[test]
fn options_with_descriptions_and_the_recommended_highlighted() {
    let request = request(DEPLOY);
    let state = AskState::new(&request);
    assert_snapshot!("options", screen(&state, 80, 14));
}

#[test]
fn multi_select_with_toggles() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(
        &mut state,
        &[KeyCode::Enter, KeyCode::Down, KeyCode::Char(' ')],
    );
    assert_snapshot!("multi_select", screen(&state, 80, 14));
}

#[test]
fn last_of_several_questions_free_text_being_typed() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Enter, KeyCode::Enter]);
    press(
        &mut state,
        &"Rollback: flip the flag"
            .chars()
            .map(KeyCode::Char)
            .collect::<Vec<_>>(),
    );
    assert_snapshot!("free_text", screen(&state, 80, 8));
}

#[test]
fn own_answer_typed_in_a_choice_question() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(
        &mut state,
        &"canary, 5%".chars().map(KeyCode::Char).collect::<Vec<_>>(),
    );
    assert_snapshot!("own_answer", screen(&state, 80, 14));
}

#[test]
fn forty_columns_wraps_everything_and_cuts_nothing() {
    let request = request(DEPLOY);
    let state = AskState::new(&request);
    assert_snapshot!("forty_columns", screen(&state, 40, 22));
}

#[test]
fn too_short_a_terminal_scrolls_to_keep_the_cursor_visible() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Down, KeyCode::Down]);
    assert_snapshot!("scrolled", screen(&state, 40, 10));
}

#[test]
fn at_forty_by_twelve_the_question_is_visible() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    let open = screen(&state, 40, 12);
    assert!(open.contains("Which environment"), "{open}");
    assert_snapshot!("forty_by_twelve", open);
    press(&mut state, &[KeyCode::Down, KeyCode::Down]);
    let moved = screen(&state, 40, 12);
    assert!(moved.contains("↑ Which environment"), "{moved}");
    assert_snapshot!("forty_by_twelve_scrolled", moved);
}

#[test]
fn empty_multi_select_asks_once_more() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(
        &mut state,
        &[KeyCode::Enter, KeyCode::Char('1'), KeyCode::Enter],
    );
    assert_snapshot!("confirm_empty", screen(&state, 80, 14));
}

#[test]
fn hostile_model_text_is_shown_inert() {
    let request = request(
        r#"{"questions":[{"id":"x","header":"\u001b[31mRED\u001b[0m","question":"Title \u001b]0;PWNED\u0007 clear \u001b[2J bell \u0007 csi8 \u009b2J bidi \u202egnp.exe\u202c zw a\u200bb nul \u0000","options":[{"label":"ok \u001b[1A\u001b[2K","description":"\r\u001b[2Koverwrite \u2066x\u2069"}]}]}"#,
    );
    let state = AskState::new(&request);
    assert_snapshot!("hostile", screen(&state, 80, 10));
}

#[test]
fn a_refused_submission_shows_why_and_stays_open() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    state.notice = Some(Notice::Refused(
        "\"Staging\" is not one of the options of question \"env\"".to_owned(),
    ));
    assert_snapshot!("refused", screen(&state, 80, 14));
}

#[test]
fn a_long_header_is_cut_in_the_chip_and_shown_in_full() {
    let request = request(
        r#"{"questions":[{"id":"x","header":"Database migration for the billing service, second attempt","question":"Run it now?","options":["Yes (Recommended)","No"]}]}"#,
    );
    let state = AskState::new(&request);
    assert_snapshot!("long_header", screen(&state, 60, 12));
}

#[test]
fn without_colour_only_bold_dim_and_reverse_are_used() {
    use ratatui::style::Color;
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(
        &mut state,
        &[KeyCode::Enter, KeyCode::Char('1'), KeyCode::Enter],
    );
    for (theme, expect_colour) in [
        (Theme { color: false }, false),
        (Theme { color: true }, true),
    ] {
        let mut terminal = Terminal::new(TestBackend::new(80, 14)).unwrap();
        terminal
            .draw(|frame| render(&state, frame.area(), frame.buffer_mut(), theme))
            .unwrap();
        let coloured = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .any(|cell| cell.fg != Color::Reset || cell.bg != Color::Reset);
        assert_eq!(coloured, expect_colour, "{theme:?}");
    }
}

#[test]
fn many_options_scroll_under_the_question_which_stays() {
    let options: Vec<String> = (1..=12)
        .map(|i| format!(r#"{{"label":"Region {i}","description":"Data centre number {i}."}}"#))
        .collect();
    let json = format!(
        r#"{{"questions":[{{"id":"r","header":"Region","question":"Where should the replica live?","options":[{}]}}]}}"#,
        options.join(",")
    );
    let request = request(&json);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Down; 8]);
    assert_snapshot!("pinned_question", screen(&state, 80, 16));
}

#[test]
fn a_question_taller_than_the_screen_can_be_read_from_its_start() {
    let long = format!("START {}", "lorem ipsum dolor sit amet ".repeat(147));
    let request = request(&format!(
        r#"{{"questions":[{{"id":"q","header":"HEAD","question":"{long}","options":["Yes (Recommended)","No"]}}]}}"#
    ));
    let mut state = AskState::new(&request);
    let first = screen(&state, 80, 24);
    assert!(
        first.contains("START lorem") && !first.contains("› 1. Yes"),
        "a long view opens at the question:\n{first}"
    );
    // Enter on a screen that shows no option sends nothing: it shows the rest of the question
    // a screenful at a time, then brings the choice into view.
    let mut cursor = first.clone();
    for _ in 0..6 {
        assert_eq!(
            state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
            crate::state::Step::Stay
        );
        cursor = screen(&state, 80, 24);
        if cursor.contains("› 1. Yes") {
            break;
        }
    }
    assert!(cursor.contains("› 1. Yes"), "{cursor}");
    // Home scrolls back to the question and leaves the choice where it was.
    press(&mut state, &[KeyCode::Home]);
    let home = screen(&state, 80, 24);
    assert!(
        home.contains("START lorem") && !home.contains("› 1. Yes"),
        "{home}"
    );
    assert_eq!(state.state().cursor, 0);
    assert_eq!(
        state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        crate::state::Step::Stay,
        "Home then Enter never sends option 1 from a screen without options"
    );
    screen(&state, 80, 24);
    for keys in [
        &[KeyCode::Home][..],
        &[KeyCode::End],
        &[KeyCode::Up],
        &[KeyCode::Up],
    ] {
        press(&mut state, keys);
        screen(&state, 80, 24);
    }
    let mut seen = false;
    for _ in 0..60 {
        press(&mut state, &[KeyCode::Up]);
        let now = screen(&state, 80, 24);
        if now.contains("HEAD") && now.contains("START lorem") {
            seen = true;
            break;
        }
    }
    assert!(
        seen,
        "↑ on the first option reaches the top:\n{}",
        screen(&state, 80, 24)
    );
    for height in [12, 20, 23] {
        let mut state = AskState::new(&request);
        for _ in 0..80 {
            press(&mut state, &[KeyCode::Up]);
            screen(&state, 80, height);
        }
        let top = screen(&state, 80, height);
        assert!(top.contains("HEAD"), "at 80×{height}:\n{top}");
    }
    assert_snapshot!("tall_question_top", screen(&state, 80, 24));
    press(&mut state, &[KeyCode::Down]);
    assert!(screen(&state, 80, 24).contains("› 2. No"));
}

#[test]
fn a_long_own_answer_keeps_its_caret_line_in_view() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    let words: String = (0..90).map(|i| format!("word{i} ")).collect();
    state.paste(&format!("{words}THE-END"));
    let shown = screen(&state, 80, 12);
    assert!(shown.contains("THE-END"), "{shown}");
    assert_snapshot!("long_own_answer", shown);
}

#[test]
fn esc_on_the_last_question_asks_before_sending() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Enter, KeyCode::Enter, KeyCode::Esc]);
    assert_snapshot!("skip_last", screen(&state, 80, 12));
}

#[test]
fn a_terminal_too_small_says_so() {
    let request = request(DEPLOY);
    let state = AskState::new(&request);
    assert_snapshot!("too_small", screen(&state, 20, 5));
}

#[test]
fn ctrl_c_with_an_answer_given_asks_before_dismissing() {
    let request = request(DEPLOY);
    let mut state = AskState::new(&request);
    press(&mut state, &[KeyCode::Enter]);
    state.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_snapshot!("confirm_dismiss", screen(&state, 80, 14));
}

const LONG_QUESTION: &str = r#"{"questions":[{"id":"q","header":"Deploy","question":"Which environment should I deploy the billing service to, given the freeze that starts tonight at ten?","options":[{"label":"Staging (Recommended)","description":"Safe to try."},{"label":"Production","description":"Real customers get it at once."},"Both"]}]}"#;

#[test]
fn at_thirty_by_six_the_question_stays_on_top_and_enter_shows_what_was_not_read() {
    // Found: at 30×6, ↓ Enter sent an answer with no question text on screen.
    let request = request(LONG_QUESTION);
    let mut state = AskState::new(&request);
    let open = screen(&state, 30, 6);
    assert_snapshot!("thirty_by_six_open", open);
    press(&mut state, &[KeyCode::Down]);
    let moved = screen(&state, 30, 6);
    assert!(moved.contains("› 2. Production"), "{moved}");
    assert!(
        moved.contains("↑ Which environment"),
        "the question's first line stays on top:\n{moved}"
    );
    assert_snapshot!("thirty_by_six_moved", moved);
    // The end of the question was never on screen: Enter shows it instead of sending.
    assert_eq!(
        state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        crate::state::Step::Stay
    );
    let rest = screen(&state, 30, 6);
    assert!(rest.contains("at ten?"), "{rest}");
    // Then Enter brings the choice back, and the next Enter sends it.
    assert_eq!(
        state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        crate::state::Step::Stay
    );
    assert!(screen(&state, 30, 6).contains("› 2. Production"));
    assert!(matches!(
        state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        crate::state::Step::Done(_)
    ));
}

#[test]
fn a_header_of_thousands_of_characters_is_capped_so_the_options_show() {
    // Found: a 3,993-character header filled the first screen; no option showed.
    let header = "H".repeat(21) + &" lorem ipsum".repeat(331);
    assert_eq!(header.chars().count(), 3_993);
    let request = request(&format!(
        r#"{{"questions":[{{"id":"q","header":"{header}","question":"Run the migration now?","options":["Yes (Recommended)","No"]}}]}}"#
    ));
    let state = AskState::new(&request);
    let shown = screen(&state, 80, 12);
    assert!(
        shown.contains("Run the migration now?") && shown.contains("› 1. Yes"),
        "{shown}"
    );
    assert_snapshot!("huge_header", shown);
}

#[test]
fn a_tall_questions_first_line_stays_on_top_while_the_options_scroll() {
    // Found: scrolled into the middle of a tall question, its first line was gone.
    let long = format!("START {}", "lorem ipsum dolor sit amet ".repeat(20));
    let options: Vec<String> = (1..=8).map(|i| format!("\"Option {i}\"")).collect();
    let request = request(&format!(
        r#"{{"questions":[{{"id":"q","question":"{long}","options":[{}]}}]}}"#,
        options.join(",")
    ));
    let mut state = AskState::new(&request);
    screen(&state, 40, 12);
    press(&mut state, &[KeyCode::Down; 3]);
    let shown = screen(&state, 40, 12);
    assert!(shown.contains("› 4. Option 4"), "{shown}");
    assert!(shown.contains("↑ START lorem"), "{shown}");
    assert_snapshot!("tall_question_sticky", shown);
}

/// The same question answered before: `items` given at 10:42.
fn offering(state: &mut AskState<'_>, items: Vec<ask_user_core::AnswerItem>) {
    state.again = Some(crate::state::Again {
        answers: ask_user_core::Answers { answers: items },
        given: "10:42".to_owned(),
    });
}

fn ctrl_r() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL)
}

const DB: &str = r#"{"questions":[{"id":"db","question":"Which database?","options":["SQLite","PostgreSQL (Recommended)","MySQL"]}]}"#;

#[test]
fn the_answer_given_before_is_offered_above_the_question_and_sent_only_by_ctrl_r_then_enter() {
    use crate::state::Step;
    use ask_user_core::AnswerItem;
    let request = request(DB);
    let mysql = vec![AnswerItem::selected("db", ["MySQL"])];
    let mut state = AskState::new(&request);
    offering(&mut state, mysql.clone());
    assert_snapshot!("again_offered", screen(&state, 80, 14));
    // Ctrl-R asks; any other key keeps the question, and Enter then answers it as usual.
    assert_eq!(state.handle_key(ctrl_r()), Step::Stay);
    assert_snapshot!("again_confirm", screen(&state, 80, 14));
    press(&mut state, &[KeyCode::Down]);
    assert_eq!(state.notice, None);
    screen(&state, 80, 14);
    let picked = state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(
        picked,
        Step::Done(ask_user_core::Answers {
            answers: vec![AnswerItem::selected("db", ["MySQL"])]
        }),
        "Down moved to MySQL: the human's own pick"
    );
    // Enter alone never sends it: the highlighted option is the answer.
    let mut state = AskState::new(&request);
    offering(&mut state, vec![AnswerItem::selected("db", ["SQLite"])]);
    screen(&state, 80, 14);
    assert_eq!(
        state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        Step::Done(ask_user_core::Answers {
            answers: vec![AnswerItem::selected("db", ["PostgreSQL (Recommended)"])]
        })
    );
    // Ctrl-R, then Enter: the answer given before, as this ask's.
    let mut state = AskState::new(&request);
    offering(&mut state, vec![AnswerItem::selected("db", ["SQLite"])]);
    screen(&state, 80, 14);
    state.handle_key(ctrl_r());
    screen(&state, 80, 14);
    assert_eq!(
        state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        Step::Done(ask_user_core::Answers {
            answers: vec![AnswerItem::selected("db", ["SQLite"])]
        })
    );
}

#[test]
fn without_an_answer_given_before_ctrl_r_does_nothing() {
    let request = request(DB);
    let mut state = AskState::new(&request);
    let before = screen(&state, 80, 14);
    assert_eq!(state.handle_key(ctrl_r()), crate::state::Step::Stay);
    assert_eq!(state.notice, None);
    assert_eq!(screen(&state, 80, 14), before);
}

#[test]
fn a_batch_offers_every_question_with_its_answer_in_full_on_the_first_question_only() {
    use crate::state::Step;
    use ask_user_core::AnswerItem;
    let request = request(DEPLOY);
    let given: Vec<AnswerItem> = request
        .questions()
        .iter()
        .map(|q| match q.options.first() {
            Some(o) => AnswerItem::selected(&q.id, [o.label.clone()]),
            None => AnswerItem::custom(
                &q.id,
                "roll back by flipping the flag, then page the on-call",
            ),
        })
        .collect();
    let mut state = AskState::new(&request);
    offering(&mut state, given.clone());
    let shown = screen(&state, 80, 40);
    for q in request.questions() {
        assert!(
            shown.contains(q.question.as_str()),
            "{} not shown whole:\n{shown}",
            q.question
        );
    }
    assert_snapshot!("again_batch", shown);
    // On the next question it is no longer offered, and Ctrl-R does nothing there.
    press(&mut state, &[KeyCode::Enter]);
    let next = screen(&state, 80, 40);
    assert!(!next.contains("answered this question before"), "{next}");
    assert_eq!(state.handle_key(ctrl_r()), Step::Stay);
    assert_eq!(state.notice, None);
    // Back on the first question, Ctrl-R then Enter sends the whole batch given before.
    press(&mut state, &[KeyCode::Left]);
    screen(&state, 80, 40);
    state.handle_key(ctrl_r());
    screen(&state, 80, 40);
    let step = state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let Step::Done(answers) = step else {
        panic!("not sent: {step:?}")
    };
    assert_eq!(
        answers,
        ask_user_core::normalise(&request, ask_user_core::Answers { answers: given }).unwrap()
    );
}

#[test]
fn on_a_small_screen_enter_shows_all_of_the_answer_given_before_first() {
    use crate::state::Step;
    use ask_user_core::AnswerItem;
    let request = request(r#"{"questions":[{"id":"why","question":"Why roll back?"}]}"#);
    let long = "the canary's error rate rose past the budget within five minutes of the deploy \
                and the on-call engineer asked for the previous build to be restored everywhere";
    let mut state = AskState::new(&request);
    offering(&mut state, vec![AnswerItem::custom("why", long)]);
    let (width, height) = (30, 8);
    screen(&state, width, height);
    state.handle_key(ctrl_r());
    let mut frames = vec![screen(&state, width, height)];
    let mut enters = 0;
    let sent = loop {
        enters += 1;
        assert!(enters < 20, "never sent:\n{}", frames.join("\n---\n"));
        match state.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)) {
            Step::Done(answers) => break answers,
            Step::Stay => frames.push(screen(&state, width, height)),
            other => panic!("{other:?}"),
        }
    };
    assert!(
        enters > 1,
        "sent before all of it was on screen:\n{}",
        frames[0]
    );
    let words: String = frames.concat();
    for word in long.split_whitespace() {
        assert!(
            words.contains(word),
            "{word:?} never shown:\n{}",
            frames.join("\n---\n")
        );
    }
    assert_eq!(sent.answers, vec![AnswerItem::custom("why", long)]);
}
