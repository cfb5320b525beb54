//! The property tests' runner settings, shared by every property suite of the core.

use proptest::test_runner::{Config, RngAlgorithm, RngSeed};

/// `cases` cases from XorShift (not ChaCha: in a debug build ChaCha dominates the run time),
/// seeded with `seed` unless `PROPTEST_RNG_SEED` names another, so a run repeats.
pub fn config(cases: u32, seed: u64) -> Config {
    let mut config = Config {
        cases,
        rng_algorithm: RngAlgorithm::XorShift,
        ..Config::default()
    };
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(seed);
    }
    config
}
