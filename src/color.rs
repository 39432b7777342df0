//! Colour on a terminal: PASS and a checked file's ok green; FAIL, what
//! broke and a bad file red; warnings and deadlocks yellow. `--color auto`
//! (the default) colours only a terminal, and honours `NO_COLOR` (no colour)
//! and `CLICOLOR_FORCE` (colour even in a pipe), as cargo and the tools built
//! on `anstream` do; `always` and `never` decide.

use clap::ValueEnum;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// 0 unset (auto), 1 on, 2 off, for stdout and stderr.
static STDOUT: AtomicU8 = AtomicU8::new(0);
static STDERR: AtomicU8 = AtomicU8::new(0);

/// Decides, once, whether each stream is coloured.
pub fn set(choice: ColorChoice) {
    let decide = |terminal: bool| match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => decide_auto(terminal, |k| std::env::var_os(k)),
    };
    STDOUT.store(if decide(std::io::stdout().is_terminal()) { 1 } else { 2 }, Ordering::Relaxed);
    STDERR.store(if decide(std::io::stderr().is_terminal()) { 1 } else { 2 }, Ordering::Relaxed);
}

/// `auto`: CLICOLOR_FORCE (set, not "0") colours anything; NO_COLOR (set,
/// not empty) colours nothing; else a terminal is coloured.
fn decide_auto(terminal: bool, var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    if var("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
        return true;
    }
    if var("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    terminal
}

fn on(stream: &AtomicU8, terminal: impl Fn() -> bool) -> bool {
    match stream.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => decide_auto(terminal(), |k| std::env::var_os(k)),
    }
}

/// Whether stdout (or stderr) is coloured.
pub fn stdout() -> bool {
    on(&STDOUT, || std::io::stdout().is_terminal())
}

pub fn stderr() -> bool {
    on(&STDERR, || std::io::stderr().is_terminal())
}

#[derive(Copy, Clone, Debug)]
pub enum Paint {
    Pass,
    Fail,
    Warn,
}

/// `text` in `paint`'s colour, if `colored`.
pub fn paint(text: &str, paint: Paint, colored: bool) -> String {
    if !colored {
        return text.to_string();
    }
    let style = match paint {
        Paint::Pass => anstyle::AnsiColor::Green.on_default().bold(),
        Paint::Fail => anstyle::AnsiColor::Red.on_default().bold(),
        Paint::Warn => anstyle::AnsiColor::Yellow.on_default().bold(),
    };
    format!("{}{text}{}", style.render(), style.render_reset())
}

/// PASS or FAIL, coloured for stdout.
pub fn verdict(passed: bool) -> String {
    if passed {
        paint("PASS", Paint::Pass, stdout())
    } else {
        paint("FAIL", Paint::Fail, stdout())
    }
}

/// PASS or FAIL as [`verdict`], or STOPPED for a pass whose input was read
/// only up to a bound: what lies past it was not judged, so it is no PASS.
pub fn verdict_or_stopped(passed: bool, stopped: bool) -> String {
    match passed && stopped {
        true => paint("STOPPED", Paint::Warn, stdout()),
        false => verdict(passed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn auto_follows_the_terminal_no_color_and_clicolor_force() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        assert!(decide_auto(true, env(&[])));
        assert!(!decide_auto(false, env(&[])));
        assert!(!decide_auto(true, env(&[("NO_COLOR", "1")])));
        assert!(decide_auto(true, env(&[("NO_COLOR", "")])), "an empty NO_COLOR says nothing");
        assert!(decide_auto(false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!decide_auto(false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(decide_auto(false, env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])), "forcing wins");
    }

    #[test]
    fn paint_wraps_only_when_coloured() {
        assert_eq!(paint("PASS", Paint::Pass, false), "PASS");
        let p = paint("FAIL", Paint::Fail, true);
        assert!(p.starts_with("\x1b[") && p.contains("FAIL") && p.ends_with("\x1b[0m"), "{p:?}");
    }
}
