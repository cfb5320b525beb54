//! The audit journal: exact line shapes, one line per ask and per outcome, written before the
//! human sees the question and before the model reads the outcome; open and write failures.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, Arguments, AskError, Caller, CancellationToken, ExecutionContext, Limits,
    Outcome, UserInteraction, decode,
};
use ask_user_host::{ANSWERED, Entry, HostCall, Journal, JournalError, NOT_RECORDED_TEXT, read};
use ask_user_scripted::Scripted;
use ask_user_test_support::answerers::{Unavailable, Waiting};
use pretty_assertions::assert_eq;

use super::support::{capture_logs, log_lines};

const ARGS: &str = r#"{"questions":[{"id":"db","question":"Which database?","header":"DB","options":[{"label":"PostgreSQL (Recommended)","description":"Solid"},"SQLite"]},{"question":"Service name?"}]}"#;
const QUESTIONS: &str = r#"[{"id":"db","question":"Which database?","header":"DB","options":[{"label":"PostgreSQL (Recommended)","description":"Solid"},{"label":"SQLite"}],"multi_select":false},{"id":"q2","question":"Service name?","multi_select":false}]"#;

fn journal_in(dir: &tempfile::TempDir) -> (Arc<Journal>, PathBuf) {
    let path = dir.path().join("journal.jsonl");
    (Arc::new(Journal::open(&path).unwrap()), path)
}

/// What a host gives [`HostCall`] besides the journal: the answerer and the budget.
struct Tool {
    answerer: Arc<dyn UserInteraction>,
    timeout: Option<Duration>,
}

impl Tool {
    fn with_timeout(self, timeout: Option<Duration>) -> Self {
        Self { timeout, ..self }
    }

    fn limits(&self) -> Limits {
        Limits::default()
    }
}

fn tool(answerer: impl UserInteraction + 'static) -> Tool {
    Tool {
        answerer: Arc::new(answerer),
        timeout: None,
    }
}

/// One call as a host without a store runs it: through [`HostCall`] with `journal`.
async fn journaled(
    journal: &Arc<Journal>,
    tool: &Tool,
    arguments: impl Into<Arguments>,
    context: ExecutionContext,
) -> Outcome {
    HostCall::builder(tool.answerer.clone())
        .journal(Some(journal.clone()))
        .timeout(tool.timeout)
        .build()
        .call(arguments, context)
        .await
        .into_outcome()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Time and call of an entry, checking the time is RFC 3339 UTC with milliseconds.
fn time_and_call(entry: &Entry) -> (String, String) {
    let (time, call) = match entry {
        Entry::Ask { time, call, .. } | Entry::Outcome { time, call, .. } => (time, call),
        other => panic!("unknown entry {other:?}"),
    };
    assert_eq!(time.len(), "2026-11-30T05:20:01.123Z".len(), "{time}");
    assert!(time.ends_with('Z'), "{time}");
    humantime::parse_rfc3339(time).unwrap();
    (time.clone(), call.clone())
}

#[test]
fn an_unwritable_journal_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("journal.jsonl");
    let error = Journal::open(&missing).unwrap_err();
    assert!(matches!(error, JournalError::Open { .. }));
    assert_eq!(
        error.to_string(),
        // Our text, then the OS's reason as std words it (not pinned here).
        format!(
            "cannot open the journal file {}: {}",
            missing.display(),
            std::io::Error::from_raw_os_error(2) // ENOENT
        )
    );
    let error = Journal::open(dir.path()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot open the journal file {}: {}",
            dir.path().display(),
            std::io::Error::from_raw_os_error(21) // EISDIR
        )
    );
}

#[tokio::test]
async fn an_answered_call_is_an_ask_line_and_an_outcome_line() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let answers =
        r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"q2","custom":"  billing-api "}]}"#;
    let tool = tool(Scripted::from_json(answers).unwrap());
    let outcome = journaled(&journal, &tool, ARGS, ExecutionContext::default()).await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"db","selected":["SQLite"]},{"id":"q2","selected":[],"custom":"billing-api"}]}"#
    );

    let entries = read(&path).unwrap();
    assert_eq!(entries.len(), 2);
    let (ask_time, call) = time_and_call(&entries[0]);
    let (outcome_time, outcome_call) = time_and_call(&entries[1]);
    assert_eq!(call, outcome_call);
    assert!(ask_time <= outcome_time);
    assert_eq!(
        lines(&path),
        [
            format!(
                r#"{{"time":"{ask_time}","event":"ask","call":"{call}","questions":{QUESTIONS}}}"#
            ),
            format!(
                r#"{{"time":"{outcome_time}","event":"outcome","call":"{call}","code":"{ANSWERED}","text":{},"answers":[{{"id":"db","selected":["SQLite"]}},{{"id":"q2","selected":[],"custom":"billing-api"}}]}}"#,
                serde_json::to_string(&outcome.text()).unwrap()
            ),
        ]
    );
    // The questions read back are the canonical request.
    let Entry::Ask { questions, .. } = &entries[0] else {
        panic!()
    };
    assert_eq!(
        questions,
        &decode(ARGS, &tool.limits()).unwrap().request.questions()
    );
}

#[tokio::test]
async fn invalid_arguments_are_one_outcome_line_with_the_raw_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let tool = tool(Scripted::from_fn(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Err(AskError::Dismissed)
    }));
    let args = r#"{"questions":[{"id":"a","question":" "}]}"#;
    let outcome = journaled(&journal, &tool, args, ExecutionContext::default()).await;
    assert_eq!(
        outcome.text(),
        "Error: invalid arguments: questions[0].question: blank, write the question to ask the user"
    );
    let entries = read(&path).unwrap();
    let (time, call) = time_and_call(&entries[0]);
    assert_eq!(
        lines(&path),
        [format!(
            r#"{{"time":"{time}","event":"outcome","call":"{call}","code":"INVALID_ARGS","text":{},"arguments":{}}}"#,
            serde_json::to_string(&outcome.text()).unwrap(),
            serde_json::to_string(args).unwrap()
        )]
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn every_outcome_is_journaled_with_its_code_and_exact_text() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let delegated = ExecutionContext::default().with_caller(Caller::Delegated {
        parent: "main".into(),
    });
    let cases: Vec<(Tool, ExecutionContext, &str, bool)> = vec![
        (
            tool(Scripted::from_fn(|_| Err(AskError::Dismissed))),
            ExecutionContext::default(),
            "ASK_CANCELLED",
            true,
        ),
        (
            tool(Waiting::new()).with_timeout(Some(Duration::from_secs(90))),
            ExecutionContext::default(),
            "ASK_TIMED_OUT",
            true,
        ),
        (
            tool(Unavailable("no terminal")),
            ExecutionContext::default(),
            "NO_PROVIDER",
            true,
        ),
        (tool(Waiting::new()), delegated, "DELEGATED_CALLER", false),
        (
            tool(Waiting::new()),
            ExecutionContext::new(cancelled),
            "ASK_ABORTED",
            false,
        ),
        (
            tool(Scripted::from_answers(Answers {
                answers: vec![AnswerItem::selected("db", ["MySQL"])],
            })),
            ExecutionContext::default(),
            "ANSWER_FAILED",
            true,
        ),
    ];
    for (tool, context, code, asked) in cases {
        let before = read(&path).unwrap().len();
        let outcome = journaled(&journal, &tool, ARGS, context).await;
        let entries = read(&path).unwrap();
        let new = &entries[before..];
        assert_eq!(new.len(), if asked { 2 } else { 1 }, "{code}");
        if asked {
            assert!(matches!(&new[0], Entry::Ask { .. }), "{code}");
        }
        let Some(Entry::Outcome {
            code: got,
            text,
            answers,
            arguments,
            ..
        }) = new.last()
        else {
            panic!("{code}: no outcome line")
        };
        assert_eq!((got.as_str(), text), (code, &outcome.text()));
        assert_eq!(answers, &None);
        // Calls that never became an ask keep the raw arguments instead.
        assert_eq!(arguments.is_some(), !asked, "{code}");
    }
}

#[tokio::test]
async fn the_ask_line_is_on_disk_before_the_human_sees_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let seen = path.clone();
    let tool = tool(Scripted::from_fn(move |request| {
        let on_disk = read(&seen).unwrap();
        match on_disk.last() {
            Some(Entry::Ask { questions, .. }) if questions == request.questions() => {}
            other => return Err(AskError::Failed(format!("journal holds {other:?}"))),
        }
        Ok(ask_user_scripted::PickRecommended::answers(request))
    }));
    let outcome = journaled(&journal, &tool, ARGS, ExecutionContext::default()).await;
    assert_eq!(outcome.code(), None, "{}", outcome.text());
    // And the outcome line is there once the outcome is returned.
    assert!(matches!(
        read(&path).unwrap().last(),
        Some(Entry::Outcome { code, .. }) if code == ANSWERED
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_never_interleave_and_pair_up() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let tool = Arc::new(tool(Scripted::from_fn(|request| {
        let q = &request.questions()[0];
        Ok(Answers {
            answers: vec![AnswerItem::custom(&q.id, q.question.clone())],
        })
    })));
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..200 {
        let (journal, tool) = (journal.clone(), tool.clone());
        calls.spawn(async move {
            let args = format!(r#"{{"id":"n{n}","question":"{}"}}"#, "x".repeat(1 + n * 19));
            journaled(&journal, &tool, args, ExecutionContext::default()).await
        });
    }
    while let Some(outcome) = calls.join_next().await {
        assert_eq!(outcome.unwrap().code(), None);
    }
    let entries = read(&path).unwrap();
    assert_eq!(entries.len(), 400);
    let mut asked = std::collections::HashMap::new();
    for entry in &entries {
        match entry {
            Entry::Ask {
                call, questions, ..
            } => {
                assert!(asked.insert(call.clone(), questions.clone()).is_none());
            }
            Entry::Outcome { call, answers, .. } => {
                let questions = asked.remove(call).expect("outcome after its ask");
                let answers = answers.as_ref().unwrap();
                assert_eq!(answers[0].id, questions[0].id);
                assert_eq!(answers[0].custom.as_ref(), Some(&questions[0].question));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(asked.is_empty());
}

#[tokio::test]
async fn a_journal_that_cannot_be_written_refuses_to_ask() {
    capture_logs();
    let journal = Arc::new(Journal::open("/dev/full").unwrap());
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let tool = tool(Scripted::from_fn(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(Answers::default())
    }));
    let outcome = journaled(&journal, &tool, ARGS, ExecutionContext::default()).await;
    assert_eq!(outcome.text(), format!("Error: {NOT_RECORDED_TEXT}"));
    assert_eq!(outcome.code().unwrap().as_str(), "ANSWER_FAILED");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    // Our text around the OS's reason (ENOSPC, as std words it).
    assert!(
        !log_lines(&format!(
            "cannot write to the journal file /dev/full: {}; the question was not asked",
            std::io::Error::from_raw_os_error(28)
        ))
        .is_empty()
    );
}

#[test]
fn a_line_that_is_not_an_entry_is_a_read_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    std::fs::write(&path, "\n{\"event\":\"nope\"}\n").unwrap();
    let error = read(&path).unwrap_err();
    // Our text, then serde_json's reason for that line (its words, not pinned here).
    let reason = serde_json::from_str::<Entry>("{\"event\":\"nope\"}").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the journal file {} has an unreadable line 2: {reason}",
            path.display()
        )
    );
}

#[test]
fn rounds_opened_and_closed_separately_pair_by_request() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let limits = ask_user_core::Limits::default();
    let first = decode(ARGS, &limits).unwrap().request;
    let other = decode(r#"{"question":"Other?"}"#, &limits).unwrap().request;
    let a = journal.record_open(&first).unwrap();
    let b = journal.record_open(&other).unwrap();
    let c = journal.record_open(&first).unwrap();
    journal
        .record_close(Some(&other), &Outcome::Dismissed, None)
        .unwrap();
    journal
        .record_close(Some(&first), &Outcome::NoProvider, None)
        .unwrap();
    journal
        .record_close(Some(&first), &Outcome::Aborted, None)
        .unwrap();
    // Nothing open for it any more (or refused before any question): a fresh id, arguments kept.
    journal
        .record_close(None, &Outcome::Aborted, Some("{}"))
        .unwrap();
    let closed: Vec<(String, String, Option<String>)> = read(&path)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e {
            Entry::Outcome {
                call,
                code,
                arguments,
                ..
            } => Some((call, code, arguments)),
            _ => None,
        })
        .collect();
    assert_eq!(
        closed[..3],
        [
            (b, "ASK_CANCELLED".to_owned(), None),
            (a, "NO_PROVIDER".to_owned(), None),
            (c.clone(), "ASK_ABORTED".to_owned(), None),
        ]
    );
    assert_ne!(closed[3].0, c);
    assert_eq!(closed[3].2.as_deref(), Some("{}"));
}

#[tokio::test]
async fn model_text_never_breaks_a_journal_line() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let hostile = "line\nbreak\r\u{2028}\u{2029}\u{1b}[2J\"}\n{\"event\":\"ask\"";
    let args = serde_json::json!({"questions":[{"id":"x","question":hostile,"options":[hostile]}]});
    let answer = Answers {
        answers: vec![AnswerItem::selected("x", [hostile])],
    };
    let tool = tool(Scripted::from_answers(answer));
    let outcome = journaled(&journal, &tool, args.clone(), ExecutionContext::default()).await;
    assert_eq!(outcome.code(), None, "{}", outcome.text());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches('\n').count(), 2, "two lines:\n{text}");
    let entries = read(&path).unwrap();
    let Entry::Ask { questions, .. } = &entries[0] else {
        panic!()
    };
    assert_eq!(questions[0].question, hostile);
    // The invalid-arguments line keeps hostile raw arguments on one line too.
    journaled(&journal, &tool, hostile, ExecutionContext::default()).await;
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches('\n').count(), 3);
    assert!(
        matches!(read(&path).unwrap().last(), Some(Entry::Outcome { arguments: Some(a), .. }) if a == hostile)
    );
}

#[test]
fn one_request_opened_again_and_again_keeps_a_bounded_queue() {
    use ask_user_host::MAX_OPEN_PER_REQUEST;
    let dir = tempfile::tempdir().unwrap();
    let (journal, path) = journal_in(&dir);
    let request = decode(ARGS, &ask_user_core::Limits::default())
        .unwrap()
        .request;
    let ids: Vec<String> = (0..=MAX_OPEN_PER_REQUEST)
        .map(|_| journal.record_open(&request).unwrap())
        .collect();
    journal
        .record_close(Some(&request), &Outcome::Dismissed, None)
        .unwrap();
    let outcome_call = read(&path)
        .unwrap()
        .into_iter()
        .find_map(|e| match e {
            Entry::Outcome { call, .. } => Some(call),
            _ => None,
        })
        .unwrap();
    // The oldest id was forgotten: the outcome pairs with the oldest one kept.
    assert_eq!(outcome_call, ids[1]);
}

/// A disk that does not take the line (here a FIFO nobody reads, so the write blocks) must not
/// stop the async thread: on a current-thread runtime, other tasks go on meanwhile.
#[tokio::test]
async fn a_blocked_journal_write_never_stops_the_async_thread() {
    use std::io::{Read, Write};
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("journal.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Read and write end in one (O_RDWR does not wait for a peer on Linux): fill the pipe's
    // 64 KiB so the journal's next write blocks until this end reads.
    let mut end = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    end.write_all(&vec![b'x'; 64 * 1024]).unwrap();
    let journal = Arc::new(Journal::open(&fifo).unwrap());

    let ticked = Arc::new(AtomicBool::new(false));
    let drained_first = Arc::new(AtomicBool::new(false));
    let drainer = {
        let (ticked, drained_first) = (ticked.clone(), drained_first.clone());
        std::thread::spawn(move || {
            // Drains once the other task ticked, or after a deadline (so a blocked thread turns
            // into a failure, not a hang).
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !ticked.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            drained_first.store(!ticked.load(Ordering::SeqCst), Ordering::SeqCst);
            let mut buffer = vec![0; 64 * 1024];
            end.read_exact(&mut buffer).unwrap();
            end
        })
    };
    let tool = tool(Scripted::from_json(r#"{"answers":[]}"#).unwrap());
    let ticker = async {
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        ticked.store(true, Ordering::SeqCst);
    };
    let (_outcome, ()) = tokio::join!(
        journaled(&journal, &tool, ARGS, ExecutionContext::default()),
        ticker
    );
    let _end = drainer.join().unwrap();
    assert!(
        !drained_first.load(Ordering::SeqCst),
        "the other task only ran after the journal write was unblocked"
    );
}
