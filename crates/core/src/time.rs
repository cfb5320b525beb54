//! Durations and times from input, checked where they enter.
//!
//! A duration a person or a model writes (`--timeout 5m`, an escalation step, a poll's wait)
//! is read by [`parse_duration`], which caps it at [`MAX_DURATION`]: every such duration can
//! then be added to an [`std::time::Instant`] or a stored time without overflow, so no flag
//! or query can panic the process. A time shown as text goes through [`rfc3339_seconds`] /
//! [`rfc3339_millis`], which never fail (humantime's formatter errors past year 9999).
//!
//! The std and humantime functions that panic on such input are banned in `clippy.toml`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest duration accepted from input: 100 years (of 365.25 days). Longer than anyone
/// waits, and short enough that `Instant::now() + d` cannot overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 31_557_600);

/// The error text of a duration over [`MAX_DURATION`].
pub const TOO_LONG: &str = "the duration must be at most 100 years";

/// Reads a humantime duration (`90s`, `5m`, `1h 30m`, `2days`) of at most [`MAX_DURATION`].
///
/// # Errors
/// humantime's reason for a text it cannot read (it quotes no more than the unit it did not
/// know), or [`TOO_LONG`].
#[allow(clippy::disallowed_methods)] // the one checked entry point
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if duration > MAX_DURATION {
        return Err(TOO_LONG.to_owned());
    }
    Ok(duration)
}

/// `at` as RFC 3339 in whole seconds, UTC (`2026-12-01T18:05:38Z`). A time before 1970 shows
/// as the epoch and one past year 9999 as its last second (only a damaged store holds one).
#[must_use]
#[allow(clippy::disallowed_methods)] // clamped into humantime's range first
pub fn rfc3339_seconds(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(clamp(at)).to_string()
}

/// `at` as RFC 3339 with milliseconds, UTC (`2026-12-01T18:05:38.123Z`), clamped like
/// [`rfc3339_seconds`].
#[must_use]
#[allow(clippy::disallowed_methods)] // clamped into humantime's range first
pub fn rfc3339_millis(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(clamp(at)).to_string()
}

/// The last instant humantime formats: 9999-12-31T23:59:59.999999999Z.
const LAST: Duration = Duration::new(253_402_300_799, 999_999_999);

fn clamp(at: SystemTime) -> SystemTime {
    match at.duration_since(UNIX_EPOCH) {
        Err(_) => UNIX_EPOCH,
        Ok(d) if d > LAST => UNIX_EPOCH + LAST,
        Ok(_) => at,
    }
}

/// A stored time (milliseconds since the Unix epoch, possibly negative or huge) as a
/// [`SystemTime`], clamped to the epoch below and to year 9999 above.
#[must_use]
pub fn from_unix_millis(ms: i64) -> SystemTime {
    let d = Duration::from_millis(ms.max(0).unsigned_abs()).min(LAST);
    UNIX_EPOCH + d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_over_the_cap_are_refused_not_overflowed() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("100y").map(|d| d <= MAX_DURATION), Ok(true));
        assert_eq!(parse_duration("500000000000y"), Err(TOO_LONG.to_owned()));
        assert!(parse_duration("99999999999999999999999y").is_err());
        assert!(parse_duration("soon").is_err());
        let now = std::time::Instant::now();
        assert!(now.checked_add(MAX_DURATION).is_some());
    }

    #[test]
    fn times_past_9999_and_before_1970_format_without_failing() {
        assert_eq!(
            rfc3339_seconds(from_unix_millis(i64::MAX)),
            "9999-12-31T23:59:59Z"
        );
        assert_eq!(
            rfc3339_millis(from_unix_millis(i64::MAX)),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            rfc3339_seconds(from_unix_millis(-5)),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            rfc3339_millis(from_unix_millis(1_500)),
            "1970-01-01T00:00:01.500Z"
        );
    }
}
