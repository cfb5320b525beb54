mod cli;
mod support;
mod terminal;
mod web;
