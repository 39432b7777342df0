//! Issue 24, point 2: colour on a terminal only (PASS, FAIL, violations,
//! deadlocks, warnings, `check`'s ok and bad), `--color`, `NO_COLOR` and
//! `CLICOLOR_FORCE`; the progress bar on a terminal only. A terminal is a
//! pseudo-terminal made by `script` (util-linux); where it is missing the
//! terminal half is skipped, and says so.

mod common;

use common::binary::{bin, handshake, invoke, root, Ran, TempDir};

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

/// `text` as `color::paint` colours it: bold, then red (31), green (32) or yellow (33).
fn painted(text: &str, colour: u8) -> String {
    format!("\x1b[1m\x1b[{colour}m{text}\x1b[0m")
}

/// The violations, deadlocks, warnings and `check`'s words are coloured as
/// PASS is: with `--color always` or `CLICOLOR_FORCE`, never in a pipe or
/// under `--color never`.
#[test]
fn violations_warnings_and_checked_files_are_coloured_as_pass_is() {
    let dir = TempDir::new("color");
    let off = dir.write(
        "pending-off.toml",
        "name = \"p\"\nabout = \"a\"\n[policy.defences]\npending_check = false\n[[teammate]]\nname = \"alice\"\n\
         [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\n",
    );
    let bad = dir.write("bad.toml", "name = \"x\"\nabout = 3\n");
    let stdout = |r: &Ran| r.stdout.clone();
    let stderr = |r: &Ran| r.stderr.clone();
    type Stream = fn(&Ran) -> String;
    // A command, its exit status, the stream it prints on, and the start of
    // each line to look for, plain and coloured.
    type Case<'a> = (&'a [&'a str], i32, Stream, &'a [(&'a str, String)]);
    let bench: &[&str] = &["bench", "--handshakes", "200", "--latency-sample", "20", "--repeat", "1"];
    let cases: [Case; 4] = [
        (&["explore", &off, "--duplicate", "1"], 1, stdout, &[("✗ invariant", painted("✗", 31) + " invariant")]),
        (
            &["explore", "scenarios/22-peer-deadlock.toml"],
            0,
            stdout,
            &[("a deadlock can form (", painted("a deadlock can form", 33) + " (")],
        ),
        (
            &["check", &bad, FILE],
            2,
            stdout,
            &[
                ("ok    scenarios/01", painted("ok", 32) + "    scenarios/01"),
                ("2 files: 1 ok, 1 bad", format!("2 files: 1 ok, 1 {}", painted("bad", 31))),
            ],
        ),
        (bench, 0, stderr, &[("warning: ", painted("warning", 33) + ": ")]),
    ];
    for (args, code, stream, lines) in cases {
        let run = |extra: &[&str], env: &[(&str, &str)]| {
            let r = invoke(bin(), &[args, extra].concat(), root(), env);
            r.expect_code(code);
            (stream(&r), format!("{env:?} handshake {}", r.args))
        };
        let piped = run(&[], &[]);
        // A build with the perf profile has nothing to warn of.
        if args == bench && !piped.0.contains("warning: ") {
            eprintln!("skipped: this build's bench prints no warning\n{}", piped.0);
            continue;
        }
        for (text, how) in [piped, run(&["--color", "never"], &[("CLICOLOR_FORCE", "1")])] {
            assert!(!text.contains('\x1b'), "{how}: no colour\n{text}");
            for (plain, _) in lines {
                assert!(text.lines().any(|l| l.starts_with(plain)), "{how}: a line {plain:?}\n{text}");
            }
        }
        for (text, how) in [run(&["--color", "always"], &[]), run(&[], &[("CLICOLOR_FORCE", "1")])] {
            for (_, coloured) in lines {
                assert!(text.lines().any(|l| l.starts_with(coloured.as_str())), "{how}: {coloured:?}\n{text:?}");
            }
        }
    }
}

fn on_a_terminal(command: &str, env: &[(&str, &str)]) -> Option<String> {
    common::terminal::on_a_terminal(command, env).map(|(shown, _)| shown)
}

#[test]
#[cfg_attr(
    not(has_script),
    ignore = "needs `script` (util-linux), not found when the tests were built, for a pseudo-terminal"
)]
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
