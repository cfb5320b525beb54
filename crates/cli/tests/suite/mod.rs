mod cli;
mod durable;
mod hardening;
mod input_limits;
mod newcomer;
mod support;
mod terminal;
mod web;
