//! Criterion benches of one `ask_user_question` call on the reference oracle's 3-question
//! batch (`tools/node/oracle.mjs --bench`), and of its two halves alone: decoding and
//! rendering.
//!
//! The answerer is scripted like the oracle's stand-in provider: the first option of every
//! question, or the text "free text" where a question has no options. `bench/vs-reference`
//! runs `call/oracle_batch` beside the reference's own loop and prints the ratio.
//!
//! `cargo bench -p ask-user-core --bench call`
#![allow(missing_docs)]
// A bench is test code: a setup that cannot fail is allowed to panic.
#![allow(clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use ask_user_core::{
    AskUserQuestionTool, ExecutionContext, Limits, OneStep, decode, normalise, render,
};
use ask_user_test_support::answerers::stand_in;
use criterion::{Criterion, criterion_group, criterion_main};

/// The batch of `oracle.mjs --bench`, as the model would send it (compact JSON text).
const ORACLE_BATCH: &str = r#"{"questions":[{"id":"db","header":"Database","question":"Which database should the service use?","options":[{"label":"PostgreSQL (Recommended)","description":"Relational, already run by the team."},{"label":"SQLite","description":"Embedded, no server to operate."},{"label":"MongoDB","description":"Document store."}]},{"id":"features","question":"Which features ship in v1?","multi_select":true,"options":[{"label":"Auth"},{"label":"Billing"},{"label":"Search"},{"label":"Export"}]},{"id":"name","question":"What should the service be called?"}]}"#;

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    // The oracle's stand-in provider: first option, or "free text" without options.
    let provider = OneStep::new(|request, _| Box::pin(async move { Ok(stand_in(request)) }));
    let tool = AskUserQuestionTool::new(Arc::new(provider));
    let limits = Limits::default();

    // The bytes the three benches work on agree with the reference's output.
    let outcome = runtime.block_on(tool.call(ORACLE_BATCH, ExecutionContext::default()));
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},{"id":"features","selected":["Auth"]},{"id":"name","selected":[],"custom":"free text"}]}"#
    );
    let request = decode(ORACLE_BATCH, &limits)
        .expect("the batch decodes")
        .request;
    let answers = normalise(&request, stand_in(&request)).expect("the answers fit");

    let mut group = c.benchmark_group("call");
    // The calls run one after another inside one runtime, as in a harness's agent loop (and
    // as the reference's loop awaits its calls in one event loop).
    group.bench_function("oracle_batch", |b| {
        b.iter_custom(|iterations| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iterations {
                    let outcome = tool
                        .call(black_box(ORACLE_BATCH), ExecutionContext::default())
                        .await;
                    black_box(outcome.text());
                }
                start.elapsed()
            })
        });
    });
    group.finish();

    // The floor under decoding: parsing the text into a `serde_json::Value` alone.
    c.bench_function("parse_value/oracle_batch", |b| {
        b.iter(|| {
            black_box(serde_json::from_str::<serde_json::Value>(black_box(
                ORACLE_BATCH,
            )))
        });
    });
    c.bench_function("decode/oracle_batch", |b| {
        b.iter(|| black_box(decode(black_box(ORACLE_BATCH), &limits)));
    });
    c.bench_function("normalise/oracle_batch", |b| {
        b.iter(|| black_box(normalise(&request, black_box(stand_in(&request)))));
    });
    c.bench_function("render/oracle_batch", |b| {
        b.iter(|| black_box(render(black_box(&answers))));
    });
}

criterion_group!(call, benches);
criterion_main!(call);
