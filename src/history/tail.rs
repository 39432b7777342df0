//! A file followed as it grows, a line at a time (a lead's transcript under
//! `handshake watch`): each look reads only the lines finished since the
//! last, so a look costs what is new, not the whole file again, and memory
//! holds one line at a time, however long the file grows.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// The longest line read; a longer one is passed over, and said.
pub const LINE_BOUND: u64 = 64 << 20;

/// A line of the file, or why it could not be read.
#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    /// Another file is under the name, or the file is now shorter than
    /// what was read: the lines after this are from its start.
    NewFile,
    /// Its text, with its newline.
    Text(&'a str),
    Unreadable(&'static str),
}

/// Where the last look stopped.
#[derive(Debug, Default)]
pub struct Tail {
    /// The file read (its device and inode): another file under the name
    /// is read from its start.
    file: Option<(u64, u64)>,
    /// The bytes read: up to the end of the last finished line.
    offset: u64,
    /// Whether the last look ended in a line with no newline yet.
    unfinished: bool,
}

impl Tail {
    /// Reads the lines of `path` finished since the last look and gives each
    /// to `line`, in order; how many. If another file is now under the name,
    /// or the file is shorter than what was read, it is read from its start,
    /// after a [`Line::NewFile`]. A file that is gone, or not a regular
    /// file, reads as nothing new.
    pub fn read_on(&mut self, path: &Path, mut line: impl FnMut(Line<'_>)) -> usize {
        let Ok(mut file) = crate::input::open_regular(path) else { return 0 };
        let Ok(meta) = file.metadata() else { return 0 };
        let id = identity(&meta);
        if self.file != Some(id) || meta.len() < self.offset {
            if self.file.is_some() {
                line(Line::NewFile);
            }
            *self = Tail { file: Some(id), ..Tail::default() };
        }
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return 0;
        }
        let mut reader = BufReader::with_capacity(64 << 10, file);
        let mut buf = Vec::new();
        let mut lines = 0;
        self.unfinished = false;
        loop {
            buf.clear();
            let Ok(got) = (&mut reader).take(LINE_BOUND).read_until(b'\n', &mut buf) else { break };
            if got == 0 {
                break;
            }
            let ended = buf.last() == Some(&b'\n');
            let passed = if ended {
                got as u64
            } else if (got as u64) < LINE_BOUND {
                // The file ends inside this line: it is still being written.
                self.unfinished = true;
                break;
            } else {
                // Too long to hold: passed over to its end, once it has one.
                match rest_of_line(&mut reader) {
                    Some(rest) => got as u64 + rest,
                    None => {
                        self.unfinished = true;
                        break;
                    }
                }
            };
            self.offset += passed;
            lines += 1;
            match (ended, std::str::from_utf8(&buf)) {
                (true, Ok(text)) => line(Line::Text(text)),
                (true, Err(_)) => line(Line::Unreadable("not UTF-8 text")),
                (false, _) => line(Line::Unreadable("a line longer than 64 MiB, not read")),
            }
        }
        lines
    }

    /// Whether the last look ended in a line with no newline yet.
    pub fn unfinished(&self) -> bool {
        self.unfinished
    }
}

/// Passes over the rest of a line; the bytes passed, with its newline, or
/// `None` if the file ends first.
fn rest_of_line(reader: &mut impl BufRead) -> Option<u64> {
    let mut passed = 0;
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return None;
        }
        let (n, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        reader.consume(n);
        passed += n as u64;
        if found {
            return Some(passed);
        }
    }
}

#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(tail: &mut Tail, path: &Path, restarted: &mut bool) -> Vec<String> {
        let mut out = Vec::new();
        tail.read_on(path, |l| match l {
            Line::NewFile => *restarted = true,
            Line::Text(t) => out.push(t.to_string()),
            Line::Unreadable(why) => out.push(format!("? {why}")),
        });
        out
    }

    #[test]
    fn each_look_reads_only_the_lines_finished_since_the_last() {
        let dir = std::env::temp_dir().join(format!("handshake-tail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        let append = |s: &[u8]| {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
            std::io::Write::write_all(&mut f, s).unwrap();
        };
        let (mut tail, mut restarted) = (Tail::default(), false);
        append(b"one\ntw");
        assert_eq!(lines_of(&mut tail, &path, &mut restarted), ["one\n"]);
        assert!(tail.unfinished(), "the half line waits");
        append(b"o\n\xff\xfe\nthree\n");
        assert_eq!(lines_of(&mut tail, &path, &mut restarted), ["two\n", "? not UTF-8 text", "three\n"]);
        assert!(!tail.unfinished() && !restarted);
        assert!(lines_of(&mut tail, &path, &mut restarted).is_empty(), "nothing new");
        // Another file under the name: read from its start.
        std::fs::write(dir.join("new"), "fresh\n").unwrap();
        std::fs::rename(dir.join("new"), &path).unwrap();
        assert_eq!(lines_of(&mut tail, &path, &mut restarted), ["fresh\n"]);
        assert!(restarted);
        // Gone: nothing new, and nothing forgotten of where it was.
        std::fs::remove_file(&path).unwrap();
        assert!(lines_of(&mut tail, &path, &mut false).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_line_longer_than_the_bound_is_passed_over_and_said() {
        let mut reader = std::io::Cursor::new(b"abcdef\nnext".to_vec());
        assert_eq!(rest_of_line(&mut reader), Some(7));
        assert_eq!(rest_of_line(&mut reader), None, "no newline yet");
    }
}
