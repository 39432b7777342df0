//! Running the real `handshake` binary, as a user would, and judging what it
//! did: its exit status, stdout and stderr.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one invocation of the binary did.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub args: String,
}

impl Ran {
    pub fn explain(&self) -> String {
        format!(
            "handshake {}\n  exit status {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args, self.code, self.stdout, self.stderr
        )
    }

    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "wrong exit status\n{}", self.explain());
        self
    }

    pub fn stdout_has(&self, needle: &str) -> &Self {
        assert!(self.stdout.contains(needle), "stdout lacks {needle:?}\n{}", self.explain());
        self
    }

    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(self.stderr.contains(needle), "stderr lacks {needle:?}\n{}", self.explain());
        self
    }

    /// No scenario was played: no report line of any kind on stdout.
    pub fn ran_nothing(&self) -> &Self {
        let played: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL") || l.contains("passed"))
            .collect();
        assert!(played.is_empty(), "something was run: {played:?}\n{}", self.explain());
        self
    }

    pub fn lines_starting(&self, prefix: &str) -> Vec<&str> {
        self.stdout.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    /// The command after `reproduce: ` on the first line that has one.
    pub fn reproduce_line(&self) -> &str {
        let line = self.stdout.lines().find(|l| l.contains("reproduce: ")).expect("a reproduce line");
        line.split_once("reproduce: ").map(|(_, cmd)| cmd).unwrap_or_default()
    }
}

/// The crate's root, where the bundled scenarios are.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary cargo built for these tests.
pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_handshake"))
}

/// Runs `program args` in `dir` with extra environment, RUST_LOG unset unless given.
pub fn invoke(program: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Ran {
    let mut c = Command::new(program);
    // The tests read plain text: a colour forced in the caller's shell must
    // not reach them (tests/color.rs sets these where it means to).
    c.args(args).current_dir(dir).env_remove("RUST_LOG").env_remove("CLICOLOR_FORCE").env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    from_output(c.output().expect("the program starts"), args.join(" "))
}

pub fn from_output(out: std::process::Output, args: String) -> Ran {
    Ran {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        args,
    }
}

/// `handshake args`, run from the crate's root.
pub fn handshake(args: &[&str]) -> Ran {
    invoke(bin(), args, root(), &[])
}

/// `handshake args`, run from the crate's root, with `input` on its stdin (a pipe).
pub fn handshake_fed(args: &[&str], input: &str) -> Ran {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(root())
        .env_remove("RUST_LOG")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the program starts");
    // Written from a thread: a program that answers before it has read all
    // of its input must not leave both sides waiting on full pipes.
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("it ends");
    let _ = writer.join();
    from_output(out, args.join(" "))
}

/// `handshake args`, run from `dir`.
pub fn handshake_in(dir: &Path, args: &[&str]) -> Ran {
    invoke(bin(), args, dir, &[])
}

/// A fresh folder under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "handshake-test-{tag}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// Writes a file (creating its folders) and returns its path as the
    /// command line will show it.
    pub fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("folders");
        std::fs::write(&p, text).expect("write temp file");
        self.path(name)
    }

    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().expect("a UTF-8 temp path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
