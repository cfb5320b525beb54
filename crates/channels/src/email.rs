//! Email (docs/contract.md §10): SMTP with STARTTLS (required), a plain-text and an HTML part,
//! one link per option and one to the page.
//!
//! A link never answers by itself: it opens a confirm page (GET shows the choice and a
//! button; only the POST of that button answers), so a mail scanner that prefetches links
//! answers nothing. Links exist for one single-select question (any number of options); every
//! other ask gets the page link only. Mail cannot be edited: when the ask closes, a short
//! follow-up goes out in the same thread (`In-Reply-To` the first message) saying how it
//! closed and that its links no longer answer.

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::Secret;
use ask_user_store::Closed;
use futures::FutureExt;
use futures::future::BoxFuture;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::MountError;
use crate::channel::{Channel, ChannelError, MessageRef, Notice};
use crate::config::Invalid;
use crate::registry::{ChannelConfig, Mounting};
use crate::text;

const NAME: &str = "email";

/// How mail is sent. `Debug` shows no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailConfig {
    /// The SMTP server's host name (also the name its certificate must carry).
    pub smtp_host: String,
    /// Its submission port (587 for STARTTLS).
    pub smtp_port: u16,
    /// The SMTP login, when the server wants one.
    pub username: Option<String>,
    /// Its password; never logged.
    pub password: Option<Secret>,
    /// The sender, e.g. `ask-user <ask-user@example.org>`.
    pub from: String,
    /// The human's address; it is also who is recorded as answering.
    pub to: String,
    /// An extra trusted root certificate (PEM), for a server with a private CA.
    pub extra_root_pem: Option<Vec<u8>>,
}

/// The `[email]` section as written (see [`crate::config`]).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailToml {
    /// `smtp_host`; required.
    pub smtp_host: Option<String>,
    /// `smtp_port`; default 587.
    pub smtp_port: Option<i64>,
    /// `user`, with `password`.
    pub user: Option<String>,
    /// `password` (or `ASK_USER_SMTP_PASSWORD`).
    pub password: Option<Secret>,
    /// `from`; required.
    pub from: Option<String>,
    /// `to`; required.
    pub to: Option<String>,
    /// `starttls`: only `true` (STARTTLS cannot be turned off).
    pub starttls: Option<bool>,
    /// `ca_file`: an extra trusted root certificate (PEM), read when the section is checked.
    pub ca_file: Option<String>,
}

impl TryFrom<EmailToml> for EmailConfig {
    type Error = Invalid;

    fn try_from(raw: EmailToml) -> Result<EmailConfig, Invalid> {
        if raw.starttls == Some(false) {
            return Err(Invalid::Refused("email: `starttls = false` is not supported: the mail carries answer links, so it is only sent over STARTTLS".to_owned()));
        }
        let smtp_port = u16::try_from(raw.smtp_port.unwrap_or(587))
            .ok()
            .filter(|p| *p > 0)
            .ok_or(Invalid::Range {
                key: "smtp_port",
                expected: "a port number (1 to 65535)",
            })?;
        let extra_root_pem = match raw.ca_file {
            None => None,
            Some(path) => Some(std::fs::read(&path).map_err(|e| {
                Invalid::Refused(format!("email: cannot read ca_file {path}: {e}"))
            })?),
        };
        let missing = |key| Invalid::Missing { key, hint: "" };
        Ok(EmailConfig {
            smtp_host: raw.smtp_host.ok_or_else(|| missing("smtp_host"))?,
            smtp_port,
            username: raw.user,
            password: raw.password.filter(|p| !p.is_empty()),
            from: raw.from.ok_or_else(|| missing("from"))?,
            to: raw.to.ok_or_else(|| missing("to"))?,
            extra_root_pem,
        })
    }
}

impl ChannelConfig for EmailConfig {
    type Toml = EmailToml;
    const SECRET_ENV: &'static [(&'static str, &'static str)] =
        &[("ASK_USER_SMTP_PASSWORD", "password")];

    fn mount(&self, mounting: &mut Mounting) -> Result<(), MountError> {
        let email = Email::new(self.clone()).map_err(|e| MountError(e.to_string()))?;
        mounting.channels.push(Arc::new(email));
        Ok(())
    }
}

/// Why an email configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EmailConfigError {
    /// `from` or `to` is not a mail address.
    #[error("email: \"{0}\" is not a mail address")]
    BadAddress(String),
    /// The extra root certificate cannot be read, or TLS cannot be set up.
    #[error("email: TLS cannot be set up: {0}")]
    Tls(String),
    /// A user name without a password, or a password without a user name.
    #[error("email: the SMTP user name and password go together")]
    HalfCredentials,
}

/// The email channel.
#[derive(Debug, Clone)]
pub struct Email {
    from: Mailbox,
    to: Mailbox,
    to_text: String,
    transport: AsyncSmtpTransport<Tokio1Executor>,
}

impl Email {
    /// A channel sending with `config`; STARTTLS is required (a server that does not offer it
    /// gets no mail).
    ///
    /// # Errors
    /// [`EmailConfigError`] for a bad address, unusable TLS settings or half credentials.
    pub fn new(config: EmailConfig) -> Result<Email, EmailConfigError> {
        let from: Mailbox = config
            .from
            .parse()
            .map_err(|_| EmailConfigError::BadAddress(config.from.clone()))?;
        let to: Mailbox = config
            .to
            .parse()
            .map_err(|_| EmailConfigError::BadAddress(config.to.clone()))?;
        let mut tls = TlsParameters::builder(config.smtp_host.clone());
        if let Some(pem) = &config.extra_root_pem {
            let cert =
                Certificate::from_pem(pem).map_err(|e| EmailConfigError::Tls(e.to_string()))?;
            tls = tls.add_root_certificate(cert);
        }
        let tls = tls
            .build_rustls()
            .map_err(|e| EmailConfigError::Tls(e.to_string()))?;
        let mut builder =
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(config.smtp_host.as_str())
                .port(config.smtp_port)
                .tls(Tls::Required(tls))
                .timeout(Some(Duration::from_secs(30)));
        match (config.username, config.password) {
            (Some(u), Some(p)) => {
                builder = builder.credentials(Credentials::new(u, p.expose().to_owned()));
            }
            (None, None) => {}
            _ => return Err(EmailConfigError::HalfCredentials),
        }
        Ok(Email {
            to_text: to.email.to_string(),
            from,
            to,
            transport: builder.build(),
        })
    }

    /// The subject: the title on one line (line breaks of model text become spaces).
    fn subject(notice: &Notice) -> String {
        one_line(&text::title(notice))
    }

    /// The plain-text and HTML bodies of the open ask.
    #[must_use]
    pub fn open_bodies(notice: &Notice) -> (String, String) {
        let body = text::body(notice);
        let mut plain = format!("{}\n\n{body}\n", text::who(&notice.asker));
        let mut html = format!(
            "<!doctype html><html><body><p>{}</p><p style=\"white-space:pre-wrap\">{}</p>",
            escape_html(&format!("{} asks:", text::who(&notice.asker))),
            escape_html(&body)
        );
        if !notice.choices.is_empty() {
            plain.push_str("\nAnswer (each link asks you to confirm):\n");
            html.push_str("<p>Answer (each link asks you to confirm):</p><ul>");
            for c in &notice.choices {
                let url = notice.answer_url(NAME, &c.token);
                plain.push_str(&format!("- {}: {url}\n", one_line(&text::label(&c.label))));
                html.push_str(&format!(
                    "<li><a href=\"{}\">{}</a></li>",
                    escape_html(&url),
                    escape_html(&text::label(&c.label))
                ));
            }
            html.push_str("</ul>");
        }
        if let Some(again) = &notice.again {
            let url = notice.answer_url(NAME, &again.token);
            plain.push_str(&format!(
                "\n{} (asks you to confirm): {url}\n",
                text::SAME_ANSWER_AGAIN
            ));
            html.push_str(&format!(
                "<p><a href=\"{}\">{}</a> (asks you to confirm)</p>",
                escape_html(&url),
                text::SAME_ANSWER_AGAIN
            ));
        }
        plain.push_str(&format!("\nOpen the question: {}\n", notice.page_url));
        html.push_str(&format!(
            "<p><a href=\"{}\">Open the question</a></p></body></html>",
            escape_html(&notice.page_url)
        ));
        (plain, html)
    }

    async fn send(&self, message: Message) -> Result<(), ChannelError> {
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| ChannelError::Unreachable {
                channel: NAME,
                detail: e.to_string(),
            })
    }

    fn builder(&self, subject: String) -> lettre::message::MessageBuilder {
        Message::builder()
            .from(self.from.clone())
            .to(self.to.clone())
            .subject(subject)
    }
}

fn bad(e: impl std::fmt::Display) -> ChannelError {
    ChannelError::BadReply {
        channel: NAME,
        detail: e.to_string(),
    }
}

/// `s` with every line break (and other control character) replaced by a space.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `s` escaped for HTML text and attribute values: `&`, `<`, `>`, `"` and `'`.
#[must_use]
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn alternative(plain: String, html: String) -> MultiPart {
    MultiPart::alternative()
        .singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_PLAIN)
                .body(plain),
        )
        .singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_HTML)
                .body(html),
        )
}

impl Channel for Email {
    fn name(&self) -> &'static str {
        NAME
    }

    fn default_user(&self) -> Option<String> {
        Some(self.to_text.clone())
    }

    fn notify<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<MessageRef, ChannelError>> {
        async move {
            let domain = self.from.email.domain().to_owned();
            let id = format!("<ask-user-{}-{}@{domain}>", notice.ask, random_hex()?);
            let (plain, html) = Email::open_bodies(notice);
            let message = self
                .builder(Email::subject(notice))
                .message_id(Some(id.clone()))
                .multipart(alternative(plain, html))
                .map_err(bad)?;
            self.send(message).await?;
            Ok(MessageRef(id))
        }
        .boxed()
    }

    fn closed<'a>(
        &'a self,
        notice: &'a Notice,
        closed: &'a Closed,
        reference: &'a MessageRef,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        async move {
            let line = crate::ntfy::closed_line(closed);
            let note = "The links in the earlier message no longer answer.";
            let plain = format!("{line}\n{note}\n\n{}\n", text::body(notice));
            let html = format!(
                "<!doctype html><html><body><p>{}</p><p>{note}</p><p style=\"white-space:pre-wrap\">{}</p></body></html>",
                escape_html(&line),
                escape_html(&text::body(notice))
            );
            let message = self
                .builder(format!("Re: {}", Email::subject(notice)))
                .in_reply_to(reference.0.clone())
                .references(reference.0.clone())
                .multipart(alternative(plain, html))
                .map_err(bad)?;
            self.send(message).await
        }
        .boxed()
    }
}

fn random_hex() -> Result<String, ChannelError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(bad)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
