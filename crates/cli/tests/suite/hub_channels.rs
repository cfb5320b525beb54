//! Channels on a running hub (docs/contract.md §10): a real `ask-user hub serve --config FILE`
//! whose channels point at FAKES of ntfy and Slack (the real services cannot be reached from
//! here; the fakes are the ones crates/channels tests against, from the test-support
//! crate, and follow the documented APIs named at their top), a real
//! `ask-user ask --hub` agent, and the human's tap made the way the phone or Slack makes it.
//! Also the configuration refusals `hub serve` prints.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ask_user_test_support::Reaped;
use ask_user_test_support::fakes::ntfy::FakeNtfy;
use ask_user_test_support::fakes::slack::{BOT_TOKEN, FakeSlack, SIGNING_SECRET, Signing};
use ask_user_test_support::fakes::telegram::{self, FakeTelegram};
use pretty_assertions::assert_eq;
use serde_json::Value;

/// Generous: the machine is small and shared.
const DEADLINE: Duration = Duration::from_secs(90);

const QUESTION: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes","No"]}]}"#;

const NTFY_TOKEN: &str = "tk_e2e_ntfy_secret_0123456789";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ask-user")
}

/// `ask-user ARGS` with a cleared environment (no inherited `ASK_USER_*`, no secret of the
/// developer's) and a private home, config, state and data directory (each agent its own local
/// store: two tests asking the same question from the same directory must not share one).
/// Callers add only what the process needs (a token, a channel secret).
fn command(home: &Path, args: &[&str]) -> Command {
    let mut c = ask_user_test_support::hermetic_command(bin(), home);
    c.args(args)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CONFIG_HOME", home)
        .env("XDG_STATE_HOME", home)
        .env("XDG_DATA_HOME", home);
    c
}

/// Runs to completion: (status, stdout, stderr).
fn run(home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = command(home, args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes a private (0600) configuration file.
fn write_config(dir: &Path, text: &str) -> PathBuf {
    let file = dir.join("config.toml");
    std::fs::write(&file, text).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    file
}

/// A running `ask-user hub serve --config FILE`; killed when dropped. Its stderr is kept.
struct Hub {
    child: Child,
    url: String,
    store: String,
    stderr: Arc<Mutex<String>>,
}

impl Hub {
    fn start(dir: &Path, config: &Path, env: &[(&str, &str)]) -> Hub {
        Hub::start_with(dir, config, env, &[])
    }

    fn start_with(dir: &Path, config: &Path, env: &[(&str, &str)], extra: &[&str]) -> Hub {
        let store = format!("sqlite:{}", dir.join("store.sqlite3").display());
        let port = ask_user_test_support::free_port();
        let url = format!("http://127.0.0.1:{port}");
        let listen = format!("127.0.0.1:{port}");
        let mut cmd = command(
            dir,
            &[
                "hub",
                "serve",
                "--listen",
                &listen,
                "--store",
                &store,
                "--config",
                config.to_str().unwrap(),
                "--public-url",
                &url,
            ],
        );
        cmd.args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if line.contains("serving on ") {
                    let _ = tx.send(());
                }
                kept.lock().unwrap().push_str(&line);
                kept.lock().unwrap().push('\n');
            }
        });
        if rx.recv_timeout(DEADLINE).is_err() {
            let _ = child.kill();
            panic!("the hub did not start: {}", stderr.lock().unwrap());
        }
        Hub {
            child,
            url,
            store,
            stderr,
        }
    }

    fn token(&self, dir: &Path, name: &str) -> String {
        let (code, out, err) = run(dir, &["hub", "token", "add", name, "--store", &self.store]);
        assert_eq!(code, 0, "token add: {err}");
        out.trim().to_owned()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An agent: `ask-user ask --hub URL` with [`QUESTION`] on stdin.
struct Agent {
    child: Reaped,
}

impl Agent {
    fn start(dir: &Path, url: &str, token: &str) -> Agent {
        let mut command = command(dir, &["ask", "--hub", url, "--session-title", "deploy"]);
        command.env("ASK_USER_HUB_TOKEN", token);
        Agent {
            child: Reaped::with_input(&mut command, QUESTION.as_bytes()),
        }
    }

    /// Waits (up to the deadline, off the async runtime) for the agent to end:
    /// (status, stdout, stderr).
    async fn finish(self) -> (i32, String, String) {
        tokio::task::spawn_blocking(move || self.child.finish(DEADLINE))
            .await
            .unwrap()
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The options the agent printed as selected for question `go`.
fn selected(out: &str) -> Value {
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["answers"][0]["id"], "go", "{out}");
    v["answers"][0]["selected"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ntfy_button_answers_the_agent_through_a_real_hub() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeNtfy::start(Some(NTFY_TOKEN)).await;
    // The token comes from the environment; the file holds no secret.
    let config = write_config(
        dir.path(),
        &format!("[ntfy]\nserver = \"{}\"\ntopic = \"asks\"\n", fake.url),
    );
    let hub = Hub::start(dir.path(), &config, &[("ASK_USER_NTFY_TOKEN", NTFY_TOKEN)]);
    assert!(
        hub.stderr().contains("ask-user hub: channels: ntfy"),
        "{}",
        hub.stderr()
    );
    let token = hub.token(dir.path(), "ci-bot");
    let agent = Agent::start(dir.path(), &hub.url, &token);

    let published = fake.wait_for("the question", |p| !p.is_empty()).await;
    let msg = &published[0];
    assert_eq!(msg["topic"], "asks");
    assert_eq!(
        msg["message"].as_str().unwrap().lines().next(),
        Some("Deploy now?")
    );
    let actions = msg["actions"].as_array().unwrap();
    let labels: Vec<&str> = actions
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Yes", "No", "Open"]);
    let yes = &actions[0];
    assert_eq!(
        (yes["action"].as_str(), yes["method"].as_str()),
        (Some("http"), Some("POST"))
    );
    let yes_url = yes["url"].as_str().unwrap();
    assert!(
        yes_url.starts_with(&format!("{}/channels/", hub.url)),
        "{yes_url}"
    );
    assert!(
        actions[2]["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{}/", hub.url)),
        "{actions:?}"
    );

    // The phone sends the http action: an empty POST to its URL.
    let resp = http().post(yes_url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.text().await.unwrap(),
        "Answer recorded: \u{201c}Yes\u{201d}."
    );

    let (code, out, err) = agent.finish().await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(selected(&out), serde_json::json!(["Yes"]), "{out}");

    // The notification is replaced: same sequence id, no buttons.
    let published = fake.wait_for("the close update", |p| p.len() >= 2).await;
    assert_eq!(published[1]["sequence_id"], msg["sequence_id"]);
    assert!(
        published[1]["actions"]
            .as_array()
            .is_none_or(|a| a.iter().all(|x| x["action"] != "http")),
        "{:#?}",
        published[1]
    );
    // A second tap of the same button is refused.
    let again = http().post(yes_url).send().await.unwrap();
    assert_eq!(again.status(), 410);
    assert!(!hub.stderr().contains(NTFY_TOKEN), "{}", hub.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_slack_click_answers_the_agent_through_a_real_hub() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeSlack::start().await;
    // Secrets in the file: it is private (0600).
    let config = write_config(
        dir.path(),
        &format!(
            "[slack]\napi_base = \"{}/api\"\ntoken = \"{BOT_TOKEN}\"\nsigning_secret = \"{SIGNING_SECRET}\"\nchannel = \"C1\"\nallowed_users = [\"U1\"]\n",
            fake.url
        ),
    );
    let hub = Hub::start(dir.path(), &config, &[]);
    let token = hub.token(dir.path(), "ci-bot");
    let agent = Agent::start(dir.path(), &hub.url, &token);

    let posted = fake.wait_for("chat.postMessage", |c| !c.is_empty()).await;
    let msg = &posted[0];
    assert_eq!(msg["channel"], "C1");
    let buttons: Vec<&Value> = msg["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .collect();
    let yes = buttons.iter().find(|b| b["text"]["text"] == "Yes").unwrap();
    let value = yes["value"].as_str().unwrap();
    let endpoint = format!("{}/channels/slack/interactivity", hub.url);

    // A request not signed with the app's secret changes nothing.
    let (status, body, _) = fake
        .click(
            &endpoint,
            "U1",
            value,
            "1700000000.000001",
            Signing::WrongSecret,
        )
        .await;
    assert_eq!(
        (status, body.as_str()),
        (401, "Slack request signature refused.")
    );

    let (status, _, reply) = fake
        .click(&endpoint, "U1", value, "1700000000.000001", Signing::Good)
        .await;
    assert_eq!(status, 200);
    if reply.as_deref() != Some("Answer recorded: \u{201c}Yes\u{201d}.") {
        let (code, out, err) = agent.finish().await;
        panic!(
            "{reply:?}; the agent: {code} {out} {err}; the hub: {}",
            hub.stderr()
        );
    }

    let (code, out, err) = agent.finish().await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(selected(&out), serde_json::json!(["Yes"]), "{out}");
    // The message loses its buttons once the ask is closed.
    let updates = fake.wait_for("chat.update", |c| !c.is_empty()).await;
    assert_eq!(updates[0]["ts"], "1700000000.000001");
    let stderr = hub.stderr();
    assert!(
        !stderr.contains(BOT_TOKEN) && !stderr.contains(SIGNING_SECRET),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_reaches_telegram_later_and_its_button_answers() {
    const CHAT: i64 = 4242;
    let dir = tempfile::tempdir().unwrap();
    let ntfy = FakeNtfy::start(None).await;
    let telegram = FakeTelegram::start().await;
    let config = write_config(
        dir.path(),
        &format!(
            "[ntfy]\nserver = \"{}\"\ntopic = \"asks\"\npublic_topic = true\n\n[telegram]\napi_base = \"{}\"\ntoken = \"{}\"\nchats = [{CHAT}]\npoll_timeout = 1\n",
            ntfy.url,
            telegram.url,
            telegram::BOT_TOKEN
        ),
    );
    let hub = Hub::start_with(dir.path(), &config, &[], &["--escalate", "3s:telegram"]);
    let token = hub.token(dir.path(), "ci-bot");
    let agent = Agent::start(dir.path(), &hub.url, &token);

    // ntfy at once; Telegram only once the ask has waited 3 s.
    ntfy.wait_for("the question", |p| !p.is_empty()).await;
    let ntfy_at = Instant::now();
    assert!(telegram.calls("sendMessage").is_empty());
    let sent = telegram.wait_for("sendMessage", |c| !c.is_empty()).await;
    assert!(
        ntfy_at.elapsed() >= Duration::from_secs(2),
        "Telegram came {:?} after ntfy",
        ntfy_at.elapsed()
    );
    let msg = &sent[0];
    assert_eq!(msg["chat_id"], CHAT);
    let yes = msg["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .find(|b| b["text"] == "Yes")
        .unwrap()["callback_data"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = telegram.message_id_of(msg);
    assert_eq!(
        telegram.tap_and_read(CHAT, 7, id, &yes).await,
        "Answer recorded: \u{201c}Yes\u{201d}."
    );
    let (code, out, err) = agent.finish().await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(selected(&out), serde_json::json!(["Yes"]), "{out}");
    // Both messages are closed: Telegram's edited, ntfy's replaced.
    telegram
        .wait_for("editMessageText", |c| !c.is_empty())
        .await;
    ntfy.wait_for("the close update", |p| p.len() >= 2).await;
    assert!(
        !hub.stderr().contains(telegram::BOT_TOKEN),
        "{}",
        hub.stderr()
    );
}

/// The SMTP fake, waited on for its messages.
struct Smtp(ask_user_test_support::FakeSmtp);

impl std::ops::Deref for Smtp {
    type Target = ask_user_test_support::FakeSmtp;

    fn deref(&self) -> &ask_user_test_support::FakeSmtp {
        &self.0
    }
}

impl Smtp {
    fn start(dir: &Path) -> Smtp {
        Smtp(ask_user_test_support::FakeSmtp::start(dir))
    }

    /// Waits (up to the deadline) for the n-th message.
    async fn message(&self, n: usize) -> Value {
        let path = self.out.join(format!("{n}.json"));
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&path) {
                return serde_json::from_str(&s).unwrap();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "no message {n} within {DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_link_confirms_on_the_hub_then_answers_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let smtp = Smtp::start(dir.path());
    let config = write_config(
        dir.path(),
        &format!(
            "[email]\nsmtp_host = \"127.0.0.1\"\nsmtp_port = {}\nfrom = \"ask-user <ask-user@example.org>\"\nto = \"me@example.org\"\nstarttls = true\nca_file = \"{}\"\n",
            smtp.port,
            smtp.cert.display()
        ),
    );
    let hub = Hub::start(dir.path(), &config, &[]);
    let token = hub.token(dir.path(), "ci-bot");
    let mut agent = Agent::start(dir.path(), &hub.url, &token);

    let mail = smtp.message(1).await;
    assert_eq!(
        (mail["tls"].as_bool(), mail["to"].as_str()),
        (Some(true), Some("me@example.org"))
    );
    let text = mail["text"].as_str().unwrap();
    let yes = text
        .lines()
        .filter_map(|l| l.strip_prefix("- ")?.rsplit_once(": "))
        .find(|(label, _)| *label == "Yes")
        .map(|(_, url)| url.to_owned())
        .unwrap_or_else(|| panic!("no link for Yes in {text}"));
    assert!(yes.starts_with(&format!("{}/channels/", hub.url)), "{yes}");

    // Following the link (as a mail scanner would) answers nothing: it shows a confirm page.
    let page = http().get(&yes).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("Deploy now?") && html.contains("<form method=\"post\">"),
        "{html}"
    );
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the GET answered"
    );

    // The confirm button.
    let done = http().post(&yes).send().await.unwrap();
    assert_eq!(done.status(), 200);
    assert!(done.text().await.unwrap().contains("Answer recorded"));
    let (code, out, err) = agent.finish().await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(selected(&out), serde_json::json!(["Yes"]), "{out}");
    // Mail cannot be edited: a follow-up in the same thread says how it closed.
    let follow_up = smtp.message(2).await;
    assert_eq!(follow_up["in_reply_to"], mail["message_id"]);
}

/// `hub serve` with `extra` arguments and a config file `text` of `mode`: it must refuse to
/// start (exit 2) with a message on stderr, returned.
fn refused(text: &str, mode: u32, extra: &[&str]) -> (String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, text).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(mode)).unwrap();
    let store = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    let mut args = vec![
        "hub",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--store",
        &store,
        "--config",
        config.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = run(dir.path(), &args);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    (err.trim_end().to_owned(), config, dir)
}

const SLACK_WITH_SECRETS: &str = "[slack]\ntoken = \"xoxb-never-shown\"\nsigning_secret = \"never-shown-either\"\nchannel = \"C1\"\nallowed_users = [\"U1\"]\n";

#[test]
fn a_config_file_with_secrets_readable_by_others_is_refused() {
    let (err, config, _dir) = refused(
        SLACK_WITH_SECRETS,
        0o644,
        &["--public-url", "http://127.0.0.1:1"],
    );
    let f = config.display();
    assert_eq!(
        err,
        format!(
            "ask-user: {f} holds a secret but other users can access it (mode 644); make it private: chmod 600 {f}"
        )
    );
}

#[test]
fn an_unknown_key_is_refused_by_name() {
    let (err, config, _dir) = refused(
        "[ntfy]\ntopic = \"asks\"\npublic_topc = true\n",
        0o600,
        &["--public-url", "http://127.0.0.1:1"],
    );
    assert_eq!(
        err,
        format!(
            "ask-user: {}: unknown key `ntfy.public_topc` (known here: server, topic, token, public_topic)",
            config.display()
        )
    );
}

#[test]
fn channels_without_a_public_url_are_refused() {
    let (err, config, _dir) = refused(SLACK_WITH_SECRETS, 0o600, &[]);
    assert_eq!(
        err,
        format!(
            "ask-user: {} configures channels (slack) but the hub has no --public-url: their buttons and links must reach the hub from the phone; give --public-url https://HOST (the address the phone reaches, e.g. the reverse proxy's)",
            config.display()
        )
    );
    assert!(!err.contains("never-shown"));
}

#[test]
fn an_escalation_to_a_channel_not_configured_is_refused() {
    let (err, _config, _dir) = refused(
        SLACK_WITH_SECRETS,
        0o600,
        &[
            "--public-url",
            "http://127.0.0.1:1",
            "--escalate",
            "5m:telegram",
        ],
    );
    assert_eq!(
        err,
        "ask-user: --escalate: channel \"telegram\" is not configured (configured: slack)"
    );
}

#[test]
fn a_channel_refusing_its_settings_stops_the_hub() {
    let (err, config, _dir) = refused(
        "[email]\nsmtp_host = \"127.0.0.1\"\nfrom = \"not an address\"\nto = \"me@example.org\"\n",
        0o600,
        &["--public-url", "http://127.0.0.1:1"],
    );
    assert_eq!(
        err,
        format!(
            "ask-user: {}: email: \"not an address\" is not a mail address",
            config.display()
        )
    );
}

#[test]
fn a_missing_config_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let (code, _, err) = run(
        dir.path(),
        &[
            "hub",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            missing.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with(&format!(
            "ask-user: cannot read the configuration {}: No such file",
            missing.display()
        )),
        "{err}"
    );
}

#[test]
fn the_default_config_file_is_read_from_the_config_home() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ask-user").join("config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, SLACK_WITH_SECRETS).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    // `command` sets XDG_CONFIG_HOME to `dir`: the file there configures Slack, which needs a
    // public URL.
    let (code, _, err) = run(
        dir.path(),
        &["hub", "serve", "--listen", "127.0.0.1:0", "--store", &store],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with(&format!(
            "ask-user: {} configures channels (slack) but the hub has no --public-url",
            config.display()
        )),
        "{err}"
    );
}
