//! Virtual time. The simulation clock counts whole milliseconds from the start
//! of a run: integer times make "at or after the deadline" a comparison,
//! never a rounding, and every scenario file speaks in milliseconds or more.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A point on the virtual clock, or a span of it, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Millis(pub u64);

impl Millis {
    pub const ZERO: Millis = Millis(0);
    /// A time that never comes: a deadline nobody set.
    pub const NEVER: Millis = Millis(u64::MAX);

    pub fn never() -> Millis {
        Millis::NEVER
    }

    pub fn is_never(&self) -> bool {
        *self == Millis::NEVER
    }

    pub const fn from_secs(s: u64) -> Millis {
        Millis(s * 1000)
    }

    /// Saturating, so a huge timeout means "never" instead of wrapping into the past.
    pub fn after(self, span: Millis) -> Millis {
        Millis(self.0.saturating_add(span.0))
    }

    pub fn as_std(self) -> std::time::Duration {
        std::time::Duration::from_millis(self.0)
    }
}

impl Millis {
    /// A request's deadline in words, for the trace's lines and the
    /// pictures: `deadline 1m`, or `no deadline` for [`Millis::NEVER`]
    /// (timeouts off), which as a time would read as three hundred trillion
    /// minutes.
    pub fn as_deadline(self) -> String {
        if self.is_never() {
            "no deadline".to_string()
        } else {
            format!("deadline {self}")
        }
    }
}

impl fmt::Display for Millis {
    /// The one way a duration or a time is printed, everywhere: `250ms`,
    /// `1.500s`, `2m30s`, `1m0.999s`, `1h30m`, `2d`. Exact to the
    /// millisecond, and it reads back as the same value (a file takes it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// The units above a second, largest first. A year is 365.25 days,
        /// as the file reader takes it.
        const UNITS: [(u64, &str); 4] = [(31_557_600_000, "y"), (86_400_000, "d"), (3_600_000, "h"), (60_000, "m")];
        let mut rest = self.0;
        let mut larger = false;
        for (size, unit) in UNITS {
            if rest >= size {
                write!(f, "{}{unit}", rest / size)?;
                rest %= size;
                larger = true;
            }
        }
        match (rest / 1000, rest % 1000) {
            (0, 0) if larger => Ok(()),
            (0, ms) if !larger => write!(f, "{ms}ms"),
            (s, 0) => write!(f, "{s}s"),
            (s, ms) => write!(f, "{s}.{ms:03}s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_compactly_and_exactly() {
        assert_eq!(Millis(0).to_string(), "0ms");
        assert_eq!(Millis(250).to_string(), "250ms");
        assert_eq!(Millis(1500).to_string(), "1.500s");
        assert_eq!(Millis(60_000).to_string(), "1m");
        assert_eq!(Millis(150_000).to_string(), "2m30s");
        assert_eq!(Millis(60_999).to_string(), "1m0.999s");
        assert_eq!(Millis(120_500).to_string(), "2m0.500s");
        assert_eq!(Millis(121_500).to_string(), "2m1.500s");
        // Past an hour, hours: a 60-minute deadline is `1h`, as a file writes it.
        assert_eq!(Millis(3_600_000).to_string(), "1h");
        assert_eq!(Millis(5_400_000).to_string(), "1h30m");
        assert_eq!(Millis(90_061_001).to_string(), "1d1h1m1.001s");
    }

    #[test]
    fn after_saturates() {
        assert_eq!(Millis(u64::MAX - 1).after(Millis(10)), Millis(u64::MAX));
    }
}
