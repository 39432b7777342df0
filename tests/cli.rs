//! The `handshake` command as a user meets it: the real binary, run from the
//! crate's root, judged by its exit status, its stdout and its stderr.
//!
//! Exit statuses (design.md, `handshake --help`): 0 all passed, 1 a scenario
//! failed, 2 bad input and nothing was run. Bad input is reported as rustc
//! reports an error (`error: reason`, then `--> path:line:col`); every
//! positioned test below computes the expected line and column from the TOML
//! text it wrote.

mod common;

use common::WRONG_EXPECTATION;

use common::binary::{handshake, TempDir};
use common::bundled_files as bundled;
use serde_json::{json, Value};
use std::path::Path;

const HAPPY: &str = "scenarios/01-happy-shutdown.toml";

// ---------------------------------------------------------------- helpers

/// 1-based line and column (in characters) of the only occurrence of `needle` in `text`.
fn pos(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle:?} not in the TOML"));
    assert!(text[at + 1..].find(needle).is_none(), "{needle:?} occurs twice in the TOML; pick a unique marker");
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// The header every bad-input file starts with: one teammate, alice.
const HEAD: &str =
    "name = \"bad-input\"\nabout = \"A file the loader must refuse.\"\n\n[[teammate]]\nname = \"alice\"\n";

/// The diagnostic (rustc's layout: `error: ...`, ` --> place`, the line,
/// its label, `help: ...`) that `located` places, without the file's own
/// line it quotes: what the reader is told.
fn diagnostic_at(stderr: &str, located: &str) -> String {
    let Some(at) = stderr.find(located) else { return String::new() };
    let start = stderr[..at].rfind("error: ").unwrap_or(0);
    let end = stderr[at..].find("\n\n").map_or(stderr.len(), |e| at + e);
    let quoted = |l: &str| l.trim_start().split_once(" |").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
    stderr[start..end].lines().filter(|l| !quoted(l)).collect::<Vec<_>>().join("\n")
}

/// Writes `text` as a scenario, runs it together with a good bundled file
/// listed first, and checks: exit 2, nothing run, and stderr has a
/// diagnostic placed at ` --> path:line:col` (the position of `marker` in
/// `text`) whose message, label and help hold every one of `reason`.
fn refused(tag: &str, text: &str, marker: &str, reason: &[&str]) {
    let dir = TempDir::new(tag);
    let file = dir.write(&format!("{tag}.toml"), text);
    let (line, col) = pos(text, marker);
    let located = format!("--> {file}:{line}:{col}\n");

    for args in [vec!["run", HAPPY, file.as_str()], vec!["check", file.as_str()]] {
        let r = handshake(&args);
        r.expect_code(2).ran_nothing().stderr_has(&located);
        let line_text = diagnostic_at(&r.stderr, &located);
        for word in reason {
            assert!(line_text.contains(word), "the reason lacks {word:?}: {line_text:?}\n{}", r.explain());
        }
        if args[0] == "run" {
            r.stderr_has("nothing was run");
            assert!(!r.stdout.contains("happy-shutdown"), "the good file ran anyway\n{}", r.explain());
        }
    }
}

// ---------------------------------------------------------------- run: all bundled

#[test]
fn run_without_arguments_runs_every_bundled_scenario() {
    let n = bundled().len();
    let r = handshake(&[]);
    // No subcommand is a usage error from clap, not a run.
    assert_eq!(r.code, 2, "{}", r.explain());

    let r = handshake(&["run"]);
    r.expect_code(0);
    let pass = r.lines_starting("PASS");
    assert_eq!(pass.len(), n, "one PASS line per file in scenarios/\n{}", r.explain());
    assert!(r.lines_starting("FAIL").is_empty(), "{}", r.explain());
    r.stdout_has(&format!("{n} scenarios: {n} passed, 0 failed"));
    // Each bundled file is named by its own `name`, in file order.
    for (file, line) in bundled().iter().zip(&pass) {
        let text = std::fs::read_to_string(file).unwrap();
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{} has a name", file.display()));
        assert!(line.contains(name), "{} should report {name:?}, got {line:?}", file.display());
    }
}

// ---------------------------------------------------------------- run: a failing scenario

#[test]
fn a_failing_scenario_exits_1_and_explains_itself() {
    let dir = TempDir::new("fail");
    let file = dir.write("wrong.toml", WRONG_EXPECTATION);
    let shown = file.clone();

    let r = handshake(&["run", &file]);
    r.expect_code(1);
    let fail = r.lines_starting("FAIL");
    assert_eq!(fail.len(), 1, "{}", r.explain());
    assert!(fail[0].contains("wrong-expectation") && fail[0].contains("seed 1"), "{}", r.explain());
    // The first failed check, in words.
    r.stdout_has("✗ request stop-alice is expired")
        .stdout_has("stop-alice ended approved, expected expired")
        // The events that led to it.
        .stdout_has("what led to it:")
        .stdout_has("lead asks alice: shutdown request [stop-alice]")
        .stdout_has("[stop-alice] pending → approved")
        // How to reproduce it.
        .stdout_has(&format!("reproduce: cargo run --release -- run {shown} --seed 1"))
        .stdout_has("1 scenario: 0 passed, 1 failed");

    // The reproduce line really reproduces: same file, same seed, same failure.
    let line = r.stdout.lines().find(|l| l.contains("reproduce:")).unwrap();
    let args: Vec<&str> = line.split("-- ").nth(1).unwrap().split_whitespace().collect();
    let again = handshake(&args);
    again.expect_code(1).stdout_has("✗ request stop-alice is expired");

    // One failure among passes still fails the run, and the passes still show.
    let r = handshake(&["run", HAPPY, &file]);
    r.expect_code(1).stdout_has("2 scenarios: 1 passed, 1 failed");
    assert_eq!(r.lines_starting("PASS").len(), 1, "{}", r.explain());
    assert_eq!(r.lines_starting("FAIL").len(), 1, "{}", r.explain());
}

// ---------------------------------------------------------------- run: bad input

#[test]
fn malformed_toml_is_refused_with_its_position() {
    let text = format!("{HEAD}on_shutdown = approve\n");
    refused("malformed", &text, "approve\n", &[]);
}

#[test]
fn an_unknown_key_is_refused_with_its_position() {
    let text = format!("{HEAD}on_shutdwon = \"approve\"\n");
    refused("unknown-key", &text, "on_shutdwon", &["unknown field", "on_shutdwon"]);
}

#[test]
fn an_unknown_agent_in_a_step_is_refused() {
    let text = format!("{HEAD}\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"bob\"\n");
    refused("unknown-agent", &text, "\"bob\"", &["bob"]);
}

#[test]
fn an_unknown_label_in_an_expectation_is_refused() {
    let text = format!("{HEAD}\n[[expect]]\nrequest = \"@nope\"\nstatus = \"approved\"\n");
    refused("unknown-label-expect", &text, "\"@nope\"", &["unknown label", "nope"]);
}

#[test]
fn an_unknown_label_in_a_fault_is_refused() {
    let text = format!("{HEAD}\n[[fault]]\nkind = \"replay\"\nat = \"1s\"\nrequest = \"@nope\"\n");
    refused("unknown-label-fault", &text, "\"@nope\"", &["unknown label", "nope"]);
}

#[test]
fn a_duration_without_a_unit_is_refused() {
    let text = format!("{HEAD}\n[policy]\nshutdown_timeout = \"60\"\n");
    refused("duration-no-unit", &text, "\"60\"", &["shutdown_timeout", "no unit"]);
}

#[test]
fn a_duration_that_is_not_one_is_refused() {
    let text = format!("{HEAD}\n[[step]]\nat = \"fast\"\ndo = \"shutdown\"\nto = \"alice\"\n");
    refused("duration-fast", &text, "\"fast\"", &["fast", "not a duration"]);
}

#[test]
fn a_rejection_without_a_reason_is_refused() {
    let text = format!("{HEAD}on_shutdown = \"reject\"\n");
    refused("reject-no-reason", &text, "\"reject\"", &["reject_reason"]);
}

#[test]
fn a_stall_without_until_is_refused() {
    let text = format!("{HEAD}\n[[fault]]\nkind = \"stall\"\nagent = \"alice\"\nat = \"1s\"\n");
    refused("stall-no-until", &text, "[[fault]]", &["stall", "missing", "until"]);
}

#[test]
fn a_crash_without_an_agent_is_refused() {
    let text = format!("{HEAD}\n[[fault]]\nkind = \"crash\"\nat = \"1s\"\n");
    refused("crash-no-agent", &text, "[[fault]]", &["crash", "missing", "agent"]);
}

#[test]
fn a_step_in_the_past_is_refused() {
    let text = format!(
        "{HEAD}\n[[step]]\nat = \"5s\"\ndo = \"shutdown\"\nto = \"alice\"\n\n[[step]]\nat = \"2s\"\ndo = \"message\"\nto = \"alice\"\n"
    );
    refused("step-in-past", &text, "\"2s\"", &["step #2", "in the past"]);
}

#[test]
fn a_step_after_the_end_is_refused() {
    let text =
        "name = \"bad-input\"\nabout = \"A step after the end.\"\nend = \"10s\"\n\n[[teammate]]\nname = \"alice\"\n\n\
                [[step]]\nat = \"20s\"\ndo = \"shutdown\"\nto = \"alice\"\n";
    refused("step-after-end", text, "\"20s\"", &["step #1", "after the end"]);
}

#[test]
fn a_nonexistent_path_is_refused_and_nothing_runs() {
    let dir = TempDir::new("missing");
    let missing = dir.path("no-such-scenario.toml");
    for cmd in ["run", "check"] {
        let r = handshake(&[cmd, HAPPY, &missing]);
        r.expect_code(2).ran_nothing().stderr_has(&missing).stderr_has("no such file");
        assert!(!r.stdout.contains("happy-shutdown"), "{}", r.explain());
    }
}

#[test]
fn check_reports_every_problem_of_every_file_first_one_first() {
    let dir = TempDir::new("many");
    let one = format!(
        "{HEAD}\n[policy]\nplan_timeout = \"soon\"\n\n[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"carol\"\n"
    );
    let two = format!("{HEAD}on_shutdwon = \"approve\"\n");
    let a = dir.write("a.toml", &one);
    let b = dir.write("b.toml", &two);
    let r = handshake(&["check", &a, &b]);
    r.expect_code(2);
    let (l1, c1) = pos(&one, "\"soon\"");
    let (l2, c2) = pos(&one, "\"carol\"");
    let (l3, c3) = pos(&two, "on_shutdwon");
    let wanted = [format!("--> {a}:{l1}:{c1}\n"), format!("--> {a}:{l2}:{c2}\n"), format!("--> {b}:{l3}:{c3}\n")];
    let found: Vec<usize> = wanted
        .iter()
        .map(|w| r.stderr.find(w.as_str()).unwrap_or_else(|| panic!("stderr lacks {w:?}\n{}", r.explain())))
        .collect();
    assert!(found.windows(2).all(|w| w[0] < w[1]), "problems out of order\n{}", r.explain());
    r.stdout_has("2 files: 0 ok, 2 bad");
}

// ---------------------------------------------------------------- check

#[test]
fn check_lists_every_bundled_file_as_ok_and_runs_nothing() {
    let files = bundled();
    let r = handshake(&["check", "scenarios"]);
    r.expect_code(0).ran_nothing();
    let ok = r.lines_starting("ok");
    assert_eq!(ok.len(), files.len(), "{}", r.explain());
    for f in &files {
        let shown = format!("scenarios/{}", f.file_name().unwrap().to_string_lossy());
        assert!(ok.iter().any(|l| l.contains(&shown)), "{shown} not listed ok\n{}", r.explain());
    }
    r.stdout_has(&format!("{n} files: {n} ok, 0 bad", n = files.len()));
    assert!(r.stderr.is_empty(), "{}", r.explain());
    // No argument means scenarios/ too.
    let again = handshake(&["check"]);
    again.expect_code(0);
    assert_eq!(again.stdout, r.stdout);
}

#[test]
fn check_does_not_run_a_file_whose_expectation_is_wrong() {
    // Running it fails (exit 1); checking it only validates it (exit 0).
    let dir = TempDir::new("check-valid");
    let file = dir.write("wrong.toml", WRONG_EXPECTATION);
    let r = handshake(&["check", &file]);
    r.expect_code(0).ran_nothing().stdout_has("ok").stdout_has("wrong-expectation").stdout_has(": 1 ok, 0 bad");
    assert!(!r.stdout.contains("✗") && !r.stdout.contains("reproduce"), "{}", r.explain());
}

// ---------------------------------------------------------------- run: options

#[test]
fn json_format_is_one_document_for_machines() {
    let files = bundled();
    let r = handshake(&["run", "--format", "json"]);
    r.expect_code(0);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
    assert_eq!(doc["summary"]["passed"], files.len(), "{doc:#}");
    assert_eq!(doc["summary"]["failed"], 0, "{doc:#}");
    assert_eq!(doc["summary"]["total"], files.len(), "{doc:#}");
    let list = doc["scenarios"].as_array().expect("a scenarios array");
    assert_eq!(list.len(), files.len());
    for s in list {
        assert!(s["name"].as_str().is_some_and(|n| !n.is_empty()), "name: {s:#}");
        assert_eq!(s["seed"].as_u64(), Some(1), "default seed: {s:#}");
        assert_eq!(s["passed"], true, "{s:#}");
        let counts = s["counts"].as_object().expect("counts object");
        for key in ["messages", "handshakes", "ignored", "expired", "refused"] {
            assert!(counts.get(key).and_then(Value::as_u64).is_some(), "counts.{key}: {s:#}");
        }
    }
    assert_eq!(list[0]["name"], "happy-shutdown");
    assert_eq!(list[0]["counts"]["handshakes"], 1);
    assert_eq!(list[0]["counts"]["messages"], 2);

    // A failure is visible to machines too, with exit 1.
    let dir = TempDir::new("json-fail");
    let file = dir.write("wrong.toml", WRONG_EXPECTATION);
    let r = handshake(&["run", &file, "--format", "json"]);
    r.expect_code(1);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
    assert_eq!(doc["summary"]["failed"], 1);
    assert_eq!(doc["scenarios"][0]["passed"], false);
    assert!(doc["scenarios"][0]["failures"][0]["message"].as_str().is_some_and(|m| m.contains("expected expired")));
}

#[test]
fn seed_overrides_the_files_seed() {
    let dir = TempDir::new("seed");
    let text = WRONG_EXPECTATION
        .replace("name = \"wrong-expectation\"", "name = \"seeded\"\nseed = 7")
        .replace("status = \"expired\"", "status = \"approved\"");
    let file = dir.write("seeded.toml", &text);
    let seed_of = |extra: &[&str]| {
        let mut args = vec!["run", file.as_str(), "--format", "json"];
        args.extend_from_slice(extra);
        let r = handshake(&args);
        r.expect_code(0);
        let doc: Value = serde_json::from_str(&r.stdout).expect("JSON");
        doc["scenarios"][0]["seed"].as_u64().expect("a seed")
    };
    assert_eq!(seed_of(&[]), 7, "the file's seed");
    assert_eq!(seed_of(&["--seed", "42"]), 42, "--seed wins");
    // The text report and the reproduce line say so as well.
    let r = handshake(&["run", &file, "--seed", "42"]);
    r.expect_code(0);
    assert!(r.lines_starting("PASS")[0].contains("seed 42"), "{}", r.explain());
    // --seed and --seeds together are a usage error.
    handshake(&["run", &file, "--seed", "3", "--seeds", "1..3"]).expect_code(2).ran_nothing();
}

#[test]
fn trace_writes_json_lines() {
    let dir = TempDir::new("trace");
    let out = dir.path("trace.jsonl");
    let r = handshake(&["run", HAPPY, "--trace", &out]);
    r.expect_code(0).stdout_has("PASS");
    let text = std::fs::read_to_string(&out).expect("the trace file was written");
    assert!(text.ends_with('\n'), "JSON Lines end with a newline");
    // The first line is the history's header (issue 23): the format, the
    // run, the team and the policy; every line after it is one event.
    let first: Value = serde_json::from_str(text.lines().next().unwrap_or_default()).expect("a JSON header");
    assert_eq!(first["history"], "handshake", "{first}");
    assert_eq!(first["format"], 1, "{first}");
    assert_eq!((first["scenario"].as_str(), first["seed"].as_u64()), (Some("happy-shutdown"), Some(1)), "{first}");
    assert_eq!(first["team"][1]["name"], "alice", "{first}");
    assert_eq!(first["policy"]["on_shutdown_timeout"], "kill", "{first}");
    let mut last_t = 0;
    let mut kinds = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {line}", i + 1));
        let t = v["t"].as_u64().unwrap_or_else(|| panic!("line {} has no numeric `t`: {line}", i + 1));
        let event = v["event"].as_str().unwrap_or_else(|| panic!("line {} has no `event`: {line}", i + 1));
        assert!(t >= last_t, "line {}: time goes backwards ({last_t} then {t})", i + 1);
        last_t = t;
        kinds.push(event.to_string());
    }
    for k in ["request", "send", "deliver", "verdict"] {
        assert!(kinds.iter().any(|x| x == k), "no {k:?} event in the trace: {kinds:?}");
    }
    assert!(text.contains("\"label\":\"stop-alice\""), "labels appear in the trace");
}

#[test]
fn trace_is_refused_for_more_than_one_run() {
    let dir = TempDir::new("trace-refused");
    let out = dir.path("trace.jsonl");
    let two = ["run", HAPPY, "scenarios/03-stalled-teammate-killed.toml", "--trace", &out];
    handshake(&two).expect_code(2).ran_nothing().stderr_has("--trace");
    let folder = ["run", "scenarios", "--trace", &out];
    handshake(&folder).expect_code(2).ran_nothing().stderr_has("--trace");
    let sweep = ["run", HAPPY, "--seeds", "1..3", "--trace", &out];
    handshake(&sweep).expect_code(2).ran_nothing().stderr_has("--trace");
    assert!(!Path::new(&out).exists(), "a refused --trace must not write a file");
}

#[test]
fn verbose_streams_readable_events() {
    let r = handshake(&["run", HAPPY, "-v"]);
    r.expect_code(0)
        .stdout_has("shutdown_request")
        .stdout_has("shutdown_response")
        .stdout_has("lead → alice")
        .stdout_has("happy-shutdown (seed 1)")
        .stdout_has("PASS");
    // Events stream before the verdict line.
    let first_event = r.stdout.find("shutdown_request").unwrap();
    let verdict = r.stdout.find("PASS").unwrap();
    assert!(first_event < verdict, "{}", r.explain());
    // Without -v none of that is printed.
    let quiet = handshake(&["run", HAPPY]);
    assert!(!quiet.stdout.contains("→"), "{}", quiet.explain());
}

#[test]
fn every_command_has_help_with_an_example() {
    for cmd in ["run", "check", "bench"] {
        let r = handshake(&[cmd, "--help"]);
        r.expect_code(0).stdout_has("Example").stdout_has(&format!("handshake {cmd}"));
    }
    handshake(&["--help"]).expect_code(0).stdout_has("Example").stdout_has("Exit status");
}

#[test]
fn seeds_sweeps_every_scenario_with_progress() {
    let n = bundled().len();
    let runs = 3 * n;
    let r = handshake(&["run", "--seeds", "1..4"]);
    // Issue 9, point 21: the bar draws only on a terminal (tests/cli_runner.rs
    // checks it there); this stderr is a pipe, so it stays clean.
    r.expect_code(0);
    assert!(!r.stderr.contains(&format!("{runs}/{runs} runs")), "a progress bar on a pipe\n{}", r.explain());
    let rows = r.lines_starting("PASS");
    assert_eq!(rows.len(), n, "one row per scenario\n{}", r.explain());
    assert!(rows.iter().all(|l| l.contains("3/3 seeds passed")), "{}", r.explain());
    r.stdout_has(&format!("{runs} runs ({n} scenarios × 3 seeds): {runs} passed, 0 failed"));
    // Progress goes to stderr, never into the report.
    assert!(!r.stdout.contains(" runs (0 failed)"), "{}", r.explain());
}

#[test]
fn seeds_lists_each_failing_seed_with_the_command_to_reproduce_it() {
    let dir = TempDir::new("sweep-fail");
    let file = dir.write("wrong.toml", WRONG_EXPECTATION);
    let shown = file.clone();
    let r = handshake(&["run", &file, "--seeds", "5..8"]);
    r.expect_code(1).stdout_has("0/3 seeds passed").stdout_has("failing seeds:");
    for seed in 5..8 {
        r.stdout_has(&format!("reproduce: cargo run --release -- run {shown} --seed {seed}"));
    }
    r.stdout_has("3 runs (").stdout_has("× 3 seeds): 0 passed, 3 failed");
    // An empty or backwards range is a usage error.
    handshake(&["run", HAPPY, "--seeds", "4..4"]).expect_code(2).ran_nothing();
    handshake(&["run", HAPPY, "--seeds", "seven"]).expect_code(2).ran_nothing();
}

#[test]
fn the_seeds_example_in_the_top_level_help_sweeps_what_it_says() {
    let help = handshake(&["--help"]);
    help.expect_code(0);
    let line = help.stdout.lines().find(|l| l.contains("--seeds")).expect("an example with --seeds");
    let range = line.split_whitespace().skip_while(|w| *w != "--seeds").nth(1).expect("a range after --seeds");
    let claimed: u64 = line
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(3)
        .find(|w| w[0] == "sweep" && w[2] == "seeds")
        .and_then(|w| w[1].parse().ok())
        .expect("the example says how many seeds it sweeps");
    let r = handshake(&["run", HAPPY, "--seeds", range]);
    r.expect_code(0).stdout_has(&format!("{claimed}/{claimed} seeds passed"));
}

#[test]
fn bench_reports_both_sides_and_their_paired_ratio_as_json() {
    // A tiny load: this checks the report, not the speed (a debug build).
    let r = handshake(&[
        "bench",
        "--teammates",
        "2",
        "--handshakes",
        "2000",
        "--latency-sample",
        "200",
        "--repeat",
        "3",
        "--format",
        "json",
    ]);
    r.expect_code(0).stderr_has("measuring baseline");
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
    assert_eq!(v["handshakes"], 2000, "{}", r.explain());
    assert_eq!(v["teammates"], 2, "{}", r.explain());
    let rate = |side: &str| v[side]["per_second"].as_f64().unwrap_or(0.0);
    assert!(rate("protocol") > 0.0 && rate("baseline") > 0.0, "{}", r.explain());
    let ratio = v["ratio"].as_f64().unwrap_or(0.0);
    assert!(ratio > 0.0 && ratio.is_finite(), "{}", r.explain());
    assert!(v["latency_us"]["samples"].as_u64().unwrap_or(0) > 0, "{}", r.explain());
}

#[test]
fn bench_refuses_an_empty_load() {
    for flag in ["--teammates", "--in-flight", "--handshakes", "--repeat", "--latency-sample"] {
        handshake(&["bench", flag, "0"]).expect_code(2).stderr_has("at least 1");
    }
}

/// A hostile review: the suite's table had no min and max and no `build`
/// line, which bench's help promises of every figure; and a case of fewer
/// handshakes than in flight was taken.
#[test]
fn the_bench_suite_says_its_build_and_each_ratios_spread() {
    let r = handshake(&["bench", "--suite", "--cases", "1x1x200", "--latency-sample", "20", "--repeat", "2"]);
    r.expect_code(0).stdout_has("build: the `").stdout_has("| ratio (min–max) |");
    let row = r.stdout.lines().find(|l| l.starts_with("| shutdown, 1 × 1, memory |")).expect("the case's row");
    assert!(row.contains(" (") && row.contains("–"), "{row}");
    handshake(&["bench", "--suite", "--cases", "1000x10x10"])
        .expect_code(2)
        .ran_nothing()
        .stderr_has("give at least 10000");
}

/// A hostile review: fewer handshakes than are in flight timed the load's
/// set-up and printed it as a rate; a typo'd --repeat would run for days.
#[test]
fn bench_refuses_a_load_that_would_time_its_set_up_or_never_end() {
    handshake(&["bench", "--teammates", "1000", "--in-flight", "10", "--handshakes", "10"])
        .expect_code(2)
        .ran_nothing()
        .stderr_has("--handshakes 10 is fewer than the 10000 handshakes in flight")
        .stderr_has("give at least 10000");
    handshake(&["bench", "--repeat", "1000000"]).expect_code(2).ran_nothing().stderr_has("at most 1000");
}

/// A load no scenario may have is refused before anything is built: four
/// billion teammates filled memory, ten million aborted on an allocation.
#[test]
fn bench_refuses_a_team_larger_than_a_scenarios_and_every_command_a_thread_count_past_256() {
    handshake(&["bench", "--teammates", "4294967295"]).expect_code(2).stderr_has("at most 100000 --teammates");
    handshake(&["bench", "--teammates", "100000", "--in-flight", "100"]).expect_code(2).stderr_has("in flight");
    for (command, done) in [("run", "run"), ("explore", "explored"), ("fuzz", "fuzzed"), ("shrink", "shrunk")] {
        let mut args = vec![command, "scenarios/01-happy-shutdown.toml", "--jobs", "5000"];
        if command == "run" {
            args.extend(["--seeds", "1..3"]);
        }
        handshake(&args).expect_code(2).stderr_has(&format!("give at most 256; nothing was {done}"));
    }
}

// ------------------------------------------- issue 19, point 8: what is read

/// `handshake args` under a 1 GB address-space limit, stopped after
/// `seconds` if it has not ended: the status, or `None` if it was stopped.
/// Before, these inputs were read without end (a hang, or memory to the limit).
#[cfg(unix)]
fn bounded(args: &[&str], stdin: std::process::Stdio, seconds: u64) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 1000000 && exec \"$0\" \"$@\""])
        .arg(common::binary::bin())
        .args(args)
        .current_dir(common::binary::root())
        .env_remove("RUST_LOG")
        .stdin(stdin)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the program starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let code = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break status.code().or(Some(128 + 99));
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).ok();
    (code, err)
}

#[cfg(unix)]
#[test]
fn a_character_device_is_refused_without_reading_it() {
    for command in ["check", "run", "explore", "shrink", "fuzz", "merge"] {
        let (code, err) = bounded(&[command, "/dev/zero"], std::process::Stdio::null(), 10);
        assert_eq!(code, Some(2), "{command} /dev/zero: {err}");
        assert!(err.contains("/dev/zero") && err.contains("character device"), "{command}: {err}");
        assert!(err.contains("a regular file, or a pipe"), "says what is allowed: {err}");
    }
}

#[cfg(unix)]
#[test]
fn an_endless_pipe_is_read_to_the_bound_and_refused() {
    let mut yes =
        std::process::Command::new("yes").arg("#x").stdout(std::process::Stdio::piped()).spawn().expect("yes starts");
    let pipe = std::process::Stdio::from(yes.stdout.take().expect("yes's output"));
    let (code, err) = bounded(&["run", "/dev/stdin"], pipe, 20);
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(code, Some(2), "{err}");
    // rustc's layout for a problem at no line: the message, then the file.
    assert!(
        err.contains("error: a scenario file may be at most 4 MiB, and the pipe gave more")
            && err.contains("--> /dev/stdin\n"),
        "{err}"
    );
    assert!(err.contains("nothing was run"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_pipe_nobody_writes_to_and_a_socket_are_refused_at_once() {
    let dir = TempDir::new("kinds");
    let fifo = dir.path("nobody.toml");
    let c = std::ffi::CString::new(fifo.as_str()).expect("a path");
    // SAFETY: mkfifo on a path in this test's own folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let (code, err) = bounded(&["check", &fifo], std::process::Stdio::null(), 10);
    assert_eq!(code, Some(2), "a FIFO with no writer: {err}");
    assert!(err.contains("error: the pipe gave nothing: no program was writing to it"), "{err}");
    assert!(err.contains(&format!("--> {fifo}\n")), "{err}");
    let socket = dir.path("s.toml");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("a socket");
    let (code, err) = bounded(&["run", &socket], std::process::Stdio::null(), 10);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("error: this is a socket, not a file") && err.contains(&format!("--> {socket}\n")), "{err}");
    // A pipe with a scenario in it is read as a file is.
    let (mut cat, pipe) = happy_through_a_pipe();
    let (code, err) = bounded(&["run", "/dev/stdin"], pipe, 20);
    let _ = cat.wait();
    assert_eq!(code, Some(0), "{err}");
}

/// `cat` writing the happy scenario into a pipe, and the pipe's end to read.
#[cfg(unix)]
fn happy_through_a_pipe() -> (std::process::Child, std::process::Stdio) {
    let mut cat = std::process::Command::new("cat")
        .arg(common::binary::root().join(HAPPY))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cat starts");
    let pipe = std::process::Stdio::from(cat.stdout.take().expect("cat's output"));
    (cat, pipe)
}

/// A sweep's threads load the scenario from the text read once: a pipe
/// cannot be read a second time (before, `--jobs 2` failed on one).
#[cfg(unix)]
#[test]
fn a_sweep_on_two_threads_plays_a_scenario_from_a_pipe() {
    let (mut cat, pipe) = happy_through_a_pipe();
    let (code, err) = bounded(&["run", "/dev/stdin", "--seeds", "1..9", "--jobs", "2"], pipe, 30);
    let _ = cat.wait();
    assert_eq!(code, Some(0), "{err}");
}

/// A hostile review: `explore --write` read the scenario again after the
/// search, and a pipe gives nothing the second time: the counterexample
/// was lost, with a false reason (an agent not named). It is written from
/// the text explored, and the replay lines say the pipe is gone.
#[cfg(unix)]
#[test]
fn explore_writes_the_counterexample_of_a_scenario_read_from_a_pipe() {
    let dir = TempDir::new("explore-pipe");
    let text = std::fs::read_to_string(common::binary::root().join(HAPPY)).unwrap();
    let text = format!("{text}\n[policy.defences]\npending_check = false\n");
    let (out, schedule) = (dir.path("found.toml"), dir.path("found.schedule"));
    let args = ["explore", "/dev/stdin", "--duplicate", "1", "--write", &out, "--save-schedule", &schedule];
    let ran = common::binary::handshake_fed(&args, &text);
    ran.expect_code(1)
        .stdout_has("matching-response")
        .stderr_has(&format!("wrote {out}"))
        .stderr_has("the scenario came from a pipe: save its text to a file to replay it");
    // The file written expects what it shows: it passes, and `-v` shows the violation.
    handshake(&["run", &out, "-v"]).expect_code(0).stdout_has("invariant matching-response");
    let written = std::fs::read_to_string(&out).expect("written");
    assert!(written.contains("violation = \"matching-response\""), "{written}");
}

/// A hostile review: `explore 99` said "cannot read the file" where `run 99`
/// says no bundled scenario has that number; and a team too big to explore
/// was refused without naming its file.
#[test]
fn explore_names_what_it_cannot_explore() {
    handshake(&["explore", "99"])
        .expect_code(2)
        .ran_nothing()
        .stderr_has("no such file, and no bundled scenario of that number or name");
    let dir = TempDir::new("explore-too-big");
    let big = dir.write("big.toml", "name = \"big\"\n[[teammate]]\nname = \"w\"\ncount = 20000\n");
    handshake(&["explore", &big]).expect_code(2).stderr_has(&format!("{big}: the team has 20000 teammates"));
}

/// A hostile review: with --expect, scenario 29's three teammates alike
/// were "no identical teammates": they are alike, and kept apart because
/// the expectations name them.
#[test]
fn explore_says_why_teammates_alike_are_not_symmetric() {
    handshake(&["explore", "29", "--expect", "--max-states", "200"])
        .expect_code(3)
        .stdout_has("symmetry: none (3 teammates alike, named by the expectations, which tells them apart)");
    let json = handshake(&["explore", "29", "--expect", "--max-states", "200", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", json.explain()));
    assert_eq!((doc["symmetric_groups"].clone(), doc["set_apart_by_expectations"].clone()), (json!([]), json!(3)));
}

/// A protocol designer's review: a search stopped at --max-states said its
/// last states were not expanded, not what it had covered. Breadth first,
/// it covered every schedule up to a depth, and says which.
#[test]
fn a_bounded_explore_says_how_deep_it_explored_everything() {
    let text = handshake(&["explore", "29", "--drop", "1", "--max-states", "400"]);
    text.expect_code(3).stdout_has("stopped at --max-states: every schedule of up to ");
    let json = handshake(&["explore", "29", "--drop", "1", "--max-states", "400", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", json.explain()));
    let depth = doc["explored_to_depth"].as_u64().expect("a depth");
    text.stdout_has(&format!("every schedule of up to {depth} steps was explored, longer ones only partly"));
    let deep = handshake(&["explore", "29", "--drop", "1", "--max-states", "400", "--order", "depth"]);
    deep.expect_code(3).stdout_has("the states counted were judged, but the last of them were not expanded");
    let json =
        handshake(&["explore", "29", "--drop", "1", "--max-states", "400", "--order", "depth", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", json.explain()));
    assert_eq!(doc["explored_to_depth"], Value::Null);
}

// ------------------------------------------ issue 19, point 11: small gaps

/// Every option that writes a file refuses a symbolic link there, before
/// anything runs, and leaves the file it points to alone. Before, --trace
/// (and the others) wrote through the link.
#[cfg(unix)]
#[test]
fn no_output_option_writes_through_a_symbolic_link() {
    let dir = TempDir::new("links");
    let precious = dir.write("precious.txt", "keep me\n");
    let link = dir.path("out");
    std::os::unix::fs::symlink(&precious, &link).expect("a link");
    for flag in ["--trace", "--svg", "--mermaid", "--html"] {
        handshake(&["run", HAPPY, flag, &link])
            .expect_code(2)
            .ran_nothing()
            .stderr_has(&format!("{flag}: {link} is a symbolic link"))
            .stderr_has("remove the link or name another file")
            .stderr_has("nothing was run");
    }
    let broken = "scenarios/12-kind-check-off.toml";
    handshake(&["explore", broken, "--write", &link])
        .expect_code(2)
        .stderr_has(&format!("--write: {link} is a symbolic link"))
        .stderr_has("nothing was explored");
    handshake(&["shrink", "tests/shrink-inputs/padded-kind-check-off.toml", "--out", &link])
        .expect_code(2)
        .stderr_has(&format!("--out: {link} is a symbolic link"))
        .stderr_has("nothing was shrunk");
    assert_eq!(std::fs::read_to_string(&precious).expect("still there"), "keep me\n");
    // A link to a device is no file to overwrite: /dev/stdout stays usable.
    let null = dir.path("null");
    std::os::unix::fs::symlink("/dev/null", &null).expect("a link");
    handshake(&["run", HAPPY, "--trace", &null]).expect_code(0);
}

#[test]
fn shrink_refuses_an_empty_name_naming_the_flag() {
    let input = "tests/shrink-inputs/padded-kind-check-off.toml";
    for bad in ["", "  ", "a\nPASS  forged"] {
        let r = handshake(&["shrink", input, "--name", bad, "--out", "-"]);
        r.expect_code(2).stderr_has("--name");
        assert!(!r.stderr.contains(input), "the flag is at fault, not the file:\n{}", r.explain());
        assert!(r.stdout.is_empty(), "nothing shrunk:\n{}", r.explain());
    }
}

#[test]
fn explore_takes_a_lossy_network_as_drop_any_and_refuses_a_count_it_cannot_read() {
    handshake(&["explore", "scenarios/41-lossy-re-ask.toml", "--drop", "any"])
        .expect_code(0)
        .stdout_has("no invariant violated");
    for bad in ["lots", "-1", "4294967295"] {
        let flag = format!("--drop={bad}");
        handshake(&["explore", "scenarios/41-lossy-re-ask.toml", &flag])
            .expect_code(2)
            .stderr_has("--drop")
            .stderr_has("give a number like 1, or `any`");
    }
}

/// Issue 44, point 2: the bundled scenarios travel with the binary. From a
/// folder with no scenarios/ (as an installed `handshake` is run), they are
/// listed, run by number or name, explored, checked, and written out to
/// edit; the written copy is the file itself, and nothing is overwritten.
#[test]
fn the_bundled_scenarios_travel_with_the_binary() {
    use common::binary::handshake_in;
    let dir = TempDir::new("bundled");
    let listed = handshake_in(&dir.0, &["scenarios"]);
    listed.expect_code(0).stdout_has(" 22  peer-deadlock ").stdout_has(&format!("{} scenarios.", bundled().len()));
    let json: Value = serde_json::from_str(&handshake_in(&dir.0, &["scenarios", "--format", "json"]).stdout).unwrap();
    assert_eq!(json["scenarios"].as_array().unwrap().len(), bundled().len());
    assert_eq!(json["scenarios"][21]["path"], "bundled:22-peer-deadlock.toml");
    // The whole about, as `--help` says, and its first sentence apart (a
    // learner's review: 03's first sentence alone taught nothing).
    let third = &json["scenarios"][2];
    assert_eq!(third["summary"], "Alice stops reading her inbox while writing.");
    assert!(
        third["about"].as_str().unwrap().contains("the timeout policy's default, kill, force-stops her"),
        "{third}"
    );

    for by in ["22", "peer-deadlock", "22-peer-deadlock.toml"] {
        handshake_in(&dir.0, &["run", by]).expect_code(0).stdout_has("PASS  peer-deadlock-broken-by-timeouts");
    }
    handshake_in(&dir.0, &["explore", "22"]).expect_code(0).stdout_has("a deadlock can form");
    // No scenarios/ folder here: every bundled one, said on stderr.
    let all = handshake_in(&dir.0, &["check"]);
    all.expect_code(0).stderr_has("no scenarios/ folder here").stdout_has(&format!("{} ok, 0 bad", bundled().len()));
    handshake_in(&dir.0, &["run", "999"])
        .expect_code(2)
        .stderr_has("`cargo run --release -- scenarios` lists")
        .ran_nothing();

    handshake_in(&dir.0, &["new", "--from", "22", "mine.toml"]).expect_code(0).stdout_has("wrote mine.toml");
    let original = std::fs::read_to_string(common::binary::root().join("scenarios/22-peer-deadlock.toml")).unwrap();
    assert_eq!(std::fs::read_to_string(dir.0.join("mine.toml")).unwrap(), original);
    let again = handshake_in(&dir.0, &["new", "mine.toml"]);
    again.expect_code(2).stderr_has("already exists");
    assert_eq!(std::fs::read_to_string(dir.0.join("mine.toml")).unwrap(), original, "nothing overwritten");
    handshake_in(&dir.0, &["new", "--from", "nope", "other.toml"]).expect_code(2).stderr_has("--from nope");
    assert!(!dir.0.join("other.toml").exists());
    handshake_in(&dir.0, &["new", "blank.toml"]).expect_code(0);
    handshake_in(&dir.0, &["run", "blank.toml"]).expect_code(0).stdout_has("1 passed");
}

/// A scenario path need not be UTF-8: such a path is read as a path (a
/// bundled scenario is only ever named in UTF-8).
#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_is_still_read() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("not-utf8");
    let name = std::ffi::OsStr::from_bytes(b"a\xff.toml");
    std::fs::write(dir.0.join(name), "name = \"x\"\nabout = \"y\"\n[[teammate]]\nname = \"alice\"\n").unwrap();
    let out = std::process::Command::new(common::binary::bin()).arg("check").arg(dir.0.join(name)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Where fuzz writes its finds is checked before any run: a file in the
/// way, or a missing parent folder, had every find lost after the whole fuzz.
#[test]
fn fuzz_refuses_an_out_it_could_not_write_finds_to_before_fuzzing() {
    let dir = std::env::temp_dir().join(format!("handshake-fuzz-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    for (out, said) in [(file.clone(), "is a file, not a folder"), (dir.join("no/finds"), "there is no folder")] {
        let out = out.display().to_string();
        handshake(&["fuzz", "scenarios/01-happy-shutdown.toml", "--seeds", "1..3", "--out", &out])
            .expect_code(2)
            .stderr_has(said)
            .stderr_has("nothing was fuzzed");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x", "the file in the way is untouched");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostile review: a file named `-x.toml`, run as `run -- -x.toml`, got
/// a reproduce line `run -x.toml …`, which reads the name as a flag.
#[test]
fn a_reproduce_line_for_a_file_whose_name_starts_with_a_dash_runs_it() {
    let dir = TempDir::new("dash");
    dir.write("-x.toml", WRONG_EXPECTATION);
    let r = common::binary::handshake_in(&dir.0, &["run", "--", "-x.toml"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let line = r.stdout.lines().find(|l| l.contains("reproduce:")).unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(line.contains(" run ./-x.toml --seed "), "{line}");
    let words: Vec<&str> = line.split_once("reproduce: ").expect("the command").1.split(' ').collect();
    // Past the program as `cargo test` started it (`cargo run --release --`).
    let from = words.iter().position(|w| *w == "--").map_or(1, |i| i + 1);
    let again = common::binary::handshake_in(&dir.0, &words[from..]);
    assert_eq!(again.code, 1, "the line runs the file again: {}{}", again.stdout, again.stderr);
}

/// A read-through: the scenario reader's hints named `handshake`, which is
/// not on the path of one who typed `cargo run --release --`. They name the
/// program as it was started, as every reproduce line does.
#[test]
fn a_missing_file_or_bundled_name_hints_with_the_program_as_started() {
    let dir = TempDir::new("hint");
    for (command, hint) in [("run", "lists the bundled ones"), ("explore", "lists them")] {
        let arg = "bundled:99-no-such.toml";
        let r = common::binary::handshake_in(&dir.0, &[command, arg]);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(&format!("`cargo run --release -- scenarios` {hint}")), "{arg}: {}", r.stderr);
    }
}

/// A hostile review: a folder inside the one named that could not be read
/// was blamed on the one named ("c: cannot read the folder", though `c`
/// reads). The folder that could not be read is named. Run as another user
/// under `setpriv` where the tests run as root, who reads every folder.
#[cfg(unix)]
#[cfg_attr(
    not(has_setpriv),
    ignore = "needs `setpriv` (util-linux), not found when the tests were built, to run as a user who may not read a folder"
)]
#[test]
fn a_folder_inside_that_cannot_be_read_is_the_one_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("unreadable-inside");
    let scenario = std::fs::read_to_string(common::binary::root().join(HAPPY)).unwrap();
    dir.write("c/a.toml", &scenario);
    dir.write("c/sub/locked/b.toml", &scenario);
    let c = dir.0.join("c");
    for p in [dir.0.clone(), c.clone(), c.join("sub"), c.join("a.toml")] {
        let mode = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::set_permissions(c.join("sub/locked"), std::fs::Permissions::from_mode(0o700)).unwrap();
    // SAFETY: reads the process's user id, nothing more.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = if root {
        let mut setpriv = std::process::Command::new("setpriv");
        setpriv.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(common::binary::bin());
        setpriv
    } else {
        std::process::Command::new(common::binary::bin())
    };
    let out = command.args(["check", c.to_str().unwrap()]).output().expect("the program runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("locked: cannot read the folder"), "{stderr}");
}
