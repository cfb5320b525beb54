//! The CLI's side of durable asks (docs/contract.md §8): opening the store for `ask`, the
//! inbox's presence lock, the closed-stdout watch and the test-only failpoint.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;

use ask_user_core::CancellationToken;
use ask_user_host::durable::{DefaultStore, Durable, StoreArgs, local_asker};
use ask_user_store::Namespace;
use ask_user_store::{Store, StoreKind};

/// What stderr says (once) when `--via inbox` asks and no `ask-user inbox` is open on the store.
pub(crate) const NO_INBOX_TEXT: &str = "ask-user: no `ask-user inbox` is open on this store; the question waits until someone runs `ask-user inbox` in a terminal";

/// The refusal of `--via inbox` with a memory store, which no inbox can see.
pub(crate) const INBOX_NEEDS_SHARED_STORE: &str = "--via inbox: the store is memory, which no `ask-user inbox` can see; use the default store or --store sqlite:PATH";

/// Opens the store for one `ask` and links the call to it; `via` is the `--via` list (for the
/// inbox checks). The error is a usage error (exit 2), before any question is shown.
/// `namespace` is the call's: the local user's, or — asking through a hub — the hub token's, so
/// two tokens on one machine never share a local ask (docs/contract.md §8).
/// `through_hub`: the hub is among the answerers (`via` as built), so with no store named the
/// ask is kept in the through-hub default file ([`DefaultStore::of_call`]).
pub(crate) async fn open(
    args: &StoreArgs,
    via: &[String],
    through_hub: bool,
    namespace: Namespace,
) -> Result<Durable, String> {
    open_as(args, via, through_hub, namespace, local_asker(None)).await
}

/// [`open`] with who asks given (a hook: the agent host and its session).
pub(crate) async fn open_as(
    args: &StoreArgs,
    via: &[String],
    through_hub: bool,
    namespace: Namespace,
    asker: ask_user_store::Asker,
) -> Result<Durable, String> {
    let store = args
        .open_for(DefaultStore::of_call(through_hub, via))
        .await?;
    if via.iter().any(|v| v.trim() == "inbox") {
        if store.kind() == StoreKind::Memory {
            return Err(INBOX_NEEDS_SHARED_STORE.to_owned());
        }
        if inbox_lock_path(&store).is_some_and(|path| !inbox_is_open(&path)) {
            eprintln!("{NO_INBOX_TEXT}");
        }
    }
    Ok(Durable::new(store, namespace, args.scope(), asker))
}

/// The presence lock of `ask-user inbox` beside a SQLite store (`PATH.inbox`): every open inbox
/// holds a shared lock on it. `None` for stores that are not files (memory, Postgres: there
/// the absence of an inbox is not detected).
pub(crate) fn inbox_lock_path(store: &Store) -> Option<PathBuf> {
    match store.kind() {
        StoreKind::Sqlite { path } => {
            let mut lock = path.into_os_string();
            lock.push(".inbox");
            Some(PathBuf::from(lock))
        }
        _ => None,
    }
}

fn open_lock(path: &PathBuf) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Whether some inbox holds the presence lock (a non-blocking exclusive lock fails).
fn inbox_is_open(path: &PathBuf) -> bool {
    use rustix::fs::{FlockOperation, flock};
    let Ok(file) = open_lock(path) else {
        return false;
    };
    flock(&file, FlockOperation::NonBlockingLockExclusive).is_err()
}

/// Takes the inbox's shared presence lock for as long as the returned file lives.
pub(crate) fn hold_inbox_lock(store: &Store) -> Option<File> {
    use rustix::fs::{FlockOperation, flock};
    let file = open_lock(&inbox_lock_path(store)?).ok()?;
    flock(&file, FlockOperation::LockShared).ok()?;
    Some(file)
}

/// Cancels `cancel` when stdout is a pipe or socket whose reader went away (POLLERR/POLLHUP):
/// the caller is gone, so the ask is detached. A thread blocked in `poll` with no events asked
/// for: no polling loop; a file or terminal never reports.
pub(crate) fn cancel_when_stdout_closes(cancel: CancellationToken) {
    let _ = std::thread::Builder::new()
        .name("stdout-watch".to_owned())
        .spawn(move || {
            use rustix::event::{PollFd, PollFlags, poll};
            let stdout = std::io::stdout();
            let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
            loop {
                match poll(&mut fds, None) {
                    Ok(_) => {
                        let revents = fds[0].revents();
                        if revents.intersects(PollFlags::ERR | PollFlags::HUP) {
                            tracing::info!("stdout closed: detaching the ask");
                            cancel.cancel();
                            return;
                        }
                        if revents.contains(PollFlags::NVAL) {
                            return;
                        }
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    Err(_) => return,
                }
            }
        });
}

/// The test-only failpoint `hang-before-stdout` ([`ask_user_store::knobs::failpoint`]: only in
/// test builds): the call never gets to write its outcome (an exit path stuck on a lock or a
/// write), so only the exit bound ends the process after a signal. Not for production use.
pub(crate) async fn failpoint_hang_before_stdout() {
    if ask_user_store::knobs::failpoint("hang-before-stdout") {
        std::future::pending::<()>().await;
    }
}

/// The test-only failpoint `before-stdout` ([`ask_user_store::knobs::failpoint`]: only in
/// test builds, with `ASK_USER_TEST_FAILPOINT=before-stdout`): the process aborts after the
/// outcome was stored and before stdout is written (the crash window of docs/contract.md §8
/// "Delivered").
pub(crate) fn failpoint_before_stdout() {
    if ask_user_store::knobs::failpoint("before-stdout") {
        std::process::abort();
    }
}
