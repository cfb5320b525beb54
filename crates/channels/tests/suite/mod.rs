mod cut;
mod email;
mod escalation;
mod ntfy;
mod slack;
mod support;
mod telegram;
mod tokens;
