//! [`HostCall`]: the one assembly, and its delivery in the fixed order of docs/contract.md §8
//! (recorded, written, upstream told, marked delivered), with a memory store and a real
//! journal file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ask_user_core::{
    AnswerItem, Answers, AskUserQuestionRequest, BoxFuture, ExecutionContext, OneStep, Outcome,
};
use ask_user_host::durable::Durable;
use ask_user_host::{
    Acknowledge, AroundRecord, Delivery, Entry, HostCall, Journal, StoredAsk, read, store_call_id,
};
use ask_user_store::{AskId, Asker, Scope, Store};
use pretty_assertions::assert_eq;

const ARGS: &str = r#"{"questions":[{"id":"go","question":"Deploy?","options":["Yes","No"]}]}"#;
const YES: &str = r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#;

type Steps = Arc<Mutex<Vec<String>>>;

fn yes_sayer(asks: Steps) -> Arc<dyn ask_user_core::UserInteraction> {
    Arc::new(OneStep::new(move |request: &AskUserQuestionRequest, _| {
        asks.lock().unwrap().push("asked".into());
        let id = request.questions()[0].id.clone();
        Box::pin(async move {
            Ok(Answers {
                answers: vec![AnswerItem::selected(&id, ["Yes"])],
            })
        })
    }))
}

/// A host's delivery that notes each step and what was recorded when it wrote.
struct Noting {
    steps: Steps,
    store: Store,
    journal: PathBuf,
    writes: bool,
}

impl Noting {
    fn new(steps: &Steps, store: &Store, journal: &Path, writes: bool) -> Self {
        Self {
            steps: steps.clone(),
            store: store.clone(),
            journal: journal.to_owned(),
            writes,
        }
    }
}

impl Delivery for Noting {
    fn write<'a>(&'a mut self, outcome: &'a Outcome) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let stored = self.store.get(AskId(1)).await.unwrap();
            let closed = stored.closed.map(|c| c.outcome.state_name().to_owned());
            let lines = read(&self.journal).unwrap().len();
            self.steps.lock().unwrap().push(format!(
                "write {} (stored: {closed:?}, journal lines: {lines})",
                outcome.text()
            ));
            self.writes
        })
    }

    fn mark<'a>(&'a mut self, ask: StoredAsk<'a>) -> BoxFuture<'a, ()> {
        self.steps.lock().unwrap().push("mark".into());
        Box::pin(ask.mark_delivered())
    }
}

struct Upstream(Steps);

impl Acknowledge for Upstream {
    fn acknowledge<'a>(&'a self, outcome: &'a Outcome) -> BoxFuture<'a, ()> {
        self.0
            .lock()
            .unwrap()
            .push(format!("acknowledge {}", outcome.text()));
        Box::pin(std::future::ready(()))
    }
}

/// A journal file (in a directory removed on drop), a memory store and the notes of one test.
fn setup() -> (tempfile::TempDir, PathBuf, Arc<Journal>, Store, Steps) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Arc::new(Journal::open(&path).unwrap());
    (dir, path, journal, Store::memory(), Steps::default())
}

fn assemble(store: &Store, journal: &Arc<Journal>, steps: &Steps) -> HostCall {
    let durable = Durable::new(
        store.clone(),
        ask_user_store::Namespace::local_user(1000),
        Scope::HostKey("k".into()),
        Asker::default(),
    );
    HostCall::builder(yes_sayer(steps.clone()))
        .journal(Some(journal.clone()))
        .durable(Some(durable))
        .acknowledge(Arc::new(Upstream(steps.clone())))
        .build()
}

#[tokio::test]
async fn delivery_writes_after_recording_then_tells_upstream_then_marks() {
    let (_dir, path, journal, store, steps) = setup();
    let call = assemble(&store, &journal, &steps);
    let asked = call.call(ARGS, ExecutionContext::default()).await;
    assert_eq!(asked.outcome().text(), YES);
    let mut delivery = Noting::new(&steps, &store, &path, true);
    let (outcome, written) = asked.deliver(&mut delivery).await;
    assert_eq!((outcome.text().as_str(), written), (YES, true));
    assert_eq!(
        *steps.lock().unwrap(),
        [
            "asked".to_owned(),
            format!("write {YES} (stored: Some(\"answered\"), journal lines: 2)"),
            format!("acknowledge {YES}"),
            "mark".to_owned(),
        ]
    );
    assert!(store.get(AskId(1)).await.unwrap().delivered_at.is_some());
    // Both journal lines carry the store's id.
    let calls: Vec<String> = read(&path)
        .unwrap()
        .into_iter()
        .map(|entry| match entry {
            Entry::Ask { call, .. } | Entry::Outcome { call, .. } => call,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(calls, [store_call_id(AskId(1)), store_call_id(AskId(1))]);
}

#[tokio::test]
async fn an_outcome_not_written_is_neither_acknowledged_nor_marked_and_comes_back() {
    let (_dir, path, journal, store, steps) = setup();
    let call = assemble(&store, &journal, &steps);
    let asked = call.call(ARGS, ExecutionContext::default()).await;
    let mut failing = Noting::new(&steps, &store, &path, false);
    let (_, written) = asked.deliver(&mut failing).await;
    assert!(!written);
    assert_eq!(steps.lock().unwrap().len(), 2, "{steps:?}");
    assert!(store.get(AskId(1)).await.unwrap().delivered_at.is_none());

    // The same call again: the stored answer, nobody asked again; a closure delivery marks.
    steps.lock().unwrap().clear();
    let again = assemble(&store, &journal, &steps);
    let asked = again.call(ARGS, ExecutionContext::default()).await;
    let mut printed = Vec::new();
    let (_, written) = asked
        .deliver(&mut |outcome: &Outcome| {
            printed.push(outcome.text());
            true
        })
        .await;
    assert!(written);
    assert_eq!(printed, [YES]);
    assert_eq!(
        *steps.lock().unwrap(),
        [format!("acknowledge {YES}")],
        "not asked again"
    );
    assert!(store.get(AskId(1)).await.unwrap().delivered_at.is_some());
}

/// Notes each hook and what the store held for the ask when it ran.
struct Around {
    steps: Steps,
    store: Store,
}

impl Around {
    fn note<'a>(&'a self, hook: &'static str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let stored = self.store.get(AskId(1)).await.unwrap();
            let closed = stored.closed.map(|c| c.outcome.state_name().to_owned());
            self.steps
                .lock()
                .unwrap()
                .push(format!("{hook} (stored: {closed:?})"));
        })
    }
}

impl AroundRecord for Around {
    fn before<'a>(&'a self, _: &'a ask_user_core::Settled) -> BoxFuture<'a, ()> {
        self.note("before")
    }

    fn after<'a>(
        &'a self,
        _: &'a ask_user_core::Settled,
        recorded: &'a Result<(), ask_user_core::RecordError>,
    ) -> BoxFuture<'a, ()> {
        assert_eq!(recorded, &Ok(()));
        self.note("after")
    }
}

#[tokio::test]
async fn the_hooks_around_the_store_write_run_before_and_after_it_and_cannot_skip_it() {
    let store = Store::memory();
    let steps = Steps::default();
    let durable = Durable::new(
        store.clone(),
        ask_user_store::Namespace::local_user(1000),
        Scope::HostKey("k".into()),
        Asker::default(),
    );
    let call = HostCall::builder(yes_sayer(steps.clone()))
        .durable(Some(durable))
        .around_record(Arc::new(Around {
            steps: steps.clone(),
            store: store.clone(),
        }))
        .build();
    let asked = call.call(ARGS, ExecutionContext::default()).await;
    assert_eq!(asked.outcome().text(), YES);
    assert_eq!(
        *steps.lock().unwrap(),
        [
            "asked",
            "before (stored: None)",
            "after (stored: Some(\"answered\"))"
        ]
    );
}
