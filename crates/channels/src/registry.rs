//! The channel registry: what a channel's configuration must provide so that the one list in
//! `lib.rs` (`registry!`) makes it a section of the configuration file, a name in
//! [`crate::CHANNELS`] and a channel [`crate::start`] runs.
//!
//! Adding a channel is `src/NAME.rs` (the [`crate::Channel`], its raw `*Toml` section struct
//! and a [`ChannelConfig`] impl) plus two lines of `src/lib.rs` (`pub mod NAME;` and its entry
//! in `registry!`).

use std::sync::Arc;

use axum::Router;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;

use crate::channel::Channel;
use crate::config::Invalid;
use crate::mount::MountError;
use crate::token::Tokens;

/// A channel's checked configuration, as the registry reads and starts it.
///
/// The raw section ([`ChannelConfig::Toml`], `#[serde(deny_unknown_fields)]`, every field an
/// `Option`) is what the file says; `TryFrom` checks it into this type, after the secrets'
/// environment variables ([`ChannelConfig::SECRET_ENV`]) replaced the file's values.
pub(crate) trait ChannelConfig:
    TryFrom<Self::Toml, Error = Invalid> + Clone + Send + Sync + 'static
{
    /// The section as written in the file.
    type Toml: DeserializeOwned;

    /// The environment variables that replace a secret of the section, each with its key
    /// (`("ASK_USER_NTFY_TOKEN", "token")`).
    const SECRET_ENV: &'static [(&'static str, &'static str)];

    /// Builds the channel into `mounting` (its [`Channel`], and any routes or background task
    /// it needs).
    ///
    /// # Errors
    /// [`MountError`] when the channel refuses its settings.
    fn mount(&self, mounting: &mut Mounting) -> Result<(), MountError>;
}

/// What [`ChannelConfig::mount`] builds into: the channels for the dispatcher, routes served
/// beside the answer endpoints, and tasks that run until the hub stops.
pub(crate) struct Mounting {
    pub(crate) tokens: Tokens,
    pub(crate) channels: Vec<Arc<dyn Channel>>,
    pub(crate) routes: Router,
    pub(crate) tasks: Vec<BoxFuture<'static, ()>>,
}

impl Mounting {
    pub(crate) fn new(tokens: Tokens) -> Mounting {
        Mounting {
            tokens,
            channels: Vec::new(),
            routes: Router::new(),
            tasks: Vec::new(),
        }
    }
}

/// The one list of channels: `registry! { name: Config, … }` in `lib.rs` makes
/// `ChannelsConfig` (a field per channel), [`crate::CHANNELS`], and the section reading,
/// secret lookup and mounting that go through every entry.
macro_rules! registry {
    ($($name:ident: $config:ty),+ $(,)?) => {
        /// Every channel this build knows, in dispatch order: the sections the configuration
        /// file accepts and the names `--escalate` may use.
        pub const CHANNELS: &[&str] = &[$(stringify!($name)),+];

        /// The channels a hub runs, read from the configuration file
        /// ([`config::ChannelsConfig::load`]). `Debug` shows no secret (each is a
        /// [`ask_user_core::Secret`]).
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct ChannelsConfig {
            $(
                #[doc = concat!("`[", stringify!($name), "]`.")]
                pub $name: Option<$config>,
            )+
            /// `escalate`: (delay after the ask was made, channel name), in the order given.
            pub escalate: Vec<(std::time::Duration, String)>,
        }

        impl ChannelsConfig {
            /// The configured channels' names, in dispatch order ([`CHANNELS`]).
            #[must_use]
            pub fn names(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $(
                    if self.$name.is_some() {
                        names.push(stringify!($name));
                    }
                )+
                names
            }

            /// Every secret's environment variable with its section and key.
            pub(crate) fn secret_env() -> Vec<(&'static str, &'static str, &'static str)> {
                let mut all = Vec::new();
                $(
                    for (var, key) in <$config as $crate::registry::ChannelConfig>::SECRET_ENV {
                        all.push((*var, stringify!($name), *key));
                    }
                )+
                all
            }

            /// Reads section `name` (`None`: no channel has that name).
            pub(crate) fn read_section(
                &mut self,
                name: &str,
                section: toml::Table,
                env: $crate::config::Env<'_>,
            ) -> Option<Result<(), $crate::config::SectionError>> {
                match name {
                    $(
                        stringify!($name) => Some(
                            $crate::config::section::<$config>(section, env)
                                .map(|c| self.$name = Some(c)),
                        ),
                    )+
                    _ => None,
                }
            }

            /// Builds every configured channel into `mounting`, in dispatch order.
            pub(crate) fn mount_all(
                &self,
                mounting: &mut $crate::registry::Mounting,
            ) -> Result<(), $crate::MountError> {
                $(
                    if let Some(c) = &self.$name {
                        $crate::registry::ChannelConfig::mount(c, mounting)?;
                    }
                )+
                Ok(())
            }
        }
    };
}

pub(crate) use registry;
