//! `ask-user inbox`: a full-screen terminal inbox for the store's open asks (docs/contract.md
//! §8 "Headless askers", §6 "`ask-user inbox` is a full-screen list").
//!
//! The list ([`crate::inbox_view`]) groups the open asks by agent, oldest waiting first, with
//! who asks and how long each has waited; the selection is an ask id, so an arrival never
//! moves it. Enter opens the chosen ask in the terminal answerer, under a line saying who
//! asks; Esc there goes back to the list (never a dismissal), and what the human chose and
//! typed is kept: opening the same ask again shows it. When an ask with typed text closes
//! (while open or while the list shows), the list says why it closed and shows the text in
//! full under it, to read and copy. A new ask rings the bell and sets
//! the window title to the count. The answer is recorded through the store's compare-and-set
//! before the human is told "taken"; otherwise the human is told which answer counted.
//!
//! It holds a shared lock on the store's presence file (`PATH.inbox`) while it runs, so an
//! `ask --via inbox` can tell whether any inbox is open.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::text::{display_line, inert};
use ask_user_core::{
    AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide, Decision, Limits,
    Offer, RecordError, RecordOutcome, Settled, UserInteraction, decode,
};
use ask_user_host::durable::{STORE_ENV, StoreArgs, describe_closed, outcome_of, record};
use ask_user_store::{AskId, AskRecord, Closed, Store, Timestamp};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::io::unix::AsyncFd;

use crate::Ended;
use crate::inbox_view::{Action, InboxView, age, agent_of, who_line};

pub(crate) use crate::inbox_view::DETACHED_TEXT;

/// Options of `ask-user inbox`.
#[derive(Debug, clap::Args)]
pub(crate) struct InboxArgs {
    /// The store: sqlite:PATH, postgres://…, or memory (default: the SQLite file in
    /// ~/.local/state/ask-user/).
    #[arg(long, value_name = "URL", env = STORE_ENV, hide_env_values = true)]
    store: Option<ask_user_core::Secret>,
}

/// Said when the human's answer was stored as the outcome.
pub(crate) const TAKEN_TEXT: &str = "Taken: your answer is stored and goes to the agent.";
/// Said when the human's dismissal was stored as the outcome.
pub(crate) const DISMISSED_TEXT: &str = "Taken: the agent is told you dismissed the question.";
/// Said when the human went back to the list without deciding.
pub(crate) const BACK_TEXT: &str =
    "Back to the list: nothing was sent; the question stays open, with what you chose and typed.";
/// Without a terminal.
pub(crate) const NO_TERMINAL_TEXT: &str = "inbox: needs a terminal (/dev/tty)";

/// How long the terminal answerer may take to leave the screen after the ask closed elsewhere.
const WITHDRAW_GRACE: Duration = Duration::from_secs(2);
/// How often the list is redrawn with nothing changing (the ages move).
const AGE_TICK: Duration = Duration::from_secs(15);

pub(crate) fn run(args: &InboxArgs) -> Ended {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Ended::Usage(format!("cannot start: {e}")),
    };
    match runtime.block_on(inbox(args)) {
        Ok(()) => Ended::Printed {
            stdout: String::new(),
            status: 0,
        },
        Err(message) => Ended::Usage(message),
    }
}

/// The full screen on `/dev/tty`: raw mode, the alternate screen and a hidden cursor while it
/// lives; all given back on drop (also on an error or a panic unwinding).
struct Screen {
    terminal: Terminal<CrosstermBackend<File>>,
}

impl Screen {
    fn enter() -> std::io::Result<Self> {
        let mut tty = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
        terminal::enable_raw_mode()?;
        execute!(tty, EnterAlternateScreen, cursor::Hide)?;
        let terminal = Terminal::new(CrosstermBackend::new(tty))?;
        Ok(Self { terminal })
    }

    fn draw(&mut self, view: &InboxView) -> std::io::Result<()> {
        self.terminal
            .draw(|frame| view.render(frame.area(), frame.buffer_mut()))
            .map(|_| ())
    }

    /// Bell and window title for `count` waiting asks (`arrived` new ones).
    fn announce(&mut self, count: usize, arrived: bool) -> std::io::Result<()> {
        let tty = self.terminal.backend_mut();
        if arrived {
            tty.write_all(b"\x07")?;
        }
        write!(tty, "\x1b]0;ask-user inbox \u{2014} {count} waiting\x1b\\")?;
        tty.flush()
    }

    /// The screen cleared for the answer view, with who asks on top; the answerer draws below.
    fn open(&mut self, heading: &[String]) -> std::io::Result<()> {
        let tty = self.terminal.backend_mut();
        queue!(
            tty,
            terminal::Clear(terminal::ClearType::All),
            cursor::MoveTo(0, 0)
        )?;
        for line in heading {
            write!(tty, "{line}\r\n")?;
        }
        write!(tty, "\r\n")?;
        tty.flush()
    }

    /// Back from the answer view: raw mode again (the answerer turned it off) and a full redraw.
    fn back(&mut self) -> std::io::Result<()> {
        terminal::enable_raw_mode()?;
        let tty = self.terminal.backend_mut();
        execute!(tty, terminal::Clear(terminal::ClearType::All), cursor::Hide)?;
        // A fresh terminal has empty buffers, so the next draw paints every cell (its
        // `clear` would ask the terminal for the cursor position, a reply that can be lost).
        let tty = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
        self.terminal = Terminal::new(CrosstermBackend::new(tty))?;
        Ok(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let tty = self.terminal.backend_mut();
        let _ = execute!(tty, LeaveAlternateScreen, cursor::Show);
        let _ = terminal::disable_raw_mode();
    }
}

/// Who asks, for the top of the answer view.
fn heading(rec: &AskRecord, now_ms: i64) -> Vec<String> {
    let who = who_line(rec);
    let mut line = format!(
        "Asked by {} \u{b7} waiting {}",
        agent_of(rec),
        age(now_ms, rec.created_at.0)
    );
    if !who.is_empty() {
        line = format!(
            "Asked by {} \u{b7} {who} \u{b7} waiting {}",
            agent_of(rec),
            age(now_ms, rec.created_at.0)
        );
    }
    let mut lines = vec![line];
    if !rec.attached {
        lines.push(format!("({DETACHED_TEXT})"));
    }
    lines
}

async fn inbox(args: &InboxArgs) -> Result<(), String> {
    let store = StoreArgs {
        store: args.store.clone(),
        key: None,
    }
    .open()
    .await?;
    let mut screen = Screen::enter().map_err(|_| NO_TERMINAL_TEXT.to_owned())?;
    let _presence = crate::durable::hold_inbox_lock(&store);
    let mut feed = store.subscribe().await.map_err(|e| e.to_string())?;
    // The store was swept when opened; again every half lease.
    let mut sweeps = tokio::time::interval(ask_user_store::lease() / 2);
    sweeps.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    sweeps.reset();
    let mut ages = tokio::time::interval(AGE_TICK);
    ages.reset();
    let mut view = InboxView::default();
    let mut keys = TtyBytes::open().map_err(|_| NO_TERMINAL_TEXT.to_owned())?;
    let mut first = true;
    let failed = |e: std::io::Error| format!("inbox: the terminal failed: {e}");
    let mut refresh = true;
    let mut dirty = true;
    // What the human did with asks they went back from, by ask id.
    let mut drafts: HashMap<AskId, ask_user_terminal::Draft> = HashMap::new();
    loop {
        if refresh {
            let open = store.list_open().await.map_err(|e| e.to_string())?;
            let closed: Vec<AskId> = drafts
                .keys()
                .filter(|id| !open.iter().any(|r| r.id == **id))
                .copied()
                .collect();
            for id in closed {
                if let Some(draft) = drafts.remove(&id).filter(|d| !d.typed().is_empty()) {
                    let why = match store.get(id).await {
                        Ok(AskRecord {
                            closed: Some(closed),
                            ..
                        }) => describe_closed(&closed),
                        _ => "the question closed".to_owned(),
                    };
                    if let Some(rec) = view.record(id) {
                        view.note = not_sent(rec, &why, &draft);
                    }
                }
            }
            let arrived = view.update(open, Timestamp::now().0);
            if let Some(id) = view.closed_without_why() {
                let why = match store.get(id).await {
                    Ok(AskRecord {
                        closed: Some(closed),
                        ..
                    }) => describe_closed(&closed),
                    _ => "the question closed".to_owned(),
                };
                view.closed_why(id, &why);
            }
            screen
                .announce(view.count(), arrived > 0 && !first)
                .map_err(failed)?;
            first = false;
            dirty = true;
        }
        if dirty {
            screen.draw(&view).map_err(failed)?;
        }
        refresh = false;
        dirty = false;
        // Retention runs every half lease, so an asker that died without detaching shows as
        // "stopped waiting" within about a lease (docs/contract.md §8 "Liveness"); what it
        // changes reaches this screen through the feed.
        tokio::select! {
            _ = sweeps.tick() => ask_user_host::durable::sweep(&store).await,
            _ = ages.tick() => refresh = true,
            change = feed.next() => {
                if change.is_none() {
                    return Err("the store's change feed ended".to_owned());
                }
                refresh = true;
            }
            bytes = keys.next_bytes() => {
                let bytes = bytes.map_err(failed)?;
                dirty = true;
                for key in crate::inbox_view::keys_of(&bytes) {
                    match view.key(key) {
                        Action::Stay => {}
                        Action::Quit => return Ok(()),
                        Action::Open(id) => {
                            let Some(rec) = view.record(id).cloned() else {
                                continue;
                            };
                            screen.open(&heading(&rec, Timestamp::now().0)).map_err(failed)?;
                            let draft = drafts.entry(id).or_default().clone();
                            view.note = answer(&store, &rec, &draft).await;
                            if view.note == TAKEN_TEXT || view.note == DISMISSED_TEXT {
                                view.answered_here(id);
                            }
                            if view.note != BACK_TEXT {
                                // Kept only for an ask the human went back from.
                                drafts.remove(&id);
                            }
                            screen.back().map_err(failed)?;
                            refresh = true;
                            // Keys typed while the question was open were the answerer's.
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// Records into the store the outcome of the race for one ask (first outcome wins).
struct StoreRecorder {
    store: Store,
    id: AskId,
}

impl RecordOutcome for StoreRecorder {
    fn record<'a>(
        &'a self,
        _request: &'a AskUserQuestionRequest,
        settled: &'a Settled,
    ) -> BoxFuture<'a, Result<(), RecordError>> {
        Box::pin(async move {
            if !settled.is_human() {
                // The inbox closing its own screen never closes the ask.
                return Ok(());
            }
            record(&self.store, self.id, settled).await
        })
    }
}

/// What the list says when an ask closed with text the human typed into it: why, and each
/// typed text in full under its question (to read and copy).
fn not_sent(rec: &AskRecord, why: &str, draft: &ask_user_terminal::Draft) -> String {
    let typed = draft.typed();
    let questions = decode(rec.request.as_str(), &Limits::default())
        .map(|d| d.request.questions().to_vec())
        .unwrap_or_default();
    let mut note = format!("\u{2718} Not sent: {why}. What you typed:");
    for (index, text) in typed {
        if let Some(q) = questions.get(index) {
            note.push_str(&format!("\n  {}", display_line(&q.question)));
        }
        note.push_str(&format!("\n{}", inert(&text).replace('\n', "\u{2424}")));
    }
    note
}

/// Answers `rec` with the terminal answerer, starting from and keeping `draft`; returns what
/// to tell the human (with the typed text when the ask closed under them).
async fn answer(store: &Store, rec: &AskRecord, draft: &ask_user_terminal::Draft) -> String {
    let request = match decode(rec.request.as_str(), &Limits::default()) {
        Ok(decoded) => decoded.request,
        Err(e) => return format!("This question cannot be shown: {e}"),
    };
    let recorder: Arc<dyn RecordOutcome> = Arc::new(StoreRecorder {
        store: store.clone(),
        id: rec.id,
    });
    let mut decide = Decide::with_recorder(&request, Some(recorder)).named("the inbox");
    // The same question answered before: offered beside it, sent only by the human's act.
    match store
        .given_before(rec.key.namespace(), rec.key.request_hash())
        .await
    {
        Ok(Some(given)) => decide = decide.with_given_before(given),
        Ok(None) => {}
        Err(e) => tracing::warn!("cannot look for an answer given before to this question: {e}"),
    }
    let terminal = ask_user_terminal::Terminal::new()
        .with_color(crate::color_enabled())
        .with_esc_back()
        .with_draft(draft.clone());
    let cancel = CancellationToken::new();
    let asking = terminal.ask_decided(&request, cancel.clone(), decide.clone());
    tokio::pin!(asking);
    let result = tokio::select! {
        result = &mut asking => result,
        closed = store.wait_outcome(rec.id) => {
            cancel.cancel();
            let _ = tokio::time::timeout(WITHDRAW_GRACE, asking).await;
            let why = match closed {
                Ok(AskRecord { closed: Some(closed), .. }) => describe_closed(&closed),
                Ok(_) => "the question closed".to_owned(),
                Err(e) => return format!("Not taken: the store failed ({e})."),
            };
            if !draft.typed().is_empty() {
                return not_sent(rec, &format!("{why} before you answered"), draft);
            }
            return format!("Not taken: {why} before you answered.");
        }
    };
    let offer = match result {
        Ok(answers) => Offer::Answers(answers),
        Err(AskError::Dismissed) => Offer::Dismiss,
        Err(AskError::Cancelled) => return BACK_TEXT.to_owned(),
        Err(e) => return format!("The question could not be shown: {e}"),
    };
    let dismissing = matches!(offer, Offer::Dismiss);
    match decide.offer(offer).await {
        Decision::Accepted if dismissing => DISMISSED_TEXT.to_owned(),
        Decision::Accepted => TAKEN_TEXT.to_owned(),
        Decision::NotRecorded(why) => format!("Not taken: {why}."),
        Decision::Invalid(invalid) => format!("Not taken: {invalid}."),
        // Another answerer's outcome was stored first: say which one counted.
        Decision::Refused(settled) => match outcome_of(&settled) {
            Some(outcome) => format!(
                "Not taken: {}.",
                describe_closed(&Closed {
                    outcome,
                    at: Timestamp::now(),
                })
            ),
            None => "Not taken: the question was already decided.".to_owned(),
        },
        _ => "Not taken.".to_owned(),
    }
}

/// Bytes typed on the terminal, read without blocking the runtime and without crossterm's
/// reader (the terminal answerer owns that reader while a question is open; this reads only
/// when polled, so the two never race for a key).
struct TtyBytes {
    fd: AsyncFd<File>,
}

impl TtyBytes {
    fn open() -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open("/dev/tty")?;
        // `AsyncFd::new` is deprecated for fds whose owner may close them while registered;
        // the `File` here is owned by the `AsyncFd` itself, so that cannot happen (the
        // replacement, `register`, is `unsafe`, which the workspace forbids).
        #[allow(deprecated)]
        let fd = AsyncFd::new(file)?;
        Ok(Self { fd })
    }

    /// The next bytes typed (cancel-safe: nothing is read until the terminal is readable).
    async fn next_bytes(&mut self) -> std::io::Result<Vec<u8>> {
        loop {
            let mut guard = self.fd.readable().await?;
            let mut chunk = [0u8; 256];
            match guard.try_io(|fd| std::io::Read::read(&mut fd.get_ref(), &mut chunk)) {
                Ok(Ok(0)) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(Ok(n)) => return Ok(chunk[..n].to_vec()),
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
    }
}
