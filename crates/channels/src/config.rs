//! The channels' configuration file (docs/contract.md §10): TOML, one section per channel and
//! the escalation ladder, secrets from the file or from the environment.
//!
//! ```toml
//! escalate = "5m:telegram,20m:email"   # optional; channels not named get an ask at once
//!
//! [ntfy]
//! server = "https://ntfy.example.org"  # default https://ntfy.sh
//! topic = "asks"
//! token = "tk_…"                       # or ASK_USER_NTFY_TOKEN
//! public_topic = false                 # true: publish without a token (subscribers see all)
//!
//! [telegram]
//! token = "123456:ABC…"                # or ASK_USER_TELEGRAM_TOKEN
//! chats = [123456789]                  # the chats the questions go to; taps count only there
//! allowed_users = [123456789]          # optional: only these users' taps count
//! api_base = "https://api.telegram.org"  # for tests (a fake of the Bot API)
//! poll_timeout = 30                    # getUpdates long-poll, seconds (≤ 50)
//!
//! [slack]
//! token = "xoxb-…"                     # or ASK_USER_SLACK_TOKEN
//! signing_secret = "…"                 # or ASK_USER_SLACK_SIGNING_SECRET
//! channel = "C0123456789"
//! allowed_users = ["U0123456789"]      # required: only these users' clicks count
//! api_base = "https://slack.com/api"   # for tests (a fake of the Web API)
//!
//! [email]
//! smtp_host = "smtp.example.org"
//! smtp_port = 587                      # default 587 (submission, STARTTLS)
//! user = "ask-user@example.org"        # optional, with password
//! password = "…"                       # or ASK_USER_SMTP_PASSWORD
//! from = "ask-user <ask-user@example.org>"
//! to = "me@example.org"
//! starttls = true                      # the only value: STARTTLS cannot be turned off
//! ca_file = "/etc/ask-user/smtp-ca.pem"  # optional extra trusted root (private CA; a
//!                                        # self-signed server certificate needs
//!                                        # basicConstraints CA:FALSE, as rustls checks)
//! ```
//!
//! Rules: an unknown key or a value of the wrong type is refused naming the key and what it
//! must be (never its value); a file holding a secret must not be accessible to group or others
//! (refused with the `chmod 600` that fixes it); each secret may instead come from its
//! environment variable (`ASK_USER_NTFY_TOKEN`, `ASK_USER_TELEGRAM_TOKEN`,
//! `ASK_USER_SLACK_TOKEN`, `ASK_USER_SLACK_SIGNING_SECRET`, `ASK_USER_SMTP_PASSWORD`), which
//! wins over the file; an empty variable counts as unset, and a variable alone configures
//! nothing (its section must be in the file). Every secret is held as an
//! [`ask_user_core::Secret`], so no `Debug` output carries one, and no error text does.
//!
//! How it is read: the TOML parser gives a table; each channel's section (a name of
//! [`crate::CHANNELS`]) is deserialised with serde into that channel's raw `*Toml` struct
//! (`#[serde(deny_unknown_fields)]`, every field optional, no logic) through a deserialiser
//! whose errors keep the path and the expected type but drop the value, then checked into its
//! configuration type with `TryFrom` (required keys, ranges, the channel's own refusals).

use std::path::{Path, PathBuf};

use crate::dispatch::{EscalationError, parse_escalation};
use crate::registry::ChannelConfig;

mod de;

pub use crate::ChannelsConfig;

/// Why the configuration cannot be used. Every text names the file; none carries a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read the configuration {file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not TOML.
    #[error("{file}: line {line}: not valid TOML: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// The 1-based line of the error.
        line: usize,
        /// The parser's message (without the line's text, which may hold a secret).
        message: String,
    },
    /// A key this version does not know.
    #[error("{file}: unknown key `{key}` (known here: {known})")]
    UnknownKey {
        /// The file.
        file: String,
        /// The key, dotted (`ntfy.tokn`).
        key: String,
        /// The keys allowed at that place.
        known: String,
    },
    /// A value of the wrong type or out of range (its value is not shown).
    #[error("{file}: `{key}` must be {expected}")]
    WrongType {
        /// The file.
        file: String,
        /// The key, dotted, with the index of a list item (`telegram.chats[0]`).
        key: String,
        /// What it must be (`a string`, `a list`, `a port number (1 to 65535)`).
        expected: String,
    },
    /// A required key is missing.
    #[error("{file}: `[{section}]` needs `{key}`{hint}")]
    Missing {
        /// The file.
        file: String,
        /// The section.
        section: &'static str,
        /// The key.
        key: &'static str,
        /// Where else it may come from (an environment variable), or empty.
        hint: &'static str,
    },
    /// The file holds a secret and group or others may read it.
    #[error(
        "{file} holds a secret but other users can access it (mode {mode:03o}); make it private: chmod 600 {file}"
    )]
    Exposed {
        /// The file.
        file: String,
        /// Its permission bits.
        mode: u32,
    },
    /// A channel refused its settings (e.g. ntfy without a token).
    #[error("{file}: {message}")]
    Channel {
        /// The file.
        file: String,
        /// The channel's own refusal (never a secret).
        message: String,
    },
    /// The escalation ladder cannot be read, or names a channel that is not configured.
    #[error("{0}")]
    Escalation(String),
}

/// Why a channel's checked conversion (`TryFrom` its raw `*Toml` section) refused it; the
/// configuration's [`ConfigError`] adds the file and the section. No variant carries a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Invalid {
    /// A required key is missing; `hint` says where else it may come from, or is empty.
    Missing {
        /// The key.
        key: &'static str,
        /// E.g. ` (or ASK_USER_TELEGRAM_TOKEN)`.
        hint: &'static str,
    },
    /// A value outside what the key accepts (`poll_timeout = 90`).
    Range {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The channel refuses the settings as a whole (its own text).
    Refused(String),
}

/// The default configuration file: `$XDG_CONFIG_HOME/ask-user/config.toml`, else
/// `$HOME/.config/ask-user/config.toml`; `None` when neither variable is set (an
/// `XDG_CONFIG_HOME` that is empty or relative is ignored, as the XDG spec says).
#[must_use]
pub fn default_path() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".config"))
    })?;
    Some(base.join("ask-user").join("config.toml"))
}

/// Whether secrets are read from the environment (the process's) or from a test's table.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, for [`ChannelsConfig::load`].
#[must_use]
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Why one section was refused, before the file and the section's name are added.
#[derive(Debug)]
pub(crate) enum SectionError {
    /// serde refused the raw section: the path inside it and why.
    Read(String, de::Refusal),
    /// The checked conversion refused it.
    Check(Invalid),
}

/// Reads one channel's section: the secrets' environment variables replace the file's values,
/// serde reads the raw struct, `TryFrom` checks it.
pub(crate) fn section<C: ChannelConfig>(
    mut table: toml::Table,
    env: Env<'_>,
) -> Result<C, SectionError> {
    for (var, key) in C::SECRET_ENV {
        if let Some(value) = env(var).filter(|v| !v.is_empty()) {
            table.insert((*key).to_owned(), toml::Value::String(value));
        }
    }
    let raw: C::Toml = de::read(toml::Value::Table(table))
        .map_err(|(path, refusal)| SectionError::Read(path, refusal))?;
    C::try_from(raw).map_err(SectionError::Check)
}

impl ChannelsConfig {
    /// Whether no channel is configured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }

    /// Reads `file`, secrets overridden from `env`. Refuses a file that holds a secret and is
    /// accessible to group or others.
    ///
    /// # Errors
    /// [`ConfigError`], naming the file and the key.
    pub fn load(file: &Path, env: Env<'_>) -> Result<ChannelsConfig, ConfigError> {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Read {
            file: name.clone(),
            source,
        })?;
        let table = parse_table(&name, &text)?;
        if holds_secret(&table) {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file)
                .map_err(|source| ConfigError::Read {
                    file: name.clone(),
                    source,
                })?
                .permissions()
                .mode()
                & 0o777;
            if mode & 0o077 != 0 {
                return Err(ConfigError::Exposed { file: name, mode });
            }
        }
        ChannelsConfig::from_table(&name, table, env)
    }

    /// Reads the configuration from `text` (as if it were the file `file`; no permission
    /// check), secrets overridden from `env`.
    ///
    /// # Errors
    /// [`ConfigError`], naming the file and the key.
    pub fn parse(file: &str, text: &str, env: Env<'_>) -> Result<ChannelsConfig, ConfigError> {
        let table = parse_table(file, text)?;
        ChannelsConfig::from_table(file, table, env)
    }

    /// Replaces the escalation ladder with `spec` (`--escalate 5m:telegram,20m:email`).
    ///
    /// # Errors
    /// [`ConfigError::Escalation`] for a malformed ladder or one naming a channel that is not
    /// configured.
    pub fn set_escalation(&mut self, spec: &str) -> Result<(), ConfigError> {
        self.escalate = parse_escalation(spec).map_err(|e| escalation_error(&e))?;
        self.check_escalation("--escalate")
    }

    fn check_escalation(&self, source: &str) -> Result<(), ConfigError> {
        let names = self.names();
        for (_, n) in &self.escalate {
            if !names.contains(&n.as_str()) {
                let configured = if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                };
                return Err(ConfigError::Escalation(format!(
                    "{source}: channel \"{n}\" is not configured (configured: {configured})"
                )));
            }
        }
        Ok(())
    }

    /// The top level: `escalate` and one section per channel of [`crate::CHANNELS`], read in
    /// that order; then any other key is refused.
    fn from_table(
        file: &str,
        mut table: toml::Table,
        env: Env<'_>,
    ) -> Result<ChannelsConfig, ConfigError> {
        let wrong = |key: &str, expected: &str| ConfigError::WrongType {
            file: file.to_owned(),
            key: key.to_owned(),
            expected: expected.to_owned(),
        };
        let escalate = match table.remove("escalate") {
            None => None,
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => return Err(wrong("escalate", "a string")),
        };
        let mut config = ChannelsConfig::default();
        for name in crate::CHANNELS {
            let Some(value) = table.remove(*name) else {
                continue;
            };
            let toml::Value::Table(section) = value else {
                return Err(wrong(name, "a table ([section])"));
            };
            if let Some(read) = config.read_section(name, section, env) {
                read.map_err(|e| section_error(file, name, e))?;
            }
        }
        if let Some(key) = table.keys().next() {
            let known: Vec<&str> = std::iter::once("escalate")
                .chain(crate::CHANNELS.iter().copied())
                .collect();
            return Err(ConfigError::UnknownKey {
                file: file.to_owned(),
                key: key.clone(),
                known: known.join(", "),
            });
        }
        if let Some(spec) = escalate {
            config.escalate = parse_escalation(&spec).map_err(|e| escalation_error(&e))?;
            config.check_escalation(&format!("{file}: escalate"))?;
        }
        Ok(config)
    }
}

/// `section`'s refusal in the file's words: keys dotted from the top (`ntfy.tokn`).
fn section_error(file: &str, section: &'static str, e: SectionError) -> ConfigError {
    let file = file.to_owned();
    let dotted = |path: &str| {
        if path.is_empty() {
            section.to_owned()
        } else {
            format!("{section}.{path}")
        }
    };
    match e {
        SectionError::Read(path, de::Refusal::Unknown { key, known }) => ConfigError::UnknownKey {
            file,
            // serde_path_to_error names the unknown key itself, or stops at its table.
            key: if path.ends_with(&key) {
                dotted(&path)
            } else {
                dotted(&[path.as_str(), key.as_str()].join(if path.is_empty() { "" } else { "." }))
            },
            known: known.join(", "),
        },
        SectionError::Read(path, de::Refusal::Wrong { expected }) => ConfigError::WrongType {
            file,
            key: dotted(&path),
            expected: de::friendly(&expected).to_owned(),
        },
        SectionError::Read(_, de::Refusal::Missing { key }) => ConfigError::Missing {
            file,
            section,
            key,
            hint: "",
        },
        SectionError::Read(path, de::Refusal::Other) => ConfigError::Channel {
            message: format!("`{}` holds a value that cannot be used", dotted(&path)),
            file,
        },
        SectionError::Check(Invalid::Missing { key, hint }) => ConfigError::Missing {
            file,
            section,
            key,
            hint,
        },
        SectionError::Check(Invalid::Range { key, expected }) => ConfigError::WrongType {
            file,
            key: dotted(key),
            expected: expected.to_owned(),
        },
        SectionError::Check(Invalid::Refused(message)) => ConfigError::Channel { file, message },
    }
}

fn escalation_error(e: &EscalationError) -> ConfigError {
    ConfigError::Escalation(e.to_string())
}

fn parse_table(file: &str, text: &str) -> Result<toml::Table, ConfigError> {
    text.parse::<toml::Table>().map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        ConfigError::Syntax {
            file: file.to_owned(),
            line,
            message: e.message().trim().replace('\n', "; "),
        }
    })
}

/// Whether the file itself holds a secret (then it must be private).
fn holds_secret(table: &toml::Table) -> bool {
    ChannelsConfig::secret_env()
        .iter()
        .any(|(_, section, key)| {
            table
                .get(*section)
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key(*key))
        })
}

#[cfg(test)]
mod tests;
