mod concurrent;
mod hardening;
mod inspector;
mod listing;
mod protocol;
mod python;
mod support;
mod typescript;
