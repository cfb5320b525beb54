mod concurrent;
mod hardening;
mod inspector;
mod listing;
mod python;
mod support;
