mod email;
mod fake_ntfy;
mod fake_telegram;
mod ntfy;
mod support;
mod telegram;
mod tokens;
