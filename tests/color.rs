//! Issue 24, point 2: colour on a terminal only, `--color`, `NO_COLOR` and
//! `CLICOLOR_FORCE`; the progress bar on a terminal only. A terminal is a
//! pseudo-terminal made by `script` (util-linux); where it is missing the
//! terminal half is skipped, and says so.

mod common;

use common::binary::{bin, handshake, invoke, root};

const GREEN_PASS: &str = "\x1b[1m\x1b[32mPASS\x1b[0m";
const FILE: &str = "scenarios/01-happy-shutdown.toml";

#[test]
fn a_pipe_gets_no_colour_unless_asked() {
    let plain = handshake(&["run", FILE]);
    assert!(plain.stdout.starts_with("PASS  happy-shutdown"), "{:?}", plain.stdout);
    let always = handshake(&["run", FILE, "--color", "always"]);
    assert!(always.stdout.starts_with(GREEN_PASS), "{:?}", always.stdout);
    let forced = invoke(bin(), &["run", FILE], root(), &[("CLICOLOR_FORCE", "1")]);
    assert!(forced.stdout.starts_with(GREEN_PASS), "{:?}", forced.stdout);
    let never = invoke(bin(), &["run", FILE, "--color", "never"], root(), &[("CLICOLOR_FORCE", "1")]);
    assert!(never.stdout.starts_with("PASS  "), "--color never wins: {:?}", never.stdout);
    let bad = handshake(&["run", FILE, "--color", "sometimes"]);
    assert_eq!(bad.code, 2, "an unknown choice is bad input: {}", bad.stderr);
}

fn on_a_terminal(command: &str, env: &[(&str, &str)]) -> Option<String> {
    common::terminal::on_a_terminal(command, env).map(|(shown, _)| shown)
}

#[test]
fn a_terminal_gets_colour_and_a_progress_bar_unless_no_color() {
    let bin = bin().display().to_string();
    let Some(tty) = on_a_terminal(&format!("{bin} run {FILE}"), &[]) else { return };
    assert!(tty.contains(GREEN_PASS), "{tty:?}");
    let Some(quiet) = on_a_terminal(&format!("{bin} run {FILE}"), &[("NO_COLOR", "1")]) else { return };
    assert!(quiet.contains("PASS  happy-shutdown") && !quiet.contains('\x1b'), "{quiet:?}");
    let Some(sweep) = on_a_terminal(&format!("{bin} run {FILE} --seeds 1..301"), &[]) else { return };
    // The line is taken off the terminal at the end (tests/progress.rs): what
    // stays is that it was drawn, with the count and the rate.
    assert!(sweep.contains("/300 runs") && sweep.contains(" runs/s  "), "{sweep:?}");
    // Never on a pipe: the same sweep's stderr holds no bar.
    let piped = handshake(&["run", FILE, "--seeds", "1..301"]);
    assert!(!piped.stderr.contains("300/300"), "{:?}", piped.stderr);
}
