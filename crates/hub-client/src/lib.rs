//! The hub answerer (docs/contract.md §9 "Agents"): asks the human through an ask-user hub.
//!
//! [`HubAnswerer`] implements [`UserInteraction`]: it posts the ask (the canonical request, the
//! caller's [`CallerContext`] and a call key) to a hub, then waits for the outcome by
//! long-poll. When a hub goes away mid-wait (a replica killed, a network blip) it reconnects
//! with backoff — to the next of its hub URLs, any replica of one inbox — and re-attaches by
//! posting the same ask with the same key: the store hands back the same ask, or the answer
//! given meanwhile. It never hangs on an unreachable hub:
//!
//! - no hub answers the first post within [`HubClientConfig::connect_timeout`] (each URL tried
//!   once) → [`AskError::Unavailable`] at once, so `--via` moves on to the next answerer;
//! - a hub refuses the token → [`AskError::Unavailable`] naming the hub's words;
//! - once the ask is posted, **transient is transient** (docs/contract.md §8 "Exactly once,
//!   made precise"): refused connections, resets, 5xx and 429 (honouring `Retry-After`) never
//!   end the call; it keeps its key and re-attaches until the call's own budget (or its
//!   caller) ends it. After [`HubClientConfig::give_up_after`] without a hub it says so once
//!   in the log and keeps trying. Only a refusal ends it: the token revoked meanwhile (401:
//!   the model reads [`REVOKED_ON_HUB`]) or another 4xx.
//!
//! **Delivery order**: the answerer never tells the hub "delivered" itself. It leaves the
//! outcome it read with the config's [`Upstream`]; the host, once it stored the outcome and
//! wrote the model's bytes, calls [`Upstream::delivered`]. Dying in between means the retry
//! (same key) gets the answer again, never that it is lost.
//!
//! **The hub's compare-and-set is the race's other side** ([`ask_user_core::RemoteOutcome`]):
//! once posted, the ask is registered with the race, so an ending (the call's own budget ran
//! out, the ask withdrawn) first withdraws the hub's ask (`DELETE`, bounded). When the hub
//! had already taken the human's answer — the human was told "sent" — the DELETE's reply says
//! so and that answer is the call's outcome, never "no answer" (docs/contract.md §8).
//! When `cancel` fires because the race was settled elsewhere the ask is withdrawn the same
//! way (best effort). When its caller went away (a signal, closed stdout, a host cancel: the
//! race is aborted) nothing is withdrawn: the dropped long-poll detaches the ask on the hub,
//! which keeps it for the retry.

mod upstream;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ask_user_core::{
    Answers, AskError, AskUserQuestionRequest, BoxFuture, Decide, Decision, Offer, RemoteOutcome,
    Secret, Settled, UserInteraction,
};
use tokio_util::sync::CancellationToken;

pub use upstream::Upstream;

pub use ask_user_hub_wire::CallerContext;
use ask_user_hub_wire::{AskState, AskView, ErrorBody, PostAsk};

/// Where and how to reach the hub.
#[derive(Debug, Clone)]
pub struct HubClientConfig {
    /// Hub base URLs (`http://host:port`), any replica of one inbox; tried in order.
    pub urls: Vec<String>,
    /// The agent's bearer token (redacted in `Debug`).
    pub token: Secret,
    /// Who asks.
    pub context: CallerContext,
    /// The call key (`--key`, `ASK_USER_CALL_ID`); `None`: a random key per ask, enough to
    /// re-attach after a reconnect within this process.
    pub key: Option<String>,
    /// How long one connection attempt may take.
    pub connect_timeout: Duration,
    /// How long one long-poll waits on the hub (the request's own timeout is this plus a
    /// margin).
    pub poll: Duration,
    /// Once posted, how long without any hub answering before the log says so (the call keeps
    /// trying: see the crate doc).
    pub give_up_after: Duration,
    /// Where the outcome read from the hub waits until the host delivered it (see the crate
    /// doc); clones share it.
    pub upstream: Upstream,
    /// How long the first post keeps trying a hub that is there but failing (5xx, 429) — and,
    /// for a keyed call, one that cannot be reached (refused, reset: a hub restarting, whose
    /// store may hold this call's question) — before the ask is unavailable. Bounded by the
    /// call's own budget too. Default 30 s.
    pub first_post_patience: Duration,
    /// The host's time budget per ask (`--timeout`), if it has one: the ask carries its
    /// deadline (now + this, when the ask starts) so the hub's page counts down to it. The
    /// budget itself is kept by the core, not by this answerer. Default `None`.
    pub timeout: Option<Duration>,
}

impl HubClientConfig {
    /// A configuration with the default timings (3 s connect, 25 s polls, give up after 2 min
    /// without a hub, 30 s of patience for the first post).
    #[must_use]
    pub fn new(urls: Vec<String>, token: impl Into<Secret>) -> HubClientConfig {
        HubClientConfig {
            urls,
            token: token.into(),
            context: CallerContext::default(),
            key: None,
            connect_timeout: Duration::from_secs(3),
            poll: Duration::from_secs(25),
            give_up_after: Duration::from_secs(120),
            first_post_patience: Duration::from_secs(30),
            upstream: Upstream::default(),
            timeout: None,
        }
    }
}

/// The answerer that asks through a hub.
#[derive(Debug, Clone)]
pub struct HubAnswerer {
    config: HubClientConfig,
    http: reqwest::Client,
}

/// One attempt's failure.
enum Failure {
    /// The hub could not be reached or broke mid-request (refused, reset, timed out): try
    /// again (another URL).
    Unreachable(String),
    /// The hub was unavailable (5xx) or asked to slow down (429, with its `Retry-After` when
    /// given): try again (another URL, or the same one when it said when).
    Transient(String, Option<Duration>),
    /// The hub does not know the ask (404: purged, or a replica's store lost it): post it
    /// again with its key.
    Unknown(String),
    /// The hub refused: give up with this text.
    Refused(String),
    /// The hub refused the token (401). On the first post: a wrong token; once the ask was
    /// posted with it: the token was revoked meanwhile.
    Unauthorized(String),
}

/// Whether `url` is plain `http://` to a host that is not this machine (`localhost` or a
/// loopback address): a bearer token sent there crosses the network in clear.
#[must_use]
pub fn plain_http(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url.trim()) else {
        return false;
    };
    if parsed.scheme() != "http" {
        return false;
    }
    let host = parsed
        .host_str()
        .unwrap_or("")
        .trim_start_matches('[')
        .trim_end_matches(']');
    let local = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    !local
}

/// The model-facing text of an ask the hub closed because this agent's token was revoked.
pub const REVOKED_ON_HUB: &str = "the hub revoked this agent's token while the question was open: nothing the human answers reaches this agent; ask in plain text, or ask the hub's owner for a new token";

/// `timeout` from now, as Unix milliseconds (saturating).
fn deadline_ms(timeout: Duration) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.saturating_add(timeout).as_millis()).unwrap_or(i64::MAX)
}

/// How long an ending keeps trying to withdraw the hub's ask while the hub cannot be reached
/// or fails (5xx, 429).
const WITHDRAW_PATIENCE: Duration = Duration::from_secs(5);

/// The longest `Retry-After` honoured (a hub asking for more is retried after this).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

impl HubAnswerer {
    /// An answerer for `config`.
    ///
    /// # Errors
    /// [`AskError::Unavailable`] when no URL is given, a URL is plain `http://` to a host
    /// other than this machine (the token would cross the network in clear: [`plain_http`]),
    /// or the HTTP client cannot be built.
    pub fn new(config: HubClientConfig) -> Result<HubAnswerer, AskError> {
        if config.urls.is_empty() {
            return Err(AskError::Unavailable(
                "no hub URL given (--hub URL or ASK_USER_HUB)".to_owned(),
            ));
        }
        if let Some(url) = config.urls.iter().find(|u| plain_http(u)) {
            return Err(AskError::Unavailable(format!(
                "refusing to send the agent's token over plain http to {url}: give the hub's https:// address (plain http only to this machine: localhost, 127.0.0.1, [::1])"
            )));
        }
        let http = http_client()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| AskError::Unavailable(format!("cannot build the HTTP client: {e}")))?;
        Ok(HubAnswerer { config, http })
    }

    fn url(&self, i: usize, path: &str) -> String {
        let base = &self.config.urls[i % self.config.urls.len()];
        format!("{}{path}", base.trim_end_matches('/'))
    }

    async fn send(
        &self,
        req: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<Option<AskView>, Failure> {
        let resp = req
            .bearer_auth(self.config.token.expose())
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| Failure::Unreachable(describe(&e)))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
        let body = resp
            .bytes()
            .await
            .map_err(|e| Failure::Unreachable(describe(&e)))?;
        if status.is_success() {
            if body.is_empty() {
                return Ok(None);
            }
            return serde_json::from_slice(&body)
                .map(Some)
                .map_err(|e| Failure::Transient(format!("unreadable answer: {e}"), None));
        }
        // Every refusal of the hub is an `ErrorBody`; a proxy's own page is not.
        let text = serde_json::from_slice::<ErrorBody>(&body)
            .map(|refusal| refusal.error)
            .unwrap_or_else(|_| format!("HTTP {status}"));
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            Err(Failure::Transient(text, retry_after))
        } else if status == reqwest::StatusCode::NOT_FOUND {
            Err(Failure::Unknown(text))
        } else if status == reqwest::StatusCode::UNAUTHORIZED {
            Err(Failure::Unauthorized(text))
        } else {
            Err(Failure::Refused(text))
        }
    }

    async fn post(&self, i: usize, body: &serde_json::Value) -> Result<AskView, Failure> {
        let req = self
            .http
            .post(self.url(i, "/v1/asks"))
            .header("content-type", "application/json")
            .body(body.to_string());
        self.send(req, self.config.connect_timeout + Duration::from_secs(10))
            .await?
            .ok_or_else(|| Failure::Transient("empty answer".to_owned(), None))
    }

    async fn poll(&self, i: usize, id: i64) -> Result<AskView, Failure> {
        let url = self.url(
            i,
            &format!("/v1/asks/{id}?wait={}", self.config.poll.as_secs_f64()),
        );
        let req = self.http.get(url);
        self.send(req, self.config.poll + Duration::from_secs(10))
            .await?
            .ok_or_else(|| Failure::Transient("empty answer".to_owned(), None))
    }

    /// Withdraws ask `id` (`?reason=timed_out` when the call's own budget ran out, so the
    /// hub's page says "timed out"): the ask as the hub holds it after the withdraw — closed
    /// by it, or by the human's answer that came first — or `None` when the hub did not say.
    ///
    /// Every replica (URL) is asked at once, the `i`th — where the ask was posted — first in
    /// the list, and the first reply that is not a failure to reach it stands (replicas share
    /// one store, and a withdraw is idempotent): a replica that hangs does not hold the
    /// withdraw past the moments a losing answerer has to withdraw. While none can be reached,
    /// or all answer a transient error (a hub restarting as the call ends), they are asked
    /// again for up to [`WITHDRAW_PATIENCE`]: an ask left open there would take an answer, and
    /// tell its human "sent", for a call that already printed its ending. `Err` when it still
    /// could not be withdrawn.
    async fn withdraw(
        &self,
        i: usize,
        id: i64,
        timed_out: bool,
    ) -> Result<Option<AskView>, Failure> {
        let reason = if timed_out { "?reason=timed_out" } else { "" };
        let n = self.config.urls.len();
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let tries = (0..n).map(|k| {
                let req = self
                    .http
                    .delete(self.url(i + k, &format!("/v1/asks/{id}{reason}")));
                Box::pin(async move {
                    match self.send(req, Duration::from_secs(3)).await {
                        Err(e @ (Failure::Unreachable(_) | Failure::Transient(..))) => Err(e),
                        done => Ok(done),
                    }
                })
            });
            match futures::future::select_ok(tries).await {
                Ok((done, _)) => return done,
                Err(Failure::Unreachable(t) | Failure::Transient(t, _))
                    if started.elapsed() < WITHDRAW_PATIENCE =>
                {
                    tracing::debug!(error = %t, "withdrawing on the hub; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// On `cancel`: withdraws the ask when the call itself ended (see the crate doc), never
    /// when its caller went away, nor again when the race's ending already closed it
    /// ([`HubSide`]).
    async fn cancelled(&self, side: &HubSide, decide: &Decide) {
        let (at, id) = side.at();
        match decide.settled() {
            None | Some(Settled::Aborted) => {
                tracing::info!("the caller went away: the hub ask {id} stays for its retry");
            }
            // Not again for the ask the ending withdrew; one a re-post made meanwhile, or any
            // when the ending withdrew nothing (another answerer won), is withdrawn here.
            Some(settled) if side.withdrawn() != Some(id) => {
                let timed_out = matches!(settled, Settled::TimedOut(_));
                let _ = self.withdraw(at, id, timed_out).await;
            }
            Some(_) => {}
        }
    }

    async fn run(
        &self,
        request: &AskUserQuestionRequest,
        cancel: &CancellationToken,
        decide: &Decide,
    ) -> Result<Answers, AskError> {
        let key = self.config.key.clone().unwrap_or_else(random_key);
        let arguments: serde_json::Value =
            serde_json::from_str(&request.to_canonical_json()).unwrap_or_default();
        let body = serde_json::to_value(PostAsk {
            arguments,
            context: self.config.context.clone(),
            key: Some(key),
            deadline: self.config.timeout.map(deadline_ms),
        })
        .unwrap_or_default();
        let n = self.config.urls.len();
        let (mut at, mut view) = match self.first_post(&body, cancel).await {
            Ok(posted) => posted,
            Err(error) => return Err(error),
        };
        // The hub's own compare-and-set is this race's other side: an ending first withdraws
        // the hub's ask, and an answer the hub took first is the outcome.
        let side = Arc::new(HubSide {
            answerer: self.clone(),
            at: Mutex::new((at, view.id)),
            withdrawn: Mutex::new(None),
        });
        decide.add_remote(side.clone());
        let mut backoff = Duration::from_millis(100);
        let mut last_ok = tokio::time::Instant::now();
        let mut need_post = false;
        let mut said_lost = false;
        loop {
            side.moved(at, view.id);
            if !view.state.is_open() {
                return self.finish(at, view, decide).await;
            }
            let (posting, step_at, step_id, body) = (need_post, at, view.id, &body);
            let step = async move {
                if posting {
                    self.post(step_at, body).await
                } else {
                    self.poll(step_at, step_id).await
                }
            };
            tokio::pin!(step);
            let step = tokio::select! {
                s = &mut step => s,
                () = cancel.cancelled() => {
                    // A re-post is let finish (for a bounded time): the hub may have made a new
                    // ask of it, which an ending must withdraw too, or that ask would take an
                    // answer, and tell its human "sent", for a call that already ended.
                    if posting
                        && let Ok(Ok(v)) = tokio::time::timeout(WITHDRAW_PATIENCE, &mut step).await
                    {
                        side.moved(step_at, v.id);
                    }
                    self.cancelled(&side, decide).await;
                    return Err(AskError::Cancelled);
                }
            };
            match step {
                Ok(v) => {
                    view = v;
                    need_post = false;
                    backoff = Duration::from_millis(100);
                    last_ok = tokio::time::Instant::now();
                }
                Err(Failure::Refused(t)) => {
                    return Err(AskError::Failed(format!(
                        "the hub {} refused: {t}",
                        self.config.urls[at % n]
                    )));
                }
                // The token took the post, so a 401 now means it was revoked meanwhile.
                Err(Failure::Unauthorized(t)) => {
                    tracing::warn!(hub = %self.config.urls[at % n], "{t}");
                    return Err(AskError::Failed(REVOKED_ON_HUB.to_owned()));
                }
                Err(Failure::Transient(t, _) | Failure::Unknown(t) | Failure::Unreachable(t))
                    if cancel.is_cancelled() =>
                {
                    tracing::debug!(error = %t, "cancelled while the hub was away");
                    self.cancelled(&side, decide).await;
                    return Err(AskError::Cancelled);
                }
                Err(failure) => {
                    let (t, wait) = match failure {
                        Failure::Transient(t, retry_after) => (t, retry_after),
                        Failure::Unknown(t)
                        | Failure::Unreachable(t)
                        | Failure::Refused(t)
                        | Failure::Unauthorized(t) => (t, None),
                    };
                    if !said_lost && last_ok.elapsed() >= self.config.give_up_after {
                        said_lost = true;
                        tracing::warn!(
                            "no hub answered for {}s (last: {}: {t}); still trying: the question stays in the inbox",
                            self.config.give_up_after.as_secs(),
                            self.config.urls[at % n]
                        );
                    }
                    tracing::debug!(hub = %self.config.urls[at % n], error = %t, "hub lost; reconnecting");
                    // A hub that asked to slow down is asked again (the same one) when it said.
                    if wait.is_none() {
                        at = (at + 1) % n;
                    }
                    need_post = true;
                    let pause = wait.unwrap_or(backoff);
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = cancel.cancelled() => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// The first post: each URL in turn. A refusal ends it at once (unavailable, naming the
    /// hub's words). A hub that answers but fails (5xx, 429 with its `Retry-After`) is retried
    /// for [`HubClientConfig::first_post_patience`]; so is an unreachable one when the call is
    /// keyed (a re-run: its question may be open on a hub that is restarting). An unkeyed call
    /// that reaches no hub in one round is unavailable at once (`--via` moves on, no hang).
    async fn first_post(
        &self,
        body: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<(usize, AskView), AskError> {
        let n = self.config.urls.len();
        let started = tokio::time::Instant::now();
        let keyed = self.config.key.is_some();
        let mut backoff = Duration::from_millis(100);
        let mut said = false;
        let mut i = 0;
        let mut errors = Vec::new();
        let mut reached_any = false;
        loop {
            let step = tokio::select! {
                s = self.post(i % n, body) => s,
                () = cancel.cancelled() => return Err(AskError::Cancelled),
            };
            let url = &self.config.urls[i % n];
            let (t, wait, reached) = match step {
                Ok(v) => return Ok((i % n, v)),
                Err(Failure::Refused(t) | Failure::Unauthorized(t)) => {
                    let reason = format!("the hub {url} refused the ask: {t}");
                    tracing::warn!("{reason}");
                    return Err(AskError::Unavailable(reason));
                }
                Err(Failure::Transient(t, wait)) => (t, wait, true),
                Err(Failure::Unknown(t)) => (t, None, true),
                Err(Failure::Unreachable(t)) => (t, None, false),
            };
            errors.push(format!("{url}: {t}"));
            reached_any |= reached;
            i += 1;
            if i % n != 0 {
                continue;
            }
            let retry =
                (keyed || reached_any) && started.elapsed() < self.config.first_post_patience;
            if !retry {
                let reason = format!("no hub reachable ({})", errors.join("; "));
                // The model reads only "nobody can answer"; the human reading the logs needs why.
                tracing::warn!("{reason}");
                return Err(AskError::Unavailable(reason));
            }
            if !said {
                said = true;
                tracing::warn!(
                    "the hub {url} did not take the ask ({t}); trying again for up to {}s",
                    self.config.first_post_patience.as_secs()
                );
            }
            errors.clear();
            reached_any = false;
            let pause = wait.unwrap_or(backoff);
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = cancel.cancelled() => return Err(AskError::Cancelled),
            }
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    /// Offers the hub's outcome into the ask's race; once the race accepted it, leaves it with
    /// the [`Upstream`] for the host to confirm (decided before acknowledged, docs/contract.md
    /// §4; delivered last, §8).
    async fn finish(&self, at: usize, view: AskView, decide: &Decide) -> Result<Answers, AskError> {
        let (offer, result) = match view.state {
            AskState::Answered => {
                let answers = view
                    .answers
                    .and_then(|a| serde_json::from_value::<Answers>(a).ok())
                    .ok_or_else(|| {
                        AskError::Failed("the hub sent an answer without answers".to_owned())
                    })?;
                (Offer::Answers(answers.clone()), Ok(answers))
            }
            AskState::Dismissed => (Offer::Dismiss, Err(AskError::Dismissed)),
            AskState::Revoked => return Err(AskError::Failed(REVOKED_ON_HUB.to_owned())),
            other => {
                return Err(AskError::Failed(format!(
                    "the question was closed on the hub ({})",
                    other.as_str().replace('_', " ")
                )));
            }
        };
        let answers = result.as_ref().ok().cloned();
        match decide.offer(offer).await {
            Decision::Accepted => {
                // Told "delivered" by the host once stored and written (see the crate doc).
                self.leave_upstream(at, view.id, answers.as_ref());
                result
            }
            // Another answer settled the race first: the hub's is not the outcome, so it is
            // not marked delivered.
            Decision::Refused(_) => Err(AskError::Cancelled),
            Decision::Invalid(invalid) => Err(AskError::Failed(format!(
                "the hub's answer does not fit the questions: {invalid}"
            ))),
            Decision::NotRecorded(why) => Err(AskError::Failed(format!(
                "the hub's answer could not be recorded: {why}"
            ))),
            _ => Err(AskError::Cancelled),
        }
    }
}

impl HubAnswerer {
    /// Leaves the outcome read from the hub for the host to confirm once delivered.
    fn leave_upstream(&self, at: usize, id: i64, answers: Option<&Answers>) {
        self.config.upstream.leave(upstream::Pending {
            http: self.http.clone(),
            url: self.url(at, &format!("/v1/asks/{id}/delivered")),
            token: self.config.token.clone(),
            answers: answers.cloned(),
        });
    }
}

/// The hub's side of an ask's race ([`RemoteOutcome`]): where the ask is now (hub, id) and
/// whether an ending closed it already.
struct HubSide {
    answerer: HubAnswerer,
    /// (index of the hub URL, ask id) the answerer last reached it at.
    at: Mutex<(usize, i64)>,
    /// The ask [`RemoteOutcome::close`] withdrew, or tried to for as long as a withdraw may take
    /// (the answerer's own cancel then does not try it again): a re-post in flight as the call
    /// ended may have made another, which the answerer's cancel then withdraws.
    withdrawn: Mutex<Option<i64>>,
}

impl HubSide {
    fn at(&self) -> (usize, i64) {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn moved(&self, at: usize, id: i64) {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner) = (at, id);
    }

    fn withdrawn(&self) -> Option<i64> {
        *self
            .withdrawn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl RemoteOutcome for HubSide {
    /// Withdraws the hub's ask; when the hub's compare-and-set had already taken the human's
    /// answer (or dismissal) — the human was told "sent" — that is the outcome, left with the
    /// [`Upstream`] for the host to confirm once printed.
    fn close<'a>(&'a self, ending: &'a Settled) -> BoxFuture<'a, Option<Offer>> {
        Box::pin(async move {
            let (at, id) = self.at();
            let timed_out = matches!(ending, Settled::TimedOut(_));
            let withdrawn = self.answerer.withdraw(at, id, timed_out).await;
            // Tried, with all the patience there is: the answerer's cancel does not try again.
            *self
                .withdrawn
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(id);
            let view = withdrawn.ok()??;
            match view.state {
                AskState::Answered => {
                    let answers = view
                        .answers
                        .and_then(|a| serde_json::from_value::<Answers>(a).ok())?;
                    tracing::info!(
                        "the hub took the human's answer as the call ended: that is the outcome"
                    );
                    self.answerer.leave_upstream(at, id, Some(&answers));
                    Some(Offer::Answers(answers))
                }
                AskState::Dismissed => {
                    self.answerer.leave_upstream(at, id, None);
                    Some(Offer::Dismiss)
                }
                _ => None,
            }
        })
    }
}

impl UserInteraction for HubAnswerer {
    fn ask_decided<'a>(
        &'a self,
        request: &'a AskUserQuestionRequest,
        cancel: CancellationToken,
        decide: Decide,
    ) -> BoxFuture<'a, Result<Answers, AskError>> {
        Box::pin(async move { self.run(request, &cancel, &decide).await })
    }
}

fn random_key() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        return format!("{:?}", std::time::SystemTime::now());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A reqwest client builder whose TLS uses ring, the workspace's one crypto provider (installed
/// as rustls's process default; a provider installed before is kept).
fn http_client() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn plain_http_is_only_for_this_machine() {
        let cases = [
            ("http://127.0.0.1:8765", false),
            ("http://127.9.9.9:1", false),
            ("http://localhost:8765", false),
            ("http://LOCALHOST", false),
            ("http://[::1]:8765", false),
            ("https://hub.example.com", false),
            ("https://10.0.0.5:8765", false),
            ("http://hub.example.com", true),
            ("http://10.0.0.5:8765", true),
            ("http://[fe80::1]:8765", true),
            ("http://localhost.evil.example", true),
            ("http://127.0.0.1.nip.io", true),
            (" http://hub.example.com ", true),
        ];
        for (url, plain) in cases {
            assert_eq!(plain_http(url), plain, "{url}");
        }
    }

    #[test]
    fn the_answerer_refuses_to_send_its_token_over_plain_http_beyond_loopback() {
        let urls = vec![
            "http://127.0.0.1:1".to_owned(),
            "http://hub.example.com:8765".to_owned(),
        ];
        let Err(AskError::Unavailable(text)) =
            HubAnswerer::new(HubClientConfig::new(urls, "auh_secret"))
        else {
            panic!("a plain-http hub beyond loopback was accepted");
        };
        assert_eq!(
            text,
            "refusing to send the agent's token over plain http to http://hub.example.com:8765: give the hub's https:// address (plain http only to this machine: localhost, 127.0.0.1, [::1])"
        );
        assert!(!text.contains("auh_secret"));
        for ok in ["http://127.0.0.1:1", "https://hub.example.com"] {
            assert!(
                HubAnswerer::new(HubClientConfig::new(vec![ok.to_owned()], "t")).is_ok(),
                "{ok}"
            );
        }
    }

    #[test]
    fn the_deadline_is_now_plus_the_budget_in_unix_ms() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let d = deadline_ms(Duration::from_secs(90));
        let d = u128::try_from(d).unwrap();
        assert!(
            d >= now + 90_000 && d < now + 90_000 + 60_000,
            "{d} vs {now}"
        );
        assert_eq!(deadline_ms(Duration::MAX), i64::MAX);
    }
}
