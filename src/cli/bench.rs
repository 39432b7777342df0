//! `handshake bench`: handshakes per second, against a bare actix baseline
//! measured in the same process, the same run.

use super::{Format, EXIT_BAD_INPUT, EXIT_OK};
use crate::bench::{baseline, latencies, peak_memory, percentile, protocol, reset_peak_memory, Measured, Shape};
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Teammates the lead talks to
    #[arg(long, default_value_t = 1)]
    pub teammates: u32,
    /// Requests kept in flight per teammate (teammates × in-flight outstanding at once)
    #[arg(long, default_value_t = 1)]
    pub in_flight: u32,
    /// Handshakes to complete in each measurement
    #[arg(long, default_value_t = 1_000_000)]
    pub handshakes: u64,
    /// Handshakes timed one by one for the latency percentiles (a separate pass)
    #[arg(long, default_value_t = 200_000)]
    pub latency_sample: u64,
    /// Output for people (text) or machines (json)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Measurements of each side, alternating protocol and baseline; the
    /// medians are reported, and the ratio is the median over the pairs
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Run the standard cases of the README's table one after another
    /// (1 teammate; 1,000 in flight; 10,000 in flight; 100,000 teammates)
    #[arg(long, conflicts_with_all = ["teammates", "in_flight", "handshakes"])]
    pub suite: bool,
}

/// One case measured: the medians of the protocol's and the baseline's runs,
/// latency percentiles from a separate pass, and the protocol's peak memory.
struct Case {
    shape: Shape,
    protocol: Measured,
    baseline: Measured,
    /// Protocol rate over baseline rate, the median over back-to-back pairs.
    ratio: f64,
    p50: Duration,
    p99: Duration,
    max: Duration,
    timed: usize,
    peak: Option<u64>,
}

fn median(mut runs: Vec<Measured>) -> Measured {
    runs.sort_by(|a, b| a.per_second().total_cmp(&b.per_second()));
    runs[runs.len() / 2]
}

fn measure(shape: Shape, latency_sample: u64, repeat: u32, say: &dyn Fn(&str)) -> Case {
    // A short warm-up of both sides first (allocator, page faults, caches),
    // then protocol and baseline alternate so a noisy moment hits both; the
    // medians are compared. The peak memory window opens just before the
    // first measured protocol run, so the peak is the protocol's own.
    let warm = Shape { handshakes: (shape.handshakes / 10).clamp(1, 100_000), ..shape };
    say("warm-up");
    protocol(warm);
    baseline(warm);
    let mut ps = Vec::new();
    let mut bs = Vec::new();
    let mut peak = None;
    for i in 0..repeat.max(1) {
        say(&format!("protocol, run {} of {repeat}", i + 1));
        if i == 0 {
            reset_peak_memory();
        }
        ps.push(protocol(shape));
        if i == 0 {
            peak = peak_memory();
        }
        say(&format!("baseline (bare actix do_send ping-pong, same messages), run {} of {repeat}", i + 1));
        bs.push(baseline(shape));
    }
    // Each protocol run is paired with the baseline run right after it, a
    // second apart, and the ratio is the median over the pairs: on a machine
    // whose speed drifts over minutes, a pair sees the same machine, while
    // two medians taken separately can each land in a different phase.
    let mut ratios: Vec<f64> = ps.iter().zip(&bs).map(|(p, b)| p.per_second() / b.per_second()).collect();
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    say("latency (each handshake timed, separate pass)");
    let lat = latencies(Shape { handshakes: latency_sample.min(shape.handshakes).max(1), ..shape });
    Case {
        shape,
        protocol: median(ps),
        baseline: median(bs),
        ratio,
        p50: percentile(&lat, 0.50),
        p99: percentile(&lat, 0.99),
        max: lat.last().copied().unwrap_or_default(),
        timed: lat.len(),
        peak,
    }
}

fn case_json(c: &Case) -> serde_json::Value {
    serde_json::json!({
        "teammates": c.shape.teammates,
        "in_flight": c.shape.in_flight,
        "handshakes": c.protocol.handshakes,
        "protocol": {"per_second": c.protocol.per_second(), "ns_per_handshake": c.protocol.nanos_each()},
        "baseline": {"per_second": c.baseline.per_second(), "ns_per_round_trip": c.baseline.nanos_each()},
        "ratio": c.ratio,
        "latency_us": {"p50": micros(c.p50), "p99": micros(c.p99), "max": micros(c.max), "samples": c.timed},
        "peak_memory_bytes": c.peak,
        "release_build": !cfg!(debug_assertions),
    })
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub fn main(a: BenchArgs) -> i32 {
    if a.teammates == 0 || a.in_flight == 0 || a.handshakes == 0 {
        eprintln!("error: --teammates, --in-flight and --handshakes must be at least 1");
        return EXIT_BAD_INPUT;
    }
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build; figures are only meaningful with `cargo run --release -- bench`");
    }
    let say = |what: &str| eprintln!("  measuring {what}…");
    if a.suite {
        return suite(&a, &say);
    }
    let shape = Shape { teammates: a.teammates, in_flight: a.in_flight, handshakes: a.handshakes };
    if a.format == Format::Text {
        println!(
            "handshake bench: {} teammate{} × {} in flight = {} outstanding, {} handshakes per measurement",
            a.teammates,
            if a.teammates == 1 { "" } else { "s" },
            a.in_flight,
            a.teammates as u64 * a.in_flight as u64,
            a.handshakes
        );
    }
    let c = measure(shape, a.latency_sample, a.repeat, &say);
    match a.format {
        Format::Text => {
            let (p, b) = (c.protocol, c.baseline);
            println!("  protocol   {:>12.0} handshakes/s  {:>7.0} ns/handshake", p.per_second(), p.nanos_each());
            println!("  baseline   {:>12.0} round trips/s {:>7.0} ns/round trip", b.per_second(), b.nanos_each());
            println!(
                "  ratio      {:>12.2} of the baseline's rate (median over {} back-to-back pairs of runs)",
                c.ratio, a.repeat
            );
            println!(
                "  latency    p50 {:.2} µs   p99 {:.2} µs   max {:.1} µs   ({} handshakes timed)",
                micros(c.p50),
                micros(c.p99),
                micros(c.max),
                c.timed
            );
            match c.peak {
                Some(bytes) => {
                    println!("  memory     peak {:.1} MB resident during the protocol run", bytes as f64 / 1e6)
                }
                None => println!("  memory     peak unknown (no /proc/self/status here)"),
            }
            if p.handshakes < a.handshakes {
                println!("  note: only {} of {} handshakes completed", p.handshakes, a.handshakes);
            }
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&case_json(&c)).unwrap_or_default()),
    }
    EXIT_OK
}

/// The README's table, measured in one process, one run.
fn suite(a: &BenchArgs, say: &dyn Fn(&str)) -> i32 {
    let shapes = [
        Shape { teammates: 1, in_flight: 1, handshakes: 1_000_000 },
        Shape { teammates: 1000, in_flight: 1, handshakes: 1_000_000 },
        Shape { teammates: 1000, in_flight: 10, handshakes: 1_000_000 },
        Shape { teammates: 100_000, in_flight: 1, handshakes: 100_000 },
    ];
    let mut cases = Vec::new();
    for (i, shape) in shapes.into_iter().enumerate() {
        eprintln!("case {}/{}: {} teammates × {} in flight", i + 1, shapes.len(), shape.teammates, shape.in_flight);
        cases.push(measure(shape, a.latency_sample, a.repeat, say));
    }
    match a.format {
        Format::Text => {
            println!(
                "| teammates × in flight | protocol handshakes/s | ns/handshake | baseline round trips/s | ratio | p50 µs | p99 µs | max µs | peak MB |"
            );
            println!("|---|---|---|---|---|---|---|---|---|");
            for c in &cases {
                println!(
                    "| {} × {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.1} | {} |",
                    c.shape.teammates,
                    c.shape.in_flight,
                    c.protocol.per_second(),
                    c.protocol.nanos_each(),
                    c.baseline.per_second(),
                    c.ratio,
                    micros(c.p50),
                    micros(c.p99),
                    micros(c.max),
                    c.peak.map_or("?".to_string(), |b| format!("{:.1}", b as f64 / 1e6))
                );
            }
            let (k1, k10) = (&cases[1], &cases[2]);
            println!(
                "\n10,000 in flight costs {:.2}× the ns per handshake of 1,000 in flight.",
                k10.protocol.nanos_each() / k1.protocol.nanos_each()
            );
        }
        Format::Json => {
            let doc: Vec<_> = cases.iter().map(case_json).collect();
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    EXIT_OK
}
