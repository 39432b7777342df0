//! Counts in words, for every report that says how many of something:
//! shared by the commands and the library's own messages, so it sits below
//! both.

/// `1 handshake`, `2 handshakes`.
pub fn plural(n: u64, word: &str) -> String {
    format!("{n} {}", noun(n, word))
}

/// The word alone, made plural unless `n` is one.
pub fn noun(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert_eq!(plural(0, "run"), "0 runs");
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(2, "seed"), "2 seeds");
        assert_eq!(noun(1, "msg"), "msg");
    }
}
