//! The channels' latency figure: how long from an ask opened in the store to each channel's request
//! arriving at its service, for the channels a hub runs ([`ask_user_channels::start`], the
//! same code `ask-user hub serve --config` runs).
//!
//! The services are minimal in-process stand-ins on loopback (ntfy publish, Slack
//! `chat.postMessage`, Telegram `sendMessage`) that only timestamp the request and answer
//! success: the real services cannot be reached from here, and their own latency is not this
//! crate's. Email is left out (its cost is the SMTP server's). The store is SQLite in a temporary
//! directory, as a single hub has it.
//!
//! ```text
//! cargo run --release -p ask-user-channels --example dispatch_latency -- [ASKS]
//! ```
//!
//! Prints p50 / p99 / max per channel over ASKS sequential asks (default 200). The dispatcher
//! sends to the channels of one ask at once, so each channel's figure is its own (a slow
//! service would not show in another's).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench script

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ask_user_channels::config::ChannelsConfig;
use ask_user_channels::ntfy::NtfyConfig;
use ask_user_channels::slack::SlackConfig;
use ask_user_channels::telegram::TelegramConfig;
use ask_user_store::{Asker, NewAsk, Scope, Store};
use axum::Json;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

type Arrivals = Arc<Mutex<Vec<Instant>>>;

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

fn arrived(a: &Arrivals) -> usize {
    let mut v = a.lock().unwrap();
    v.push(Instant::now());
    v.len()
}

async fn ntfy(State(a): State<Arrivals>) -> Json<Value> {
    let n = arrived(&a);
    Json(json!({"id": format!("m{n}"), "event": "message"}))
}

async fn slack(State(a): State<Arrivals>, Json(body): Json<Value>) -> Json<Value> {
    let n = arrived(&a);
    Json(json!({"ok": true, "channel": body["channel"], "ts": format!("1700000000.{n:06}")}))
}

async fn telegram(State(a): State<Arrivals>) -> Json<Value> {
    let n = arrived(&a);
    Json(json!({"ok": true, "result": {"message_id": n, "chat": {"id": 42}}}))
}

async fn telegram_updates() -> Json<Value> {
    // getUpdates: nothing new (a long poll that answers after a while).
    tokio::time::sleep(Duration::from_secs(1)).await;
    Json(json!({"ok": true, "result": []}))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let asks: usize = std::env::args()
        .nth(1)
        .map_or(200, |a| a.parse().expect("ASKS is a number"));
    let names = ["ntfy", "telegram", "slack"];
    let arrivals: Vec<Arrivals> = names.iter().map(|_| Arrivals::default()).collect();
    let ntfy_url = serve(
        axum::Router::new()
            .route("/", post(ntfy))
            .with_state(arrivals[0].clone()),
    )
    .await;
    let tg_url = serve(
        axum::Router::new()
            .route("/botBENCH/sendMessage", post(telegram))
            .route("/botBENCH/getUpdates", post(telegram_updates))
            .with_state(arrivals[1].clone()),
    )
    .await;
    let slack_url = serve(
        axum::Router::new()
            .route("/api/chat.postMessage", post(slack))
            .with_state(arrivals[2].clone()),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!(
        "sqlite:{}",
        dir.path().join("s.sqlite3").display()
    ))
    .await
    .unwrap();
    let config = ChannelsConfig {
        ntfy: Some(NtfyConfig {
            server: ntfy_url,
            topic: "bench".into(),
            access_token: Some("tk_bench".into()),
            allow_public_topic: false,
        }),
        telegram: Some(TelegramConfig {
            api_base: tg_url,
            bot_token: "BENCH".into(),
            chats: vec![42],
            allowed_users: Vec::new(),
            poll_timeout_secs: 1,
        }),
        slack: Some(SlackConfig {
            api_base: format!("{slack_url}/api"),
            bot_token: "xoxb-bench".into(),
            signing_secret: "bench".into(),
            channel: "C1".into(),
            allowed_users: vec!["U1".into()],
        }),
        email: None,
        escalate: Vec::new(),
    };
    let _routes =
        ask_user_channels::start(&config, store.clone(), "https://hub.example.org").unwrap();
    let request = r#"{"questions":[{"id":"go","question":"Deploy now?","header":"Deploy","options":[{"label":"Yes"},{"label":"No"}],"multi_select":false}]}"#;
    let mut lat: Vec<Vec<Duration>> = names.iter().map(|_| Vec::new()).collect();
    for i in 0..asks {
        let ask = NewAsk::new(
            &Scope::HostKey(format!("bench-{i}")),
            request,
            Asker::default(),
        );
        let opened = Instant::now();
        store.open_ask(&ask).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        for (c, a) in arrivals.iter().enumerate() {
            loop {
                if let Some(t) = a.lock().unwrap().get(i).copied() {
                    lat[c].push(t.duration_since(opened));
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "{} got no request for ask {i}",
                    names[c]
                );
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
        }
    }
    println!(
        "ask opened -> channel request received, {asks} sequential asks, loopback stand-ins, SQLite store"
    );
    for (c, name) in names.iter().enumerate() {
        let mut v = lat[c].clone();
        v.sort();
        println!(
            "{name:9} p50 {:>8.2?}  p99 {:>8.2?}  max {:>8.2?}",
            percentile(&v, 0.5),
            percentile(&v, 0.99),
            v[v.len() - 1]
        );
    }
}
