//! The audit journal (`--journal FILE`): one JSON line per ask and per outcome.
//!
//! Line shapes (keys in this order; one object per line, `\n`-terminated, UTF-8):
//!
//! ```text
//! {"time":"2026-11-30T05:20:01.123Z","event":"ask","call":"…","questions":[…]}
//! {"time":"2026-11-30T05:20:09.456Z","event":"outcome","call":"…","code":"ANSWERED","text":"…","answers":[…]}
//! {"time":"…","event":"outcome","call":"…","code":"INVALID_ARGS","text":"Error: invalid arguments: …","arguments":"…"}
//! ```
//!
//! - `time`: RFC 3339, UTC, milliseconds.
//! - `call`: unique per call (across runs appending to the same file); it pairs an `ask` with
//!   its `outcome`.
//! - `questions`: the canonical request's questions, as `ask-user check` prints them.
//! - `code`: the [`OutcomeCode`](ask_user_core::OutcomeCode) (`ASK_TIMED_OUT`, …), or
//!   [`ANSWERED`] for an answer; `text`: exactly what the model read; `answers`: the normalised
//!   answers, only for an answer.
//! - A call refused before any question existed (invalid arguments) has no `ask` line; its
//!   `outcome` line carries the raw `arguments` the model sent instead.
//!
//! ## A view of the store (docs/contract.md §7 `--journal`, §8)
//!
//! When a store holds the asks, the file is an export of the store's events plus the refusals
//! the store never holds: an ask the store holds has `call` = `store:<ask id>`
//! ([`store_call_id`]); its `ask` line is written by `Journal::shown` once the store gave the
//! ask its id, before any answerer shows it, and `Journal::call_stored` writes the outcome
//! (both assembled by [`crate::HostCall`]).
//! `ask-user history --jsonl` prints the same lines (apart from `time`) from the store, with
//! the same serializer ([`ask_line`], [`outcome_line`]). A call the store never holds (refused
//! before any ask existed, an `--answers` run, a store that could not take the ask) keeps a
//! call id of this journal and its `arguments`.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use ask_user_core::{
    AnswerItem, Answers, Arguments, AskError, AskUserQuestionRequest, AskUserQuestionTool,
    BoxFuture, CancellationToken, Decide, ExecutionContext, Outcome, Question, UserInteraction,
};
use ask_user_store::AskId;

use crate::durable::Durable;
use serde::{Deserialize, Serialize};

/// The `code` of an answered call (answers have no [`ask_user_core::OutcomeCode`]).
pub const ANSWERED: &str = "ANSWERED";

/// What the model reads when the ask could not be recorded, so it was not asked (an audit
/// journal that silently misses questions would be worse than none).
pub const NOT_RECORDED_TEXT: &str = "the question could not be recorded in the audit journal, so it was not asked; ask your question in plain text in your reply instead";

/// Why the journal cannot be opened or written. Displays with the path, ready to be shown as
/// a startup error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The file cannot be opened for appending (missing directory, a directory, no permission).
    #[error("cannot open the journal file {}: {source}", path.display())]
    Open {
        /// The path as given.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A line could not be written or flushed (disk full, file system gone).
    #[error("cannot write to the journal file {}: {source}", path.display())]
    Write {
        /// The path as given.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A line read back is not a journal entry.
    #[error("the journal file {} has an unreadable line {line}: {source}", path.display())]
    Read {
        /// The path as given.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What the parser said.
        #[source]
        source: serde_json::Error,
    },
}

/// One line of the journal, as [`read`] returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Entry {
    /// The model asked these (validated, canonical) questions.
    Ask {
        /// RFC 3339 UTC time of the ask.
        time: String,
        /// The call id, shared with the outcome.
        call: String,
        /// The canonical questions.
        questions: Vec<Question>,
    },
    /// What came of a call.
    Outcome {
        /// RFC 3339 UTC time the outcome was known.
        time: String,
        /// The call id, shared with the ask.
        call: String,
        /// The outcome code, or [`ANSWERED`].
        code: String,
        /// Exactly what the model read.
        text: String,
        /// The normalised answers, for an answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answers: Option<Vec<AnswerItem>>,
        /// The raw arguments, for a call refused before any question existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<String>,
    },
}

/// Serialised form of an ask line, borrowing (field order is the line's key order).
#[derive(Serialize)]
struct AskLine<'a> {
    time: &'a str,
    event: &'static str,
    call: &'a str,
    questions: &'a [Question],
}

/// Serialised form of an outcome line, borrowing.
#[derive(Serialize)]
struct OutcomeLine<'a> {
    time: &'a str,
    event: &'static str,
    call: &'a str,
    code: &'a str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    answers: Option<&'a [AnswerItem]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a str>,
}

/// An append-only audit journal file, shared by all calls of a host (it is `Sync`; lines of
/// concurrent calls never interleave).
///
/// Writing a line (write, flush, `fdatasync`) blocks, so it never runs on an async thread:
/// the async lines of a call (written by [`crate::HostCall`]) go to tokio's blocking pool, and the
/// synchronous `record_*` methods, called inside a multi-threaded tokio runtime, hand the
/// thread's other tasks to the runtime first (`block_in_place`).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Arc<Mutex<File>>,
    /// `<start ms>-<pid>`: makes call ids unique across runs appending to one file.
    run: String,
    calls: AtomicU64,
    /// Calls asked across stateless rounds, by canonical request: their ids, oldest first.
    open: Mutex<HashMap<String, VecDeque<String>>>,
}

/// Most requests remembered by [`Journal::record_open`] (a client that never comes back must
/// not grow the map forever); beyond it the map is cleared and later outcomes get fresh ids.
const MAX_OPEN: usize = 4_096;

/// Most calls remembered for one request by [`Journal::record_open`] (a client that opens the
/// same question again and again without an outcome must not grow its queue forever); beyond
/// it the oldest is forgotten, and its outcome, if it ever comes, pairs with the next one.
pub const MAX_OPEN_PER_REQUEST: usize = 64;

impl Journal {
    /// Opens `path` for appending, creating the file (not its directory) when missing.
    ///
    /// Fails with [`JournalError::Open`] naming the path when it cannot be written; hosts turn
    /// that into a startup error before they accept any call.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| JournalError::Open {
                path: path.clone(),
                source,
            })?;
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Ok(Self {
            path,
            file: Arc::new(Mutex::new(file)),
            run: format!("{started}-{}", std::process::id()),
            calls: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// The path the journal was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh call id, unique within this journal and across runs: `<run>-<n>`.
    pub fn next_call_id(&self) -> String {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}-{n}", self.run)
    }

    /// Runs one tool call like [`AskUserQuestionTool::call`], journaling it: the `ask` line
    /// once the arguments are valid (before any human sees the question), the `outcome` line
    /// before the outcome is returned. The outcome is the tool's, except:
    ///
    /// - when the `ask` line cannot be written, nobody is asked and the outcome is
    ///   `Error: ` + [`NOT_RECORDED_TEXT`] (`ANSWER_FAILED`); the error is logged;
    /// - when the `outcome` line cannot be written, the error is logged and the outcome is
    ///   returned anyway (the human has answered; dropping the answer would not help).
    pub(crate) async fn call(
        &self,
        tool: &AskUserQuestionTool,
        arguments: impl Into<Arguments>,
        context: ExecutionContext,
    ) -> Outcome {
        let arguments = arguments.into();
        let call = self.next_call_id();
        // Refusals that need no decoding keep the tool's precedence (delegated, aborted).
        if let Some(refused) = context.refusal() {
            self.log_outcome(&call, &refused, Some(&arguments)).await;
            return refused;
        }
        match crate::decode_logged(arguments.clone(), tool.limits()) {
            Ok(decoded) => self.ask_as(&call, tool, &decoded.request, context).await,
            Err(invalid) => {
                let outcome = Outcome::InvalidArguments(invalid);
                self.log_outcome(&call, &outcome, Some(&arguments)).await;
                outcome
            }
        }
    }

    /// Runs one tool call like [`Self::call`] when a store holds the ask (`durable` links the
    /// call to it; `tool` asks through [`Self::shown`] inside `Durable::wrap`): the `ask`
    /// line is written by [`Self::shown`] once the store gave the ask its id and before any
    /// answerer shows it, and both lines carry `call` = [`store_call_id`]. A call the store
    /// never holds (refused before any ask existed, or the store could not take it) keeps a
    /// call id of this journal and its raw `arguments`, as in [`Self::call`].
    pub(crate) async fn call_stored(
        &self,
        tool: &AskUserQuestionTool,
        arguments: impl Into<Arguments>,
        context: ExecutionContext,
        durable: &Durable,
    ) -> Outcome {
        let arguments = arguments.into();
        if let Some(refused) = context.refusal() {
            self.log_outcome(&self.next_call_id(), &refused, Some(&arguments))
                .await;
            return refused;
        }
        let decoded = match crate::decode_logged(arguments.clone(), tool.limits()) {
            Ok(decoded) => decoded,
            Err(invalid) => {
                let outcome = Outcome::InvalidArguments(invalid);
                self.log_outcome(&self.next_call_id(), &outcome, Some(&arguments))
                    .await;
                return outcome;
            }
        };
        let outcome = tool.ask(&decoded.request, context).await;
        match durable.ask_id() {
            Some(id) => self.log_outcome(&store_call_id(id), &outcome, None).await,
            None => {
                self.log_outcome(&self.next_call_id(), &outcome, Some(&arguments))
                    .await;
            }
        }
        outcome
    }

    /// `inner` behind this journal for a call linked to the store by `durable` (put it inside
    /// `Durable::wrap`, which opens the ask before asking `inner`): writes the `ask` line
    /// under [`store_call_id`] before `inner` shows the question. When the line cannot be
    /// written, nobody is asked: the answerer fails with [`NOT_RECORDED_TEXT`].
    pub(crate) fn shown(
        self: &Arc<Self>,
        durable: &Durable,
        inner: Arc<dyn UserInteraction>,
    ) -> Arc<dyn UserInteraction> {
        Arc::new(Shown {
            journal: Arc::clone(self),
            durable: durable.clone(),
            inner,
        })
    }

    async fn ask_as(
        &self,
        call: &str,
        tool: &AskUserQuestionTool,
        request: &AskUserQuestionRequest,
        context: ExecutionContext,
    ) -> Outcome {
        if let Err(error) = self.append_async(self.ask_line(call, request)).await {
            tracing::error!("{error}; the question was not asked");
            return Outcome::Failed(NOT_RECORDED_TEXT.to_owned());
        }
        let outcome = tool.ask(request, context).await;
        self.log_outcome(call, &outcome, None).await;
        outcome
    }

    async fn log_outcome(&self, call: &str, outcome: &Outcome, arguments: Option<&Arguments>) {
        // Raw arguments only matter when no ask line holds the questions.
        let arguments = match (outcome, arguments) {
            (Outcome::Answered(_), _) | (_, None) => None,
            (_, Some(Arguments::Text(text))) => Some(text.clone()),
            (_, Some(Arguments::Value(value))) => Some(value.to_string()),
        };
        let line = self.outcome_line(call, outcome, arguments.as_deref());
        if let Err(error) = self.append_async(line).await {
            tracing::error!("{error}; the outcome of call {call} is missing from the journal");
        }
    }

    /// For hosts that ask across stateless rounds (an MCP input-required result: the form goes
    /// out in one request, the answer comes back in another): writes the `ask` line with a
    /// fresh call id and remembers the id under the request, so [`Self::record_close`] for the
    /// same request pairs with it. Returns the call id.
    pub fn record_open(&self, request: &AskUserQuestionRequest) -> Result<String, JournalError> {
        let call = self.next_call_id();
        self.record_ask(&call, request)?;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.len() >= MAX_OPEN {
            open.clear();
        }
        let calls = open.entry(request.to_canonical_json()).or_default();
        if calls.len() >= MAX_OPEN_PER_REQUEST {
            calls.pop_front();
        }
        calls.push_back(call.clone());
        Ok(call)
    }

    /// The end of a call begun with [`Self::record_open`]: writes the `outcome` line under the
    /// oldest open call id of the same request (a fresh id when there is none, e.g. arguments
    /// refused before any question existed; then `arguments` are kept, as in [`Self::call`]).
    pub fn record_close(
        &self,
        request: Option<&AskUserQuestionRequest>,
        outcome: &Outcome,
        arguments: Option<&str>,
    ) -> Result<(), JournalError> {
        let opened = request.and_then(|request| {
            let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
            let key = request.to_canonical_json();
            let calls = open.get_mut(&key)?;
            let call = calls.pop_front();
            if calls.is_empty() {
                open.remove(&key);
            }
            call
        });
        match opened {
            Some(call) => self.record_outcome(&call, outcome, None),
            None => self.record_outcome(&self.next_call_id(), outcome, arguments),
        }
    }

    /// Appends and flushes the `ask` line of `call`.
    pub fn record_ask(
        &self,
        call: &str,
        request: &AskUserQuestionRequest,
    ) -> Result<(), JournalError> {
        self.append(self.ask_line(call, request))
    }

    /// Appends and flushes the `outcome` line of `call`; `arguments` are the raw arguments of
    /// a call that never became a request (else `None`).
    pub fn record_outcome(
        &self,
        call: &str,
        outcome: &Outcome,
        arguments: Option<&str>,
    ) -> Result<(), JournalError> {
        self.append(self.outcome_line(call, outcome, arguments))
    }

    /// The `ask` line of `call`, now, `\n`-terminated.
    fn ask_line(&self, call: &str, request: &AskUserQuestionRequest) -> io::Result<Vec<u8>> {
        ask_line(&now(), call, request.questions())
    }

    /// The `outcome` line of `call`, now, `\n`-terminated.
    fn outcome_line(
        &self,
        call: &str,
        outcome: &Outcome,
        arguments: Option<&str>,
    ) -> io::Result<Vec<u8>> {
        outcome_line(&now(), call, outcome, arguments)
    }

    fn write_error(&self, source: io::Error) -> JournalError {
        JournalError::Write {
            path: self.path.clone(),
            source,
        }
    }

    /// Writes `line` from a synchronous caller: inside a multi-threaded tokio runtime the
    /// thread's other tasks move to other threads while it blocks (`block_in_place`).
    fn append(&self, line: io::Result<Vec<u8>>) -> Result<(), JournalError> {
        let bytes = line.map_err(|e| self.write_error(e))?;
        let multi_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        let written = if multi_threaded {
            tokio::task::block_in_place(|| write_line(&self.file, &bytes))
        } else {
            write_line(&self.file, &bytes)
        };
        written.map_err(|e| self.write_error(e))
    }

    /// Writes `line` on tokio's blocking pool (inline outside a runtime), so the async thread
    /// goes on with other tasks while the disk syncs.
    async fn append_async(&self, line: io::Result<Vec<u8>>) -> Result<(), JournalError> {
        let bytes = line.map_err(|e| self.write_error(e))?;
        let written = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let file = Arc::clone(&self.file);
                runtime
                    .spawn_blocking(move || write_line(&file, &bytes))
                    .await
                    .unwrap_or_else(|e| Err(io::Error::other(e)))
            }
            Err(_) => write_line(&self.file, &bytes),
        };
        written.map_err(|e| self.write_error(e))
    }
}

/// The `ask` line of `call` at `time` (RFC 3339), `\n`-terminated: the one serializer of
/// ask lines, shared by the live writer and `ask-user history --jsonl`.
pub fn ask_line(time: &str, call: &str, questions: &[Question]) -> io::Result<Vec<u8>> {
    line_bytes(&AskLine {
        time,
        event: "ask",
        call,
        questions,
    })
}

/// The `outcome` line of `call` at `time` (RFC 3339), `\n`-terminated: `code` and `text` from
/// the core's [`Outcome`], `answers` for an answer, `arguments` (the raw arguments of a call
/// refused before any question existed) when given and the outcome is not an answer. The one
/// serializer of outcome lines, shared by the live writer and `ask-user history --jsonl`.
pub fn outcome_line(
    time: &str,
    call: &str,
    outcome: &Outcome,
    arguments: Option<&str>,
) -> io::Result<Vec<u8>> {
    let code = outcome.code().map_or(ANSWERED, |code| code.as_str());
    let text = outcome.text();
    let answers = match outcome {
        Outcome::Answered(answers) => Some(answers.answers.as_slice()),
        _ => None,
    };
    line_bytes(&OutcomeLine {
        time,
        event: "outcome",
        call,
        code,
        text: &text,
        answers,
        arguments,
    })
}

/// The `call` of an ask the store holds: `store:<ask id>` (the same in the live file and in
/// `ask-user history --jsonl`).
pub fn store_call_id(id: AskId) -> String {
    format!("store:{id}")
}

/// See [`Journal::shown`].
struct Shown {
    journal: Arc<Journal>,
    durable: Durable,
    inner: Arc<dyn UserInteraction>,
}

impl Shown {
    async fn record(&self, request: &AskUserQuestionRequest) -> Result<(), AskError> {
        let call = match self.durable.ask_id() {
            Some(id) => store_call_id(id),
            None => self.journal.next_call_id(),
        };
        let line = self.journal.ask_line(&call, request);
        self.journal.append_async(line).await.map_err(|error| {
            tracing::error!("{error}; the question was not asked");
            AskError::Failed(NOT_RECORDED_TEXT.to_owned())
        })
    }
}

impl UserInteraction for Shown {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            self.record(request).await?;
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

fn line_bytes(line: &impl Serialize) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(line).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes one line with a single `write_all` under the lock, then flushes it to the disk.
/// Blocks: never call it on an async thread.
fn write_line(file: &Mutex<File>, bytes: &[u8]) -> io::Result<()> {
    let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    file.write_all(bytes)?;
    file.flush()?;
    file.sync_data()
}

/// The current time, RFC 3339 UTC with milliseconds.
fn now() -> String {
    ask_user_core::time::rfc3339_millis(SystemTime::now())
}

/// Reads a journal back, one [`Entry`] per line (blank lines skipped), in file order.
pub fn read(path: impl AsRef<Path>) -> Result<Vec<Entry>, JournalError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| JournalError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mut entries = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| JournalError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(&line).map_err(|source| JournalError::Read {
            path: path.to_path_buf(),
            line: index + 1,
            source,
        })?;
        entries.push(entry);
    }
    Ok(entries)
}
