//! `handshake shrink`: padded files come back to their essentials, 1-minimal;
//! the written file replays under `run`; a file that breaks nothing is
//! refused; the cap holds. And every saved regression in `regressions/`
//! replays to exactly the violations it expects.

mod common;

use common::binary::{handshake, TempDir};
use handshake::format::{file::read, write::document};
use handshake::scenario::{load_str, run_scenario, Expect, Invariant, RunOptions};
use handshake::shrink::{shrink, Options, ShrinkError, Shrunk, DEFAULT_MAX_RUNS};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn input(name: &str) -> (String, String) {
    let path = format!("tests/shrink-inputs/{name}");
    let src = std::fs::read_to_string(root().join(&path)).expect("input exists");
    (path, src)
}

fn shrunk(name: &str, opts: &Options) -> Shrunk {
    let (path, src) = input(name);
    match shrink(&path, &src, opts) {
        Ok(s) => s,
        Err(e) => panic!("{name} does not shrink: {e}"),
    }
}

/// Whether `text` (expectations and all) breaks `target` when run with its seed;
/// a file that does not load does not.
fn breaks(text: &str, target: Invariant) -> bool {
    let Ok(s) = load_str("candidate.toml", text) else { return false };
    let r = run_scenario(&s, s.default_seed(), RunOptions::default());
    r.violations.iter().any(|v| v.starts_with(&format!("{}:", target.name())))
}

/// Removing any one fault, step or teammate of the shrunk file makes the violation go.
fn assert_one_minimal(s: &Shrunk) {
    let doc: Table = s.text.parse().expect("the written file parses");
    assert!(breaks(&s.text, s.invariant), "the written file does not break {}:\n{}", s.invariant, s.text);
    for list in ["fault", "step", "teammate"] {
        let n = doc.get(list).and_then(Value::as_array).map_or(0, Vec::len);
        for i in 0..n {
            let mut d = doc.clone();
            let mut gone = None;
            if let Some(Value::Array(a)) = d.get_mut(list) {
                let removed = a.remove(i);
                if list == "teammate" {
                    gone = removed.get("name").and_then(Value::as_str).map(str::to_string);
                }
                if a.is_empty() {
                    d.remove(list);
                }
            }
            // A teammate goes with the steps and faults that name it, as the shrinker removes it.
            if let Some(name) = gone {
                without_naming(&mut d, &name);
            }
            assert!(
                !breaks(&toml::to_string(&d).expect("a table writes"), s.invariant),
                "without {list} #{} the file still breaks {}: not 1-minimal\n{}",
                i + 1,
                s.invariant,
                s.text
            );
        }
    }
}

/// Removes the steps and faults that name `name` or quote its requests.
fn without_naming(doc: &mut Table, name: &str) {
    let names = |v: &Value| -> bool {
        ["to", "from", "agent", "between", "request"].iter().any(|k| match v.get(k) {
            Some(Value::String(s)) => s == name || s.starts_with(&format!("{name}/")),
            Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(name)),
            _ => false,
        }) || v
            .get("message")
            .and_then(|m| m.get("request_id"))
            .and_then(Value::as_str)
            .is_some_and(|r| r.starts_with(&format!("@{name}/")))
    };
    for list in ["step", "fault"] {
        if let Some(Value::Array(a)) = doc.get_mut(list) {
            a.retain(|v| !names(v));
            if a.is_empty() {
                doc.remove(list);
            }
        }
    }
}

fn count(text: &str, list: &str) -> usize {
    let doc: Table = text.parse().expect("parses");
    doc.get(list).and_then(Value::as_array).map_or(0, Vec::len)
}

#[test]
fn padded_files_shrink_to_their_essentials() {
    // (input, invariant, faults, steps, teammates left)
    let cases = [
        ("padded-sender-auth-off.toml", Invariant::MatchingResponse, 1, 0, 1),
        ("padded-kind-check-off.toml", Invariant::MatchingResponse, 1, 0, 1),
        ("padded-expired-request-obeyed.toml", Invariant::ExpiryPolicy, 1, 1, 1),
        // Two faults that matter only together: both stay.
        ("two-delays-add-up.toml", Invariant::ExpiryPolicy, 2, 1, 1),
        // Nine of ten delays are needed together, among twenty that are not.
        ("nine-of-ten-delays.toml", Invariant::ExpiryPolicy, 9, 1, 1),
    ];
    for (name, invariant, faults, steps, teammates) in cases {
        let s = shrunk(name, &Options::default());
        eprintln!("{name}: {} re-runs, {:?}", s.runs, s.elapsed);
        assert_eq!(s.invariant, invariant, "{name}");
        assert!(s.minimal && !s.capped, "{name}");
        assert!(s.runs <= DEFAULT_MAX_RUNS, "{name}: {} runs", s.runs);
        assert_eq!(
            (s.after.faults, s.after.steps, s.after.teammates),
            (faults, steps, teammates),
            "{name}\n{}",
            s.text
        );
        assert!(s.before.faults > s.after.faults && s.before.teammates > s.after.teammates);
        assert!(s.passes, "{name}: the written file does not pass under run\n{}", s.text);
        assert!(s.text.contains("-shrunk\"") && s.text.contains("seed = 1"), "{}", s.text);
        assert!(s.text.contains(&format!("violation = \"{}\"", invariant.name())), "{}", s.text);
        assert_one_minimal(&s);
    }
}

#[test]
fn the_essential_fault_survives_and_only_what_it_needs_is_kept() {
    let s = shrunk("padded-sender-auth-off.toml", &Options::default());
    let doc: Table = s.text.parse().unwrap();
    let fault = &doc["fault"].as_array().unwrap()[0];
    assert_eq!(fault["kind"].as_str(), Some("forge"));
    assert_eq!(doc["teammate"].as_array().unwrap()[0]["name"].as_str(), Some("alice"));
    // The padding's own defence (pending_check) is back on; sender_auth stays off.
    let defences = doc["policy"]["defences"].as_table().unwrap();
    assert_eq!(defences.get("sender_auth").and_then(Value::as_bool), Some(false));
    assert!(defences.get("pending_check").is_none(), "{}", s.text);
    // A fixed latency, the forgery as early as it can be.
    assert!(doc["policy"].get("latency").is_none(), "{}", s.text);
    assert_eq!(fault["at"].as_str(), Some("1ms"));
    assert!(s.changes.iter().any(|c| c.contains("latency 1ms..20ms → 1ms")), "{:?}", s.changes);
}

/// A hostile review: the summary listed "fault #1 (partition): until = "1ms"
/// removed" of a file whose shrunk form holds one fault, a forgery: a
/// change kept in one round to a fault the next round removed, numbered by
/// its place at that moment. Faults and steps are numbered by their place
/// in the file shrunk, and what went is not listed.
#[test]
fn the_summary_lists_only_changes_to_what_the_shrunk_file_keeps() {
    let opts = Options { seed: Some(92), ..Options::default() };
    let s = shrunk("simplified-then-removed.toml", &opts);
    let doc: Table = s.text.parse().unwrap();
    let kinds: Vec<&str> = doc["fault"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
    assert_eq!(kinds, ["forge"], "{}", s.text);
    let about_faults: Vec<&String> = s.changes.iter().filter(|c| c.starts_with("fault #")).collect();
    assert!(about_faults.iter().all(|c| c.starts_with("fault #4 (forge)")), "{:?}", s.changes);
    assert!(!s.changes.iter().any(|c| c.contains("partition")), "{:?}", s.changes);
}

#[test]
fn the_written_file_replays_under_run() {
    let dir = TempDir::new("shrink");
    let out_s = dir.path("out.toml");
    handshake(&["shrink", "tests/shrink-inputs/padded-expired-request-obeyed.toml", "--seed", "1", "--out", &out_s])
        .expect_code(0)
        .stdout_has("breaks expiry-policy")
        .stdout_has("1-minimal")
        .stdout_has("wrote");
    let text = std::fs::read_to_string(&out_s).expect("written");
    assert!(text.contains("from padded-expired-request-obeyed.toml seed 1: 5 faults → 1"), "{text}");
    handshake(&["run", &out_s]).expect_code(0).stdout_has("PASS");
    // `--out -` prints the file and writes nothing.
    let printed = handshake(&["shrink", "tests/shrink-inputs/padded-expired-request-obeyed.toml", "--out", "-"]);
    printed.expect_code(0);
    assert_eq!(printed.stdout, text);
}

#[test]
fn a_file_that_breaks_nothing_is_refused() {
    handshake(&["shrink", "scenarios/01-happy-shutdown.toml", "--seed", "3", "--out", "-"])
        .expect_code(2)
        .stderr_has("error: nothing to shrink: the run breaks no invariant");
    // Bad input is said as every command says it (a scenario author's review).
    handshake(&["shrink", "tests/shrink-inputs/padded-expired-request-obeyed.toml", "--max-runs", "2", "--out", "-"])
        .expect_code(2)
        .stderr_has("error: --max-runs 2 is too few")
        .stderr_has("; nothing was shrunk");
    let src = std::fs::read_to_string(root().join("scenarios/01-happy-shutdown.toml")).unwrap();
    let e = shrink("01.toml", &src, &Options::default()).unwrap_err();
    assert!(matches!(e, ShrinkError::NothingToShrink(_)), "{e:?}");
    // A file that expects what it breaks has nothing left to shrink, unless asked.
    let src = std::fs::read_to_string(root().join("scenarios/14-sender-auth-off.toml")).unwrap();
    let e = shrink("14.toml", &src, &Options::default()).unwrap_err();
    assert!(e.to_string().contains("which it expects"), "{e}");
    let s = shrink("14.toml", &src, &Options { invariant: Some(Invariant::GatedAction), ..Options::default() })
        .expect("shrinks when the invariant is named");
    assert_eq!(s.invariant, Invariant::GatedAction);
    assert!(s.passes && s.minimal);
    handshake(&["shrink", "no-such-file.toml"]).expect_code(2);
    handshake(&["shrink", "scenarios/14-sender-auth-off.toml", "--invariant", "no-such"]).expect_code(2);
}

#[test]
fn the_cap_stops_it_and_what_it_has_still_reproduces() {
    let s = shrunk("padded-kind-check-off.toml", &Options { max_runs: 5, ..Options::default() });
    assert!(s.capped && !s.minimal);
    assert!(s.runs <= 5, "{} runs", s.runs);
    assert!(s.passes && breaks(&s.text, s.invariant), "{}", s.text);
    assert!(s.text.contains("stopped by the cap"), "{}", s.text);
    let (path, src) = input("padded-kind-check-off.toml");
    assert!(matches!(
        shrink(&path, &src, &Options { max_runs: 2, ..Options::default() }),
        Err(ShrinkError::BadInput(_))
    ));
}

/// Candidates asked about before Ctrl-C "arrives" (a static: `stop` is a
/// plain function, as a signal handler's flag is read).
static ASKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn stop_at_the_fourth_ask() -> bool {
    ASKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 3
}

fn stop_at_once() -> bool {
    true
}

#[test]
fn ctrl_c_ends_it_as_the_cap_does_with_the_smallest_file_so_far() {
    let whole = shrunk("padded-kind-check-off.toml", &Options::default());
    let s = shrunk("padded-kind-check-off.toml", &Options { stop: stop_at_the_fourth_ask, ..Options::default() });
    assert!(s.interrupted && !s.capped && !s.minimal, "{s:?}");
    // Three candidates, the original and the written file's check.
    assert_eq!(s.runs, 5, "{s:?}");
    assert!(s.passes && breaks(&s.text, s.invariant), "{}", s.text);
    assert!(s.text.contains("stopped by Ctrl-C: not 1-minimal"), "{}", s.text);
    // Smaller than the input, not yet as small as a whole shrink makes it.
    assert!(s.after.faults + s.after.steps < s.before.faults + s.before.steps, "{s:?}");
    assert!(
        count(&s.text, "fault") + count(&s.text, "step") > count(&whole.text, "fault") + count(&whole.text, "step")
    );
    // Nothing played yet: nothing smaller to write.
    let (path, src) = input("padded-kind-check-off.toml");
    let e = shrink(&path, &src, &Options { stop: stop_at_once, ..Options::default() }).unwrap_err();
    assert!(matches!(e, ShrinkError::Interrupted(_)), "{e:?}");
}

#[test]
fn a_count_group_shrinks_to_the_member_that_matters() {
    // worker-5's plan is approved by a forgery: workers 6 to 8 do not matter,
    // 1 to 4 cannot go without renaming worker-5.
    let src = r#"name = "group"
[policy.defences]
sender_auth = false
[lead]
on_plan = "ignore"
[[teammate]]
name = "worker"
count = 8
require_plan = true
work = [{ write = "out.txt", steps = 2 }]
[[fault]]
kind = "forge"
at = "2s"
from = "lead"
to = "worker-5"
message = { type = "plan_approval_response", request_id = "@worker-5/plan/1", approve = true }
"#;
    let s = shrink("group.toml", src, &Options::default()).expect("shrinks");
    assert_eq!(s.after.agents, 5, "{}", s.text);
    assert!(s.changes.iter().any(|c| c.contains("count 8 → 5")), "{:?}", s.changes);
    assert!(s.passes);
}

/// A find as `fuzz` might write it: the one forgery that matters among many
/// faults, steps and teammates that do not.
fn big_input(noise: usize) -> String {
    let mut out = String::from(
        "name = \"big\"\nend = \"60s\"\n[policy]\nlatency = \"1ms..10ms\"\n[policy.defences]\nsender_auth = false\n\
         [lead]\non_plan = \"ignore\"\n[[teammate]]\nname = \"alice\"\nrequire_plan = true\n\
         work = [{ write = \"m.sql\", steps = 3, step_time = \"500ms\" }]\n",
    );
    for k in 0..noise {
        out.push_str(&format!(
            "[[teammate]]\nname = \"n{k}\"\nwork = [{{ shell = \"make\", steps = {}, step_time = \"300ms\" }}]\n",
            k % 5 + 1
        ));
    }
    for k in 0..noise * 2 {
        let t = k % noise;
        let action = if k % 3 == 0 { "shutdown" } else { "message" };
        out.push_str(&format!("[[step]]\nat = \"{}ms\"\ndo = \"{action}\"\nto = \"n{t}\"\n", 200 * k + 100));
    }
    for k in 0..noise * 3 {
        let t = k % noise;
        let (at, until) = (100 * k, 100 * k + 2000);
        let fault = match k % 6 {
            0 => format!("kind = \"delay\"\nto = \"n{t}\"\ndelay = \"5ms..50ms\"\nprobability = 0.5"),
            1 => format!("kind = \"drop\"\ntype = \"message\"\nfrom = \"lead\"\nto = \"n{t}\"\ncount = 2"),
            2 => format!("kind = \"crash\"\nagent = \"n{t}\"\nat = \"{at}ms\"\nrestart = \"1s\""),
            3 => format!("kind = \"stall\"\nagent = \"n{t}\"\nat = \"{at}ms\"\nuntil = \"{until}ms\""),
            4 => {
                format!("kind = \"partition\"\nbetween = [\"lead\", \"n{t}\"]\nat = \"{at}ms\"\nuntil = \"{until}ms\"")
            }
            _ => "kind = \"duplicate\"\ntype = \"shutdown_response\"\nprobability = 0.3".to_string(),
        };
        out.push_str(&format!("[[fault]]\n{fault}\n"));
        if k == noise {
            out.push_str(
                "[[fault]]\nkind = \"forge\"\nat = \"4s\"\nfrom = \"lead\"\nto = \"alice\"\n\
                 message = { type = \"plan_approval_response\", request_id = \"@alice/plan/1\", approve = true }\n",
            );
        }
    }
    out
}

#[test]
fn a_big_find_shrinks_within_the_cap() {
    let src = big_input(12);
    let scenario = load_str("big.toml", &src).expect("loads");
    assert!(!scenario.expects.iter().any(|e| matches!(e, Expect::Violation(_))));
    let s = shrink("big.toml", &src, &Options::default()).expect("shrinks");
    eprintln!(
        "big: {} faults, {} steps, {} teammates → {} / {} / {}: {} re-runs, {:?}",
        s.before.faults,
        s.before.steps,
        s.before.teammates,
        s.after.faults,
        s.after.steps,
        s.after.teammates,
        s.runs,
        s.elapsed
    );
    assert!(s.minimal && !s.capped && s.runs <= DEFAULT_MAX_RUNS, "{} runs", s.runs);
    assert_eq!((s.after.faults, s.after.steps, s.after.teammates), (1, 0, 1), "{}", s.text);
    assert_eq!(count(&s.text, "fault"), 1);
    assert_one_minimal(&s);
}

/// The writer the shrinker uses (the format's) keeps a file's meaning: every
/// bundled scenario, read as the format reads it and written back, runs the same.
#[test]
fn written_documents_run_as_the_files_they_came_from() {
    for f in common::bundled_files() {
        let src = std::fs::read_to_string(&f).unwrap();
        let (doc, problems) = read(&src).unwrap();
        assert!(problems.is_empty(), "{}: {problems:?}", f.display());
        let text = document(&doc);
        let (a, b) = (load_str("a.toml", &src).unwrap(), load_str("b.toml", &text));
        let b = b.unwrap_or_else(|e| panic!("{}: written back, it does not load: {}\n{text}", f.display(), e[0]));
        let (ra, rb) = (
            run_scenario(&a, a.default_seed(), RunOptions::default()),
            run_scenario(&b, b.default_seed(), RunOptions::default()),
        );
        assert_eq!((ra.passed, &ra.violations, &ra.counts), (rb.passed, &rb.violations, &rb.counts), "{}", f.display());
    }
}

/// The saved regressions: each file there passes under `run` with its own
/// seed, breaking exactly the invariants it expects.
#[test]
fn saved_regressions_replay() {
    let dir = root().join("regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("regressions/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "at least two saved regressions");
    let mut bad = Vec::new();
    for f in &files {
        let s = match handshake::scenario::load_file(f) {
            Ok(s) => s,
            Err(e) => {
                bad.push(format!("{}: does not load: {}", f.display(), e[0]));
                continue;
            }
        };
        let r = run_scenario(&s, s.default_seed(), RunOptions::default());
        let mut expected: Vec<&str> =
            s.expects.iter().filter_map(|e| if let Expect::Violation(i) = e { Some(i.name()) } else { None }).collect();
        let mut seen: Vec<&str> = r.violations.iter().filter_map(|v| v.split_once(':').map(|(n, _)| n)).collect();
        expected.sort_unstable();
        seen.sort_unstable();
        seen.dedup();
        if !r.passed || expected != seen || expected.is_empty() {
            bad.push(format!(
                "{} seed {}: passed {}, expects {expected:?}, breaks {seen:?}: {:?}",
                f.display(),
                s.default_seed(),
                r.passed,
                r.failures.iter().map(|f| format!("{} — {}", f.check, f.message)).collect::<Vec<_>>()
            ));
        }
    }
    assert!(bad.is_empty(), "saved regressions that do not replay:\n{}", bad.join("\n"));
}

/// What a shrink decided, everything but the real time and the runs really
/// played (which depend on the machine and the number of threads).
fn decided(s: &Shrunk) -> String {
    format!(
        "{}\n{:?} {} {:?} {:?} {:?} {} {} {} {} {:?} {}",
        s.text,
        s.invariant,
        s.detail,
        s.before,
        s.after,
        s.changes,
        s.runs,
        s.max_runs,
        s.capped,
        s.minimal,
        s.broken,
        s.passes
    )
}

#[test]
fn any_number_of_threads_decides_the_same_and_counts_the_same_re_runs() {
    // (input, cap): the caps stop the shrink early, in ddmin and in the
    // simplification, where candidates played ahead must not count.
    let cases = [
        ("nine-of-ten-delays.toml", DEFAULT_MAX_RUNS),
        ("nine-of-ten-delays.toml", 7),
        ("nine-of-ten-delays.toml", 40),
        ("nine-of-ten-delays.toml", 160),
        ("two-delays-add-up.toml", DEFAULT_MAX_RUNS),
        ("padded-kind-check-off.toml", 12),
    ];
    for (name, max_runs) in cases {
        let one = shrunk(name, &Options { max_runs, jobs: 1, ..Options::default() });
        assert_eq!(one.played, one.runs, "{name}: one thread plays exactly what it counts");
        assert_eq!(one.jobs, 1);
        for jobs in [2, 3] {
            let s = shrunk(name, &Options { max_runs, jobs, ..Options::default() });
            assert_eq!(decided(&s), decided(&one), "{name}, cap {max_runs}, {jobs} threads");
            assert!(s.played >= s.runs, "{name}: {jobs} threads played {} of {} counted", s.played, s.runs);
            assert_eq!(s.jobs, jobs);
        }
    }
    let (path, src) = input("two-delays-add-up.toml");
    assert!(matches!(shrink(&path, &src, &Options { jobs: 0, ..Options::default() }), Err(ShrinkError::BadInput(_))));
    // More threads than any round has candidates: only those it can use are started.
    let one = shrunk("two-delays-add-up.toml", &Options::default());
    let many = shrunk("two-delays-add-up.toml", &Options { jobs: 10_000, ..Options::default() });
    assert_eq!(decided(&many), decided(&one));
    let longest = one.before.faults.max(one.before.steps).max(one.before.teammates);
    assert!(many.jobs > 1 && many.jobs <= 2 * longest + 1, "{} threads", many.jobs);
}

/// A report with the one line that depends on the machine (`  real ...`) taken out.
fn without_real(report: &str) -> String {
    report.lines().filter(|l| !l.starts_with("  real ")).map(|l| format!("{l}\n")).collect()
}

#[test]
fn one_two_and_three_jobs_write_the_same_file_and_print_the_same_report() {
    let dir = TempDir::new("shrink-jobs");
    let input = "tests/shrink-inputs/nine-of-ten-delays.toml";
    let run = |jobs: &str| {
        let out = dir.path(&format!("j{jobs}/out.toml"));
        std::fs::create_dir_all(dir.path(&format!("j{jobs}"))).unwrap();
        let r = handshake(&["shrink", input, "--out", &out, "--jobs", jobs]);
        r.expect_code(0).stdout_has("  real ").stdout_has(if jobs == "1" { "1 thread:" } else { "threads:" });
        let file = std::fs::read_to_string(&out).expect("written");
        (file, without_real(&r.stdout.replace(&format!("j{jobs}/"), "jN/")))
    };
    let (file, report) = run("1");
    assert!(report.contains("re-runs (cap 2000), 1-minimal"), "{report}");
    for jobs in ["2", "3"] {
        let (f, r) = run(jobs);
        assert_eq!(f, file, "--jobs {jobs} wrote another file");
        assert_eq!(r, report, "--jobs {jobs} printed another report");
    }
    // `--out -`: the file on stdout, the report on stderr, the same for any number.
    let printed = |jobs: &str| {
        let r = handshake(&["shrink", input, "--out", "-", "--jobs", jobs]);
        r.expect_code(0);
        (r.stdout.clone(), without_real(&r.stderr))
    };
    let p1 = printed("1");
    assert_eq!(p1.0, file);
    assert_eq!(printed("3"), p1);
    handshake(&["shrink", input, "--jobs", "0"]).expect_code(2).stderr_has("--jobs must be at least 1");
}

#[test]
fn the_json_report_says_what_the_text_says_and_parses() {
    let dir = TempDir::new("shrink-json");
    let input = "tests/shrink-inputs/padded-sender-auth-off.toml";
    let json = |jobs: &str| {
        let out = dir.path(&format!("out-{jobs}.toml"));
        let r = handshake(&["shrink", input, "--seed", "1", "--out", &out, "--format", "json", "--jobs", jobs]);
        r.expect_code(0);
        let doc: serde_json::Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", r.explain()));
        (doc, out)
    };
    let (doc, out) = json("2");
    assert_eq!(doc["file"], input);
    assert_eq!(doc["seed"], 1);
    assert_eq!(doc["invariant"], "matching-response");
    assert!(doc["detail"].as_str().is_some_and(|d| d.contains("alice/plan/1")), "{doc}");
    assert_eq!(doc["broken"], serde_json::json!(["matching-response"]));
    assert_eq!(doc["before"], serde_json::json!({"faults": 8, "steps": 5, "teammates": 3, "agents": 8}));
    assert_eq!(doc["after"], serde_json::json!({"faults": 1, "steps": 0, "teammates": 1, "agents": 1}));
    assert_eq!(
        (doc["minimal"].as_bool(), doc["capped"].as_bool(), doc["passes"].as_bool()),
        (Some(true), Some(false), Some(true))
    );
    assert_eq!(doc["max_runs"], DEFAULT_MAX_RUNS);
    assert_eq!(doc["written"], out.as_str());
    let written = std::fs::read_to_string(&out).expect("written");
    assert_eq!(doc["text"], written.as_str());
    assert!(
        doc["changes"].as_array().is_some_and(|c| c.iter().any(|c| c == "latency 1ms..20ms → 1ms (the default)")),
        "{doc}"
    );
    let reruns = doc["reruns"].as_u64().expect("reruns");
    assert!(written.contains(&format!("({reruns} re-runs, 1-minimal)")), "{written}");
    assert!(doc["real_seconds"].as_f64().is_some_and(|t| t > 0.0), "{doc}");
    assert_eq!(doc["played"]["jobs"], 2);
    assert!(doc["played"]["runs"].as_u64().is_some_and(|p| p >= reruns), "{doc}");
    // The text report counts the same re-runs.
    let text = handshake(&["shrink", input, "--seed", "1", "--out", &dir.path("text.toml"), "--jobs", "1"]);
    text.expect_code(0).stdout_has(&format!("  {reruns} re-runs (cap 2000), 1-minimal"));
    // Only the fields marked real (and where it was written) differ with the number of threads.
    let strip = |mut d: serde_json::Value| {
        let m = d.as_object_mut().unwrap();
        for k in ["real_seconds", "played", "written"] {
            assert!(m.remove(k).is_some(), "{k} missing");
        }
        d
    };
    assert_eq!(strip(json("1").0), strip(doc));
    // `--out -` with json: nothing written, the file in the document.
    let r = handshake(&["shrink", input, "--seed", "1", "--out", "-", "--format", "json"]);
    r.expect_code(0);
    let d: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON document on stdout");
    assert!(d["written"].is_null());
    assert_eq!(d["text"], written.as_str());
}

/// A hostile review: `cat f.toml | handshake shrink /dev/stdin` wrote
/// `/dev/stdin-shrunk.toml`, a file in /dev. A pipe has no folder beside it
/// for the shrunk file: `--out` is asked for, and nothing is shrunk.
#[cfg(unix)]
#[test]
fn a_shrink_of_a_pipe_asks_where_to_write() {
    let text = include_str!("../scenarios/12-kind-check-off.toml");
    let r = common::binary::handshake_fed(&["shrink", "/dev/stdin", "--seed", "1"], text);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is a pipe") && r.stderr.contains("--out"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was shrunk"), "{}", r.stderr);
    assert!(!std::path::Path::new("/dev/stdin-shrunk.toml").exists());
    let args = ["shrink", "/dev/stdin", "--out", "-", "--invariant", "gated-action", "--max-runs", "5"];
    let to_stdout = common::binary::handshake_fed(&args, text);
    assert_eq!(to_stdout.code, 0, "with --out - it shrinks: {}", to_stdout.stderr);
    assert!(to_stdout.stdout.contains("[[teammate]]"), "the shrunk file on stdout: {}", to_stdout.stdout);
}
