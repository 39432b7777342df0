//! The sweep `run scenarios/*.toml --seeds A..B --jobs 1` plays, once in
//! each shell, timed: what the plain shell saves over actix.
//!
//! `cargo run --release --example shells -- [actix|plain|both] [A] [B]`
//! (default: both, seeds 1 to 200); `-- load [TEAMMATES] [IN_FLIGHT]`:
//! `handshake bench`'s shutdown load, 1,000,000 handshakes, in each shell.

use handshake::scenario::{run_scenario, RunOptions};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "load") {
        return load(&args[1..]);
    }
    let which = args.first().map_or("both", String::as_str);
    let from: u64 = args.get(1).map_or(1, |a| a.parse().expect("a seed"));
    let to: u64 = args.get(2).map_or(200, |a| a.parse().expect("a seed"));
    let scenarios = handshake::bench::sweep::bundled();
    let shells: &[(&str, bool)] = match which {
        "actix" => &[("actix", false)],
        "plain" => &[("plain", true)],
        _ => &[("actix", false), ("plain", true)],
    };
    for &(name, plain) in shells {
        let (mut runs, mut messages, mut failed) = (0u64, 0u64, 0u64);
        let started = Instant::now();
        for s in &scenarios {
            for seed in from..=to {
                let opts = RunOptions { max_real: Some(Duration::from_secs(60)), plain, ..RunOptions::default() };
                let r = run_scenario(s, seed, opts);
                runs += 1;
                messages += r.counts.messages as u64;
                failed += u64::from(!r.passed);
            }
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{name}: {runs} runs ({failed} failed) in {secs:.3} s: {:.0} runs/s, {:.0} messages/s",
            runs as f64 / secs,
            messages as f64 / secs
        );
    }
}

/// The bench's load (`handshake bench --teammates T --in-flight F`), once
/// warm in each shell.
fn load(args: &[String]) {
    use handshake::bench::{spec_in, Mailbox, Shape};
    let teammates = args.first().map_or(1, |a| a.parse().expect("a number of teammates"));
    let in_flight = args.get(1).map_or(1, |a| a.parse().expect("a number in flight"));
    let shape = Shape { teammates, in_flight, handshakes: 1_000_000 };
    let spec = || spec_in(handshake::protocol::Kind::Shutdown, shape, Mailbox::Memory);
    type Run = fn(handshake::world::TeamSpec) -> handshake::world::Outcome;
    let shells: [(&str, Run); 2] = [("actix", handshake::team::run), ("plain", handshake::team::run_plain)];
    for (name, run) in shells {
        run(spec_in(handshake::protocol::Kind::Shutdown, Shape { handshakes: 100_000, ..shape }, Mailbox::Memory));
        let started = Instant::now();
        let done = run(spec()).load_done;
        let secs = started.elapsed().as_secs_f64();
        println!("{name}: {done} handshakes in {secs:.3} s: {:.0} handshakes/s", done as f64 / secs);
    }
}
