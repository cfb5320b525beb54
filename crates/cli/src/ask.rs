//! `ask-user ask`: one tool call, asked through the chosen answerers.

use std::sync::Arc;

use ask_user_core::{
    AskUserQuestionTool, Caller, CancellationToken, ExecutionContext, FirstAnswer, UserInteraction,
};

use crate::{AskArgs, Ended, input, web};

/// Decodes (logging leniencies), asks, and prints the outcome's text; the exit status is
/// the outcome's (docs/contract.md §5). SIGINT (outside the terminal UI's raw mode), SIGTERM and SIGHUP
/// cancel the turn: the question is withdrawn and the outcome is `ASK_ABORTED` (exit 130).
pub(crate) fn run(args: AskArgs) -> Ended {
    // An unwritable journal is a startup error, before anything is read or asked.
    let journal = match args.host.open_journal() {
        Ok(journal) => journal,
        Err(e) => return Ended::Usage(e.to_string()),
    };
    let text = match input::read(args.file.as_deref()) {
        Ok(text) => text,
        Err(message) => return Ended::Usage(message),
    };
    crate::web::set_print_url(args.print_url);
    let interaction: Arc<dyn UserInteraction> = match &args.answers {
        Some(path) => match ask_user_via::answers_file(path) {
            Ok(scripted) => scripted,
            Err(e) => return Ended::Usage(e.to_string()),
        },
        None => {
            let hub = match crate::hub::client_config(&args.hub) {
                Ok(hub) => hub,
                Err(message) => return Ended::Usage(message),
            };
            let via = crate::hub::via_names(hub.is_some(), &args.via);
            let mut options = ask_user_via::Options::new(args.web_addr).with_show_web(&web::show);
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
    let interaction = args.host.with_notify(interaction);
    let tool = AskUserQuestionTool::new(interaction).with_timeout(args.host.timeout);
    let outcome = runtime.block_on(async move {
        let cancel = CancellationToken::new();
        let _signals = cancel_on_signals(cancel.clone());
        let mut context = ExecutionContext::new(cancel);
        if let Some(parent) = args.delegated_by.filter(|p| !p.is_empty()) {
            context = context.with_caller(Caller::Delegated { parent });
        }
        // The tool refuses a delegated caller first, then invalid arguments, then asks; the
        // leniencies are logged. With --journal, the ask and the outcome are on disk before
        // the outcome is printed.
        ask_user_host::call(journal.as_ref(), &tool, text, context).await
    });
    if let Some(code) = outcome.code() {
        tracing::info!(code = code.as_str(), "ask ended without an answer");
    }
    Ended::Printed {
        stdout: outcome.text(),
        status: u8::try_from(outcome.exit_code()).unwrap_or(1),
    }
}

/// Cancels `cancel` on SIGINT, SIGTERM or SIGHUP; the task ends with the runtime.
fn cancel_on_signals(cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
        ) else {
            tracing::warn!("cannot listen for signals");
            return;
        };
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: cancelling the ask"),
            _ = hup.recv() => tracing::info!("SIGHUP: cancelling the ask"),
            _ = int.recv() => tracing::info!("SIGINT: cancelling the ask"),
        }
        cancel.cancel();
    })
}
