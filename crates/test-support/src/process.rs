//! Spawned processes that cannot touch the developer's state or outlive the test.

use std::path::Path;
use std::process::{Child, Command};

/// Clears `command`'s environment down to what an `ask-user` process needs: `PATH`, and a
/// private `HOME` with `XDG_STATE_HOME`/`XDG_CONFIG_HOME` under `home` — so neither the
/// developer's default store (`~/.local/state/ask-user`), config, hub, token nor any
/// `ASK_USER_*` variable of the test's own environment reaches it. Add what the test needs
/// with `.env(…)` afterwards.
pub fn hermetic<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    command
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
}

/// A child killed (SIGKILL) and reaped when dropped, also when the test panics: no test
/// leaves a process behind. Derefs to the [`Child`].
#[derive(Debug)]
pub struct Reaped(pub Child);

impl std::ops::Deref for Reaped {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
