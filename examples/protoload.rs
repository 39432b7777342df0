//! Runs only the protocol side of the bench, for profilers.
use handshake::bench::*;
fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let shape = Shape { teammates: args[0] as u32, in_flight: args[1] as u32, handshakes: args[2] };
    let p = protocol(shape);
    println!("protocol {:.0}/s ns/hs {:.0}", p.per_second(), p.nanos_each());
}
