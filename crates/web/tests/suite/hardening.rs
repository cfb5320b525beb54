//! Hardening: a browser that disconnects in the middle of submitting an answer, over
//! a real TCP connection to the running server. The half-sent answer must not count, the
//! server must go on, and the question must stay open for the next valid answer.

use ask_user_core::{AnswerItem, Answers};
use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::{DB, ask, until_pending, web};

/// Host (`127.0.0.1:PORT`) and path prefix (`/<secret>/`) of a capability URL.
fn split(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let slash = rest.find('/').unwrap();
    (rest[..slash].to_owned(), rest[slash..].to_owned())
}

/// Sends a POST with `body` announced by its full length but only `sent` bytes of it written;
/// then the connection closes (`sent < body.len()`) or the response is read.
async fn post(host: &str, path: &str, body: &str, sent: usize) -> Option<String> {
    let mut stream = TcpStream::connect(host).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body.as_bytes()[..sent]).await.unwrap();
    if sent < body.len() {
        // The browser goes away mid-submit (tab closed, network lost).
        stream.shutdown().await.unwrap();
        drop(stream);
        return None;
    }
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    Some(response)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_disconnects_mid_submit_leaves_the_question_open() {
    let web = web().await;
    let call = ask(&web, DB);
    until_pending(&web, 1).await;
    let (host, base) = split(web.url());
    let answer = format!("{base}answer");
    // The half-sent answers pick another option than the complete one: had any of them
    // counted, the complete one would find the batch gone (409) and the call would return it.
    let half = r#"{"batch":1,"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]}]}"#;
    for sent in [0, 1, half.len() / 2, half.len() - 1] {
        assert_eq!(post(&host, &answer, half, sent).await, None);
    }
    let body = r#"{"batch":1,"answers":[{"id":"db","selected":["SQLite"]}]}"#;
    let response = post(&host, &answer, body, body.len()).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\nok"), "{response}");
    assert_eq!(
        call.await.unwrap().text(),
        ask_user_core::render(&Answers {
            answers: vec![AnswerItem::selected("db", ["SQLite"])]
        })
    );
}

/// The CSS and URL contexts: the page script has no way to put model text into a style or a
/// URL (it only sets `textContent`, `value` and constant attributes), and the policy allows no
/// inline style, so text like `</style><style>body{display:none}` or `url(javascript:…)` can
/// only ever be shown as text (the Chromium test `hostile_model_text_stays_text` shows it).
#[tokio::test]
async fn model_text_has_no_way_into_a_style_or_a_url() {
    let web = web().await;
    let (host, base) = split(web.url());
    for asset in ["app.js", "cards.js"] {
        let mut stream = TcpStream::connect(&host).await.unwrap();
        let request =
            format!("GET {base}{asset} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
        let script = response.split_once("\r\n\r\n").unwrap().1;
        for sink in [
            ".style",
            "cssText",
            "insertRule",
            "setProperty",
            "href",
            ".src",
            "srcdoc",
            "location",
            "innerHTML",
            "outerHTML",
            "document.write",
            "eval(",
            "Function(",
        ] {
            assert!(!script.contains(sink), "{asset} uses {sink}");
        }
        for attribute in script
            .match_indices("setAttribute(")
            .map(|(i, _)| &script[i..])
        {
            assert!(
                attribute.starts_with("setAttribute('aria-"),
                "{}",
                &attribute[..40]
            );
        }
    }
    assert!(ask_user_web::CONTENT_SECURITY_POLICY.contains("style-src 'self';"));
    assert!(!ask_user_web::CONTENT_SECURITY_POLICY.contains("unsafe"));
}
