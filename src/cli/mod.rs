//! The command line: argument definitions and the three commands.

pub mod bench;
pub mod check;
pub mod progress;
pub mod run;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Exit statuses: every scenario passed, one failed, or the input was bad.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "handshake",
    version,
    about = "Simulate the shutdown and plan-approval handshakes of an agent team, deterministically.",
    long_about = "Simulate the shutdown and plan-approval handshakes of an agent team, deterministically.\n\n\
A scenario file (TOML) describes a team, a script, the faults to inject and what must hold at the end. \
`handshake run` plays it on a virtual clock (a 60 s timeout takes microseconds), checks the protocol's \
invariants and the file's expectations, and tells you what happened. Same file and seed, same trace, byte for byte.",
    after_help = "Examples:\n  handshake run                          run every scenario in scenarios/\n  \
handshake run scenarios/03-stalled-teammate-killed.toml -v\n  \
handshake run --seeds 1..201           sweep 200 seeds (1 to 200) over every scenario\n  \
handshake check my-scenario.toml       validate a file without running it\n  \
handshake bench --teammates 1000       measure handshakes per second\n\n\
Exit status: 0 all passed, 1 a scenario failed, 2 bad input (nothing was run).\n\
Logs: set RUST_LOG=debug for the runtime's own tracing."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenario files and check what happened.
    #[command(after_help = "Examples:\n  handshake run                                  every file in scenarios/\n  \
handshake run scenarios/05-plan-approved.toml -v   stream the events as they happen\n  \
handshake run my.toml --seed 7 --trace out.jsonl   write the event log as JSON Lines\n  \
handshake run --seeds 1..201                   sweep seeds 1 to 200; failing seeds are listed with the command to reproduce\n  \
handshake run --format json                    one JSON document for machines")]
    Run(run::RunArgs),
    /// Validate scenario files without running them.
    #[command(after_help = "Example:\n  handshake check scenarios/ my-scenario.toml\n\n\
Each problem is printed as path:line:col: reason. Exit status 2 if any file is bad.")]
    Check(check::CheckArgs),
    /// Measure handshake throughput and latency against a bare actix baseline.
    #[command(
        after_help = "Examples:\n  handshake bench                                one teammate, sequential handshakes\n  \
handshake bench --teammates 1000 --in-flight 1 1,000 teammates, all in flight at once\n  \
handshake bench --teammates 1 --in-flight 10000 10,000 requests in flight with deadlines armed\n  \
handshake bench --format json"
    )]
    Bench(bench::BenchArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn main(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(a) => run::main(a),
        Command::Check(a) => check::main(a),
        Command::Bench(a) => bench::main(a),
    }
}

/// `RUST_LOG` controls the runtime's own logs (to stderr); off by default so
/// reports stay clean.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "off".into());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// The default place scenarios live.
pub fn default_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        paths
    }
}
