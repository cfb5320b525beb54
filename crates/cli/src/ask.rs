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
    // An unwritable journal is a startup error, before anything is read or asked.
    let journal = match args.host.open_journal() {
        Ok(journal) => journal.map(Arc::new),
        Err(e) => return Ended::Usage(e.to_string()),
    };
    let text = match input::read(args.file.as_deref()) {
        Ok(text) => text,
        Err(message) => return Ended::Usage(message),
    };
    // The hub is told "delivered" last: after the outcome is stored locally and written out.
    let mut upstream = None;
    let mut namespace = ask_user_host::durable::local_namespace();
    let interaction: Arc<dyn UserInteraction> = match &args.answers {
        Some(path) => match ask_user_via::answers_file(path) {
            Ok(scripted) => scripted,
            Err(e) => return Ended::Usage(e.to_string()),
        },
        None => {
            let hub = match crate::hub::client_config(&args.hub, args.store.key.as_deref()) {
                Ok(hub) => hub,
                Err(message) => return Ended::Usage(message),
            };
            let via = crate::hub::via_names(hub.is_some(), &args.via);
            let show = |page, addr| web::show(page, addr, args.print_url);
            let mut options = ask_user_via::Options::new(args.web_addr).with_show_web(&show);
            options.durable = true;
            options.timeout = args.host.timeout;
            upstream = hub.as_ref().map(|h| h.upstream.clone());
            if let Some(hub) = &hub {
                namespace = ask_user_store::Namespace::of_hub_token(hub.token.expose());
            }
            options.hub = hub;
            match ask_user_via::build(&via, &options) {
                Ok(answerers) => Arc::new(FirstAnswer::new(answerers)),
                Err(e) => return Ended::Usage(e.to_string()),
            }
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return Ended::Usage(format!("cannot start: {e}")),
    };
    // Scripted answers (`--answers`) involve no human and keep nothing: no store.
    let durable = match &args.answers {
        Some(_) => None,
        None => match runtime.block_on(durable::open(&args.store, &args.via, namespace)) {
            Ok(durable) => Some(durable),
            Err(message) => return Ended::Usage(message),
        },
    };
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
        let cancel = CancellationToken::new();
        let _signals = cancel_on_signals(cancel.clone());
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

/// **Test only** (a test knob: read only in builds with `ask-user-store`'s `test-knobs`
/// feature, see `ask_user_store::knobs`): lengthens [`EXIT_BOUND`] to this many milliseconds,
/// so a test can tell the second signal's exit from the bound's.
pub(crate) const EXIT_BOUND_TEST_ENV: &str = "ASK_USER_TEST_EXIT_BOUND_MS";

/// Ends the process with `ASK_ABORTED`'s status (130), whatever it is doing: the exit bound.
/// `why` completes stderr's line: `a second signal` or `2 s after the first signal`.
fn exit_now(why: &str) -> ! {
    eprintln!("ask-user: exiting now ({why}); the question stays for the retry");
    std::process::exit(130)
}

/// Cancels `cancel` on SIGINT, SIGTERM or SIGHUP; the task ends with the runtime. The
/// handlers are installed here, before any answerer touches the terminal (a signal arriving
/// while raw mode is on must cancel, not kill, so the terminal is restored); only the
/// waiting runs in the spawned task. After the first signal the process ends within
/// [`EXIT_BOUND`] (a thread of its own, so a blocked runtime cannot hold it) or at once on a
/// second signal, exit 130: the ask was detached by then, or — a detach that did not reach the
/// store — its lease and its gone process free it for the retry.
pub(crate) fn cancel_on_signals(cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let listening = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
        signal(SignalKind::interrupt()),
    );
    tokio::spawn(async move {
        let (Ok(mut term), Ok(mut hup), Ok(mut int)) = listening else {
            tracing::warn!("cannot listen for signals");
            return;
        };
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: cancelling the ask"),
            _ = hup.recv() => tracing::info!("SIGHUP: cancelling the ask"),
            _ = int.recv() => tracing::info!("SIGINT: cancelling the ask"),
        }
        cancel.cancel();
        let bound = ask_user_store::knobs::var(EXIT_BOUND_TEST_ENV)
            .and_then(|v| v.parse().ok())
            .map_or(EXIT_BOUND, std::time::Duration::from_millis);
        std::thread::spawn(move || {
            std::thread::sleep(bound);
            exit_now("2 s after the first signal");
        });
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
            _ = int.recv() => {}
        }
        exit_now("a second signal");
    })
}
