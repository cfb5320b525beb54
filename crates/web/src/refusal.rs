//! Every refusal the server gives, with its status and exact text (plain text, UTF-8).

use ask_user_core::{InvalidAnswer, Settled, format_duration};
use axum::http::StatusCode;
use axum::http::header::{CONTENT_TYPE, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::state::WEB_NAME;

/// The largest request body accepted, in bytes (8 MiB).
///
/// A valid submission must always fit: under the default caps (10 questions, 26 options of
/// 4,000 characters, up to 4 bytes each in UTF-8) choosing every option of every question is
/// about 4.2 MB, which leaves room for the human's own answers. The key and Host/Origin checks
/// run before any body is read, so only holders of the secret can send one this large.
pub const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// Why a request was refused. Each variant's doc names its status and text.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// 403 `forbidden: unexpected Host header; open the address ask-user printed`
    Host,
    /// 403 `forbidden: this address needs its secret key; open the full link ask-user printed`
    Key,
    /// 403 `forbidden: cross-origin request`
    Origin,
    /// 413 `request body too large: at most 8 MiB`
    TooLarge,
    /// 400 `bad request: <why>`
    BadRequest(String),
    /// 404 `not found`
    NotFound,
    /// 409, the submission was not taken because the questions were closed first; the text
    /// says how (see [`not_taken`]), or, when that is no longer known,
    /// `these questions are no longer open: answered elsewhere, dismissed or withdrawn`.
    NotTaken(Option<Settled>),
    /// 503 `not taken: the answer could not be recorded (<why>); try again`; the questions
    /// stay open.
    NotRecorded(String),
    /// 422 `<the core's InvalidAnswer text>`; the questions stay open.
    Invalid(InvalidAnswer),
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Self::Host | Self::Key | Self::Origin => StatusCode::FORBIDDEN,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::NotTaken(_) => StatusCode::CONFLICT,
            Self::NotRecorded(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    fn text(&self) -> String {
        match self {
            Self::Host => {
                "forbidden: unexpected Host header; open the address ask-user printed".to_owned()
            }
            Self::Key => {
                "forbidden: this address needs its secret key; open the full link ask-user printed"
                    .to_owned()
            }
            Self::Origin => "forbidden: cross-origin request".to_owned(),
            Self::TooLarge => "request body too large: at most 8 MiB".to_owned(),
            Self::BadRequest(why) => format!("bad request: {why}"),
            Self::NotFound => "not found".to_owned(),
            Self::NotTaken(settled) => not_taken(settled.as_ref()),
            Self::NotRecorded(why) => {
                format!("not taken: the answer could not be recorded ({why}); try again")
            }
            Self::Invalid(why) => why.to_string(),
        }
    }
}

/// What a submitter reads when the questions were closed before its submission counted.
pub(crate) fn not_taken(settled: Option<&Settled>) -> String {
    let place = |by: Option<&str>| match by {
        Some(WEB_NAME) => "in another tab or on another device".to_owned(),
        Some(name) => format!("in {name}"),
        None => "elsewhere".to_owned(),
    };
    match settled {
        Some(Settled::Answered { by, .. }) => {
            format!("not taken: already answered {}", place(by.as_deref()))
        }
        Some(Settled::Dismissed { by }) => {
            format!("not taken: already dismissed {}", place(by.as_deref()))
        }
        Some(Settled::TimedOut(budget)) => format!(
            "not taken: the agent stopped waiting after {}",
            format_duration(*budget)
        ),
        Some(_) => "not taken: the agent no longer needs this answer".to_owned(),
        None => "these questions are no longer open: answered elsewhere, dismissed or withdrawn"
            .to_owned(),
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = (self.status(), self.text()).into_response();
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_user_core::Answers;
    use std::time::Duration;

    #[test]
    fn every_not_taken_text_is_pinned() {
        let answered = |by: Option<&str>| Settled::Answered {
            answers: Answers::default(),
            by: by.map(str::to_owned),
        };
        let cases = [
            (
                Some(answered(Some("the terminal"))),
                "not taken: already answered in the terminal",
            ),
            (
                Some(answered(Some(WEB_NAME))),
                "not taken: already answered in another tab or on another device",
            ),
            (
                Some(answered(None)),
                "not taken: already answered elsewhere",
            ),
            (
                Some(Settled::Dismissed {
                    by: Some("the terminal".into()),
                }),
                "not taken: already dismissed in the terminal",
            ),
            (
                Some(Settled::TimedOut(Duration::from_secs(300))),
                "not taken: the agent stopped waiting after 5m",
            ),
            (
                Some(Settled::Aborted),
                "not taken: the agent no longer needs this answer",
            ),
            (
                Some(Settled::Withdrawn),
                "not taken: the agent no longer needs this answer",
            ),
            (
                None,
                "these questions are no longer open: answered elsewhere, dismissed or withdrawn",
            ),
        ];
        for (settled, text) in cases {
            assert_eq!(
                Refusal::NotTaken(settled.clone()).text(),
                text,
                "{settled:?}"
            );
            assert_eq!(Refusal::NotTaken(settled).status(), StatusCode::CONFLICT);
        }
        let unrecorded = Refusal::NotRecorded("disk full".into());
        assert_eq!(
            unrecorded.text(),
            "not taken: the answer could not be recorded (disk full); try again"
        );
        assert_eq!(unrecorded.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
