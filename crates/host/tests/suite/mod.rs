mod args;
mod faults;
mod journal;
mod load;
mod notify;
mod support;
