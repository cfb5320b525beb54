mod browser;
mod http;
mod server;
mod support;
