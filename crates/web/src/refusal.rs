//! Every refusal the server gives, with its status and exact text (plain text, UTF-8).

use ask_user_core::InvalidAnswer;
use axum::http::StatusCode;
use axum::http::header::{CONTENT_TYPE, HeaderValue};
use axum::response::{IntoResponse, Response};

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
    /// 409 `these questions are no longer open: answered elsewhere, dismissed or withdrawn`
    Gone,
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
            Self::Gone => StatusCode::CONFLICT,
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
            Self::Gone => {
                "these questions are no longer open: answered elsewhere, dismissed or withdrawn"
                    .to_owned()
            }
            Self::Invalid(why) => why.to_string(),
        }
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
