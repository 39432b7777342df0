//! Creating a file a user names for output (`--trace`, `--svg`, `--html`,
//! `--mermaid`, `explore --write`, `shrink --out`, fuzz finds) without
//! writing through a symbolic link: a link left where the output goes (in a
//! shared folder, say) would otherwise have the file it points to
//! overwritten, or created wherever it points. A link to something that is
//! not a regular file (`/dev/stdout`, a terminal, a pipe) is written through:
//! nothing is overwritten there.

use std::fs::File;
use std::path::Path;

/// Why `path` may not be written, if it may not: checked before a command
/// starts its work, so that a refusal runs nothing.
pub fn check(path: &Path) -> Result<(), String> {
    // A folder that is not there fails the write at the end of the work; say so first.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(format!("cannot write {}: there is no folder {}", path.display(), dir.display()));
        }
    }
    let Ok(link) = std::fs::symlink_metadata(path) else { return Ok(()) };
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

/// Creates (or empties) the file at `path` for writing, or says why not.
pub fn create(path: &Path) -> Result<File, String> {
    check(path)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    #[cfg(unix)]
    if !is_link {
        use std::os::unix::fs::OpenOptionsExt;
        // A link swapped in after the check is refused by the open itself.
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return format!("{} became a symbolic link: nothing is written through a link", path.display());
        }
        format!("cannot write {}: {e}", path.display())
    })
}

/// Writes `text` to a new file at `path` (see [`create`]).
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    create(path)?.write_all(text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

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
}
