//! Shared test plumbing: loopback servers, asks in a memory store, the dispatcher running.

use std::net::SocketAddr;
use std::sync::Arc;

use ask_user_channels::ntfy::{Ntfy, NtfyConfig};
use ask_user_channels::telegram::{Telegram, TelegramConfig};
use ask_user_channels::{AnswerState, Channel, Dispatcher, Tokens, answer_router};
use ask_user_store::{AskId, Asker, NewAsk, Opened, Outcome, Responder, Scope, Store};
use ask_user_test_support::fakes::telegram::BOT_TOKEN;

/// Serves `app` on a fresh loopback port, in the background.
pub(crate) async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// A store, the token table, the answer endpoints on loopback, and a dispatcher running with
/// `channels`.
pub(crate) struct Hub {
    pub(crate) store: Store,
    pub(crate) tokens: Tokens,
    pub(crate) url: String,
}

impl Hub {
    pub(crate) async fn start(channels: Vec<Arc<dyn Channel>>) -> Hub {
        let store = Store::memory();
        let tokens = Tokens::new(store.clone());
        let addr = serve(answer_router(AnswerState {
            tokens: tokens.clone(),
        }))
        .await;
        let url = format!("http://{addr}");
        let page_base = url.clone();
        let d = Dispatcher::new(
            tokens.clone(),
            channels,
            &format!("{url}/"),
            Arc::new(move |id: AskId| format!("{page_base}/inbox#ask-{id}")),
        );
        tokio::spawn(d.run());
        Hub { store, tokens, url }
    }

    /// Ask `ask` is closed as answered with `answer` on `channel` by `user`.
    pub(crate) async fn assert_answered(
        &self,
        ask: AskId,
        answer: serde_json::Value,
        channel: &str,
        user: Option<String>,
    ) {
        assert_eq!(
            self.store.get(ask).await.unwrap().closed.unwrap().outcome,
            Outcome::Answered {
                answer,
                by: Responder {
                    answerer: "channel".into(),
                    channel: Some(channel.into()),
                    user,
                    submission: None,
                },
            }
        );
    }

    /// Opens an ask of `request` (canonical JSON) in its own scope `key`, asked by `agent`.
    pub(crate) async fn ask(&self, key: &str, request: &str) -> AskId {
        let asker = Asker {
            agent: Some("claude-code".into()),
            project: Some("~/src/app".into()),
            ..Asker::default()
        };
        let ask = NewAsk::new(&Scope::HostKey(key.into()), request, asker);
        match self.store.open_ask(&ask).await.unwrap() {
            Opened::Created(r) => r.id,
            other => panic!("expected a new ask, got {other:?}"),
        }
    }
}

/// A one-question single-select request with these option labels.
pub(crate) fn single_select(question: &str, header: &str, labels: &[&str]) -> String {
    one_question(question, header, labels, false)
}

/// A one-question multi-select request with these option labels.
pub(crate) fn multi_select(question: &str, header: &str, labels: &[&str]) -> String {
    one_question(question, header, labels, true)
}

fn one_question(question: &str, header: &str, labels: &[&str], multi_select: bool) -> String {
    let options: Vec<_> = labels
        .iter()
        .map(|l| serde_json::json!({"label": l}))
        .collect();
    serde_json::json!({"questions": [{
        "id": "q1", "question": question, "header": header,
        "options": options, "multi_select": multi_select,
    }]})
    .to_string()
}

/// The ntfy channel publishing to topic `asks` of the server at `server` with `token`.
pub(crate) fn ntfy_channel(server: &str, token: &str) -> Ntfy {
    Ntfy::new(NtfyConfig {
        server: server.to_owned(),
        topic: "asks".into(),
        access_token: Some(token.into()),
        allow_public_topic: false,
    })
    .unwrap()
}

/// The Telegram channel of the fake's bot at `api_base`, in `chat`, answered by the user of
/// the same id.
pub(crate) fn telegram_channel(api_base: &str, chat: i64) -> Telegram {
    Telegram::new(TelegramConfig {
        api_base: api_base.to_owned(),
        bot_token: BOT_TOKEN.into(),
        chats: vec![chat],
        allowed_users: vec![chat],
        poll_timeout_secs: 1,
    })
}
