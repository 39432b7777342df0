//! Cutting an inbox file's bytes into lines, and each line into a message or
//! the reason it is skipped.
//!
//! Only bytes up to the last newline are lines. What follows the last newline
//! is a line still being written or one whose writer died: the scanner leaves
//! it alone and says where it starts, and the caller decides (a reader that
//! keeps an offset waits for it to be terminated; the reference's truncate
//! destroys it).

use super::line::{Line, LineError};

/// A line the reader could not use. Recorded, never fatal: the lines after it
/// are read as usual.
#[derive(Clone, Debug, PartialEq)]
pub enum Skipped {
    /// Bytes that are not a JSON object: a write cut short by a crash.
    Torn { offset: u64, bytes: Vec<u8> },
    /// A whole JSON object that is not a message (an unknown type, a missing field).
    Invalid { offset: u64, bytes: Vec<u8>, error: LineError },
    /// A message line that no send put there: written by hand or by a
    /// fault, naming a message not (yet) sent. The simulated router hands
    /// over only the lines it appended.
    NotSent { offset: u64 },
}

impl Skipped {
    pub fn offset(&self) -> u64 {
        match self {
            Skipped::Torn { offset, .. } | Skipped::Invalid { offset, .. } | Skipped::NotSent { offset } => *offset,
        }
    }
}

/// The lines of a stretch of file: each message as a [`Line`], or as what
/// the caller of [`scan_by`] keeps of one.
#[derive(Clone, Debug, PartialEq)]
pub struct Scanned<L = Line> {
    /// Messages with the position of their first byte.
    pub lines: Vec<(u64, L)>,
    pub skipped: Vec<Skipped>,
    /// Position just past the last complete line: where a reader that has
    /// taken all of these lines stands.
    pub end: u64,
    /// The bytes after the last newline (empty if the stretch ends with one).
    pub tail: Vec<u8>,
}

impl<L> Default for Scanned<L> {
    fn default() -> Self {
        Scanned { lines: Vec::new(), skipped: Vec::new(), end: 0, tail: Vec::new() }
    }
}

/// Scans `bytes`, whose first byte sits at position `start` in the file.
/// `owner` is the inbox's owner (see [`Line::parse`]).
pub fn scan(bytes: &[u8], start: u64, owner: &str) -> Scanned {
    scan_by(bytes, start, |_, body| Line::parse(body, owner))
}

/// As [`scan`], each line read by `read` from its position and its bytes
/// (without the newline): a caller that wrote a line itself can say what it
/// holds without parsing it back, and keep only what it needs of it.
pub fn scan_by<L>(bytes: &[u8], start: u64, mut read: impl FnMut(u64, &[u8]) -> Result<L, LineError>) -> Scanned<L> {
    let mut out = Scanned { end: start, ..Scanned::default() };
    let mut from = 0usize;
    while let Some(nl) = bytes[from..].iter().position(|&b| b == b'\n') {
        let body = &bytes[from..from + nl];
        let offset = start + from as u64;
        // The reference's reader skips blank lines; so does this one.
        if !body.iter().all(u8::is_ascii_whitespace) {
            match read(offset, body) {
                Ok(line) => out.lines.push((offset, line)),
                Err(e) if e.is_torn() => out.skipped.push(Skipped::Torn { offset, bytes: body.to_vec() }),
                Err(error) => out.skipped.push(Skipped::Invalid { offset, bytes: body.to_vec(), error }),
            }
        }
        from += nl + 1;
    }
    out.end = start + from as u64;
    out.tail = bytes[from..].to_vec();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Millis;

    fn line(text: &str) -> Line {
        crate::inbox::line::note(Millis(7), text)
    }

    #[test]
    fn splits_lines_skips_garbage_and_keeps_the_tail() {
        let a = line("a").to_json_line();
        let b = line("b").to_json_line();
        let bytes = format!("{a}{{\"type\":\"mes\n\n{b}{{\"type\":\"x\",\"from\":\"y\"}}\n{{\"ty");
        let s = scan(bytes.as_bytes(), 100, "alice");
        assert_eq!(s.lines, vec![(100, line("a")), (100 + a.len() as u64 + 14, line("b"))]);
        assert_eq!(s.skipped.len(), 2);
        assert_eq!(s.skipped[0], Skipped::Torn { offset: 100 + a.len() as u64, bytes: b"{\"type\":\"mes".to_vec() });
        assert!(matches!(&s.skipped[1], Skipped::Invalid { error: LineError::UnknownType(t), .. } if t == "x"));
        assert_eq!(s.tail, b"{\"ty");
        assert_eq!(s.end, 100 + bytes.len() as u64 - 4);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        use rand::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        for _ in 0..200 {
            let mut bytes = vec![0u8; (rng.next_u32() % 300) as usize];
            rng.fill_bytes(&mut bytes);
            let s = scan(&bytes, 0, "alice");
            assert!(s.end as usize + s.tail.len() == bytes.len());
        }
    }
}
