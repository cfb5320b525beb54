mod cli;
mod durable;
mod hardening;
mod hook;
mod support;
mod terminal;
mod web;
