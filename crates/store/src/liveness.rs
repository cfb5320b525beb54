//! Whether the process that asked is still running (docs/contract.md §8 "Exactly once, made
//! precise"): an unkeyed call never re-attaches to an ask a live caller holds, and a caller
//! killed with `kill -9` must not look live for its whole lease, or its immediate retry asks the
//! human again instead of collecting the answer.
//!
//! A local asker records [`this_process`] in [`Asker::process`]: its machine's boot, its pid
//! namespace, its pid and the kernel's start time of that pid. [`ThisMachine`] (every store's
//! default probe) says an asker is gone only when that identity is in **this** process's pid
//! space (same boot, same pid namespace) and the pid no longer runs, or runs with another
//! start time (the pid was reused by another process). Anything it cannot tell — another
//! machine, another container, an asker recorded without an identity (an older binary, a hub
//! agent, a platform without `/proc`) — counts as live: such an ask is freed by its lease
//! instead. The error is always on the side of asking again, never of merging two live callers.

use std::fmt;

use crate::model::Asker;

/// Tells whether an ask's caller is known to have ended (see the module doc). Every store has
/// one ([`crate::Store::with_liveness`]; [`ThisMachine`] by default).
pub trait Liveness: Send + Sync + fmt::Debug {
    /// `true` only when the process that asked is known to have ended; `false` when it runs or
    /// this probe cannot tell.
    fn is_gone(&self, asker: &Asker) -> bool;
}

/// The operating system's answer on this machine (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct ThisMachine;

impl Liveness for ThisMachine {
    fn is_gone(&self, asker: &Asker) -> bool {
        let (Some(pid), Some(identity)) = (asker.pid, asker.process.as_deref()) else {
            return false;
        };
        let Some(space) = pid_space() else {
            return false;
        };
        let Some((recorded_space, recorded)) = identity.rsplit_once('/') else {
            return false;
        };
        if recorded_space != space {
            return false;
        }
        match stat(pid) {
            // A zombie has ended (its parent has not reaped it yet).
            Some((state, now)) => state == 'Z' || state == 'X' || now != recorded,
            // No such entry in /proc: gone unless the kernel says the pid exists (a /proc
            // mounted with `hidepid` hides other users' processes).
            None => !pid_exists(pid),
        }
    }
}

/// This process's identity as [`Asker::process`] records it (`BOOT:PIDNS/STARTTIME`); `None`
/// where the platform does not give one (then the asker's lease alone says it is gone).
#[must_use]
pub fn this_process() -> Option<String> {
    process_identity(std::process::id())
}

/// The identity of the running process `pid` of this machine, as [`this_process`] gives it in
/// that process (for an embedder that asks on behalf of a child process); `None` when no such
/// process runs or the platform does not tell.
#[must_use]
pub fn process_identity(pid: u32) -> Option<String> {
    Some(format!("{}/{}", pid_space()?, stat(pid)?.1))
}

/// The pid space of this process: the boot id and the pid namespace (Linux).
fn pid_space() -> Option<String> {
    static SPACE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SPACE
        .get_or_init(|| {
            let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
            let ns = std::fs::read_link("/proc/self/ns/pid").ok()?;
            let boot = boot.trim();
            (!boot.is_empty()).then(|| format!("{boot}:{}", ns.display()))
        })
        .clone()
}

/// The state and the kernel's start time of `pid` (fields 3 and 22 of `/proc/PID/stat`; the
/// start time in clock ticks since boot).
fn stat(pid: u32) -> Option<(char, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after the last.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let start = fields
        .nth(18)
        .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))?;
    Some((state, start.to_owned()))
}

/// Whether a process with `pid` exists (it may belong to another user).
fn pid_exists(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::SRCH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asker(pid: u32, process: Option<String>) -> Asker {
        Asker {
            pid: Some(pid),
            process,
            ..Asker::default()
        }
    }

    #[test]
    fn this_process_is_live() {
        let me = asker(std::process::id(), this_process());
        assert!(this_process().is_some(), "Linux gives an identity");
        assert!(!ThisMachine.is_gone(&me));
    }

    #[test]
    fn a_reused_pid_is_another_process() {
        // Our own pid, with a start time it never had: the recorded process ended and its pid
        // now names another.
        let identity = this_process().unwrap();
        let (space, _) = identity.rsplit_once('/').unwrap();
        let reused = asker(std::process::id(), Some(format!("{space}/1")));
        assert!(ThisMachine.is_gone(&reused));
    }

    #[test]
    fn a_process_that_ended_is_gone() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let pid = child.id();
        let space = pid_space().unwrap();
        let rec = asker(pid, Some(format!("{space}/{}", stat(pid).unwrap().1)));
        assert!(!ThisMachine.is_gone(&rec), "running");
        child.kill().unwrap();
        // Killed and not yet reaped (a zombie), then reaped: gone both times.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while stat(pid).is_some_and(|(state, _)| state != 'Z') {
            assert!(
                std::time::Instant::now() < deadline,
                "the child never ended"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(ThisMachine.is_gone(&rec), "a zombie");
        child.wait().unwrap();
        assert!(ThisMachine.is_gone(&rec), "ended and reaped");
    }

    #[test]
    fn what_this_machine_cannot_tell_is_live() {
        let pid = std::process::id();
        for process in [
            None,
            Some("another-boot:pid:[1]/1".to_owned()),
            Some("garbage".to_owned()),
        ] {
            assert!(
                !ThisMachine.is_gone(&asker(pid, process.clone())),
                "{process:?}"
            );
        }
        let no_pid = Asker {
            process: this_process(),
            ..Asker::default()
        };
        assert!(!ThisMachine.is_gone(&no_pid));
    }
}
