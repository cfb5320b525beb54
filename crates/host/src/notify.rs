//! The attention command (`--notify CMD`): something happens on the human's desk or phone when
//! a question opens.

use std::io::{ErrorKind, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};

/// How long a command may run before it is logged as slow (it is never killed).
const SLOW_AFTER: Duration = Duration::from_secs(10);
/// Input up to this size is written before the command counts as started: it fits in a new
/// pipe's buffer (64 KiB on Linux), so the write cannot block.
const PIPE_CAPACITY: usize = 32 * 1024;
/// How often the notify thread looks whether its running commands have ended (only while
/// some are running; an idle thread sleeps until the next command).
const POLL: Duration = Duration::from_millis(50);
/// Most commands running at once; a question opening beyond that starts none (logged), so
/// commands that never end cannot pile up without bound.
pub const MAX_RUNNING: usize = 64;

/// A [`UserInteraction`] decorator: when a question opens (the inner answerer's future is
/// first polled), runs `sh -c CMD` and then asks through the inner answerer as if it were not
/// there.
///
/// The command gets:
/// - on stdin, the canonical request as one JSON line (`{"questions":[…]}`, as
///   `ask-user check` prints it);
/// - in the environment, `ASK_USER_QUESTION` (the first question's text, NUL as `␀`) and
///   `ASK_USER_COUNT` (how many questions), for one-liners like
///   `notify-send "Agent asks" "$ASK_USER_QUESTION"`. They hold model text: quote them.
/// - stdout discarded (it never reaches the host's stdout, which may carry results or a
///   protocol), stderr shared with the host's (its log).
///
/// Nothing of it blocks the ask or an async thread: one notify thread per process starts every
/// command (and writes a request up to 32 KiB to its stdin, which fits a fresh pipe) and
/// watches all running commands; the ask goes on once its command has started, so it runs even
/// when an instant answer ends the host at once. Larger input is fed on a thread of its own. A
/// command that cannot start, exits unsuccessfully or runs longer than 10 s is logged
/// (`tracing` warnings); it is never killed, and its end is not awaited. At most
/// [`MAX_RUNNING`] commands run at once; beyond that a question starts none (a warning).
#[derive(Clone)]
pub struct Notify {
    inner: Arc<dyn UserInteraction>,
    command: String,
    slow_after: Duration,
}

impl std::fmt::Debug for Notify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notify")
            .field("command", &self.command)
            .field("slow_after", &self.slow_after)
            .finish_non_exhaustive()
    }
}

impl Notify {
    /// `inner` with `command` (a shell command line) run whenever a question opens.
    pub fn new(inner: Arc<dyn UserInteraction>, command: impl Into<String>) -> Self {
        Self {
            inner,
            command: command.into(),
            slow_after: SLOW_AFTER,
        }
    }

    /// The same decorator with another threshold for the "still running" log (default 10 s).
    pub fn with_slow_after(mut self, slow_after: Duration) -> Self {
        self.slow_after = slow_after;
        self
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }
}

/// Runs `command` (`sh -c`) for `request` as [`Notify`] does when a question opens: the
/// request as JSON on stdin, `ASK_USER_QUESTION` and `ASK_USER_COUNT` in the environment,
/// stdout discarded; started, fed and watched on the notify thread, without blocking the
/// caller (which does not wait for the start either). For hosts that open a question without
/// an answerer future (e.g. an MCP input-required result).
pub fn notify(command: &str, request: &AskUserQuestionRequest) {
    submit(job(command, request, SLOW_AFTER, None));
}

/// One command to start on the notify thread.
struct Job {
    line: String,
    input: String,
    first: String,
    count: usize,
    slow_after: Duration,
    /// Told once the command started (or could not), for an ask that waits for that.
    started: Option<tokio::sync::oneshot::Sender<()>>,
}

/// A command the notify thread watches.
struct Running {
    child: Child,
    line: String,
    started: Instant,
    slow_after: Duration,
    reported_slow: bool,
}

fn job(
    command_line: &str,
    request: &AskUserQuestionRequest,
    slow_after: Duration,
    started: Option<tokio::sync::oneshot::Sender<()>>,
) -> Job {
    let mut input = request.to_canonical_json();
    input.push('\n');
    let first = request
        .questions()
        .first()
        // An environment value cannot hold NUL (the spawn would fail): shown as ␀.
        .map(|q| q.question.replace('\0', "\u{2400}"))
        .unwrap_or_default();
    Job {
        line: command_line.to_owned(),
        input,
        first,
        count: request.questions().len(),
        slow_after,
        started,
    }
}

/// Hands `job` to the notify thread, started on first use. Never blocks.
fn submit(job: Job) {
    static QUEUE: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (sender, receiver) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("ask-user-notify".to_owned())
            .spawn(move || run_commands(&receiver));
        match spawned {
            Ok(_) => Some(Mutex::new(sender)),
            Err(error) => {
                tracing::warn!("notify commands cannot run: no thread for them: {error}");
                None
            }
        }
    });
    if let Some(queue) = queue {
        let line = job.line.clone();
        let sent = queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job);
        if sent.is_err() {
            tracing::warn!("notify command `{line}` not started: the notify thread is gone");
        }
    }
}

/// The notify thread: starts each submitted command and watches the running ones, sleeping
/// until the next command while none runs.
fn run_commands(jobs: &Receiver<Job>) {
    let mut running: Vec<Running> = Vec::new();
    loop {
        let next = if running.is_empty() {
            jobs.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            jobs.recv_timeout(POLL)
        };
        match next {
            Ok(job) => start(job, &mut running, MAX_RUNNING),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) if running.is_empty() => return,
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(POLL),
        }
        running.retain_mut(still_running);
    }
}

/// Starts `job`'s command (unless `cap` are running) and feeds it; tells the waiting ask
/// either way.
fn start(job: Job, running: &mut Vec<Running>, cap: usize) {
    let Job {
        line,
        input,
        first,
        count,
        slow_after,
        started,
    } = job;
    if running.len() >= cap {
        tracing::warn!("notify command `{line}` not started: {cap} earlier ones are still running");
    } else {
        let spawned = Command::new("sh")
            .arg("-c")
            .arg(&line)
            .env("ASK_USER_QUESTION", first)
            .env("ASK_USER_COUNT", count.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        match spawned {
            Ok(mut child) => {
                feed(&mut child, input, &line);
                running.push(Running {
                    child,
                    line,
                    started: Instant::now(),
                    slow_after,
                    reported_slow: false,
                });
            }
            Err(error) => tracing::warn!("notify command `{line}` could not start: {error}"),
        }
    }
    if let Some(started) = started {
        // The ask may be gone already; nothing waits then.
        let _ = started.send(());
    }
}

/// Feeds the request to the command's stdin, then closes it.
fn feed(child: &mut Child, input: String, line: &str) {
    if let Some(mut stdin) = child.stdin.take() {
        if input.len() <= PIPE_CAPACITY {
            // Fits in the fresh pipe's buffer: written at once, never blocks, and complete
            // before the host can exit.
            match stdin.write_all(input.as_bytes()) {
                // The command did not want its input; that is its business.
                Err(error) if error.kind() != ErrorKind::BrokenPipe => {
                    tracing::warn!("notify command `{line}`: could not feed its stdin: {error}");
                }
                _ => {}
            }
        } else {
            // A thread of its own: a command that never reads stdin must not stop the notify
            // thread. It ends when the command has read everything or closed its stdin.
            let feeding = std::thread::Builder::new()
                .name("notify-stdin".to_owned()) // ≤ 15 bytes: Linux truncates thread names
                .spawn(move || match stdin.write_all(input.as_bytes()) {
                    // The command did not want its input; that is its business.
                    Err(error) if error.kind() != ErrorKind::BrokenPipe => Err(error),
                    _ => Ok(()),
                });
            if let Err(error) = feeding {
                tracing::warn!("notify command `{line}`: could not feed its stdin: {error}");
            }
        }
    }
}

/// Whether `command` is still running; logs its end (a failure) or its slowness.
fn still_running(command: &mut Running) -> bool {
    let line = &command.line;
    match command.child.try_wait() {
        Ok(Some(status)) if status.success() => {
            tracing::debug!("notify command `{line}` done");
            false
        }
        Ok(Some(status)) => {
            tracing::warn!("notify command `{line}` failed: {status}");
            false
        }
        Err(error) => {
            tracing::warn!("notify command `{line}`: cannot wait for it: {error}");
            false
        }
        Ok(None) => {
            if !command.reported_slow && command.started.elapsed() >= command.slow_after {
                command.reported_slow = true;
                tracing::warn!(
                    "notify command `{line}` is still running after {}; not waiting for it",
                    ask_user_core::format_duration(command.slow_after)
                );
            }
            true
        }
    }
}

impl UserInteraction for Notify {
    /// Forwards the caller's race to the inner answerer (a page must hear the decision of
    /// the call's race, not of a race of its own; docs/contract.md §4).
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            if !cancel.is_cancelled() {
                let (started, on_start) = tokio::sync::oneshot::channel();
                submit(job(&self.command, request, self.slow_after, Some(started)));
                let _ = on_start.await;
            }
            self.inner.ask_decided(request, cancel, decide).await
        })
    }

    fn name(&self) -> Option<&str> {
        self.inner.name()
    }

    fn is_available(&self) -> bool {
        self.inner.is_available()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> AskUserQuestionRequest {
        ask_user_core::decode(r#"{"question":"Go?"}"#, &ask_user_core::Limits::default())
            .map(|d| d.request)
            .expect("valid")
    }

    #[test]
    fn beyond_the_cap_no_command_starts_and_the_ask_is_told_anyway() {
        // `exec`: the shell becomes the `sleep`, so killing it below leaves no process behind.
        let mut running = Vec::new();
        let (told, mut on_start) = tokio::sync::oneshot::channel();
        start(
            job("exec sleep 30", &request(), SLOW_AFTER, Some(told)),
            &mut running,
            1,
        );
        assert_eq!(running.len(), 1);
        assert!(on_start.try_recv().is_ok());
        let (told, mut on_start) = tokio::sync::oneshot::channel();
        start(
            job("exec sleep 30", &request(), SLOW_AFTER, Some(told)),
            &mut running,
            1,
        );
        assert_eq!(running.len(), 1, "the second command must not start");
        assert!(on_start.try_recv().is_ok());
        for mut command in running {
            command.child.kill().expect("kill");
            command.child.wait().expect("reap");
        }
    }
}
