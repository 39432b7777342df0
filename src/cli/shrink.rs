//! `handshake shrink`: cut a failing run down to a small scenario file.

use super::bad_input::{Problem, Refusal};
use super::{plural, Format, EXIT_FAILED, EXIT_OK};
use crate::scenario::Invariant;
use crate::shrink::{shrink, Options, ShrinkError, Shrunk, DEFAULT_MAX_RUNS};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ShrinkArgs {
    /// The scenario file whose run breaks an invariant (or a bundled scenario's number or name)
    #[arg(value_parser = super::scenario_arg())]
    pub path: PathBuf,
    /// The seed of the failing run [default: the file's seed]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Where to write the shrunk scenario; `-` prints it [default: FILE-shrunk.toml next to FILE]
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Stop after this many runs (every run counts, the written file's check too) and write the smallest file found so far
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RUNS)]
    pub max_runs: u64,
    /// The invariant to keep broken [default: the first one the run breaks that the file does not expect]
    #[arg(long, value_name = "NAME", value_parser = parse_invariant)]
    pub invariant: Option<Invariant>,
    /// The shrunk scenario's name [default: the file's name with -shrunk]
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub name: Option<String>,
    /// Threads that play candidates; the file written, the re-runs counted and the report are the same for any number [default: every core]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Output for people (text) or machines (json: one document on stdout, the file's text included; bad input as an error object, docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write the shrunk scenario's run as a page to step through (as `run --html` writes one)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

const EXAMPLES: &[(&str, &str)] = &[
    ("handshake shrink found.toml --seed 7", "write found-shrunk.toml next to it"),
    ("handshake shrink found.toml --seed 7 --out regressions/x.toml", "save it as a regression `cargo test` replays"),
    ("handshake shrink found.toml --out -", "print the file (the summary goes to stderr)"),
    ("handshake shrink found.toml --jobs 1 --format json", "on one thread, a report for machines"),
];

/// The command's examples and exit statuses.
pub fn after_help() -> String {
    super::help_tail(
        super::examples("Examples", EXAMPLES),
        "Faults, then steps, then teammates are delta-debugged to a 1-minimal set, then simplified (defences back on,\n\
fixed latency, earlier times, smaller counts, probability 1); the file written expects what it breaks, and is\n\
run before it is written. Candidates are played on --jobs threads; the file and the report are the same for any\n\
number (re-runs are counted as one thread plays them; only the `real` line and fields differ). See docs/shrink.md.",
        &[
            (super::EXIT_OK, "the shrunk file was written"),
            (super::EXIT_FAILED, "the shrunk file did not reproduce (nothing written)"),
            (super::EXIT_BAD_INPUT, "bad input, nothing to shrink, or an output that could not be written (each said)"),
            (
                super::EXIT_INTERRUPTED,
                "interrupted (Ctrl-C): the smallest file so far is written (it reproduces), with the command that goes on",
            ),
        ],
    )
}

/// The name the shrunk file gets, held to the file's own rule for `name`:
/// refused here, before anything runs, rather than by the check of the file
/// written at the end (which blamed the input file).
fn parse_name(name: &str) -> Result<String, String> {
    if name.trim().is_empty() {
        return Err("the shrunk scenario needs a name: give a non-empty one, like --name my-regression".to_string());
    }
    if let Some(c) = name.chars().find(|&c| crate::input::hidden(c)) {
        return Err(format!(
            "the name holds the control character {c:?}: a scenario's name may hold no control characters \
             (newlines, tabs, terminal escapes)"
        ));
    }
    Ok(name.to_string())
}

fn parse_invariant(name: &str) -> Result<Invariant, String> {
    Invariant::parse(name).ok_or_else(|| {
        format!(
            "`{name}` is not an invariant: {}",
            Invariant::all().iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
        )
    })
}

/// `dir/stem-shrunk.toml`.
pub fn default_out(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scenario".into());
    // A bundled scenario's shrunk copy is a file of the user's own: no prefix.
    let stem = stem.strip_prefix(crate::format::bundled::PREFIX).map_or(stem.clone(), str::to_string);
    path.with_file_name(format!("{stem}-shrunk.toml"))
}

pub fn main(a: ShrinkArgs) -> i32 {
    let shown = a.path.display().to_string();
    if let Some(code) = super::refuse_bad_jobs(a.jobs, "shrunk", a.format) {
        return code;
    }
    let to_stdout = a.out.as_deref() == Some(Path::new("-"));
    // The shrunk file goes beside the file shrunk: a pipe (`/dev/stdin`)
    // has no folder of the user's to put it in.
    if a.out.is_none() && crate::input::is_pipe(&a.path) {
        let why = format!(
            "{shown} is a pipe, so there is no folder beside it for the shrunk file: give --out FILE, or --out - for \
             stdout"
        );
        return Refusal::line(format!("{why}; nothing was shrunk"), Problem::in_flag("--out", why)).tell(a.format);
    }
    let out = a.out.clone().unwrap_or_else(|| default_out(&a.path));
    // Refused before shrinking, which can take minutes, not after it.
    if let (false, Err(e)) = (to_stdout, crate::output::check(&out)) {
        let flag = if a.out.is_some() { "--out" } else { "the shrunk file (see --out)" };
        let problem = Problem::in_flag("--out", e.clone()).at(out.display());
        return Refusal::line(format!("{flag}: {e}; nothing was shrunk"), problem).tell(a.format);
    }
    // The file beside the input is shrink's own to write again, never one
    // of the user's that happens to have its name.
    let instead = "give --out to write elsewhere, or --out with its name to replace it";
    if let (None, Err(e)) = (&a.out, super::ours_or_absent(&out, crate::shrink::SHRUNK_MARK, "shrink", instead)) {
        let problem = Problem::in_flag("--out", e.clone()).at(out.display());
        return Refusal::line(format!("{e}; nothing was shrunk"), problem).tell(a.format);
    }
    if let Some((page, Err(e))) = a.html.as_deref().map(|p| (p, crate::output::check(p))) {
        let problem = Problem::in_flag("--html", e.clone()).at(page.display());
        return Refusal::line(format!("--html: {e}; nothing was shrunk"), problem).tell(a.format);
    }
    let mut outputs: Vec<(&'static str, &Path)> = Vec::new();
    if !to_stdout {
        outputs.push(("--out", &out));
    }
    outputs.extend(a.html.as_deref().map(|p| ("--html", p)));
    if let Some((flag, why)) = super::clashing_output(&outputs, &[("the file being shrunk", &a.path)]) {
        let problem = Problem::in_flag(flag, why.clone());
        return Refusal::line(format!("{why}; nothing was shrunk"), problem).tell(a.format);
    }
    let src = match crate::scenario::read_file(&a.path) {
        Ok(s) => s,
        Err(e) => return Refusal::line(e.to_string(), Problem::from(&e)).tell(a.format),
    };
    // Loaded here first so that a bad file is shown as every command shows one.
    if let Err(errors) = crate::scenario::load_str(&shown, &src) {
        return Refusal::files(&errors, "nothing was shrunk", "nothing was shrunk: fix the file above").tell(a.format);
    }
    let jobs = super::jobs_or_every_core(a.jobs);
    let opts = Options {
        seed: a.seed,
        max_runs: a.max_runs,
        invariant: a.invariant,
        name: a.name,
        jobs,
        stop: crate::interrupt::requested,
    };
    crate::interrupt::install();
    let s = match shrink(&shown, &src, &opts) {
        Ok(s) => s,
        Err(e @ ShrinkError::Interrupted(_)) => {
            eprintln!("{e}");
            return super::EXIT_INTERRUPTED;
        }
        Err(e @ (ShrinkError::BadInput(_) | ShrinkError::NothingToShrink(_))) => {
            let why = e.to_string();
            // `--max-runs 2 is too few`: the option is the first word.
            let problem = match why.split_whitespace().next().filter(|w| w.starts_with("--")) {
                Some(flag) => Problem::in_flag(flag, why.clone()),
                None => Problem::in_file(&shown, why.clone()),
            };
            // Said as every refusal is: `error:` first, and what was not done.
            let line = match e {
                ShrinkError::BadInput(_) => format!("{why}; nothing was shrunk"),
                _ => why,
            };
            return Refusal::line(line, problem).tell(a.format);
        }
        Err(e @ ShrinkError::DoesNotReproduce(_)) => {
            eprintln!("{e}");
            return EXIT_FAILED;
        }
    };
    // Written before anything is reported, so that a report never names a file that is not there.
    if !to_stdout {
        if let Err(e) = crate::output::write(&out, &s.text) {
            return Refusal::line(e.clone(), Problem::in_flag("--out", e).at(out.display())).tell(a.format);
        }
    }
    let written = (!to_stdout).then(|| out.display().to_string());
    let page_failed = a.html.as_ref().is_some_and(|page| !write_page(page, &s, written.as_deref()));
    match a.format {
        Format::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(&json_report(&shown, &s, written.as_deref())).unwrap_or_default()
            )
        }
        Format::Text => {
            for line in text_report(&shown, &s, written.as_deref()) {
                if to_stdout {
                    eprintln!("{line}");
                } else {
                    println!("{line}");
                }
            }
            if to_stdout {
                print!("{}", s.text);
            }
        }
    }
    if s.interrupted {
        // The file written is a smaller failing scenario: shrinking it goes on from there.
        let from = written.as_deref().map_or_else(|| "FILE".to_string(), crate::words::path_word);
        // The shrunk file expects what it breaks, so the resume names the
        // invariant to keep broken (without it, nothing is left to shrink).
        eprintln!(
            "interrupted (Ctrl-C): resume with: {} shrink {from} --seed {} --invariant {}",
            super::args::program(),
            s.seed,
            s.invariant
        );
        return super::EXIT_INTERRUPTED;
    }
    if page_failed {
        // As in `run`: an output that failed as it was written is bad
        // input, though the shrink (reported above) happened.
        return super::EXIT_BAD_INPUT;
    }
    EXIT_OK
}

/// The shrunk run as a page to step through, at `page`; false (and
/// said) when it could not be written. `written`: where the shrunk file
/// is, if not on stdout.
fn write_page(page: &Path, s: &Shrunk, written: Option<&str>) -> bool {
    // Written to stdout, the file has no name yet: a placeholder the
    // reader replaces, not a path to quote.
    let shown_out = written.map_or_else(|| "SHRUNK.toml".to_string(), crate::words::path_word);
    let made = crate::scenario::load_str(&shown_out, &s.text)
        .map_err(|_| "the shrunk scenario does not load".to_string())
        .and_then(|shrunk| {
            let reproduce = format!("{} run {shown_out} --seed {} -v", super::args::program(), s.seed);
            crate::view::page::stepping_page(&shrunk, s.seed, None, &shrunk.name, &reproduce)
        })
        .and_then(|html| crate::output::write(page, &html).map_err(|e| e.to_string()));
    match made {
        Ok(()) => {
            eprintln!("wrote {}: the shrunk run to step through, event by event", page.display());
            true
        }
        Err(e) => {
            eprintln!("no page written: {e}");
            false
        }
    }
}

/// The report for people, line by line. Only the line that starts `real`
/// depends on the machine and `--jobs`; every other is the same for any
/// number of threads.
pub fn text_report(shown: &str, s: &Shrunk, written: Option<&str>) -> Vec<String> {
    let mut lines = vec![format!("shrunk {shown} seed {}: breaks {}: {}", s.seed, s.invariant, s.detail)];
    lines.push(format!(
        "  faults {} → {}, steps {} → {}, teammates {} → {}{}",
        s.before.faults,
        s.after.faults,
        s.before.steps,
        s.after.steps,
        s.before.teammates,
        s.after.teammates,
        if s.before.agents != s.before.teammates as u64 || s.after.agents != s.after.teammates as u64 {
            format!(" (agents {} → {})", s.before.agents, s.after.agents)
        } else {
            String::new()
        }
    ));
    lines.extend(s.changes.iter().map(|c| format!("  {c}")));
    lines.push(format!(
        "  {} re-runs (cap {}){}",
        s.runs,
        s.max_runs,
        if s.interrupted {
            ": Ctrl-C stopped it; the file is the smallest so far, and reproduces, but is not shown 1-minimal"
        } else if s.capped {
            ": the cap stopped it; the file reproduces but is not shown 1-minimal"
        } else {
            ", 1-minimal"
        }
    ));
    lines.push(format!(
        "  real {:.1} ms, {}: {} played",
        s.elapsed.as_secs_f64() * 1000.0,
        plural(s.jobs as u64, "thread"),
        plural(s.played, "run")
    ));
    match written {
        Some(path) if s.passes => lines.push(format!(
            "wrote {path} (`{} run` passes it: it expects {})",
            super::args::program(),
            s.broken.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
        )),
        Some(path) => lines.push(format!(
            "wrote {path} (`{} run` fails it: every defence is on, so the violation is a bug and cannot be expected)",
            super::args::program()
        )),
        None => {}
    }
    lines
}

/// The report for machines. `real_seconds` and `played` depend on the
/// machine and `--jobs`; every other field is the same for any number of threads.
pub fn json_report(shown: &str, s: &Shrunk, written: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "file": shown,
        "seed": s.seed,
        "invariant": s.invariant.name(),
        "detail": s.detail,
        "broken": s.broken.iter().map(|i| i.name()).collect::<Vec<_>>(),
        "before": s.before,
        "after": s.after,
        "changes": s.changes,
        "reruns": s.runs,
        "max_runs": s.max_runs,
        "capped": s.capped,
        "interrupted": s.interrupted,
        "minimal": s.minimal,
        "written": written,
        "passes": s.passes,
        "text": s.text,
        "real_seconds": crate::words::real_seconds(s.elapsed.as_secs_f64()),
        "played": {"runs": s.played, "jobs": s.jobs},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_is_a_command_clap_accepts() {
        use clap::Parser;
        for (command, _) in EXAMPLES {
            let parsed = super::super::Cli::try_parse_from(command.split_whitespace());
            assert!(parsed.is_ok(), "{command}: {:?}", parsed.err());
        }
    }
}
