//! Durations as scenario files write them: `"500ms"`, `"60s"`, `"2m"`,
//! `"1m30s"`, and ranges `"1ms..20ms"` drawn from the seed.

use crate::protocol::Millis;
use crate::team::Latency;

/// Parses a duration that must be a whole number of milliseconds: the
/// virtual clock is exact only at that grain.
pub fn parse_duration(text: &str) -> Result<Millis, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration: write it like \"500ms\", \"60s\" or \"2m\"".into());
    }
    if t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("{t:?} has no unit: write \"{t}ms\" or \"{t}s\""));
    }
    let d = humantime::parse_duration(t)
        .map_err(|e| format!("{t:?} is not a duration ({e}): write it like \"500ms\", \"60s\" or \"2m\""))?;
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(format!("{t:?} is finer than a millisecond, the clock's grain"));
    }
    u64::try_from(d.as_millis()).map(Millis).map_err(|_| format!("{t:?} is too long"))
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
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        for bad in ["", "60", "fast", "1.5us", "-1s", "10 parsecs"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("60").unwrap_err().contains("no unit"));
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
