//! ntfy (docs/contract.md §10): publish as JSON to a server and topic, answer by an `http`
//! action button.
//!
//! Documented API used (<https://docs.ntfy.sh/publish/>): `POST /` with a JSON body
//! `{topic, title, message, actions, click, sequence_id}` ("Publish as JSON"); an access
//! token as `Authorization: Bearer …` ("Access tokens"); at most three actions per
//! notification ("Action buttons"), of kind `view` (opens a URL) or `http` (the phone sends
//! the request itself: here an empty `POST` to the answer URL); Markdown is rendered only when
//! `markdown: true` is sent, which this client never does, so model text shows verbatim;
//! a later publish with the same `sequence_id` replaces the notification (ntfy ≥ 2.16; an
//! older server shows it as a second notification).
//!
//! Layout (see the crate README): a one-question single-select with 1–2 options gets one `http`
//! action per option and a `view` action to the page; with exactly 3 options the three `http`
//! actions fill ntfy's limit and the page is the notification's `click` URL (set always).

use std::sync::Arc;
use std::time::Duration;

use ask_user_core::Secret;
use ask_user_store::{Closed, Outcome};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::MountError;
use crate::channel::{Channel, ChannelError, MessageRef, Notice};
use crate::config::Invalid;
use crate::registry::{ChannelConfig, Mounting};
use crate::text;

const NAME: &str = "ntfy";

/// ntfy's documented maximum number of action buttons on one notification.
pub const MAX_ACTIONS: usize = 3;

/// ntfy's default message size limit (`message-size-limit`, 4 KiB): a longer message becomes
/// an attachment, so the body is cut below it.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// How ntfy is reached. `Debug` shows no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NtfyConfig {
    /// The server's base URL, e.g. `https://ntfy.example.org` (no trailing `/` needed).
    pub server: String,
    /// The topic the human subscribed to.
    pub topic: String,
    /// The access token (`tk_…`), sent as a bearer token; never logged.
    pub access_token: Option<Secret>,
    /// Accept publishing without an access token: anyone subscribed to the topic sees the
    /// questions (and may tap the buttons). Off by default (docs/contract.md §10).
    pub allow_public_topic: bool,
}

/// The `[ntfy]` section as written (see [`crate::config`]).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NtfyToml {
    /// `server`; default `https://ntfy.sh`.
    pub server: Option<String>,
    /// `topic`; required.
    pub topic: Option<String>,
    /// `token` (or `ASK_USER_NTFY_TOKEN`).
    pub token: Option<Secret>,
    /// `public_topic`; default `false`.
    pub public_topic: Option<bool>,
}

impl TryFrom<NtfyToml> for NtfyConfig {
    type Error = Invalid;

    fn try_from(raw: NtfyToml) -> Result<NtfyConfig, Invalid> {
        let config = NtfyConfig {
            server: raw.server.unwrap_or_else(|| "https://ntfy.sh".to_owned()),
            topic: raw.topic.ok_or(Invalid::Missing {
                key: "topic",
                hint: "",
            })?,
            access_token: raw.token.filter(|t| !t.is_empty()),
            allow_public_topic: raw.public_topic.unwrap_or(false),
        };
        if config.access_token.is_none() && !config.allow_public_topic {
            return Err(Invalid::Refused(format!(
                "ntfy: an access token is required: without one, anyone subscribed to topic \"{}\" sees the questions and can answer them; set `token` in [ntfy] or ASK_USER_NTFY_TOKEN, or accept a public topic with `public_topic = true`",
                config.topic
            )));
        }
        Ok(config)
    }
}

impl ChannelConfig for NtfyConfig {
    type Toml = NtfyToml;
    const SECRET_ENV: &'static [(&'static str, &'static str)] = &[("ASK_USER_NTFY_TOKEN", "token")];

    fn mount(&self, mounting: &mut Mounting) -> Result<(), MountError> {
        let ntfy = Ntfy::new(self.clone()).map_err(|e| MountError(e.to_string()))?;
        mounting.channels.push(Arc::new(ntfy));
        Ok(())
    }
}

/// Why an ntfy configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NtfyConfigError {
    /// No access token and the public topic was not accepted.
    #[error(
        "ntfy: an access token is required: without one, anyone subscribed to topic \"{topic}\" sees the questions and can answer them; set an access token, or accept a public topic explicitly"
    )]
    PublicWithoutToken {
        /// The topic.
        topic: String,
    },
    /// The server URL is not `http://` or `https://`, or the topic is empty.
    #[error("ntfy: the server must be an http:// or https:// URL and the topic must not be empty")]
    BadTarget,
}

/// The ntfy channel.
#[derive(Debug, Clone)]
pub struct Ntfy {
    config: NtfyConfig,
    http: reqwest::Client,
}

impl Ntfy {
    /// A channel publishing with `config`. Without an access token and with
    /// `allow_public_topic` set, it warns (once, here) that subscribers see the questions.
    ///
    /// # Errors
    /// [`NtfyConfigError::PublicWithoutToken`] without a token and without the flag;
    /// [`NtfyConfigError::BadTarget`] for a server URL that is not HTTP(S) or an empty topic.
    pub fn new(config: NtfyConfig) -> Result<Ntfy, NtfyConfigError> {
        let scheme_ok =
            config.server.starts_with("http://") || config.server.starts_with("https://");
        if !scheme_ok || config.topic.trim().is_empty() {
            return Err(NtfyConfigError::BadTarget);
        }
        if config.access_token.is_none() {
            if !config.allow_public_topic {
                return Err(NtfyConfigError::PublicWithoutToken {
                    topic: config.topic.clone(),
                });
            }
            tracing::warn!(
                topic = %config.topic,
                "ntfy: no access token: anyone subscribed to this topic sees the questions and can answer them"
            );
        }
        let http = crate::http_client()
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|_| NtfyConfigError::BadTarget)?;
        Ok(Ntfy { config, http })
    }

    /// The JSON published for an open ask (see the module doc for the layout). A question that
    /// does not fit [`MAX_MESSAGE_BYTES`] whole is cut, says so, and gets no answer action: only
    /// a `view` action to the page, "Open to answer".
    #[must_use]
    pub fn open_message(&self, notice: &Notice) -> Value {
        let message = fit_message(&text::body(notice));
        let mut actions: Vec<Value> = Vec::new();
        if message.cut {
            // A cut question is answered on the page only.
            actions.push(json!({
                "action": "view",
                "label": text::OPEN_TO_ANSWER,
                "url": notice.page_url,
            }));
        } else if (1..=MAX_ACTIONS).contains(&notice.choices.len()) {
            for c in &notice.choices {
                actions.push(json!({
                    "action": "http",
                    "label": text::label(&c.label),
                    "url": notice.answer_url(NAME, &c.token),
                    "method": "POST",
                    "clear": true,
                }));
            }
        }
        if let (false, Some(again)) = (message.cut, &notice.again)
            && actions.len() < MAX_ACTIONS
        {
            actions.push(json!({
                "action": "http",
                "label": text::SAME_ANSWER_AGAIN,
                "url": notice.answer_url(NAME, &again.token),
                "method": "POST",
                "clear": true,
            }));
        }
        if !message.cut && actions.len() < MAX_ACTIONS {
            actions.push(json!({
                "action": "view",
                "label": "Open",
                "url": notice.page_url,
            }));
        }
        json!({
            "topic": self.config.topic,
            "sequence_id": sequence_id(notice),
            "title": text::title(notice),
            "message": message.text,
            "click": notice.page_url,
            "actions": actions,
        })
    }

    /// The JSON that replaces the notification once the ask closed: no buttons, the outcome
    /// on the first line, then the question.
    #[must_use]
    pub fn closed_message(&self, notice: &Notice, closed: &Closed) -> Value {
        let message = format!("{}\n\n{}", closed_line(closed), text::body(notice));
        json!({
            "topic": self.config.topic,
            "sequence_id": sequence_id(notice),
            "title": text::title(notice),
            "message": fit_message(&message).text,
            "click": notice.page_url,
        })
    }

    async fn publish(&self, body: &Value) -> Result<Value, ChannelError> {
        let mut req = self
            .http
            .post(self.config.server.trim_end_matches('/'))
            .json(body);
        if let Some(t) = &self.config.access_token {
            req = req.bearer_auth(t.expose());
        }
        let resp = req.send().await.map_err(|e| ChannelError::Unreachable {
            channel: NAME,
            detail: e.without_url().to_string(),
        })?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| ChannelError::Unreachable {
            channel: NAME,
            detail: e.without_url().to_string(),
        })?;
        if !status.is_success() {
            return Err(ChannelError::Refused {
                channel: NAME,
                status: status.as_u16(),
                detail: text::truncate(&String::from_utf8_lossy(&bytes), 200),
            });
        }
        serde_json::from_slice(&bytes).map_err(|e| ChannelError::BadReply {
            channel: NAME,
            detail: e.to_string(),
        })
    }
}

/// The sequence id of an ask's notification: `ask-user-{id}`, so the close update needs
/// nothing but the ask.
fn sequence_id(notice: &Notice) -> String {
    format!("ask-user-{}", notice.ask)
}

/// The first line of a closed notification.
#[must_use]
pub fn closed_line(closed: &Closed) -> String {
    match &closed.outcome {
        Outcome::Answered { answer, by } => {
            let how = crate::token::answer_summary(answer);
            match &by.channel {
                Some(ch) => format!("Answered: {how} (via {ch})."),
                None => format!("Answered: {how}."),
            }
        }
        Outcome::Dismissed { .. } => "Dismissed.".to_owned(),
        Outcome::TimedOut => "Timed out: the agent stopped waiting.".to_owned(),
        Outcome::Withdrawn => "Withdrawn by the agent.".to_owned(),
    }
}

impl Channel for Ntfy {
    fn name(&self) -> &'static str {
        NAME
    }

    fn notify<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<MessageRef, ChannelError>> {
        async move {
            let reply = self.publish(&self.open_message(notice)).await?;
            match reply.get("id").and_then(Value::as_str) {
                Some(id) => Ok(MessageRef(id.to_owned())),
                None => Err(ChannelError::BadReply {
                    channel: NAME,
                    detail: "the reply carries no message id".to_owned(),
                }),
            }
        }
        .boxed()
    }

    fn closed<'a>(
        &'a self,
        notice: &'a Notice,
        closed: &'a Closed,
        _reference: &'a MessageRef,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        async move {
            self.publish(&self.closed_message(notice, closed)).await?;
            Ok(())
        }
        .boxed()
    }
}

/// `message` as it fits ntfy's limit, counted in bytes of the text as sent (with some room
/// left below [`MAX_MESSAGE_BYTES`]).
fn fit_message(message: &str) -> text::Fitted {
    text::fit(message, |t| t.len() <= MAX_MESSAGE_BYTES - 96)
}
