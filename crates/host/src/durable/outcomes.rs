//! The store's outcomes and the race's (docs/contract.md §8): converting between them,
//! recording a settled race first-outcome-wins, and how a stored outcome reads to a human.

use std::time::Duration;

use ask_user_core::{RecordError, Settled};
use ask_user_store::{AskId, Closed, Outcome, Recorded, Responder, Store, Timestamp};

/// How a stored outcome is shown to a human who lost the race: "another answer counted: …".
pub fn describe_closed(closed: &Closed) -> String {
    match &closed.outcome {
        Outcome::Answered { by, .. } => format!("an answer given in {} counted", by.answerer),
        Outcome::Dismissed { by } => format!("the question was dismissed in {}", by.answerer),
        Outcome::TimedOut => "the question timed out".to_owned(),
        Outcome::Withdrawn => "the question was withdrawn".to_owned(),
    }
}

/// The store outcome for a settled race; `None` for an aborted call (it detaches instead).
pub fn outcome_of(settled: &Settled) -> Option<Outcome> {
    let by = |b: Option<&str>| Responder {
        answerer: b.unwrap_or("another window").to_owned(),
        ..Responder::default()
    };
    match settled {
        Settled::Answered { answers, by: b } => Some(Outcome::Answered {
            answer: serde_json::to_value(answers).unwrap_or_default(),
            by: by(b.as_deref()),
        }),
        Settled::Dismissed { by: b } => Some(Outcome::Dismissed {
            by: by(b.as_deref()),
        }),
        Settled::TimedOut(_) => Some(Outcome::TimedOut),
        Settled::Aborted => None,
        _ => Some(Outcome::Withdrawn),
    }
}

/// Whether two outcomes are the same decision (the same answer, or both dismissals), whoever
/// gave them: adopting an outcome recorded elsewhere re-offers it to this call's race.
fn same_decision(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Answered { answer: x, .. }, Outcome::Answered { answer: y, .. }) => x == y,
        (Outcome::Dismissed { .. }, Outcome::Dismissed { .. }) => true,
        _ => a == b,
    }
}

/// The race's outcome for an outcome stored elsewhere (the inverse of [`outcome_of`]; a
/// stored timeout reads as a zero budget: the budget was another call's).
///
/// # Errors
/// A stored answer this binary cannot read.
pub fn settled_of(closed: &Closed) -> Result<Settled, String> {
    Ok(match &closed.outcome {
        Outcome::Answered { answer, by } => Settled::Answered {
            answers: serde_json::from_value(answer.clone())
                .map_err(|e| format!("the stored answer cannot be read ({e})"))?,
            by: Some(by.answerer.clone()),
        },
        Outcome::Dismissed { by } => Settled::Dismissed {
            by: Some(by.answerer.clone()),
        },
        Outcome::TimedOut => Settled::TimedOut(Duration::ZERO),
        Outcome::Withdrawn => Settled::Withdrawn,
    })
}

/// Records `settled` for ask `id` in `store`, first outcome wins: `Ok` when it was stored or
/// the same decision was already stored; [`RecordError::Settled`] with the outcome that
/// counted when another was stored first (the text [`describe_closed`] gives tells a human
/// why theirs was not taken). An aborted call detaches the ask; when the ask was already
/// answered or dismissed, that outcome is the call's.
///
/// # Errors
/// Another outcome counted, or the store failed.
pub async fn record(store: &Store, id: AskId, settled: &Settled) -> Result<(), RecordError> {
    record_kept(store, id, settled, Timestamp::now()).await.0
}

/// [`record`] at `now` (the recording process's clock), and the exact outcome the store holds
/// for the call afterwards (what a delivery compare-and-sets on), when it holds one.
pub(super) async fn record_kept(
    store: &Store,
    id: AskId,
    settled: &Settled,
    now: Timestamp,
) -> (Result<(), RecordError>, Option<Outcome>) {
    let lost = |closed: Closed| {
        let counted = settled_of(&closed).map_err(RecordError::Failed);
        let error = match counted {
            Ok(counted) => RecordError::Settled(counted),
            Err(e) => e,
        };
        (Err(error), Some(closed.outcome))
    };
    let Some(outcome) = outcome_of(settled) else {
        if let Err(e) = store.set_attached(id, false, now).await {
            return (Err(RecordError::Failed(e.to_string())), None);
        }
        return match store.get(id).await {
            Ok(rec) => match rec.closed {
                Some(closed) if closed.outcome.is_human_decision() => lost(closed),
                _ => (Ok(()), None),
            },
            Err(e) => (Err(RecordError::Failed(e.to_string())), None),
        };
    };
    match store.record_outcome(id, &outcome, now).await {
        Ok(Recorded::Won) => (Ok(()), Some(outcome)),
        Ok(Recorded::Lost(closed)) if same_decision(&closed.outcome, &outcome) => {
            (Ok(()), Some(closed.outcome))
        }
        Ok(Recorded::Lost(closed)) => lost(closed),
        Err(e) => (Err(RecordError::Failed(e.to_string())), None),
    }
}
