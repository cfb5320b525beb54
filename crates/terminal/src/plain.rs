//! The plain fallback for `TERM=dumb`: no colour, no cursor addressing, no raw mode. The
//! questions are printed as lines on `/dev/tty` and each answer is one line typed with the
//! terminal's own line editing, read when the human presses Enter (docs/contract.md §6).
//!
//! One line per question:
//!
//! - empty: the recommended option (multi-select: the pre-chosen one); with nothing
//!   recommended it asks once more, and a second empty line skips;
//! - numbers only (`2`, `1 3`, `1,3`): those options (single-select: exactly one);
//! - Esc alone (`^[` then Enter): skip the question;
//! - anything else: the human's own answer, kept as typed (`2 replicas` is text, never
//!   option 2);
//! - end of input (Ctrl-D on an empty line): dismiss the batch.
//!
//! Every confirmed answer is echoed (`✔ question → answer`), so the screen shows what is
//! sent; the last line confirms the batch. There is no way back in this mode.

use std::fs::File;
use std::io::{self, Read, Write};
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, CancellationToken, Question, normalise,
};

use crate::layout::{summary_lines, wrap};
use crate::sanitize::{sanitize, sanitize_line};

/// How often a blocked read looks at the cancellation token.
const CANCEL_CHECK: Duration = Duration::from_millis(200);
/// Line width when the terminal reports none.
const WIDTH: usize = 80;

/// Asks the batch in plain lines on `tty`.
pub(crate) fn ask(
    mut tty: File,
    request: &AskUserQuestionRequest,
    cancel: &CancellationToken,
) -> Result<Answers, AskError> {
    let failed = |e: io::Error| AskError::Failed(format!("the terminal failed: {e}"));
    let width = crossterm::terminal::size()
        .ok()
        .map_or(WIDTH, |(w, _)| usize::from(w).clamp(20, 200));
    tty.write_all(b"\x07").map_err(failed)?;
    let total = request.questions().len();
    let mut items = Vec::with_capacity(total);
    let mut reader = Lines::default();
    for (index, question) in request.questions().iter().enumerate() {
        show(&mut tty, question, index, total, width).map_err(failed)?;
        let mut empty_once = false;
        let item = loop {
            write!(tty, "> ").map_err(failed)?;
            let line = match reader.next(&mut tty, cancel) {
                Ok(Some(line)) => line,
                Ok(None) => return Err(AskError::Dismissed),
                Err(_) if cancel.is_cancelled() => {
                    let _ = writeln!(tty, "\n(withdrawn: no answer is needed any more)");
                    return Err(AskError::Cancelled);
                }
                Err(e) => return Err(failed(e)),
            };
            match answer(question, &line) {
                Reply::Item(item) => break item,
                Reply::Empty if empty_once => break AnswerItem::skipped(&question.id),
                Reply::Empty => {
                    empty_once = true;
                    writeln!(
                        tty,
                        "Nothing chosen. Press Enter again to skip this question."
                    )
                    .map_err(failed)?;
                }
                Reply::Again(why) => writeln!(tty, "{why}").map_err(failed)?,
            }
        };
        for line in summary_lines(question, &item, width) {
            writeln!(tty, "{line}").map_err(failed)?;
        }
        items.push(item);
    }
    normalise(request, Answers { answers: items })
        .map_err(|invalid| AskError::Failed(format!("the answers were refused: {invalid}")))
}

fn show(
    tty: &mut File,
    question: &Question,
    index: usize,
    total: usize,
    width: usize,
) -> io::Result<()> {
    let mut head = String::new();
    if let Some(header) = &question.header {
        head.push_str(&format!("[{}] ", sanitize_line(header)));
    }
    if total > 1 {
        head.push_str(&format!("({}/{total}) ", index + 1));
    }
    writeln!(tty)?;
    for line in wrap(&format!("{head}{}", sanitize(&question.question)), width) {
        writeln!(tty, "{line}")?;
    }
    let recommended = question.recommended();
    for (i, option) in question.options.iter().enumerate() {
        let mark = if Some(i) == recommended { '*' } else { ' ' };
        let mut text = format!("{mark}{:>3}. {}", i + 1, sanitize_line(&option.label));
        if let Some(description) = &option.description {
            text.push_str(&format!(" - {}", sanitize_line(description)));
        }
        for (j, line) in wrap(&text, width.saturating_sub(6)).into_iter().enumerate() {
            let indent = if j == 0 { "" } else { "      " };
            writeln!(tty, "{indent}{line}")?;
        }
    }
    let how = match (question.options.is_empty(), question.multi_select) {
        (true, _) => "Type your answer; Enter alone twice skips; Esc then Enter skips.",
        (false, false) => {
            "Type a number, or your own answer; Enter alone takes the option marked *; Esc then Enter skips."
        }
        (false, true) => {
            "Type numbers (1 3), or your own answer; Enter alone takes the option marked *; Esc then Enter skips."
        }
    };
    for line in wrap(how, width) {
        writeln!(tty, "{line}")?;
    }
    Ok(())
}

/// What one typed line means for a question.
#[derive(Debug, PartialEq)]
enum Reply {
    Item(AnswerItem),
    Empty,
    Again(&'static str),
}

fn answer(question: &Question, line: &str) -> Reply {
    let text = line.trim();
    if text == "\u{1b}" {
        return Reply::Item(AnswerItem::skipped(&question.id));
    }
    let n = question.options.len();
    if text.is_empty() {
        return match question.recommended() {
            Some(i) => Reply::Item(AnswerItem::selected(
                &question.id,
                [question.options[i].label.clone()],
            )),
            None => Reply::Empty,
        };
    }
    let numbers: Option<Vec<usize>> = text
        .split([' ', ','])
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<usize>().ok().filter(|k| (1..=n).contains(k)))
        .collect();
    match numbers {
        Some(numbers) if n > 0 => {
            if !question.multi_select && numbers.len() != 1 {
                return Reply::Again("One number, please (or type your own answer).");
            }
            let mut picked = vec![false; n];
            for k in numbers {
                picked[k - 1] = true;
            }
            Reply::Item(AnswerItem::selected(
                &question.id,
                question
                    .options
                    .iter()
                    .zip(picked)
                    .filter(|(_, p)| *p)
                    .map(|(o, _)| o.label.clone()),
            ))
        }
        _ => Reply::Item(AnswerItem::custom(
            &question.id,
            text.chars().filter(|c| !c.is_control()).collect::<String>(),
        )),
    }
}

/// Lines read from the tty, waiting in slices so the token is seen while nobody types.
#[derive(Debug, Default)]
struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// The next line; `None` at end of input.
    fn next(&mut self, tty: &mut File, cancel: &CancellationToken) -> io::Result<Option<String>> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                return Ok(Some(String::from_utf8_lossy(&line[..end]).into_owned()));
            }
            if cancel.is_cancelled() {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
            }
            let timeout = Timespec::try_from(CANCEL_CHECK).map_err(io::Error::other)?;
            let mut fds = [PollFd::new(&*tty, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout))? == 0 {
                continue;
            }
            let mut chunk = [0u8; 1024];
            let read = tty.read(&mut chunk)?;
            if read == 0 {
                if self.buffer.is_empty() {
                    return Ok(None);
                }
                self.buffer.push(b'\n');
                continue;
            }
            self.buffer.extend_from_slice(&chunk[..read]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_user_core::{Limits, decode};
    use pretty_assertions::assert_eq;

    fn question(json: &str) -> Question {
        decode(json, &Limits::default())
            .unwrap()
            .request
            .questions()[0]
            .clone()
    }

    #[test]
    fn a_line_is_a_number_the_recommended_a_skip_or_text() {
        let q = question(
            r#"{"questions":[{"id":"db","question":"Which?","options":["SQLite","PostgreSQL (Recommended)"]}]}"#,
        );
        assert_eq!(
            answer(&q, ""),
            Reply::Item(AnswerItem::selected("db", ["PostgreSQL (Recommended)"]))
        );
        assert_eq!(
            answer(&q, " 1 "),
            Reply::Item(AnswerItem::selected("db", ["SQLite"]))
        );
        assert_eq!(
            answer(&q, "2 replicas please"),
            Reply::Item(AnswerItem::custom("db", "2 replicas please"))
        );
        assert_eq!(answer(&q, "\u{1b}"), Reply::Item(AnswerItem::skipped("db")));
        assert!(matches!(answer(&q, "1 2"), Reply::Again(_)));
        assert_eq!(
            answer(&q, "3"),
            Reply::Item(AnswerItem::custom("db", "3")),
            "no option 3: text"
        );
    }

    #[test]
    fn multi_select_takes_several_numbers_and_free_text_asks_twice() {
        let q = question(
            r#"{"questions":[{"id":"f","question":"Which?","multi_select":true,"options":["A","B","C"]}]}"#,
        );
        assert_eq!(
            answer(&q, "3,1"),
            Reply::Item(AnswerItem::selected("f", ["A", "C"]))
        );
        assert_eq!(answer(&q, ""), Reply::Empty);
    }
}
