//! Progress of a long command on stderr (a sweep, a fuzz, a search), drawn
//! by `indicatif`: done/total, the rate, the time so far and a smoothed
//! estimate of the time left. Drawn only when stderr is a terminal (a log
//! file or a CI capture would fill with redraws; indicatif's stderr target
//! hides itself otherwise, and when `TERM` is unset or `dumb`) and only for
//! people (never next to `--format json`). Failures are printed as they
//! happen, above the bar, so a long sweep shows a problem at once instead of
//! at the end.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressState, ProgressStyle};
use std::time::Duration;

/// Failures printed as they happen before the rest wait for the final report:
/// a sweep where everything fails should not scroll the terminal away.
pub const LIVE_FAILURES: u64 = 20;

/// How often the line is redrawn: often enough to look alive, and from a
/// ticker thread, so that a fuzz batch or a search between two reports still
/// shows the clock move, and a finished run only adds one to a counter.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// No estimate of the time left before this much time and one unit done:
/// the first runs pay for the threads starting and the files loading, and an
/// estimate made from them alone says minutes for a sweep of seconds.
const WARM_UP: Duration = Duration::from_secs(1);

pub struct Progress {
    bar: ProgressBar,
    failed: u64,
    /// Failures printed so far (at most [`LIVE_FAILURES`], then one line more).
    said: u64,
    /// `failed` or `found`: what the count on the line says.
    outcome: &'static str,
    /// Print failures as they happen: the output is for people.
    live: bool,
}

impl Progress {
    /// `total` units of `what` (`run`), of which some may be `outcome`
    /// (`failed`, `found`); `for_people` is false for JSON.
    pub fn new(total: u64, what: &'static str, outcome: &'static str, for_people: bool) -> Progress {
        Progress::drawn_on(target(for_people), crate::color::stderr(), total, what, outcome, for_people)
    }

    fn drawn_on(
        target: ProgressDrawTarget,
        colored: bool,
        total: u64,
        what: &'static str,
        outcome: &'static str,
        live: bool,
    ) -> Progress {
        let units = crate::words::noun(total, what);
        // The bar takes what the words leave of the terminal's width: a line
        // wider than the terminal would wrap, and each redraw add a line.
        let bar = if colored { "{wide_bar:.cyan/blue}" } else { "{wide_bar}" };
        let template = format!("[{bar}] {{pos}}/{{len}} {units}  {{msg}}  {{rate}}  {{took}} in, {{left}}");
        let style = style(&template).with_key("rate", move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            // Not a number only at the very instant the bar starts.
            let rate = Some(s.per_sec()).filter(|r| r.is_finite()).unwrap_or(0.0);
            let _ = write!(w, "{rate:.0} {what}s/s");
        });
        // The message before the first tick: the first frame drawn says "0 failed" too.
        let bar = ProgressBar::with_draw_target(Some(total), target).with_message(format!("0 {outcome}"));
        let bar = start(bar, style);
        Progress { bar, failed: 0, said: 0, outcome, live }
    }

    /// Work with no known total (a search): a line with what
    /// [`Progress::show`] says and the time so far. No rate: a search tells
    /// where it stands only every so many states, and a rate read between
    /// two reports would fall as if the search were slowing down.
    pub fn open_ended(for_people: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(None, target(for_people)).with_message("searching…");
        let bar = start(bar, style("  {msg}  ({took} so far)"));
        Progress { bar, failed: 0, said: 0, outcome: "", live: for_people }
    }

    /// `n` more units done.
    pub fn advance(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Where open-ended work stands, in words.
    pub fn show(&self, line: String) {
        self.bar.set_message(line);
    }

    /// `text`, a failure already counted, printed above the line: the
    /// first [`LIVE_FAILURES`], then a line saying the rest wait.
    pub fn say_failure(&mut self, text: &str) {
        if !self.live || self.said > LIVE_FAILURES {
            return;
        }
        self.said += 1;
        let text =
            if self.said > LIVE_FAILURES { "… more failures: the report at the end counts them all" } else { text };
        self.above(|| eprintln!("{text}"));
    }

    /// One more failure, counted on the line; [`Progress::say_failure`] prints it (a fuzz find is its own report).
    pub fn count_failure(&mut self) {
        self.failed += 1;
        self.bar.set_message(format!("{} {}", self.failed, self.outcome));
    }

    /// Runs `print` with the line taken off the terminal, then draws it again
    /// below what was printed (on stdout or stderr alike: both may be the
    /// same terminal).
    pub fn above<R>(&self, print: impl FnOnce() -> R) -> R {
        self.bar.suspend(print)
    }

    /// Takes the line off the terminal for good: the command is done, or
    /// stopped (Ctrl-C), and its report follows.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

/// stderr for people, nothing for machines.
fn target(for_people: bool) -> ProgressDrawTarget {
    if for_people {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// The line `template` lays out, `{took}` and `{left}` worded as people say them.
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("the progress templates are written in this file")
        .progress_chars("#-")
        .with_key("took", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            // Whole seconds, as a clock shows them: "1s in" only once a second has passed.
            let _ = w.write_str(&span(s.elapsed().as_secs() as f64));
        })
        .with_key("left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&time_left(s.elapsed(), s.pos(), s.eta()));
        })
}

/// `bar` drawn in `style`, redrawn by a ticker only when it is drawn at all.
fn start(bar: ProgressBar, style: ProgressStyle) -> ProgressBar {
    // A bar dropped on an early return takes itself off the terminal too.
    let bar = bar.with_style(style).with_finish(ProgressFinish::AndClear);
    if !bar.is_hidden() {
        bar.enable_steady_tick(REDRAW_EVERY);
    }
    bar
}

/// `about 1m20s left`, once the estimate (indicatif's, an exponentially
/// weighted average of the rate over the last ~15 s, smoothed twice) has
/// something to stand on.
fn time_left(elapsed: Duration, done: u64, eta: Duration) -> String {
    if done == 0 || elapsed < WARM_UP {
        "estimating the time left".to_string()
    } else {
        format!("about {} left", span(eta.as_secs_f64()))
    }
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
    fn the_time_left_waits_for_the_first_second_and_the_first_run() {
        let (ms, s) = (Duration::from_millis, Duration::from_secs);
        // A first run done in 10 ms of a 5 s sweep would say "14m45s left".
        assert_eq!(time_left(ms(10), 1, s(885)), "estimating the time left");
        assert_eq!(time_left(s(3), 0, s(0)), "estimating the time left");
        assert_eq!(time_left(s(3), 500, s(80)), "about 1m20s left");
    }

    #[test]
    fn spans_read_as_people_write_them() {
        assert_eq!(span(44.6), "45s");
        assert_eq!(span(185.0), "3m05s");
        assert_eq!(span(7800.0), "2h10m");
    }

    #[test]
    fn the_line_shows_count_failures_rate_time_in_and_time_left() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let mut p = Progress::drawn_on(target, false, 1000, "run", "failed", false);
        p.advance(250);
        p.count_failure();
        p.above(|| ()); // draws the line again at once
        let drawn = screen.0.lock().unwrap().clone();
        let line = drawn.iter().rev().find(|l| l.starts_with('[')).expect("a line was drawn");
        let (bar, words) = line[1..].split_once("] ").expect("a bar in brackets");
        // The bar fills the 120 columns the words leave, a quarter of it done.
        assert_eq!(bar.chars().count() + words.chars().count() + 3, 120, "{line}");
        let filled = bar.chars().filter(|&c| c == '#').count();
        assert!(bar.trim_start_matches('#').chars().all(|c| c == '-'), "{line}");
        assert_eq!(filled, bar.chars().count() / 4, "{line}");
        assert!(words.starts_with("250/1000 runs  1 failed  "), "{line}");
        assert!(words.ends_with(" runs/s  0s in, estimating the time left"), "{line}");
        p.clear();
    }

    /// A terminal that keeps what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push(s.to_string());
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
