//! The web answerer's submission handling, through its real router in-process (it has no
//! separable parser: the body is parsed by serde in the `answer`/`dismiss` handlers and checked
//! by the core's `normalise` in the pending-batch store). Each input opens a batch for an
//! arbitrary request on a `WebState`, posts an arbitrary body (a structured submission against
//! that batch, or raw bytes) to `/answer` or `/dismiss`, and checks the HTTP contract:
//!
//! - 200 only for a valid submission, and the ask then returns exactly the normalised answers
//!   (or the dismissal);
//! - 422 only when `normalise` refuses the answers, with its text, and the batch stays open;
//! - 409 only for a batch that is not open; 400 for a body that is not a submission; 413 only
//!   for a body over `BODY_LIMIT`, and the batch stays open;
//! - nothing else (no 500, no panic); after cancelling, no batch is left pending.
#![no_main]

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::{Arbitrary, Unstructured};
use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, CancellationToken, Limits, UserInteraction, decode,
    normalise,
};
use ask_user_fuzz::{ItemSpec, QuestionSpec, request_and_answers};
use ask_user_web::{BODY_LIMIT, WebConfig, WebState, router};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

const HOST: &str = "127.0.0.1:8765";

#[derive(Debug, Arbitrary)]
enum Body_ {
    /// A submission built against the open batch (`batch_off % 4 == 3`: another batch).
    Structured {
        batch_off: u8,
        items: Vec<ItemSpec>,
        tab: Option<String>,
    },
    /// Anything at all.
    Raw(Vec<u8>),
}

/// What is posted: answers for the open batch (or another), or raw bytes.
enum Submit {
    Answers {
        answers: Answers,
        tab: Option<String>,
        wrong_batch: Option<u8>,
    },
    Raw(Vec<u8>),
}

/// A seed from the tests: `{"arguments":…,"submission":{"answers":[…],"tab"?},"dismiss"?}`.
#[derive(serde::Deserialize)]
struct Seed {
    arguments: serde_json::Value,
    submission: SeedSubmission,
    #[serde(default)]
    dismiss: bool,
}

#[derive(serde::Deserialize)]
struct SeedSubmission {
    answers: Vec<ask_user_core::AnswerItem>,
    #[serde(default)]
    tab: Option<String>,
}

struct World {
    runtime: tokio::runtime::Runtime,
    state: WebState,
    next_batch: AtomicU64,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let bound: SocketAddr = HOST.parse().unwrap();
        World {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap(),
            state: WebState::new(&WebConfig::default(), bound).unwrap(),
            next_batch: AtomicU64::new(1),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(seed) = serde_json::from_slice::<Seed>(data) {
        if let Ok(decoded) = decode(seed.arguments, &Limits::default()) {
            let answers = Answers {
                answers: seed.submission.answers,
            };
            let submit = Submit::Answers {
                answers,
                tab: seed.submission.tab,
                wrong_batch: None,
            };
            run(decoded.request, submit, seed.dismiss);
        }
        return;
    }
    let mut u = Unstructured::new(data);
    let Ok((questions, body, dismiss)) = <(Vec<QuestionSpec>, Body_, bool)>::arbitrary(&mut u)
    else {
        return;
    };
    let items = match &body {
        Body_::Structured { items, .. } => items.as_slice(),
        Body_::Raw(_) => &[],
    };
    let Some((request, answers)) = request_and_answers(&questions, items) else {
        return;
    };
    let submit = match body {
        Body_::Structured { batch_off, tab, .. } => Submit::Answers {
            answers,
            tab,
            wrong_batch: (batch_off % 4 == 3).then_some(batch_off),
        },
        Body_::Raw(bytes) => Submit::Raw(bytes),
    };
    run(request, submit, dismiss);
});

fn run(request: AskUserQuestionRequest, submit: Submit, dismiss: bool) {
    let world = world();
    let state = world.state.clone();
    world.runtime.block_on(async move {
        let cancel = CancellationToken::new();
        let mut asking = Some({
            let (state, request, cancel) = (state.clone(), request.clone(), cancel.clone());
            tokio::spawn(async move { state.ask(&request, cancel).await })
        });
        while state.pending() == 0 {
            tokio::task::yield_now().await;
        }
        let batch = world.next_batch.fetch_add(1, Ordering::SeqCst);
        let (bytes, structured, right_batch) = match &submit {
            Submit::Answers {
                answers,
                tab,
                wrong_batch,
            } => {
                let number = match wrong_batch {
                    Some(off) => batch + 1 + u64::from(*off),
                    None => batch,
                };
                let mut submission = serde_json::json!({
                    "batch": number,
                    "answers": answers.answers,
                });
                if let Some(tab) = tab {
                    submission["tab"] = serde_json::Value::from(tab.as_str());
                }
                (
                    serde_json::to_vec(&submission).unwrap(),
                    Some(answers),
                    wrong_batch.is_none(),
                )
            }
            Submit::Raw(bytes) => (bytes.clone(), None, false),
        };
        let path = format!(
            "{}{}",
            state.base_path(),
            if dismiss { "dismiss" } else { "answer" }
        );
        let body_len = bytes.len();
        let post = Request::post(path)
            .header("host", HOST)
            .header("origin", format!("http://{HOST}"))
            .header("content-type", "application/json")
            .body(Body::from(bytes))
            .unwrap();
        let response = router(state.clone()).oneshot(post).await.unwrap();
        let status = response.status();
        let text = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&text).into_owned();
        match status {
            StatusCode::OK => {
                let result = asking.take().unwrap().await.unwrap();
                if dismiss {
                    assert_eq!(result, Err(AskError::Dismissed));
                } else if let Some(answers) = structured {
                    assert!(right_batch, "accepted for another batch");
                    let want = normalise(&request, answers.clone()).expect("accepted a refusal");
                    assert_eq!(result, Ok(want));
                } else {
                    // A raw body that happens to be a valid submission for this batch.
                    let got = result.expect("200 means answered");
                    assert_eq!(normalise(&request, got.clone()), Ok(got));
                }
            }
            StatusCode::UNPROCESSABLE_ENTITY => {
                assert!(!dismiss, "dismiss never needs validation");
                if let Some(answers) = structured {
                    let refusal =
                        normalise(&request, answers.clone()).expect_err("refused a valid answer");
                    assert_eq!(text, refusal.to_string());
                }
                assert_eq!(state.pending(), 1, "a refused answer keeps the batch open");
            }
            StatusCode::CONFLICT => {
                assert!(
                    !(structured.is_some() && right_batch),
                    "the open batch was called gone: {text}"
                );
            }
            StatusCode::BAD_REQUEST => {
                assert!(
                    structured.is_none(),
                    "a well-formed submission was a bad request: {text}"
                );
            }
            StatusCode::PAYLOAD_TOO_LARGE => {
                // Found by this target: a valid submission can exceed the limit (long labels
                // selected in a multi-select, a long own answer); the page then cannot answer.
                // Reported; the refusal itself must only hit bodies over the limit.
                assert!(
                    body_len > BODY_LIMIT,
                    "{body_len} bytes refused as too large"
                );
                assert_eq!(state.pending(), 1, "a refused body keeps the batch open");
            }
            other => panic!("unexpected status {other}: {text}"),
        }
        cancel.cancel();
        if let Some(asking) = asking {
            let _ = asking.await;
        }
        assert_eq!(state.pending(), 0, "a batch was left open");
    });
}
