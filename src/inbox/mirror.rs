//! Real files that follow the simulated ones, for `--inbox-dir DIR`: every
//! change the simulated file system makes is made again on disk, in the same
//! order, so `cat`, `tail -f` and `jq` show what the run's inboxes hold.
//!
//! The disk is only a window: the simulation never reads it back, so a slow or
//! failing disk changes nothing about a run except that the window stops. A
//! failure is returned, never a panic; the caller decides to warn and carry on.

use super::fs::{FsOp, SimFs};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Simulated paths are plain relative names; anything that could climb
    /// out of the directory is refused rather than written.
    #[error("{0:?} is not a plain relative path inside the inbox directory")]
    UnsafePath(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MirrorError + '_ {
    move |source| MirrorError::Io { path: path.to_path_buf(), source }
}

/// Opens without following a symbolic link at the last component: a link
/// planted in the folder would otherwise have the file it points to written
/// (the open fails instead, and the run reports the mirror's error).
fn no_links(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
}

/// A directory that mirrors a simulated file system.
#[derive(Debug)]
pub struct DiskMirror {
    root: PathBuf,
}

impl DiskMirror {
    /// Creates the directory if needed.
    pub fn new(root: impl Into<PathBuf>) -> Result<DiskMirror, MirrorError> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(io(&root))?;
        Ok(DiskMirror { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn real(&self, path: &str) -> Result<PathBuf, MirrorError> {
        let rel = Path::new(path);
        if path.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(MirrorError::UnsafePath(path.to_string()));
        }
        Ok(self.root.join(rel))
    }

    fn parent_dir(path: &Path) -> Result<(), MirrorError> {
        match path.parent() {
            Some(dir) => fs::create_dir_all(dir).map_err(io(dir)),
            None => Ok(()),
        }
    }

    /// Replaces a file's content in one step (write beside it, then rename),
    /// so someone reading the directory never sees half of it.
    fn replace(real: &Path, bytes: &[u8]) -> Result<(), MirrorError> {
        let mut tmp = real.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut file =
            no_links(OpenOptions::new().write(true).create(true).truncate(true)).open(&tmp).map_err(io(&tmp))?;
        file.write_all(bytes).map_err(io(&tmp))?;
        fs::rename(&tmp, real).map_err(io(real))
    }

    /// Makes one change on disk.
    pub fn apply(&self, op: &FsOp) -> Result<(), MirrorError> {
        match op {
            FsOp::Append { path, bytes } => {
                let real = self.real(path)?;
                Self::parent_dir(&real)?;
                let mut file = no_links(OpenOptions::new().create(true).append(true)).open(&real).map_err(io(&real))?;
                file.write_all(bytes).map_err(io(&real))
            }
            FsOp::Write { path, bytes } => {
                let real = self.real(path)?;
                Self::parent_dir(&real)?;
                Self::replace(&real, bytes)
            }
            FsOp::Truncate { path } => {
                let real = self.real(path)?;
                no_links(OpenOptions::new().write(true)).open(&real).and_then(|f| f.set_len(0)).map_err(io(&real))
            }
            FsOp::DropPrefix { path, len } => {
                let real = self.real(path)?;
                let bytes = fs::read(&real).map_err(io(&real))?;
                let cut = usize::try_from(*len).unwrap_or(usize::MAX).min(bytes.len());
                Self::replace(&real, &bytes[cut..])
            }
            FsOp::Rename { from, to } => {
                let (from, to) = (self.real(from)?, self.real(to)?);
                Self::parent_dir(&to)?;
                fs::rename(&from, &to).map_err(io(&from))
            }
            FsOp::Remove { path } => {
                let real = self.real(path)?;
                fs::remove_file(&real).map_err(io(&real))
            }
        }
    }

    /// Makes the changes a simulated file system journalled since the last
    /// call (see [`SimFs::with_journal`]), stopping at the first failure.
    pub fn follow(&self, fs: &mut SimFs) -> Result<usize, MirrorError> {
        let ops = fs.take_journal();
        for op in &ops {
            self.apply(op)?;
        }
        Ok(ops.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::drain::{begin_read, finish_read, prune, Drain};
    use crate::inbox::line::Line;
    use crate::inbox::write::{append_line, append_line_torn, inbox_path};
    use crate::protocol::{Message, Millis, RequestId};

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("handshake-inbox-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    /// Every simulated file equals its disk file, and no other file is on disk.
    fn assert_same(sim: &SimFs, mirror: &DiskMirror, when: &str) {
        let mut on_disk: Vec<String> = fs::read_dir(mirror.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let simulated: Vec<String> = sim.files().map(|(p, _)| p.to_string()).collect();
        assert_eq!(on_disk, simulated, "{when}");
        for (path, file) in sim.files() {
            assert_eq!(fs::read(mirror.root().join(path)).unwrap(), file.bytes, "{path} {when}");
        }
    }

    fn message(from: &str, to: &str, seq: u64, message: Message) -> Line {
        Line { from: from.into(), to: to.into(), at: Millis(seq * 250), message, seq: Some(seq), incarnation: Some(1) }
    }

    #[test]
    fn the_disk_equals_the_simulation_after_every_change() {
        let dir = temp_dir("mirror");
        let mirror = DiskMirror::new(&dir).unwrap();
        let mut sim = SimFs::with_journal();
        let id = RequestId::from_random_bytes([3; 16]);
        let mut step = 0;
        let mut check = |sim: &mut SimFs| {
            step += 1;
            mirror.follow(sim).unwrap();
            assert_same(sim, &mirror, &format!("after step {step}"));
        };
        let alice = inbox_path("alice");
        let lead = inbox_path("lead");
        append_line(
            &mut sim,
            &alice,
            &message(
                "lead",
                "alice",
                1,
                Message::Request {
                    kind: crate::protocol::Kind::Shutdown,
                    request_id: id,
                    words: None,
                    deadline: Millis(60_000),
                },
            ),
        );
        check(&mut sim);
        append_line(
            &mut sim,
            &lead,
            &message(
                "alice",
                "lead",
                2,
                Message::Response {
                    kind: crate::protocol::Kind::Shutdown,
                    request_id: id,
                    approve: false,
                    words: Some("tests running".into()),
                },
            ),
        );
        append_line_torn(&mut sim, &lead, &message("bob", "lead", 3, Message::Message { text: "half".into() }), 20);
        check(&mut sim);
        append_line(&mut sim, &lead, &message("bob", "lead", 4, Message::Broadcast { text: "all".into() }));
        check(&mut sim);
        for drain in [Drain::CommittedOffset, Drain::ReadThenTruncate] {
            let owner = if drain == Drain::CommittedOffset { "lead" } else { "alice" };
            let (_, token) = begin_read(&sim, owner, drain);
            let _ = finish_read(&mut sim, token);
            check(&mut sim);
            prune(&mut sim, owner, drain);
            check(&mut sim);
        }
        sim.rename(&alice, "alice.jsonl.old");
        check(&mut sim);
        sim.remove("alice.jsonl.old");
        check(&mut sim);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_files_on_disk_parse_as_the_reference_format() {
        let dir = temp_dir("format");
        let mirror = DiskMirror::new(&dir).unwrap();
        let mut sim = SimFs::with_journal();
        let id = RequestId::from_random_bytes([5; 16]);
        let lines = [
            message("lead", "alice", 1, Message::Message { text: "hello".into() }),
            message(
                "lead",
                "alice",
                2,
                Message::Request {
                    kind: crate::protocol::Kind::Shutdown,
                    request_id: id,
                    words: None,
                    deadline: Millis::NEVER,
                },
            ),
            message(
                "alice",
                "alice",
                3,
                Message::Request {
                    kind: crate::protocol::Kind::Plan,
                    request_id: id,
                    words: Some("p".into()),
                    deadline: Millis(9),
                },
            ),
            message(
                "lead",
                "alice",
                4,
                Message::Response { kind: crate::protocol::Kind::Plan, request_id: id, approve: true, words: None },
            ),
        ];
        for l in &lines {
            append_line(&mut sim, &inbox_path("alice"), l);
        }
        mirror.follow(&mut sim).unwrap();
        let text = fs::read_to_string(dir.join("alice.jsonl")).unwrap();
        let mut parsed = 0;
        for (raw, want) in text.lines().zip(&lines) {
            let v: serde_json::Value = serde_json::from_str(raw).unwrap();
            for key in ["type", "from", "content", "timestamp"] {
                assert!(v.get(key).is_some(), "{key} missing in {raw}");
            }
            assert!(v["timestamp"].is_number() && v["content"].is_string());
            assert_eq!(v["type"], want.message.type_name());
            assert_eq!(Line::parse(raw.as_bytes(), "alice").unwrap(), *want);
            parsed += 1;
        }
        assert_eq!(parsed, lines.len());
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_in_the_folder_is_not_written_through() {
        let dir = temp_dir("links");
        let mirror = DiskMirror::new(&dir).unwrap();
        let outside = dir.with_extension("outside");
        fs::write(&outside, b"keep").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("alice.jsonl")).unwrap();
        for op in [
            FsOp::Append { path: "alice.jsonl".into(), bytes: b"x".to_vec() },
            FsOp::Truncate { path: "alice.jsonl".into() },
        ] {
            assert!(mirror.apply(&op).is_err(), "{op:?}");
        }
        std::os::unix::fs::symlink(&outside, dir.join("bob.jsonl.tmp")).unwrap();
        assert!(mirror.apply(&FsOp::Write { path: "bob.jsonl".into(), bytes: b"y".to_vec() }).is_err());
        assert_eq!(fs::read(&outside).unwrap(), b"keep", "the file the links point to is untouched");
        let _ = fs::remove_dir_all(&dir);
        let _ = fs::remove_file(&outside);
    }

    #[test]
    fn paths_that_leave_the_directory_are_refused() {
        let dir = temp_dir("unsafe");
        let mirror = DiskMirror::new(&dir).unwrap();
        for bad in ["../escape.jsonl", "/etc/passwd", "", "a/../../b"] {
            let op = FsOp::Append { path: bad.into(), bytes: b"x".to_vec() };
            assert!(matches!(mirror.apply(&op), Err(MirrorError::UnsafePath(_))), "{bad:?}");
        }
        // A missing file is an I/O error with its path, not a panic.
        let err = mirror.apply(&FsOp::Truncate { path: "nobody.jsonl".into() }).unwrap_err();
        assert!(err.to_string().contains("nobody.jsonl"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }
}
