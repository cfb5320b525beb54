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
//! Rules: an unknown key or a value of the wrong type is refused naming the key (never its
//! value); a file holding a secret must not be accessible to group or others (refused with the
//! `chmod 600` that fixes it); each secret may instead come from its environment variable
//! ([`SECRET_ENV`]), which wins over the file. No error text and no `Debug` output carries a
//! secret's value.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::dispatch::{EscalationError, parse_escalation};
use crate::email::EmailConfig;
use crate::ntfy::NtfyConfig;
use crate::slack::SlackConfig;
use crate::telegram::TelegramConfig;

/// The environment variables that override a secret of the file, and the key each replaces.
/// An empty variable counts as unset. A variable alone does not configure a channel: its
/// section must be in the file.
pub const SECRET_ENV: &[(&str, &str)] = &[
    ("ASK_USER_NTFY_TOKEN", "ntfy.token"),
    ("ASK_USER_TELEGRAM_TOKEN", "telegram.token"),
    ("ASK_USER_SLACK_TOKEN", "slack.token"),
    ("ASK_USER_SLACK_SIGNING_SECRET", "slack.signing_secret"),
    ("ASK_USER_SMTP_PASSWORD", "email.password"),
];

/// The channels a hub runs, read from the configuration file. `Debug` shows no secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelsConfig {
    /// `[ntfy]`.
    pub ntfy: Option<NtfyConfig>,
    /// `[telegram]`.
    pub telegram: Option<TelegramConfig>,
    /// `[slack]`.
    pub slack: Option<SlackConfig>,
    /// `[email]`.
    pub email: Option<EmailConfig>,
    /// `escalate`: (delay after the ask was made, channel name), in the order given.
    pub escalate: Vec<(Duration, String)>,
}

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
    /// A value of the wrong type (its value is not shown).
    #[error("{file}: `{key}` must be {expected}")]
    WrongType {
        /// The file.
        file: String,
        /// The key, dotted.
        key: String,
        /// What it must be.
        expected: &'static str,
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

impl ChannelsConfig {
    /// Whether no channel is configured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }

    /// The configured channels' names, in dispatch order (ntfy, telegram, slack, email).
    #[must_use]
    pub fn names(&self) -> Vec<&'static str> {
        let mut n = Vec::new();
        if self.ntfy.is_some() {
            n.push("ntfy");
        }
        if self.telegram.is_some() {
            n.push("telegram");
        }
        if self.slack.is_some() {
            n.push("slack");
        }
        if self.email.is_some() {
            n.push("email");
        }
        n
    }

    /// Reads `file`, secrets overridden from `env` (see [`SECRET_ENV`]). Refuses a file that
    /// holds a secret and is accessible to group or others.
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

    fn from_table(
        file: &str,
        mut table: toml::Table,
        env: Env<'_>,
    ) -> Result<ChannelsConfig, ConfigError> {
        let mut top = Section {
            file,
            name: "",
            table: std::mem::take(&mut table),
        };
        let escalate = top.string("escalate")?;
        let mut config = ChannelsConfig {
            ntfy: top.section("ntfy")?.map(|s| ntfy(s, env)).transpose()?,
            telegram: top
                .section("telegram")?
                .map(|s| telegram(s, env))
                .transpose()?,
            slack: top.section("slack")?.map(|s| slack(s, env)).transpose()?,
            email: top.section("email")?.map(|s| email(s, env)).transpose()?,
            escalate: Vec::new(),
        };
        top.finish(&["escalate", "ntfy", "telegram", "slack", "email"])?;
        if let Some(spec) = escalate {
            config.escalate = parse_escalation(&spec).map_err(|e| escalation_error(&e))?;
            config.check_escalation(&format!("{file}: escalate"))?;
        }
        Ok(config)
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

fn holds_secret(table: &toml::Table) -> bool {
    SECRET_ENV.iter().any(|(_, key)| {
        key.split_once('.').is_some_and(|(s, k)| {
            table
                .get(s)
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key(k))
        })
    })
}

/// One table of the file; each getter takes its key out, [`Section::finish`] refuses the rest.
struct Section<'a> {
    file: &'a str,
    name: &'static str,
    table: toml::Table,
}

impl<'a> Section<'a> {
    fn dotted(&self, key: &str) -> String {
        if self.name.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.name)
        }
    }

    fn wrong(&self, key: &str, expected: &'static str) -> ConfigError {
        ConfigError::WrongType {
            file: self.file.to_owned(),
            key: self.dotted(key),
            expected,
        }
    }

    fn string(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    fn boolean(&mut self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(b)),
            Some(_) => Err(self.wrong(key, "true or false")),
        }
    }

    fn integer(&mut self, key: &str) -> Result<Option<i64>, ConfigError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(i)),
            Some(_) => Err(self.wrong(key, "an integer")),
        }
    }

    fn integers(&mut self, key: &str) -> Result<Option<Vec<i64>>, ConfigError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => a
                .into_iter()
                .map(|v| v.as_integer())
                .collect::<Option<Vec<i64>>>()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a list of integers")),
            Some(_) => Err(self.wrong(key, "a list of integers")),
        }
    }

    fn strings(&mut self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => a
                .into_iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a list of strings")),
            Some(_) => Err(self.wrong(key, "a list of strings")),
        }
    }

    /// A secret: the environment variable of `name.key` wins over the file.
    fn secret(&mut self, key: &str, env: Env<'_>) -> Result<Option<String>, ConfigError> {
        let from_file = self.string(key)?;
        let dotted = self.dotted(key);
        let from_env = SECRET_ENV
            .iter()
            .find(|(_, k)| *k == dotted)
            .and_then(|(var, _)| env(var))
            .filter(|v| !v.is_empty());
        Ok(from_env.or(from_file).filter(|v| !v.is_empty()))
    }

    fn section(&mut self, key: &'static str) -> Result<Option<Section<'a>>, ConfigError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(Section {
                file: self.file,
                name: key,
                table: t,
            })),
            Some(_) => Err(self.wrong(key, "a table ([section])")),
        }
    }

    fn missing(&self, key: &'static str, hint: &'static str) -> ConfigError {
        ConfigError::Missing {
            file: self.file.to_owned(),
            section: self.name,
            key,
            hint,
        }
    }

    fn channel_error(&self, e: &dyn std::fmt::Display) -> ConfigError {
        ConfigError::Channel {
            file: self.file.to_owned(),
            message: e.to_string(),
        }
    }

    fn finish(&self, known: &[&str]) -> Result<(), ConfigError> {
        match self.table.keys().next() {
            None => Ok(()),
            Some(k) => Err(ConfigError::UnknownKey {
                file: self.file.to_owned(),
                key: self.dotted(k),
                known: known.join(", "),
            }),
        }
    }
}

fn ntfy(mut s: Section<'_>, env: Env<'_>) -> Result<NtfyConfig, ConfigError> {
    let server = s.string("server")?;
    let topic = s.string("topic")?;
    let access_token = s.secret("token", env)?;
    let allow_public_topic = s.boolean("public_topic")?.unwrap_or(false);
    s.finish(&["server", "topic", "token", "public_topic"])?;
    let config = NtfyConfig {
        server: server.unwrap_or_else(|| "https://ntfy.sh".to_owned()),
        topic: topic.ok_or_else(|| s.missing("topic", ""))?,
        access_token,
        allow_public_topic,
    };
    if config.access_token.is_none() && !config.allow_public_topic {
        return Err(s.channel_error(&format!(
            "ntfy: an access token is required: without one, anyone subscribed to topic \"{}\" sees the questions and can answer them; set `token` in [ntfy] or ASK_USER_NTFY_TOKEN, or accept a public topic with `public_topic = true`",
            config.topic
        )));
    }
    Ok(config)
}

fn telegram(mut s: Section<'_>, env: Env<'_>) -> Result<TelegramConfig, ConfigError> {
    let bot_token = s.secret("token", env)?;
    let chats = s.integers("chats")?;
    let allowed_users = s.integers("allowed_users")?;
    let api_base = s.string("api_base")?;
    let poll = s.integer("poll_timeout")?;
    s.finish(&[
        "token",
        "chats",
        "allowed_users",
        "api_base",
        "poll_timeout",
    ])?;
    let poll_timeout_secs = u64::try_from(poll.unwrap_or(30))
        .ok()
        .filter(|p| *p <= 50)
        .ok_or_else(|| s.wrong("poll_timeout", "a number of seconds from 0 to 50"))?;
    Ok(TelegramConfig {
        api_base: api_base.unwrap_or_else(|| "https://api.telegram.org".to_owned()),
        bot_token: bot_token.ok_or_else(|| s.missing("token", " (or ASK_USER_TELEGRAM_TOKEN)"))?,
        chats: chats
            .filter(|c| !c.is_empty())
            .ok_or_else(|| s.missing("chats", " (the chat ids the questions go to)"))?,
        allowed_users: allowed_users.unwrap_or_default(),
        poll_timeout_secs,
    })
}

fn slack(mut s: Section<'_>, env: Env<'_>) -> Result<SlackConfig, ConfigError> {
    let bot_token = s.secret("token", env)?;
    let signing_secret = s.secret("signing_secret", env)?;
    let channel = s.string("channel")?;
    let allowed_users = s.strings("allowed_users")?;
    let api_base = s.string("api_base")?;
    s.finish(&[
        "token",
        "signing_secret",
        "channel",
        "allowed_users",
        "api_base",
    ])?;
    Ok(SlackConfig {
        api_base: api_base.unwrap_or_else(|| "https://slack.com/api".to_owned()),
        bot_token: bot_token.ok_or_else(|| s.missing("token", " (or ASK_USER_SLACK_TOKEN)"))?,
        signing_secret: signing_secret
            .ok_or_else(|| s.missing("signing_secret", " (or ASK_USER_SLACK_SIGNING_SECRET)"))?,
        channel: channel.ok_or_else(|| s.missing("channel", ""))?,
        allowed_users: allowed_users
            .filter(|u| !u.is_empty())
            .ok_or_else(|| s.missing("allowed_users", " (the user ids whose clicks count)"))?,
    })
}

fn email(mut s: Section<'_>, env: Env<'_>) -> Result<EmailConfig, ConfigError> {
    let smtp_host = s.string("smtp_host")?;
    let port = s.integer("smtp_port")?;
    let username = s.string("user")?;
    let password = s.secret("password", env)?;
    let from = s.string("from")?;
    let to = s.string("to")?;
    let starttls = s.boolean("starttls")?;
    let ca_file = s.string("ca_file")?;
    s.finish(&[
        "smtp_host",
        "smtp_port",
        "user",
        "password",
        "from",
        "to",
        "starttls",
        "ca_file",
    ])?;
    if starttls == Some(false) {
        return Err(s.channel_error(&"email: `starttls = false` is not supported: the mail carries answer links, so it is only sent over STARTTLS"));
    }
    let smtp_port = u16::try_from(port.unwrap_or(587))
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| s.wrong("smtp_port", "a port number (1 to 65535)"))?;
    let extra_root_pem = match ca_file {
        None => None,
        Some(path) => Some(
            std::fs::read(&path)
                .map_err(|e| s.channel_error(&format!("email: cannot read ca_file {path}: {e}")))?,
        ),
    };
    Ok(EmailConfig {
        smtp_host: smtp_host.ok_or_else(|| s.missing("smtp_host", ""))?,
        smtp_port,
        username,
        password,
        from: from.ok_or_else(|| s.missing("from", ""))?,
        to: to.ok_or_else(|| s.missing("to", ""))?,
        extra_root_pem,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // in tests a failure is a test failure
mod tests {
    use std::collections::HashMap;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const SECRETS: [&str; 5] = [
        "tk_NTFY_SECRET",
        "111:TELEGRAM_SECRET",
        "xoxb-SLACK_SECRET",
        "SIGNING_SECRET_123",
        "SMTP_SECRET_PW",
    ];

    const FULL: &str = r#"
escalate = "5m:telegram, 20m:email"

[ntfy]
server = "https://ntfy.example.org"
topic = "asks"
token = "tk_NTFY_SECRET"

[telegram]
token = "111:TELEGRAM_SECRET"
chats = [42]
allowed_users = [7]
api_base = "http://127.0.0.1:9"

[slack]
token = "xoxb-SLACK_SECRET"
signing_secret = "SIGNING_SECRET_123"
channel = "C1"
allowed_users = ["U1"]

[email]
smtp_host = "smtp.example.org"
user = "me"
password = "SMTP_SECRET_PW"
from = "ask-user <a@example.org>"
to = "me@example.org"
starttls = true
"#;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse(text: &str) -> Result<ChannelsConfig, ConfigError> {
        ChannelsConfig::parse("cfg.toml", text, &no_env)
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    fn assert_no_secret(s: &str) {
        for secret in SECRETS {
            assert!(!s.contains(secret), "a secret leaked: {s}");
        }
    }

    #[test]
    fn reads_every_section_and_debug_shows_no_secret() {
        let c = parse(FULL).unwrap();
        assert_eq!(c.names(), ["ntfy", "telegram", "slack", "email"]);
        let ntfy = c.ntfy.as_ref().unwrap();
        assert_eq!(ntfy.access_token.as_deref(), Some("tk_NTFY_SECRET"));
        assert_eq!(ntfy.topic, "asks");
        let tg = c.telegram.as_ref().unwrap();
        assert_eq!(
            (tg.chats.as_slice(), tg.allowed_users.as_slice()),
            (&[42][..], &[7][..])
        );
        assert_eq!(tg.api_base, "http://127.0.0.1:9");
        assert_eq!(tg.poll_timeout_secs, 30);
        let slack = c.slack.as_ref().unwrap();
        assert_eq!(slack.api_base, "https://slack.com/api");
        assert_eq!(slack.signing_secret, "SIGNING_SECRET_123");
        let email = c.email.as_ref().unwrap();
        assert_eq!(email.smtp_port, 587);
        assert_eq!(email.password.as_deref(), Some("SMTP_SECRET_PW"));
        assert_eq!(
            c.escalate,
            [
                (Duration::from_secs(300), "telegram".to_owned()),
                (Duration::from_secs(1200), "email".to_owned())
            ]
        );
        let debug = format!("{c:?} {c:#?}");
        assert_no_secret(&debug);
        assert!(debug.contains("<redacted>"), "{debug}");
    }

    #[test]
    fn environment_secrets_win_over_the_file() {
        let vars: HashMap<&str, &str> = [
            ("ASK_USER_NTFY_TOKEN", "tk_env"),
            ("ASK_USER_TELEGRAM_TOKEN", "222:env"),
            ("ASK_USER_SLACK_TOKEN", "xoxb-env"),
            ("ASK_USER_SLACK_SIGNING_SECRET", "sign-env"),
            ("ASK_USER_SMTP_PASSWORD", "pw-env"),
        ]
        .into();
        let env = |k: &str| vars.get(k).map(|v| (*v).to_owned());
        let c = ChannelsConfig::parse("cfg.toml", FULL, &env).unwrap();
        assert_eq!(c.ntfy.unwrap().access_token.as_deref(), Some("tk_env"));
        assert_eq!(c.telegram.unwrap().bot_token, "222:env");
        let slack = c.slack.unwrap();
        assert_eq!(
            (slack.bot_token.as_str(), slack.signing_secret.as_str()),
            ("xoxb-env", "sign-env")
        );
        assert_eq!(c.email.unwrap().password.as_deref(), Some("pw-env"));
        // A secret from the environment alone completes a section; it makes none.
        let c = ChannelsConfig::parse("cfg.toml", "[ntfy]\ntopic = \"t\"\n", &env).unwrap();
        assert_eq!(c.names(), ["ntfy"]);
        assert_eq!(
            ChannelsConfig::parse("cfg.toml", "", &env).unwrap().names(),
            Vec::<&str>::new()
        );
        // An empty variable counts as unset.
        let empty = |_: &str| Some(String::new());
        assert_eq!(
            ChannelsConfig::parse("cfg.toml", FULL, &empty)
                .unwrap()
                .ntfy
                .unwrap()
                .access_token
                .as_deref(),
            Some("tk_NTFY_SECRET")
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        assert_eq!(
            err("escalte = \"5m:ntfy\"\n"),
            "cfg.toml: unknown key `escalte` (known here: escalate, ntfy, telegram, slack, email)"
        );
        assert_eq!(
            err("[ntfy]\ntopic = \"t\"\ntokn = \"tk_NTFY_SECRET\"\n"),
            "cfg.toml: unknown key `ntfy.tokn` (known here: server, topic, token, public_topic)"
        );
        assert_eq!(
            err("[matrix]\nroom = \"x\"\n"),
            "cfg.toml: unknown key `matrix` (known here: escalate, ntfy, telegram, slack, email)"
        );
    }

    #[test]
    fn wrong_types_and_syntax_errors_name_the_key_or_line_not_the_value() {
        assert_eq!(
            err("[telegram]\ntoken = \"111:TELEGRAM_SECRET\"\nchats = \"tk_NTFY_SECRET\"\n"),
            "cfg.toml: `telegram.chats` must be a list of integers"
        );
        assert_eq!(
            err("[ntfy]\ntopic = \"t\"\ntoken = 12345\n"),
            "cfg.toml: `ntfy.token` must be a string"
        );
        assert_eq!(
            err("ntfy = 3\n"),
            "cfg.toml: `ntfy` must be a table ([section])"
        );
        let e = err("[ntfy]\ntopic = \"t\"\ntoken = \"tk_NTFY_SECRET\n");
        assert!(e.starts_with("cfg.toml: line 3: not valid TOML: "), "{e}");
        assert_no_secret(&e);
        let e = err("[slack]\ntoken = xoxb-SLACK_SECRET\n");
        assert!(e.starts_with("cfg.toml: line 2: not valid TOML: "), "{e}");
        assert_no_secret(&e);
    }

    #[test]
    fn missing_and_refused_settings() {
        assert_eq!(
            err("[ntfy]\ntoken = \"tk_NTFY_SECRET\"\n"),
            "cfg.toml: `[ntfy]` needs `topic`"
        );
        assert_eq!(
            err("[ntfy]\ntopic = \"asks\"\n"),
            "cfg.toml: ntfy: an access token is required: without one, anyone subscribed to topic \"asks\" sees the questions and can answer them; set `token` in [ntfy] or ASK_USER_NTFY_TOKEN, or accept a public topic with `public_topic = true`"
        );
        let public = parse("[ntfy]\ntopic = \"asks\"\npublic_topic = true\n").unwrap();
        assert!(public.ntfy.unwrap().allow_public_topic);
        assert_eq!(
            err("[telegram]\nchats = [1]\n"),
            "cfg.toml: `[telegram]` needs `token` (or ASK_USER_TELEGRAM_TOKEN)"
        );
        assert_eq!(
            err("[telegram]\ntoken = \"x\"\nchats = []\n"),
            "cfg.toml: `[telegram]` needs `chats` (the chat ids the questions go to)"
        );
        assert_eq!(
            err("[telegram]\ntoken = \"x\"\nchats = [1]\npoll_timeout = 90\n"),
            "cfg.toml: `telegram.poll_timeout` must be a number of seconds from 0 to 50"
        );
        assert_eq!(
            err("[slack]\ntoken = \"x\"\nchannel = \"C\"\nallowed_users = [\"U\"]\n"),
            "cfg.toml: `[slack]` needs `signing_secret` (or ASK_USER_SLACK_SIGNING_SECRET)"
        );
        assert_eq!(
            err("[slack]\ntoken = \"x\"\nsigning_secret = \"s\"\nchannel = \"C\"\n"),
            "cfg.toml: `[slack]` needs `allowed_users` (the user ids whose clicks count)"
        );
        assert_eq!(
            err("[email]\nsmtp_host = \"h\"\nfrom = \"a@b.c\"\nto = \"a@b.c\"\nstarttls = false\n"),
            "cfg.toml: email: `starttls = false` is not supported: the mail carries answer links, so it is only sent over STARTTLS"
        );
        assert_eq!(
            err(
                "[email]\nsmtp_host = \"h\"\nsmtp_port = 70000\nfrom = \"a@b.c\"\nto = \"a@b.c\"\n"
            ),
            "cfg.toml: `email.smtp_port` must be a port number (1 to 65535)"
        );
    }

    #[test]
    fn the_ladder_names_configured_channels_only() {
        let ntfy = "[ntfy]\ntopic = \"t\"\npublic_topic = true\n";
        assert_eq!(
            err(&format!("escalate = \"5m:telegram\"\n{ntfy}")),
            "cfg.toml: escalate: channel \"telegram\" is not configured (configured: ntfy)"
        );
        assert_eq!(
            err(&format!("escalate = \"soon:ntfy\"\n{ntfy}")),
            "--escalate: \"soon:ntfy\" is not DURATION:CHANNEL (e.g. 5m:telegram,20m:email)"
        );
        let mut c = parse(ntfy).unwrap();
        c.set_escalation("2m:ntfy").unwrap();
        assert_eq!(c.escalate, [(Duration::from_secs(120), "ntfy".to_owned())]);
        assert_eq!(
            c.set_escalation("1m:email").unwrap_err().to_string(),
            "--escalate: channel \"email\" is not configured (configured: ntfy)"
        );
    }

    #[test]
    fn a_file_with_a_secret_must_be_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, FULL).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = ChannelsConfig::load(&file, &no_env)
            .unwrap_err()
            .to_string();
        let name = file.display();
        assert_eq!(
            e,
            format!(
                "{name} holds a secret but other users can access it (mode 644); make it private: chmod 600 {name}"
            )
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(ChannelsConfig::load(&file, &no_env).is_err());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            ChannelsConfig::load(&file, &no_env).unwrap().names().len(),
            4
        );
        // Without a secret in it (they come from the environment), it may be shared.
        std::fs::write(&file, "[ntfy]\ntopic = \"t\"\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let env = |k: &str| (k == "ASK_USER_NTFY_TOKEN").then(|| "tk_env".to_owned());
        assert_eq!(ChannelsConfig::load(&file, &env).unwrap().names(), ["ntfy"]);
        let missing = dir.path().join("nope.toml");
        let e = ChannelsConfig::load(&missing, &no_env)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "cannot read the configuration {}: ",
                missing.display()
            )),
            "{e}"
        );
    }
}
