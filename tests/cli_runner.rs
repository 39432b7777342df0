//! The runner's manners as a user meets them (issue 9, points 12, 13, 14, 16,
//! 19 and 21): output paths checked before anything runs, real logs behind
//! `RUST_LOG`, a reproduce line that reproduces, per-case peak memory in the
//! bench suite, helpful paths, and output that reads well.

mod common;

use common::WRONG_EXPECTATION;

use clap::Parser;
use common::binary::{bin, from_output, handshake, handshake_in, invoke, root, Ran, TempDir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HAPPY: &str = "scenarios/01-happy-shutdown.toml";
const STALLED: &str = "scenarios/03-stalled-teammate-killed.toml";

// ---------------------------------------------------------------- helpers

fn scenario(name: &str) -> String {
    format!(
        "name = \"{name}\"\nabout = \"A tiny scenario.\"\n\n[[teammate]]\nname = \"alice\"\n\n\
         [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\n\n\
         [[expect]]\nrequest = \"stop-alice\"\nstatus = \"approved\"\n"
    )
}

/// Alice never answers; the request expires after 60 s. Under a 10 s cap it
/// is still pending when the run stops, so the expectation fails: a failure
/// that only the cap causes.
const NEEDS_THE_FULL_TIMEOUT: &str = r#"name = "needs-the-full-timeout"
about = "Alice ignores the shutdown; the request expires after 60 s."

[[teammate]]
name = "alice"
on_shutdown = "ignore"

[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop-alice"

[[expect]]
request = "stop-alice"
status = "expired"
"#;

// ---------------------------------------------------------------- 12: output paths first

#[test]
fn a_trace_path_that_cannot_be_written_is_refused_before_anything_runs() {
    let dir = TempDir::new("trace-unwritable");
    let in_missing_folder = dir.path("no-such-folder/trace.jsonl");
    let a_folder = dir.path("");
    for out in [in_missing_folder.as_str(), a_folder.as_str()] {
        let r = handshake(&["run", HAPPY, "--trace", out]);
        r.expect_code(2).ran_nothing().stderr_has("--trace").stderr_has(out).stderr_has("nothing was run");
        assert!(!r.stdout.contains("PASS"), "{}", r.explain());
    }
    // The check must not leave a file behind when something else refuses the run.
    let out = dir.path("trace.jsonl");
    handshake(&["run", HAPPY, "--seeds", "1..3", "--trace", &out]).expect_code(2).ran_nothing();
    assert!(!Path::new(&out).exists(), "a refused run wrote {out}");
}

// ---------------------------------------------------------------- 13: RUST_LOG

#[test]
fn rust_log_shows_the_runtime_on_stderr_and_nothing_without_it() {
    let logged = invoke(bin(), &["run", STALLED], root(), &[("RUST_LOG", "handshake=debug")]);
    logged
        .expect_code(0)
        .stderr_has("run starts")
        .stderr_has("run ends")
        .stderr_has("stop=Settled")
        .stderr_has("driver wakes")
        .stderr_has("fault fires")
        .stderr_has("Stall")
        .stderr_has("actors started")
        .stderr_has("killed");
    // Logs go to stderr only: the report is the same either way.
    let quiet = handshake(&["run", STALLED]);
    quiet.expect_code(0);
    assert!(quiet.stderr.is_empty(), "stderr must be clean without RUST_LOG\n{}", quiet.explain());
    let strip = |s: &str| s.lines().map(|l| l.split("virtual").next().unwrap_or("").to_string()).collect::<Vec<_>>();
    assert_eq!(strip(&logged.stdout), strip(&quiet.stdout), "RUST_LOG changed the report");

    // A sweep reports its progress at info.
    let sweep = invoke(bin(), &["run", HAPPY, "--seeds", "1..21"], root(), &[("RUST_LOG", "handshake=info")]);
    sweep.expect_code(0).stderr_has("sweep progress").stderr_has("done=20");
    assert!(!sweep.stderr.contains("run starts"), "debug lines at info level\n{}", sweep.explain());
}

// ---------------------------------------------------------------- 14: reproduce

#[test]
fn the_reproduce_line_carries_the_cap_and_reproduces_the_failure() {
    let dir = TempDir::new("repro-cap");
    let file = dir.write("needs-timeout.toml", NEEDS_THE_FULL_TIMEOUT);
    handshake(&["run", &file]).expect_code(0);

    let r = handshake(&["run", &file, "--cap", "10s", "--max-real", "30s"]);
    r.expect_code(1);
    let cmd = r.reproduce_line();
    assert!(cmd.contains("--cap 10s") && cmd.contains("--max-real 30s"), "{}", r.explain());
    let (_, args) = cmd.split_once(" -- ").expect("cargo run --release -- ARGS");
    let args: Vec<&str> = args.split_whitespace().collect();
    let again = handshake(&args);
    again.expect_code(1);
    assert_eq!(first_failure(&again), first_failure(&r), "{}", again.explain());

    // A sweep's failing seeds carry it too.
    let sweep = handshake(&["run", &file, "--seeds", "3..5", "--cap", "10s"]);
    sweep.expect_code(1);
    for seed in [3, 4] {
        sweep.stdout_has(&format!("run {file} --seed {seed} --cap 10s"));
    }
}

fn first_failure(r: &Ran) -> String {
    r.stdout.lines().find(|l| l.trim_start().starts_with('✗')).unwrap_or_default().to_string()
}

#[test]
#[cfg(unix)]
fn an_installed_binary_names_itself_and_its_reproduce_line_runs_as_printed() {
    // Runs the copy, retrying while the kernel says "text file busy": another
    // test thread that forks while the copy is still open for writing holds
    // it open until that child execs (milliseconds). Seen 3 times in 15 runs.
    fn start_fresh_copy(c: &mut Command) -> std::process::Output {
        for _ in 0..100 {
            match c.output() {
                Err(e) if e.raw_os_error() == Some(26) => std::thread::sleep(std::time::Duration::from_millis(20)),
                other => return other.expect("the copy starts"),
            }
        }
        panic!("the copied binary stayed busy for 2 s")
    }

    // Outside any cargo target dir, in a folder whose name needs quoting, and
    // without the variables `cargo run` sets: as an installed binary runs.
    let dir = TempDir::new("installed");
    let program = PathBuf::from(dir.path("my bin/handshake"));
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    std::fs::copy(bin(), &program).expect("copy the binary");
    let file = dir.write("my scenarios/wrong.toml", WRONG_EXPECTATION);

    let mut c = Command::new(&program);
    c.args(["run", &file, "--seed", "4"]).current_dir(root()).env_remove("RUST_LOG");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("CARGO")) {
        c.env_remove(k);
    }
    let r = from_output(start_fresh_copy(&mut c), format!("run {file} --seed 4"));
    r.expect_code(1);
    let cmd = r.reproduce_line().to_string();
    assert!(!cmd.contains("cargo run"), "an installed binary is not `cargo run`\n{}", r.explain());
    assert!(cmd.starts_with(&format!("'{}' run '{file}' --seed 4", program.display())), "{}", r.explain());

    // The printed line is a shell command: run it as printed.
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(&cmd).current_dir(root()).env_remove("RUST_LOG");
    let again = from_output(sh.output().expect("sh starts"), cmd.clone());
    again.expect_code(1).stdout_has("seed 4");
    assert_eq!(first_failure(&again), first_failure(&r), "{}", again.explain());
}

// ---------------------------------------------------------------- 16: bench peaks

#[test]
#[cfg(target_os = "linux")]
fn each_bench_suite_case_reports_its_own_peak_memory() {
    // A large case first, then a small one: the small one's peak must be its
    // own, as when it runs alone, not what the large one left behind.
    let common = ["--repeat", "1", "--latency-sample", "100", "--format", "json"];
    let mut suite = vec!["bench", "--suite", "--cases", "20000x1x20000,1x1x2000"];
    suite.extend(common);
    let r = handshake(&suite);
    r.expect_code(0);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
    let cases = &doc["cases"];
    assert_eq!(doc["anchors"], Value::Null, "a suite of other cases has no anchors: {}", r.explain());
    let peak = |c: &Value| c["peak_memory_bytes"].as_f64().unwrap_or_else(|| panic!("no peak: {c}"));
    let (big, small) = (peak(&cases[0]), peak(&cases[1]));
    assert_eq!(cases[1]["teammates"], 1, "{}", r.explain());

    let mut alone = vec!["bench", "--teammates", "1", "--handshakes", "2000"];
    alone.extend(common);
    let a = handshake(&alone);
    a.expect_code(0);
    let alone: Value = serde_json::from_str(&a.stdout).expect("JSON");
    let alone = peak(&alone);

    assert!(big > 2.0 * alone, "the large case should need more memory: {big} vs {alone}");
    assert!(
        small <= alone * 1.25 + 1e6,
        "the small case reports {small} bytes in the suite but {alone} alone: inflated by the case before it"
    );
}

// ---------------------------------------------------------------- 19: paths

/// Outside the project (an installed binary) there is no scenarios/
/// folder: run and check read the bundled scenarios, and say so and how to
/// read one's own (issue 44, point 2; this was a refusal before).
#[test]
fn without_a_scenarios_folder_here_the_bundled_ones_are_read_and_it_says_so() {
    let dir = TempDir::new("elsewhere");
    let bundled = common::bundled_files().len();
    for cmd in ["run", "check"] {
        let r = handshake_in(&dir.0, &[cmd]);
        r.expect_code(0)
            .stderr_has("no scenarios/ folder here")
            .stderr_has(&format!("the {bundled} bundled scenarios"))
            .stderr_has("name files or folders to read yours");
    }
}

#[test]
fn a_folder_without_scenarios_is_named_and_refused() {
    let dir = TempDir::new("empty");
    std::fs::create_dir_all(dir.0.join("scenarios")).unwrap();
    std::fs::create_dir_all(dir.0.join("empty/sub")).unwrap();
    dir.write("empty/notes.txt", "not a scenario");
    let empty = dir.path("empty");
    for cmd in ["run", "check"] {
        let r = handshake_in(&dir.0, &[cmd, &empty]);
        r.expect_code(2).ran_nothing().stderr_has(&format!("{empty}: no scenario files (.toml)"));
        // The default folder, when it is there but empty, is named as well.
        let r = handshake_in(&dir.0, &[cmd]);
        r.expect_code(2).ran_nothing().stderr_has("scenarios: no scenario files (.toml)");
    }
    // One empty folder among good files still refuses the lot: nothing runs.
    let r = handshake(&["run", HAPPY, &empty]);
    r.expect_code(2).ran_nothing().stderr_has(&empty);
}

#[test]
fn subfolders_are_walked_in_a_stable_order() {
    let dir = TempDir::new("walk");
    dir.write("top.toml", &scenario("top"));
    dir.write("b/second.toml", &scenario("in-b"));
    dir.write("a/deeper/third.toml", &scenario("in-a-deeper"));
    dir.write("a/first.toml", &scenario("in-a"));
    dir.write("a/readme.md", "not a scenario");
    let r = handshake(&["check", &dir.path("")]);
    r.expect_code(0).stdout_has("4 files: 4 ok, 0 bad");
    let names: Vec<&str> = r.lines_starting("ok").iter().map(|l| l.rsplit('(').next().unwrap()).collect();
    // A folder's own files first, then its subfolders', each sorted by name.
    assert_eq!(names, ["top)", "in-a)", "in-a-deeper)", "in-b)"], "{}", r.explain());
    let ran = handshake(&["run", &dir.path("")]);
    ran.expect_code(0).stdout_has("4 scenarios: 4 passed");
    let order: Vec<&str> =
        ran.lines_starting("PASS").iter().map(|l| l.split_whitespace().nth(1).unwrap_or("")).collect();
    assert_eq!(order, ["top", "in-a", "in-a-deeper", "in-b"], "{}", ran.explain());
}

// ---------------------------------------------------------------- 21: output manners

#[test]
fn counts_of_one_are_singular() {
    let r = handshake(&["run", HAPPY]);
    r.expect_code(0).stdout_has(" 1 handshake ").stdout_has("1 scenario: 1 passed");
    assert!(!r.stdout.contains("1 handshakes"), "{}", r.explain());
    let s = handshake(&["run", HAPPY, "--seeds", "1..2"]);
    s.expect_code(0).stdout_has("1 run (1 scenario × 1 seed): 1 passed, 0 failed").stdout_has("1/1 seed passed");
    assert!(!s.stdout.contains("1 runs") && !s.stdout.contains("1 seeds"), "{}", s.explain());
}

#[test]
fn verbose_with_seeds_is_refused_with_a_reason() {
    let r = handshake(&["run", HAPPY, "--seeds", "1..3", "-v"]);
    r.expect_code(2).ran_nothing().stderr_has("-v").stderr_has("--seed");
}

#[test]
fn a_sweep_shows_failures_as_they_happen_and_no_bar_off_a_terminal() {
    let dir = TempDir::new("sweep-live");
    let file = dir.write("wrong.toml", WRONG_EXPECTATION);
    let r = handshake(&["run", &file, "--seeds", "1..4"]);
    r.expect_code(1);
    for seed in 1..4 {
        r.stderr_has(&format!("FAIL  wrong-expectation seed {seed}:"));
    }
    assert!(!r.stderr.contains('[') && !r.stderr.contains("left"), "a progress bar off a terminal\n{}", r.explain());
}

#[test]
#[cfg_attr(
    not(has_script),
    ignore = "needs `script` (util-linux), not found when the tests were built, for a pseudo-terminal"
)]
#[cfg(unix)]
fn the_progress_bar_draws_on_a_terminal_with_an_estimate_but_never_with_json() {
    // Long enough for the redrawing thread to draw in a release build (40
    // seeds took a few milliseconds there, and the line was now and then
    // never drawn before the sweep ended: this failed about one run in six).
    let text = on_a_terminal(&["run", HAPPY, "--seeds", "1..10001"]);
    // The line is drawn as it starts and taken off at the end, its last
    // count not always drawn in between.
    assert!(text.contains("/10000 runs") && text.contains(" runs/s"), "no progress bar on a terminal:\n{text}");
    assert!(text.contains("left"), "no estimate of the time left:\n{text}");
    let json = on_a_terminal(&["run", HAPPY, "--seeds", "1..10001", "--format", "json"]);
    assert!(!json.contains("/10000 runs"), "a progress bar with --format json:\n{json}");
}

/// Runs the binary with stderr on a fresh pseudo-terminal (stdout piped) and
/// returns what it drew there.
#[cfg(unix)]
fn on_a_terminal(args: &[&str]) -> String {
    use std::os::fd::FromRawFd;
    // SAFETY: plain libc calls on descriptors this function owns; each one is
    // checked before use and handed to a `File` that closes it.
    let (master, slave) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "no pseudo-terminal");
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let name = libc::ptsname(m);
        assert!(!name.is_null());
        let s = libc::open(name, libc::O_RDWR | libc::O_NOCTTY);
        assert!(s >= 0, "cannot open the terminal's other end");
        (std::fs::File::from_raw_fd(m), std::fs::File::from_raw_fd(s))
    };
    let child = Command::new(bin())
        .args(args)
        .current_dir(root())
        .env_remove("RUST_LOG")
        // indicatif draws no progress line where TERM is unset or `dumb`.
        .env("TERM", "xterm")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .expect("the binary starts");
    let reader = std::thread::spawn(move || {
        let mut master = master;
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Reads until the last writer is gone (EIO on Linux).
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let out = child.wait_with_output().expect("the binary ends");
    assert!(out.status.code().is_some(), "killed by a signal");
    reader.join().expect("the reader ends")
}

#[test]
fn help_examples_keep_their_descriptions_in_one_column() {
    for cmd in [vec!["--help"], vec!["run", "--help"], vec!["check", "--help"], vec!["bench", "--help"]] {
        let r = handshake(&cmd);
        r.expect_code(0);
        let examples: Vec<&str> = r
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("Example"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(!examples.is_empty(), "{}", r.explain());
        let mut columns = BTreeMap::new();
        for line in &examples {
            let Some(rest) = line.strip_prefix("  handshake ") else {
                // A description on a line of its own, under the column.
                let col = line.len() - line.trim_start().len();
                columns.entry(col).or_insert_with(Vec::new).push(*line);
                continue;
            };
            // The command part must be a command: a description that runs
            // into it would make it one clap refuses.
            let command = rest.split("  ").next().unwrap_or_default();
            let words = std::iter::once("handshake").chain(command.split_whitespace());
            if let Err(e) = handshake::cli::Cli::try_parse_from(words) {
                panic!("example {line:?} is not a valid command: {e}\n{}", r.explain());
            }
            if let Some(gap) = rest.find("  ") {
                let after = &rest[gap..];
                let col = "  handshake ".len() + gap + (after.len() - after.trim_start().len());
                columns.entry(col).or_insert_with(Vec::new).push(*line);
            }
        }
        assert!(columns.len() <= 1, "descriptions start in more than one column: {columns:#?}\n{}", r.explain());
    }
}

// ---------------------------------------------------------------- 15: zero where zero means nothing

#[test]
fn a_zero_real_time_budget_or_cap_is_refused_with_the_reason() {
    for option in ["--max-real", "--cap"] {
        let r = handshake(&["run", HAPPY, option, "0s"]);
        r.expect_code(2).ran_nothing().stderr_has(option).stderr_has("before it starts");
    }
    handshake(&["run", HAPPY, "--max-real", "1ms", "--cap", "1ms"]).expect_code(1);
}

// ---------------------------------------------------------------- -v shows the protocol alone

#[test]
fn verbose_can_show_the_protocol_without_every_step_of_work() {
    let all = handshake(&["run", HAPPY, "-v"]);
    let protocol = handshake(&["run", HAPPY, "-v", "--events", "protocol"]);
    all.expect_code(0);
    protocol.expect_code(0);
    assert!(all.stdout.contains("4/4 written"), "{}", all.explain());
    assert!(!protocol.stdout.contains("/4 written"), "{}", protocol.explain());
    for needed in ["shutdown_request", "pending → approved", "status: shutdown"] {
        assert!(protocol.stdout.contains(needed), "{needed}: {}", protocol.explain());
    }
    handshake(&["run", HAPPY, "--events", "protocol"]).expect_code(2).ran_nothing().stderr_has("-v");
}

// ---------------------------------------------------------------- pictures of a run (issue 10)

#[test]
fn a_run_writes_its_svg_mermaid_and_html_report_and_checks_the_paths_first() {
    let dir = TempDir::new("views");
    let (svg, mmd, html) = (dir.path("run.svg"), dir.path("run.mmd"), dir.path("run.html"));
    let deadlock = "scenarios/27-three-way-deadlock.toml";
    handshake(&["run", deadlock, "--svg", &svg, "--mermaid", &mmd, "--html", &html]).expect_code(0);
    let svg_text = std::fs::read_to_string(&svg).expect("the svg was written");
    assert!(svg_text.starts_with("<svg") && svg_text.contains("DEADLOCK"), "{}", &svg_text[..200]);
    let mmd_text = std::fs::read_to_string(&mmd).expect("the mermaid was written");
    assert!(mmd_text.starts_with("sequenceDiagram"), "{mmd_text}");
    let page = std::fs::read_to_string(&html).expect("the report was written");
    for part in [
        "<!DOCTYPE html>",
        "A deadlock needs no pair",            // the about
        "PASS",                                // the verdict
        "<svg",                                // the picture, inline
        "carol-asks-alice",                    // the requests table
        "deadline passed: default reject",     // why each ended
        "protocol only",                       // the event filter
        "27-three-way-deadlock.toml --seed 1", // the reproduce command
    ] {
        assert!(page.contains(part), "the report lacks {part:?}");
    }
    // Nothing fetched from a network: no external script, style or image
    // (the SVG namespace is a name, not a fetch).
    for remote in ["src=\"http", "href=\"http", "url(http", "@import", "src=\"//"] {
        assert!(!page.contains(remote), "the report reaches out: {remote}");
    }
    // An output that cannot be written refuses the run before it starts.
    let nowhere = dir.path("no-such-folder/run.html");
    handshake(&["run", deadlock, "--html", &nowhere]).expect_code(2).ran_nothing().stderr_has("--html");
    // One run only.
    handshake(&["run", "--svg", &svg]).expect_code(2).ran_nothing().stderr_has("one scenario");
}

/// Issue 22, point 3: `--compare` plays the file again with one [policy]
/// setting changed and writes both runs on one page; the exit code is the
/// file's own run's (the other is a lesson, not a check).
#[test]
fn compare_plays_the_file_again_with_one_setting_changed_and_pages_both() {
    let dir = TempDir::new("compare");
    let page = dir.path("what-if.html");
    let forged = "scenarios/13-forged-lead-approval-ignored.toml";
    handshake(&["run", forged, "--html", &page, "--compare", "sender_auth=false"])
        .expect_code(0)
        .stdout_has("PASS  forged-lead-approval-ignored")
        .stdout_has("with defences.sender_auth=false: FAIL: invariant matching-response")
        .stdout_has("the two runs part at event 11 (1.001s)");
    let html = std::fs::read_to_string(&page).expect("the page is written");
    for part in [
        "what if <code>defences.sender_auth=false</code>?",
        "The two runs agree on 10 events and part at event 11.",
        "id=\"a-steps\"",
        "id=\"b-steps\"",
        "id=\"a-picture\"",
        "id=\"b-picture\"",
        "const PANES=[\"a-\",\"b-\"],PARTED=10;",
        "--compare defences.sender_auth=false",
    ] {
        assert!(html.contains(part), "the page lacks {part:?}");
    }
    // A setting that changes nothing says so.
    handshake(&["run", "scenarios/10-wrong-sender-ignored.toml", "--html", &page, "--compare", "sender_auth=false"])
        .expect_code(0)
        .stdout_has("the two runs are the same, event for event");
    // Written the long way, the same setting.
    handshake(&["run", forged, "--html", &page, "--compare", "policy.defences.sender_auth=false"])
        .expect_code(0)
        .stdout_has("part at event 11");
    // Bad input changes nothing and names the reason.
    let _ = std::fs::remove_file(&page);
    handshake(&["run", forged, "--html", &page, "--compare", "sender_ath=false"])
        .expect_code(2)
        .ran_nothing()
        .stderr_has("unknown field `sender_ath`");
    handshake(&["run", forged, "--html", &page, "--compare", "sender_auth"]).expect_code(2).stderr_has("KEY=VALUE");
    // The value is what is wrong, said by the table that has the key (it
    // was blamed on [policy]: "unknown field `sender_auth`").
    let r = handshake(&["run", forged, "--html", &page, "--compare", "sender_auth=maybe"]);
    r.expect_code(2).stderr_has("`sender_auth` must be true or false, not \"maybe\"");
    assert!(!r.stderr.contains("unknown field"), "{}", r.explain());
    assert!(!std::path::Path::new(&page).exists(), "a refused --compare writes no page");
    handshake(&["run", forged, "--compare", "sender_auth=false"]).expect_code(2).stderr_has("--html");
    handshake(&["run", forged, "--html", &page, "--compare", "sender_auth=false", "--seeds", "1..3"]).expect_code(2);
}

/// Issue 23, point 2 (its first part): `audit` judges a run's history from
/// the file alone: the same violations as the run, with the line that shows
/// each; exit 0 / 1 / 2.
#[test]
fn audit_judges_a_history_from_its_file_alone() {
    let dir = TempDir::new("audit");
    let (clean, forged) = (dir.path("01.jsonl"), dir.path("14.jsonl"));
    handshake(&["run", "scenarios/01-happy-shutdown.toml", "--trace", &clean]).expect_code(0);
    handshake(&["audit", &clean]).expect_code(0).stdout_has("PASS").stdout_has("every invariant held");
    // 14 passes under run (it expects its violations); audit judges invariants only.
    handshake(&["run", "scenarios/14-sender-auth-off.toml", "--trace", &forged]).expect_code(0);
    handshake(&["audit", &forged])
        .expect_code(1)
        .stdout_has("FAIL")
        .stdout_has("✗ invariant matching-response — [alice/plan/1] moved to approved")
        .stdout_has("line 12:")
        .stdout_has("✗ invariant gated-action");
    let json = handshake(&["audit", &forged, "--format", "json"]);
    json.expect_code(1);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(doc["passed"], false);
    assert_eq!(doc["violations"][0]["invariant"], "matching-response");
    assert_eq!(doc["violations"][0]["line"], 12);
    assert_eq!(doc["scenario"], "sender-auth-off-forgery-opens-gate");
    // A line that cannot be read: its number and why, nothing judged.
    let bad = dir.path("bad.jsonl");
    let text = std::fs::read_to_string(&clean).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = r#"{"t":5,"event":"status","agent":"alice","status":"asleep"}"#;
    std::fs::write(&bad, lines.join("\n")).unwrap();
    handshake(&["audit", &bad])
        .expect_code(2)
        .stderr_has("bad.jsonl:4: \"asleep\" is not a roster status")
        .stderr_has("nothing was judged");
    handshake(&["audit", &dir.path("none.jsonl")]).expect_code(2).stderr_has("none.jsonl");
}

// ---------------------------------------------------------------- explore (issue 11, first part)

#[test]
fn explore_reports_its_search_and_the_shortest_schedule_that_breaks_an_invariant() {
    let ok = handshake(&["explore", HAPPY, "--drop", "1", "--duplicate", "1"]);
    ok.expect_code(0).stdout_has("states (").stdout_has("unique), depth").stdout_has("no invariant violated");
    let dir = TempDir::new("explore");
    let off = dir.write(
        "pending-off.toml",
        "name = \"p\"\nabout = \"a\"\n[policy.defences]\npending_check = false\n[[teammate]]\nname = \"alice\"\n\
         [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"alice\"\nlabel = \"stop-alice\"\n",
    );
    let broken = handshake(&["explore", &off, "--duplicate", "1"]);
    broken.expect_code(1).stdout_has("✗ invariant").stdout_has("shortest schedule").stdout_has("[stop-alice]");
    handshake(&["explore", &off, "--max-states", "0"]).expect_code(2).stderr_has("--max-states");
    handshake(&["explore", "no-such-file.toml"]).expect_code(2);
    // Depth first finds it too, and does not call its schedule the shortest.
    let deep = handshake(&["explore", &off, "--duplicate", "1", "--order", "depth"]);
    deep.expect_code(1)
        .stdout_has("✗ invariant")
        .stdout_has("a schedule that breaks it")
        .stdout_has("found depth first");
    assert!(!deep.stdout.contains("shortest schedule that breaks"), "{}", deep.explain());
    let json = explore_json(&["explore", HAPPY, "--drop", "1", "--order", "depth", "--format", "json"]);
    assert_eq!(json["order"], "depth");
    handshake(&["explore", HAPPY, "--order", "sideways"]).expect_code(2).stderr_has("breadth").stderr_has("depth");
    handshake(&["explore", HAPPY, "--order", "depth", "--jobs", "2"]).expect_code(0).stderr_has("one thread");
    // Issue 22, point 2: the counterexample as a page to step through, the
    // actors replaying its schedule.
    let page = dir.path("found.html");
    handshake(&["explore", &off, "--duplicate", "1", "--html", &page]).expect_code(1).stderr_has("to step through");
    let html = std::fs::read_to_string(&page).expect("the page is written");
    for want in ["Step through it", "class=\"verdict fail\">FAIL", "expired → approved", "--save-schedule S"] {
        assert!(html.contains(want), "the counterexample's page lacks {want:?}");
    }
    let none = dir.path("none.html");
    handshake(&["explore", HAPPY, "--html", &none]).expect_code(0).stderr_has("nothing broke");
    assert!(!std::path::Path::new(&none).exists(), "a page was written for nothing");
    let nowhere = dir.path("no-such-folder/found.html");
    handshake(&["explore", &off, "--html", &nowhere])
        .expect_code(2)
        .stderr_has("no folder")
        .stderr_has("nothing was explored");
    // And the shrunk run of `shrink --html`.
    let input =
        dir.write("padded.toml", &std::fs::read_to_string("tests/shrink-inputs/padded-kind-check-off.toml").unwrap());
    let shrunk_page = dir.path("shrunk.html");
    let out = dir.path("shrunk.toml");
    handshake(&["shrink", &input, "--out", &out, "--html", &shrunk_page, "--jobs", "1"])
        .expect_code(0)
        .stderr_has("to step through");
    let html = std::fs::read_to_string(&shrunk_page).expect("the shrunk run's page");
    assert!(html.contains("Step through it") && html.contains("pending → approved"), "the shrunk run's page");
    handshake(&["shrink", &input, "--html", &nowhere]).expect_code(2).stderr_has("nothing was shrunk");
}

#[test]
fn explore_plays_a_files_faults_as_a_run_plays_them() {
    handshake(&["explore", "scenarios/19-crash-and-restart.toml"])
        .expect_code(0)
        .stdout_has("2 played as a run plays them");
    // Issue 20 point 3: a stall (it freezes the agent's inbox and its timers
    // with it) is the world's, so the explorer plays it as a run does.
    handshake(&["explore", "scenarios/03-stalled-teammate-killed.toml"])
        .expect_code(0)
        .stdout_has("1 played as a run plays it");
    // Without its stall the teammate works on to the depth bound: a search a
    // bound stopped, with nothing found, exits 3 (issue 24), not 0.
    handshake(&["explore", "scenarios/03-stalled-teammate-killed.toml", "--without-file-faults"])
        .expect_code(3)
        .stdout_has("stopped at --max-depth")
        .stdout_has("left out");
    // And a file-inbox scenario is explored, its files and reads in the state.
    handshake(&["explore", "scenarios/34-drain-truncate-loses-request.toml"]).expect_code(0).stdout_has("explored");
    // A file that switches a defence off expects its violation: finding it passes, as `run` does.
    handshake(&["explore", "scenarios/12-kind-check-off.toml"]).expect_code(0).stdout_has("found, as the file expects");
    // Issue 19, point 5: an expected violation does not end the search. The
    // same file without its gated-action expectation fails, as `run` fails it.
    let whole = std::fs::read_to_string("scenarios/12-kind-check-off.toml").expect("bundled");
    let cut = whole.rfind("[[expect]]\nviolation = \"gated-action\"").expect("12 expects gated-action");
    let dir = TempDir::new("expected-then-unexpected");
    let p5 = dir.write("p5.toml", &whole[..cut]);
    handshake(&["run", &p5]).expect_code(1).stdout_has("invariant gated-action");
    handshake(&["explore", &p5])
        .expect_code(1)
        .stdout_has("✓ invariant matching-response")
        .stdout_has("found, as the file expects")
        .stdout_has("✗ invariant gated-action");
    let quiet = handshake(&["explore", HAPPY]);
    assert!(!quiet.stdout.contains("the file's faults"), "{}", quiet.explain());
}

/// Two identical workers, each rejecting the first shutdown request and
/// approving the second (scenario 29 with two instead of three): small
/// enough to search three times over in a debug build.
const LOSSY_TWO: &str = "name = \"lossy-shutdown-2\"\nabout = \"two teammates, each rejects once\"\n\
    [[teammate]]\nname = \"worker\"\ncount = 2\non_shutdown = [\"reject\", \"approve\"]\nreject_reason = \"busy\"\n\
    [[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-1\"\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-2\"\n\
    [[step]]\nat = \"6s\"\ndo = \"shutdown\"\nto = \"worker-1\"\n[[step]]\nat = \"6s\"\ndo = \"shutdown\"\nto = \"worker-2\"\n";

/// The JSON report of an explore that found nothing (exit 0, or 3 when a
/// bound stopped it: the report says which in `stopped_by`).
fn explore_json(args: &[&str]) -> Value {
    let r = handshake(args);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
    let expected = if doc["stopped_by"].is_null() { 0 } else { 3 };
    assert_eq!(r.code, expected, "wrong exit status for stopped_by {}\n{}", doc["stopped_by"], r.explain());
    doc
}

#[test]
fn explore_refuses_a_bad_thread_count_or_memory_bound_before_searching() {
    handshake(&["explore", HAPPY, "--jobs", "0"])
        .expect_code(2)
        .stderr_has("--jobs")
        .stderr_has("nothing was explored");
    for (size, says) in [
        ("0", "more than zero"),
        ("12XB", "`XB` is not a unit"),
        ("lots", "lots"),
        ("-1GB", "more than zero"),
        // Issue 19, point 11: one byte was taken as a bound.
        ("1", "give at least 16MiB"),
        ("16000KB", "give at least 16MiB"),
    ] {
        let flag = format!("--max-memory={size}");
        let r = handshake(&["explore", HAPPY, &flag]);
        r.expect_code(2).stderr_has("--max-memory").stderr_has(says);
        assert!(!r.stdout.contains("explored"), "{}", r.explain());
    }
    for size in ["2GB", "512MiB", "1.5GiB", "800000000"] {
        handshake(&["explore", HAPPY, "--max-memory", size, "--jobs", "2"])
            .expect_code(0)
            .stdout_has("no invariant violated");
    }
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "needs /proc/self/statm (Linux) for the explorer to see its memory")]
fn explore_stops_at_the_memory_bound_and_says_so() {
    // Memory is looked at every 10,000 distinct states; scenario 29 with a
    // drop has more than four times as many. The smallest bound the flag
    // takes is below what the program holds at the first look.
    let lossy = "scenarios/29-lossy-shutdown-asked-twice.toml";
    handshake(&["explore", lossy, "--drop", "1", "--max-memory", "16MiB"])
        .expect_code(3)
        .stdout_has("(10000 unique)")
        .stdout_has("stopped at --max-memory")
        .stdout_has("no invariant violated within the bounds");
    let doc = explore_json(&["explore", lossy, "--drop", "1", "--max-memory", "16MiB", "--format", "json"]);
    assert_eq!(doc["stopped_by"], "max-memory", "{doc}");
    assert_eq!(doc["unique"], 10_000, "{doc}");
}

#[test]
fn explore_compare_reports_what_symmetry_and_partial_order_save() {
    let dir = TempDir::new("explore-compare");
    let two = dir.write("lossy-two.toml", LOSSY_TWO);
    let r = handshake(&["explore", &two, "--drop", "1", "--compare"]);
    r.expect_code(0).stdout_has("symmetry ×").stdout_has("partial order ×").stdout_has("--compare searched again");
    assert!(!r.stdout.contains("(bounded)"), "the whole space fits: {}", r.explain());
    handshake(&["explore", &two, "--drop", "1"])
        .expect_code(0)
        .stdout_has("symmetry on (2 interchangeable teammates)")
        .stdout_has("transitions slept");
    handshake(&["explore", &two, "--drop", "1", "--no-symmetry", "--no-partial-order"])
        .expect_code(0)
        .stdout_has("symmetry off")
        .stdout_has("partial order off");
    handshake(&["explore", HAPPY, "--drop", "1", "--compare"])
        .expect_code(0)
        .stdout_has("symmetry: no identical teammates");

    let compared = explore_json(&["explore", &two, "--drop", "1", "--compare", "--format", "json"]);
    assert_eq!(compared["symmetric_groups"], serde_json::json!([2]), "{compared}");
    // Two interchangeable teammates: at most two states become one.
    let factor = compared["symmetry_factor_unique"].as_f64().expect("a factor with --compare");
    assert!(factor > 1.5 && factor <= 2.0, "{compared}");
    assert!(compared["partial_order_factor_states"].as_f64().is_some_and(|f| f > 1.0), "{compared}");
    assert!(compared["partial_order_slept"].as_u64().is_some_and(|n| n > 0), "{compared}");
    let plain = explore_json(&["explore", &two, "--drop", "1", "--format", "json"]);
    assert!(plain["symmetry_factor_unique"].is_null(), "only with --compare: {plain}");
    assert!(plain["partial_order_factor_states"].is_null(), "only with --compare: {plain}");
    assert_eq!(plain["symmetric_groups"], serde_json::json!([2]), "{plain}");
    assert_eq!(plain["partial_order_slept"], compared["partial_order_slept"], "--compare changes not the search");
    let off =
        explore_json(&["explore", &two, "--drop", "1", "--no-symmetry", "--no-partial-order", "--format", "json"]);
    assert_eq!(off["symmetric_groups"], serde_json::json!([]), "{off}");
    assert_eq!(off["partial_order_slept"], 0, "{off}");
    // What --compare measured is what the search without symmetry finds.
    let no_symmetry = explore_json(&["explore", &two, "--drop", "1", "--no-symmetry", "--format", "json"]);
    let measured = no_symmetry["unique"].as_f64().unwrap() / plain["unique"].as_f64().unwrap();
    assert!((measured - factor).abs() < 1e-9, "{measured} vs {factor}");
}

#[test]
fn explore_gives_the_same_answer_for_any_number_of_threads() {
    let dir = TempDir::new("explore-jobs");
    let two = dir.write("lossy-two.toml", LOSSY_TWO);
    let pending_off =
        dir.write("lossy-two-pending-off.toml", &format!("{LOSSY_TWO}[policy.defences]\npending_check = false\n"));
    for (file, budget) in [(&two, "--drop"), (&pending_off, "--crash")] {
        let run = |jobs: &str| {
            let r = handshake(&["explore", file, budget, "1", "--jobs", jobs, "--format", "json"]);
            let mut doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.explain()));
            doc.as_object_mut().expect("an object").remove("seconds");
            (r.code, doc)
        };
        let one = run("1");
        assert_eq!(one, run("2"), "{file} {budget} 1");
        assert_eq!(one, run("3"), "{file} {budget} 1");
    }
}

#[test]
fn explore_tries_final_crashes_and_restarts_and_breaks_nothing_in_the_crash_scenario() {
    let crash = "scenarios/19-crash-and-restart.toml";
    handshake(&["explore", crash, "--crash", "1"]).expect_code(0).stdout_has("no invariant violated");
    let doc = explore_json(&["explore", crash, "--crash", "1", "--format", "json"]);
    assert!(doc["violation"].is_null(), "{doc}");
    assert!(doc["stopped_by"].is_null(), "{doc}");
    // A crash budget opens states a run without one never reaches.
    let plain = explore_json(&["explore", crash, "--format", "json"]);
    assert!(doc["unique"].as_u64() > plain["unique"].as_u64(), "{doc} vs {plain}");
}

/// Issue 20 point 5, from the command line: `explore --save-schedule S`
/// writes the counterexample's choices, and `run FILE --schedule S` makes
/// the actors take them and fail on the same invariant; a schedule that
/// does not read, or a seed other than its own, is bad input.
#[test]
fn a_saved_schedule_replays_the_counterexample_on_the_actors() {
    let dir = TempDir::new("schedule");
    let file = "scenarios/12-kind-check-off.toml";
    let whole = std::fs::read_to_string(file).expect("bundled");
    let cut = whole.rfind("[[expect]]\nviolation = \"gated-action\"").expect("12 expects gated-action");
    let p5 = dir.write("p5.toml", &whole[..cut]);
    let schedule = dir.0.join("found.schedule").display().to_string();
    handshake(&["explore", &p5, "--save-schedule", &schedule])
        .expect_code(1)
        .stdout_has("✗ invariant gated-action")
        .stderr_has("--schedule");
    let text = std::fs::read_to_string(&schedule).expect("written");
    assert!(text.starts_with("{\"handshake_schedule\":1,"), "{text}");
    let r = handshake(&["run", &p5, "--schedule", &schedule]);
    r.expect_code(1).stdout_has("invariant gated-action").stdout_has("stopped by the schedule's end");
    assert!(!r.stderr.contains("warning"), "the file it was taken in: {}", r.explain());
    assert!(!r.stdout.contains("the the"), "issue 39, point 8: {}", r.explain());
    let bad = dir.write(
        "bad.schedule",
        &format!("{}\n{{\"choice\":\"fire\",\"owner\":\"nobody\"}}\n", text.lines().next().unwrap_or_default()),
    );
    handshake(&["run", &p5, "--schedule", &bad])
        .expect_code(2)
        .stderr_has("line 2: no agent named \"nobody\"")
        .ran_nothing();
    handshake(&["run", &p5, "--schedule", &schedule, "--seed", "999"]).expect_code(2).stderr_has("seed").ran_nothing();
    // Another file's schedule reads, and its run parts from it: bad input
    // too (it was a failed run with made-up expectation failures), and the
    // trace asked for is not written.
    let other = root().join("scenarios/01-happy-shutdown.toml").display().to_string();
    let trace = dir.0.join("never.jsonl");
    handshake(&["run", &other, "--schedule", &schedule, "--trace", &trace.display().to_string()])
        .expect_code(2)
        .stderr_has("was saved from another file, or from")
        .stderr_has("this run parts from the schedule there")
        .stderr_has("the run is not judged, and nothing was written")
        .ran_nothing();
    assert!(!trace.exists(), "no trace written");
}

/// A schedule is judged as the explorer judged it. Without `--expect` the
/// explorer holds a path to the invariants alone, a violation the file
/// expects allowed: the printed `run --schedule` line passed, as explore
/// did, and does not fail on the file's end-state expectations (it exited
/// 1 on the bundled file's "file is complete", which describes the file's
/// own run). With `--expect` the header says so and `run` judges them too.
#[test]
fn a_saved_schedule_is_judged_as_the_explorer_judged_it() {
    let dir = TempDir::new("schedule-judged");
    let file = root().join("scenarios/12-kind-check-off.toml").display().to_string();
    let schedule = dir.0.join("expected.schedule").display().to_string();
    handshake(&["explore", &file, "--save-schedule", &schedule])
        .expect_code(0)
        .stdout_has("as the file expects")
        .stderr_has("--schedule");
    let text = std::fs::read_to_string(&schedule).expect("written");
    // The header names the file it was taken in (its hash), and no `expect`.
    let head = text.lines().next().unwrap_or_default();
    assert!(head.starts_with("{\"handshake_schedule\":1,\"seed\":1,\"file_faults\":true,\"file\":\""), "{text}");
    assert!(!head.contains("expect"), "{head}");
    handshake(&["run", &file, "--schedule", &schedule])
        .expect_code(0)
        .stdout_has("judged as the explorer judged this schedule");
    let json = |args: &[&str]| -> Value {
        let r = handshake(args);
        r.expect_code(0);
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()))
    };
    let doc = json(&["run", &file, "--schedule", &schedule, "--format", "json"]);
    assert_eq!(doc["scenarios"][0]["expectations_judged"], Value::Bool(false), "{doc}");
    assert!(
        !doc["scenarios"][0]["violations"].as_array().expect("a list").is_empty(),
        "it reached the violation: {doc}"
    );
    // The file's own run says nothing of it: every expectation judged.
    let own = json(&["run", &file, "--format", "json"]);
    assert!(own["scenarios"][0].get("expectations_judged").is_none(), "{own}");

    let deadlock = root().join("scenarios/22-peer-deadlock.toml").display().to_string();
    let judged = dir.0.join("judged.schedule").display().to_string();
    handshake(&["explore", &deadlock, "--expect", "--max-latency", "5ms", "--save-schedule", &judged])
        .expect_code(1)
        .stdout_has("the file's expectations");
    let text = std::fs::read_to_string(&judged).expect("written");
    assert!(text.lines().next().is_some_and(|h| h.ends_with(",\"expect\":true}")), "{text}");
    handshake(&["run", &deadlock, "--schedule", &judged]).expect_code(1).stdout_has("expected expired");
    let r = handshake(&["run", &deadlock, "--schedule", &judged]);
    assert!(!r.stdout.contains("judged as the explorer judged"), "{}", r.explain());
}

/// A hostile review: `explore --write F` and `--save-schedule S` said
/// nothing when the search found nothing, so an old file at that path
/// looked like this search's. Each output asked for is said not written.
#[test]
fn outputs_a_search_that_found_nothing_cannot_write_are_said_not_written() {
    let dir = TempDir::new("explore-nothing");
    let (write, schedule, page) = (dir.path("found.toml"), dir.path("found.schedule"), dir.path("found.html"));
    let happy = root().join("scenarios/01-happy-shutdown.toml").display().to_string();
    handshake(&["explore", &happy, "--write", &write, "--save-schedule", &schedule, "--html", &page])
        .expect_code(0)
        .stderr_has("no scenario written: nothing broke")
        .stderr_has("no schedule written: nothing broke")
        .stderr_has("no page written: nothing broke");
    for p in [&write, &schedule, &page] {
        assert!(!std::path::Path::new(p).exists(), "{p}");
    }
}

#[test]
fn a_scenario_run_alone_names_the_violations_it_passes_by() {
    // 12 passes because the oracle reports matching-response and
    // gated-action: alone, the report says so; in the whole suite's list it
    // would be two long lines more for one scenario, so there it does not.
    let alone = handshake(&["run", "12", "--color", "never"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    for invariant in ["matching-response", "gated-action"] {
        assert!(
            alone
                .stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("✓ {invariant} — "))
                    && l.ends_with("(as the file expects)")),
            "{invariant} named: {}",
            alone.stdout
        );
    }
    let suite = handshake(&["run", "--color", "never"]);
    assert_eq!(suite.code, 0, "{}", suite.stderr);
    assert!(!suite.stdout.contains("(as the file expects)"), "{}", suite.stdout);
    let watched = handshake(&["run", "12", "13", "-v", "--color", "never"]);
    assert!(watched.stdout.contains("✓ matching-response — "), "{}", watched.stdout);
}

/// A protocol designer's review: `run t1.toml --schedule e2.sched` passed,
/// "judged as the explorer judged this schedule", though the explorer never
/// explored t1. The header holds the hash of the file it was taken in: a
/// run of another file, or of this one changed since, is warned.
#[test]
fn a_schedule_run_on_a_file_it_was_not_taken_in_is_warned() {
    let dir = TempDir::new("schedule-other-file");
    let whole = std::fs::read_to_string(root().join("scenarios/12-kind-check-off.toml")).expect("bundled");
    let cut = whole.rfind("[[expect]]\nviolation = \"gated-action\"").expect("12 expects gated-action");
    let file = dir.write("p5.toml", &whole[..cut]);
    let schedule = dir.0.join("p5.schedule").display().to_string();
    handshake(&["explore", &file, "--save-schedule", &schedule]).expect_code(1);
    let same = handshake(&["run", &file, "--schedule", &schedule]);
    assert!(!same.stderr.contains("warning"), "{}", same.explain());
    // The same team, a comment added: it still reads and replays, and is warned.
    std::fs::write(&file, format!("{}\n# changed\n", &whole[..cut])).unwrap();
    handshake(&["run", &file, "--schedule", &schedule])
        .expect_code(1)
        .stderr_has("was saved from another file, or from");
}
