//! Answer normalisation on an arbitrary request and arbitrary answers (ids and labels mostly
//! the request's own, sometimes anything): one item per question, in order; labels are
//! options, in option order, no repeats; the custom rules; render parses back; idempotent;
//! every refusal justified.
//!
//! Input: JSON `{"arguments":…,"answers":{"answers":[…]}}` when it parses as that (seeds from
//! the tests), else structured data from the bytes.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use ask_user_core::{Answers, Limits, decode};
use ask_user_fuzz::{ItemSpec, QuestionSpec, answers_for, check_normalise, request_and_answers};
use libfuzzer_sys::fuzz_target;

#[derive(serde::Deserialize)]
struct Seed {
    arguments: serde_json::Value,
    answers: Answers,
}

fuzz_target!(|data: &[u8]| {
    if let Ok(seed) = serde_json::from_slice::<Seed>(data) {
        if let Ok(decoded) = decode(seed.arguments, &Limits::default()) {
            check_normalise(&decoded.request, &seed.answers);
        }
        return;
    }
    let mut u = Unstructured::new(data);
    let Ok((questions, items, reuse)) =
        <(Vec<QuestionSpec>, Vec<ItemSpec>, Vec<ItemSpec>)>::arbitrary(&mut u)
    else {
        return;
    };
    let Some((request, answers)) = request_and_answers(&questions, &items) else {
        return;
    };
    check_normalise(&request, &answers);
    // Also answers resolved again against the same request (ids repeated across items).
    let (request, more) = answers_for(request, &reuse);
    let mut all = answers.clone();
    all.answers.extend(more.answers);
    check_normalise(&request, &all);
});
