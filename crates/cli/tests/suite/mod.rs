mod cli;
mod durable;
mod hardening;
mod support;
mod terminal;
mod web;
