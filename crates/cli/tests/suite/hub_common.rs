//! Helpers shared by the hub's real-process tests (`hub.rs`, `hub_inbox.rs`): the binary,
//! `ask-user hub serve` processes, agents, and the human's signed-in HTTP calls.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ask_user_test_support::Reaped;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
/// Generous: the machine is small and shared.
pub(crate) const DEADLINE: Duration = Duration::from_secs(90);

/// What an agent asked [`QUESTION`] prints when the human answers "Yes".
pub(crate) const ANSWER_YES: &str = r#"{"answers":[{"id":"go","selected":["Yes"]}]}"#;
/// … and "No".
pub(crate) const ANSWER_NO: &str = r#"{"answers":[{"id":"go","selected":["No"]}]}"#;

pub(crate) const QUESTION: &str =
    r#"{"questions":[{"id":"go","question":"Deploy now?","options":["Yes","No"]}]}"#;

/// The URL a `hub serve` child prints on stderr ("serving on URL …"), waiting up to `deadline`;
/// the rest of its stderr is read (and dropped) so the child never blocks on a full pipe.
pub(crate) fn served_url(child: &mut Child, deadline: Duration) -> String {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(i) = line.find("serving on ") {
                let url = line[i + 11..].split(' ').next().unwrap().to_owned();
                let _ = tx.send(url);
            }
        }
    });
    rx.recv_timeout(deadline)
        .expect("the hub printed its address")
}

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ask-user")
}

/// `ask-user` with a cleared environment: a home and config/state/data directories of these
/// tests' own (never the developer's, never an inherited `ASK_USER_*`), and a plain `PATH`.
/// Each caller adds only what its process needs (a store, a token).
pub(crate) fn ask_user() -> Command {
    ask_user_at(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("hub-tests-home"))
}

/// [`ask_user`] with `home` as its home (and its config/state/data directories under it): a
/// test whose processes share a default store of their own.
pub(crate) fn ask_user_at(home: &Path) -> Command {
    let mut cmd = ask_user_test_support::hermetic_command(bin(), home);
    cmd.env("PATH", "/usr/bin:/bin")
        .env("XDG_DATA_HOME", home.join("data"));
    cmd
}

/// Runs the browser script `tests/SCRIPT` (node, playwright-core and Chromium; axe-core
/// offered) with `args` and `env`; its `RESULT` JSON.
pub(crate) fn browser_script(script: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let (playwright, axe) = ask_user_test_support::browser_tools();
    // Chromium's private home.
    let home = tempfile::tempdir().unwrap();
    let out = ask_user_test_support::hermetic_command("node", home.path())
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(script),
        )
        .args(args)
        .env("PLAYWRIGHT_CORE", playwright)
        .env("AXE_CORE", axe)
        .envs(env.iter().copied())
        .output()
        .expect("node runs (scripts/setup installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .expect("a RESULT line");
    serde_json::from_str(line).unwrap()
}

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `ask-user ARGS` to completion: (status, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let out = ask_user().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `command` to its end, asserting it succeeded (its stderr shown otherwise): its stdout,
/// trimmed.
pub(crate) fn printed(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

pub(crate) fn token(store: &str, name: &str) -> String {
    let (code, out, err) = run(&["hub", "token", "add", name, "--store", store]);
    assert_eq!(code, 0, "token add: {err}");
    out.trim().to_owned()
}

pub(crate) fn login_link(store: &str, url: &str) -> String {
    let (code, out, err) = run(&["hub", "login-link", "--store", store, "--url", url]);
    assert_eq!(code, 0, "login-link: {err}");
    out.trim().to_owned()
}

/// A hub serving a SQLite store of its own, with a token for one agent and a session of the
/// human's signed in on it.
pub(crate) struct Served {
    /// The folder of the store (a test's agents may keep their own files there).
    pub(crate) dir: tempfile::TempDir,
    pub(crate) store: String,
    /// The agent's token.
    pub(crate) token: String,
    pub(crate) hub: Hub,
    /// The human's session cookie.
    pub(crate) cookie: String,
}

impl Served {
    /// A fresh store `hub.sqlite3`, a token for `agent`, the hub serving it, the human signed in.
    pub(crate) async fn start(agent: &str) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("sqlite:{}", dir.path().join("hub.sqlite3").display());
        let token = token(&store, agent);
        let hub = Hub::start(&store, &[]);
        let cookie = session(&store, &hub.url).await;
        Served {
            dir,
            store,
            token,
            hub,
            cookie,
        }
    }
}

/// A running `ask-user hub serve`; killed (SIGKILL) when dropped.
pub(crate) struct Hub {
    pub(crate) child: Child,
    pub(crate) url: String,
}

impl Hub {
    pub(crate) fn start(store: &str, extra: &[&str]) -> Hub {
        Hub::start_at("127.0.0.1:0", store, extra)
    }

    pub(crate) fn start_at(listen: &str, store: &str, extra: &[&str]) -> Hub {
        Hub::start_env(listen, store, extra, &[])
    }

    pub(crate) fn start_env(
        listen: &str,
        store: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Hub {
        Hub::serve(
            ask_user()
                .args(["hub", "serve", "--listen", listen, "--store", store])
                .args(extra)
                .envs(env.iter().copied()),
        )
    }

    /// Starts `command` (an `ask-user hub serve`) and waits for the URL it serves.
    pub(crate) fn serve(command: &mut Command) -> Hub {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let url = served_url(&mut child, DEADLINE);
        Hub { child, url }
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The local store of every agent here: its own memory store. Never the default SQLite file:
/// there every agent of these tests has the same caller scope (working directory, user, no
/// `ASK_USER_SESSION`) and asks the same question, so an agent started while another test's
/// agent waits re-attached to that agent's local ask, and one started just after another's
/// answer was stored and before it was marked delivered took that answer at once without
/// asking its hub (docs/contract.md §8: a retry gets the answer given meanwhile). That was
/// the flake of the replica test run in parallel: its agent printed another test's answer
/// and B's inbox never showed its ask (docs/decisions.md "MCP through the hub").
pub(crate) const AGENT_STORE: &str = "memory";

/// An agent: `ask-user ask --hub URLS` with the question on stdin (killed when dropped).
pub(crate) struct Agent {
    pub(crate) child: Reaped,
}

impl Agent {
    pub(crate) fn start(urls: &str, token: &str, session: &str) -> Agent {
        Agent::start_with(urls, token, session, &[])
    }

    /// [`Agent::start`] with `extra` flags (e.g. `--timeout 10m`).
    pub(crate) fn start_with(urls: &str, token: &str, session: &str, extra: &[&str]) -> Agent {
        Agent::spawn(
            ask_user()
                .args(["ask", "--hub", urls, "--session-title", session])
                .args(extra)
                .env("ASK_USER_STORE", AGENT_STORE)
                .env("ASK_USER_HUB_TOKEN", token),
        )
    }

    /// `command` (an `ask-user ask …`) started with piped stdio and [`QUESTION`] on its stdin.
    pub(crate) fn spawn(command: &mut Command) -> Agent {
        Agent {
            child: Reaped::with_input(command, QUESTION.as_bytes()),
        }
    }

    /// Waits (up to the deadline) for the agent to end: (status, stdout, stderr).
    pub(crate) fn finish(self) -> (i32, String, String) {
        self.child.finish(DEADLINE)
    }

    /// [`Agent::finish`], asserting it exited 0 having printed exactly `answer`.
    pub(crate) fn prints(self, answer: &str) {
        let (code, out, err) = self.finish();
        assert_eq!((code, out.as_str()), (0, answer), "{err}");
    }
}

pub(crate) fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `GET /v1/asks/{id}` on the hub at `url` as the agent of `token`: the ask as its agent sees it.
pub(crate) async fn agent_view(url: &str, token: &str, id: i64) -> Value {
    http()
        .get(format!("{url}/v1/asks/{id}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `GET url` as the human signed in with the session `cookie`; the response.
pub(crate) async fn get_signed_in(url: &str, cookie: &str) -> reqwest::Response {
    http()
        .get(url)
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .send()
        .await
        .unwrap()
}

/// Signs in with a fresh link on `url`; the session cookie's value.
pub(crate) async fn session(store: &str, url: &str) -> String {
    let link = login_link(store, url);
    let resp = http()
        .post(&link)
        .header("Origin", url)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    cookie_value(&resp)
}

/// The value of the session cookie `resp` sets.
pub(crate) fn cookie_value(resp: &reqwest::Response) -> String {
    resp.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("ask_user_hub=")
        .to_owned()
}

pub(crate) async fn inbox(url: &str, cookie: &str) -> Value {
    let (status, state) = inbox_state(url, cookie, "").await;
    assert_eq!(status, 200);
    assert!(state.is_object(), "the state is JSON: {state}");
    state
}

/// The inbox state read with `query`, signed in with the session `cookie` (its value): the
/// status and the body (as a JSON string when it is not JSON).
pub(crate) async fn inbox_state(url: &str, cookie: &str, query: &str) -> (u16, Value) {
    let resp = http()
        .get(format!("{url}/inbox/state{query}"))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Waits until `n` asks are open in the inbox; their ids, newest first.
pub(crate) async fn wait_open(url: &str, cookie: &str, n: usize) -> Vec<i64> {
    let start = Instant::now();
    loop {
        let state = inbox(url, cookie).await;
        let open = state["open"].as_array().unwrap();
        if open.len() >= n {
            return open.iter().map(|a| a["id"].as_i64().unwrap()).collect();
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{n} open asks never showed: {state}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) async fn human_answer(url: &str, cookie: &str, id: i64, label: &str) -> (u16, Value) {
    let resp = http()
        .post(format!("{url}/inbox/asks/{id}/answer"))
        .header("Cookie", format!("ask_user_hub={cookie}"))
        .header("Origin", url)
        .header("Content-Type", "application/json")
        .body(json!({"answers": [{"id": "go", "selected": [label]}]}).to_string())
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}
