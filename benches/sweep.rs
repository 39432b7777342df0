//! Seed sweeps (issue 12): how many scenario runs a second `run --seeds`
//! plays, on one thread and on two, side by side in one criterion run.
//!
//! One iteration plays every bundled scenario for 100 seeds, each run judged
//! by the oracle and the file's expectations, as `run --seeds` does. With two
//! threads each loads the files itself (a loaded scenario's hooks stay on
//! one thread) and takes every other seed, as `--jobs 2` shares the work.
//! "The smallest run" is one run of scenario 01, the per-run floor. The
//! sweep is measured in trace events a second beside its ceiling, a bare
//! event loop (`sweep_vs_event_loop`).
//!
//! The binary allocates with mimalloc; so does this bench, to measure what
//! the command does.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handshake::bench::sweep;
use handshake::scenario::{load_str, run_scenario, RunOptions, Scenario};
use std::path::Path;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SEEDS: std::ops::Range<u64> = 1..101;

/// Every bundled scenario file: (path, text).
fn bundled() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a bundled file is readable");
            (p.display().to_string(), text)
        })
        .collect()
}

fn load(sources: &[(String, String)]) -> Vec<Scenario> {
    sources.iter().map(|(path, text)| load_str(path, text).expect("a bundled scenario loads")).collect()
}

/// Plays this thread's share of the seeds over every scenario; returns the runs that passed.
fn play_share(scenarios: &[Scenario], share: usize, of: usize) -> usize {
    let mut passed = 0;
    for seed in SEEDS.filter(|s| (*s as usize) % of == share) {
        for s in scenarios {
            passed += usize::from(run_scenario(s, seed, RunOptions::plain()).passed);
        }
    }
    passed
}

fn bench(c: &mut Criterion) {
    let sources = bundled();
    let runs = (sources.len() * SEEDS.count()) as u64;
    let mut g = c.benchmark_group("sweep_bundled");
    g.sample_size(10);
    g.throughput(Throughput::Elements(runs));
    let scenarios = load(&sources);
    assert_eq!(play_share(&scenarios, 0, 1) as u64, runs, "every bundled run passes");
    g.bench_function("jobs-1-plain-shell", |b| b.iter(|| play_share(&scenarios, 0, 1)));
    g.bench_function("jobs-2-plain-shell", |b| {
        b.iter(|| {
            std::thread::scope(|scope| {
                let sources = &sources;
                let handles: Vec<_> = (0..2).map(|i| scope.spawn(move || play_share(&load(sources), i, 2))).collect();
                handles.into_iter().map(|h| h.join().expect("a sweep thread does not panic")).sum::<usize>()
            })
        })
    });
    g.finish();

    // The sweep beside its ceiling, in trace events a second: a bare event
    // loop making as many events in runs of the same mean size
    // (handshake::bench::sweep), so a regression of either shows as its
    // share of the other.
    let once = sweep::sweep(&scenarios, SEEDS);
    let mut g = c.benchmark_group("sweep_vs_event_loop");
    g.sample_size(10);
    g.throughput(Throughput::Elements(once.events));
    g.bench_function("sweep-jobs-1", |b| b.iter(|| sweep::sweep(&scenarios, SEEDS).events));
    g.bench_function("event-loop-ceiling", |b| b.iter(|| sweep::event_loop(once.events, once.events_per_run()).events));
    g.finish();
    // The ratio itself, from back-to-back pairs, so it shows in every run
    // that measures this group.
    if handshake::cli::anchors::bench_wants("sweep_vs_event_loop") {
        let mut ratios: Vec<f64> = (0..3)
            .map(|_| {
                let s = sweep::sweep(&scenarios, SEEDS);
                s.events_per_second() / sweep::event_loop(s.events, s.events_per_run()).events_per_second()
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        eprintln!(
            "beside its anchor: the sweep makes {:.3} of the event-loop ceiling's trace events a second ({:.3}–{:.3} over 3 pairs; the target: at least {})",
            ratios[1],
            ratios[0],
            ratios[2],
            handshake::cli::anchors::SWEEP_TARGET
        );
    }

    let mut g = c.benchmark_group("sweep_smallest_run");
    g.throughput(Throughput::Elements(1));
    let smallest = scenarios.iter().find(|s| s.path.contains("01-")).expect("scenario 01 is bundled");
    g.bench_function("01-happy-shutdown-plain-shell", |b| b.iter(|| run_scenario(smallest, 7, RunOptions::plain())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
