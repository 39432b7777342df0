//! A pseudo-terminal for the tests of what only a terminal gets (colour, the
//! progress line), made by `script` (util-linux). Where `script` is missing
//! the helpers say so and return `None`: the caller skips its terminal half.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What a terminal showed while `command` (a shell line) ran on it, and the
/// command's exit status; `None` when `script` is missing.
pub fn on_a_terminal(command: &str, env: &[(&str, &str)]) -> Option<(String, i32)> {
    typed_on_a_terminal(command, env, None)
}

/// As [`on_a_terminal`], Ctrl-C typed on the terminal once `wait` has passed:
/// the terminal turns it into SIGINT for the command, as it does for a person.
pub fn interrupted_on_a_terminal(command: &str, wait: Duration) -> Option<(String, i32)> {
    typed_on_a_terminal(command, &[], Some(wait))
}

fn typed_on_a_terminal(command: &str, env: &[(&str, &str)], ctrl_c_after: Option<Duration>) -> Option<(String, i32)> {
    let mut c = Command::new("script");
    c.args(["-qec", command, "/dev/null"]).current_dir(super::binary::root());
    // indicatif draws no progress line where TERM is unset or `dumb`, as it
    // may be where the tests run; a colour forced or refused in the caller's
    // shell must not reach the tests either (they set these where they mean to).
    c.env("TERM", "xterm").env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE").env_remove("RUST_LOG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match c.spawn() {
        Ok(child) => child,
        // The tests that come here are ignored where `script` was not found
        // when they were built (build.rs): here it must start.
        Err(e) => panic!("`script` was found when the tests were built, and must start now: {e}"),
    };
    let mut keys = child.stdin.take().expect("stdin was piped");
    if let Some(wait) = ctrl_c_after {
        std::thread::sleep(wait);
        keys.write_all(b"\x03").expect("script reads what is typed");
        keys.flush().expect("script reads what is typed");
    }
    // Kept open until the command ends: `script` ends the session at the end of its input.
    let out = child.wait_with_output().expect("script ends");
    drop(keys);
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code().unwrap_or(-1)))
}
