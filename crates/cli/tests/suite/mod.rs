mod cli;
mod hardening;
mod support;
mod terminal;
mod web;
