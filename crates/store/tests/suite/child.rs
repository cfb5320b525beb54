//! Child mode: `common::ChildProc` runs this test binary again with `--ignored --exact
//! child::entry` and the command in `ASK_USER_STORE_CHILD`. `entry` is an entry point, not a
//! test: ignored, so a normal run lists it as ignored instead of counting it as passed. The child reports on stdout in lines starting with `@@ `.

use std::io::Write;
use std::time::{Duration, Instant};

use ask_user_store::{AskId, Asker, NewAsk, Outcome, Recorded, Responder, Scope, Store, Timestamp};

fn say(msg: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "@@ {msg}").unwrap();
    out.flush().unwrap();
}

fn answer_of(rec: &ask_user_store::AskRecord) -> String {
    match rec.closed.as_ref().map(|c| &c.outcome) {
        Some(Outcome::Answered { answer, .. }) => answer.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
#[ignore = "an entry point for child processes (common::ChildProc), not a test"]
fn entry() {
    let cmd = std::env::var("ASK_USER_STORE_CHILD")
        .expect("run by common::ChildProc, with ASK_USER_STORE_CHILD set");
    let args: Vec<&str> = cmd.split('\u{1f}').collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(&args));
}

async fn run(args: &[&str]) {
    match args {
        ["open", url] => match Store::open(url).await {
            Ok(_) => say("ok"),
            Err(e) => say(&format!("err {e}")),
        },
        ["open-default"] => match Store::open_default().await {
            Ok(s) => say(&format!("ok {}", s.location())),
            Err(e) => say(&format!("err {e}")),
        },
        ["follow", url] => {
            let store = Store::open(url).await.unwrap();
            let mut feed = store.subscribe().await.unwrap();
            say("subscribed");
            match feed.next().await {
                Some(ask_user_store::Change::Ask(id)) => say(&format!("change {}", id.0)),
                other => say(&format!("{other:?}")),
            }
        }
        ["write-loop", url] => {
            let store = Store::open(url).await.unwrap();
            for i in 0.. {
                let ask = NewAsk::new(
                    &Scope::HostKey(format!("w{i}")),
                    format!("{{\"i\":{i}}}"),
                    Asker::default(),
                );
                let id = store.open_ask(&ask).await.unwrap().record().id;
                let answer = Outcome::Answered {
                    answer: serde_json::json!({ "i": i }),
                    by: Responder::default(),
                };
                assert_eq!(
                    store
                        .record_outcome(id, &answer, Timestamp::now())
                        .await
                        .unwrap(),
                    Recorded::Won
                );
                say(&format!("acked {} {i}", id.0));
            }
        }
        ["ask-once", url, i] => {
            // One commit (the ask), then the process ends: the store's last handle closes.
            let store = Store::open(url).await.unwrap();
            let ask = NewAsk::new(
                &Scope::HostKey(format!("once{i}")),
                format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(16_000)),
                Asker::default(),
            );
            store.open_ask(&ask).await.unwrap();
            say("opened");
        }
        ["write-n", url, n, tag] => {
            let store = Store::open(url).await.unwrap();
            let n: usize = n.parse().unwrap();
            let mut failed = None;
            for i in 0..n {
                let ask = NewAsk::new(
                    &Scope::HostKey(format!("{tag}-{i}")),
                    format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(2_000)),
                    Asker::default(),
                );
                let answer = Outcome::Answered {
                    answer: serde_json::json!({ "i": i }),
                    by: Responder::default(),
                };
                let step = async {
                    let id = store.open_ask(&ask).await?.record().id;
                    store.record_outcome(id, &answer, Timestamp::now()).await?;
                    store.mark_delivered(id, &answer, Timestamp::now()).await
                };
                if let Err(e) = step.await {
                    failed = Some(e);
                    break;
                }
            }
            match failed {
                None => say("done"),
                Some(e) => say(&format!("err {e}")),
            }
        }
        ["fill", url] => {
            let store = Store::open(url).await.unwrap();
            let mut acked = Vec::new();
            let failure = loop {
                let i = acked.len();
                let ask = NewAsk::new(
                    &Scope::HostKey(format!("f{i}")),
                    format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(500)),
                    Asker::default(),
                );
                let id = match store.open_ask(&ask).await {
                    Ok(o) => o.record().id,
                    Err(e) => break e,
                };
                let answer = Outcome::Answered {
                    answer: serde_json::json!({ "i": i }),
                    by: Responder::default(),
                };
                if let Err(e) = store.record_outcome(id, &answer, Timestamp::now()).await {
                    break e;
                }
                acked.push(id);
                say(&format!("acked {}", id.0));
            };
            drop(store);
            let fresh = Store::open(url).await.unwrap();
            let mut verified = 0;
            for (i, id) in acked.iter().enumerate() {
                let rec = fresh.get(*id).await.unwrap();
                match rec.closed.map(|c| c.outcome) {
                    Some(Outcome::Answered { answer, .. })
                        if answer == serde_json::json!({ "i": i }) =>
                    {
                        verified += 1
                    }
                    other => panic!("ask {id} lost its answer: {other:?}"),
                }
            }
            say(&format!("err {failure}; verified {verified}"));
        }
        ["race", url, id, go] => {
            let store = Store::open(url).await.unwrap();
            let deadline = Instant::now() + super::common::DEADLINE;
            while !std::path::Path::new(go).exists() {
                assert!(Instant::now() < deadline, "no go file");
                std::thread::sleep(Duration::from_millis(1));
            }
            let answer = Outcome::Answered {
                answer: serde_json::json!({ "pid": std::process::id() }),
                by: Responder {
                    answerer: "race".into(),
                    ..Responder::default()
                },
            };
            match store
                .record_outcome(AskId(id.parse().unwrap()), &answer, Timestamp::now())
                .await
                .unwrap()
            {
                Recorded::Won => say(&format!("won {}", std::process::id())),
                Recorded::Lost(c) => match c.outcome {
                    Outcome::Answered { answer, .. } => say(&format!("lost {}", answer["pid"])),
                    other => say(&format!("lost {other:?}")),
                },
            }
        }
        ["ask-wait", url, tag] => {
            let store = Store::open(url).await.unwrap();
            let ask = NewAsk::new(
                &Scope::HostKey((*tag).to_owned()),
                format!("{{\"tag\":\"{tag}\"}}"),
                Asker::default(),
            );
            let id = store.open_ask(&ask).await.unwrap().record().id;
            say(&format!("opened {}", id.0));
            let rec = store.wait_outcome(id).await.unwrap();
            say(&format!("outcome {}", answer_of(&rec)));
        }
        ["follow", url, id] => {
            // The feed alone (no safety re-check): only the file watch can wake it.
            let store = Store::open(url).await.unwrap();
            let mut feed = store.subscribe().await.unwrap();
            say(&format!("following, watch {}", store.watch_mode()));
            let id = AskId(id.parse().unwrap());
            loop {
                match feed.next().await {
                    Some(ask_user_store::Change::Ask(changed)) if changed == id => break,
                    Some(ask_user_store::Change::Rescan) => break,
                    Some(_) => {}
                    None => panic!("the feed ended"),
                }
            }
            let rec = store.get(id).await.unwrap();
            say(&format!("outcome {}", answer_of(&rec)));
        }
        ["wait", url, id] => {
            let store = Store::open(url).await.unwrap();
            say("waiting");
            let rec = store
                .wait_outcome(AskId(id.parse().unwrap()))
                .await
                .unwrap();
            say(&format!("outcome {}", answer_of(&rec)));
        }
        other => panic!("unknown child command {other:?}"),
    }
}
