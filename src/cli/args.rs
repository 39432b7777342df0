//! What the commands share of their command line: value parsers for spans
//! of time and seed ranges (with the reason when they cannot be read), and
//! the command line that starts this program again.

use crate::format::duration::parse_duration;
use crate::protocol::Millis;
use crate::words::shell_word;

/// A span of time no longer than a run may be.
pub(crate) fn parse_dur(s: &str) -> Result<Millis, String> {
    let d = parse_duration(s)?;
    if d > crate::format::build::MAX_RUN {
        let longest = crate::format::duration::human(crate::format::build::MAX_RUN);
        return Err(format!("{s:?} is longer than a run may be ({longest})"));
    }
    Ok(d)
}

/// A span that must be there at all: a zero cap or real-time budget would
/// stop every run before its first event.
pub(crate) fn parse_span(s: &str) -> Result<Millis, String> {
    not_zero(s, "would stop every run before it starts: give at least \"1ms\", e.g. \"30s\"")
}

/// A watch's span (`--interval`, `--for`): zero would look without pause,
/// or stop before the first look.
pub(crate) fn parse_watch_span(s: &str) -> Result<Millis, String> {
    not_zero(s, "is no time: give at least \"1ms\", e.g. \"500ms\" or \"10m\"")
}

/// The duration `s`, refused with `why_not` if it is zero.
fn not_zero(s: &str, why_not: &str) -> Result<Millis, String> {
    let d = parse_dur(s)?;
    if d == Millis::ZERO {
        return Err(format!("{s:?} {why_not}"));
    }
    Ok(d)
}

pub(crate) fn parse_seeds(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("{s:?}: write a range like 1..201"))?;
    let a: u64 = a.trim().parse().map_err(|_| format!("{a:?} is not a seed (a whole number)"))?;
    let b: u64 = b.trim().parse().map_err(|_| format!("{b:?} is not a seed (a whole number)"))?;
    if b < a {
        // Written the wrong way round: the seeds from b to a, a included.
        let to = a.checked_add(1).map_or(format!("{a}"), |next| next.to_string());
        return Err(format!(
            "{s:?} runs backwards: a range goes up, from its first seed to the one after its last, like {b}..{to}"
        ));
    }
    if b == a {
        return Err(match a.checked_add(1) {
            Some(next) => format!("{s:?} is empty: the end is excluded, so write {a}..{next}"),
            // No end can follow it: the last seed a range holds is one less.
            None => format!("{s:?} is empty: the end is excluded, and no seed comes after {a}; the last seed a range can hold is {}", a - 1),
        });
    }
    Ok((a, b))
}

/// The command line this program was started with, its `--seeds` made
/// `from..to`: what resumes an interrupted sweep (or fuzz).
pub fn resume_command(from: u64, to: u64) -> String {
    resume_shard_command(from, to, None)
}

/// [`resume_command`] for a sweep that played `shard`: a shard is counted
/// from the range's start, so from `from` (one of the shard's own seeds)
/// the seeds it has left are the first shard of `shard.of`, and the line
/// says `--shard 1/N` in place of `--shard I/N` or `--shard-from-env`.
pub fn resume_shard_command(from: u64, to: u64, shard: Option<crate::sweep::Shard>) -> String {
    let mut words: Vec<String> = std::env::args().collect();
    let seeds = format!("{from}..{to}");
    match words.iter().position(|w| w == "--seeds" || w.starts_with("--seeds=")) {
        Some(k) if words[k] == "--seeds" && k + 1 < words.len() => words[k + 1] = seeds,
        Some(k) => words[k] = format!("--seeds={seeds}"),
        None => words.extend(["--seeds".to_string(), seeds]),
    }
    if let Some(shard) = shard.filter(|s| s.of > 1) {
        let mut kept = Vec::with_capacity(words.len());
        let mut words = words.into_iter();
        while let Some(w) = words.next() {
            match w.as_str() {
                // The flag and its value.
                "--shard" | "--shard-from-env" => {
                    words.next();
                }
                _ if w.starts_with("--shard=") || w.starts_with("--shard-from-env=") => {}
                _ => kept.push(w),
            }
        }
        kept.extend(["--shard".to_string(), format!("1/{}", shard.of)]);
        return command_line(kept);
    }
    command_line(words)
}

/// `words` as one line a shell reads back, the program first as it was started.
fn command_line(mut words: Vec<String>) -> String {
    if let Some(first) = words.first_mut() {
        *first = program();
    }
    words.iter().skip(1).fold(words[0].clone(), |line, w| line + " " + &shell_word(w))
}

/// How this program was started: the scenario reader's hints need it too,
/// so it lives below the command line.
pub(crate) use crate::words::program;

/// A duration the way `--cap` reads it back: whole hours, minutes, seconds
/// or milliseconds, exact.
pub(crate) fn duration_word(d: Millis) -> String {
    match d.0 {
        ms if ms > 0 && ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms > 0 && ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}
