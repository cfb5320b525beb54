//! Durable asks (docs/contract.md §8) with real processes, real SQLite files and the inbox in a
//! real pseudo-terminal (tmux): an answer given while the asking process was gone reaches the
//! same call when it runs again; an outcome is stored once; headless askers are answered in
//! `ask-user inbox`. The store is inspected with `ask-user history --json` (a real process).

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use ask_user_test_support::{DEADLINE, Reaped, TmuxPane, hermetic_command, spawn_with_input};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::{BIN, run_env};

const DB: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database?","options":[{"label":"SQLite"},{"label":"PostgreSQL (Recommended)","description":"Managed, with backups."},{"label":"MySQL"}]}]}"#;
const POSTGRES: &str = r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#;
const SQLITE: &str = r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#;
const OWN: &str = "Type your own answer";
const NO_INBOX: &str = "ask-user: no `ask-user inbox` is open on this store; the question waits until someone runs `ask-user inbox` in a terminal";

/// A temporary folder with a store file in it.
struct Store {
    dir: tempfile::TempDir,
}

impl Store {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn url(&self) -> String {
        format!("sqlite:{}", self.dir.path().join("store.sqlite3").display())
    }

    /// `ask-user history --json` of this store.
    fn history(&self) -> Vec<Value> {
        let run = run_env(&["history", "--json", "--store", &self.url()], "", &[]);
        assert_eq!(run.status, 0, "history: {}", run.stderr);
        serde_json::from_str::<Value>(&run.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    /// `ask ARGS` headless as `name` (see [`spawn_headless`]; its files in this store's
    /// folder) with `env`, DB on stdin; returned once its ask is stored (one open ask).
    fn stored_asker(&self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Reaped {
        let asker = spawn_headless(self.dir.path(), name, args, DB, env);
        self.wait_history("the ask stored", |h| states(h) == ["open"]);
        asker
    }

    /// Waits (deadline [`DEADLINE`]) until the history satisfies `condition`.
    fn wait_history(&self, what: &str, condition: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let history = self.history();
            if condition(&history) {
                return history;
            }
            assert!(
                start.elapsed() < DEADLINE * 3,
                "waited for {what}; history: {history:#?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `ask-user ask ARGS` without a controlling terminal (`setsid`), `question` on stdin, stdout
/// and stderr to files of `dir`; a cleared environment (home: `dir`) plus `env`; killed when
/// the test ends, even by a failed assertion.
fn spawn_headless(
    dir: &Path,
    name: &str,
    args: &[&str],
    question: &str,
    env: &[(&str, &str)],
) -> Reaped {
    let out = std::fs::File::create(dir.join(format!("{name}.out"))).unwrap();
    let err = std::fs::File::create(dir.join(format!("{name}.err"))).unwrap();
    let mut child = hermetic_command("setsid", dir)
        .arg("--wait")
        .arg(BIN)
        .arg("ask")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(question.as_bytes())
        .unwrap();
    Reaped(child)
}

fn file(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

/// Waits for a child with a deadline; its exit status code (`None` when killed by a signal).
fn wait(child: &mut Child) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(start.elapsed() < DEADLINE * 3, "the asker did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `ask-user inbox` on `url` (30 rows) with the DB question opened from its list (`1`, Enter):
/// the pane, and the list's screen before.
fn inbox_on_the_question(url: &str) -> (TmuxPane, String) {
    let pane = inbox(url, 30);
    let list = pane.wait_text("[Database] Which database?");
    pane.type_text("1");
    pane.keys(&["Enter"]);
    pane.wait_text(OWN);
    (pane, list)
}

/// `ask-user inbox --store URL` in a tmux pane.
fn inbox(url: &str, height: u16) -> TmuxPane {
    let dir = tempfile::tempdir().unwrap();
    let script = format!("exec '{BIN}' inbox --store '{url}' 2> inbox.err\n");
    TmuxPane::start(dir, &script, 100, height, "inbox.err")
}

fn states(history: &[Value]) -> Vec<String> {
    history
        .iter()
        .map(|a| a["state"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn killed_asker_then_answer_in_the_inbox_then_the_same_call_prints_it_at_once() {
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    let args = ["--via", "inbox", "--store", &url, "--key", "call-1"];
    let mut first = store.stored_asker("first", &args, &[]);
    first.kill().unwrap(); // SIGKILL: nothing runs after it
    assert_eq!(wait(&mut first), None);
    assert_eq!(
        file(&dir, "first.err"),
        format!("{NO_INBOX}\n"),
        "said once"
    );

    let (pane, screen) = inbox_on_the_question(&url);
    assert!(screen.contains("1 open question(s)"), "{screen}");
    pane.keys(&["Enter"]);
    let screen = pane.wait_text("Taken: your answer is stored");
    assert!(screen.contains("No open questions."), "{screen}");

    // The same call again: the answer at once, nothing shown (no new ask in the store).
    let mut again = spawn_headless(&dir, "again", &args, DB, &[]);
    assert_eq!(wait(&mut again), Some(0));
    assert_eq!(file(&dir, "again.out"), POSTGRES);
    assert_eq!(file(&dir, "again.err"), "", "an inbox is open: no notice");
    let history = store.history();
    assert_eq!(states(&history), ["answered"], "{history:#?}");
    assert!(history[0]["delivered_at"].is_string(), "delivered");
    assert_eq!(history[0]["outcome"]["by"]["answerer"], "the inbox");

    // Delivered: the same call now asks anew.
    let mut third = spawn_headless(&dir, "third", &args, DB, &[]);
    store.wait_history("a new ask", |h| states(h) == ["open", "answered"]);
    third.kill().unwrap();
    wait(&mut third);
}

#[test]
fn killed_after_the_answer_was_stored_before_stdout_the_retry_gets_it() {
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    let args = ["--via", "inbox", "--store", &url, "--key", "call-2"];
    // Test-only failpoint: the process aborts after the outcome is stored and before stdout
    // is written (the window between "stored" and "delivered").
    let mut first = store.stored_asker(
        "first",
        &args,
        &[("ASK_USER_TEST_FAILPOINT", "before-stdout")],
    );
    let (pane, _) = inbox_on_the_question(&url);
    pane.keys(&["Up"]);
    pane.wait_text("› 1. SQLite");
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");
    assert_eq!(wait(&mut first), None, "aborted by the failpoint");
    assert_eq!(file(&dir, "first.out"), "", "nothing reached stdout");
    let history = store.history();
    assert_eq!(states(&history), ["answered"]);
    assert!(history[0]["delivered_at"].is_null(), "not delivered");

    let mut again = spawn_headless(&dir, "again", &args, DB, &[]);
    assert_eq!(wait(&mut again), Some(0));
    assert_eq!(file(&dir, "again.out"), SQLITE);
    let history = store.history();
    assert_eq!(states(&history), ["answered"], "nothing asked anew");
    assert!(history[0]["delivered_at"].is_string(), "delivered now");
}

#[test]
fn sigterm_detaches_the_ask_and_the_inbox_marks_it() {
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    let args = ["--via", "inbox", "--store", &url];
    let mut first = store.stored_asker("first", &args, &[]);
    // setsid execs ask-user in place (the child is not a group leader): this is its pid.
    assert!(ask_user_test_support::signal(
        first.id(),
        ask_user_test_support::Signal::TERM
    ));
    assert_eq!(wait(&mut first), Some(130));
    assert_eq!(
        file(&dir, "first.out"),
        "Error: ask_user_question was aborted before the user answered"
    );
    let history = store.wait_history("detached", |h| states(h) == ["detached"]);
    assert_eq!(history[0]["attached"], false);
    let pane = inbox(&url, 30);
    pane.wait_text("the agent stopped waiting; your answer is kept for its retry");

    // The retry (same scope, same question) re-attaches to the same ask: one question, not two.
    let mut retry = spawn_headless(&dir, "retry", &args, DB, &[]);
    let history = store.wait_history("re-attached", |h| h.len() == 1 && h[0]["attached"] == true);
    assert_eq!(history[0]["id"], 1);
    pane.wait_for("the mark gone", |s| {
        !s.contains("the agent stopped waiting")
    });
    pane.type_text("1");
    pane.keys(&["Enter"]);
    pane.wait_text(OWN);
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");
    assert_eq!(wait(&mut retry), Some(0));
    assert_eq!(file(&dir, "retry.out"), POSTGRES);
    assert_eq!(states(&store.history()), ["answered"], "one ask all along");
}

#[test]
fn inbox_and_terminal_answering_at_once_store_one_outcome() {
    let store = Store::new();
    let url = store.url();
    // The asker on a terminal of its own (pane A), the inbox in pane B.
    let asker_dir = tempfile::tempdir().unwrap();
    std::fs::write(asker_dir.path().join("q.json"), DB).unwrap();
    let script = format!(
        "cd '{}'\n'{BIN}' ask --store '{url}' < q.json > out.txt 2> err.txt\necho $? > rc.txt\nexec sleep 600\n",
        asker_dir.path().display()
    );
    let asker = TmuxPane::start(asker_dir, &script, 100, 30, "err.txt");
    asker.wait_text(OWN);
    let (pane, _) = inbox_on_the_question(&url);
    // The terminal picks SQLite, the inbox PostgreSQL; both confirm at (nearly) the same time.
    asker.keys(&["Up"]);
    asker.wait_text("› 1. SQLite");
    asker.keys(&["Enter"]);
    pane.keys(&["Enter"]);
    asker.wait_for("the asker to end", |_| asker.file("rc.txt").is_some());
    let screen = pane.wait_for("the inbox's verdict", |s| {
        s.contains("Taken: your answer is stored") || s.contains("Not taken:")
    });
    let printed = asker.file("out.txt").unwrap();
    assert_eq!(asker.file("rc.txt").unwrap().trim(), "0");
    let history = store.history();
    assert_eq!(states(&history), ["answered"], "one outcome: {history:#?}");
    let stored = history[0]["outcome"]["answer"].to_string();
    assert_eq!(stored, printed, "what was stored is what the model read");
    assert!(history[0]["delivered_at"].is_string());
    if printed == POSTGRES {
        assert!(screen.contains("Taken: your answer is stored"), "{screen}");
    } else {
        assert_eq!(printed, SQLITE);
        assert!(
            screen.contains("Not taken: an answer given in"),
            "the inbox is told which answer counted:\n{screen}"
        );
    }
}

/// How many headless askers share one SQLite file in [`many_headless_askers_answered_in_the_inbox`].
const ASKERS: usize = 50;

#[test]
fn many_headless_askers_answered_in_the_inbox() {
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    let mut children: Vec<Reaped> = (0..ASKERS)
        .map(|i| {
            let question = format!(
                r#"{{"questions":[{{"id":"q","question":"Question number {i}?","options":["Yes {i} (Recommended)","No"]}}]}}"#
            );
            spawn_headless(
                &dir,
                &format!("asker{i}"),
                &["--via", "inbox", "--store", &url],
                &question,
                &[("ASK_USER_SESSION", &format!("agent-{i}"))],
            )
        })
        .collect();
    store.wait_history("every ask stored", |h| h.len() == ASKERS);
    let pane = inbox(&url, 130);
    // Two keys per ask: Enter opens the chosen one (the longest waiting), Enter accepts.
    let mut keys = 0;
    for left in (1..=ASKERS).rev() {
        pane.wait_text(&format!("— {left} open question(s)"));
        pane.keys(&["Enter"]);
        pane.wait_text(OWN);
        pane.keys(&["Enter"]);
        keys += 2;
        pane.wait_text("Taken: your answer is stored");
    }
    assert_eq!(keys, 2 * ASKERS);
    for (i, child) in children.iter_mut().enumerate() {
        assert_eq!(
            wait(child),
            Some(0),
            "asker {i}: {}",
            file(&dir, &format!("asker{i}.err"))
        );
        assert_eq!(
            file(&dir, &format!("asker{i}.out")),
            format!(r#"{{"answers":[{{"id":"q","selected":["Yes {i} (Recommended)"]}}]}}"#)
        );
        assert!(!file(&dir, &format!("asker{i}.err")).contains("locked"));
    }
    let history = store.history();
    assert!(
        history
            .iter()
            .all(|a| a["state"] == "answered" && a["delivered_at"].is_string())
    );
}

#[test]
fn an_explicit_store_that_cannot_be_used_is_fatal_before_any_question() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().display()); // a directory
    let run = run_env(&["ask", "--via", "inbox", "--store", &url], DB, &[]);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr
            .starts_with(&format!("ask-user: --store {url}: cannot use this store: ")),
        "{}",
        run.stderr
    );
    let run = run_env(&["ask", "--store", "nosuch:x"], DB, &[]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("ask-user: --store nosuch:x: cannot use this store: "),
        "{}",
        run.stderr
    );
}

#[test]
fn the_default_store_unopenable_warns_once_and_uses_memory() {
    // Without a terminal the ask is unavailable (exit 6), but the store is opened first.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("state"), "a file, not a directory").unwrap();
    let state = home.path().join("state").display().to_string();
    let child = spawn_with_input(
        hermetic_command("setsid", home.path())
            .args(["--wait", BIN, "ask"])
            .env("XDG_STATE_HOME", &state),
        DB.as_bytes(),
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    ask_user_test_support::assert_default_store_warned_once(&stderr, &state);
}

#[test]
fn via_inbox_with_a_memory_store_is_refused() {
    let run = run_env(&["ask", "--via", "inbox", "--store", "memory"], DB, &[]);
    assert_eq!(
        (run.status, run.stderr.as_str()),
        (
            2,
            "ask-user: --via inbox: the store is memory, which no `ask-user inbox` can see; use the default store or --store sqlite:PATH\n"
        )
    );
}

/// The store kind comes from the store, not from its location's text: `sqlite:memory` is a
/// SQLite file named `memory` (not a memory store), and a relative SQLite path keeps the
/// inbox's presence lock beside it (so the asker says no inbox is open).
#[test]
fn sqlite_memory_and_relative_sqlite_paths_are_files_with_an_inbox_lock() {
    for url in ["sqlite:memory", "sqlite:relative.sqlite3"] {
        let dir = tempfile::tempdir().unwrap();
        let child = spawn_with_input(
            hermetic_command("setsid", dir.path())
                .args(["--wait", BIN, "ask", "--via", "inbox", "--timeout", "1s"])
                .args(["--store", url])
                .env("XDG_STATE_HOME", dir.path())
                .current_dir(dir.path()),
            DB.as_bytes(),
        );
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(5), "{url}: {stderr}");
        assert_eq!(stderr, format!("{NO_INBOX}\n"), "{url}");
        let file = url.trim_start_matches("sqlite:");
        assert!(dir.path().join(file).is_file(), "{url}: a SQLite file");
        assert!(
            dir.path().join(format!("{file}.inbox")).is_file(),
            "{url}: the presence lock beside it"
        );
    }
}

#[test]
fn a_closed_stdout_detaches_the_ask() {
    let store = Store::new();
    let url = store.url();
    let mut child = Reaped(
        hermetic_command("setsid", store.dir.path())
            .args(["--wait", BIN, "ask", "--via", "inbox", "--store", &url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(DB.as_bytes())
        .unwrap();
    store.wait_history("the ask stored", |h| states(h) == ["open"]);
    drop(child.stdout.take()); // the caller goes away: the pipe's reader is closed
    assert_eq!(wait(&mut child), Some(130));
    let history = store.wait_history("detached", |h| states(h) == ["detached"]);
    assert!(
        history[0]["closed_at"].is_null(),
        "still open for the human"
    );
}

/// The lease every process of the liveness tests runs with (the test-only knob
/// `ASK_USER_TEST_LEASE_MS`; production's lease is a minute): an asker renews every second,
/// the inbox sweeps every 1.5 s.
const SHORT_LEASE: (&str, &str) = ("ASK_USER_TEST_LEASE_MS", "3000");

/// `ask-user history --open --json` of `url`, run with the short lease.
fn open_history(url: &str) -> Vec<Value> {
    let run = run_env(
        &["history", "--open", "--json", "--store", url],
        "",
        &[SHORT_LEASE],
    );
    assert_eq!(run.status, 0, "history: {}", run.stderr);
    serde_json::from_str::<Value>(&run.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn an_asker_killed_without_detaching_is_detached_when_its_lease_runs_out() {
    let store = Store::new();
    let url = store.url();
    let args = ["--via", "inbox", "--store", &url, "--key", "lease-1"];
    let mut first = store.stored_asker("first", &args, &[SHORT_LEASE]);
    // Alive: it renews its lease, so `history` (which sweeps when it opens the store) still
    // finds it attached after more than a lease.
    std::thread::sleep(Duration::from_millis(4500));
    let alive = open_history(&url);
    assert_eq!(states(&alive), ["open"], "{alive:#?}");
    assert_eq!(alive[0]["attached"], true);
    first.kill().unwrap(); // SIGKILL: it cannot detach
    assert_eq!(wait(&mut first), None);
    // No renewal any more: within about a lease the ask shows detached, still open.
    let start = Instant::now();
    let detached = loop {
        let open = open_history(&url);
        if states(&open) == ["detached"] {
            break open;
        }
        assert!(start.elapsed() < DEADLINE * 3, "never detached: {open:#?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(detached[0]["attached"], false);
    assert!(detached[0]["detached_at"].is_string(), "{detached:#?}");
}

#[test]
fn an_asker_killed_without_detaching_is_marked_in_the_open_inbox_and_its_retry_gets_the_answer() {
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    let args = ["--via", "inbox", "--store", &url, "--key", "lease-2"];
    let mut first = store.stored_asker("first", &args, &[SHORT_LEASE]);
    // The inbox runs with the short lease, so it sweeps every 1.5 s.
    let pane = {
        let tmp = tempfile::tempdir().unwrap();
        let script = format!(
            "exec env {}={} '{BIN}' inbox --store '{url}' 2> inbox.err\n",
            SHORT_LEASE.0, SHORT_LEASE.1
        );
        TmuxPane::start(tmp, &script, 100, 30, "inbox.err")
    };
    let screen = pane.wait_text("[Database] Which database?");
    assert!(!screen.contains("the agent stopped waiting"), "{screen}");
    first.kill().unwrap(); // SIGKILL: it cannot detach
    assert_eq!(wait(&mut first), None);
    // Nothing else touches the store: the inbox's own periodic sweep marks it.
    pane.wait_text("the agent stopped waiting; your answer is kept for its retry");
    pane.type_text("1");
    pane.keys(&["Enter"]);
    pane.wait_text(OWN);
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");

    // The same call again: the answer at once, nothing shown.
    let mut again = spawn_headless(&dir, "again", &args, DB, &[SHORT_LEASE]);
    assert_eq!(wait(&mut again), Some(0));
    assert_eq!(file(&dir, "again.out"), POSTGRES);
    assert_eq!(file(&dir, "again.err"), "", "an inbox is open: no notice");
    let history = store.history();
    assert_eq!(states(&history), ["answered"], "{history:#?}");
    assert!(history[0]["delivered_at"].is_string(), "delivered");
}

/// A journal line without its `time` (the first key): `"event":…}`.
fn untimed(line: &str) -> String {
    let (time, rest) = line
        .split_once(r#"","event":"#)
        .unwrap_or_else(|| panic!("not a journal line: {line}"));
    assert!(
        time.starts_with(r#"{"time":"20"#) && time.ends_with('Z') && time.contains('.'),
        "RFC 3339 with milliseconds: {line}"
    );
    rest.to_owned()
}

/// The journal is a view of the store. Answered (terminal, in tmux), dismissed
/// (Ctrl-C) and timed-out (`--timeout 1s`, nobody answers) asks with `--store` and `--journal`:
/// `history --jsonl` prints exactly the file's lines apart from `time`; the file also holds
/// the refusal the store never held (invalid arguments), under its own call id.
#[test]
fn history_jsonl_is_the_live_journal_of_the_store_apart_from_time() {
    let store = Store::new();
    let url = store.url();
    let journal = store.dir.path().join("journal.jsonl");
    let journal = journal.to_str().unwrap();
    let args = ["--store", &url, "--journal", journal];

    let pane = super::support::Pane::ask(&args, DB);
    pane.wait_text("Which database?");
    pane.keys(&["Enter"]);
    let answered = pane.finished();
    assert_eq!(answered.status, 0, "{answered:?}");

    let pane = super::support::Pane::ask(&args, DB);
    pane.wait_text("Which database?");
    pane.keys(&["C-c"]);
    assert_eq!(pane.finished().status, 4);

    let mut timed = args.to_vec();
    timed.extend(["--via", "inbox", "--timeout", "1s"]);
    timed.insert(0, "ask");
    let run = run_env(&timed, DB, &[]);
    assert_eq!(run.status, 5, "{run:?}");

    let refused = run_env(&["ask", "--store", &url, "--journal", journal], "{}", &[]);
    assert_eq!(refused.status, 3, "{refused:?}");

    let view = run_env(&["history", "--jsonl", "--store", &url], "", &[]);
    assert_eq!((view.status, view.stderr.as_str()), (0, ""));
    assert!(view.stdout.ends_with('\n'), "{}", view.stdout);
    // The listing and the JSON array end their output with a newline too.
    let plain = run_env(&["history", "--store", &url], "", &[]);
    assert_eq!(plain.stdout.matches('\n').count(), 3, "{}", plain.stdout);
    assert!(plain.stdout.ends_with('\n'), "{:?}", plain.stdout);
    let array = run_env(&["history", "--json", "--store", &url], "", &[]);
    assert!(array.stdout.ends_with("]\n"), "{:?}", array.stdout);
    let view: Vec<String> = view.stdout.lines().map(untimed).collect();
    let file = std::fs::read_to_string(journal).unwrap();
    let (stored, own): (Vec<String>, Vec<String>) = file
        .lines()
        .map(untimed)
        .partition(|line| line.contains(r#","call":"store:"#));
    assert_eq!(view, stored, "file:\n{file}");

    let answer = format!(
        r#""outcome","call":"store:1","code":"ANSWERED","text":{},"answers":{}}}"#,
        serde_json::to_string(&answered.stdout).unwrap(),
        &answered.stdout[r#"{"answers":"#.len()..answered.stdout.len() - 1],
    );
    let canonical = run_env(&["check"], DB, &[]).stdout;
    let questions = &canonical[r#"{"questions":"#.len()..canonical.trim_end().len() - 1];
    let ask = |id: u32| format!(r#""ask","call":"store:{id}","questions":{questions}}}"#);
    assert_eq!(
        view,
        [
            ask(1),
            answer,
            ask(2),
            r#""outcome","call":"store:2","code":"ASK_CANCELLED","text":"Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on."}"#.to_owned(),
            ask(3),
            r#""outcome","call":"store:3","code":"ASK_TIMED_OUT","text":"Error: no answer within 1s; this is not approval. Do not act as if the user agreed: continue without it, or ask again later."}"#.to_owned(),
        ]
    );
    assert_eq!(own.len(), 1, "{own:?}");
    assert!(
        own[0].starts_with(r#""outcome","call":""#)
            && own[0].contains(r#""code":"INVALID_ARGS""#)
            && own[0].ends_with(r#","arguments":"{}"}"#),
        "{own:?}"
    );
}

#[test]
fn history_jsonl_help_and_its_conflict_with_json() {
    let help = run_env(&["history", "--help"], "", &[]);
    assert_eq!(help.status, 0);
    assert!(
        help.stdout.contains(
            "      --jsonl        The asks as journal lines (the `--journal FILE` shapes), oldest first: an `ask` line when asked, an `outcome` line when closed; `call` is `store:<ask id>`"
        ),
        "{}",
        help.stdout
    );
    let both = run_env(
        &["history", "--json", "--jsonl", "--store", "memory"],
        "",
        &[],
    );
    assert_eq!(both.status, 2);
    assert!(
        both.stderr
            .starts_with("error: the argument '--json' cannot be used with '--jsonl'"),
        "{}",
        both.stderr
    );
}

#[test]
fn an_arrival_never_changes_which_ask_enter_opens_and_esc_goes_back_to_the_list() {
    // Reading an ask, a new one arrived, the list was reprinted one lower, and the number
    // being typed opened another agent's "Delete branches?" with Yes preselected.
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    let ask = |name: &str, question: &str| {
        spawn_headless(
            &dir,
            name,
            &["--via", "inbox", "--store", &url],
            &format!(
                r#"{{"questions":[{{"id":"q","question":"{question}","options":["Yes (Recommended)","No"]}}]}}"#
            ),
            &[("ASK_USER_SESSION", name)],
        )
    };
    let mut first = ask("reader", "Read the report first?");
    store.wait_history("the first ask", |h| h.len() == 1);
    let mut second = ask("migrator", "Run the migration?");
    store.wait_history("the second ask", |h| h.len() == 2);
    let pane = inbox(&url, 30);
    pane.wait_text("— 2 open question(s)");
    pane.keys(&["Down"]);
    pane.wait_text("› Run the migration?");
    let mut third = ask("cleaner", "Delete branches?");
    pane.wait_text("— 3 open question(s)");
    pane.keys(&["Enter"]);
    let screen = pane.wait_text("Type your own answer");
    assert!(screen.contains("Run the migration?"), "{screen}");
    assert!(!screen.contains("Delete branches?"), "{screen}");
    assert!(screen.contains("Asked by"), "who asks:\n{screen}");
    // Esc goes back to the list; nothing is sent, the ask stays open.
    pane.keys(&["Escape"]);
    pane.wait_text("Back to the list: nothing was sent");
    pane.wait_text("› Run the migration?");
    assert!(store.history().iter().all(|a| a["state"] == "open"));
    pane.keys(&["Enter"]);
    pane.wait_text("Type your own answer");
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");
    assert_eq!(wait(&mut second), Some(0));
    assert_eq!(
        file(&dir, "migrator.out"),
        r#"{"answers":[{"id":"q","selected":["Yes (Recommended)"]}]}"#
    );
    // The selection went to the ask that took its place; the others answered the same way
    // (two keys each), so every asker ends.
    for (left, child) in [(2, &mut third), (1, &mut first)] {
        pane.wait_text(&format!("— {left} open question(s)"));
        pane.keys(&["Enter"]);
        pane.wait_text("Type your own answer");
        pane.keys(&["Enter"]);
        assert_eq!(wait(child), Some(0));
    }
    pane.keys(&["q"]);
}

#[test]
fn a_selected_ask_closed_elsewhere_stays_selected_and_no_key_answers_another_agent() {
    // Found: when the selected ask closed (answered elsewhere), the selection jumped to another
    // agent's ask, and Enter, `2`, Enter at human speed stored "No" for that agent.
    let store = Store::new();
    let url = store.url();
    let dir = store.dir.path().to_owned();
    // Agent A asks on a terminal of its own, where it is answered: "elsewhere" for the inbox.
    let asker_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        asker_dir.path().join("q.json"),
        r#"{"questions":[{"id":"q","question":"Deploy to production?","options":["Yes (Recommended)","No"]}]}"#,
    )
    .unwrap();
    let script = format!(
        "cd '{}'\n'{BIN}' ask --store '{url}' < q.json > out.txt 2> err.txt\necho $? > rc.txt\nexec sleep 600\n",
        asker_dir.path().display()
    );
    let asker = TmuxPane::start(asker_dir, &script, 100, 30, "err.txt");
    asker.wait_text(OWN);
    store.wait_history("agent A's ask", |h| h.len() == 1);
    // Agent B asks through the inbox alone.
    let _b = spawn_headless(
        &dir,
        "b",
        &["--via", "inbox", "--store", &url],
        r#"{"questions":[{"id":"q","question":"Drop the orders table?","options":["Keep it (Recommended)","No"]}]}"#,
        &[("ASK_USER_SESSION", "agent-b")],
    );
    store.wait_history("agent B's ask", |h| h.len() == 2);
    let pane = inbox(&url, 30);
    let screen = pane.wait_text("— 2 open question(s)");
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("› ") && l.contains("Deploy to production?")),
        "the oldest ask is chosen:\n{screen}"
    );
    asker.keys(&["Enter"]);
    asker.wait_for("agent A's asker to end", |_| asker.file("rc.txt").is_some());
    let screen = pane.wait_text("Closed: an answer given in");
    assert!(screen.contains("— 1 open question(s)"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("› ") && l.contains("Deploy to production?")),
        "the selection stays on the closed ask:\n{screen}"
    );
    // What a hurried human types at the selected ask: nothing acts on agent B's.
    pane.keys(&["Enter"]);
    pane.type_text("2");
    pane.keys(&["Enter"]);
    pane.keys(&["Down"]);
    let screen = pane.wait_for("the selection on agent B's ask", |s| {
        s.lines()
            .any(|l| l.starts_with("› ") && l.contains("Drop the orders table?"))
    });
    assert!(!screen.contains("Deploy to production?"), "{screen}");
    assert!(!screen.contains(OWN), "no answer view opened:\n{screen}");
    let history = store.history();
    assert_eq!(
        history.iter().filter(|a| a["state"] == "open").count(),
        1,
        "agent B's ask is still open: {history:#?}"
    );
    pane.keys(&["q"]);
}

/// What a `--via inbox` agent prints when its store file at `path` was deleted or replaced
/// while it waited (exit 8, `STORE_GONE`).
fn store_gone_text(path: &Path) -> String {
    format!(
        "Error: store {}: the store file was deleted or replaced while this ask waited, so no inbox can see it any more; ask again",
        path.display()
    )
}

/// A store file deleted (`rm store.sqlite3*`), or replaced by another store (`mv`), under a
/// `--via inbox` agent that waits: no inbox can ever see its question again, so the agent ends
/// within seconds with its own text and exit 8 (it used to wait forever, with one line on
/// stderr).
#[test]
fn a_store_file_deleted_or_replaced_under_a_waiting_inbox_agent_ends_it_with_exit_8() {
    for replaced in [false, true] {
        let store = Store::new();
        let url = store.url();
        let path = store.dir.path().join("store.sqlite3");
        let work = tempfile::tempdir().unwrap();
        let args = ["--via", "inbox", "--store", &url, "--key", "gone"];
        let mut asker = spawn_headless(work.path(), "asker", &args, DB, &[]);
        store.wait_history("the open ask", |h| states(h) == ["open"]);
        let started = Instant::now();
        if replaced {
            // Another store (a real one, made by another process) moved over it.
            let other = work.path().join("other.sqlite3");
            let made = run_env(
                &["history", "--store", &format!("sqlite:{}", other.display())],
                "",
                &[],
            );
            assert_eq!(made.status, 0, "{}", made.stderr);
            std::fs::rename(&other, &path).unwrap();
        } else {
            for entry in std::fs::read_dir(store.dir.path()).unwrap() {
                std::fs::remove_file(entry.unwrap().path()).unwrap();
            }
        }
        let code = wait(&mut asker);
        eprintln!("replaced: {replaced}: ended after {:?}", started.elapsed());
        assert_eq!(
            (code, file(work.path(), "asker.out")),
            (Some(8), store_gone_text(&path)),
            "replaced: {replaced}; stderr: {}",
            file(work.path(), "asker.err")
        );
    }
}

/// The same question asked again after its answer was delivered is a new question: the
/// terminal shows it with the earlier answer on offer, and only the human's own Ctrl-R, Enter
/// sends that answer again — as this ask's answer, stored as its own. Enter alone answers the
/// question on screen, whatever was given before.
#[test]
fn an_identical_question_answered_before_is_asked_anew_with_that_answer_on_offer() {
    let store = Store::new();
    let url = store.url();
    let args = ["--store", &url];

    let first = super::support::Pane::ask(&args, DB);
    let screen = first.wait_text("Which database?");
    assert!(
        !screen.contains("answered this question before"),
        "{screen}"
    );
    first.keys(&["1", "Enter"]);
    let sqlite = first.finished();
    assert_eq!(sqlite.status, 0, "{sqlite:?}");
    assert!(
        sqlite.stdout.contains(r#""selected":["SQLite"]"#),
        "{sqlite:?}"
    );

    // Asked anew: nothing is printed until the human acts; the offer sends the same answer.
    let again = super::support::Pane::ask(&args, DB);
    let screen = again.wait_text("Ctrl-R sends the same answer again");
    assert!(
        screen.contains("You answered this question before") && screen.contains("→ SQLite"),
        "{screen}"
    );
    assert!(
        again.file("rc.txt").is_none(),
        "it did not wait for the human"
    );
    again.keys(&["C-r"]);
    again.wait_text("Enter sends it");
    again.keys(&["Enter"]);
    again.finished_with(0, &sqlite.stdout);

    // Offered once more; Enter alone answers the highlighted option, not the earlier answer.
    let fresh = super::support::Pane::ask(&args, DB);
    fresh.wait_text("Ctrl-R sends the same answer again");
    fresh.keys(&["Enter"]);
    let postgres = fresh.finished();
    assert!(
        postgres
            .stdout
            .contains(r#""selected":["PostgreSQL (Recommended)"]"#),
        "{postgres:?}"
    );

    // `ask-user inbox` offers the newest answer given before the same way.
    let dir = store.dir.path().to_owned();
    let mut waiting = spawn_headless(
        &dir,
        "inboxed",
        &["--via", "inbox", "--store", &url],
        DB,
        &[],
    );
    store.wait_history("the ask stored", |h| states(h)[0] == "open");
    let pane = inbox(&url, 30);
    pane.wait_text("[Database] Which database?");
    pane.type_text("1");
    pane.keys(&["Enter"]);
    let screen = pane.wait_text("Ctrl-R sends the same answer again");
    assert!(screen.contains("→ PostgreSQL (Recommended)"), "{screen}");
    pane.keys(&["C-r"]);
    pane.wait_text("Enter sends it");
    pane.keys(&["Enter"]);
    pane.wait_text("Taken: your answer is stored");
    assert_eq!(wait(&mut waiting), Some(0));
    assert_eq!(file(&dir, "inboxed.out"), postgres.stdout);

    // Four asks, each answered and delivered on its own.
    let history = store.history();
    assert_eq!(states(&history), ["answered"; 4], "{history:?}");
}
