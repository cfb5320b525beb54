//! The attention command (`--notify CMD`): something happens on the human's desk or phone when
//! a question opens.

use std::io::{ErrorKind, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken, UserInteraction,
};

/// How long a command may run before it is logged as slow (it is never killed).
const SLOW_AFTER: Duration = Duration::from_secs(10);
/// Input up to this size is written before `notify` returns: it fits in a new pipe's buffer
/// (64 KiB on Linux), so the write cannot block.
const PIPE_CAPACITY: usize = 32 * 1024;
/// How often the watcher looks whether the command has ended.
const POLL: Duration = Duration::from_millis(50);

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
/// Nothing of it blocks the ask: the command is started (and a request up to 32 KiB written to
/// its stdin, which fits a fresh pipe) before the ask goes on, so it runs even when an instant
/// answer ends the host at once; larger input is fed, and the command watched, on threads. A
/// command that cannot start, exits unsuccessfully or runs longer than 10 s is logged
/// (`tracing` warnings); it is never killed, and its end is not awaited.
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
/// stdout discarded; started before this returns, fed and watched without blocking. For
/// hosts that open a question without an answerer future (e.g. an MCP input-required result).
pub fn notify(command: &str, request: &AskUserQuestionRequest) {
    notify_after(command, request, SLOW_AFTER);
}

fn notify_after(command_line: &str, request: &AskUserQuestionRequest, slow_after: Duration) {
    let mut input = request.to_canonical_json();
    input.push('\n');
    let first = request
        .questions()
        .first()
        // An environment value cannot hold NUL (the spawn would fail): shown as ␀.
        .map(|q| q.question.replace('\0', "\u{2400}"))
        .unwrap_or_default();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(command_line)
        .env("ASK_USER_QUESTION", first)
        .env("ASK_USER_COUNT", request.questions().len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // Started here, not on the watcher thread, so the command runs even when the host exits
    // right after an instant answer (a scripted `--answers` run).
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!("notify command `{command_line}` could not start: {error}");
            return;
        }
    };
    feed(&mut child, input, command_line);
    let line = command_line.to_owned();
    let watcher = std::thread::Builder::new()
        .name("ask-user-notify".to_owned())
        .spawn(move || watch(child, &line, slow_after));
    if let Err(error) = watcher {
        tracing::warn!("notify command `{command_line}` could not be watched: {error}");
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
            // A separate thread: a command that never reads stdin must not stop the watching.
            let feeding = std::thread::Builder::new()
                .name("ask-user-notify-stdin".to_owned())
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

/// Waits for the command, logging failure or slowness.
fn watch(mut child: Child, line: &str, slow_after: Duration) {
    let started = Instant::now();
    let mut reported_slow = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(error) => break Err(error),
        }
        if !reported_slow && started.elapsed() >= slow_after {
            reported_slow = true;
            tracing::warn!(
                "notify command `{line}` is still running after {}; not waiting for it",
                ask_user_core::format_duration(slow_after)
            );
        }
        std::thread::sleep(POLL);
    };
    match status {
        Ok(status) if status.success() => {
            tracing::debug!("notify command `{line}` done");
        }
        Ok(status) => tracing::warn!("notify command `{line}` failed: {status}"),
        Err(error) => tracing::warn!("notify command `{line}`: cannot wait for it: {error}"),
    }
}

impl UserInteraction for Notify {
    fn ask<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            if !cancel.is_cancelled() {
                notify_after(&self.command, request, self.slow_after);
            }
            self.inner.ask(request, cancel).await
        })
    }

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
                notify_after(&self.command, request, self.slow_after);
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
