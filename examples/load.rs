//! One side of the bench alone, for profilers:
//! `load protocol|plan|baseline TEAMMATES IN_FLIGHT HANDSHAKES [REPEAT]` prints
//! the fastest of REPEAT runs (default 1): `protocol` is the shutdown
//! handshake, `plan` the plan handshake (one in flight per teammate).
use handshake::bench::{baseline, protocol, protocol_of, Mailbox, Measured, Protocol, Shape};

// The allocator the `handshake` binary uses, so that a profile of this
// example shows what `handshake bench` spends.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: load protocol|plan|baseline TEAMMATES IN_FLIGHT HANDSHAKES [REPEAT]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let side: fn(Shape) -> Measured = match args.first().map(String::as_str) {
        Some("protocol") => protocol,
        Some("plan") => |shape| protocol_of(Protocol::Plan, shape, Mailbox::Memory),
        Some("baseline") => baseline,
        _ => panic!("{USAGE}"),
    };
    let n: Vec<u64> = args[1..].iter().map(|a| a.parse().expect(USAGE)).collect();
    let [teammates, in_flight, handshakes, rest @ ..] = n.as_slice() else { panic!("{USAGE}") };
    let shape = Shape { teammates: *teammates as u32, in_flight: *in_flight as u32, handshakes: *handshakes };
    let repeat = rest.first().copied().unwrap_or(1).max(1);
    let best = (0..repeat).map(|_| side(shape)).min_by_key(|m| m.elapsed).expect("at least one run");
    println!("{} {:.0}/s ns/hs {:.0}", args[0], best.per_second(), best.nanos_each());
}
