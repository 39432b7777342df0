use handshake::bench::*;
fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let shape = Shape { teammates: args[0] as u32, in_flight: args[1] as u32, handshakes: args[2] };
    let b = baseline(shape);
    let p = protocol(shape);
    println!(
        "baseline {:.0}/s  protocol {:.0}/s  ratio {:.2}  ns/hs {:.0} peak {:?}MB",
        b.per_second(),
        p.per_second(),
        p.per_second() / b.per_second(),
        p.nanos_each(),
        peak_memory().map(|m| m / 1_000_000)
    );
}
