//! Stopping a server the way a person or a service manager asks: SIGINT (Ctrl-C) and SIGTERM
//! (`systemctl stop`, `docker stop`, `kill`) both drain.

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// Cancels `stop` at the first SIGINT or SIGTERM this process receives, so a server holding
/// `stop` drains (no new connection, current responses finished) instead of dying with
/// exit 143 mid-response. Watches from a task of the current runtime.
///
/// # Errors
/// When the signal handlers cannot be installed (the runtime has no signal driver).
pub fn stop_on_signals(stop: CancellationToken) -> std::io::Result<()> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        stop.cancel();
    });
    Ok(())
}
