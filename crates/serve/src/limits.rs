//! The limits a connection loop enforces, and the process's open-files limit they must fit in.

use std::time::Duration;

/// The limits of one connection loop (the crate docs state what each means).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Each connection must send a complete request head (after a TLS handshake, if any,
    /// itself held to this deadline) this soon after connecting or after its previous
    /// response; otherwise it is closed. Also the keep-alive idle limit.
    pub header_read_timeout: Duration,
    /// At most this many connections are open at once (0 counts as 1). At the cap a new
    /// connection closes the oldest one not serving a request, or is refused when all are.
    pub max_connections: usize,
}

impl Limits {
    /// Calls [`raise_open_files_limit`] and returns these limits with
    /// [`Limits::max_connections`] at most half of the soft open-files limit now in force
    /// (the other half is left for the process's files, sockets it opens, and connections
    /// accepted before they are counted).
    #[must_use]
    pub fn fit_open_files(self) -> Limits {
        let max_connections = match raise_open_files_limit() {
            Some(limit) => self
                .max_connections
                .min(usize::try_from(limit / 2).unwrap_or(usize::MAX)),
            None => self.max_connections,
        };
        Limits {
            max_connections,
            ..self
        }
    }
}

/// Lifts the soft limit of open files (`RLIMIT_NOFILE`) to the hard limit, once per process,
/// and returns the soft limit now in force (`None`: unlimited). A failure to raise it is
/// logged (debug) and the current limit returned.
pub fn raise_open_files_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        let limit = getrlimit(Resource::Nofile);
        // `None` is unlimited.
        let below = match (limit.current, limit.maximum) {
            (Some(current), Some(maximum)) => current < maximum,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if below {
            let raised = Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            };
            if let Err(error) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!(%error, "cannot raise the open files limit");
            }
        }
    });
    getrlimit(Resource::Nofile).current
}
