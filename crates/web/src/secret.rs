//! The capability secret: 128 random bits from the operating system, compared in constant time.

use std::fmt;

use subtle::ConstantTimeEq;

/// Number of random bytes in a secret (128 bits).
const SECRET_BYTES: usize = 16;

/// The key in the capability URL. Whoever knows it can answer; nobody else gets in.
#[derive(Clone)]
pub(crate) struct Secret {
    hex: String,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A fresh secret from the OS random number generator.
    pub(crate) fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; SECRET_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Self::from_bytes(&bytes))
    }

    fn from_bytes(bytes: &[u8]) -> Self {
        let hex = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Self { hex }
    }

    /// The secret as lowercase hex, as it appears in the URL.
    pub(crate) fn as_str(&self) -> &str {
        &self.hex
    }

    /// Whether `candidate` is this secret. Constant time in the contents (the length of a
    /// secret is public).
    pub(crate) fn matches(&self, candidate: &str) -> bool {
        self.hex.as_bytes().ct_eq(candidate.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_32_hex_digits_and_fresh_each_time() {
        let a = Secret::generate().unwrap();
        let b = Secret::generate().unwrap();
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.as_str(), b.as_str());
    }

    #[test]
    fn only_the_exact_secret_matches() {
        let s = Secret::from_bytes(&[0xab; SECRET_BYTES]);
        assert!(s.matches(&"ab".repeat(SECRET_BYTES)));
        assert!(!s.matches(&"AB".repeat(SECRET_BYTES)));
        assert!(!s.matches(&"ab".repeat(SECRET_BYTES - 1)));
        assert!(!s.matches(""));
        assert_eq!(format!("{s:?}"), "Secret(..)");
    }
}
