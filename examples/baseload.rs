//! Runs only the baseline side of the bench, for profilers:
//! `baseload TEAMMATES IN_FLIGHT HANDSHAKES [REPEAT]` prints the fastest of REPEAT runs.
use handshake::bench::*;
fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: teammates in_flight handshakes [repeat]"))
        .collect();
    let shape = Shape { teammates: args[0] as u32, in_flight: args[1] as u32, handshakes: args[2] };
    let repeat = args.get(3).copied().unwrap_or(1).max(1);
    let best = (0..repeat).map(|_| baseline(shape)).min_by_key(|m| m.elapsed).expect("at least one run");
    println!("baseline {:.0}/s ns/hs {:.0}", best.per_second(), best.nanos_each());
}
