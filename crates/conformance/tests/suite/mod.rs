mod catalog;
mod differential;
mod harness_ts;
mod sdk;
