//! The suite's sweep line alone: every bundled scenario for seeds A..=B on
//! one thread, as `run --seeds --jobs 1` plays them, beside the bare event
//! loop making as many events in runs of the same mean size; with mimalloc,
//! as the binary allocates.
//!
//! `cargo run --profile perf --example sweep -- [A] [B] [sweep|layers|both]`
//! (default seeds 1 to 100, both). Under callgrind, `sweep` alone gives a
//! sweep's instructions, divided by the events it prints. `layers` plays the
//! same runs three ways, judged (the sweep), with their log but unjudged
//! (no oracle, no expectations, no report), and with no log at all, each as
//! a share of the ceiling counted in the judged sweep's events: what the
//! simulation alone would reach if judging cost nothing; then judging alone,
//! timed over runs played and kept first.

use handshake::bench::sweep::{bundled, event_loop, sweep, unjudged, Swept};
use handshake::scenario::Scenario;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let from: u64 = args.first().map_or(1, |a| a.parse().expect("a seed"));
    let to: u64 = args.get(1).map_or(100, |a| a.parse().expect("a seed"));
    let which = args.get(2).map_or("both", String::as_str);
    let scenarios = bundled();
    let s = sweep(&scenarios, from..to + 1);
    println!(
        "sweep: {} runs, {} trace events in {:.3} s: {:.0} events/s",
        s.runs,
        s.events,
        s.elapsed.as_secs_f64(),
        s.events_per_second()
    );
    if which == "sweep" {
        return;
    }
    let c = event_loop(s.events, s.events_per_run());
    let share = |secs: f64| s.events as f64 / secs / c.events_per_second();
    println!(
        "ceiling: {:.0} events/s; the sweep is {:.3} of it",
        c.events_per_second(),
        share(s.elapsed.as_secs_f64())
    );
    if which == "layers" {
        for log in [true, false] {
            let secs = unjudged(&scenarios, from..to + 1, log).as_secs_f64();
            let what = if log { "unjudged, with its log" } else { "unjudged, no log" };
            println!("{what}: {secs:.3} s, {:.3} of the ceiling", share(secs));
        }
        let again: Swept = sweep(&scenarios, from..to + 1);
        println!("sweep again: {:.3} of the ceiling", share(again.elapsed.as_secs_f64()));
        judging_alone(&scenarios, from..(to + 1).min(from + 100));
    }
}

/// Judging on its own, over outcomes played and kept first (at most a
/// hundred seeds of them, to bound the memory they hold): the oracle, then
/// all of it (oracle, deadlocks, the file's expectations).
fn judging_alone(scenarios: &[Scenario], seeds: std::ops::Range<u64>) {
    let mut kept = Vec::new();
    for seed in seeds {
        for s in scenarios {
            let mut spec = s.team_spec(seed, None);
            spec.folder = s.reads_inbox_files();
            kept.push((s, handshake::team::run_plain(spec)));
        }
    }
    let started = Instant::now();
    for (s, o) in &kept {
        std::hint::black_box(handshake::oracle::check(o, s.policy(), &s.require_plan()));
    }
    let oracle = started.elapsed().as_secs_f64();
    let started = Instant::now();
    for (s, o) in &kept {
        std::hint::black_box(handshake::scenario::check::judge_outcome(s, o));
    }
    let all = started.elapsed().as_secs_f64();
    println!(
        "judging alone, {} kept runs: the oracle {:.1} ms, all of it {:.1} ms ({:.2} µs a run)",
        kept.len(),
        oracle * 1e3,
        all * 1e3,
        all * 1e6 / kept.len() as f64
    );
}
