//! Who may use the page: the `Host` header (the pages' one [`ask_user_serve::HostPolicy`]),
//! the capability key in the path, and the `Origin` of every state-changing request. Plus the
//! security headers every response carries.

use ask_user_serve::Referrer;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap};
use axum::http::{Method, Response};
use axum::middleware::Next;
use axum::response::IntoResponse;

use crate::refusal::Refusal;
use crate::state::WebState;

/// The first path segment, where the capability key sits.
fn first_segment(path: &str) -> &str {
    let path = path.strip_prefix('/').unwrap_or(path);
    path.split('/').next().unwrap_or("")
}

/// Whether a state-changing request comes from our own page: its `Origin` must be
/// `http://` + the (already checked) `Host`.
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return false;
    };
    origin
        .strip_prefix("http://")
        .is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

/// Middleware in front of every route: checks Host, then the key, then (for anything but
/// GET/HEAD) the Origin. The key is compared in constant time.
pub(crate) async fn guard(
    State(state): State<WebState>,
    request: Request,
    next: Next,
) -> Response<axum::body::Body> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !state.hosts().allows(host) {
        return Refusal::Host.into_response();
    }
    if !state.secret().matches(first_segment(request.uri().path())) {
        return Refusal::Key.into_response();
    }
    let reads_only = request.method() == Method::GET || request.method() == Method::HEAD;
    if !reads_only && !same_origin(request.headers(), host) {
        return Refusal::Origin.into_response();
    }
    next.run(request).await
}

/// Adds the security headers to every response (refusals included): the pages' one rule
/// ([`ask_user_serve::security_headers`]); the page's address is its secret and it posts with
/// `fetch`, so no referrer at all.
pub(crate) async fn security_headers(
    mut response: Response<axum::body::Body>,
) -> Response<axum::body::Body> {
    ask_user_serve::security_headers(response.headers_mut(), Referrer::Never);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_first_segment() {
        assert_eq!(first_segment("/abc/events"), "abc");
        assert_eq!(first_segment("/abc"), "abc");
        assert_eq!(first_segment("/"), "");
    }
}
