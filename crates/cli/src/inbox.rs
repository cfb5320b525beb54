//! `ask-user inbox`: a terminal inbox for the store's open asks (docs/contract.md §8
//! "Headless askers"). It lists who asks, when, the header and the question (a detached ask
//! is marked "the agent stopped waiting; your answer is kept for its retry"), redraws on every
//! change of the store's feed, rings the bell when a new ask arrives, and answers the chosen
//! ask with the terminal answerer. The answer is recorded through the store's compare-and-set
//! before the human is told "taken"; otherwise the human is told which answer counted.
//!
//! It holds a shared lock on the store's presence file (`PATH.inbox`) while it runs, so an
//! `ask --via inbox` can tell whether any inbox is open.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::{
    AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, Decide, Decision, Limits,
    Offer, RecordOutcome, Settled, UserInteraction, decode,
};
use ask_user_host::durable::{STORE_ENV, StoreArgs, describe_closed, record};
use ask_user_store::{AskId, AskRecord, Store};
use tokio::io::unix::AsyncFd;

use crate::Ended;
use crate::history::{one_line, summary, time};

/// Options of `ask-user inbox`.
#[derive(Debug, clap::Args)]
pub(crate) struct InboxArgs {
    /// The store: sqlite:PATH, postgres://…, or memory (default: the SQLite file in
    /// ~/.local/state/ask-user/).
    #[arg(long, value_name = "URL", env = STORE_ENV)]
    store: Option<String>,
}

/// The mark of a detached ask (docs/contract.md §8).
pub(crate) const DETACHED_TEXT: &str =
    "the agent stopped waiting; your answer is kept for its retry";
/// Said when the human's answer was stored as the outcome.
pub(crate) const TAKEN_TEXT: &str = "Taken: your answer is stored and goes to the agent.";
/// Said when the human's dismissal was stored as the outcome.
pub(crate) const DISMISSED_TEXT: &str = "Taken: the agent is told you dismissed the question.";
/// Said with no open ask.
pub(crate) const EMPTY_TEXT: &str = "No open questions. Waiting for agents to ask…";
/// The prompt line.
pub(crate) const PROMPT_TEXT: &str = "Type a number and Enter to answer it; q and Enter to quit.";
/// Without a terminal.
pub(crate) const NO_TERMINAL_TEXT: &str = "inbox: needs a terminal (/dev/tty)";

/// How long the terminal answerer may take to leave the screen after the ask closed elsewhere.
const WITHDRAW_GRACE: Duration = Duration::from_secs(2);

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

async fn inbox(args: &InboxArgs) -> Result<(), String> {
    let store = StoreArgs {
        store: args.store.clone(),
        key: None,
    }
    .open()
    .await?;
    let mut screen = OpenOptions::new()
        .write(true)
        .open("/dev/tty")
        .map_err(|_| NO_TERMINAL_TEXT.to_owned())?;
    let mut input = TtyLines::open().map_err(|_| NO_TERMINAL_TEXT.to_owned())?;
    let _presence = crate::durable::hold_inbox_lock(&store);
    let mut feed = store.subscribe().await.map_err(|e| e.to_string())?;
    let mut seen: HashSet<AskId> = HashSet::new();
    // The store was swept when opened; again every half lease.
    let mut sweeps = tokio::time::interval(ask_user_store::lease() / 2);
    sweeps.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    sweeps.reset();
    let mut first = true;
    let mut note = String::new();
    loop {
        let open = store.list_open().await.map_err(|e| e.to_string())?;
        let new = open.iter().any(|rec| !seen.contains(&rec.id));
        seen.extend(open.iter().map(|rec| rec.id));
        let mut text = String::from("\x1b[H\x1b[2J");
        if new && !first {
            text.push('\x07');
        }
        first = false;
        text.push_str(&listing(&store, &open));
        if !note.is_empty() {
            text.push_str(&format!("\r\n{note}\r\n"));
        }
        text.push_str(&format!("\r\n{PROMPT_TEXT}\r\n> "));
        let _ = screen
            .write_all(text.as_bytes())
            .and_then(|()| screen.flush());
        // Retention runs every half lease, so an asker that died without detaching shows as
        // "stopped waiting" within about a lease (docs/contract.md §8 "Liveness"); what it
        // changes reaches this screen through the feed.
        loop {
            tokio::select! {
                _ = sweeps.tick() => {
                    ask_user_host::durable::sweep(&store).await;
                    continue;
                }
                change = feed.next() => {
                    if change.is_none() {
                        return Err("the store's change feed ended".to_owned());
                    }
                }
                line = input.next_line() => {
                    let line = line.map_err(|e| format!("inbox: reading the terminal: {e}"))?;
                    let choice = line.trim();
                    if choice == "q" {
                        return Ok(());
                    }
                    // An empty line (an Enter that came after the question left) keeps the note.
                    if !choice.is_empty() {
                        note.clear();
                    }
                    if let Ok(n) = choice.parse::<usize>()
                        && let Some(rec) = n.checked_sub(1).and_then(|i| open.get(i))
                    {
                        let _ = screen.write_all(b"\x1b[H\x1b[2J");
                        note = answer(&store, rec).await;
                    } else if !choice.is_empty() {
                        note = format!("No question numbered {choice:?}.");
                    }
                }
            }
            break;
        }
    }
}

/// The list of open asks, numbered from 1 (newest first).
fn listing(store: &Store, open: &[AskRecord]) -> String {
    let mut text = format!(
        "ask-user inbox — {} open question(s) — store {}\r\n\r\n",
        open.len(),
        store.location()
    );
    if open.is_empty() {
        text.push_str(EMPTY_TEXT);
        text.push_str("\r\n");
    }
    for (i, rec) in open.iter().enumerate() {
        let who = [
            rec.asker.agent.clone(),
            rec.asker.project.clone(),
            rec.asker.pid.map(|p| format!("pid {p}")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        text.push_str(&format!(
            "{:>3}. {}\r\n     asked {} by {}\r\n",
            i + 1,
            summary(&rec.request),
            time(rec.created_at),
            one_line(&who),
        ));
        if !rec.attached {
            text.push_str(&format!("     ({DETACHED_TEXT})\r\n"));
        }
    }
    text
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
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if !settled.is_human() {
                // The inbox closing its own screen never closes the ask.
                return Ok(());
            }
            record(&self.store, self.id, settled).await
        })
    }
}

/// Answers `rec` with the terminal answerer; returns what to tell the human.
async fn answer(store: &Store, rec: &AskRecord) -> String {
    let request = match decode(rec.request.as_str(), &Limits::default()) {
        Ok(decoded) => decoded.request,
        Err(e) => return format!("This question cannot be shown: {e}"),
    };
    let recorder: Arc<dyn RecordOutcome> = Arc::new(StoreRecorder {
        store: store.clone(),
        id: rec.id,
    });
    let decide = Decide::with_recorder(&request, Some(recorder)).named("the inbox");
    let terminal = ask_user_terminal::Terminal::new().with_color(crate::color_enabled());
    let cancel = CancellationToken::new();
    let asking = terminal.ask_decided(&request, cancel.clone(), decide.clone());
    tokio::pin!(asking);
    let result = tokio::select! {
        result = &mut asking => result,
        closed = store.wait_outcome(rec.id) => {
            cancel.cancel();
            let _ = tokio::time::timeout(WITHDRAW_GRACE, asking).await;
            return match closed {
                Ok(AskRecord { closed: Some(closed), .. }) => {
                    format!("Not taken: {} before you answered.", describe_closed(&closed))
                }
                Ok(_) => "Not taken: the question closed.".to_owned(),
                Err(e) => format!("Not taken: the store failed ({e})."),
            };
        }
    };
    let offer = match result {
        Ok(answers) => Offer::Answers(answers),
        Err(AskError::Dismissed) => Offer::Dismiss,
        Err(AskError::Cancelled) => return String::new(),
        Err(e) => return format!("The question could not be shown: {e}"),
    };
    let dismissing = matches!(offer, Offer::Dismiss);
    match decide.offer(offer).await {
        Decision::Accepted if dismissing => DISMISSED_TEXT.to_owned(),
        Decision::Accepted => TAKEN_TEXT.to_owned(),
        Decision::NotRecorded(why) => format!("Not taken: {why}."),
        Decision::Invalid(invalid) => format!("Not taken: {invalid}."),
        Decision::Refused(_) => "Not taken: the question was already decided.".to_owned(),
        _ => "Not taken.".to_owned(),
    }
}

/// Lines typed on the terminal in cooked mode, read without blocking the runtime (the terminal
/// answerer reads the same terminal while a question is shown; this reads only when polled).
struct TtyLines {
    fd: AsyncFd<File>,
    buf: Vec<u8>,
}

impl TtyLines {
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
        Ok(Self {
            fd,
            buf: Vec::new(),
        })
    }

    /// The next line (cancel-safe: what was read stays buffered).
    async fn next_line(&mut self) -> std::io::Result<String> {
        loop {
            if let Some(end) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                return Ok(String::from_utf8_lossy(&line).into_owned());
            }
            let mut guard = self.fd.readable().await?;
            let mut chunk = [0u8; 256];
            match guard.try_io(|fd| fd.get_ref().read(&mut chunk)) {
                Ok(Ok(0)) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
    }
}
