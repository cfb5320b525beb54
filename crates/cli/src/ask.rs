//! `ask-user ask`: one tool call, asked through the chosen answerers.
//!
//! Durable (docs/contract.md §8): the ask goes through the store (`--store`, `--key`; see
//! `ask_user_host::durable`): written before any answerer shows it, its outcome stored before
//! the model reads it, marked delivered once stdout was written and flushed. A signal from
//! outside or a closed stdout detaches the ask (it stays open for the human) and exits 130.

use std::sync::Arc;

use ask_user_core::{Caller, CancellationToken, ExecutionContext, FirstAnswer, UserInteraction};
use ask_user_host::HostCall;

use crate::{AskArgs, Ended, durable, input, web};

/// Decodes (logging leniencies), asks, and prints the outcome's text; the exit status is
/// the outcome's (docs/contract.md §5). SIGINT (outside the terminal UI's raw mode), SIGTERM and SIGHUP
/// cancel the turn: the question leaves this screen, the stored ask is detached (still open
/// for the human) and the outcome is `ASK_ABORTED` (exit 130).
pub(crate) fn run(args: AskArgs) -> Ended {
    // The signal handlers come first, before anything that can block (reading stdin, opening
    // the store): from here on a signal cancels the call and the exit bound holds.
    let cancel = CancellationToken::new();
    cancel_on_signals(cancel.clone());
    // An unwritable journal is a startup error, before anything is read or asked.
    let journal = match args.host.open_journal() {
        Ok(journal) => journal.map(Arc::new),
        Err(e) => return Ended::Usage(e.to_string()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Ended::Usage(format!("cannot start: {e}")),
    };
    // The hub's settings name the call's namespace, so they are read first; the store then
    // opens (its file on a blocking thread) while the arguments are read and the answerers
    // built. Scripted answers (`--answers`) involve no human and keep nothing: no store.
    let hub = match &args.answers {
        Some(_) => None,
        None => match crate::hub::client_config(&args.hub, args.store.key.as_deref()) {
            Ok(hub) => hub.map(with_test_patience),
            Err(message) => return Ended::Usage(message),
        },
    };
    let opening = args.answers.is_none().then(|| {
        let namespace = match &hub {
            Some(hub) => ask_user_store::Namespace::of_hub_token(hub.token.expose()),
            None => ask_user_host::durable::local_namespace(),
        };
        let store = args.store.clone();
        let via = crate::hub::via_names(hub.is_some(), &args.via);
        let through_hub = hub.is_some();
        runtime.spawn(async move { durable::open(&store, &via, through_hub, namespace).await })
    });
    let reading = async {
        // Lets the store's open start before a read that may complete at once.
        tokio::task::yield_now().await;
        input::read_async(args.file).await
    };
    let text = match runtime.block_on(until_cancelled(&cancel, reading)) {
        Some(Ok(text)) => text,
        Some(Err(message)) => return Ended::Usage(message),
        None => return aborted_before_asking(runtime),
    };
    // The hub is told "delivered" last: after the outcome is stored locally and written out.
    let upstream = hub.as_ref().map(|h| h.upstream.clone());
    let interaction: Arc<dyn UserInteraction> = match &args.answers {
        Some(path) => match ask_user_via::answers_file(path) {
            Ok(scripted) => scripted,
            Err(e) => return Ended::Usage(e.to_string()),
        },
        None => {
            let via = crate::hub::via_names(hub.is_some(), &args.via);
            let show = |page, addr| web::show(page, addr, args.print_url);
            let mut options = ask_user_via::Options::new(args.web_addr).with_show_web(&show);
            options.durable = true;
            options.timeout = args.host.timeout;
            options.hub = hub;
            match ask_user_via::build(&via, &options) {
                Ok(answerers) => Arc::new(FirstAnswer::new(answerers)),
                Err(e) => return Ended::Usage(e.to_string()),
            }
        }
    };
    // A signal while the store opens (a locked file, a slow server) ends the call before
    // anything was stored or shown.
    let durable = match opening {
        None => None,
        Some(opening) => match runtime.block_on(until_cancelled(&cancel, opening)) {
            Some(Ok(Ok(durable))) => Some(durable),
            Some(Ok(Err(message))) => return Ended::Usage(message),
            Some(Err(e)) => return Ended::Usage(format!("cannot open the store: {e}")),
            None => return aborted_before_asking(runtime),
        },
    };
    if cancel.is_cancelled() {
        return aborted_before_asking(runtime);
    }
    let mut call = HostCall::builder(interaction)
        .notify(args.host.notify.clone())
        .journal(journal)
        .durable(durable)
        .timeout(args.host.timeout);
    if let Some(upstream) = upstream {
        call = call.acknowledge(Arc::new(HubDelivered(upstream)));
    }
    let call = call.build();
    let watch_stdout = call.durable().is_some();
    runtime.block_on(async move {
        if watch_stdout {
            durable::cancel_when_stdout_closes(cancel.clone());
        }
        let mut context = ExecutionContext::new(cancel);
        if let Some(parent) = args.delegated_by.filter(|p| !p.is_empty()) {
            context = context.with_caller(Caller::Delegated { parent });
        }
        // The tool refuses a delegated caller first, then invalid arguments, then asks; the
        // leniencies are logged. With --journal, the ask and the outcome are on disk before
        // the outcome is printed.
        let asked = call.call(text, context).await;
        let outcome = asked.outcome();
        if let Some(code) = outcome.code() {
            tracing::info!(code = code.as_str(), "ask ended without an answer");
        }
        let status = u8::try_from(outcome.exit_code()).unwrap_or(1);
        if call.durable().is_none() {
            return Ended::Printed {
                stdout: asked.into_outcome().text(),
                status,
            };
        }
        let mut stdout = |outcome: &ask_user_core::Outcome| {
            durable::failpoint_before_stdout();
            crate::write_stdout(outcome.text()).is_ok()
        };
        durable::failpoint_hang_before_stdout().await;
        let _ = asked.deliver(&mut stdout).await;
        Ended::Written { status }
    })
}

/// `work`'s result, or `None` once `cancel` is cancelled first (a signal).
pub(crate) async fn until_cancelled<T>(
    cancel: &CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        done = work => Some(done),
    }
}

/// A signal came before the call stored or showed anything: `ASK_ABORTED` (exit 130), and
/// nothing is kept. The runtime is let go without waiting for its blocking work (a store open
/// stuck on a lock, a read of stdin), which ends with the process.
fn aborted_before_asking(runtime: tokio::runtime::Runtime) -> Ended {
    runtime.shutdown_background();
    tracing::info!("a signal before the question was stored: nothing was asked");
    let outcome = ask_user_core::Outcome::Aborted;
    Ended::Printed {
        status: u8::try_from(outcome.exit_code()).unwrap_or(130),
        stdout: outcome.text(),
    }
}

/// Tells the hub the outcome the model read was delivered (the hub answerer leaves it there).
pub(crate) struct HubDelivered(pub(crate) ask_user_hub_client::Upstream);

impl ask_user_host::Acknowledge for HubDelivered {
    fn acknowledge<'a>(
        &'a self,
        outcome: &'a ask_user_core::Outcome,
    ) -> ask_user_core::BoxFuture<'a, ()> {
        Box::pin(self.0.delivered(outcome))
    }
}

/// How long the process may take to end after the first signal (docs/contract.md §8: "a second
/// SIGTERM, or 2 s after the first, ends the process").
pub(crate) const EXIT_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// Signals arriving this soon after the first are the same signal delivered twice (to the
/// process and to its process group, as `timeout` sends it), not a second signal.
const SAME_SIGNAL: std::time::Duration = std::time::Duration::from_millis(50);

/// Logged (info) once a further signal counts as a second one.
pub(crate) const SECOND_SIGNAL_LOG: &str = "a second signal now ends the process at once";

/// **Test only** (a test knob: read only in builds with `ask-user-store`'s `test-knobs`
/// feature, see `ask_user_store::knobs`): lengthens [`EXIT_BOUND`] to this many milliseconds,
/// so a test can tell the second signal's exit from the bound's.
pub(crate) const EXIT_BOUND_TEST_ENV: &str = "ASK_USER_TEST_EXIT_BOUND_MS";

/// **Test only** (a test knob, like [`EXIT_BOUND_TEST_ENV`]): shortens the hub's first-post
/// patience (`HubClientConfig::first_post_patience`, 30 s) to this many milliseconds, so a test
/// can keep a hub down past it without waiting 30 s.
pub(crate) const HUB_PATIENCE_TEST_ENV: &str = "ASK_USER_TEST_HUB_PATIENCE_MS";

/// `hub` with the [`HUB_PATIENCE_TEST_ENV`] knob applied (a test build only).
fn with_test_patience(
    mut hub: ask_user_hub_client::HubClientConfig,
) -> ask_user_hub_client::HubClientConfig {
    if let Some(ms) = ask_user_store::knobs::var(HUB_PATIENCE_TEST_ENV).and_then(|v| v.parse().ok())
    {
        hub.first_post_patience = std::time::Duration::from_millis(ms);
    }
    hub
}

/// Ends the process with `ASK_ABORTED`'s status (130), whatever it is doing: the exit bound.
/// `why` completes stderr's line: `a second signal` or `2 s after the first signal`.
fn exit_now(why: &str) -> ! {
    eprintln!("ask-user: exiting now ({why}); the question stays for the retry");
    std::process::exit(130)
}

/// Cancels `cancel` on SIGINT, SIGTERM or SIGHUP. The handlers are installed by this call, so
/// a host calls it before anything that can block (reading stdin, opening the store) and
/// before any answerer touches the terminal (a signal arriving while raw mode is on must
/// cancel, not kill, so the terminal is restored). The signals are received on a thread of
/// their own, so neither a blocked runtime nor blocking work outside one can hold them up.
/// After the first signal the process ends within [`EXIT_BOUND`] (another thread) or at once
/// on a second signal, exit 130: the ask was detached by then, or — a detach that did not
/// reach the store — its lease and its gone process free it for the retry.
pub(crate) fn cancel_on_signals(cancel: CancellationToken) {
    use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT]) {
        Ok(signals) => signals,
        Err(e) => {
            tracing::warn!("cannot listen for signals: {e}");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            let Some(first) = signals.forever().next() else {
                return;
            };
            let name = match first {
                SIGTERM => "SIGTERM",
                SIGHUP => "SIGHUP",
                _ => "SIGINT",
            };
            tracing::info!("{name}: cancelling the ask");
            cancel.cancel();
            let bound = ask_user_store::knobs::var(EXIT_BOUND_TEST_ENV)
                .and_then(|v| v.parse().ok())
                .map_or(EXIT_BOUND, std::time::Duration::from_millis);
            let bounded = std::thread::Builder::new()
                .name("exit-bound".to_owned())
                .spawn(move || {
                    std::thread::sleep(bound);
                    exit_now("2 s after the first signal");
                });
            if let Err(e) = bounded {
                tracing::warn!("cannot bound the exit: {e}; a second signal still ends it");
            }
            // One signal sent to the process and to its group at once (`timeout`, harnesses
            // that kill a group) arrives twice: what comes within SAME_SIGNAL of the first is
            // that signal, not a second one.
            std::thread::sleep(SAME_SIGNAL);
            for _ in signals.pending() {}
            tracing::info!("{SECOND_SIGNAL_LOG}");
            if signals.forever().next().is_some() {
                exit_now("a second signal");
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot listen for signals: {e}");
    }
}
