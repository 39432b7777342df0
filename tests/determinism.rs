//! Same file, same seed, same trace, byte for byte (design.md, "Determinism
//! rules"); a different seed changes what is drawn from it.
//!
//! Checked twice: through the binary (`run FILE --seed 7 --trace OUT`, the
//! files compared byte for byte) and through the library (the events of a
//! kept outcome rendered with `Stamped::to_json`), and the two must agree.

mod common;

use common::{bundled_files as bundled, library_trace};
use handshake::scenario::{load_file, run_scenario, RunOptions, Scenario};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: u64 = 7;
const LATENCY_RANGE: &str = "scenarios/21-whole-team-shutdown.toml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn load(path: &Path) -> Scenario {
    load_file(path).unwrap_or_else(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        panic!("{} does not load:\n{}", path.display(), lines.join("\n"))
    })
}

/// A unique scratch folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("handshake-det-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `handshake run FILE --seed SEED --trace OUT`, returning the bytes written.
fn binary_trace(file: &Path, seed: u64, out: &Path) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_handshake"))
        .current_dir(root())
        .env_remove("RUST_LOG")
        .arg("run")
        .arg(file)
        .arg("--seed")
        .arg(seed.to_string())
        .arg("--trace")
        .arg(out)
        .output()
        .expect("the binary starts");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{} --seed {seed} did not pass:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read(out).expect("the trace was written")
}

/// The first line where two traces part, for a readable failure.
fn first_difference(a: &str, b: &str) -> String {
    match a.lines().zip(b.lines()).enumerate().find(|(_, (x, y))| x != y) {
        Some((i, (x, y))) => format!("line {}:\n  {x}\n  {y}", i + 1),
        None => format!("one trace is a prefix of the other ({} vs {} lines)", a.lines().count(), b.lines().count()),
    }
}

#[test]
fn the_binary_writes_byte_identical_traces_for_every_bundled_scenario() {
    let dir = TempDir::new("bin");
    for file in bundled() {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let a = binary_trace(&file, SEED, &dir.0.join(format!("{stem}.a.jsonl")));
        let b = binary_trace(&file, SEED, &dir.0.join(format!("{stem}.b.jsonl")));
        assert!(!a.is_empty(), "{stem}: empty trace");
        assert!(
            a == b,
            "{stem} --seed {SEED}: two runs wrote different traces; {}",
            first_difference(&String::from_utf8_lossy(&a), &String::from_utf8_lossy(&b))
        );
        // The library renders the same bytes as the command line writes.
        let lib = library_trace(&load(&file), SEED);
        assert!(
            lib.as_bytes() == a.as_slice(),
            "{stem}: the library's trace differs from --trace's; {}",
            first_difference(&lib, &String::from_utf8_lossy(&a))
        );
    }
}

#[test]
fn the_library_gives_identical_traces_for_every_bundled_scenario_and_seed() {
    for file in bundled() {
        let s = load(&file);
        for seed in [1, SEED, 12_345] {
            let a = library_trace(&s, seed);
            let b = library_trace(&s, seed);
            assert!(a == b, "{} seed {seed}: traces differ; {}", file.display(), first_difference(&a, &b));
        }
    }
}

/// A trace without request ids, which are drawn from the seed in every
/// scenario: what is left differs only if timing or order did.
fn without_ids(trace: &str) -> Vec<Value> {
    trace
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("a JSON line");
            if let Some(m) = v.as_object_mut() {
                m.remove("request_id");
            }
            v
        })
        .collect()
}

#[test]
fn a_different_seed_draws_a_different_run() {
    let s = load(&root().join(LATENCY_RANGE));
    let a = library_trace(&s, SEED);
    let b = library_trace(&s, SEED + 1);
    assert_ne!(a, b, "seeds {SEED} and {} gave the same trace", SEED + 1);
    // Not only the ids: with a latency range the deliveries land at other times.
    let (a, b) = (without_ids(&a), without_ids(&b));
    assert_ne!(a, b, "only the request ids differ: the latency range was not drawn from the seed");
    let deliveries = |t: &[Value]| -> Vec<u64> {
        t.iter().filter(|e| e["event"] == "deliver").map(|e| e["t"].as_u64().expect("t")).collect()
    };
    let (da, db) = (deliveries(&a), deliveries(&b));
    assert_eq!(da.len(), db.len(), "the same number of deliveries whatever the seed");
    assert_ne!(da, db, "delivery times should depend on the seed");
    // Each message's one-way latency is drawn from "1ms..20ms": pair every
    // delivery with its send by `seq`.
    let latencies = |t: &[Value]| -> Vec<u64> {
        t.iter()
            .filter(|e| e["event"] == "deliver")
            .map(|d| {
                let send = t
                    .iter()
                    .find(|e| e["event"] == "send" && e["seq"] == d["seq"])
                    .unwrap_or_else(|| panic!("a delivery without its send: {d}"));
                d["t"].as_u64().unwrap() - send["t"].as_u64().unwrap()
            })
            .collect()
    };
    for (seed, l) in [(SEED, latencies(&a)), (SEED + 1, latencies(&b))] {
        assert_eq!(l.len(), 200, "seed {seed}: 100 requests and 100 responses delivered");
        assert!(l.iter().all(|ms| (1..=20).contains(ms)), "seed {seed}: a latency outside 1ms..20ms: {l:?}");
        let distinct: std::collections::BTreeSet<u64> = l.iter().copied().collect();
        assert!(distinct.len() > 5, "seed {seed}: latencies are hardly drawn at all: {distinct:?}");
    }
    // And the outcome does not change with the seed: every run still passes.
    for seed in [SEED, SEED + 1] {
        let r = run_scenario(&s, seed, RunOptions::default());
        assert!(r.passed, "seed {seed}: {:?}", r.failures);
    }
}

/// Each thread keeps one runtime and plays run after run on it (a sweep's
/// worker does). A run must not see the runs before it: every bundled
/// scenario, played on one thread after all the others (deadlocked and
/// capped runs among them, whose actors still had work when they ended),
/// gives the trace it gives on a fresh thread with a fresh runtime.
#[test]
fn a_reused_runtime_gives_every_run_the_trace_of_a_fresh_one() {
    let files = bundled();
    let scenarios: Vec<Scenario> = files.iter().map(|p| load(p)).collect();
    let reused: Vec<String> =
        [1u64, 2].iter().flat_map(|&seed| scenarios.iter().map(move |s| library_trace(s, seed))).collect();
    let mut i = 0;
    for seed in [1u64, 2] {
        for (s, path) in scenarios.iter().zip(&files) {
            // Loaded again on the fresh thread: a loaded scenario's hooks
            // may not cross threads.
            let fresh = std::thread::scope(|scope| {
                scope.spawn(|| library_trace(&load(path), seed)).join().expect("the fresh thread's run does not panic")
            });
            assert!(!fresh.is_empty(), "{} logged nothing", s.name);
            assert_eq!(reused[i], fresh, "{} --seed {seed}: the reused runtime's trace differs", s.name);
            i += 1;
        }
    }
}
