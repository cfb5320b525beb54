//! `ask-user history [--open] [--json]`: the store's asks, newest first (docs/contract.md §8
//! "States"): the open ones (newest asked first), then the closed ones (newest closed first).
//!
//! `--jsonl` prints the same asks as the journal's lines instead (`ask_user_host::journal`
//! shapes, one serializer), oldest first: the journal as a view of the store (docs/contract.md
//! §7 `--journal`, docs/decisions.md "The journal as a view of the store").

use ask_user_host::durable::{STORE_ENV, StoreArgs};
use std::time::Duration;

use ask_user_core::{Answers, Question};
use ask_user_store::{AskRecord, Closed, HistoryCursor, HistoryPage, Outcome, Timestamp};
use serde_json::{Value, json};

use crate::Ended;

/// Options of `ask-user history`.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// Only the open asks (attached or detached).
    #[arg(long)]
    open: bool,
    /// One JSON array instead of lines.
    #[arg(long, conflicts_with = "jsonl")]
    json: bool,
    /// The asks as journal lines (the `--journal FILE` shapes), oldest first: an `ask` line
    /// when asked, an `outcome` line when closed; `call` is `store:<ask id>`.
    #[arg(long)]
    jsonl: bool,
    /// The store: sqlite:PATH, postgres://…, or memory (default: the SQLite file in
    /// ~/.local/state/ask-user/).
    #[arg(long, value_name = "URL", env = STORE_ENV, hide_env_values = true)]
    store: Option<ask_user_core::Secret>,
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
    let stdout = if args.jsonl {
        match jsonl(&asks) {
            Ok(lines) => lines,
            Err(message) => return Ended::Usage(message),
        }
    } else if args.json {
        format!("{}\n", Value::Array(asks.iter().map(to_json).collect()))
    } else {
        // A listing for people and line tools: every line ends with a newline.
        asks.iter().map(|rec| format!("{}\n", line(rec))).collect()
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
    ask_user_core::time::rfc3339_seconds(ask_user_core::time::from_unix_millis(t.0))
}

/// The first question of a stored request, with its header: `[Header] Question? (+N more)`,
/// on one line by the text rule every surface shows model text with
/// ([`ask_user_core::text::display_line`]: a newline is `␤`, nothing can move the cursor).
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
    ask_user_core::text::display_line(&text)
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

/// The asks as journal lines, oldest first: each ask's `ask` line at `created_at`, and for a
/// closed ask its `outcome` line at `closed_at` (at one instant, asks before outcomes, then by
/// id). An open ask has only its `ask` line.
fn jsonl(asks: &[AskRecord]) -> Result<String, String> {
    let mut events: Vec<(Timestamp, u8, i64, Vec<u8>)> = Vec::new();
    for rec in asks {
        let call = ask_user_host::store_call_id(rec.id);
        let unreadable =
            |e: &dyn std::fmt::Display| format!("ask {} in the store cannot be read: {e}", rec.id);
        let request: Value = serde_json::from_str(&rec.request).map_err(|e| unreadable(&e))?;
        let questions: Vec<Question> =
            serde_json::from_value(request["questions"].clone()).map_err(|e| unreadable(&e))?;
        let line = ask_user_host::ask_line(&time_ms(rec.created_at), &call, &questions)
            .map_err(|e| unreadable(&e))?;
        events.push((rec.created_at, 0, rec.id.0, line));
        if let Some(closed) = &rec.closed {
            let outcome = model_outcome(rec, closed).map_err(|e| unreadable(&e))?;
            let line = ask_user_host::outcome_line(&time_ms(closed.at), &call, &outcome, None)
                .map_err(|e| unreadable(&e))?;
            events.push((closed.at, 1, rec.id.0, line));
        }
    }
    events.sort_by_key(|(at, order, id, _)| (at.0, *order, *id));
    let bytes: Vec<u8> = events.into_iter().flat_map(|(.., line)| line).collect();
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// What the model read for a stored outcome, as the core renders it:
/// - answered: the stored answers; dismissed: `ASK_CANCELLED`;
/// - timed out: `ASK_TIMED_OUT` with the budget taken as the time from ask to outcome, rounded
///   to whole seconds (the store keeps no budget: exact for whole-second `--timeout`s);
/// - withdrawn: `ASK_ABORTED` (the caller went away, or its grace ran out while detached).
fn model_outcome(rec: &AskRecord, closed: &Closed) -> Result<ask_user_core::Outcome, String> {
    use ask_user_core::Outcome as Model;
    Ok(match &closed.outcome {
        Outcome::Answered { answer, .. } => Model::Answered(
            serde_json::from_value::<Answers>(answer.clone()).map_err(|e| e.to_string())?,
        ),
        Outcome::Dismissed { .. } => Model::Dismissed,
        Outcome::TimedOut => {
            let ms = closed
                .at
                .0
                .saturating_sub(rec.created_at.0)
                .max(0)
                .unsigned_abs();
            Model::TimedOut(Duration::from_secs(ms.saturating_add(500) / 1000))
        }
        Outcome::Withdrawn => Model::Aborted,
    })
}

/// RFC 3339 (milliseconds, UTC) of a stored time, as the journal writes it.
fn time_ms(t: Timestamp) -> String {
    ask_user_core::time::rfc3339_millis(ask_user_core::time::from_unix_millis(t.0))
}

#[cfg(test)]
mod tests {
    use ask_user_store::{AskId, Asker, CallKey, Closed, Outcome, Scope, Timestamp};
    use pretty_assertions::assert_eq;

    use super::{AskRecord, jsonl, summary};

    const REQUEST: &str = r#"{"questions":[{"id":"go","question":"Go?","options":[{"label":"Yes"},{"label":"No"}],"multi_select":false}]}"#;
    const T0: i64 = 1_796_000_000_000;

    fn record(id: i64, request: &str, closed: Option<(Outcome, i64)>) -> AskRecord {
        AskRecord {
            id: AskId(id),
            key: CallKey::new(&Scope::Caller("test".to_owned()), request),
            request: request.to_owned(),
            asker: Asker::default(),
            created_at: Timestamp(T0),
            grace: std::time::Duration::from_secs(60),
            attached: closed.is_none(),
            detached_at: None,
            lease_until: None,
            closed: closed.map(|(outcome, after)| Closed {
                outcome,
                at: Timestamp(T0 + after),
            }),
            delivered_at: None,
        }
    }

    fn outcome_text(outcome: Outcome, after_ms: i64) -> String {
        let lines = jsonl(&[record(3, REQUEST, Some((outcome, after_ms)))]).unwrap();
        let outcome: serde_json::Value =
            serde_json::from_str(lines.lines().nth(1).unwrap()).unwrap();
        format!("{} {}", outcome["code"], outcome["text"])
    }

    #[test]
    fn an_open_ask_has_only_its_ask_line_at_its_creation() {
        assert_eq!(
            jsonl(&[record(7, REQUEST, None)]).unwrap(),
            format!(
                "{{\"time\":\"2026-11-30T00:53:20.000Z\",\"event\":\"ask\",\"call\":\"store:7\",\"questions\":{}}}\n",
                &REQUEST[r#"{"questions":"#.len()..REQUEST.len() - 1]
            )
        );
    }

    #[test]
    fn a_timed_out_ask_names_its_budget_rounded_to_whole_seconds() {
        let budget = |ms| outcome_text(Outcome::TimedOut, ms);
        assert!(budget(998).starts_with(r#""ASK_TIMED_OUT" "Error: no answer within 1s;"#));
        assert!(budget(30_012).starts_with(r#""ASK_TIMED_OUT" "Error: no answer within 30s;"#));
    }

    #[test]
    fn a_withdrawn_ask_reads_as_aborted() {
        let text = outcome_text(Outcome::Withdrawn, 5);
        assert_eq!(
            text,
            format!(
                r#""ASK_ABORTED" {}"#,
                serde_json::Value::from(ask_user_core::Outcome::Aborted.text())
            )
        );
    }

    #[test]
    fn an_unreadable_stored_request_is_an_error_naming_the_ask() {
        assert_eq!(
            jsonl(&[record(9, "not json", None)]).unwrap_err(),
            "ask 9 in the store cannot be read: expected ident at line 1 column 2"
        );
    }

    #[test]
    fn the_summary_shows_model_text_by_the_text_rule() {
        // `history` and the inbox print this line to a terminal: an escape, an override, a
        // line separator and a newline are shown, not turned into spaces or passed on.
        let request = serde_json::json!({"questions": [{"id": "q", "header": "Run",
            "question": "ok\u{1b}[2J \u{202e}gnp.exe\u{2028}x\nnext",
            "options": [{"label": "Yes"}], "multi_select": false}]})
        .to_string();
        assert_eq!(
            summary(&request),
            "[Run] ok\u{241b}[2J \\u{202e}gnp.exe\\u{2028}x\u{2424}next"
        );
    }
}
