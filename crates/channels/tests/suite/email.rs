//! The email channel against a REAL SMTP server: PyPI aiosmtpd (tests/smtp_server.py), with
//! STARTTLS required on a self-signed certificate this test makes with `openssl req`. The
//! server parses each message with Python's `email` package; the test follows the links with
//! a real HTTP client (reqwest), as the human's mail client would.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ask_user_channels::email::{Email, EmailConfig};
use ask_user_channels::{Channel, ChannelError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Hub, single_select};

/// The SMTP fake in a directory of its own; `cert` is its certificate's PEM bytes.
struct Smtp {
    port: u16,
    out: PathBuf,
    cert: Vec<u8>,
    _fake: ask_user_test_support::FakeSmtp,
    _dir: tempfile::TempDir,
}

impl Smtp {
    fn start() -> Smtp {
        let dir = tempfile::tempdir().unwrap();
        let fake = ask_user_test_support::FakeSmtp::start(dir.path());
        Smtp {
            port: fake.port,
            out: fake.out.clone(),
            cert: std::fs::read(&fake.cert).unwrap(),
            _fake: fake,
            _dir: dir,
        }
    }

    fn config(&self, trust: bool) -> EmailConfig {
        EmailConfig {
            smtp_host: "127.0.0.1".into(),
            smtp_port: self.port,
            username: None,
            password: None,
            from: "ask-user <ask-user@example.org>".into(),
            to: "me@example.org".into(),
            extra_root_pem: trust.then(|| self.cert.clone()),
        }
    }

    /// Waits (up to 30 s) for the n-th message.
    async fn message(&self, n: usize) -> Value {
        let path = self.out.join(format!("{n}.json"));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(s) = std::fs::read_to_string(&path) {
                return serde_json::from_str(&s).unwrap();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no message {n} within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The answer links of a plain-text part: `- label: URL` lines.
fn links(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("- ")?.rsplit_once(": "))
        .map(|(l, u)| (l.to_owned(), u.to_owned()))
        .collect()
}

#[tokio::test]
async fn a_mail_link_confirms_then_answers_once_and_a_follow_up_says_so() {
    let smtp = Smtp::start();
    let email = Email::new(smtp.config(true)).unwrap();
    let hub = Hub::start(vec![Arc::new(email) as Arc<dyn Channel>]).await;
    let question =
        "Ship it? <script>alert(1)</script> <a href=\"https://evil.example\">Approve</a> & more";
    let ask = hub
        .ask(
            "mail",
            &single_select(question, "Release", &["Yes", "<b>No</b>"]),
        )
        .await;

    let m = smtp.message(1).await;
    assert_eq!(m["tls"], json!(true), "STARTTLS was in effect");
    assert_eq!(m["rcpt_tos"], json!(["me@example.org"]));
    assert_eq!(
        m["subject"],
        json!("claude-code \u{b7} ~/src/app asks: Release")
    );
    // Mail travels with CRLF line ends; compare with LF.
    let text = m["text"].as_str().unwrap().replace("\r\n", "\n");
    let page = format!("{}/inbox#ask-{ask}", hub.url);
    let found = links(&text);
    assert_eq!(
        found.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        ["Yes", "<b>No</b>"]
    );
    let (yes, no) = (found[0].1.clone(), found[1].1.clone());
    assert_eq!(
        text,
        format!(
            "claude-code \u{b7} ~/src/app\n\n{question}\n1. Yes\n2. <b>No</b>\n\nAnswer (each link asks you to confirm):\n- Yes: {yes}\n- <b>No</b>: {no}\n\nOpen the question: {page}\n"
        )
    );
    // HTML: model text escaped, our links the only links.
    let html = m["html"].as_str().unwrap();
    assert!(html.contains("Ship it? &lt;script&gt;alert(1)&lt;/script&gt; &lt;a href=&quot;https://evil.example&quot;&gt;Approve&lt;/a&gt; &amp; more"), "{html}");
    assert!(
        html.contains(&format!("<a href=\"{no}\">&lt;b&gt;No&lt;/b&gt;</a>")),
        "{html}"
    );
    assert!(
        !html.contains("<script>") && !html.contains("<b>"),
        "{html}"
    );
    assert_eq!(html.matches("<a href=").count(), 3);

    // A scanner (or the human) opening the link answers nothing.
    let http = reqwest::Client::new();
    for _ in 0..2 {
        let r = http.get(&yes).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(r.headers()["referrer-policy"], "no-referrer");
        assert_eq!(r.headers()["cache-control"], "no-store");
        let body = r.text().await.unwrap();
        assert!(
            body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{body}"
        );
        assert!(body.contains("<form method=\"post\"><button type=\"submit\">Answer \u{201c}Yes\u{201d}</button></form>"), "{body}");
        assert!(hub.store.get(ask).await.unwrap().is_open());
    }
    // The button answers, recording the address.
    let r = http.post(&yes).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("<p>Answer recorded: \u{201c}Yes\u{201d}.</p>")
    );
    hub.assert_answered(
        ask,
        json!({"answers": [{"id": "q1", "selected": ["Yes"]}]}),
        "email",
        Some("me@example.org".into()),
    )
    .await;
    // Replayed, then the other link.
    let r = http.post(&yes).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 410);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("<p>This answer link was already used.</p>")
    );
    let r = http.get(&no).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 409);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("This question was already answered (\u{201c}Yes\u{201d}, via email).")
    );

    // The follow-up in the same thread.
    let f = smtp.message(2).await;
    assert_eq!(
        f["subject"],
        json!("Re: claude-code \u{b7} ~/src/app asks: Release")
    );
    assert_eq!(f["in_reply_to"], m["message_id"]);
    assert_eq!(
        json!(f["text"].as_str().unwrap().replace("\r\n", "\n")),
        json!(format!(
            "Answered: \u{201c}Yes\u{201d} (via email).\nThe links in the earlier message no longer answer.\n\n{question}\n1. Yes\n2. <b>No</b>\n"
        ))
    );
}

#[tokio::test]
async fn an_untrusted_certificate_is_an_error_without_secrets() {
    let smtp = Smtp::start();
    let config = EmailConfig {
        username: Some("me".into()),
        password: Some("hunter2-secret".into()),
        ..smtp.config(false)
    };
    assert!(!format!("{config:?}").contains("hunter2"));
    let email = Email::new(config).unwrap();
    let notice = ask_user_channels::Notice {
        ask: ask_user_store::AskId(1),
        asker: ask_user_store::Asker::default(),
        questions: serde_json::from_value(
            json!([{"id": "q", "question": "x", "multi_select": false}]),
        )
        .unwrap(),
        page_url: "http://hub/inbox".into(),
        public_url: "http://hub".into(),
        choices: Vec::new(),
        done: None,
        own: None,
        again: None,
    };
    let err = email.notify(&notice).await.unwrap_err();
    assert!(matches!(err, ChannelError::Unreachable { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("email: the server could not be reached: "),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        std::fs::read_dir(&smtp.out).unwrap().next().is_none(),
        "nothing was delivered"
    );
}

#[tokio::test]
async fn bidi_and_invisibles_are_shown_inert_in_the_mail_and_its_confirm_page() {
    // The confirm page read "Pay $1000 to Bob…" for `Pay \u{202e}0001$\u{202c}`.
    let smtp = Smtp::start();
    let email = Email::new(smtp.config(true)).unwrap();
    let hub = Hub::start(vec![Arc::new(email) as Arc<dyn Channel>]).await;
    let question = "Pay \u{202e}0001$\u{202c} to Bob?\n\n\n\n\nمی\u{200c}خواهم";
    let ask = hub
        .ask(
            "mail",
            &single_select(question, "Pay", &["Yes\u{202e}", "No"]),
        )
        .await;
    let m = smtp.message(1).await;
    let text = m["text"].as_str().unwrap().replace("\r\n", "\n");
    assert!(
        text.contains(
            "Pay \\u{202e}0001$\\u{202c} to Bob?\n\nمی\u{200c}خواهم\n1. Yes\\u{202e}\n2. No"
        ),
        "{text}"
    );
    let found = links(&text);
    assert_eq!(found[0].0, "Yes\\u{202e}");
    let html = m["html"].as_str().unwrap();
    assert!(!html.contains('\u{202e}'), "{html}");
    let body = reqwest::get(&found[0].1)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        body.contains("Pay \\u{202e}0001$\\u{202c} to Bob?\n\nمی\u{200c}خواهم"),
        "{body}"
    );
    assert!(
        body.contains("Answer \u{201c}Yes\\u{202e}\u{201d}"),
        "{body}"
    );
    assert!(!body.contains('\u{202e}'), "{body}");
    assert!(hub.store.get(ask).await.unwrap().is_open());
}
