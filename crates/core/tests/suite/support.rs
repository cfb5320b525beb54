//! Test answerers: no UI, so the core's behaviour can be observed exactly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, BoxFuture, CancellationToken,
    UserInteraction,
};

/// Gives one fixed result at once.
pub struct Fixed(pub Result<Answers, AskError>);

impl UserInteraction for Fixed {
    fn ask_decided<'a>(
        &'a self,
        _: &'a AskUserQuestionRequest,
        _: CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move { self.0.clone() })
    }
}

/// Answers the first question with its first option.
pub fn first_option(request: &AskUserQuestionRequest) -> Answers {
    let q = &request.questions()[0];
    Answers {
        answers: vec![AnswerItem::selected(&q.id, [q.options[0].label.clone()])],
    }
}

/// Waits until cancelled (a human who never answers), then withdraws; records what happened.
#[derive(Default)]
pub struct Waiting {
    /// Set when the answerer saw its token fire and withdrew.
    pub withdrawn: AtomicBool,
    /// How many asks started.
    pub asked: AtomicUsize,
    /// `is_available` answer (inverted, so `Default` is available).
    pub unavailable: bool,
}

impl Waiting {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn withdrawn(&self) -> bool {
        self.withdrawn.load(Ordering::SeqCst)
    }
}

impl UserInteraction for Waiting {
    fn ask_decided<'a>(
        &'a self,
        _: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            self.asked.fetch_add(1, Ordering::SeqCst);
            cancel.cancelled().await;
            self.withdrawn.store(true, Ordering::SeqCst);
            Err(AskError::Cancelled)
        })
    }

    fn is_available(&self) -> bool {
        !self.unavailable
    }
}

/// Answers after `delay` with the first option of the first question, unless cancelled.
pub struct Delayed {
    pub delay: std::time::Duration,
    pub withdrawn: AtomicBool,
}

impl Delayed {
    pub fn new(millis: u64) -> Arc<Self> {
        Arc::new(Self {
            delay: std::time::Duration::from_millis(millis),
            withdrawn: AtomicBool::new(false),
        })
    }
}

impl UserInteraction for Delayed {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        _decide: ask_user_core::Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move {
            tokio::select! {
                () = tokio::time::sleep(self.delay) => Ok(first_option(request)),
                () = cancel.cancelled() => {
                    self.withdrawn.store(true, Ordering::SeqCst);
                    Err(AskError::Cancelled)
                }
            }
        })
    }
}
