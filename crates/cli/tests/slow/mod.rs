mod chaos;
mod chaos_harness;
mod hooks;
mod hooks_host;
mod hooks_human;
mod hosts;
mod hosts_tui;
