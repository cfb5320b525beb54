//! `ask-user hub serve --config FILE --escalate LADDER`: the channels a hub runs
//! (docs/contract.md §10), read from the configuration file.

use std::path::{Path, PathBuf};

use ask_user_channels::config::{ChannelsConfig, default_path, process_env};

/// The channels to run: from `--config FILE` (which must exist), else from the default file
/// (`$XDG_CONFIG_HOME/ask-user/config.toml`) when it exists, else none; `--escalate` replaces
/// the file's ladder. Returns the file read (for messages) and what it configures.
pub(crate) fn load(
    config: Option<&Path>,
    escalate: Option<&str>,
) -> Result<(Option<PathBuf>, ChannelsConfig), String> {
    let file = match config {
        Some(f) => Some(f.to_path_buf()),
        None => default_path().filter(|p| p.exists()),
    };
    let mut channels = match &file {
        Some(f) => ChannelsConfig::load(f, &process_env).map_err(|e| e.to_string())?,
        None => ChannelsConfig::default(),
    };
    if let Some(spec) = escalate {
        channels.set_escalation(spec).map_err(|e| e.to_string())?;
    }
    Ok((file, channels))
}

/// Refuses channels without a public URL: the phone must reach the answer endpoints.
pub(crate) fn need_public_url(
    file: Option<&Path>,
    channels: &ChannelsConfig,
    public_url: Option<&str>,
) -> Result<(), String> {
    if channels.is_empty() || public_url.is_some() {
        return Ok(());
    }
    let file = file.map_or_else(String::new, |f| format!("{} ", f.display()));
    Err(format!(
        "{file}configures channels ({}) but the hub has no --public-url: their buttons and links must reach the hub from the phone; give --public-url https://HOST (the address the phone reaches, e.g. the reverse proxy's)",
        channels.names().join(", ")
    ))
}
