//! The `handshake` command: run and check scenario files, benchmark handshakes.

use clap::Parser;
use handshake::cli::{self, Cli};

// A small run allocates and frees thousands of short-lived blocks (events,
// envelopes, the runtime's tasks); mimalloc's thread-local free lists make
// that cheaper than glibc's malloc (measured in the commit that added it).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tunes mimalloc for a team of 100,000 (the delays and sizes tried and
/// what each cost: docs/architecture.md, "Why the code is shaped so"):
///
/// - freed memory goes back to the system within a millisecond rather than
///   a second (`mi_option_purge_delay`). A team of 100,000 builds and drops
///   more than it keeps, and the bench runs the baseline's team after it;
///   held for that second, the garbage lifted the bench's peak. A
///   millisecond is the shortest delay that keeps the throughput of glibc's
///   allocator, and a sweep of small runs hardly purges at all;
/// - arenas are reserved 4 MiB at a time, not a gibibyte
///   (`mi_option_arena_reserve`): memory is taken from the system about as
///   it is used, which keeps a large team's peak lower (docs/performance.md).
///   Not none at all: with no arena, every block taken from the system
///   stays the allocator's for good, and a long `fuzz` (a file parsed per
///   run) grew by about 160 bytes a run without end.
///
/// The options are numbers in mimalloc 3's list, which the Rust bindings do
/// not name; asked only of the version they were read from.
extern "C" fn tune_the_allocator() {
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    const ARENA_RESERVE: libmimalloc_sys::mi_option_t = 23;
    // In KiB.
    const ARENA_KIB: std::ffi::c_long = 4 * 1024;
    // SAFETY: plain calls into the allocator's C API with valid arguments,
    // made before any thread of ours starts.
    unsafe {
        // The version reads as major, minor and patch in two digits each (30302).
        if libmimalloc_sys::mi_version() / 10_000 == 3 {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, 1);
            libmimalloc_sys::mi_option_set(ARENA_RESERVE, ARENA_KIB);
        }
    }
}

/// The allocator is tuned before its first use, which comes before `main`:
/// the runtime allocates on its way there, and mimalloc reserves its first
/// arena then, so the arena option set in `main` came too late. An entry in
/// `.init_array` runs before any Rust code allocates.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static TUNE_THE_ALLOCATOR_FIRST: extern "C" fn() = tune_the_allocator;

fn main() {
    // Elsewhere, as early as Rust code can (the arena option then applies
    // to arenas after the first).
    #[cfg(not(target_os = "linux"))]
    tune_the_allocator();
    // Behave like a Unix filter: `handshake run -v | head` ends quietly when
    // the reader goes away, instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // starts; no handler of ours depends on it.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Output that cannot be written (stdout on a full disk, say) makes
    // `println!` panic: said as an error, with bad input's exit status (an
    // output that cannot be written is bad input, docs/cli.md), not as a
    // crash. Every other panic is a bug and reported as one.
    let crash = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let said = info.payload().downcast_ref::<String>().map(String::as_str);
        let said = said.or_else(|| info.payload().downcast_ref::<&str>().copied()).unwrap_or("");
        if let Some(why) = said.strip_prefix("failed printing to stdout: ") {
            eprintln!("error: the output could not be written: {why}");
            std::process::exit(cli::EXIT_BAD_INPUT);
        }
        crash(info)
    }));
    // Read before clap parses: a command line clap refuses has no parsed
    // `--format` to say how to tell the refusal.
    let json = cli::bad_input::json_asked(std::env::args_os());
    let args = Cli::try_parse().unwrap_or_else(|e| std::process::exit(cli::bad_input::command_line(e, json)));
    cli::init_logging();
    std::process::exit(cli::main(args));
}
