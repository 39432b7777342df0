//! `handshake bench`: handshakes per second, against a bare actix baseline
//! measured in the same process, the same run.

use super::{Format, EXIT_BAD_INPUT, EXIT_OK};
use crate::bench::{baseline, latencies, peak_memory, percentile, protocol, Shape};
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
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub fn main(a: BenchArgs) -> i32 {
    if a.teammates == 0 || a.in_flight == 0 || a.handshakes == 0 {
        eprintln!("error: --teammates, --in-flight and --handshakes must be at least 1");
        return EXIT_BAD_INPUT;
    }
    let shape = Shape { teammates: a.teammates, in_flight: a.in_flight, handshakes: a.handshakes };
    let text = a.format == Format::Text;
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build; figures are only meaningful with `cargo run --release -- bench`");
    }
    let step = |what: &str| {
        eprintln!("  measuring {what}…");
    };
    if text {
        println!(
            "handshake bench: {} teammate{} × {} in flight = {} outstanding, {} handshakes per measurement",
            a.teammates,
            if a.teammates == 1 { "" } else { "s" },
            a.in_flight,
            a.teammates as u64 * a.in_flight as u64,
            a.handshakes
        );
    }
    // The protocol runs first so the process's peak memory is its own; the
    // baseline runs on both sides of it and the ratio uses the better of the
    // two, so a noisy moment cannot flatter the protocol.
    step("protocol (send rules, request table, verdicts, deadline queue)");
    let p = protocol(shape);
    let peak = peak_memory();
    step("baseline (bare actix do_send ping-pong, same messages)");
    let b1 = baseline(shape);
    step("baseline again");
    let b2 = baseline(shape);
    let b = if b1.per_second() >= b2.per_second() { b1 } else { b2 };
    let sample = Shape { handshakes: a.latency_sample.min(a.handshakes).max(1), ..shape };
    step("latency (each handshake timed, separate pass)");
    let lat = latencies(sample);
    let ratio = p.per_second() / b.per_second();
    let (p50, p99, max) = (percentile(&lat, 0.50), percentile(&lat, 0.99), lat.last().copied().unwrap_or_default());
    match a.format {
        Format::Text => {
            println!("  protocol   {:>12.0} handshakes/s  {:>7.0} ns/handshake", p.per_second(), p.nanos_each());
            println!("  baseline   {:>12.0} round trips/s {:>7.0} ns/round trip", b.per_second(), b.nanos_each());
            println!("  ratio      {:>12.2} of the baseline's rate", ratio);
            println!(
                "  latency    p50 {:.2} µs   p99 {:.2} µs   max {:.1} µs   ({} handshakes timed)",
                micros(p50),
                micros(p99),
                micros(max),
                lat.len()
            );
            match peak {
                Some(bytes) => {
                    println!("  memory     peak {:.1} MB resident during the protocol run", bytes as f64 / 1e6)
                }
                None => println!("  memory     peak unknown (no /proc/self/status here)"),
            }
            if p.handshakes < a.handshakes {
                println!("  note: only {} of {} handshakes completed", p.handshakes, a.handshakes);
            }
        }
        Format::Json => {
            let doc = serde_json::json!({
                "teammates": a.teammates,
                "in_flight": a.in_flight,
                "handshakes": p.handshakes,
                "protocol": {"per_second": p.per_second(), "ns_per_handshake": p.nanos_each()},
                "baseline": {"per_second": b.per_second(), "ns_per_round_trip": b.nanos_each()},
                "ratio": ratio,
                "latency_us": {"p50": micros(p50), "p99": micros(p99), "max": micros(max), "samples": lat.len()},
                "peak_memory_bytes": peak,
                "release_build": !cfg!(debug_assertions),
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    EXIT_OK
}
