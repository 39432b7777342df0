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
    /// The digest of the last [`CHECKED`] bytes read (fewer in a shorter
    /// file): a file rewritten in place, as long as before or longer, is
    /// told from one appended to when they no longer read the same.
    last_read: u64,
    /// The digest of the first [`CHECKED`] bytes read: a rewrite that
    /// changes the file's start (another session's lines in place of the
    /// first's) is told too, however far from its end. An edit in between,
    /// the length kept, is not: only a read of the whole file would tell it.
    first_read: u64,
    /// Why the last look could not open the file, when something is under
    /// its name that cannot be read (a link, a file without read
    /// permission); `None` when it opened, or nothing is there.
    unreadable: Option<String>,
    /// The last look stopped at [`LINES_A_LOOK`] lines, with more to read.
    behind: bool,
}

/// The most lines one look reads: a file of millions of lines already
/// written when the watch starts is taken in a part at a time, so that
/// whatever bounds what is kept (`watch --max-entries`) is looked at
/// between the parts, not once the whole file is held.
pub const LINES_A_LOOK: usize = 20_000;

/// How many bytes before where the last look stopped are read again, to
/// tell a file rewritten in place from one only appended to.
const CHECKED: u64 = 4096;

impl Tail {
    /// Reads the lines of `path` finished since the last look and gives each
    /// to `line`, in order; how many. If another file is now under the name,
    /// or the file is shorter than what was read, it is read from its start,
    /// after a [`Line::NewFile`]. A file that is gone, or not a regular
    /// file, reads as nothing new.
    pub fn read_on(&mut self, path: &Path, mut line: impl FnMut(Line<'_>)) -> usize {
        let mut file = match crate::input::open_regular(path) {
            Ok(file) => file,
            Err(e) => {
                // Gone reads as nothing new; anything else there is said.
                let there = std::fs::symlink_metadata(path).is_ok();
                self.unreadable = there.then(|| match e {
                    crate::input::ReadError::NotAFile(what) => {
                        format!("{what} is under its name now, and only a regular file is followed")
                    }
                    e => e.to_string(),
                });
                return 0;
            }
        };
        self.unreadable = None;
        let Ok(meta) = file.metadata() else { return 0 };
        let id = identity(&meta);
        let rewritten = self.offset > 0
            && (last_bytes(&mut file, self.offset).is_none_or(|d| d != self.last_read)
                || first_bytes(&mut file, self.offset).is_none_or(|d| d != self.first_read));
        if self.file != Some(id) || meta.len() < self.offset || rewritten {
            if self.file.is_some() {
                line(Line::NewFile);
            }
            *self = Tail { file: Some(id), ..Tail::default() };
        }
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return 0;
        }
        let mut reader = BufReader::with_capacity(64 << 10, file);
        let read = each_line_upto(&mut reader, false, LINES_A_LOOK, line);
        self.offset += read.bytes;
        self.unfinished = read.unfinished;
        self.behind = read.lines == LINES_A_LOOK;
        if read.bytes > 0 {
            let mut file = reader.into_inner();
            // Unreadable now, the digest is left as it was: the next look
            // finds those bytes changed and reads the file from its start.
            if let Some(d) = last_bytes(&mut file, self.offset) {
                self.last_read = d;
            }
            if let Some(d) = first_bytes(&mut file, self.offset) {
                self.first_read = d;
            }
        }
        read.lines
    }

    /// Why the last look could not read the file, if something was there
    /// that could not be.
    pub fn unreadable(&self) -> Option<&str> {
        self.unreadable.as_deref()
    }

    /// Whether the last look stopped at [`LINES_A_LOOK`] lines with more
    /// (perhaps) to read: the next look goes on from there at once.
    pub fn behind(&self) -> bool {
        self.behind
    }

    /// Whether the last look ended in a line with no newline yet.
    pub fn unfinished(&self) -> bool {
        self.unfinished
    }
}

/// What [`each_line`] read.
pub struct Lines {
    /// The bytes of the lines given, newlines included.
    pub bytes: u64,
    pub lines: usize,
    /// Whether the reader ended inside a line not given.
    pub unfinished: bool,
    /// The error that ended the reading early, if one did.
    pub error: Option<std::io::Error>,
}

/// Gives each line of `reader` to `line` in order, a line past
/// [`LINE_BOUND`] or not UTF-8 as [`Line::Unreadable`]. A last line with no
/// newline is still being written, and is left for the next look, unless
/// `whole` (the file is read once, as it is): then it is a line too.
pub fn each_line(reader: &mut impl BufRead, whole: bool, line: impl FnMut(Line<'_>)) -> Lines {
    each_line_upto(reader, whole, usize::MAX, line)
}

/// [`each_line`], stopping after `most` lines: the rest is left unread.
fn each_line_upto(reader: &mut impl BufRead, whole: bool, most: usize, mut line: impl FnMut(Line<'_>)) -> Lines {
    let mut read = Lines { bytes: 0, lines: 0, unfinished: false, error: None };
    let mut buf = Vec::new();
    while read.lines < most {
        buf.clear();
        let got = match reader.take(LINE_BOUND).read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(got) => got as u64,
            Err(e) => {
                read.error = Some(e);
                break;
            }
        };
        let ended = buf.last() == Some(&b'\n');
        let (passed, long) = if ended || (got < LINE_BOUND && whole) {
            (got, false)
        } else if got < LINE_BOUND {
            // The file ends inside this line: it is still being written.
            read.unfinished = true;
            break;
        } else {
            // Too long to hold: passed over to its end, once it has one.
            match rest_of_line(reader) {
                Some(rest) => (got + rest, true),
                None if whole => (got, true),
                None => {
                    read.unfinished = true;
                    break;
                }
            }
        };
        read.bytes += passed;
        read.lines += 1;
        match (long, std::str::from_utf8(&buf)) {
            (false, Ok(text)) => line(Line::Text(text)),
            (false, Err(_)) => line(Line::Unreadable("not UTF-8 text")),
            (true, _) => line(Line::Unreadable("a line longer than 64 MiB, not read")),
        }
    }
    read
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

/// The digest of the [`CHECKED`] bytes (or fewer, from the start) before
/// `end`; `None` if they cannot all be read.
fn last_bytes(file: &mut std::fs::File, end: u64) -> Option<u64> {
    digest(file, end.saturating_sub(CHECKED), end)
}

/// The digest of the first [`CHECKED`] bytes (or fewer, up to `end`).
fn first_bytes(file: &mut std::fs::File, end: u64) -> Option<u64> {
    digest(file, 0, end.min(CHECKED))
}

/// The digest of the bytes from `from` to `end`; `None` if they cannot
/// all be read.
fn digest(file: &mut std::fs::File, from: u64, end: u64) -> Option<u64> {
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::with_capacity((end - from) as usize);
    file.take(end - from).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 == end - from).then(|| crate::fnv::fnv1a(&bytes))
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
        // Rewritten in place, longer, its lines moved: read from its start.
        restarted = false;
        std::fs::write(&path, "first\nfresh\nmore\n").unwrap();
        assert_eq!(lines_of(&mut tail, &path, &mut restarted), ["first\n", "fresh\n", "more\n"]);
        assert!(restarted, "the bytes read before no longer read the same");
        // Appended to: only the new line, the file not read again.
        restarted = false;
        append(b"last\n");
        assert_eq!(lines_of(&mut tail, &path, &mut restarted), ["last\n"]);
        assert!(!restarted);
        // Its start rewritten in place, the length kept, more than the
        // bytes checked before the end away from it: read from its start.
        let long: String = (0..1000).map(|i| format!("line {i:04}\n")).collect();
        std::fs::write(&path, &long).unwrap();
        assert_eq!(lines_of(&mut tail, &path, &mut restarted).len(), 1000);
        restarted = false;
        std::fs::write(&path, long.replacen("line 0000", "edit 0000", 1)).unwrap();
        assert_eq!(lines_of(&mut tail, &path, &mut restarted).len(), 1000, "every line again");
        assert!(restarted, "the first bytes no longer read the same");
        // Gone: nothing new, and nothing forgotten of where it was.
        std::fs::remove_file(&path).unwrap();
        assert!(lines_of(&mut tail, &path, &mut false).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A hostile review: a transcript of a million lines was read whole in
    /// one look, and held (960 MB), before `--max-entries` was looked at.
    #[test]
    fn a_look_reads_at_most_its_lines_and_the_next_goes_on() {
        let dir = std::env::temp_dir().join(format!("handshake-tail-parts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        let text: String = (0..LINES_A_LOOK + 5).map(|i| format!("{i}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        let (mut tail, mut restarted) = (Tail::default(), false);
        let first = lines_of(&mut tail, &path, &mut restarted);
        assert_eq!((first.len(), tail.behind()), (LINES_A_LOOK, true));
        let rest = lines_of(&mut tail, &path, &mut restarted);
        assert_eq!(rest.first().map(String::as_str), Some(format!("{LINES_A_LOOK}\n").as_str()));
        assert_eq!((rest.len(), tail.behind(), restarted), (5, false, false));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_line_longer_than_the_bound_is_passed_over_and_said() {
        let mut reader = std::io::Cursor::new(b"abcdef\nnext".to_vec());
        assert_eq!(rest_of_line(&mut reader), Some(7));
        assert_eq!(rest_of_line(&mut reader), None, "no newline yet");
    }
}
