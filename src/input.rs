//! Reading a file a user names (a scenario, a shard's report) within a
//! bound, and printing the strings it held without letting them act on the
//! terminal or pass for a line of a report.
//!
//! A size from the file's metadata is not a bound: `/dev/zero` says 0 bytes
//! and never ends, a pipe has no size at all. So the bytes read are counted
//! (at most the bound plus one, to tell "exactly the bound" from "more"), and
//! only what can be read to its end is read: a regular file or a pipe. A
//! character device, a folder or a socket is refused with what it is.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Why a file was not read; the message says it in the user's terms,
/// without the path (the caller names the file its own way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Larger than the bound: `bytes` is the size when the file says it, or
    /// `None` for a pipe, read until the bound was passed.
    TooBig {
        bytes: Option<u64>,
        max: u64,
    },
    /// Not something that ends: what it is instead.
    NotAFile(&'static str),
    /// A pipe that gave nothing: no program was writing to it.
    EmptyPipe,
    /// Not UTF-8 from `line` on (counted from 1).
    NotUtf8 {
        line: u64,
    },
    Io(String),
}

impl ReadError {
    /// Why a file found in a folder was not read, in words for that folder
    /// (the display's advice is for a file named on the command line);
    /// `bound` says how the folder's reading is bounded, for a file too big.
    pub fn in_folder(&self, bound: &str) -> String {
        match self {
            ReadError::NotAFile(what) => format!("{what}: only regular files inside the folder are read; skipped"),
            ReadError::TooBig { .. } => format!("{self} ({bound})"),
            _ => self.to_string(),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooBig { bytes: Some(n), max } => {
                write!(f, "the file is {}; at most {} is read", size(*n), size(*max))
            }
            ReadError::TooBig { bytes: None, max } => {
                write!(f, "the pipe gave more than {}, the most that is read", size(*max))
            }
            ReadError::NotAFile(what) => {
                write!(f, "this is {what}, not a file: give a regular file, or a pipe such as `<(command)`")
            }
            ReadError::EmptyPipe => write!(
                f,
                "the pipe gave nothing: no program was writing to it (start the writer first, or use a regular file)"
            ),
            ReadError::NotUtf8 { line } => write!(f, "line {line} is not UTF-8 text (the whole file must be)"),
            ReadError::Io(e) => write!(f, "cannot read the file: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// `4 MiB`, `5.0 MiB`, `900 bytes`.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else {
        format!("{bytes} bytes")
    }
}

/// The text of the file at `path`, at most `max` bytes of it.
pub fn read_text(path: &Path, max: u64) -> Result<String, ReadError> {
    read(path, max, true)
}

/// [`read_text`], but only a regular file, never through a symbolic link:
/// for a file found in a folder, which must be inside it (a link swapped in
/// after the folder was listed is refused by the open itself), and which
/// must not wait on a writer (a named pipe among the files would hang the
/// reading of the folder until one came).
pub fn read_regular(path: &Path, max: u64) -> Result<String, ReadError> {
    read(path, max, false)
}

fn read(path: &Path, max: u64, follow: bool) -> Result<String, ReadError> {
    let (file, kind) = open(path, follow)?;
    if !follow && kind == Kind::Pipe {
        return Err(ReadError::NotAFile("a pipe"));
    }
    if let Kind::Regular(len) = kind {
        if len > max {
            return Err(ReadError::TooBig { bytes: Some(len), max });
        }
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| ReadError::Io(e.to_string()))?;
    if bytes.len() as u64 > max {
        let bytes = match kind {
            Kind::Regular(_) => path.metadata().ok().map(|m| m.len()).filter(|&n| n > max),
            Kind::Pipe => None,
        };
        return Err(ReadError::TooBig { bytes, max });
    }
    if bytes.is_empty() && kind == Kind::Pipe {
        return Err(ReadError::EmptyPipe);
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        ReadError::NotUtf8 { line: line_of(&e.into_bytes()[..good]) }
    })
}

/// The line (counted from 1) that starts after `before`.
fn line_of(before: &[u8]) -> u64 {
    1 + before.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Whether `path` is a pipe, or a link to one (`/dev/stdin` fed by one,
/// `<(command)`, which is `/dev/fd/63`).
pub fn is_pipe(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The regular file at `path`, opened to be read as it grows, never through
/// a symbolic link; anything else (a pipe, a folder, a device) is refused.
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    match open(path, false)? {
        (file, Kind::Regular(_)) => Ok(file),
        (_, Kind::Pipe) => Err(ReadError::NotAFile("a pipe")),
    }
}

/// What was opened: a regular file (its size then) or a pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Regular(u64),
    Pipe,
}

#[cfg(unix)]
fn open(path: &Path, follow: bool) -> Result<(File, Kind), ReadError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    // Without O_NONBLOCK, opening a named pipe waits, forever, for a program
    // to open it for writing; with it the open returns, and a pipe nobody
    // writes to reads as empty (refused below) instead of hanging.
    let flags = libc::O_NONBLOCK | if follow { 0 } else { libc::O_NOFOLLOW };
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path).map_err(|e| {
        // A socket cannot be opened at all: say what it is, not "no such device".
        match std::fs::metadata(path) {
            _ if !follow && e.raw_os_error() == Some(libc::ELOOP) => ReadError::NotAFile("a symbolic link"),
            Ok(m) if m.file_type().is_socket() => ReadError::NotAFile("a socket"),
            _ => ReadError::Io(e.to_string()),
        }
    })?;
    // The opened file's own type, not the path's: nothing can be swapped in between.
    let meta = file.metadata().map_err(|e| ReadError::Io(e.to_string()))?;
    let t = meta.file_type();
    let kind = if t.is_file() {
        Kind::Regular(meta.len())
    } else if t.is_fifo() {
        Kind::Pipe
    } else if t.is_dir() {
        return Err(ReadError::NotAFile("a folder"));
    } else if t.is_char_device() {
        return Err(ReadError::NotAFile("a character device (like /dev/zero or a terminal)"));
    } else if t.is_block_device() {
        return Err(ReadError::NotAFile("a block device (a disk)"));
    } else if t.is_socket() {
        return Err(ReadError::NotAFile("a socket"));
    } else {
        return Err(ReadError::NotAFile("neither a regular file nor a pipe"));
    };
    // Reads wait for a writer's bytes again, as a pipe's reader expects.
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns, with flags it read from it.
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) >= 0
    };
    if !cleared {
        return Err(ReadError::Io(std::io::Error::last_os_error().to_string()));
    }
    Ok((file, kind))
}

#[cfg(not(unix))]
fn open(path: &Path, _follow: bool) -> Result<(File, Kind), ReadError> {
    let file = File::open(path).map_err(|e| ReadError::Io(e.to_string()))?;
    let meta = file.metadata().map_err(|e| ReadError::Io(e.to_string()))?;
    if meta.is_dir() {
        return Err(ReadError::NotAFile("a folder"));
    }
    Ok((file, Kind::Regular(meta.len())))
}

/// A character a printed line must not carry as it is: a control character
/// (a newline, a terminal escape) or a mark that reverses text on screen.
pub fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether a text says nothing a reader could see: only blanks, control
/// characters and the invisible marks (zero-width spaces and joiners, the
/// byte-order mark, a soft hyphen, text-direction marks). A reason or a
/// file name made of them is as empty as `""`.
pub fn says_nothing(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_whitespace()
            || hidden(c)
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}' | '\u{180e}')
    })
}

/// A string from a file as printed: control characters (a newline, a
/// terminal escape) and the marks that reverse text on screen are written as
/// escapes, so that a name cannot forge a line of a report or drive the
/// terminal. Anything else is printed as it is.
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    fn temp(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("handshake-input-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_regular_file_is_read_up_to_the_bound_and_refused_past_it() {
        let dir = temp("regular");
        let f = dir.join("a.toml");
        std::fs::write(&f, "name = \"x\"\n").unwrap();
        assert_eq!(read_text(&f, 11).as_deref(), Ok("name = \"x\"\n"));
        assert_eq!(read_text(&f, 10), Err(ReadError::TooBig { bytes: Some(11), max: 10 }));
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert_eq!(read_text(&f, 10), Err(ReadError::NotUtf8 { line: 1 }));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn devices_folders_and_sockets_are_refused_without_reading() {
        let zero = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(zero, ReadError::NotAFile(w) if w.contains("character device")), "{zero}");
        let dir = temp("kinds");
        assert_eq!(read_text(&dir, 10), Err(ReadError::NotAFile("a folder")));
        let sock = dir.join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert_eq!(read_text(&sock, 10), Err(ReadError::NotAFile("a socket")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_pipe_is_read_until_the_bound_and_one_nobody_writes_to_does_not_hang() {
        let dir = temp("fifo");
        let fifo = dir.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path this test made its own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_text(&fifo, 10), Err(ReadError::EmptyPipe), "no writer: refused at once");
        // Among a folder's files, a pipe is not read at all (a writer that
        // keeps it open would otherwise hold the folder's reading).
        assert_eq!(read_regular(&fifo, 10), Err(ReadError::NotAFile("a pipe")));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (fifo, stop) = (fifo.clone(), stop.clone());
            std::thread::spawn(move || {
                use std::io::Write;
                // Each open waits for a reader, then writes without end until
                // that reader goes (a reader that found no writer yet goes at once).
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
                    while w.write_all(&[b'#'; 4096]).is_ok() {}
                }
            })
        };
        let got = (0..2000)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                read_text(&fifo, 100_000)
            })
            .find(|r| *r != Err(ReadError::EmptyPipe))
            .expect("the writer opened the pipe");
        assert_eq!(got, Err(ReadError::TooBig { bytes: None, max: 100_000 }), "an endless pipe stops at the bound");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // A reader, come and gone, lets a writer waiting in open go on and see the stop.
        while !writer.is_finished() {
            drop(std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap());
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        writer.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_naming_the_line() {
        let path = std::env::temp_dir().join(format!("handshake-not-utf8-{}.jsonl", std::process::id()));
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":2}\n\xff\n").unwrap();
        let e = read_text(&path, 1 << 20).unwrap_err();
        assert_eq!(e, ReadError::NotUtf8 { line: 3 });
        assert_eq!(e.to_string(), "line 3 is not UTF-8 text (the whole file must be)");
        let _ = std::fs::remove_file(&path);
    }
}
