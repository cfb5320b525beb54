//! Slack (docs/contract.md §10): Web API messages with Block Kit buttons, answered through the
//! interactivity endpoint, whose request signature is checked.
//!
//! Documented API used (<https://api.slack.com/>): `chat.postMessage` and `chat.update`
//! (bearer bot token; HTTP 200 with `{"ok":false,"error":…}` on failure); Block Kit `section`
//! (text ≤ 3000 characters) and `actions` with `button`s (`text` plain_text ≤ 75 characters,
//! `value` ≤ 2000, `url` buttons open a page); interactivity: `POST` of a form with one field
//! `payload` (JSON, `type: "block_actions"`), signed with `X-Slack-Signature: v0=` +
//! hex(HMAC-SHA256(signing secret, `v0:{X-Slack-Request-Timestamp}:{body}`)), to be refused
//! when the timestamp is more than five minutes off, and acknowledged with HTTP 200 within
//! three seconds; `response_url` takes an ephemeral reply to the user who clicked.
//!
//! Model text: the message's blocks carry it as `plain_text` (no formatting, no mention, no
//! link can come out of it); the top-level `text` (the notification's fallback, read as
//! mrkdwn) has `&`, `<` and `>` escaped, so `<!channel>` or `<https://x|label>` stay literal.
//!
//! A multi-select (one question, at most [`MAX_CHECKBOXES`] options) shows a `checkboxes`
//! element (option `value` = its index; ticking a box sends a `block_actions` this endpoint
//! only acknowledges) and a Done button whose `value` is `{ask}:{token}` with a
//! [`crate::ChoiceKind::Set`] token: it answers with the boxes ticked, which Slack sends with
//! the click (`state.values`). An ask with one question also gets an `input` block
//! (`plain_text_input`, `dispatch_action: true`, sent on Enter) for the own answer; its
//! `block_id` is `own:{ask}:{token}` with a [`crate::ChoiceKind::Own`] token. Option labels go
//! in `plain_text` objects. Several questions, or more options, get the Open button only
//! (answered on the page).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ask_user_core::Secret;
use ask_user_store::{AskId, Closed};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use crate::MountError;
use crate::channel::{Channel, ChannelError, MessageRef, Notice};
use crate::config::Invalid;
use crate::registry::{ChannelConfig, Mounting};
use crate::router::AnswerState;
use crate::text;
use crate::token::{Given, RedeemError};

const NAME: &str = "slack";

/// How far a request's timestamp may be from now (Slack's documented five minutes).
pub const MAX_SKEW_SECS: i64 = 5 * 60;

/// The most options a `checkboxes` element takes (Block Kit); a multi-select with more is
/// answered on the page.
pub const MAX_CHECKBOXES: usize = 10;

/// The longest own answer the text input takes (its `max_length`).
pub const MAX_OWN_ANSWER_CHARS: usize = 2000;

/// The label of the own-answer input.
pub const OWN_ANSWER_LABEL: &str = "Your own answer (Enter sends it)";

/// The `block_id` of the checkboxes' block.
const CHOICES_BLOCK: &str = "ask-user-choices";

/// What a user outside the allow-list is told.
pub const NOT_ALLOWED: &str = "You may not answer this question.";

/// How Slack is reached. `Debug` shows no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackConfig {
    /// The Web API base URL (`https://slack.com/api`).
    pub api_base: String,
    /// The bot token (`xoxb-…`); never logged.
    pub bot_token: Secret,
    /// The app's signing secret; never logged.
    pub signing_secret: Secret,
    /// The channel id the questions go to.
    pub channel: String,
    /// The user ids whose clicks count (required, not empty).
    pub allowed_users: Vec<String>,
}

/// The `[slack]` section as written (see [`crate::config`]).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackToml {
    /// `token` (or `ASK_USER_SLACK_TOKEN`); required.
    pub token: Option<Secret>,
    /// `signing_secret` (or `ASK_USER_SLACK_SIGNING_SECRET`); required.
    pub signing_secret: Option<Secret>,
    /// `channel`; required.
    pub channel: Option<String>,
    /// `allowed_users`; required, not empty.
    pub allowed_users: Option<Vec<String>>,
    /// `api_base`; default `https://slack.com/api`.
    pub api_base: Option<String>,
}

impl TryFrom<SlackToml> for SlackConfig {
    type Error = Invalid;

    fn try_from(raw: SlackToml) -> Result<SlackConfig, Invalid> {
        Ok(SlackConfig {
            api_base: raw
                .api_base
                .unwrap_or_else(|| "https://slack.com/api".to_owned()),
            bot_token: raw
                .token
                .filter(|t| !t.is_empty())
                .ok_or(Invalid::Missing {
                    key: "token",
                    hint: " (or ASK_USER_SLACK_TOKEN)",
                })?,
            signing_secret: raw.signing_secret.filter(|t| !t.is_empty()).ok_or(
                Invalid::Missing {
                    key: "signing_secret",
                    hint: " (or ASK_USER_SLACK_SIGNING_SECRET)",
                },
            )?,
            channel: raw.channel.ok_or(Invalid::Missing {
                key: "channel",
                hint: "",
            })?,
            allowed_users: raw
                .allowed_users
                .filter(|u| !u.is_empty())
                .ok_or(Invalid::Missing {
                    key: "allowed_users",
                    hint: " (the user ids whose clicks count)",
                })?,
        })
    }
}

impl ChannelConfig for SlackConfig {
    type Toml = SlackToml;
    const SECRET_ENV: &'static [(&'static str, &'static str)] = &[
        ("ASK_USER_SLACK_TOKEN", "token"),
        ("ASK_USER_SLACK_SIGNING_SECRET", "signing_secret"),
    ];

    /// The channel, and its interactivity endpoint (`POST /channels/slack/interactivity`).
    fn mount(&self, mounting: &mut Mounting) -> Result<(), MountError> {
        let slack = Arc::new(Slack::new(self.clone()).map_err(|e| MountError(e.to_string()))?);
        mounting.channels.push(slack.clone());
        let answers = AnswerState {
            tokens: mounting.tokens.clone(),
        };
        let routes = std::mem::take(&mut mounting.routes);
        mounting.routes = routes.merge(interactivity_router(answers, slack));
        Ok(())
    }
}

/// Why a Slack configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SlackConfigError {
    /// No user may answer.
    #[error("slack: list the user ids allowed to answer (allowed_users is empty)")]
    NoAllowedUsers,
}

/// Why an interactivity request was refused (HTTP 401, body [`SIGNATURE_REFUSED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// A header is missing or unreadable.
    #[error("missing or unreadable signature headers")]
    Missing,
    /// The timestamp is more than [`MAX_SKEW_SECS`] from now (a replay, or a wrong clock).
    #[error("timestamp outside the five-minute window")]
    Stale,
    /// The signature does not match.
    #[error("signature mismatch")]
    Mismatch,
}

/// The body of the 401 reply to a request whose signature is refused.
pub const SIGNATURE_REFUSED: &str = "Slack request signature refused.";

/// The signature Slack sends for `body` at `timestamp`: `v0=` + lower-case hex of
/// HMAC-SHA256(`secret`, `v0:{timestamp}:{body}`).
#[must_use]
pub fn signature(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let mut mac = ring::hmac::Context::with_key(&key);
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    let out = mac.sign();
    let hex: String = out.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("v0={hex}")
}

/// Checks a request's signature headers before its body is read: both present, the timestamp
/// a number within [`MAX_SKEW_SECS`] of `now` and the signature of the `v0=` form.
///
/// # Errors
/// [`SignatureError::Missing`], [`SignatureError::Stale`].
pub fn verify_headers(
    timestamp: Option<&str>,
    sig: Option<&str>,
    now: i64,
) -> Result<(), SignatureError> {
    let (Some(ts), Some(sig)) = (timestamp, sig) else {
        return Err(SignatureError::Missing);
    };
    let t: i64 = ts.parse().map_err(|_| SignatureError::Missing)?;
    if !sig.starts_with("v0=") {
        return Err(SignatureError::Missing);
    }
    if (now - t).abs() > MAX_SKEW_SECS {
        return Err(SignatureError::Stale);
    }
    Ok(())
}

/// Checks a request's `X-Slack-Request-Timestamp` and `X-Slack-Signature` against `body` at
/// `now` (seconds since the epoch), comparing in constant time.
///
/// # Errors
/// [`SignatureError`] as documented on its variants.
pub fn verify(
    secret: &str,
    timestamp: Option<&str>,
    sig: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), SignatureError> {
    let (Some(ts), Some(sig)) = (timestamp, sig) else {
        return Err(SignatureError::Missing);
    };
    let t: i64 = ts.parse().map_err(|_| SignatureError::Missing)?;
    if (now - t).abs() > MAX_SKEW_SECS {
        return Err(SignatureError::Stale);
    }
    let want = signature(secret, ts, body);
    if want.is_empty() || !bool::from(want.as_bytes().ct_eq(sig.as_bytes())) {
        return Err(SignatureError::Mismatch);
    }
    Ok(())
}

/// `s` with `&`, `<` and `>` escaped as Slack's mrkdwn requires (so no mention, link or
/// command can be written).
#[must_use]
pub fn escape_mrkdwn(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Slack's limit on a `section` block's text, in characters.
pub const MAX_SECTION_CHARS: usize = 3000;

/// `full` as it fits one `section` block (plain text: nothing to escape), cut and saying so
/// when it does not.
fn fit_section(full: &str) -> text::Fitted {
    text::fit(full, |t| t.chars().count() <= MAX_SECTION_CHARS)
}

fn cut_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t.push('\u{2026}');
    t
}

/// The Slack channel.
#[derive(Debug, Clone)]
pub struct Slack {
    config: SlackConfig,
    http: reqwest::Client,
}

impl Slack {
    /// A channel with `config`.
    ///
    /// # Errors
    /// [`SlackConfigError::NoAllowedUsers`].
    pub fn new(config: SlackConfig) -> Result<Slack, SlackConfigError> {
        if config.allowed_users.is_empty() {
            return Err(SlackConfigError::NoAllowedUsers);
        }
        let http = crate::http_client()
            .timeout(Duration::from_secs(15))
            .build()
            .unwrap_or_default();
        Ok(Slack { config, http })
    }

    /// The `chat.postMessage` body for an open ask: the question as `plain_text`, then the
    /// checkboxes of a multi-select, the buttons (one per option of a single-select, Done for
    /// a multi-select, Open), and the own-answer input.
    /// A question that does not fit one section ([`MAX_SECTION_CHARS`]) whole is cut, says so,
    /// and gets only the "Open to answer" link: no button, checkbox or input answers it.
    #[must_use]
    pub fn open_message(&self, notice: &Notice) -> Value {
        let full = format!("{}\n\n{}", text::title(notice), text::body(notice));
        let plain = |t: &str, max: usize| json!({"type": "plain_text", "text": cut_chars(t, max), "emoji": false});
        let section = fit_section(&full);
        let mut blocks =
            vec![json!({"type": "section", "text": plain(&section.text, MAX_SECTION_CHARS)})];
        if section.cut {
            // A cut question is answered on the page only.
            blocks.push(
                json!({"type": "actions", "block_id": "ask-user", "elements": [{
                    "type": "button",
                    "action_id": "open",
                    "text": plain(text::OPEN_TO_ANSWER, 75),
                    "url": notice.page_url,
                }]}),
            );
            return json!({
                "channel": self.config.channel,
                "text": escape_mrkdwn(&cut_chars(&text::title(notice), MAX_SECTION_CHARS)),
                "blocks": blocks,
            });
        }
        let mut buttons: Vec<Value> = notice
            .choices
            .iter()
            .take(24)
            .enumerate()
            .map(|(i, c)| {
                json!({
                    "type": "button",
                    "action_id": format!("answer-{i}"),
                    "text": plain(&text::label(&c.label), 75),
                    "value": format!("{}:{}", notice.ask, c.token),
                })
            })
            .collect();
        if let (Some(done), [q]) = (&notice.done, notice.questions.as_slice())
            && q.options.len() <= MAX_CHECKBOXES
        {
            let options: Vec<Value> = q
                .options
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let mut opt =
                        json!({"text": plain(&text::label(&o.label), 75), "value": i.to_string()});
                    if let Some(d) = o.description.as_deref().filter(|d| !d.trim().is_empty()) {
                        opt["description"] = plain(&text::label(d), 75);
                    }
                    opt
                })
                .collect();
            blocks.push(json!({
                "type": "actions",
                "block_id": CHOICES_BLOCK,
                "elements": [{"type": "checkboxes", "action_id": "choose", "options": options}],
            }));
            buttons.push(json!({
                "type": "button",
                "action_id": "done",
                "style": "primary",
                "text": plain("Done", 75),
                "value": format!("{}:{done}", notice.ask),
            }));
        }
        if let Some(again) = &notice.again {
            buttons.push(json!({
                "type": "button",
                "action_id": "answer-again",
                "text": plain(text::SAME_ANSWER_AGAIN, 75),
                "value": format!("{}:{}", notice.ask, again.token),
            }));
        }
        buttons.push(json!({
            "type": "button",
            "action_id": "open",
            "text": plain("Open", 75),
            "url": notice.page_url,
        }));
        blocks.push(json!({"type": "actions", "block_id": "ask-user", "elements": buttons}));
        if let Some(own) = &notice.own {
            blocks.push(json!({
                "type": "input",
                "block_id": format!("own:{}:{own}", notice.ask),
                "dispatch_action": true,
                "label": plain(OWN_ANSWER_LABEL, 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": "own",
                    "max_length": MAX_OWN_ANSWER_CHARS,
                    "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
                },
            }));
        }
        json!({
            "channel": self.config.channel,
            "text": escape_mrkdwn(&cut_chars(&text::title(notice), 3000)),
            "blocks": blocks,
        })
    }

    async fn call(&self, method: &str, body: &Value) -> Result<Value, ChannelError> {
        let url = format!("{}/{method}", self.config.api_base.trim_end_matches('/'));
        let resp = self
            .http
            .post(url)
            .bearer_auth(self.config.bot_token.expose())
            .json(body)
            .send()
            .await
            .map_err(|e| ChannelError::Unreachable {
                channel: NAME,
                detail: e.without_url().to_string(),
            })?;
        let status = resp.status().as_u16();
        let reply: Value = resp.json().await.map_err(|e| ChannelError::BadReply {
            channel: NAME,
            detail: e.without_url().to_string(),
        })?;
        if reply["ok"] != json!(true) {
            return Err(ChannelError::Refused {
                channel: NAME,
                status,
                detail: format!(
                    "{method}: {}",
                    text::truncate(reply["error"].as_str().unwrap_or("no error given"), 200)
                ),
            });
        }
        Ok(reply)
    }
}

impl Channel for Slack {
    fn name(&self) -> &'static str {
        NAME
    }

    fn takes_chosen_sets(&self) -> bool {
        true
    }

    fn takes_typed_answers(&self) -> bool {
        true
    }

    fn notify<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, Result<MessageRef, ChannelError>> {
        async move {
            let reply = self
                .call("chat.postMessage", &self.open_message(notice))
                .await?;
            match (reply["channel"].as_str(), reply["ts"].as_str()) {
                (Some(c), Some(ts)) => Ok(MessageRef(format!("{c} {ts}"))),
                _ => Err(ChannelError::BadReply {
                    channel: NAME,
                    detail: "chat.postMessage returned no channel and ts".to_owned(),
                }),
            }
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
            let Some((channel, ts)) = reference.0.split_once(' ') else {
                return Ok(());
            };
            let line = crate::ntfy::closed_line(closed);
            let full = format!("{line}\n\n{}\n\n{}", text::title(notice), text::body(notice));
            let body = json!({
                "channel": channel,
                "ts": ts,
                "text": escape_mrkdwn(&line),
                "blocks": [{"type": "section", "text": {"type": "plain_text", "text": fit_section(&full).text, "emoji": false}}],
            });
            self.call("chat.update", &body).await.map(|_| ())
        }
        .boxed()
    }
}

/// The largest interactivity body read, in bytes (this channel's messages come back as a
/// few KiB of form-encoded JSON); beyond, 413 and nothing is kept.
pub const MAX_BODY: usize = 128 * 1024;

/// How long an interactivity body may take to arrive once its headers checked; beyond, 408.
pub const BODY_DEADLINE: Duration = Duration::from_secs(5);

/// How many interactivity bodies are read at once (memory stays under this × [`MAX_BODY`]);
/// beyond, 503 (Slack retries).
pub const READING_AT_ONCE: usize = 16;

#[derive(Clone)]
struct Interactivity {
    answers: AnswerState,
    slack: Arc<Slack>,
    reading: Arc<tokio::sync::Semaphore>,
}

/// The interactivity endpoint, to be merged into the hub's router:
/// `POST /channels/slack/interactivity` (the app's Request URL). A request whose signature is
/// refused gets 401 [`SIGNATURE_REFUSED`] and changes nothing; a signed one gets 200 at once
/// and the clicking user an ephemeral reply (through `response_url`) saying what happened.
///
/// Before a byte of the body is read, the signature headers must be present and the timestamp
/// fresh (else 401); then at most [`READING_AT_ONCE`] bodies are read at once (else 503), each
/// at most [`MAX_BODY`] bytes (else 413) within [`BODY_DEADLINE`] (else 408), and only then is
/// the signature checked.
pub fn interactivity_router(answers: AnswerState, slack: Arc<Slack>) -> Router {
    Router::new()
        .route("/channels/slack/interactivity", post(interact))
        .with_state(Interactivity {
            answers,
            slack,
            reading: Arc::new(tokio::sync::Semaphore::new(READING_AT_ONCE)),
        })
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

async fn interact(State(s): State<Interactivity>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers: HeaderMap = parts.headers;
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    // The headers first: nothing is read from a request that cannot be Slack's.
    if let Err(e) = verify_headers(
        header("x-slack-request-timestamp"),
        header("x-slack-signature"),
        now_secs(),
    ) {
        tracing::warn!(reason = %e, "slack: interactivity request refused");
        return (StatusCode::UNAUTHORIZED, SIGNATURE_REFUSED).into_response();
    }
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return (StatusCode::PAYLOAD_TOO_LARGE, "Too large.").into_response();
    }
    let Ok(_reading) = s.reading.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "Busy; retry.").into_response();
    };
    let body: Bytes =
        match tokio::time::timeout(BODY_DEADLINE, axum::body::to_bytes(body, MAX_BODY)).await {
            Ok(Ok(b)) => b,
            Ok(Err(_)) => return (StatusCode::PAYLOAD_TOO_LARGE, "Too large.").into_response(),
            Err(_) => return (StatusCode::REQUEST_TIMEOUT, "Too slow.").into_response(),
        };
    if let Err(e) = verify(
        s.slack.config.signing_secret.expose(),
        header("x-slack-request-timestamp"),
        header("x-slack-signature"),
        &body,
        now_secs(),
    ) {
        tracing::warn!(reason = %e, "slack: interactivity request refused");
        return (StatusCode::UNAUTHORIZED, SIGNATURE_REFUSED).into_response();
    }
    let payload: Option<Value> = form_urlencoded::parse(&body)
        .find(|(k, _)| k == "payload")
        .and_then(|(_, v)| serde_json::from_str(&v).ok());
    let Some(p) = payload else {
        return (StatusCode::BAD_REQUEST, "No payload.").into_response();
    };
    let Some(response_url) = p["response_url"].as_str().map(str::to_owned) else {
        return StatusCode::OK.into_response();
    };
    let Some((carrier, given)) = action_of(&p) else {
        // A ticked checkbox, the Open button (a URL button): nothing to do.
        return StatusCode::OK.into_response();
    };
    let user = p["user"]["id"].as_str().unwrap_or("").to_owned();
    // Acknowledge at once (Slack's three seconds); the answer and the reply follow.
    tokio::spawn(async move {
        let text = if !s.slack.config.allowed_users.contains(&user) {
            NOT_ALLOWED.to_owned()
        } else {
            match carrier
                .split_once(':')
                .and_then(|(a, t)| Some((AskId(a.parse().ok()?), t)))
            {
                None => crate::Refusal::Unknown.to_string(),
                Some((ask, token)) => {
                    match s
                        .answers
                        .tokens
                        .redeem_with(ask, NAME, token, Some(user), given)
                        .await
                    {
                        Ok((_, summary)) => format!("Answer recorded: {summary}."),
                        Err(RedeemError::Refused(r)) => r.to_string(),
                        Err(e) => {
                            tracing::warn!(error = %e, "slack: the answer could not be stored");
                            "The answer could not be stored. Try again, or answer on the page."
                                .to_owned()
                        }
                    }
                }
            }
        };
        let reply = json!({"response_type": "ephemeral", "replace_original": false, "text": escape_mrkdwn(&text)});
        if let Err(e) = s.slack.http.post(&response_url).json(&reply).send().await {
            tracing::warn!(error = %e.without_url(), "slack: the reply could not be posted");
        }
    });
    StatusCode::OK.into_response()
}

/// What a `block_actions` payload asks for: the `{ask}:{token}` it carries and what the human
/// gave. `None` for actions that answer nothing (a ticked checkbox, the Open button).
///
/// - `answer-{i}` buttons: `value` is `{ask}:{token}`; [`Given::Tap`].
/// - `done`: `value` is `{ask}:{token}`; the ticked boxes come in
///   `state.values["ask-user-choices"]["choose"].selected_options[].value` (indices);
///   [`Given::Set`].
/// - `own` (the input, on Enter): `block_id` is `own:{ask}:{token}`, `value` the typed text;
///   [`Given::Own`].
fn action_of(p: &Value) -> Option<(String, Given)> {
    let a = &p["actions"][0];
    match a["action_id"].as_str()? {
        "done" => {
            let chosen = p["state"]["values"][CHOICES_BLOCK]["choose"]["selected_options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| o["value"].as_str()?.parse().ok())
                .collect();
            Some((a["value"].as_str()?.to_owned(), Given::Set(chosen)))
        }
        "own" => {
            let carrier = a["block_id"].as_str()?.strip_prefix("own:")?;
            let text = a["value"].as_str().unwrap_or("");
            Some((carrier.to_owned(), Given::Own(text.to_owned())))
        }
        id if id.starts_with("answer-") => Some((a["value"].as_str()?.to_owned(), Given::Tap)),
        _ => None,
    }
}
