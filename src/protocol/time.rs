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
    /// `1.5s`, `250ms`, `2m30s`: short enough for a trace line, exact to the millisecond.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        if ms < 1000 {
            write!(f, "{ms}ms")
        } else if ms < 60_000 {
            if ms.is_multiple_of(1000) {
                write!(f, "{}s", ms / 1000)
            } else {
                write!(f, "{}.{:03}s", ms / 1000, ms % 1000)
            }
        } else {
            // Past a minute the rest is always seconds: 1m0.999s, 2m30s.
            let (m, rest) = (ms / 60_000, ms % 60_000);
            match (rest / 1000, rest % 1000) {
                (0, 0) => write!(f, "{m}m"),
                (s, 0) => write!(f, "{m}m{s}s"),
                (s, frac) => write!(f, "{m}m{s}.{frac:03}s"),
            }
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
    }

    #[test]
    fn after_saturates() {
        assert_eq!(Millis(u64::MAX - 1).after(Millis(10)), Millis(u64::MAX));
    }
}
