mod concurrent;
mod inspector;
mod listing;
mod python;
mod support;
