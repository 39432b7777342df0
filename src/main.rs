//! The `handshake` command: run and check scenario files, benchmark handshakes.

use clap::Parser;
use handshake::cli::{self, Cli};

// A small run allocates and frees thousands of short-lived blocks (events,
// envelopes, the runtime's tasks); mimalloc's thread-local free lists make
// that cheaper than glibc's malloc (measured in the commit that added it).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
