mod cli;
mod support;
mod terminal;
