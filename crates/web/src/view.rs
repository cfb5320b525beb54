//! What the page receives: questions as JSON, and the events of the live stream.
//!
//! Events on `GET <url>/events` (server-sent events, each `data` one JSON line):
//!
//! | event | data | meaning |
//! | --- | --- | --- |
//! | `snapshot` | `{"batches":[Batch…]}` | everything pending now; replaces what the page shows |
//! | `opened` | `Batch` | a new batch of questions |
//! | `withdrawn` | `{"batch":N,"reason":R,"by":TAB?,"where":W?}` | the batch is closed |
//! | `caller` | `{"batch":N,"caller_waiting":B}` | the agent stopped waiting (`false`: the ask is detached, an answer is kept for its retry) or waits again (`true`) |
//! | `ended` | `{}` | the server is stopping; nothing more will come, do not reconnect |
//!
//! The withdrawal's `reason` is `answered` or `dismissed` (on a page: `by` is the submitting
//! tab), `answered_elsewhere` or `dismissed_elsewhere` (by another answerer; `where` names it
//! when it named itself, e.g. `the terminal`), `timed_out` (the agent's time budget ran out)
//! or `cancelled` (the agent no longer needs the answer).
//!
//! `Batch` is `{"batch":N,"questions":[{"id","question","header"?,"options":[{"label","description"?}],"multi_select","recommended","shown"}],"caller_waiting"?:false,"deadline"?:MS,"previous"?:P}`
//! with `previous` the answer given before to the same question ([`PreviousAnswer`]: the card
//! offers it as one tap, "Send the same answer again (given 10:42: Yes)"),
//! with `recommended` the index of the `(Recommended)` option or `null`, `shown` the text as
//! the card shows it, prepared here by the shared rule ([`crate::cards::ShownQuestion`]), `deadline` (present
//! only with a time budget, [`crate::WebConfig::timeout`]) the Unix time in milliseconds when
//! the budget runs out, for the page's countdown, and
//! `caller_waiting` present (`false`) only while the agent is not waiting (see
//! [`ask_user_core::Decide::caller_waiting`]). All text is the model's, untrusted: the page
//! shows only the `shown` forms, and inserts them with `textContent` only. The notice for a caller that stopped waiting is the
//! page's own text; the events carry only the flag.

use std::sync::Arc;

use ask_user_core::{AskUserQuestionRequest, GivenBefore, QuestionOption, Settled};
use serde::Serialize;

use crate::cards::{PreviousAnswer, ShownQuestion};
use crate::state::WEB_NAME;

/// One batch (one tool call) as the page shows it.
#[derive(Debug, Serialize)]
pub(crate) struct BatchView<'a> {
    pub(crate) batch: u64,
    pub(crate) questions: Vec<QuestionView<'a>>,
    /// Whether the caller still waits; serialised only when it does not.
    #[serde(skip_serializing_if = "is_true")]
    pub(crate) caller_waiting: bool,
    /// When the host's time budget runs out (Unix milliseconds); absent without a budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deadline: Option<u64>,
    /// The answer given before to the same question, offered to send again; absent when
    /// there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) previous: Option<PreviousAnswer>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_true(b: &bool) -> bool {
    *b
}

/// One question as the page shows it.
#[derive(Debug, Serialize)]
pub(crate) struct QuestionView<'a> {
    id: &'a str,
    question: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<&'a str>,
    options: &'a [QuestionOption],
    multi_select: bool,
    recommended: Option<usize>,
    /// The text as the card shows it, by the shared rule ([`ShownQuestion`]).
    shown: ShownQuestion,
}

impl<'a> BatchView<'a> {
    pub(crate) fn new(batch: u64, request: &'a AskUserQuestionRequest) -> Self {
        let questions = request
            .questions()
            .iter()
            .map(|q| QuestionView {
                id: &q.id,
                question: &q.question,
                header: q.header.as_deref(),
                options: &q.options,
                multi_select: q.multi_select,
                recommended: q.recommended(),
                shown: ShownQuestion::of(q),
            })
            .collect();
        Self {
            batch,
            questions,
            caller_waiting: true,
            deadline: None,
            previous: None,
        }
    }

    /// The batch offering the answer `given` before to the same question, or not.
    pub(crate) fn with_given_before(mut self, given: Option<&GivenBefore>) -> Self {
        self.previous = given.and_then(PreviousAnswer::from_core);
        self
    }

    /// The batch counting down to `deadline` (Unix milliseconds), or not.
    pub(crate) fn with_deadline(mut self, deadline: Option<u64>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The batch with the caller waiting or not.
    pub(crate) fn with_caller_waiting(mut self, waiting: bool) -> Self {
        self.caller_waiting = waiting;
        self
    }

    /// The batch as one line of JSON.
    pub(crate) fn to_json(&self) -> String {
        // Strings, numbers and bools only: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Why a batch left the page: how its race was settled (`None`: not yet, e.g. the ask was
/// dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Withdrawal {
    reason: Reason,
    place: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Reason {
    Answered,
    Dismissed,
    AnsweredElsewhere,
    DismissedElsewhere,
    TimedOut,
    Cancelled,
}

impl From<&Option<Settled>> for Withdrawal {
    fn from(settled: &Option<Settled>) -> Self {
        let here = |by: Option<&str>| by == Some(WEB_NAME);
        let (reason, place) = match settled {
            Some(Settled::Answered { by, .. }) if here(by.as_deref()) => (Reason::Answered, None),
            Some(Settled::Answered { by, .. }) => (Reason::AnsweredElsewhere, by.clone()),
            Some(Settled::Dismissed { by }) if here(by.as_deref()) => (Reason::Dismissed, None),
            Some(Settled::Dismissed { by }) => (Reason::DismissedElsewhere, by.clone()),
            Some(Settled::TimedOut(_)) => (Reason::TimedOut, None),
            _ => (Reason::Cancelled, None),
        };
        Self { reason, place }
    }
}

#[derive(Serialize)]
struct WithdrawnView<'a> {
    batch: u64,
    reason: Reason,
    #[serde(skip_serializing_if = "Option::is_none")]
    by: Option<&'a str>,
    #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
    place: Option<&'a str>,
}

/// One event of the live stream, serialised once and shared by every open page.
#[derive(Debug, Clone)]
pub(crate) struct PageEvent {
    pub(crate) name: &'static str,
    pub(crate) data: Arc<str>,
}

impl PageEvent {
    pub(crate) fn opened(json: Arc<str>) -> Self {
        Self {
            name: "opened",
            data: json,
        }
    }

    pub(crate) fn withdrawn(batch: u64, withdrawal: &Withdrawal, by: Option<&str>) -> Self {
        let view = WithdrawnView {
            batch,
            reason: withdrawal.reason,
            by,
            place: withdrawal.place.as_deref(),
        };
        Self {
            name: "withdrawn",
            data: serde_json::to_string(&view).unwrap_or_default().into(),
        }
    }

    /// Whether the caller of batch `batch` still waits for its answer.
    pub(crate) fn caller(batch: u64, waiting: bool) -> Self {
        Self {
            name: "caller",
            data: format!(r#"{{"batch":{batch},"caller_waiting":{waiting}}}"#).into(),
        }
    }

    /// The last event: the server is stopping, the page should not reconnect.
    pub(crate) fn ended() -> Self {
        Self {
            name: "ended",
            data: "{}".into(),
        }
    }

    pub(crate) fn snapshot<'a>(batches: impl Iterator<Item = &'a str>) -> Self {
        let mut data = String::from("{\"batches\":[");
        for (i, json) in batches.enumerate() {
            if i > 0 {
                data.push(',');
            }
            data.push_str(json);
        }
        data.push_str("]}");
        Self {
            name: "snapshot",
            data: data.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_user_core::Question;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_batch_carries_the_recommended_index_and_omits_a_missing_header() {
        let request = AskUserQuestionRequest::new(
            vec![Question {
                id: "db".into(),
                question: "Which <b>database</b>?".into(),
                header: None,
                options: vec![
                    QuestionOption {
                        label: "PostgreSQL (Recommended)".into(),
                        description: Some("Solid".into()),
                    },
                    QuestionOption {
                        label: "SQLite".into(),
                        description: None,
                    },
                ],
                multi_select: false,
            }],
            &ask_user_core::Limits::default(),
        )
        .unwrap();
        assert_eq!(
            BatchView::new(3, &request).to_json(),
            r#"{"batch":3,"questions":[{"id":"db","question":"Which <b>database</b>?","options":[{"label":"PostgreSQL (Recommended)","description":"Solid"},{"label":"SQLite"}],"multi_select":false,"recommended":0,"shown":{"question":"Which <b>database</b>?","options":[{"label":"PostgreSQL","description":"Solid"},{"label":"SQLite"}]}}]}"#
        );
        assert!(
            BatchView::new(3, &request)
                .with_deadline(Some(1_700_000_000_000))
                .to_json()
                .ends_with(r#"{"label":"SQLite"}]}}],"deadline":1700000000000}"#)
        );
        assert!(
            BatchView::new(3, &request)
                .with_caller_waiting(false)
                .to_json()
                .ends_with(r#"{"label":"SQLite"}]}}],"caller_waiting":false}"#)
        );
    }

    #[test]
    fn events_serialise_as_documented() {
        let answers = ask_user_core::Answers::default();
        let here = Some(Settled::Answered {
            answers: answers.clone(),
            by: Some(WEB_NAME.to_owned()),
        });
        let w = PageEvent::withdrawn(4, &Withdrawal::from(&here), Some("tab-1"));
        assert_eq!(w.name, "withdrawn");
        assert_eq!(&*w.data, r#"{"batch":4,"reason":"answered","by":"tab-1"}"#);
        let cases = [
            (None, r#"{"batch":5,"reason":"cancelled"}"#),
            (
                Some(Settled::Aborted),
                r#"{"batch":5,"reason":"cancelled"}"#,
            ),
            (
                Some(Settled::Withdrawn),
                r#"{"batch":5,"reason":"cancelled"}"#,
            ),
            (
                Some(Settled::TimedOut(std::time::Duration::from_secs(60))),
                r#"{"batch":5,"reason":"timed_out"}"#,
            ),
            (
                Some(Settled::Answered {
                    answers,
                    by: Some("the terminal".into()),
                }),
                r#"{"batch":5,"reason":"answered_elsewhere","where":"the terminal"}"#,
            ),
            (
                Some(Settled::Dismissed { by: None }),
                r#"{"batch":5,"reason":"dismissed_elsewhere"}"#,
            ),
            (
                Some(Settled::Dismissed {
                    by: Some(WEB_NAME.into()),
                }),
                r#"{"batch":5,"reason":"dismissed"}"#,
            ),
        ];
        for (settled, json) in cases {
            let c = PageEvent::withdrawn(5, &Withdrawal::from(&settled), None);
            assert_eq!(&*c.data, json);
        }
        assert_eq!(PageEvent::ended().name, "ended");
        let c = PageEvent::caller(6, false);
        assert_eq!(
            (c.name, &*c.data),
            ("caller", r#"{"batch":6,"caller_waiting":false}"#)
        );
        let s = PageEvent::snapshot(["{\"batch\":1}", "{\"batch\":2}"].into_iter());
        assert_eq!(&*s.data, r#"{"batches":[{"batch":1},{"batch":2}]}"#);
        assert_eq!(
            &*PageEvent::snapshot([].into_iter()).data,
            r#"{"batches":[]}"#
        );
    }
}
