//! The dispatcher (docs/contract.md §10): follows the store's change feed, sends each open ask
//! to each channel once, and updates every message it sent when the ask closes.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ask_user_core::Question;
use ask_user_store::{AskId, AskRecord, Change, Store, Timestamp};
use serde::Deserialize;

use crate::channel::{Channel, MessageRef, Notice, OfferedChoice};
use crate::token::{Choice, Tokens};

/// Builds the page URL of an ask (the hub's inbox at that ask).
pub type PageUrl = Arc<dyn Fn(AskId) -> String + Send + Sync>;

/// Sends open asks to channels and updates their messages on close.
///
/// Each ask reaches each channel once, across dispatchers in several processes or hub
/// replicas sharing one store: a dispatcher claims the send in the store
/// ([`Store::claim_channel_send`]) before sending, and the close update likewise
/// ([`Store::claim_channel_closes`]). A send that fails after its claim is not retried (at
/// most once; the human still has the page).
pub struct Dispatcher {
    store: Store,
    tokens: Tokens,
    channels: Vec<Arc<dyn Channel>>,
    public_url: String,
    page_url: PageUrl,
    /// How long after an ask was made each channel gets it (index = channel); missing: at once.
    delays: Vec<Duration>,
    /// Open asks already scheduled by this dispatcher.
    seen: HashSet<AskId>,
    /// Sends still to come: (due, ask, channel index).
    due: BTreeSet<(Timestamp, AskId, usize)>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("channels", &self.channels)
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct StoredRequest {
    questions: Vec<Question>,
}

impl Dispatcher {
    /// A dispatcher for the store `tokens` keeps its tokens in (share the same [`Tokens`] with
    /// [`crate::answer_router`]), sending to `channels` (each name once). `public_url` is the
    /// hub's base URL the answer endpoints hang below (a trailing `/` is dropped); `page_url`
    /// gives each ask's page.
    #[must_use]
    pub fn new(
        tokens: Tokens,
        channels: Vec<Arc<dyn Channel>>,
        public_url: &str,
        page_url: PageUrl,
    ) -> Dispatcher {
        Dispatcher {
            store: tokens.store().clone(),
            tokens,
            channels,
            public_url: public_url.trim_end_matches('/').to_owned(),
            page_url,
            delays: Vec::new(),
            seen: HashSet::new(),
            due: BTreeSet::new(),
        }
    }

    /// Escalation (docs/contract.md §10): channel `i` gets an ask `delays[i]` after it was made
    /// (its `created_at`, a time kept in the store, so a restarted dispatcher keeps the
    /// timing; what was sent is in the store too), and only while it is still open; the
    /// ladder stops at the first outcome. A channel without a delay (or a zero one) gets the
    /// ask at once.
    #[must_use]
    pub fn with_delays(mut self, delays: Vec<Duration>) -> Dispatcher {
        self.delays = delays;
        self
    }

    /// Runs until the store's feed ends: subscribes, sends every ask open now (and updates the
    /// messages of asks that closed meanwhile, as far as it is told of them), then follows each
    /// change. Channel and store failures are logged (without secrets) and do not stop it.
    ///
    /// # Errors
    /// The store's errors when subscribing.
    pub async fn run(mut self) -> ask_user_store::Result<()> {
        let mut feed = self.store.subscribe().await?;
        self.rescan().await;
        loop {
            let next = self.due.first().copied();
            let wait = next.map_or(Duration::from_secs(3600), |(at, _, _)| {
                Duration::from_millis(u64::try_from(at.0 - Timestamp::now().0).unwrap_or(0))
            });
            tokio::select! {
                change = feed.next() => match change {
                    Some(Change::Ask(id)) => self.on_ask(id).await,
                    Some(Change::Rescan) => self.rescan().await,
                    None => return Ok(()),
                },
                () = tokio::time::sleep(wait), if next.is_some() => self.fire_due().await,
            }
        }
    }

    /// Sends every step that is due, to asks still open.
    async fn fire_due(&mut self) {
        let now = Timestamp::now();
        while let Some(&(at, ask, i)) = self.due.first() {
            if at > now {
                break;
            }
            self.due.pop_first();
            match self.store.get(ask).await {
                Ok(rec) if rec.is_open() => self.send(&rec, i).await,
                Ok(_) | Err(_) => {}
            }
        }
    }

    async fn rescan(&mut self) {
        let open = match self.store.list_open().await {
            Ok(open) => open,
            Err(e) => {
                tracing::warn!(error = %e, "channels: could not list open asks");
                return;
            }
        };
        let open_ids: HashSet<AskId> = open.iter().map(|r| r.id).collect();
        for rec in open.into_iter().rev() {
            self.handle(rec).await;
        }
        let gone: Vec<AskId> = self
            .seen
            .iter()
            .filter(|id| !open_ids.contains(id))
            .copied()
            .collect();
        for id in gone {
            self.on_ask(id).await;
        }
    }

    async fn on_ask(&mut self, id: AskId) {
        match self.store.get(id).await {
            Ok(rec) => self.handle(rec).await,
            Err(ask_user_store::Error::NotFound(_)) => self.forget(id),
            Err(e) => tracing::warn!(ask = %id, error = %e, "channels: could not read the ask"),
        }
    }

    fn forget(&mut self, id: AskId) {
        self.seen.remove(&id);
        self.due.retain(|(_, a, _)| *a != id);
    }

    async fn handle(&mut self, rec: AskRecord) {
        let Some(closed) = &rec.closed else {
            if self.seen.insert(rec.id) {
                for i in 0..self.channels.len() {
                    let delay = self.delays.get(i).copied().unwrap_or(Duration::ZERO);
                    self.due.insert((rec.created_at.plus(delay), rec.id, i));
                }
                self.fire_due().await;
            }
            return;
        };
        // Closed is final: nothing more to send for it.
        self.forget(rec.id);
        let claimed = match self
            .store
            .claim_channel_closes(rec.id, Timestamp::now())
            .await
        {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(ask = %rec.id, error = %e, "channels: could not claim the close updates");
                return;
            }
        };
        if claimed.is_empty() {
            return;
        }
        let Some(notice) = self.notice(&rec) else {
            return;
        };
        for (name, reference) in claimed {
            let Some(ch) = self.channels.iter().find(|c| c.name() == name) else {
                continue;
            };
            if let Err(e) = ch.closed(&notice, closed, &MessageRef(reference)).await {
                tracing::warn!(ask = %rec.id, error = %e, "channels: could not update the message");
            }
        }
    }

    /// The notice for `rec` without choices; `None` when its request cannot be read.
    fn notice(&self, rec: &AskRecord) -> Option<Notice> {
        let req: StoredRequest = match serde_json::from_str(&rec.request) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(ask = %rec.id, error = %e, "channels: the stored request cannot be read");
                return None;
            }
        };
        Some(Notice {
            ask: rec.id,
            asker: rec.asker.clone(),
            questions: req.questions,
            page_url: (self.page_url)(rec.id),
            public_url: self.public_url.clone(),
            choices: Vec::new(),
            done: None,
            own: None,
            again: None,
        })
    }

    /// Sends `rec` to channel `i`, unless another dispatcher (or an earlier run) claimed it.
    async fn send(&mut self, rec: &AskRecord, i: usize) {
        let Some(ch) = self.channels.get(i).cloned() else {
            return;
        };
        let Some(mut notice) = self.notice(rec) else {
            return;
        };
        match self.store.claim_channel_send(rec.id, ch.name()).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(ask = %rec.id, error = %e, "channels: could not claim the send");
                return;
            }
        }
        if let Some(q) = one_tap_choices(&notice.questions) {
            for o in &q.options {
                let choice = Choice {
                    question: q.id.clone(),
                    label: o.label.clone(),
                    kind: crate::ChoiceKind::Option,
                    answers: None,
                };
                match self
                    .tokens
                    .issue(rec.id, ch.name(), &choice, ch.default_user())
                    .await
                {
                    Ok(token) => notice.choices.push(OfferedChoice {
                        label: o.label.clone(),
                        token,
                    }),
                    Err(e) => {
                        tracing::warn!(error = %e, "channels: no answer tokens; the page only");
                        notice.choices.clear();
                        break;
                    }
                }
            }
        }
        crate::token::issue_extra(&self.tokens, ch.as_ref(), &mut notice).await;
        // The same question answered before: that answer, whole in the message, one tap away.
        match self
            .store
            .given_before(rec.key.namespace(), rec.key.request_hash())
            .await
        {
            Ok(Some(given)) => {
                crate::token::issue_again(&self.tokens, ch.as_ref(), &mut notice, &given).await;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(ask = %rec.id, error = %e, "channels: cannot look for an answer given before");
            }
        }
        match ch.notify(&notice).await {
            Ok(r) => {
                if let Err(e) = self
                    .store
                    .set_channel_reference(rec.id, ch.name(), &r.0)
                    .await
                {
                    tracing::warn!(ask = %rec.id, error = %e, "channels: could not store the message reference");
                }
            }
            Err(e) => {
                tracing::warn!(ask = %rec.id, channel = ch.name(), error = %e, "channels: could not send");
            }
        }
    }
}

/// The question whose options may be answered with one tap: the only question of the ask,
/// single-select, with options. Anything else is answered on the page.
fn one_tap_choices(questions: &[Question]) -> Option<&Question> {
    match questions {
        [q] if !q.multi_select && !q.options.is_empty() => Some(q),
        _ => None,
    }
}

/// Why an escalation ladder could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EscalationError {
    /// A step is not `DURATION:CHANNEL`.
    #[error("--escalate: \"{0}\" is not DURATION:CHANNEL (e.g. 5m:telegram,20m:email)")]
    BadStep(String),
    /// A channel is named twice.
    #[error("--escalate: channel \"{0}\" is named twice")]
    Repeated(String),
}

/// Reads an escalation ladder, `5m:telegram,20m:email`: each step a duration (`humantime`:
/// `30s`, `5m`, `1h 30m`) and a channel name, in the order given. Channels the ladder does not
/// name get an ask at once.
///
/// # Errors
/// [`EscalationError`] for a malformed step or a channel named twice.
pub fn parse_escalation(spec: &str) -> Result<Vec<(Duration, String)>, EscalationError> {
    let mut out: Vec<(Duration, String)> = Vec::new();
    for step in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = || EscalationError::BadStep(step.to_owned());
        let (d, name) = step.split_once(':').ok_or_else(bad)?;
        let d = ask_user_core::time::parse_duration(d.trim()).map_err(|_| bad())?;
        let name = name.trim();
        if name.is_empty() {
            return Err(bad());
        }
        if out.iter().any(|(_, n)| n == name) {
            return Err(EscalationError::Repeated(name.to_owned()));
        }
        out.push((d, name.to_owned()));
    }
    Ok(out)
}

/// The per-channel delays for [`Dispatcher::with_delays`] from a ladder and the channels in
/// dispatcher order (by [`Channel::name`]).
#[must_use]
pub fn delays_for(ladder: &[(Duration, String)], channels: &[Arc<dyn Channel>]) -> Vec<Duration> {
    channels
        .iter()
        .map(|c| {
            ladder
                .iter()
                .find(|(_, n)| n == c.name())
                .map_or(Duration::ZERO, |(d, _)| *d)
        })
        .collect()
}
