//! Every bundled scenario passes under `cargo test`: once with its own seed,
//! then over a sweep of 200 seeds. Through the library, not the binary, so a
//! failure points at the scenario and seed and says how to reproduce it.

mod common;

use handshake::scenario::{load_file, run_scenario, Report, RunOptions, Scenario};
use std::path::{Path, PathBuf};
use std::time::Instant;

const SWEEP: std::ops::RangeInclusive<u64> = 1..=200;

/// The bundled scenarios, loaded.
fn bundled() -> Vec<(PathBuf, Scenario)> {
    let mut bad = Vec::new();
    let mut out = Vec::new();
    for f in common::bundled_files() {
        match load_file(&f) {
            Ok(s) => out.push((f, s)),
            Err(errors) => bad.extend(errors.iter().map(|e| e.to_string())),
        }
    }
    assert!(bad.is_empty(), "bundled scenarios that do not load:\n{}", bad.join("\n"));
    out
}

/// The path as a user at the crate's root would type it.
fn shown(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

fn reproduce(path: &Path, seed: u64) -> String {
    format!("cargo run --release -- run {} --seed {seed} -v", shown(path))
}

/// Every failed check of a report, one per line.
fn failures(r: &Report) -> String {
    let mut out = String::new();
    for f in &r.failures {
        out.push_str(&format!("    ✗ {} — {} (at {} ms)\n", f.check, f.message, f.at_ms));
        for line in &f.context {
            out.push_str(&format!("        {line}\n"));
        }
    }
    out
}

#[test]
fn every_bundled_scenario_passes_with_its_own_seed() {
    let mut failed = Vec::new();
    let all = bundled();
    for (path, s) in &all {
        let seed = s.default_seed();
        let r = run_scenario(s, seed, RunOptions::default());
        assert_eq!(r.seed, seed);
        assert_eq!(r.name, s.name);
        if !r.passed {
            failed.push(format!(
                "{} ({}) seed {seed}:\n{}    reproduce: {}",
                s.name,
                shown(path),
                failures(&r),
                reproduce(path, seed)
            ));
        } else {
            // A pass is a pass: nothing failed and no unexpected violation.
            assert!(r.failures.is_empty(), "{}: passed with failures", s.name);
            assert_ne!(r.stopped_by, "real-time guard", "{}: stopped by the real-time guard", s.name);
        }
    }
    assert!(failed.is_empty(), "{} of {} bundled scenarios failed:\n{}", failed.len(), all.len(), failed.join("\n"));
}

#[test]
fn every_bundled_scenario_passes_over_200_seeds() {
    let all = bundled();
    let started = Instant::now();
    let mut failing: Vec<String> = Vec::new();
    let mut slowest = (String::new(), 0.0f64);
    for (path, s) in &all {
        let t = Instant::now();
        for seed in SWEEP {
            let r = run_scenario(s, seed, RunOptions::default());
            if !r.passed {
                let first = r.failures.first().map(|f| format!("{} — {}", f.check, f.message)).unwrap_or_default();
                failing.push(format!("  ({}, seed {seed}): {first}\n    reproduce: {}", s.name, reproduce(path, seed)));
            }
        }
        let secs = t.elapsed().as_secs_f64();
        if secs > slowest.1 {
            slowest = (s.name.clone(), secs);
        }
    }
    let runs = all.len() as u64 * (SWEEP.end() - SWEEP.start() + 1);
    // Shown with `cargo test -- --nocapture`: the sweep's real time.
    println!(
        "sweep: {runs} runs ({} scenarios × {} seeds) in {:.2} s real; slowest scenario {} ({:.2} s)",
        all.len(),
        SWEEP.end() - SWEEP.start() + 1,
        started.elapsed().as_secs_f64(),
        slowest.0,
        slowest.1
    );
    assert!(failing.is_empty(), "{} of {runs} runs failed (scenario, seed):\n{}", failing.len(), failing.join("\n"));
}
