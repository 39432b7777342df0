//! The timestamps real teams' files carry, read to milliseconds since the
//! epoch: ISO 8601 with a zone (`2026-03-01T10:15:02.481Z`, `+02:00`) or
//! without one (then read as UTC, and said so), with any fraction of a
//! second; and numbers, epoch seconds or milliseconds (told apart by size).

use serde_json::Value;

/// A time as read, and whether reading it took a guess.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub ms: i64,
    /// It named no zone, and was read as UTC.
    pub no_zone: bool,
}

/// Epoch numbers past this are milliseconds: as seconds they would be
/// after the year 5000.
const MS_FROM: f64 = 1e11;

/// The latest time read, 2200-01-01T00:00:00Z: a time past it is not a
/// team's (most likely microseconds or nanoseconds since the epoch), and is
/// refused rather than guessed.
const LATEST_MS: i64 = 7_258_118_400_000;

/// `ms` if it lies between 1970 and 2200, or why not.
fn in_range(ms: i64, shown: &dyn std::fmt::Display) -> Result<i64, String> {
    match ms {
        ..0 => Err(format!("{shown} is before 1970: not a time a team's files carry")),
        0..=LATEST_MS => Ok(ms),
        _ => Err(format!(
            "{shown} is after the year 2200: not a time a team's files carry (epoch seconds and milliseconds are \
             read; microseconds are not)"
        )),
    }
}

/// `v` as a time, or why it is not one.
pub fn read(v: &Value) -> Result<Stamp, String> {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().ok_or_else(|| format!("{n} is not a time"))?;
            if !x.is_finite() || x < 0.0 {
                return Err(format!("{n} is not a time"));
            }
            let ms = if x >= MS_FROM { x } else { x * 1000.0 };
            Ok(Stamp { ms: in_range(ms.round() as i64, n)?, no_zone: false })
        }
        Value::String(s) => read_text(s),
        other => Err(format!("{other} is not a time: write ISO 8601 or epoch seconds or milliseconds")),
    }
}

/// An ISO 8601 time, or epoch digits written as a string.
pub fn read_text(s: &str) -> Result<Stamp, String> {
    let t = s.trim();
    if let Ok(x) = t.parse::<f64>() {
        return read(&Value::from(x));
    }
    if let Ok(ts) = t.parse::<jiff::Timestamp>() {
        // jiff takes offsets up to ±25:59; no zone is more than 14 hours
        // from UTC, and RFC 3339 stops at 23: such a time was miswritten.
        if let Some(jiff::fmt::temporal::PiecesOffset::Numeric(off)) =
            jiff::fmt::temporal::Pieces::parse(t).ok().and_then(|p| p.offset())
        {
            if off.offset().seconds().abs() > 14 * 3600 {
                return Err(format!("{s:?} is not a time: its offset from UTC is more than 14 hours"));
            }
        }
        return Ok(Stamp { ms: in_range(ts.as_millisecond(), &format_args!("{s:?}"))?, no_zone: false });
    }
    match t.parse::<jiff::civil::DateTime>() {
        Ok(dt) => {
            let ts = dt.to_zoned(jiff::tz::TimeZone::UTC).map_err(|e| format!("{s:?}: {e}"))?.timestamp();
            Ok(Stamp { ms: in_range(ts.as_millisecond(), &format_args!("{s:?}"))?, no_zone: true })
        }
        Err(_) => Err(format!("{s:?} is not a time this reader knows: ISO 8601 (2026-03-01T10:15:02.481Z) or epoch seconds or milliseconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_with_and_without_a_zone_and_epoch_numbers_read_to_the_same_millisecond() {
        let at = 1_772_360_102_481; // 2026-03-01T10:15:02.481Z
        let z = read_text("2026-03-01T10:15:02.481Z").unwrap();
        assert_eq!(z, Stamp { ms: at, no_zone: false });
        assert_eq!(read_text("2026-03-01T12:15:02.481+02:00").unwrap().ms, at);
        assert_eq!(read_text("2026-03-01T23:15:02.481+13:00").unwrap().ms, at);
        // An offset no zone has (jiff takes up to ±25:59).
        assert!(read_text("2026-03-01T12:15:02.481+25:00").unwrap_err().contains("more than 14 hours"));
        assert!(read_text("2026-03-01T12:15:02.481-15:00").unwrap_err().contains("more than 14 hours"));
        assert_eq!(read_text("2026-03-01T10:15:02.481").unwrap(), Stamp { ms: at, no_zone: true });
        assert_eq!(read(&Value::from(1_772_360_102.481)).unwrap().ms, at);
        assert_eq!(read(&Value::from(at)).unwrap().ms, at);
        assert_eq!(read_text("1772360102481").unwrap().ms, at);
        assert!(read_text("yesterday").unwrap_err().contains("not a time this reader knows"));
        assert!(read(&Value::Bool(true)).is_err());
        assert!(read(&Value::from(-5)).is_err());
    }

    #[test]
    fn a_time_before_1970_or_after_2200_is_refused_not_guessed() {
        assert!(read_text("1960-01-01T00:00:00Z").unwrap_err().contains("before 1970"));
        assert!(read_text("0900-01-01T00:00:00").unwrap_err().contains("before 1970"));
        assert!(read(&Value::from(1e30)).unwrap_err().contains("after the year 2200"));
        // Microseconds since the epoch, which read as milliseconds would be the year 58000.
        assert!(read(&Value::from(1_775_755_620_000_000u64)).unwrap_err().contains("microseconds"));
        assert!(read_text("2300-01-01T00:00:00Z").is_err());
        assert_eq!(read(&Value::from(0)).unwrap().ms, 0);
        assert_eq!(read_text("2199-12-31T23:59:59.999Z").unwrap().ms, LATEST_MS - 1);
    }
}
