//! The `handshake` command: run and check scenario files, benchmark handshakes.

use clap::Parser;
use handshake::cli::{self, Cli};

fn main() {
    // Behave like a Unix filter: `handshake run -v | head` ends quietly when
    // the reader goes away, instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // starts; no handler of ours depends on it.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = Cli::parse();
    cli::init_logging();
    std::process::exit(cli::main(args));
}
