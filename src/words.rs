//! Counts in words, for every report that says how many of something, and
//! real times as every JSON report prints them: shared by the commands and
//! the library's own messages, so it sits below both.

/// `1 handshake`, `2 handshakes`.
pub fn plural(n: u64, word: &str) -> String {
    format!("{n} {}", noun(n, word))
}

/// `5,800`: a count with its thousands set apart, for figures a person
/// reads at a glance.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The word alone, made plural unless `n` is one.
pub fn noun(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else if let Some(stem) = word.strip_suffix('y').filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u'])) {
        // "entry" → "entries", "key" → "keys".
        format!("{stem}ies")
    } else {
        format!("{word}s")
    }
}

/// A real (wall) time in milliseconds, to the microsecond. The clock's
/// figure, printed whole, carries float noise (`0.32519899999999996`) and
/// digits finer than anything a wall-clock measurement of a run means.
pub fn real_ms(ms: f64) -> f64 {
    to_the_microsecond(ms, 1e3)
}

/// A real time in seconds, to the microsecond, as [`real_ms`].
pub fn real_seconds(s: f64) -> f64 {
    to_the_microsecond(s, 1e6)
}

// Dividing a whole count of microseconds once gives the double nearest the
// decimal, which prints with at most 3 (ms) or 6 (s) decimals; rounding ms
// and then dividing by 1000 would not.
fn to_the_microsecond(t: f64, per_unit: f64) -> f64 {
    (t * per_unit).round() / per_unit
}

/// [`real_ms`] for a field that serde prints.
pub fn serialize_real_ms<S: serde::Serializer>(ms: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(real_ms(*ms))
}

/// [`real_seconds`] for a field that serde prints.
pub fn serialize_real_seconds<S: serde::Serializer>(secs: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(real_seconds(*secs))
}

/// The longest start of `s` of at most `max` bytes that ends on a
/// character's boundary: a long text cut to bound what is kept of it.
pub fn cut_bytes(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A size for people: `14.2 MB`, `640 KB`, `900 B` (powers of ten, as
/// `--max-memory` reads `MB`).
pub fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.0} KB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.1} GB", n as f64 / 1e9),
    }
}

/// Quotes a word for a POSIX shell when it needs it, so the printed line can
/// be pasted as it is.
pub fn shell_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=,@%+".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A path as a command line's word: quoted when the shell needs it, and
/// after `./` when it starts with a dash, or the command would read a file
/// named `-x.toml` as a flag.
pub fn path_word(p: &str) -> String {
    if p.starts_with('-') {
        shell_word(&format!("./{p}"))
    } else {
        shell_word(p)
    }
}

/// How this program was started. `cargo run` (and `cargo test`) tell the
/// program its package name, and then the same cargo command rebuilds
/// whatever changed first; otherwise the path it was started by (an
/// installed binary, a copied one) is the one that reproduces. `--release`
/// because a run is the same in either build, only faster.
pub fn program() -> String {
    if std::env::var_os("CARGO_PKG_NAME").is_some_and(|n| n == env!("CARGO_PKG_NAME")) {
        return "cargo run --release --".to_string();
    }
    let argv0 = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned());
    shell_word(argv0.as_deref().filter(|a| !a.is_empty()).unwrap_or(env!("CARGO_PKG_NAME")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_a_character() {
        assert_eq!(cut_bytes("abc", 10), "abc");
        assert_eq!(cut_bytes("abc", 2), "ab");
        // "é" is two bytes: a cut inside it falls back before it.
        assert_eq!(cut_bytes("aéb", 2), "a");
        assert_eq!(cut_bytes("aéb", 3), "aé");
    }

    #[test]
    fn words_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_word("scenarios/01-happy.toml"), "scenarios/01-happy.toml");
        assert_eq!(shell_word("my scenarios/a.toml"), "'my scenarios/a.toml'");
        assert_eq!(shell_word("it's.toml"), "'it'\\''s.toml'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn a_path_that_starts_with_a_dash_is_not_read_as_a_flag() {
        assert_eq!(path_word("-x.toml"), "./-x.toml");
        assert_eq!(path_word("-it's.toml"), "'./-it'\\''s.toml'");
        assert_eq!(path_word("scenarios/a.toml"), "scenarios/a.toml");
        assert_eq!(path_word("/tmp/-x.toml"), "/tmp/-x.toml");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(0, "run"), "0 runs");
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(2, "seed"), "2 seeds");
        assert_eq!(noun(1, "msg"), "msg");
    }

    #[test]
    fn real_times_print_to_the_microsecond() {
        let printed = |t: f64| serde_json::to_string(&t).unwrap();
        assert_eq!(printed(real_ms(0.5830649999999999)), "0.583");
        assert_eq!(printed(real_ms(0.32519899999999996)), "0.325");
        assert_eq!(printed(real_seconds(0.0119483999999)), "0.011948");
        assert_eq!(printed(real_seconds(12.3456789)), "12.345679");
        assert_eq!(printed(real_ms(7.0)), "7.0");
    }
}
