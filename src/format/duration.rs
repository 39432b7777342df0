//! Durations as scenario files write them: `"500ms"`, `"60s"`, `"2m"`,
//! `"1m30s"`, and ranges `"1ms..20ms"` drawn from the seed.

use crate::protocol::Millis;
use crate::world::Latency;

/// What a good duration looks like, for every message about a bad one.
pub const LIKE: &str = "write a number and a unit, like \"500ms\", \"5s\", \"2m\" or \"1h30m\"";

/// Parses a duration that must be a whole number of milliseconds: the
/// virtual clock is exact only at that grain.
pub fn parse_duration(text: &str) -> Result<Millis, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("empty duration: {LIKE}"));
    }
    if t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("{t:?} has no unit: write \"{t}ms\" or \"{t}s\""));
    }
    let d = humantime::parse_duration(t).map_err(|e| match e {
        humantime::DurationError::UnknownUnit { unit, .. } if !unit.is_empty() => {
            format!("{t:?} is not a duration: {unit:?} is not a unit (use ms, s, m, h, d or y); {LIKE}")
        }
        // Too many digits after the point overflows the parser too, and is
        // a grain finer than the clock's, not a long time.
        humantime::DurationError::NumberOverflow if fraction_overflows(t) => {
            format!("{t:?} is finer than a millisecond, the clock's grain")
        }
        humantime::DurationError::NumberOverflow => format!("{t:?} is too long for any run"),
        _ => format!("{t:?} is not a duration: {LIKE}"),
    })?;
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(format!("{t:?} is finer than a millisecond, the clock's grain"));
    }
    u64::try_from(d.as_millis()).map(Millis).map_err(|_| format!("{t:?} is too long for any run"))
}

/// Whether each number in `t` has a whole part that fits (so what
/// overflowed was its fraction).
fn fraction_overflows(t: &str) -> bool {
    let mut whole_parts = t.split(|c: char| !c.is_ascii_digit() && c != '.').filter(|n| !n.is_empty());
    t.contains('.') && whole_parts.all(|n| n.split('.').next().is_none_or(|w| w.is_empty() || w.parse::<u64>().is_ok()))
}

/// A duration as people write it in a file, and as every output prints
/// one (`Millis`'s `Display`): `1h30m`, `2.858s`, `0ms`. It parses back to
/// the same value.
pub fn human(d: Millis) -> String {
    d.to_string()
}

/// A fixed latency or a range `"lo..hi"`.
pub fn parse_latency(text: &str) -> Result<Latency, String> {
    match text.split_once("..") {
        None => parse_duration(text).map(Latency::Fixed),
        Some((lo, hi)) => {
            let (lo, hi) = (parse_duration(lo)?, parse_duration(hi)?);
            if lo > hi {
                return Err(format!("range {text:?} runs backwards: write the smaller bound first"));
            }
            Ok(if lo == hi { Latency::Fixed(lo) } else { Latency::Range(lo, hi) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_units_people_write() {
        assert_eq!(parse_duration("500ms"), Ok(Millis(500)));
        assert_eq!(parse_duration("60s"), Ok(Millis(60_000)));
        assert_eq!(parse_duration("2m"), Ok(Millis(120_000)));
        assert_eq!(parse_duration("1m 30s"), Ok(Millis(90_000)));
        assert_eq!(parse_duration("1h"), Ok(Millis(3_600_000)));
        assert_eq!(parse_duration("0s"), Ok(Millis(0)));
        // The longer spellings docs/scenarios.md lists.
        assert_eq!(parse_duration("5 sec"), Ok(Millis(5_000)));
        assert_eq!(parse_duration("5 mins"), Ok(Millis(300_000)));
        assert_eq!(parse_duration("2 hours"), Ok(Millis(7_200_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Millis(1_500)));
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        for bad in ["", "60", "fast", "1.5us", "-1s", "10 parsecs"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("60").unwrap_err().contains("no unit"));
        let fast = parse_duration("fast").unwrap_err();
        assert!(fast.contains("\"1h30m\"") && !fast.contains("expected number"), "{fast}");
        assert!(parse_duration("10 parsecs").unwrap_err().contains("\"parsecs\" is not a unit"));
        assert!(parse_duration("99999999999999999999y").unwrap_err().contains("too long"));
        assert!(parse_duration("99999999999999999999.5s").unwrap_err().contains("too long"));
        // Digits past the parser's after the point: too fine, not too long.
        for fine in ["0.9999999999999999999999s", "0.0000001ms", "1s 0.00000000000000000001ms"] {
            let e = parse_duration(fine).unwrap_err();
            assert!(e.contains("finer than a millisecond"), "{fine}: {e}");
        }
    }

    #[test]
    fn prints_durations_as_people_write_them_and_reads_them_back() {
        let cases = [
            (0, "0ms"),
            (500, "500ms"),
            (2500, "2.500s"),
            (2858, "2.858s"),
            (60_999, "1m0.999s"),
            (3_600_001, "1h0.001s"),
            (3_661_500, "1h1m1.500s"),
            (60_000, "1m"),
            (90_000, "1m30s"),
            (3_600_000, "1h"),
            (5_400_000, "1h30m"),
            (86_400_000, "1d"),
            (31_557_600_000, "1y"),
            (3_155_760_000_000, "100y"),
        ];
        for (ms, text) in cases {
            assert_eq!(human(Millis(ms)), text);
            assert_eq!(parse_duration(text), Ok(Millis(ms)), "{text}");
        }
    }

    #[test]
    fn parses_ranges() {
        assert_eq!(parse_latency("1ms..20ms"), Ok(Latency::Range(Millis(1), Millis(20))));
        assert_eq!(parse_latency("5ms"), Ok(Latency::Fixed(Millis(5))));
        assert_eq!(parse_latency("5ms..5ms"), Ok(Latency::Fixed(Millis(5))));
        assert!(parse_latency("20ms..1ms").unwrap_err().contains("backwards"));
        assert!(parse_latency("1ms..x").is_err());
    }
}
