mod browser;
mod hardening;
mod http;
mod server;
mod support;
