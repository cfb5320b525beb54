// The flags' clap definitions exist with the `clap` feature (the binaries enable it, so a
// workspace test run has it).
#[cfg(feature = "clap")]
mod args;
mod call;
mod durable;
mod faults;
mod journal;
mod load;
mod notify;
mod support;
