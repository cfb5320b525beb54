//! Hardening (issue 6): a browser that disconnects in the middle of submitting an answer, over
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
