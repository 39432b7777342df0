//! Appending a message to an inbox file, as a sender does.
//!
//! A sender that dies halfway through an append leaves a line with no
//! newline at the end of the file. Appended as is, the next message would be
//! glued to that fragment and the two would be lost together. So an append
//! first looks at the file's last byte and, if it is not a newline, writes one
//! before its line: the fragment becomes a line of its own, which the reader
//! skips and records as torn, and the new line is whole.
//!
//! The look and the append are one step here, as they are for writers that
//! hold the inbox's lock while appending (the production agent's mailbox
//! takes a `.lock` file). Writers without a lock that race a dying writer can
//! still glue lines; the simulator does not model that race.

use super::fs::SimFs;
use super::line::{Line, SharedText};

/// The file a named agent's inbox lives in, as in the reference's
/// `.team/inbox/<name>.jsonl` (the directory is the mirror's business).
pub fn inbox_path(owner: &str) -> String {
    // Joined by hand: every append and every read names its file, and the
    // formatting machinery costs several times a copy of two strings.
    joined(owner, ".jsonl")
}

/// `name` then `suffix`, in a string of exactly their length.
pub(super) fn joined(name: &str, suffix: &str) -> String {
    let mut path = String::with_capacity(name.len() + suffix.len());
    path.push_str(name);
    path.push_str(suffix);
    path
}

/// The bytes an append of `line` to `path` writes now: the line, preceded by
/// a newline when the file ends in a fragment.
pub fn framed(fs: &SimFs, path: &str, line: &Line) -> Vec<u8> {
    framed_shared(fs, path, line, &mut SharedText::default())
}

/// As [`framed`], escaping a text shared with the last line once (see
/// [`SharedText`]).
pub fn framed_shared(fs: &SimFs, path: &str, line: &Line, shared: &mut SharedText) -> Vec<u8> {
    // Room for a usual line at once (its keys, names, numbers and an id take
    // about 200 bytes) rather than growing it field by field.
    let mut bytes = Vec::with_capacity(256);
    if fs.read(path).and_then(<[u8]>::last).is_some_and(|&b| b != b'\n') {
        bytes.push(b'\n');
    }
    line.write_json_line_shared(&mut bytes, shared);
    bytes
}

/// Appends one message to `path`.
pub fn append_line(fs: &mut SimFs, path: &str, line: &Line) {
    let bytes = framed(fs, path, line);
    fs.append(path, &bytes);
}

/// A sender crashes while appending: only the first `landed` bytes of the
/// framed append (see [`framed`]) reach the file. Returns how many bytes the
/// whole append would have written, so a test can try every cut.
pub fn append_line_torn(fs: &mut SimFs, path: &str, line: &Line, landed: usize) -> usize {
    let bytes = framed(fs, path, line);
    fs.append_torn(path, &bytes, landed);
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Millis;

    fn line(text: &str) -> Line {
        crate::inbox::line::note(Millis(0), text)
    }

    #[test]
    fn a_fragment_is_terminated_before_the_next_line() {
        let mut fs = SimFs::new();
        let path = inbox_path("alice");
        append_line(&mut fs, &path, &line("a"));
        let whole = append_line_torn(&mut fs, &path, &line("b"), 5);
        assert!(whole > 5);
        append_line(&mut fs, &path, &line("c"));
        let text = String::from_utf8(fs.read(&path).unwrap().to_vec()).unwrap();
        let a = line("a").to_json_line();
        let b = line("b").to_json_line();
        let c = line("c").to_json_line();
        assert_eq!(text, format!("{a}{}\n{c}", &b[..5]));
    }

    #[test]
    fn a_clean_file_gets_no_extra_newline() {
        let mut fs = SimFs::new();
        append_line(&mut fs, "x.jsonl", &line("a"));
        append_line(&mut fs, "x.jsonl", &line("b"));
        assert_eq!(fs.read("x.jsonl").unwrap().iter().filter(|&&b| b == b'\n').count(), 2);
    }
}
