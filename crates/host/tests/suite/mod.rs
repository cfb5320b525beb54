mod args;
mod call;
mod durable;
mod faults;
mod journal;
mod load;
mod notify;
mod support;
