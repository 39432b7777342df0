//! The command line: argument definitions and the subcommands.

pub mod anchors;
pub mod args;
pub mod audit;
pub mod bad_input;
pub mod bench;
pub mod check;
pub mod explore;
pub mod extras;
pub mod fuzz;
mod inbox_dir;
pub mod merge;
pub mod progress;
pub mod run;
pub mod scenarios;
pub mod serve;
pub mod shrink;
mod sweep;
pub mod watch;

use crate::format::discover::expand;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};

/// Exit statuses, one meaning each across every subcommand: passed (or
/// done), a violation or a failed expectation, bad input (nothing done), a
/// search stopped at a bound with nothing found (not the same as nothing to
/// find), interrupted (128 + SIGINT, as shells report it).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;
pub const EXIT_BOUND: i32 = 3;
pub const EXIT_INTERRUPTED: i32 = 130;

/// The `Exit status:` block of a subcommand's `--help`, laid out one way
/// everywhere: each status the command can return, with its meaning there.
pub fn exit_status(rows: &[(i32, &str)]) -> String {
    let mut out = String::from("Exit status:\n");
    for (code, meaning) in rows {
        out.push_str(&format!("  {code:<5}{meaning}\n"));
    }
    out
}

/// What a subcommand's `--help` ends with: its examples, what else it
/// should say, and its exit statuses.
pub fn help_tail(examples_block: String, more: &str, statuses: &[(i32, &str)]) -> String {
    let mut out = examples_block;
    if !more.is_empty() {
        out.push('\n');
        out.push_str(more);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&exit_status(statuses));
    out
}

#[derive(Parser, Debug)]
#[command(
    name = "handshake",
    version,
    about = "Simulate the shutdown and plan-approval handshakes of an agent team, deterministically.",
    long_about = "Simulate the shutdown and plan-approval handshakes of an agent team, deterministically.\n\n\
A scenario file (TOML) describes a team, a script, the faults to inject and what must hold at the end. \
`handshake run` plays it on a virtual clock (a 60 s timeout takes microseconds), checks the protocol's \
invariants and the file's expectations, and tells you what happened. Same file and seed, same trace, byte for byte.",
    after_help = format!("{}\n\
Exit status, the same in every subcommand: 0 passed, 1 a violation or a failed expectation, 2 bad input\n\
(nothing done), 3 a search stopped at a bound with nothing found, 130 interrupted (Ctrl-C).\n\
Logs: RUST_LOG=handshake=debug shows the runtime's own events on stderr (runs, wake-ups, faults, agents\n\
stopping); =info only a sweep's progress; =trace every message as well.", examples("Examples", TOP_EXAMPLES))
)]
pub struct Cli {
    /// Colour: auto (a terminal, unless NO_COLOR is set; CLICOLOR_FORCE colours a pipe too), always or never
    #[arg(long, global = true, value_enum, default_value = "auto", value_name = "WHEN")]
    pub color: crate::color::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

const TOP_EXAMPLES: &[(&str, &str)] = &[
    ("handshake run", "run every scenario in scenarios/"),
    ("handshake run scenarios/03-stalled-teammate-killed.toml -v", "watch one scenario, event by event"),
    ("handshake run --seeds 1..201", "sweep 200 seeds (1 to 200) over every scenario"),
    ("handshake check my-scenario.toml", "validate a file without running it"),
    ("handshake explore my-scenario.toml --drop 1", "try every interleaving, with one message lost anywhere"),
    ("handshake bench --teammates 1000", "measure handshakes per second"),
];

const RUN_EXAMPLES: &[(&str, &str)] = &[
    ("handshake run", "every file in scenarios/ and its subfolders (or every bundled one)"),
    ("handshake run 22 -v", "bundled scenario 22 (handshake scenarios lists them), its events as they happen"),
    ("handshake run my.toml --seed 7 --trace out.jsonl", "write the run's history (audit judges it)"),
    (
        "handshake run scenarios/13-forged-lead-approval-ignored.toml --html p.html --compare sender_auth=false",
        "both runs on one page",
    ),
    ("handshake run --seeds 1..201", "sweep seeds 1 to 200; a failing seed says how to replay it"),
    ("handshake run --format json", "one JSON document for machines"),
];

const CHECK_EXAMPLES: &[(&str, &str)] =
    &[("handshake check scenarios/ my-scenario.toml", "validate a folder (and its subfolders) and a file")];

const BENCH_EXAMPLES: &[(&str, &str)] = &[
    ("handshake bench", "one teammate, sequential handshakes"),
    ("handshake bench --teammates 1000", "1,000 teammates, one request in flight to each"),
    ("handshake bench --teammates 1 --in-flight 10000", "10,000 requests in flight with deadlines armed"),
    ("handshake bench --suite", "docs/performance.md's table, each case in a fresh process"),
    ("handshake bench --format json", "one JSON document for machines"),
];

/// Commands longer than this put their description on the next line, so the
/// column stays narrow enough for an 80-column terminal.
const EXAMPLE_COMMAND_WIDTH: usize = 36;

/// Lays examples out as two columns: commands on the left, every description
/// starting in the same column, never running into its command.
pub fn examples(title: &str, rows: &[(&str, &str)]) -> String {
    let width = rows.iter().map(|(c, _)| c.len()).filter(|&n| n <= EXAMPLE_COMMAND_WIDTH).max().unwrap_or(0);
    let column = 2 + width + 3;
    let mut out = format!("{title}:\n");
    for (command, about) in rows {
        if command.len() <= width {
            out.push_str(&format!("  {command:<w$}{about}\n", w = column - 2));
        } else {
            out.push_str(&format!("  {command}\n{:column$}{about}\n", ""));
        }
    }
    out
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scenario files and check what happened.
    #[command(after_help = help_tail(examples("Examples", RUN_EXAMPLES), "", &[
        (EXIT_OK, "every scenario passed"),
        (EXIT_FAILED, "a scenario failed: an invariant broke or an expectation did not hold"),
        (EXIT_BAD_INPUT, "bad input: a file or a flag (nothing was run)"),
        (EXIT_INTERRUPTED, "interrupted (Ctrl-C): a sweep reports the runs it played and the command that resumes it"),
    ]))]
    Run(run::RunArgs),
    /// List the scenarios that come with the program: each one's number, name and what it teaches.
    #[command(after_help = help_tail(examples("Examples", scenarios::SCENARIOS_EXAMPLES), "\
Every command that takes a scenario file takes a bundled one by its number or name too\n\
(handshake run 22, handshake explore peer-deadlock), from any folder.", &[(EXIT_OK, "listed")]))]
    Scenarios(scenarios::ScenariosArgs),
    /// Write a new scenario file to edit: a blank one that runs, or a copy of a bundled one (--from 22).
    #[command(after_help = help_tail(examples("Examples", scenarios::NEW_EXAMPLES), "", &[
        (EXIT_OK, "the file was written"),
        (EXIT_BAD_INPUT, "the file exists, or --from names no bundled scenario (nothing was written)"),
    ]))]
    New(scenarios::NewArgs),
    /// Validate scenario files without running them.
    #[command(after_help = help_tail(examples("Examples", CHECK_EXAMPLES), "Each problem is printed as rustc prints one: the reason, --> path:line:col, the line with the value\nunderlined and a help: line with the fix; every problem of every file in one pass.", &[
        (EXIT_OK, "every file is valid"),
        (EXIT_BAD_INPUT, "a file is bad (each problem named)"),
    ]))]
    Check(check::CheckArgs),
    /// Measure handshake throughput and latency against a bare actix baseline.
    #[command(after_help = help_tail(examples("Examples", BENCH_EXAMPLES), "\
Each figure is the median over --repeat runs, printed with its min and max; a spread wider than a\n\
third of the median is warned about. Figures compare with docs/performance.md's only from the\n\
`perf` profile (cargo run --profile perf -- bench): the line `build` says which profile this is.", &[
        (EXIT_OK, "measured"),
        (EXIT_FAILED, "a case of the suite failed to run"),
        (EXIT_BAD_INPUT, "bad input: a flag (nothing was measured)"),
    ]))]
    Bench(bench::BenchArgs),
    /// Try every interleaving of a small scenario and find the shortest one that breaks an invariant.
    #[command(after_help = help_tail(examples("Examples", EXPLORE_EXAMPLES), "\
Deliveries, timers and the faults you budget for are tried in every order; states already seen are\n\
skipped (identical teammates are interchangeable), and the search is breadth first, so the first\n\
violation found has the fewest steps. The file's own faults are played as a run plays them (crashes,\n\
stalls, partitions, forgeries and replays at their times); its counted or chance drops and duplicates\n\
become budgets spent anywhere, and its delays and reorders are covered by trying every arrival order.\n\
See docs/explore.md.", &[
        (EXIT_OK, "the whole search ran and nothing broke (or only what the file expects)"),
        (EXIT_FAILED, "an invariant broke: the shortest schedule that breaks it is printed"),
        (EXIT_BAD_INPUT, "bad input (a flag, the file), a team too big to explore (over 10,000 teammates), or an output that could not be written once the search ended (the verdict is above)"),
        (EXIT_BOUND, "the search stopped at --max-states, --max-depth or --max-memory with nothing found"),
        (EXIT_INTERRUPTED, "interrupted (Ctrl-C) with nothing found: the states explored so far are reported"),
    ]))]
    Explore(explore::ExploreArgs),
    /// Combine the shards of a seed sweep (`run --shard I/N --format json`) into the whole sweep's report.
    #[command(after_help = help_tail(examples("Examples", merge::MERGE_EXAMPLES), "", &[
        (EXIT_OK, "every run of every shard passed"),
        (EXIT_FAILED, "a run failed"),
        (EXIT_BAD_INPUT, "a shard could not be read, or the shards do not make one sweep (nothing merged)"),
    ]))]
    Merge(merge::MergeArgs),
    /// Cut a run that breaks an invariant down to a 1-minimal scenario file that still breaks it.
    #[command(after_help = shrink::after_help())]
    Shrink(shrink::ShrinkArgs),
    /// Add random faults to scenarios, seed by seed, and report every invariant broken (swarm testing).
    #[command(after_help = help_tail(examples("Examples", fuzz::FUZZ_EXAMPLES), "\
Each seed adds its own faults and steps to every scenario, from a subset of the kinds (swarm testing);\n\
each find is written as a scenario file that `handshake run` replays. See docs/fuzz.md.", &[
        (EXIT_OK, "no find"),
        (
            EXIT_FAILED,
            "a find: an invariant broke with every defence on (each written, with its reproduce line); a break only \
             the file's own switched-off defence allows is shown as SEEN and not counted, unless --count-defences-off",
        ),
        (EXIT_BAD_INPUT, "bad input (nothing was run)"),
        (
            EXIT_INTERRUPTED,
            "interrupted (Ctrl-C): the runs in hand finish (a second Ctrl-C ends at once), then the finds so far are \
             reported, with the command that resumes from the chunk of seeds in hand (about 512 runs)",
        ),
    ]))]
    Fuzz(fuzz::FuzzArgs),
    /// Judge a history (a run's --trace, or lines another program wrote in that format) with the same oracle.
    #[command(after_help = help_tail(examples("Examples", audit::AUDIT_EXAMPLES), "\
Each violation is printed with the line of the history (or file:line of the inbox files) that\n\
shows it. See docs/history.md and docs/audit.md.", &[
        (EXIT_OK, "every invariant held"),
        (EXIT_FAILED, "an invariant broke"),
        (EXIT_BAD_INPUT, "nothing could be read (the line and why), or --to-scenario could not be written"),
        (EXIT_BOUND, "nothing broke in what was read, but a Claude Code folder's read stopped at its 64 MiB bound"),
    ]))]
    Audit(audit::AuditArgs),
    /// Follow a live Claude Code team folder and judge it as it changes: every entry kept, violations as they come.
    #[command(after_help = help_tail(examples("Examples", watch::WATCH_EXAMPLES), "\
Every entry ever seen is kept, so the runtime's whole-file rewrites, flipped read flags and a\n\
deleted folder lose nothing. Each violation is printed once, as soon as an entry shows it.\n\
See docs/claude-code.md.", &[
        (EXIT_OK, "the watch ended (--for) with every invariant held"),
        (EXIT_FAILED, "the watch ended (--for) with an invariant broken"),
        (EXIT_BAD_INPUT, "not a Claude Code team folder (nothing was watched)"),
        (EXIT_BOUND, "stopped past --max-entries kept, every invariant held in them (the summary is printed)"),
        (EXIT_INTERRUPTED, "Ctrl-C: the summary of all that was kept is printed"),
    ]))]
    Watch(watch::WatchArgs),
    /// Print a completion script for your shell (bash, zsh, fish, powershell, elvish).
    #[command(after_help = help_tail(examples("Examples", extras::COMPLETION_EXAMPLES), "", &[
        (EXIT_OK, "the script was printed"),
        (EXIT_BAD_INPUT, "an unknown shell"),
    ]))]
    Completions(extras::CompletionsArgs),
    /// Write a man page for handshake and one for each subcommand.
    #[command(after_help = help_tail(examples("Examples", extras::MAN_EXAMPLES), "", &[
        (EXIT_OK, "the pages were written"),
        (EXIT_BAD_INPUT, "the folder could not be written (nothing, or only some pages, written: each named)"),
    ]))]
    Man(extras::ManArgs),
}

const EXPLORE_EXAMPLES: &[(&str, &str)] = &[
    ("handshake explore scenarios/01-happy-shutdown.toml", "every order of deliveries and timers"),
    ("handshake explore my.toml --drop 1 --duplicate 1", "and one message lost, one delivered twice"),
    (
        "handshake explore scenarios/41-lossy-re-ask.toml --drop any",
        "a lossy network: any message lost, any number of times",
    ),
    (
        "handshake explore scenarios/29-lossy-shutdown-asked-twice.toml --drop 1 --compare",
        "what symmetry and sleep sets save",
    ),
    (
        "handshake explore scenarios/22-peer-deadlock.toml --expect --max-latency 5ms",
        "do the file's expectations hold on every schedule?",
    ),
    ("handshake explore my.toml --forge 1 --write found.toml", "save the shortest counterexample as a scenario"),
];

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Threads for `--jobs`: as many as asked, else one per core.
pub fn jobs_or_every_core(asked: Option<usize>) -> usize {
    asked.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The most threads `--jobs` may ask for: each is an OS thread with its
/// own runtime, and past a few hundred the system refuses more (a sweep
/// asking 5,000 aborted) while none of them is faster.
pub const MAX_JOBS: usize = 256;

/// `--jobs 0`, or more than [`MAX_JOBS`], refused alike by every command
/// that takes it: the error, naming what was not done, and the exit status.
pub fn refuse_bad_jobs(asked: Option<usize>, not_done: &str, format: Format) -> Option<i32> {
    let why = match asked {
        Some(0) => "--jobs must be at least 1".to_string(),
        Some(n) if n > MAX_JOBS => format!("--jobs {n} is more threads than are ever useful: give at most {MAX_JOBS}"),
        _ => return None,
    };
    let problem = bad_input::Problem::in_flag("--jobs", &why);
    Some(bad_input::Refusal::line(format!("{why}; nothing was {not_done}"), problem).tell(format))
}

pub fn main(cli: Cli) -> i32 {
    crate::color::set(cli.color);
    match cli.command {
        Command::Run(a) => run::main(a),
        Command::Check(a) => check::main(a),
        Command::Scenarios(a) => scenarios::list(a),
        Command::New(a) => scenarios::new(a),
        Command::Bench(a) => bench::main(a),
        Command::Explore(a) => explore::main(a),
        Command::Merge(a) => merge::main(a),
        Command::Shrink(a) => shrink::main(a),
        Command::Fuzz(a) => fuzz::main(a),
        Command::Audit(a) => audit::main(a),
        Command::Watch(a) => watch::main(a),
        Command::Completions(a) => extras::completions(a),
        Command::Man(a) => extras::man(a),
    }
}

/// `RUST_LOG` controls the runtime's own logs (to stderr); off by default so
/// reports stay clean. Colour only on a terminal: escape codes in a log file
/// or a pipe get in the way of grep.
pub fn init_logging() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "off".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// The folder scenarios live in when no path is given.
pub const DEFAULT_FOLDER: &str = "scenarios";

/// The path a file has, or would have once written: its own real path, or
/// its folder's and its name.
pub(crate) fn real_path(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok().or_else(|| {
        let folder = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(folder).ok()?.join(p.file_name()?))
    })
}

/// Whether `path` may be written without being asked: nothing is there,
/// or a file an earlier run of `command` wrote (its first 4 KiB hold
/// `mark`), which the same input makes again; why not, with `instead`, what
/// to do. A file of the user's own is never written over unasked.
pub(super) fn ours_or_absent(path: &Path, mark: &str, command: &str, instead: &str) -> Result<(), String> {
    use std::io::Read;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    let mut head = Vec::new();
    if meta.is_file() {
        if let Ok(f) = std::fs::File::open(path) {
            let _ = f.take(4096).read_to_end(&mut head);
        }
    }
    if String::from_utf8_lossy(&head).contains(mark) {
        return Ok(());
    }
    Err(format!(
        "{} is there already and is not a file {command} wrote: it is left as it is and this one is not written \
         ({instead})",
        path.display()
    ))
}

/// An output that names an input (it would be overwritten before, or
/// instead of, being read again) or another output (one would be lost):
/// the option, and why. `outputs` are `(option, path)`, `inputs` `(what,
/// path)`. Paths are compared as the files they name: a file that exists
/// by the file itself (reached through a symbolic link, a hard link or a
/// folder's other name, it is one file), one still to be written by its
/// folder's real path and its name.
pub fn clashing_output(outputs: &[(&'static str, &Path)], inputs: &[(&str, &Path)]) -> Option<(&'static str, String)> {
    let real = real_path;
    let file = |p: &Path| -> FileKey {
        #[cfg(unix)]
        if let Ok(m) = std::fs::metadata(p) {
            use std::os::unix::fs::MetadataExt;
            return FileKey::Existing(m.dev(), m.ino());
        }
        FileKey::Named(real(p).unwrap_or_else(|| p.to_path_buf()))
    };
    // An output inside a folder that is read would be read as part of it
    // (a watched team's inbox overwritten by the watch's own trace).
    let folders: Vec<(&str, PathBuf)> = inputs
        .iter()
        .filter(|(_, input)| input.is_dir())
        .filter_map(|(what, input)| Some((*what, std::fs::canonicalize(input).ok()?)))
        .collect();
    for (k, (option, path)) in outputs.iter().enumerate() {
        let key = file(path);
        let inside = real(path).and_then(|r| folders.iter().find(|(_, dir)| r.starts_with(dir)));
        if let Some((what, _)) = inside {
            let why = format!(
                "{option} {} is inside {what}, which is read: it would be read as part of it; write it elsewhere",
                path.display()
            );
            return Some((option, why));
        }
        if let Some((what, _)) = inputs.iter().find(|(_, input)| file(input) == key) {
            let why = format!(
                "{option} {} is {what}: writing it would replace what is read; name another file",
                path.display()
            );
            return Some((option, why));
        }
        if let Some((other, _)) = outputs[..k].iter().find(|(_, p)| file(p) == key) {
            let why =
                format!("{other} and {option} both name {}: one would be lost; give each its own file", path.display());
            return Some((option, why));
        }
    }
    None
}

/// An output that is this process's stdout while the JSON report goes
/// there (`--trace /dev/stdout --format json`): the two would make one
/// stream no JSON reader takes. Stdout sent to `/dev/null` clashes with
/// nothing.
pub fn into_the_json_report(outputs: &[(&'static str, &Path)], format: Format) -> Option<(&'static str, String)> {
    if format != Format::Json {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let key = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let stdout = key(Path::new("/dev/stdout"))?;
        if Some(stdout) == key(Path::new("/dev/null")) {
            return None;
        }
        for (option, path) in outputs {
            if key(path) == Some(stdout) {
                let why = format!(
                    "{option} {} is stdout, where the JSON report goes: the two would be one stream no JSON reader \
                     takes; name a file",
                    path.display()
                );
                return Some((option, why));
            }
        }
    }
    None
}

/// The entries a report lists by name as not judged; the rest are counted.
/// A folder may hold half a million, a screenful says what they are.
pub const UNJUDGED_LISTED: usize = 50;

/// The entries a history could not judge, as `audit` and `watch` list them:
/// the first [`UNJUDGED_LISTED`] with their place and reason, then how many
/// more, and `where_all` (where to find every one), if any.
pub fn print_unjudged(unjudged: &[(String, String)], where_all: &str) {
    for (place, why) in unjudged.iter().take(UNJUDGED_LISTED) {
        println!("      ? {}: {}", shown(place), shown(why));
    }
    if unjudged.len() > UNJUDGED_LISTED {
        println!("      ? … and {} more not judged{where_all}", unjudged.len() - UNJUDGED_LISTED);
    }
}

/// A file as [`clashing_output`] compares it.
#[derive(PartialEq)]
enum FileKey {
    /// A file that exists: its device and its number there.
    #[cfg(unix)]
    Existing(u64, u64),
    /// A file to be written: its folder's real path and its name.
    Named(PathBuf),
}

/// The scenario files the paths name (or the default folder's), or what to
/// do when there are none: every path must hold at least one scenario.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Box<bad_input::Problem>> {
    if paths.is_empty() {
        let default = PathBuf::from(DEFAULT_FOLDER);
        if !default.is_dir() {
            // Outside the project (an installed binary): the scenarios it carries.
            let all: Vec<PathBuf> = crate::format::bundled::all().map(|b| b.path()).collect();
            eprintln!(
                "note: no {DEFAULT_FOLDER}/ folder here: reading the {} bundled scenarios (`handshake scenarios` lists \
                 them; name files or folders to read yours)",
                all.len()
            );
            return Ok(all);
        }
        return expand(&[default]).map_err(|e| Box::new((&e).into()));
    }
    expand(paths).map_err(|e| Box::new((&e).into()))
}

/// A scenario argument: a path that exists, or a bundled scenario's number
/// or name as its `bundled:` path (`format::bundled::resolve`).
pub fn scenario_arg() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    // As the system gives it: a path need not be UTF-8.
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(|s| crate::format::bundled::resolve_os(&s))
}

/// `scenario_files`'s refusal: the paths name no scenario to load.
pub fn refuse_paths(problem: Box<bad_input::Problem>, format: Format) -> i32 {
    bad_input::Refusal::line(problem.to_string(), *problem).tell(format)
}

pub use crate::input::shown;
pub use crate::words::{noun, plural};

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn examples_line_up_and_long_commands_take_their_own_line() {
        let text = examples(
            "Examples",
            &[
                ("handshake run", "all"),
                ("handshake run --seeds 1..3", "three"),
                ("handshake run a-very-long-file-name-for-a-scenario.toml", "one"),
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Examples:");
        let col = lines[1].find("all").unwrap();
        assert_eq!(lines[2].find("three"), Some(col));
        assert_eq!(lines[3], "  handshake run a-very-long-file-name-for-a-scenario.toml");
        assert_eq!(lines[4].find("one"), Some(col));
        assert!(lines[4][..col].trim().is_empty());
    }

    #[test]
    fn every_example_is_a_command_clap_accepts() {
        for (command, _) in TOP_EXAMPLES.iter().chain(RUN_EXAMPLES).chain(CHECK_EXAMPLES).chain(BENCH_EXAMPLES) {
            let parsed = Cli::try_parse_from(command.split_whitespace());
            assert!(parsed.is_ok(), "{command}: {:?}", parsed.err());
        }
        Cli::command().debug_assert();
    }

    #[test]
    fn strings_from_files_are_shown_without_control_characters() {
        assert_eq!(shown("happy-shutdown"), "happy-shutdown");
        assert_eq!(shown("a\nPASS  forged"), "a\\nPASS  forged");
        assert_eq!(shown("\x1b[2Jx"), "\\u{1b}[2Jx");
        assert_eq!(shown("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(shown("größe ok"), "größe ok");
    }
}
