//! Runs only the bare actix baseline of the bench, for profilers.
use handshake::bench::*;
fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let shape = Shape { teammates: args[0] as u32, in_flight: args[1] as u32, handshakes: args[2] };
    let b = baseline(shape);
    println!("baseline {:.0}/s ns/hs {:.0}", b.per_second(), b.nanos_each());
}
