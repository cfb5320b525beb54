//! # ask-user-terminal
//!
//! The terminal answerer of `ask_user_question` (docs/contract.md §6 Terminal): [`Terminal`] implements
//! the core's [`UserInteraction`] seam by drawing the questions on the controlling terminal
//! (`/dev/tty`) — never on stdout, so stdout can carry the answer or a protocol — with
//! ratatui and crossterm, in an inline viewport below what is already on screen.
//!
//! What the human sees and can do is described in the `state` module's doc and the README
//! (the key table): header chip, question, options with wrapped descriptions, the
//! recommended option marked and pre-selected, an always-present row for their own answer
//! (an editor with a caret), numbers that move and never confirm, Space, Enter, Esc (skip
//! one; on the last question it asks first), Ctrl-C (dismiss all), progress, the earlier
//! answers and a way back, the bell when the batch opens, a countdown with a time budget,
//! Ctrl-L, Ctrl-Z, and plain lines for `TERM=dumb`. Two rules rule the keys: no stray key
//! sends an answer, and typed text is never reinterpreted or lost.
//! Model text is shown inert ([`sanitize`]). The terminal is restored on every way out.
//!
//! Inside: `state` (the pure state machine and key handling), `editor` (the own answer),
//! `layout` (lines for a width), `render` (a function of state and area), `tty` (the I/O:
//! `/dev/tty`, raw mode, viewport, restore guard), and the loop here.
//!
//! The terminal's I/O is synchronous (writes to the tty, the cursor-position query, raw
//! mode), so each ask runs on a thread of its own with a small runtime of its own, never on
//! the caller's async threads; the caller's future waits for it without blocking. Asks are
//! taken one at a time per process (raw mode and the keyboard are process-wide): a second
//! ask waits, cancellable, until the first is done.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ask_user_core::{AskUserQuestionTool, ExecutionContext};
//! use ask_user_terminal::Terminal;
//!
//! # async fn run() {
//! let tool = AskUserQuestionTool::new(Arc::new(Terminal::new()));
//! let outcome = tool
//!     .call(r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes (Recommended)","No"]}]}"#,
//!           ExecutionContext::default())
//!     .await;
//! println!("{}", outcome.text());
//! # }
//! ```
//!
//! Hosts should turn SIGTERM and SIGHUP into cancellation of the call's token (the `ask-user`
//! CLI does): the question is then withdrawn and the terminal restored. The only handlers
//! this library installs are for SIGTSTP and SIGCONT (suspend and resume with `kill -TSTP`,
//! `fg`), from the first ask on; afterwards the process no longer stops on SIGTSTP by
//! default (Ctrl-Z outside an ask only stops it while the terminal is in raw mode elsewhere).
#![deny(missing_docs)]

mod draft;
mod editor;
mod layout;
mod plain;
mod render;
mod sanitize;
mod state;
mod tty;

pub use draft::Draft;

/// **Test only** (read only in builds with this crate's `test-knobs` feature, which its own
/// tests turn on): how many milliseconds the cursor-position query waits for a terminal that
/// never answers (300 without it), so a test can hold the terminal's I/O in flight for as long
/// as it needs.
#[doc(hidden)]
pub const CURSOR_QUERY_TEST_ENV: &str = "ASK_USER_TEST_CURSOR_QUERY_MS";
pub use sanitize::{sanitize, sanitize_line};

use std::time::{Duration, Instant};

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide, Settled,
    UserInteraction,
};
use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyModifiers};
use futures::StreamExt;

use crate::layout::{Theme, closed_lines, summary_lines};
use crate::state::{Again, AskState, Step};
use crate::tty::Session;

/// One ask on the terminal at a time in this process.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long a dropped (not cancelled) ask waits for its thread to give the terminal back.
const RESTORE_WAIT: Duration = Duration::from_secs(1);

/// Asks on the controlling terminal (`/dev/tty`).
///
/// - No controlling terminal: [`AskError::Unavailable`] at once, and
///   [`UserInteraction::is_available`] is `false`.
/// - Ctrl-C: [`AskError::Dismissed`]; the cancellation token firing:
///   [`AskError::Cancelled`] after the question is cleared from the screen.
/// - A terminal that breaks while asking: [`AskError::Failed`].
/// - Several asks at once in one process: one after another.
/// - `TERM=dumb`: plain lines, no colour and no cursor addressing (see the README).
#[derive(Debug, Clone)]
pub struct Terminal {
    color: Option<bool>,
    timeout: Option<Duration>,
    esc_back: bool,
    draft: Option<Draft>,
}

impl Default for Terminal {
    fn default() -> Self {
        Self::new()
    }
}

impl Terminal {
    /// A terminal answerer; colours are off when `NO_COLOR` is set to a non-empty value or
    /// when `TERM` names a terminal without them (`dumb`, `vt100`, `linux`, …).
    pub fn new() -> Self {
        Self {
            color: None,
            timeout: None,
            esc_back: false,
            draft: None,
        }
    }

    /// The same answerer with colours on or off (without colour the view uses bold, dim and
    /// reverse video only).
    pub fn with_color(mut self, color: bool) -> Self {
        self.color = Some(color);
        self
    }

    /// The ask's time budget, for a countdown under the question (the host still enforces
    /// it by cancelling the token; this only shows it).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same answerer for a host that opened the question from a list (`ask-user inbox`):
    /// Esc goes back to the list instead of skipping — the ask ends with
    /// [`AskError::Cancelled`], nothing decided, and stays open.
    pub fn with_esc_back(mut self) -> Self {
        self.esc_back = true;
        self
    }

    /// The same answerer keeping what the human did in `draft` when they leave the batch
    /// undecided (Esc back to the list, or the question closing under them), and starting
    /// from it when the same request is asked again; a confirmed batch empties it.
    pub fn with_draft(mut self, draft: Draft) -> Self {
        self.draft = Some(draft);
        self
    }

    fn theme(&self) -> Theme {
        let color = self.color.unwrap_or_else(|| {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            !no_color && term_has_color(std::env::var("TERM").ok().as_deref())
        });
        Theme { color }
    }

    async fn run(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Option<Decide>,
    ) -> Result<Answers, AskError> {
        // Fails fast without a terminal, before waiting for another ask.
        drop(tty::open().map_err(|e| AskError::Unavailable(format!("no terminal: {e}")))?);
        let turn = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(AskError::Cancelled),
            turn = ONE_AT_A_TIME.lock() => turn,
        };
        let request = request.clone();
        let theme = self.theme();
        let esc_back = self.esc_back;
        let draft = self.draft.clone();
        let deadline = self.timeout.and_then(|t| Instant::now().checked_add(t));
        let inner = cancel.child_token();
        let (result_tx, result_rx) = tokio::sync::oneshot::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let thread_cancel = inner.clone();
        std::thread::Builder::new()
            .name("ask-user-terminal".to_owned())
            .spawn(move || {
                let result = ask_on_this_thread(
                    &request,
                    thread_cancel,
                    Options {
                        theme,
                        deadline,
                        esc_back,
                        draft,
                    },
                    decide.as_ref(),
                );
                drop(turn);
                let _ = done_tx.send(());
                let _ = result_tx.send(result);
            })
            .map_err(|e| AskError::Failed(format!("cannot start the terminal thread: {e}")))?;
        let mut withdraw = Withdraw {
            cancel: inner,
            done: done_rx,
            finished: false,
        };
        let result = result_rx
            .await
            .unwrap_or_else(|_| Err(AskError::Failed("the terminal thread ended".to_owned())));
        withdraw.finished = true;
        result
    }
}

/// Whether `TERM` names a terminal that takes crossterm's colour escapes (`38;5;N`).
fn term_has_color(term: Option<&str>) -> bool {
    let Some(term) = term.filter(|t| !t.is_empty()) else {
        return false;
    };
    !(term == "dumb"
        || term == "ansi"
        || term == "sun"
        || term.starts_with("vt")
        || term.starts_with("linux")
        || term.starts_with("cons"))
}

/// When the ask's future is dropped before its thread finished (not through the token):
/// the thread is told to withdraw, and the drop waits briefly for the terminal to be back.
struct Withdraw {
    cancel: CancellationToken,
    done: std::sync::mpsc::Receiver<()>,
    finished: bool,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if !self.finished {
            self.cancel.cancel();
            let _ = self.done.recv_timeout(RESTORE_WAIT);
        }
    }
}

/// The whole ask, on the calling (dedicated) thread, with a runtime of its own.
fn ask_on_this_thread(
    request: &AskUserQuestionRequest,
    cancel: CancellationToken,
    options: Options,
    decide: Option<&Decide>,
) -> Result<Answers, AskError> {
    if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        // No cursor addressing: plain lines and the terminal's own line editing.
        let tty = tty::open().map_err(|e| AskError::Unavailable(format!("no terminal: {e}")))?;
        return plain::ask(tty, request, &cancel);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AskError::Failed(format!("the terminal failed: {e}")))?;
    runtime.block_on(ask_loop(request, cancel, options, decide))
}

/// A signal stream, or one that never yields when it cannot be listened to.
fn listen(signal: i32) -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(signal)).ok()
}

async fn next_signal(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// The next whole second of the countdown (never, without a deadline).
async fn tick(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => {
            let left = deadline.saturating_duration_since(Instant::now());
            let fraction = left.subsec_nanos();
            let wait = if fraction == 0 {
                Duration::from_secs(1)
            } else {
                Duration::from_nanos(u64::from(fraction))
            };
            tokio::time::sleep(wait).await;
        }
        None => std::future::pending().await,
    }
}

/// Runs `f` with crossterm's event reader stopped (its thread reads the tty), so a reply to
/// a cursor-position query is not read as keys; keys typed meanwhile wait in its queue.
fn with_reader_stopped<T>(events: &mut Option<EventStream>, f: impl FnOnce() -> T) -> T {
    *events = None;
    // Takes the reader's lock, so the stopped reader thread has let go of the tty.
    let _ = crossterm::event::poll(Duration::ZERO);
    let result = f();
    *events = Some(EventStream::new());
    result
}

/// What woke the loop.
enum Wake {
    Cancelled,
    Suspend,
    Continued,
    Tick,
    Input(Option<std::io::Result<Event>>),
}

async fn ask_loop(
    request: &AskUserQuestionRequest,
    cancel: CancellationToken,
    options: Options,
    decide: Option<&Decide>,
) -> Result<Answers, AskError> {
    let Options {
        theme,
        deadline,
        esc_back,
        draft,
    } = options;
    let tty = tty::open().map_err(|e| AskError::Unavailable(format!("no terminal: {e}")))?;
    if cancel.is_cancelled() {
        return Err(AskError::Cancelled);
    }
    let failed = |e: std::io::Error| AskError::Failed(format!("the terminal failed: {e}"));
    let mut state = AskState::new(request);
    state.esc_back = esc_back;
    state.again = decide.and_then(Decide::given_before).map(Again::of);
    if let Some(draft) = &draft {
        draft.restore(&mut state);
    }
    let mut tstp = listen(rustix::process::Signal::TSTP.as_raw());
    let mut cont = listen(rustix::process::Signal::CONT.as_raw());
    let mut session = Session::start(tty, &state, theme).map_err(failed)?;
    let mut events = Some(EventStream::new());
    loop {
        state.seconds_left = deadline.map(|d| {
            let left = d.saturating_duration_since(Instant::now());
            left.as_secs() + u64::from(left.subsec_nanos() > 0)
        });
        session.draw(&state).map_err(failed)?;
        let stream = events.get_or_insert_with(EventStream::new);
        let wake = tokio::select! {
            biased;
            () = cancel.cancelled() => Wake::Cancelled,
            () = next_signal(&mut tstp) => Wake::Suspend,
            () = next_signal(&mut cont) => Wake::Continued,
            () = tick(deadline) => Wake::Tick,
            event = stream.next() => Wake::Input(event),
        };
        let event = match wake {
            Wake::Cancelled => {
                // Text the human typed survives the question closing: it is left on screen
                // (and in the scrollback, to copy) with why it closed.
                let width = usize::from(crossterm::terminal::size().map_or(80, |s| s.0));
                let why = closed_why(decide.and_then(Decide::settled), deadline);
                if let Some(draft) = &draft {
                    draft.save(&state);
                }
                session.leave(closed_lines(&state, &why, width.max(20)));
                return Err(AskError::Cancelled);
            }
            Wake::Suspend => {
                with_reader_stopped(&mut events, || session.suspend(&state)).map_err(failed)?;
                continue;
            }
            Wake::Continued => {
                if session.still_raw() {
                    // Nobody reset the terminal (or our own suspend resumed it already, and
                    // this is its SIGCONT arriving late): redraw in place. Asking the terminal
                    // where the cursor is would read, and drop, keys typed meanwhile.
                    session.redraw().map_err(failed)?;
                } else {
                    // Continued after a stop that left the terminal cooked (`kill -STOP`,
                    // then `fg` from a shell): raw mode again (before the reader is touched,
                    // which could block in cooked mode) and the question drawn afresh.
                    tty::raw_again().map_err(failed)?;
                    with_reader_stopped(&mut events, || session.resume(&state)).map_err(failed)?;
                }
                continue;
            }
            Wake::Tick => continue,
            Wake::Input(event) => event,
        };
        match event {
            Some(Ok(Event::Key(key))) => {
                // On a terminal too small to show the question, only the keys that do not
                // answer work: nothing is sent from a screen that does not show it.
                if !session.fits() && !is_control_key(key) {
                    continue;
                }
                match state.handle_key(key) {
                    Step::Stay => {}
                    Step::Done(answers) => {
                        if let Some(draft) = &draft {
                            draft.clear();
                        }
                        let width = usize::from(crossterm::terminal::size().map_or(80, |s| s.0));
                        session.leave(
                            request
                                .questions()
                                .iter()
                                .zip(&answers.answers)
                                .flat_map(|(q, a)| summary_lines(q, a, width.max(20)))
                                .collect(),
                        );
                        return Ok(answers);
                    }
                    Step::Dismissed => return Err(AskError::Dismissed),
                    Step::Back => {
                        if let Some(draft) = &draft {
                            draft.save(&state);
                        }
                        return Err(AskError::Cancelled);
                    }
                    Step::Redraw => session.redraw().map_err(failed)?,
                    Step::Suspend => {
                        with_reader_stopped(&mut events, || session.suspend(&state))
                            .map_err(failed)?;
                    }
                }
            }
            Some(Ok(Event::Paste(text))) if session.fits() => state.paste(&text),
            Some(Ok(Event::Resize(..))) => {
                with_reader_stopped(&mut events, || session.resize(&state)).map_err(failed)?;
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(failed(e)),
            None => return Err(AskError::Failed("the terminal closed".to_owned())),
        }
    }
}

/// How one ask is drawn and keyed.
#[derive(Debug, Clone)]
struct Options {
    theme: Theme,
    deadline: Option<Instant>,
    esc_back: bool,
    draft: Option<Draft>,
}

/// Why the question closed under the human, in words that complete "Not sent: …".
fn closed_why(settled: Option<Settled>, deadline: Option<Instant>) -> String {
    let elsewhere = |by: Option<String>| by.map_or("elsewhere".to_owned(), |b| format!("in {b}"));
    match settled {
        Some(Settled::Answered { by, .. }) => {
            format!("the question was answered {} first", elsewhere(by))
        }
        Some(Settled::Dismissed { by }) => format!("the question was dismissed {}", elsewhere(by)),
        Some(Settled::TimedOut(_)) => "the question timed out".to_owned(),
        Some(Settled::Aborted) => "the agent stopped waiting".to_owned(),
        Some(Settled::Withdrawn) => "the question was withdrawn".to_owned(),
        _ if deadline.is_some_and(|d| Instant::now() >= d) => "the question timed out".to_owned(),
        _ => "the question was closed (the agent stopped waiting or it was answered elsewhere)"
            .to_owned(),
    }
}

/// Ctrl-C, Ctrl-L, Ctrl-Z: the keys that work on a terminal too small for the question.
fn is_control_key(key: KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(key.code, KeyCode::Char('c' | 'l' | 'z'))
}

impl UserInteraction for Terminal {
    /// Asks on the terminal; when the question closes under the human, the race's outcome
    /// says why (answered elsewhere, timed out, withdrawn), shown beside their typed text.
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(self.run(request, cancel, Some(decide)))
    }

    /// Whether the process has a controlling terminal (`/dev/tty` opens).
    fn is_available(&self) -> bool {
        tty::open().is_ok()
    }

    /// `"the terminal"`: a page that lost the race says "answered in the terminal".
    fn name(&self) -> Option<&str> {
        Some("the terminal")
    }
}

#[cfg(test)]
mod tests {
    use super::term_has_color;

    #[test]
    fn terminals_without_colour_get_none() {
        for term in [None, Some(""), Some("dumb"), Some("vt100"), Some("linux")] {
            assert!(!term_has_color(term), "{term:?}");
        }
        for term in ["xterm-256color", "screen", "tmux-256color", "xterm"] {
            assert!(term_has_color(Some(term)), "{term}");
        }
    }
}
