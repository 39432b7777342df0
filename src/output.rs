//! Creating a file a user names for output (`--trace`, `--svg`, `--html`,
//! `--mermaid`, `explore --write`, `shrink --out`, fuzz finds) without
//! writing through a symbolic link: a link left where the output goes (in a
//! shared folder, say) would otherwise have the file it points to
//! overwritten, or created wherever it points. A link to something that is
//! not a regular file (`/dev/stdout`, a terminal, a pipe) is written through:
//! nothing is overwritten there.
//!
//! Every output is written whole or not at all: into a temporary file in
//! the same folder, renamed into place when complete ([`Pending`]). Ctrl-C,
//! an error or a refusal leaves the previous file as it was.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why `path` may not be written, if it may not: checked before a command
/// starts its work, so that a refusal runs nothing. Beside the checks of
/// [`placeable`], the temporary file the write will make is made and
/// removed (a folder the user cannot write, `/proc`): a watch of hours, or
/// a search of minutes, learnt only at its end that its output was lost.
pub fn check(path: &Path) -> Result<(), String> {
    placeable(path)?;
    // A device or a pipe is written as it is: opening a pipe to try it
    // would wait for its reader.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(());
    }
    drop(create(path)?);
    Ok(())
}

/// Why `path` may not be written, by its place: no folder to make it in,
/// a folder, a link to a file or to nothing.
fn placeable(path: &Path) -> Result<(), String> {
    // `out/` names a folder, there or not: the run ran, then the rename failed.
    if path.as_os_str().to_string_lossy().ends_with(std::path::MAIN_SEPARATOR) {
        return Err(format!(
            "cannot write {}: a path that ends in a slash names a folder; name a file",
            path.display()
        ));
    }
    // A folder that is not there fails the write at the end of the work; say so first.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(format!("cannot write {}: there is no folder {}", path.display(), dir.display()));
        }
    }
    let Ok(link) = std::fs::symlink_metadata(path) else { return Ok(()) };
    if link.is_dir() {
        return Err(format!("cannot write {}: it is a folder; name a file", path.display()));
    }
    if !link.file_type().is_symlink() {
        return Ok(());
    }
    match std::fs::metadata(path) {
        // A device or a pipe: nothing to overwrite.
        Ok(target) if !target.is_file() && !target.is_dir() => Ok(()),
        Ok(target) if target.is_dir() => Err(format!("{} is a link to a folder, not a file", path.display())),
        Ok(_) => Err(format!(
            "{} is a symbolic link: writing there would overwrite the file it points to, so nothing is written \
             through a link; remove the link or name another file",
            path.display()
        )),
        Err(_) => Err(format!(
            "{} is a symbolic link to nothing: writing there would create the file it points to, so nothing is \
             written through a link; remove the link or name another file",
            path.display()
        )),
    }
}

/// An output being written: a temporary file beside `path` (same folder,
/// so the rename is atomic), renamed onto `path` by [`Pending::commit`]
/// once it is whole. Until then the file at `path`, if any, is untouched:
/// a run interrupted (Ctrl-C), failing or refused leaves the previous
/// output as it was, and the temporary file is removed (on Ctrl-C by the
/// signal handler, see [`crate::interrupt::forget_on_interrupt`]).
///
/// A device or a pipe (`/dev/stdout`, `/dev/null`) is written directly:
/// nothing can be renamed onto it, and nothing there is overwritten.
#[derive(Debug)]
pub struct Pending {
    file: Option<std::io::BufWriter<File>>,
    /// The temporary file, or `None` when writing `path` directly.
    tmp: Option<PathBuf>,
    path: PathBuf,
    /// The signal handler's slot for `tmp`.
    slot: Option<usize>,
}

impl Pending {
    /// Puts the whole output in place of `path`: the temporary file is
    /// flushed, synced and renamed onto it (a link put at `path` meanwhile is
    /// replaced, never written through).
    pub fn commit(mut self) -> Result<(), String> {
        let shown = self.path.display().to_string();
        self.finish()?;
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, &self.path).map_err(|e| format!("cannot write {shown}: {e}"))?;
            self.tmp = None;
        }
        Ok(())
    }

    /// Flushes the output and, when it is a temporary file, syncs it: what
    /// is put in place afterwards is whole.
    fn finish(&mut self) -> Result<(), String> {
        let shown = self.path.display();
        match self.file.take().map(|f| f.into_inner().map_err(|e| e.into_error())) {
            Some(Ok(f)) if self.tmp.is_some() => f.sync_all().map_err(|e| format!("cannot write {shown}: {e}")),
            Some(Err(e)) => Err(format!("cannot write {shown}: {e}")),
            _ => Ok(()),
        }
    }
}

impl Pending {
    /// [`commit`](Self::commit), but only where nothing is at `path`: the
    /// whole file is linked into place, which fails if anything got there
    /// meanwhile (a check before writing would leave a moment in which a
    /// file put there is then replaced). Nothing is overwritten, ever.
    pub fn commit_new(mut self) -> Result<(), String> {
        let shown = self.path.display().to_string();
        let Some(tmp) = self.tmp.clone() else {
            return Err(format!("cannot write {shown}: something is there already"));
        };
        self.finish()?;
        match std::fs::hard_link(&tmp, &self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(format!("{shown} already exists: nothing is overwritten"))
            }
            Err(e) => Err(format!("cannot write {shown}: {e}")),
        }
        // Dropped here: the temporary name is removed, the file stays.
    }
}

/// Writes `text` as a new file `path`, whole, or nothing if anything is
/// there already (see [`Pending::commit_new`]).
pub fn write_new(path: &Path, text: &str) -> Result<(), String> {
    let mut out = create(path)?;
    out.write_all(text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    out.commit_new()
}

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("already committed")),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.write_all(buf),
            None => Err(std::io::Error::other("already committed")),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Not committed: the output is incomplete, and the old one stays.
        drop(self.file.take());
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
        if let Some(slot) = self.slot.take() {
            crate::interrupt::forgotten(slot);
        }
    }
}

/// Starts writing the output `path` (see [`Pending`]), or says why it
/// cannot be written: a link to a file, no such folder, a folder where the
/// temporary file cannot be made.
pub fn create(path: &Path) -> Result<Pending, String> {
    // A folder, or a link, is refused there.
    placeable(path)?;
    let shown = path.display();
    // A device or a pipe, named or linked to: written as it is.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let file =
            std::fs::OpenOptions::new().write(true).open(path).map_err(|e| format!("cannot write {shown}: {e}"))?;
        return Ok(Pending { file: Some(std::io::BufWriter::new(file)), tmp: None, path: path.into(), slot: None });
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // Short enough that the temporary name stays within a file name's limit
    // (255 bytes, not characters: a name of wide characters is long in bytes).
    let name: String = path.file_name().map_or_else(
        || "output".into(),
        |n| n.to_string_lossy().char_indices().take_while(|(i, c)| i + c.len_utf8() <= 100).map(|(_, c)| c).collect(),
    );
    static N: AtomicU64 = AtomicU64::new(0);
    let mut options = std::fs::OpenOptions::new();
    // A new file of our own, never one a link or another program put there.
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut tries = 0;
    let (tmp, file) = loop {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match options.open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => {
                return Err(format!(
                    "cannot write {shown}: a temporary file in {} cannot be made ({e}); outputs are written \
                     beside their place and renamed into it when whole",
                    dir.display()
                ))
            }
        }
    };
    // The file it replaces keeps its permissions (a private trace stays private).
    if let Some(old) = std::fs::symlink_metadata(path).ok().filter(|m| m.is_file()) {
        let _ = file.set_permissions(old.permissions());
    }
    let slot = crate::interrupt::forget_on_interrupt(&tmp);
    Ok(Pending { file: Some(std::io::BufWriter::new(file)), tmp: Some(tmp), path: path.into(), slot })
}

/// Writes `text` as the whole output `path` (see [`create`]).
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    write_bytes(path, text.as_bytes())
}

/// [`write`], for bytes.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut out = create(path)?;
    out.write_all(bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    out.commit()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_written_whole_and_never_over_one_already_there() {
        let dir = std::env::temp_dir().join(format!("handshake-output-new-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("new.toml");
        write_new(&path, "first").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        // A file there (made between a check and the write, say) is kept.
        let e = write_new(&path, "second").unwrap_err();
        assert!(e.contains("already exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_name_long_in_bytes_but_within_the_limit_is_written() {
        let dir = std::env::temp_dir().join(format!("handshake-output-wide-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // 83 characters of 3 bytes and ".toml": 254 bytes, a name the system takes.
        let path = dir.join(format!("{}.toml", "日".repeat(83)));
        write(&path, "wide").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "wide");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_link_to_a_file_is_refused_and_the_file_is_left_alone() {
        let dir = std::env::temp_dir().join(format!("handshake-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("precious.txt");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.join("out.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write(&link, "overwritten").unwrap_err();
        assert!(e.contains("is a symbolic link") && e.contains("remove the link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        let dangling = dir.join("dangling.svg");
        std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
        assert!(write(&dangling, "x").unwrap_err().contains("a symbolic link to nothing"));
        assert!(!dir.join("nowhere").exists());
        // A plain file is written, and written again.
        let plain = dir.join("plain.txt");
        write(&plain, "one").unwrap();
        write(&plain, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "two");
        // A link to a device is written through: /dev/stdout, say.
        let null = dir.join("null");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        write(&null, "discarded").unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_output_is_put_in_place_whole_or_not_at_all() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("handshake-output-pending-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trace.jsonl");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        // Written in part, then given up (an error, a refusal): the old file stays.
        let mut out = create(&path).unwrap();
        out.write_all(b"half of the new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        let names = || -> Vec<String> {
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
        };
        assert_eq!(names(), vec!["trace.jsonl".to_string()], "no temporary file left");
        // Committed: the whole new file, with the old one's permissions.
        let mut out = create(&path).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(names(), vec!["trace.jsonl".to_string()]);
        // A folder is refused before anything is made.
        assert!(create(&dir).unwrap_err().contains("it is a folder"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
