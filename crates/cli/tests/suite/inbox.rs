//! `ask-user inbox` in a real pseudo-terminal (tmux): what the human typed into an ask they
//! went back from is kept — reopening the ask shows it, and when the ask closes elsewhere the
//! list says why and shows the text in full. The asker runs on a terminal of its own (a second
//! pane), so the ask can be answered there while the inbox holds the typed text.

use ask_user_test_support::TmuxPane;

use super::support::{BIN, Pane};

const DB: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"SQLite"},{"label":"PostgreSQL (Recommended)","description":"Managed, with backups."},{"label":"MySQL"}]}]}"#;
const POSTGRES: &str = r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#;
const OWN: &str = "Type your own answer";
const TYPED: &str = "half of a long reply";

/// A store file in a temporary folder, the asker on its own terminal, and the inbox on it.
struct Both {
    _store: tempfile::TempDir,
    asker: Pane,
    inbox: TmuxPane,
}

fn asker_and_inbox() -> Both {
    let store = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", store.path().join("store.sqlite3").display());
    let asker = Pane::ask(&["--store", &url], DB);
    asker.wait_text(OWN);
    let script = format!("exec '{BIN}' inbox --store '{url}' 2> inbox.err\n");
    let inbox = TmuxPane::start(tempfile::tempdir().unwrap(), &script, 100, 30, "inbox.err");
    inbox.wait_text("[Database] Which database?");
    Both {
        _store: store,
        asker,
        inbox,
    }
}

/// Opens the ask, types [`TYPED`] into its own answer and goes back with Esc.
fn type_and_go_back(inbox: &TmuxPane) {
    inbox.keys(&["Enter"]);
    inbox.wait_text(OWN);
    inbox.type_text(TYPED);
    inbox.wait_text(TYPED);
    inbox.keys(&["Escape"]);
    inbox.wait_text("Back to the list: nothing was sent");
}

/// The human answers on the asker's terminal (Enter on the recommended option) while the
/// inbox is open: the asker prints the answer, and the inbox keeps the closed ask selected,
/// shown closed, with no question open; returns the inbox's screen.
fn answered_in_the_terminal(asker: &Pane, inbox: &TmuxPane) -> String {
    asker.keys(&["Enter"]);
    asker.finished_with(0, POSTGRES);
    // The closed ask stays selected, shown closed, until the human moves.
    let screen = inbox.wait_text("✘ Closed: an answer given in the terminal counted.");
    assert!(screen.contains("— 0 open question(s)"), "{screen}");
    screen
}

#[test]
fn esc_back_keeps_typed_text_and_a_close_on_the_list_shows_it() {
    let both = asker_and_inbox();
    let Both { asker, inbox, .. } = &both;
    type_and_go_back(inbox);
    let list = inbox.screen();
    assert!(list.contains("with what you chose and typed"), "{list}");
    // Reopened: the text is there again, the caret after it, and more typing extends it.
    inbox.keys(&["Enter"]);
    let screen = inbox.wait_text("Esc back to the list");
    assert!(
        screen.contains(&format!("› 4. {TYPED}")),
        "the own answer as it was left:\n{screen}"
    );
    inbox.type_text(", and more");
    inbox.wait_text(&format!("{TYPED}, and more"));
    inbox.keys(&["Escape"]);
    inbox.wait_text("Back to the list: nothing was sent");

    // Answered on the asker's terminal while the inbox shows the list: the list says so, and
    // what was typed stays on screen in full.
    let screen = answered_in_the_terminal(asker, inbox);
    assert!(
        screen.contains(
            "✘ Not sent: an answer given in the terminal counted. What you typed:\n  Which database?\nhalf of a long reply, and more\n"
        ),
        "{screen}"
    );
    inbox.keys(&["q"]);
}

#[test]
fn an_ask_closing_while_open_in_the_inbox_keeps_the_typed_text_on_the_list() {
    let both = asker_and_inbox();
    let Both { asker, inbox, .. } = &both;
    inbox.keys(&["Enter"]);
    inbox.wait_text(OWN);
    inbox.type_text(TYPED);
    inbox.wait_text(TYPED);
    let screen = answered_in_the_terminal(asker, inbox);
    assert!(
        screen.contains(&format!(
            "✘ Not sent: an answer given in the terminal counted before you answered. What you typed:\n  Which database?\n{TYPED}\n"
        )),
        "{screen}"
    );
    inbox.keys(&["q"]);
}
