//! Argument decoding and validation on arbitrary JSON values (what MCP hosts hand over): the
//! input is JSON text when it parses (so the seeds from the tests mutate well), else a value
//! built from the bytes with a generator biased towards the tool's keys. Same invariants as
//! `decode_text`.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use ask_user_core::{Limits, decode};
use ask_user_fuzz::{JsonValue, check_decoded, limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (value, limits) = match serde_json::from_slice::<serde_json::Value>(data) {
        Ok(value) => (value, Limits::default()),
        Err(_) => {
            let mut u = Unstructured::new(data);
            let limits = limits(&mut u);
            let Ok(JsonValue(value)) = JsonValue::arbitrary(&mut u) else {
                return;
            };
            (value, limits)
        }
    };
    check_decoded(&decode(value, &limits), &limits);
});
