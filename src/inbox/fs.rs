//! A simulated file system: just enough of one for inbox files.
//!
//! Real inboxes fail in the gaps between file operations (a line appended
//! between a read and a truncate, a writer that dies halfway through an
//! append), so each operation here is one indivisible step and the caller
//! decides what happens between two of them. Files live in a `BTreeMap` so that
//! listing them never depends on hashing.

use std::collections::BTreeMap;

/// The most the simulated inbox files may hold together at any moment:
/// 256 MiB. A scenario file of a few KB can ask for far more (one 10 KB
/// broadcast to 100,000 file inboxes is 1 GB of lines), and the files are
/// the bulk of a file-mode run's memory, so this bound is what keeps that
/// memory within a stated size (see `docs/inboxes.md`, "Bounds").
pub const MAX_HELD_BYTES: u64 = 256 * 1024 * 1024;

/// One change to the file system, as a value: the simulator's record of what
/// happened, and what the disk mirror replays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsOp {
    /// Adds bytes at the end, creating the file if needed. A torn write is an
    /// append of the prefix that landed.
    Append {
        path: String,
        bytes: Vec<u8>,
    },
    /// Replaces the whole content (creating the file if needed).
    Write {
        path: String,
        bytes: Vec<u8>,
    },
    /// Empties the file and keeps it.
    Truncate {
        path: String,
    },
    /// Removes the first `len` bytes.
    DropPrefix {
        path: String,
        len: u64,
    },
    /// Moves a file, replacing any file already at `to`.
    Rename {
        from: String,
        to: String,
    },
    Remove {
        path: String,
    },
}

/// A file's bytes, and how many bytes have ever been cut from its front.
///
/// `dropped` lets a reader keep a position that survives pruning: a position
/// counts bytes since the file was created, like a log's offset, so dropping
/// the bytes before it moves the data but not the position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimFile {
    pub bytes: Vec<u8>,
    pub dropped: u64,
}

impl SimFile {
    /// The position just past the last byte, counted since creation.
    pub fn end(&self) -> u64 {
        self.dropped + self.bytes.len() as u64
    }
}

/// Paths to files. Paths are plain strings (`"alice.jsonl"`): the simulator
/// has no directories to create or permissions to check.
#[derive(Clone, Debug, Default)]
pub struct SimFs {
    files: BTreeMap<String, SimFile>,
    /// Bytes in all the files together, kept as they change: what
    /// [`MAX_HELD_BYTES`] bounds.
    held: u64,
    /// Every change in order, kept only when asked for: a long run appends
    /// millions of lines and most runs mirror nothing.
    journal: Option<Vec<FsOp>>,
}

impl SimFs {
    pub fn new() -> SimFs {
        SimFs::default()
    }

    /// A file system that remembers every change, for the disk mirror.
    pub fn with_journal() -> SimFs {
        SimFs { journal: Some(Vec::new()), ..SimFs::default() }
    }

    /// The changes made since the last call, oldest first.
    pub fn take_journal(&mut self) -> Vec<FsOp> {
        self.journal.as_mut().map(std::mem::take).unwrap_or_default()
    }

    pub fn file(&self, path: &str) -> Option<&SimFile> {
        self.files.get(path)
    }

    pub fn read(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(|f| f.bytes.as_slice())
    }

    pub fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Bytes in the file now (0 if it does not exist).
    pub fn size(&self, path: &str) -> u64 {
        self.files.get(path).map_or(0, |f| f.bytes.len() as u64)
    }

    /// Bytes in all the files together.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// The files' paths and bytes, handed over rather than copied: at the end
    /// of a run they may be most of its memory.
    pub fn into_files(self) -> BTreeMap<String, Vec<u8>> {
        self.files.into_iter().map(|(p, f)| (p, f.bytes)).collect()
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&str, &SimFile)> {
        self.files.iter().map(|(p, f)| (p.as_str(), f))
    }

    /// Applies one change. Operations on a missing file change nothing
    /// (truncating or renaming what is not there is not an error a caller
    /// could do anything about), and report `false`.
    pub fn apply(&mut self, op: FsOp) -> bool {
        let len = |f: &SimFile| f.bytes.len() as u64;
        let changed = match &op {
            FsOp::Append { path, bytes } => {
                self.files.entry(path.clone()).or_default().bytes.extend_from_slice(bytes);
                self.held += bytes.len() as u64;
                true
            }
            FsOp::Write { path, bytes } => {
                let file = self.files.entry(path.clone()).or_default();
                self.held = self.held - len(file) + bytes.len() as u64;
                // A rewrite starts a new history: positions in the old content mean nothing.
                *file = SimFile { bytes: bytes.clone(), dropped: 0 };
                true
            }
            FsOp::Truncate { path } => match self.files.get_mut(path) {
                Some(file) => {
                    self.held -= len(file);
                    file.dropped += len(file);
                    file.bytes.clear();
                    true
                }
                None => false,
            },
            FsOp::DropPrefix { path, len } => match self.files.get_mut(path) {
                Some(file) => {
                    let cut = (*len).min(file.bytes.len() as u64);
                    file.bytes.drain(..cut as usize);
                    file.dropped += cut;
                    self.held -= cut;
                    true
                }
                None => false,
            },
            FsOp::Rename { from, to } => match self.files.remove(from) {
                Some(file) => {
                    if let Some(replaced) = self.files.insert(to.clone(), file) {
                        self.held -= len(&replaced);
                    }
                    true
                }
                None => false,
            },
            FsOp::Remove { path } => match self.files.remove(path) {
                Some(file) => {
                    self.held -= len(&file);
                    true
                }
                None => false,
            },
        };
        if changed {
            if let Some(journal) = &mut self.journal {
                journal.push(op);
            }
        }
        changed
    }

    pub fn append(&mut self, path: &str, bytes: &[u8]) {
        if self.journal.is_none() {
            // The common case, without building an `FsOp` to throw away.
            if let Some(file) = self.files.get_mut(path) {
                file.bytes.extend_from_slice(bytes);
                self.held += bytes.len() as u64;
                return;
            }
        }
        self.apply(FsOp::Append { path: path.to_string(), bytes: bytes.to_vec() });
    }

    /// An append cut short by a crash: only the first `landed` bytes reach the
    /// file. `landed` past the end means the whole append landed.
    pub fn append_torn(&mut self, path: &str, bytes: &[u8], landed: usize) {
        let landed = landed.min(bytes.len());
        if landed > 0 {
            self.append(path, &bytes[..landed]);
        }
    }

    pub fn write(&mut self, path: &str, bytes: &[u8]) {
        self.apply(FsOp::Write { path: path.to_string(), bytes: bytes.to_vec() });
    }

    pub fn truncate(&mut self, path: &str) -> bool {
        self.apply(FsOp::Truncate { path: path.to_string() })
    }

    pub fn drop_prefix(&mut self, path: &str, len: u64) -> bool {
        self.apply(FsOp::DropPrefix { path: path.to_string(), len })
    }

    pub fn rename(&mut self, from: &str, to: &str) -> bool {
        self.apply(FsOp::Rename { from: from.to_string(), to: to.to_string() })
    }

    pub fn remove(&mut self, path: &str) -> bool {
        self.apply(FsOp::Remove { path: path.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_accumulate_and_truncate_keeps_the_position() {
        let mut fs = SimFs::new();
        fs.append("a", b"one\n");
        fs.append("a", b"two\n");
        assert_eq!(fs.read("a"), Some(&b"one\ntwo\n"[..]));
        assert!(fs.truncate("a"));
        assert_eq!(fs.read("a"), Some(&b""[..]));
        assert_eq!(fs.file("a").map(SimFile::end), Some(8));
        fs.append("a", b"x");
        assert_eq!(fs.file("a").map(SimFile::end), Some(9));
    }

    #[test]
    fn a_torn_append_lands_only_its_prefix() {
        let mut fs = SimFs::new();
        fs.append_torn("a", b"hello\n", 3);
        assert_eq!(fs.read("a"), Some(&b"hel"[..]));
        // Nothing landed: the file is not even created.
        fs.append_torn("b", b"hello\n", 0);
        assert!(!fs.exists("b"));
    }

    #[test]
    fn drop_prefix_moves_data_not_positions() {
        let mut fs = SimFs::new();
        fs.append("a", b"0123456789");
        assert!(fs.drop_prefix("a", 4));
        assert_eq!(fs.read("a"), Some(&b"456789"[..]));
        assert_eq!(fs.file("a").map(|f| f.dropped), Some(4));
        // More than the file holds drops what there is.
        assert!(fs.drop_prefix("a", 100));
        assert_eq!(fs.size("a"), 0);
        assert_eq!(fs.file("a").map(SimFile::end), Some(10));
    }

    #[test]
    fn held_counts_the_bytes_of_every_file_through_every_change() {
        let mut fs = SimFs::with_journal();
        let total = |fs: &SimFs| fs.files().map(|(_, f)| f.bytes.len() as u64).sum::<u64>();
        fs.append("a", b"0123456789");
        fs.append("b", b"xyz");
        fs.append_torn("b", b"hello\n", 2);
        assert_eq!(fs.held(), 15);
        fs.drop_prefix("a", 4);
        fs.write("o", b"12\n");
        fs.write("o", b"1\n");
        assert_eq!(fs.held(), total(&fs));
        fs.rename("a", "b");
        assert_eq!(fs.held(), total(&fs));
        fs.truncate("b");
        fs.remove("o");
        assert_eq!((fs.held(), total(&fs)), (0, 0));
        let mut plain = SimFs::new();
        plain.append("a", b"one");
        plain.append("a", b"two");
        assert_eq!(plain.held(), 6);
        assert_eq!(plain.into_files()["a"], b"onetwo");
    }

    #[test]
    fn rename_replaces_and_missing_files_change_nothing() {
        let mut fs = SimFs::with_journal();
        fs.append("a", b"A");
        fs.append("b", b"B");
        assert!(fs.rename("a", "b"));
        assert_eq!(fs.read("b"), Some(&b"A"[..]));
        assert!(!fs.exists("a"));
        assert!(!fs.rename("a", "c"));
        assert!(!fs.truncate("nope"));
        assert!(!fs.remove("nope"));
        // Only the changes that happened are journalled.
        assert_eq!(fs.take_journal().len(), 3);
        assert!(fs.take_journal().is_empty());
    }
}
