//! A response body that keeps its connection counted as serving until it is sent or dropped,
//! without hiding its size: a body of known length keeps its `Content-Length`.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::response::Response;
use hyper::body::{Frame, SizeHint};

use crate::connections::Busy;

/// The response with its body holding `busy`, so the connection counts as serving until hyper
/// has taken the body's last chunk or dropped it (an event stream: as long as the page
/// listens). The body's size
/// hint and end-of-stream are forwarded unchanged, so a body of known length is still written
/// with `Content-Length`.
pub(crate) fn hold_until_sent(response: Response, busy: Busy) -> Response {
    response.map(|body| Body::new(Held { body, _busy: busy }))
}

/// `body`, holding `_busy` until dropped.
#[derive(Debug)]
struct Held {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
