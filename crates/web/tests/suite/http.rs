//! The router in-process with `tower::ServiceExt::oneshot`: every access check, header and
//! refusal text, and the answer / dismiss / withdraw flows with the event stream.

use std::net::SocketAddr;
use std::sync::Arc;

use ask_user_core::{
    AnswerItem, Answers, AskError, AskUserQuestionRequest, CancellationToken, Limits, Question,
    QuestionOption, UserInteraction, decode,
};
use ask_user_test_support::answerers::{Fixed, selected};
use ask_user_web::{BODY_LIMIT, CONTENT_SECURITY_POLICY, WebConfig, WebState, router};
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use futures::StreamExt;
use pretty_assertions::assert_eq;
use tower::ServiceExt;

use super::support::DB;

const HOST: &str = "127.0.0.1:8765";
const ORIGIN: &str = "http://127.0.0.1:8765";

fn state() -> WebState {
    let bound: SocketAddr = HOST.parse().unwrap();
    WebState::new(&WebConfig::default(), bound).unwrap()
}

fn request(text: &str) -> AskUserQuestionRequest {
    decode(text, &Limits::default()).unwrap().request
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

async fn send(state: &WebState, req: Request<Body>) -> Reply {
    let response = router(state.clone()).oneshot(req).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Reply {
        status,
        headers,
        text: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header("host", HOST)
        .body(Body::empty())
        .unwrap()
}

fn post(path: &str, body: impl Into<Body>) -> Request<Body> {
    Request::post(path)
        .header("host", HOST)
        .header("origin", ORIGIN)
        .header("content-type", "application/json")
        .body(body.into())
        .unwrap()
}

const KEY_TEXT: &str =
    "forbidden: this address needs its secret key; open the full link ask-user printed";
const HOST_TEXT: &str = "forbidden: unexpected Host header; open the address ask-user printed";
const ORIGIN_TEXT: &str = "forbidden: cross-origin request";
const OMITTED_DB: &str = "question \"db\" is not answered; answer it, or skip it explicitly (nothing selected, no own answer)";

const GONE_TEXT: &str =
    "these questions are no longer open: answered elsewhere, dismissed or withdrawn";

#[tokio::test]
async fn the_page_and_its_assets_carry_the_security_headers() {
    let state = state();
    let base = state.base_path();
    for (path, content_type) in [
        (base.clone(), "text/html; charset=utf-8"),
        (format!("{base}app.js"), "text/javascript; charset=utf-8"),
        (format!("{base}cards.js"), "text/javascript; charset=utf-8"),
        (format!("{base}app.css"), "text/css; charset=utf-8"),
        (format!("{base}favicon.svg"), "image/svg+xml"),
    ] {
        let reply = send(&state, get(&path)).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.headers["content-type"], content_type);
        assert_eq!(
            reply.headers["content-security-policy"],
            CONTENT_SECURITY_POLICY
        );
        assert_eq!(reply.headers["x-content-type-options"], "nosniff");
        assert_eq!(reply.headers["referrer-policy"], "no-referrer");
        assert_eq!(reply.headers["x-frame-options"], "DENY");
        assert_eq!(reply.headers["cache-control"], "no-store");
    }
    assert!(CONTENT_SECURITY_POLICY.starts_with(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'"
    ));
}

#[tokio::test]
async fn the_page_has_no_inline_script_or_style_and_no_external_assets() {
    let state = state();
    let html = send(&state, get(&state.base_path())).await.text;
    assert!(html.contains(r#"<script src="app.js" defer></script>"#));
    // The shared card (crate::cards) before the page's own script.
    assert!(html.contains(
        "<script src=\"cards.js\" defer></script>\n<script src=\"app.js\" defer></script>"
    ));
    assert!(
        html.contains(r#"<template id="t-batch">"#),
        "the card templates are in"
    );
    assert!(!html.contains(ask_user_web::cards::TEMPLATES_MARKER));
    assert_eq!(html.matches("<script").count(), 2);
    assert!(!html.contains("style="), "no inline style attributes");
    assert!(!html.contains("<style"), "no inline style element");
    assert!(!html.contains("http"), "no absolute URLs");
    for script in ["app.js", "cards.js"] {
        let js = send(&state, get(&format!("{}{script}", state.base_path())))
            .await
            .text;
        assert!(
            !js.contains("innerHTML"),
            "model text is never parsed as HTML ({script})"
        );
        assert!(!js.contains("insertAdjacentHTML"));
        assert!(!js.contains("eval("));
    }
}

#[tokio::test]
async fn without_the_key_or_with_a_wrong_one_everything_is_refused() {
    let state = state();
    let key = state.base_path().trim_matches('/').to_owned();
    let wrong = "0".repeat(key.len());
    let paths = [
        "/".to_owned(),
        "/app.js".to_owned(),
        "/events".to_owned(),
        format!("/{wrong}/"),
        format!("/{wrong}/events"),
        format!("/{}/", &key[1..]),
        format!("/{key}0/"),
        format!("/{}/", key.to_uppercase()),
        format!("/x/{key}/"),
    ];
    for path in paths {
        let reply = send(&state, get(&path)).await;
        assert_eq!(
            (reply.status, reply.text.as_str()),
            (StatusCode::FORBIDDEN, KEY_TEXT),
            "{path}"
        );
        assert_eq!(reply.headers["content-type"], "text/plain; charset=utf-8");
        assert_eq!(
            reply.headers["content-security-policy"],
            CONTENT_SECURITY_POLICY
        );
    }
    let reply = send(&state, post(&format!("/{wrong}/answer"), "{}")).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (StatusCode::FORBIDDEN, KEY_TEXT)
    );
}

#[tokio::test]
async fn the_key_without_a_slash_redirects_and_unknown_paths_are_not_found() {
    let state = state();
    let base = state.base_path();
    let reply = send(&state, get(base.trim_end_matches('/'))).await;
    assert_eq!(reply.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(reply.headers["location"], base.as_str());
    let reply = send(&state, get(&format!("{base}nothing"))).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (StatusCode::NOT_FOUND, "not found")
    );
}

#[tokio::test]
async fn a_foreign_or_missing_host_is_refused_before_the_key_is_looked_at() {
    let state = state();
    let base = state.base_path();
    for host in [
        Some("evil.example:8765"),
        Some("127.0.0.1:9999"),
        Some("192.168.1.20:8765"),
        None,
    ] {
        let mut req = Request::get(&base);
        if let Some(host) = host {
            req = req.header("host", host);
        }
        let reply = send(&state, req.body(Body::empty()).unwrap()).await;
        assert_eq!(
            (reply.status, reply.text.as_str()),
            (StatusCode::FORBIDDEN, HOST_TEXT),
            "{host:?}"
        );
    }
    for host in ["localhost:8765", "[::1]:8765"] {
        let req = Request::get(&base)
            .header("host", host)
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&state, req).await.status, StatusCode::OK, "{host}");
    }
}

#[tokio::test]
async fn a_configured_host_name_is_accepted() {
    let config = WebConfig {
        allowed_hosts: vec!["mybox.local".into()],
        ..WebConfig::default()
    };
    let state = WebState::new(&config, HOST.parse().unwrap()).unwrap();
    let req = Request::get(state.base_path())
        .header("host", "mybox.local:8765")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, req).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_post_without_our_origin_is_refused() {
    let state = state();
    let path = format!("{}answer", state.base_path());
    for origin in [
        None,
        Some("http://evil.example"),
        Some("null"),
        Some("https://127.0.0.1:8765"),
        Some("http://localhost:8765"),
    ] {
        let mut req = Request::post(&path).header("host", HOST);
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        let reply = send(&state, req.body(Body::from("{}")).unwrap()).await;
        assert_eq!(
            (reply.status, reply.text.as_str()),
            (StatusCode::FORBIDDEN, ORIGIN_TEXT),
            "{origin:?}"
        );
    }
}

#[tokio::test]
async fn bodies_over_8_mib_are_refused_with_413() {
    let state = state();
    assert_eq!(BODY_LIMIT, 8 * 1024 * 1024);
    let path = format!("{}answer", state.base_path());
    let big = format!(
        r#"{{"batch":1,"answers":[{{"id":"db","custom":"{}"}}]}}"#,
        "x".repeat(BODY_LIMIT)
    );
    let reply = send(&state, post(&path, big.clone())).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body too large: at most 8 MiB"
        )
    );
    // Without a Content-Length (streamed), the limit holds too.
    let chunks = futures::stream::iter(
        big.into_bytes()
            .chunks(4096)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let reply = send(&state, post(&path, Body::from_stream(chunks))).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    let dismiss = format!("{}dismiss", state.base_path());
    let reply = send(&state, post(&dismiss, " ".repeat(BODY_LIMIT + 1))).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn malformed_submissions_are_bad_requests_and_unknown_batches_are_gone() {
    let state = state();
    let answer = format!("{}answer", state.base_path());
    let dismiss = format!("{}dismiss", state.base_path());
    let cases = [
        (
            answer.as_str(),
            "{}",
            StatusCode::BAD_REQUEST,
            "bad request: missing field `batch` at line 1 column 2",
        ),
        (
            answer.as_str(),
            "not json",
            StatusCode::BAD_REQUEST,
            "bad request: expected ident at line 1 column 2",
        ),
        (
            answer.as_str(),
            r#"{"batch":"1"}"#,
            StatusCode::BAD_REQUEST,
            "bad request: invalid type: string \"1\", expected u64 at line 1 column 12",
        ),
        (
            answer.as_str(),
            r#"{"batch":99,"answers":[]}"#,
            StatusCode::CONFLICT,
            GONE_TEXT,
        ),
        (
            dismiss.as_str(),
            r#"{"batch":99}"#,
            StatusCode::CONFLICT,
            GONE_TEXT,
        ),
        (
            dismiss.as_str(),
            r#"{"batch":-1}"#,
            StatusCode::BAD_REQUEST,
            "bad request: invalid value: integer `-1`, expected u64 at line 1 column 11",
        ),
    ];
    for (path, body, status, text) in cases {
        let reply = send(&state, post(path, body)).await;
        assert_eq!(
            (reply.status, reply.text.as_str()),
            (status, text),
            "{body}"
        );
    }
}

/// Reads the event stream until `n` events have arrived; returns them as (name, data).
async fn events(body: Body, n: usize) -> Vec<(String, String)> {
    let mut stream = body.into_data_stream();
    let mut text = String::new();
    let mut out = Vec::new();
    while out.len() < n {
        let chunk = stream.next().await.unwrap().unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = text.find("\n\n") {
            let frame: String = text.drain(..end + 2).collect();
            let mut name = String::new();
            let mut data = String::new();
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = v.to_owned();
                }
            }
            if !name.is_empty() {
                out.push((name, data));
            }
        }
    }
    out
}

async fn open_stream(state: &WebState) -> Body {
    let response = router(state.clone())
        .oneshot(get(&format!("{}events", state.base_path())))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    response.into_body()
}

#[tokio::test]
async fn an_invalid_answer_is_refused_with_422_and_the_first_valid_answer_wins() {
    let state = state();
    let req = request(DB);
    let asker = state.clone();
    let call = tokio::spawn(async move { asker.ask(&req, CancellationToken::new()).await });
    let stream = open_stream(&state).await;
    let seen = events(stream, 1).await;
    assert_eq!(seen[0].0, "snapshot");
    assert!(seen[0].1.starts_with(r#"{"batches":["#));
    let answer = format!("{}answer", state.base_path());

    // The ask may not have registered before the stream opened; wait for it.
    while state.pending() == 0 {
        tokio::task::yield_now().await;
    }
    let batch: u64 = 1;
    let refusals = [
        (
            r#"{"id":"db","selected":["MySQL"]}"#,
            "\"MySQL\" is not one of the options of question \"db\"",
        ),
        (
            r#"{"id":"nope","selected":[]}"#,
            "the answer names an unknown question id \"nope\"",
        ),
        (
            r#"{"id":"db","selected":["SQLite","PostgreSQL (Recommended)"]}"#,
            "question \"db\" takes one option, but 2 were selected",
        ),
        (
            r#"{"id":"db","selected":[]},{"id":"db","selected":[]}"#,
            "question \"db\" is answered twice",
        ),
        // An empty submission is not an answer; a skip is explicit.
        ("", OMITTED_DB),
    ];
    let no_answers = format!(r#"{{"batch":{batch}}}"#);
    let reply = send(&state, post(&answer, no_answers)).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, OMITTED_DB)
    );
    for (items, text) in refusals {
        let body = format!(r#"{{"batch":{batch},"answers":[{items}]}}"#);
        let reply = send(&state, post(&answer, body)).await;
        assert_eq!(
            (reply.status, reply.text.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, text)
        );
        assert_eq!(state.pending(), 1, "the question stays open");
    }
    let body = format!(
        r#"{{"batch":{batch},"answers":[{{"id":"db","selected":["SQLite"],"custom":"  "}}],"tab":"t1"}}"#
    );
    let reply = send(&state, post(&answer, body.clone())).await;
    assert_eq!((reply.status, reply.text.as_str()), (StatusCode::OK, "ok"));
    let reply = send(&state, post(&answer, body)).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (
            StatusCode::CONFLICT,
            "not taken: already answered in another tab or on another device"
        )
    );
    assert_eq!(
        call.await.unwrap(),
        Ok(Answers {
            answers: vec![AnswerItem::selected("db", ["SQLite"])]
        })
    );
}

#[tokio::test]
async fn the_stream_shows_opened_then_withdrawn_with_the_submitting_tab() {
    let state = state();
    let stream = open_stream(&state).await;
    let req = request(DB);
    let asker = state.clone();
    let call = tokio::spawn(async move { asker.ask(&req, CancellationToken::new()).await });
    while state.pending() == 0 {
        tokio::task::yield_now().await;
    }
    let body = r#"{"batch":1,"answers":[],"tab":"tab-a"}"#;
    let dismiss = format!("{}dismiss", state.base_path());
    let reply = send(&state, post(&dismiss, r#"{"batch":1,"tab":"tab-a"}"#)).await;
    assert_eq!((reply.status, reply.text.as_str()), (StatusCode::OK, "ok"));
    let reply = send(&state, post(&format!("{}answer", state.base_path()), body)).await;
    assert_eq!(reply.status, StatusCode::CONFLICT);
    assert_eq!(call.await.unwrap(), Err(AskError::Dismissed));
    let seen = events(stream, 3).await;
    assert_eq!(
        seen,
        vec![
            ("snapshot".to_owned(), r#"{"batches":[]}"#.to_owned()),
            (
                "opened".to_owned(),
                r#"{"batch":1,"questions":[{"id":"db","question":"Which database?","header":"Database","options":[{"label":"PostgreSQL (Recommended)","description":"Runs in production already."},{"label":"SQLite","description":"One file."}],"multi_select":false,"recommended":0,"shown":{"header":"Database","question":"Which database?","options":[{"label":"PostgreSQL","description":"Runs in production already."},{"label":"SQLite","description":"One file."}]}}]}"#.to_owned()
            ),
            ("withdrawn".to_owned(), r#"{"batch":1,"reason":"dismissed","by":"tab-a"}"#.to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_cancelled_ask_is_withdrawn_from_the_stream() {
    let state = state();
    let stream = open_stream(&state).await;
    assert_eq!(state.open_pages(), 1);
    let cancel = CancellationToken::new();
    let req = request(DB);
    let asker = state.clone();
    let token = cancel.clone();
    let call = tokio::spawn(async move { asker.ask(&req, token).await });
    while state.pending() == 0 {
        tokio::task::yield_now().await;
    }
    cancel.cancel();
    assert_eq!(call.await.unwrap(), Err(AskError::Cancelled));
    assert_eq!(state.pending(), 0);
    let seen = events(stream, 3).await;
    assert_eq!(
        seen[2],
        (
            "withdrawn".to_owned(),
            r#"{"batch":1,"reason":"cancelled"}"#.to_owned()
        )
    );
}

#[tokio::test]
async fn a_dropped_ask_is_withdrawn_and_many_asks_wait_side_by_side() {
    let state = state();
    let question = |i: usize| {
        AskUserQuestionRequest::new(
            vec![Question {
                id: format!("q{i}"),
                question: format!("Question {i}?"),
                header: None,
                options: vec![QuestionOption {
                    label: "Yes".into(),
                    description: None,
                }],
                multi_select: false,
            }],
            &ask_user_core::Limits::default(),
        )
        .unwrap()
    };
    let requests: Vec<_> = (0..100).map(question).collect();
    let state2 = Arc::new(state.clone());
    let mut calls = Vec::new();
    for req in requests.clone() {
        let asker = state2.clone();
        calls.push(tokio::spawn(async move {
            asker.ask(&req, CancellationToken::new()).await
        }));
    }
    while state.pending() < 100 {
        tokio::task::yield_now().await;
    }
    // Answer them in reverse order; each gets its own answer.
    for i in (0..100u64).rev() {
        let body = format!(
            r#"{{"batch":{},"answers":[{{"id":"q{}","selected":["Yes"]}}]}}"#,
            i + 1,
            i
        );
        assert_eq!(
            send(&state, post(&format!("{}answer", state.base_path()), body))
                .await
                .status,
            StatusCode::OK
        );
    }
    for (i, call) in calls.into_iter().enumerate() {
        let answers = call.await.unwrap().unwrap();
        assert_eq!(
            answers.answers,
            vec![AnswerItem::selected(format!("q{i}"), ["Yes"])]
        );
    }
    // An ask whose future is dropped (its host gave up) leaves no question behind.
    let req = question(0);
    let asker = state.clone();
    let dropped = tokio::spawn(async move { asker.ask(&req, CancellationToken::new()).await });
    while state.pending() == 0 {
        tokio::task::yield_now().await;
    }
    dropped.abort();
    let _ = dropped.await;
    assert_eq!(state.pending(), 0);
}

#[tokio::test]
async fn after_shut_down_asks_are_unavailable_and_waiting_ones_fail() {
    let state = state();
    let req = request(DB);
    let asker = state.clone();
    let waiting = tokio::spawn(async move { asker.ask(&req, CancellationToken::new()).await });
    while state.pending() == 0 {
        tokio::task::yield_now().await;
    }
    assert!(state.is_available());
    state.shut_down();
    assert_eq!(
        waiting.await.unwrap(),
        Err(AskError::Failed(
            "the web page server stopped before the user answered".into()
        ))
    );
    assert!(!state.is_available());
    assert_eq!(
        state.ask(&request(DB), CancellationToken::new()).await,
        Err(AskError::Unavailable(
            "the web page server has stopped".into()
        ))
    );
}

#[tokio::test]
async fn get_only_reads_and_post_only_writes() {
    let state = state();
    let answer = format!("{}answer", state.base_path());
    let reply = send(&state, get(&answer)).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    let req = Request::builder()
        .method(Method::POST)
        .uri(state.base_path())
        .header("host", HOST)
        .header("origin", ORIGIN)
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        send(&state, req).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_ask_is_withdrawn_and_the_model_reads_the_timeout() {
    let state = state();
    let stream = open_stream(&state).await;
    let tool = ask_user_core::AskUserQuestionTool::new(Arc::new(state.clone()))
        .with_timeout(Some(std::time::Duration::from_secs(300)));
    let outcome = tool
        .call(DB, ask_user_core::ExecutionContext::default())
        .await;
    assert_eq!(outcome.code().unwrap().as_str(), "ASK_TIMED_OUT");
    assert!(
        outcome.text().starts_with("Error: no answer within 5m"),
        "{}",
        outcome.text()
    );
    assert_eq!(state.pending(), 0);
    let seen = events(stream, 3).await;
    assert_eq!(
        seen[2],
        (
            "withdrawn".to_owned(),
            r#"{"batch":1,"reason":"timed_out"}"#.to_owned()
        )
    );
    // A submission arriving afterwards is told why it was not taken.
    let body = r#"{"batch":1,"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    let reply = send(&state, post(&format!("{}answer", state.base_path()), body)).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (
            StatusCode::CONFLICT,
            "not taken: the agent stopped waiting after 5m"
        )
    );
}

/// The terminal wins; the page is told where, live, and a submission
/// from the page afterwards is refused saying so (never "ok").
#[tokio::test]
async fn when_the_terminal_wins_the_page_is_told_it_was_answered_there() {
    let state = state();
    let stream = open_stream(&state).await;
    let race = ask_user_core::FirstAnswer::new(vec![
        Arc::new(state.clone()),
        Arc::new(
            Fixed::new(selected("db", "PostgreSQL (Recommended)"))
                .after(std::time::Duration::from_millis(50))
                .named("the terminal"),
        ),
    ]);
    let outcome = ask_user_core::AskUserQuestionTool::new(Arc::new(race))
        .call(DB, ask_user_core::ExecutionContext::default())
        .await;
    assert_eq!(
        outcome.text(),
        r#"{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#
    );
    let seen = events(stream, 3).await;
    assert_eq!(
        seen[2],
        (
            "withdrawn".to_owned(),
            r#"{"batch":1,"reason":"answered_elsewhere","where":"the terminal"}"#.to_owned()
        )
    );
    let body = r#"{"batch":1,"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    let reply = send(&state, post(&format!("{}answer", state.base_path()), body)).await;
    assert_eq!(
        (reply.status, reply.text.as_str()),
        (
            StatusCode::CONFLICT,
            "not taken: already answered in the terminal"
        )
    );
}

/// A submission racing the time budget is acknowledged ("ok") exactly when it
/// is the outcome the model reads; otherwise the page hears 409. Many runs with the budget
/// and the submission at nearly the same moment; each round checks that the page's reply and
/// the model's outcome agree (which of the two wins a round is up to the scheduler).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_racing_the_budget_is_acknowledged_only_if_it_is_the_outcome() {
    for round in 0..40u64 {
        let state = state();
        let tool = ask_user_core::AskUserQuestionTool::new(Arc::new(state.clone()))
            .with_timeout(Some(std::time::Duration::from_millis(20)));
        let call = tokio::spawn(async move {
            tool.call(DB, ask_user_core::ExecutionContext::default())
                .await
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while state.pending() == 0 && !call.is_finished() {
            assert!(std::time::Instant::now() < deadline, "the ask never opened");
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(15 + round % 10)).await;
        let body = r#"{"batch":1,"answers":[{"id":"db","selected":["SQLite"]}]}"#;
        let reply = send(&state, post(&format!("{}answer", state.base_path()), body)).await;
        let outcome = call.await.unwrap();
        match reply.status {
            StatusCode::OK => {
                assert_eq!(
                    outcome.text(),
                    r#"{"answers":[{"id":"db","selected":["SQLite"]}]}"#,
                    "acknowledged as sent, so it must be the outcome"
                );
            }
            StatusCode::CONFLICT => {
                assert_eq!(outcome.code().map(|c| c.as_str()), Some("ASK_TIMED_OUT"));
                assert_eq!(
                    reply.text,
                    "not taken: the agent stopped waiting after 20ms"
                );
            }
            other => panic!("unexpected {other}: {}", reply.text),
        }
    }
}

/// Regression (found by the `web_submission` fuzz target): a valid submission must always fit
/// the body limit. The largest under the default caps: 10 multi-selects with 26 options of
/// 4,000 four-byte characters each, every option chosen, plus an own answer each.
#[tokio::test]
async fn the_largest_valid_submission_fits_the_body_limit() {
    let state = state();
    let limits = Limits::default();
    let label = |q: usize, o: usize| format!("{q}-{o}-{}", "😀".repeat(limits.max_text_chars - 8));
    let questions: Vec<serde_json::Value> = (0..limits.max_questions)
        .map(|q| {
            serde_json::json!({
                "id": format!("q{q}"), "question": "Which?", "multi_select": true,
                "options": (0..limits.max_options).map(|o| label(q, o)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let req = decode(serde_json::json!({ "questions": questions }), &limits)
        .unwrap()
        .request;
    let answers: Vec<serde_json::Value> = req
        .questions()
        .iter()
        .map(|q| {
            serde_json::json!({
                "id": q.id,
                "selected": q.options.iter().map(|o| o.label.clone()).collect::<Vec<_>>(),
                "custom": "x".repeat(limits.max_text_chars),
            })
        })
        .collect();
    let asker = state.clone();
    let expected = req.clone();
    let call = tokio::spawn(async move { asker.ask(&req, CancellationToken::new()).await });
    while state.pending() == 0 {
        tokio::task::yield_now().await;
    }
    let body = serde_json::json!({ "batch": 1, "answers": answers }).to_string();
    assert!(body.len() > 4_000_000, "{} bytes", body.len());
    let reply = send(&state, post(&format!("{}answer", state.base_path()), body)).await;
    assert_eq!((reply.status, reply.text.as_str()), (StatusCode::OK, "ok"));
    let answered = call.await.unwrap().unwrap();
    assert_eq!(answered.answers.len(), expected.questions().len());
    assert_eq!(answered.answers[9].selected.len(), 26);
}
