//! `ask-user history [--open] [--json]`: the store's asks, newest first (docs/contract.md §8
//! "States"): the open ones (newest asked first), then the closed ones (newest closed first).

use ask_user_host::durable::{STORE_ENV, StoreArgs};
use ask_user_store::{AskRecord, HistoryCursor, HistoryPage, Outcome, Timestamp};
use serde_json::{Value, json};

use crate::Ended;

/// Options of `ask-user history`.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// Only the open asks (attached or detached).
    #[arg(long)]
    open: bool,
    /// One JSON array instead of lines.
    #[arg(long)]
    json: bool,
    /// The store: sqlite:PATH, postgres://…, or memory (default: the SQLite file in
    /// ~/.local/state/ask-user/).
    #[arg(long, value_name = "URL", env = STORE_ENV)]
    store: Option<String>,
}

/// How many closed asks one store read brings back.
const PAGE: u32 = 500;

pub(crate) fn run(args: &HistoryArgs) -> Ended {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Ended::Usage(format!("cannot start: {e}")),
    };
    let store_args = StoreArgs {
        store: args.store.clone(),
        key: None,
    };
    let listed = runtime.block_on(async {
        let store = store_args.open().await?;
        let mut asks = store.list_open().await.map_err(|e| e.to_string())?;
        if !args.open {
            let mut after: Option<HistoryCursor> = None;
            loop {
                let page = store
                    .history(HistoryPage { after, limit: PAGE })
                    .await
                    .map_err(|e| e.to_string())?;
                let Some(last) = page.last() else { break };
                after = HistoryCursor::after(last);
                let full = page.len() == PAGE as usize;
                asks.extend(page);
                if !full || after.is_none() {
                    break;
                }
            }
        }
        Ok::<_, String>(asks)
    });
    let asks = match listed {
        Ok(asks) => asks,
        Err(message) => return Ended::Usage(message),
    };
    let stdout = if args.json {
        Value::Array(asks.iter().map(to_json).collect()).to_string()
    } else {
        asks.iter().map(line).collect::<Vec<_>>().join("\n")
    };
    Ended::Printed { stdout, status: 0 }
}

/// The state shown for an ask: `open`, `detached`, or the outcome's state name.
pub(crate) fn state(rec: &AskRecord) -> &'static str {
    match &rec.closed {
        None if rec.attached => "open",
        None => "detached",
        Some(closed) => closed.outcome.state_name(),
    }
}

/// RFC 3339 (seconds, UTC) of a stored time.
pub(crate) fn time(t: Timestamp) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(t.0.max(0).unsigned_abs());
    humantime::format_rfc3339_seconds(at).to_string()
}

/// The first question of a stored request, with its header: `[Header] Question? (+N more)`.
pub(crate) fn summary(request: &str) -> String {
    let parsed: Value = serde_json::from_str(request).unwrap_or(Value::Null);
    let questions = parsed["questions"].as_array().cloned().unwrap_or_default();
    let Some(first) = questions.first() else {
        return String::new();
    };
    let mut text = String::new();
    if let Some(header) = first["header"].as_str() {
        text.push_str(&format!("[{header}] "));
    }
    text.push_str(first["question"].as_str().unwrap_or(""));
    if questions.len() > 1 {
        text.push_str(&format!(" (+{} more)", questions.len() - 1));
    }
    one_line(&text)
}

/// `text` on one line with every control character (escape sequences included) and bidi
/// control shown as a space: the inbox and history never let model text move the cursor.
pub(crate) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if c.is_control() || bidi { ' ' } else { c }
        })
        .collect()
}

fn line(rec: &AskRecord) -> String {
    let mut text = format!(
        "#{} {} {} {}",
        rec.id,
        time(rec.created_at),
        state(rec),
        summary(&rec.request)
    );
    if let Some(closed) = &rec.closed {
        match &closed.outcome {
            Outcome::Answered { by, .. } | Outcome::Dismissed { by } => {
                text.push_str(&format!(" — in {}", by.answerer));
            }
            _ => {}
        }
        if rec.delivered_at.is_none() && closed.outcome.is_human_decision() {
            text.push_str(" (not delivered yet)");
        }
    }
    text
}

fn to_json(rec: &AskRecord) -> Value {
    json!({
        "id": rec.id.0,
        "state": state(rec),
        "attached": rec.attached,
        "created_at": time(rec.created_at),
        "detached_at": rec.detached_at.map(time),
        "closed_at": rec.closed.as_ref().map(|c| time(c.at)),
        "delivered_at": rec.delivered_at.map(time),
        "asker": rec.asker,
        "request": serde_json::from_str::<Value>(&rec.request).unwrap_or(Value::Null),
        "outcome": rec.closed.as_ref().map(|c| serde_json::to_value(&c.outcome).unwrap_or(Value::Null)),
    })
}
