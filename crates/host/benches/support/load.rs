//! The load scenario, shared by the load benchmark (`benches/load.rs`, real time, 10,000 asks)
//! and its correctness test (`tests/suite/load.rs`, paused time, fewer asks).
//!
//! Every call asks one multi-select question whose id and labels name the call
//! (`call-7`: `a-7`, `b-7`, `c-7`), through one shared `FirstAnswer` of several answerers. Each
//! answerer reads only the request it was given, waits a pseudo-random small delay (fixed by
//! its seed and the call, so runs repeat) and answers `x-N` for call N with its own name as the
//! custom text. A call got "its own answer" when its id, its label and a known answerer name
//! come back; anything else is misrouted.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, AskUserQuestionTool, CancellationToken,
    FirstAnswer, OneStep, UserInteraction,
};

/// A scripted answerer with a pseudo-random delay, counting what happens to its asks.
#[derive(Debug)]
pub struct Answerer {
    pub name: String,
    seed: u64,
    max_delay_ms: u64,
    /// Asks started.
    pub asked: AtomicUsize,
    /// Asks answered.
    pub answered: AtomicUsize,
    /// Asks withdrawn because the token fired.
    pub withdrawn: AtomicUsize,
}

impl Answerer {
    pub fn new(name: &str, seed: u64, max_delay_ms: u64) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            seed,
            max_delay_ms,
            asked: AtomicUsize::new(0),
            answered: AtomicUsize::new(0),
            withdrawn: AtomicUsize::new(0),
        })
    }

    /// Asks that ended either way.
    pub fn ended(&self) -> usize {
        self.answered.load(Ordering::SeqCst) + self.withdrawn.load(Ordering::SeqCst)
    }
}

/// splitmix64: a well-mixed, repeatable "random" delay from a seed and a call number.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The call number named by a question id `call-N`.
fn call_number(request: &AskUserQuestionRequest) -> Option<u64> {
    request
        .questions()
        .first()?
        .id
        .strip_prefix("call-")?
        .parse()
        .ok()
}

impl Answerer {
    /// Answers call N after its delay, unless the token fires first.
    async fn answer(
        &self,
        request: &AskUserQuestionRequest,
        cancel: CancellationToken,
    ) -> Result<Answers, AskError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let Some(n) = call_number(request) else {
            return Err(AskError::Failed("not a load-test question".into()));
        };
        let delay = Duration::from_millis(mix(self.seed ^ mix(n)) % (self.max_delay_ms + 1));
        tokio::select! {
            () = tokio::time::sleep(delay) => {
                self.answered.fetch_add(1, Ordering::SeqCst);
                let question = &request.questions()[0];
                let label = question.options[(n % 3) as usize].label.clone();
                Ok(Answers { answers: vec![AnswerItem {
                    id: question.id.clone(),
                    selected: vec![label],
                    custom: Some(self.name.clone()),
                }] })
            }
            () = cancel.cancelled() => {
                self.withdrawn.fetch_add(1, Ordering::SeqCst);
                Err(AskError::Cancelled)
            }
        }
    }
}

/// What a shared `FirstAnswer` races: the answerer itself, or, for one that acknowledges
/// nothing, the closure that asks it ([`OneStep`]).
pub trait Racing {
    /// This answerer as one of the race's.
    fn racing(self: &Arc<Self>) -> Arc<dyn UserInteraction>;
}

impl Racing for Answerer {
    fn racing(self: &Arc<Self>) -> Arc<dyn UserInteraction> {
        let answerer = self.clone();
        Arc::new(OneStep::new(move |request, cancel| {
            let answerer = answerer.clone();
            Box::pin(async move { answerer.answer(request, cancel).await })
        }))
    }
}

impl Racing for Waiting {
    fn racing(self: &Arc<Self>) -> Arc<dyn UserInteraction> {
        self.clone()
    }
}

/// An answerer whose human never answers: it holds the ask until the token fires.
pub use ask_user_test_support::answerers::Waiting;

/// The tool every call goes through: one shared `FirstAnswer` of `answerers`.
pub fn first_answer_tool<T: Racing>(answerers: &[Arc<T>]) -> Arc<AskUserQuestionTool> {
    let answerers: Vec<Arc<dyn UserInteraction>> = answerers.iter().map(Racing::racing).collect();
    Arc::new(AskUserQuestionTool::new(Arc::new(FirstAnswer::new(
        answerers,
    ))))
}

/// The arguments of call `n`.
pub fn arguments(n: usize) -> String {
    format!(
        r#"{{"questions":[{{"id":"call-{n}","question":"Which one for call {n}?","options":["a-{n}","b-{n}","c-{n}"],"multi_select":true}}]}}"#
    )
}

/// Whether `text` is call `n`'s own answer from one of `names`.
pub fn is_own_answer(n: usize, text: &str, names: &[String]) -> bool {
    let label = ["a", "b", "c"][n % 3];
    names.iter().any(|name| {
        text == format!(
            r#"{{"answers":[{{"id":"call-{n}","selected":["{label}-{n}"],"custom":"{name}"}}]}}"#
        )
    })
}
