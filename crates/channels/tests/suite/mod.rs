mod email;
mod fake_ntfy;
mod ntfy;
mod support;
mod tokens;
