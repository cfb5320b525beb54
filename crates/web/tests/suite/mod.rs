mod again;
mod browser;
mod flow;
mod hardening;
mod http;
mod server;
mod support;
