//! `handshake bench`: handshakes per second, against a bare actix baseline.

use super::Format;
use clap::Args;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Teammates the lead talks to
    #[arg(long, default_value_t = 1)]
    pub teammates: u32,
    /// Requests kept in flight per teammate
    #[arg(long, default_value_t = 1)]
    pub in_flight: u32,
    /// Handshakes to complete
    #[arg(long, default_value_t = 1_000_000)]
    pub handshakes: u64,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn main(_a: BenchArgs) -> i32 {
    eprintln!("bench: not built yet");
    super::EXIT_FAILED
}
