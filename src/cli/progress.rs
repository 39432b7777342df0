//! Progress of a long sweep on stderr: a bar with the rate and an estimate of
//! the time left, redrawn in place, only when stderr is a terminal (a log file
//! or a CI capture would fill with redraws) and only for people (never next to
//! `--format json`). Failures are printed as they happen, above the bar, so a
//! long sweep shows a problem at once instead of at the end.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Failures printed as they happen before the rest wait for the final report:
/// a sweep where everything fails should not scroll the terminal away.
const LIVE_FAILURES: u64 = 20;

/// Redraws closer together than this cost time and show nothing new.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

pub struct Progress {
    total: u64,
    done: u64,
    failed: u64,
    what: &'static str,
    started: Instant,
    last_draw: Option<Instant>,
    /// Draw the bar: stderr is a terminal and the output is for people.
    bar: bool,
    /// Print failures as they happen: the output is for people.
    live: bool,
}

impl Progress {
    /// `what` names one unit of work (`run`); `for_people` is false for JSON.
    pub fn new(total: u64, what: &'static str, for_people: bool) -> Progress {
        Progress {
            total,
            done: 0,
            failed: 0,
            what,
            started: Instant::now(),
            last_draw: None,
            bar: for_people && std::io::stderr().is_terminal(),
            live: for_people,
        }
    }

    /// One unit done; `failure` says what went wrong, if something did.
    pub fn tick(&mut self, failure: Option<&str>) {
        self.done += 1;
        if let Some(text) = failure {
            self.failed += 1;
            self.show_failure(text);
        }
        let last = self.done == self.total;
        if self.bar && (last || self.last_draw.is_none_or(|t| t.elapsed() >= REDRAW_EVERY)) {
            self.last_draw = Some(Instant::now());
            let line = line(self.done, self.total, self.failed, self.started.elapsed(), self.what);
            let _ = write!(std::io::stderr(), "\r\x1b[K{line}{}", if last { "\n" } else { "" });
        }
    }

    pub fn done(&self) -> u64 {
        self.done
    }

    /// Takes the bar off the terminal (a sweep stopped before its end).
    pub fn clear(&self) {
        if self.bar && self.done < self.total {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }

    pub fn failed(&self) -> u64 {
        self.failed
    }

    fn show_failure(&mut self, text: &str) {
        if !self.live || self.failed > LIVE_FAILURES + 1 {
            return;
        }
        let text = if self.failed > LIVE_FAILURES { "… more failures: every one is listed at the end" } else { text };
        let mut err = std::io::stderr();
        // On a terminal, clear the bar first; the next tick draws it again below.
        let clear = if self.bar { "\r\x1b[K" } else { "" };
        let _ = writeln!(err, "{clear}{text}");
        self.last_draw = None;
    }
}

/// `[#####---] 500/1000 runs  2 failed  4100 runs/s  about 1m20s left`.
pub fn line(done: u64, total: u64, failed: u64, elapsed: Duration, what: &str) -> String {
    const WIDTH: u64 = 30;
    let filled = (done * WIDTH).checked_div(total).unwrap_or(WIDTH).min(WIDTH) as usize;
    let bar = format!("[{}{}]", "#".repeat(filled), "-".repeat(WIDTH as usize - filled));
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let when = if done >= total {
        format!("done in {}", span(secs))
    } else if done == 0 || rate == 0.0 {
        "estimating the time left".to_string()
    } else {
        format!("about {} left", span((total - done) as f64 / rate))
    };
    let unit = super::noun(total, what);
    format!("{bar} {done}/{total} {unit}  {failed} failed  {rate:.0} {what}s/s  {when}")
}

/// A span of real time as people say it: `45s`, `3m05s`, `2h10m`.
fn span(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_count_failures_rate_and_time_left() {
        let l = line(250, 1000, 3, Duration::from_secs(10), "run");
        assert!(l.starts_with("[#######-----------------------] 250/1000 runs  3 failed  25 runs/s"), "{l}");
        assert!(l.ends_with("about 30s left"), "{l}");
        let l = line(1, 1, 0, Duration::from_millis(1500), "run");
        assert!(l.contains("1/1 run ") && l.ends_with("done in 2s"), "{l}");
        assert!(line(0, 10, 0, Duration::ZERO, "run").ends_with("estimating the time left"));
    }

    #[test]
    fn spans_read_as_people_write_them() {
        assert_eq!(span(44.6), "45s");
        assert_eq!(span(185.0), "3m05s");
        assert_eq!(span(7800.0), "2h10m");
    }
}
