//! Argument decoding and validation on arbitrary bytes as the argument text a provider hands
//! over: never panics; an accepted request keeps every promise (caps refused, not truncated)
//! and its canonical form decodes to itself; a refusal has the model-facing envelope.
#![no_main]

use arbitrary::Unstructured;
use ask_user_core::{Limits, decode};
use ask_user_fuzz::{check_decoded, limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte (when there is a second) picks the caps; the rest is the text.
    let (limits, text) = match data.split_first() {
        Some((&pick, rest)) if pick == b'!' => (limits(&mut Unstructured::new(rest)), rest),
        _ => (Limits::default(), data),
    };
    let text = String::from_utf8_lossy(text).into_owned();
    check_decoded(&decode(text, &limits), &limits);
});
