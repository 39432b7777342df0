//! The `handshake` command: run and check scenario files, benchmark handshakes.

use clap::Parser;
use handshake::cli::{self, Cli};

fn main() {
    let args = Cli::parse();
    cli::init_logging();
    std::process::exit(cli::main(args));
}
