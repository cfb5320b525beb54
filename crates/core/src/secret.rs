//! [`Secret`]: a string that never shows itself (docs/contract.md §9 "Operations").
//!
//! Hub tokens, channel secrets and database URLs (which may carry a password) travel in this
//! type, so a `{:?}` or `{}` of anything holding one — a configuration, an error, a log field
//! — prints `Secret(redacted)` instead. The value is read only through [`Secret::expose`],
//! at the one place that must send it.

use std::fmt;

/// A secret string: `Debug` and `Display` print `Secret(redacted)`; [`Secret::expose`] gives
/// the value. Equality compares the values (not in constant time: compare hashes for that).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    #[must_use]
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for the one place that sends or checks it.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the value is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Secret {
        Secret(value.to_owned())
    }
}

/// Reads a secret from a string (a configuration file's token, a URL). Only a string is
/// accepted; whatever a deserialiser's error says about a value of another type is that
/// deserialiser's text, so read untrusted files through one whose errors drop values (as the
/// channels' configuration does).
impl<'de> serde::Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Secret, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Secret, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn neither_debug_nor_display_shows_the_value() {
        let s = Secret::new("postgres://u:hunter2@db/x");
        assert_eq!(format!("{s:?}"), "Secret(redacted)");
        assert_eq!(format!("{s}"), "Secret(redacted)");
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Holder {
            url: Secret,
        }
        assert!(!format!("{:?}", Holder { url: s.clone() }).contains("hunter2"));
        assert_eq!(s.expose(), "postgres://u:hunter2@db/x");
    }
}
