//! `handshake run`: play scenario files and report.

use super::progress::Progress;
use super::{noun, plural, scenario_files, Format, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::protocol::Millis;
use crate::scenario::discover::load_all;
use crate::scenario::duration::parse_duration;
use crate::scenario::{run_scenario, Report, RunOptions, Scenario};
use crate::trace::{Names, Stamped};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario files or folders of them, subfolders included [default: scenarios/]
    pub paths: Vec<PathBuf>,
    /// Run with this seed instead of the file's
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// Sweep seeds A..B (B excluded), e.g. 1..201; failing seeds are listed with the command to reproduce each
    #[arg(long, value_parser = parse_seeds)]
    pub seeds: Option<(u64, u64)>,
    /// Output for people (text) or machines (json)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Stream every event as it happens, in words (one run at a time: not with --seeds)
    #[arg(short, long)]
    pub verbose: bool,
    /// With -v: every event, or only the protocol's (hides each step of work written)
    #[arg(long, value_enum, default_value = "all", value_name = "WHICH")]
    pub events: Events,
    /// Write the event log as JSON Lines to FILE (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Draw the run as an SVG sequence diagram in FILE (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write the run as a Mermaid sequenceDiagram to FILE, to paste into Markdown (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub mermaid: Option<PathBuf>,
    /// Write one self-contained HTML report of the run to FILE: verdict, picture, requests, events (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Virtual-time cap for a run that never settles, e.g. "10m" [default: the file's, else 1h]
    #[arg(long, value_parser = parse_span)]
    pub cap: Option<Millis>,
    /// Real time one run may take before it is stopped, e.g. "30s"
    #[arg(long, value_parser = parse_span, default_value = DEFAULT_MAX_REAL)]
    pub max_real: Millis,
}

const DEFAULT_MAX_REAL: &str = "60s";

/// Which events `-v` streams.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Events {
    All,
    Protocol,
}

fn parse_dur(s: &str) -> Result<Millis, String> {
    let d = parse_duration(s)?;
    if d > crate::scenario::build::MAX_RUN {
        let longest = crate::scenario::duration::human(crate::scenario::build::MAX_RUN);
        return Err(format!("{s:?} is longer than a run may be ({longest})"));
    }
    Ok(d)
}

/// A span that must be there at all: a zero cap or real-time budget would
/// stop every run before its first event.
fn parse_span(s: &str) -> Result<Millis, String> {
    let d = parse_dur(s)?;
    if d == Millis::ZERO {
        return Err(format!("{s:?} would stop every run before it starts: give at least \"1ms\", e.g. \"30s\""));
    }
    Ok(d)
}

fn parse_seeds(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("{s:?}: write a range like 1..201"))?;
    let a: u64 = a.trim().parse().map_err(|_| format!("{a:?} is not a seed (a whole number)"))?;
    let b: u64 = b.trim().parse().map_err(|_| format!("{b:?} is not a seed (a whole number)"))?;
    if b <= a {
        return Err(format!("{s:?} is empty: the end is excluded, so write {a}..{}", a + 1));
    }
    Ok((a, b))
}

pub fn main(a: RunArgs) -> i32 {
    if a.events != Events::All && !a.verbose {
        eprintln!("error: --events chooses what -v streams: add -v (nothing was run)");
        return EXIT_BAD_INPUT;
    }
    if a.verbose && a.seeds.is_some() {
        eprintln!(
            "error: -v streams the events of one run and --seeds makes many: sweep without -v, then replay a \
             failing seed alone with --seed N -v (each failing seed's reproduce line is that command); nothing was run"
        );
        return EXIT_BAD_INPUT;
    }
    let files = match scenario_files(&a.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let (scenarios, errors) = load_all(&files);
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!("nothing was run: fix the file(s) above ({})", plural(errors.len() as u64, "problem"));
        return EXIT_BAD_INPUT;
    }
    let wanted = outputs_wanted(&a);
    if let Some(first) = wanted.first() {
        if scenarios.len() != 1 || a.seeds.is_some() {
            eprintln!(
                "error: {} writes one run: give exactly one scenario file and at most one --seed; nothing was run",
                first.0.option()
            );
            return EXIT_BAD_INPUT;
        }
    }
    // Outputs are opened before anything runs: exit 2 promises nothing ran,
    // and a long run should not end in "cannot write".
    let mut outputs: Vec<(Output, PathBuf, std::fs::File)> = Vec::new();
    for (output, path) in wanted {
        match open_output(output, path) {
            Ok(file) => outputs.push((output, path.to_path_buf(), file)),
            Err(e) => {
                eprintln!("error: {e}; nothing was run");
                return EXIT_BAD_INPUT;
            }
        }
    }
    match a.seeds {
        Some(range) => sweep(&a, &scenarios, range),
        None => single(&a, &scenarios, outputs),
    }
}

/// What one run can write beside its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Trace,
    Svg,
    Mermaid,
    Html,
}

impl Output {
    fn option(self) -> &'static str {
        match self {
            Output::Trace => "--trace",
            Output::Svg => "--svg",
            Output::Mermaid => "--mermaid",
            Output::Html => "--html",
        }
    }
}

fn outputs_wanted(a: &RunArgs) -> Vec<(Output, &Path)> {
    let all =
        [(Output::Trace, &a.trace), (Output::Svg, &a.svg), (Output::Mermaid, &a.mermaid), (Output::Html, &a.html)];
    all.into_iter().filter_map(|(output, p)| p.as_deref().map(|p| (output, p))).collect()
}

/// Opens an output file for writing, or says why it cannot be.
fn open_output(output: Output, path: &Path) -> Result<std::fs::File, String> {
    std::fs::File::create(path)
        .map_err(|e| format!("cannot write the {} file {}: {e}", output.option(), path.display()))
}

/// Writes what each output option asked for; the picture is drawn once even
/// when both `--svg` and `--html` want it.
fn write_outputs(
    outputs: Vec<(Output, PathBuf, std::fs::File)>,
    s: &Scenario,
    report: &Report,
    outcome: &crate::team::Outcome,
    reproduce: &str,
) -> Result<(), String> {
    let opts = crate::view::ViewOptions::titled(&s.name);
    let mut svg: Option<String> = None;
    for (output, path, file) in outputs {
        let written = match output {
            Output::Trace => write_trace(file, outcome),
            Output::Mermaid => write_text(file, &crate::view::mermaid(outcome, &opts)),
            Output::Svg | Output::Html => {
                let svg = svg.get_or_insert_with(|| crate::view::svg(outcome, &opts));
                if output == Output::Svg {
                    write_text(file, svg)
                } else {
                    let page = crate::view::html::Page { about: &s.about, report, reproduce, svg };
                    write_text(file, &crate::view::html::html(outcome, &page))
                }
            }
        };
        written.map_err(|e| format!("writing {} to {}: {e}", output.option(), path.display()))?;
    }
    Ok(())
}

fn write_text(mut file: std::fs::File, text: &str) -> std::io::Result<()> {
    file.write_all(text.as_bytes())
}

fn options(a: &RunArgs, live: bool) -> RunOptions {
    RunOptions {
        cap: a.cap,
        max_real: Some(a.max_real.as_std()),
        live: live.then(|| live_printer(a.events)),
        keep_outcome: !outputs_wanted(a).is_empty(),
    }
}

/// Prints events as they happen, learning request labels on the way.
fn live_printer(which: Events) -> crate::trace::LiveSink {
    let mut names = Names::default();
    Box::new(move |s: &Stamped, agents: &[String]| {
        if names.agents.is_empty() {
            names.agents = agents.to_vec();
        }
        names.learn(&s.event);
        if which == Events::All || s.event.is_protocol() {
            println!("  {}", s.describe(&names));
        }
    })
}

fn single(a: &RunArgs, scenarios: &[Scenario], mut outputs: Vec<(Output, PathBuf, std::fs::File)>) -> i32 {
    let mut reports = Vec::new();
    let started = std::time::Instant::now();
    for s in scenarios {
        let seed = a.seed.unwrap_or_else(|| s.default_seed());
        if a.verbose && a.format == Format::Text {
            println!("── {} (seed {seed})", s.name);
            for line in wrap(&s.about, 76) {
                println!("   {line}");
            }
        }
        let mut report = run_scenario(s, seed, options(a, a.verbose && a.format == Format::Text));
        if a.format == Format::Text {
            print_report(&report, a);
        }
        if let Some(outcome) = report.outcome.take() {
            let replay = reproduce(a, &report.path, report.seed);
            if let Err(e) = write_outputs(std::mem::take(&mut outputs), s, &report, &outcome, &replay) {
                // The run happened: this is a failure, not bad input.
                eprintln!("error: {e}");
                return EXIT_FAILED;
            }
        }
        reports.push(report);
    }
    let failed = reports.iter().filter(|r| !r.passed).count();
    match a.format {
        Format::Text => {
            let virt: u64 = reports.iter().map(|r| r.virtual_ms).sum();
            println!(
                "\n{}: {} passed, {} failed  (virtual {}, real {:.1} ms)",
                plural(reports.len() as u64, "scenario"),
                reports.len() - failed,
                failed,
                Millis(virt),
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        Format::Json => {
            let doc = serde_json::json!({
                "scenarios": reports,
                "summary": {"total": reports.len(), "passed": reports.len() - failed, "failed": failed},
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The command that plays this run again: the program as it was started,
/// the file, the seed, and every option that changes what the run does.
fn reproduce(a: &RunArgs, path: &str, seed: u64) -> String {
    let mut words = vec![program(), "run".to_string(), shell_word(path), "--seed".to_string(), seed.to_string()];
    words.extend(options_that_change_the_run(a));
    words.push("-v".to_string());
    words.join(" ")
}

/// Spelled out field by field, so a new option cannot be added without
/// deciding whether a reproduce line must carry it.
fn options_that_change_the_run(a: &RunArgs) -> Vec<String> {
    let RunArgs {
        paths: _,   // replaced by the one file that failed
        seed: _,    // replaced by the seed that failed
        seeds: _,   // replaced by the seed that failed
        format: _,  // how the report reads, not what happens
        verbose: _, // always on: the point of reproducing is to watch
        trace: _,   // an output, not an input
        svg: _,     // an output
        mermaid: _, // an output
        html: _,    // an output
        events: _,  // what -v shows, not what happens
        cap,
        max_real,
    } = a;
    let mut out = Vec::new();
    if let Some(cap) = cap {
        out.extend(["--cap".to_string(), duration_word(*cap)]);
    }
    if Some(*max_real) != parse_dur(DEFAULT_MAX_REAL).ok() {
        out.extend(["--max-real".to_string(), duration_word(*max_real)]);
    }
    out
}

/// How this program was started. `cargo run` (and `cargo test`) tell the
/// program its package name, and then the same cargo command rebuilds
/// whatever changed first; otherwise the path it was started by (an
/// installed binary, a copied one) is the one that reproduces. `--release`
/// because a run is the same in either build, only faster.
fn program() -> String {
    if std::env::var_os("CARGO_PKG_NAME").is_some_and(|n| n == env!("CARGO_PKG_NAME")) {
        return "cargo run --release --".to_string();
    }
    let argv0 = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned());
    shell_word(argv0.as_deref().filter(|a| !a.is_empty()).unwrap_or(env!("CARGO_PKG_NAME")))
}

/// A duration the way `--cap` reads it back: whole hours, minutes, seconds
/// or milliseconds, exact.
fn duration_word(d: Millis) -> String {
    match d.0 {
        ms if ms > 0 && ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms > 0 && ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// Quotes a word for a POSIX shell when it needs it, so the printed line can
/// be pasted as it is.
fn shell_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=,@%+".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

fn bracketed(labels: &[String]) -> String {
    labels.iter().map(|l| format!("[{l}]")).collect::<Vec<_>>().join(", ")
}

fn print_report(r: &Report, a: &RunArgs) {
    let c = &r.counts;
    println!(
        "{}  {:<48} seed {:<4} {:>4} {:<4} {:>3} {:<10} {:>2} ignored {:>2} expired {:>2} refused  {:>8} virtual {:>7.2} ms real",
        if r.passed { "PASS" } else { "FAIL" },
        r.name,
        r.seed,
        c.messages,
        noun(c.messages as u64, "msg"),
        c.handshakes,
        noun(c.handshakes as u64, "handshake"),
        c.ignored,
        c.expired,
        c.refused,
        Millis(r.virtual_ms).to_string(),
        r.real_ms
    );
    if r.stopped_by != "settled" {
        let pending =
            if r.pending.is_empty() { String::new() } else { format!("; still pending: {}", r.pending.join(", ")) };
        println!("      stopped by the {} at {}{pending}", r.stopped_by, Millis(r.virtual_ms));
    }
    for d in &r.deadlocks {
        let formed = Millis(d.formed_ms);
        match (d.broken_ms, &d.broken_by) {
            (Some(at), Some(by)) => {
                let how = d.default.map_or_else(|| "ending".to_string(), |x| format!("expiring (default {x})"));
                println!("      deadlock {} at {formed}, broken at {} by [{by}] {how}", d.cycle(), Millis(at));
            }
            _ => println!("      DEADLOCKED: {} since {formed}, waiting on {}", d.cycle(), bracketed(&d.requests)),
        }
    }
    if let Some(f) = r.failures.first() {
        println!("      ✗ {} — {} (at {})", f.check, f.message, Millis(f.at_ms));
        if !f.context.is_empty() {
            println!("        what led to it:");
            for line in &f.context {
                println!("        {line}");
            }
        }
        if r.failures.len() > 1 {
            println!(
                "      … and {} more failed {}:",
                r.failures.len() - 1,
                noun(r.failures.len() as u64 - 1, "check")
            );
            for f in &r.failures[1..] {
                println!("        ✗ {} — {}", f.check, f.message);
            }
        }
        if !a.verbose {
            println!("      reproduce: {}", reproduce(a, &r.path, r.seed));
        }
    }
}

fn write_trace(file: std::fs::File, o: &crate::team::Outcome) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(file);
    for e in &o.events {
        serde_json::to_writer(&mut out, &e.to_json(&o.names))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn sweep(a: &RunArgs, scenarios: &[Scenario], (from, to): (u64, u64)) -> i32 {
    let seeds = to - from;
    let total = seeds * scenarios.len() as u64;
    let mut progress = Progress::new(total, "run", a.format == Format::Text);
    let started = std::time::Instant::now();
    let mut failing: Vec<(String, String, u64, String)> = Vec::new();
    let mut rows = Vec::new();
    tracing::info!(runs = total, scenarios = scenarios.len(), from, to, "sweep starts");
    for s in scenarios {
        let mut failed_here = 0;
        let mut real = 0.0;
        for seed in from..to {
            let r = run_scenario(s, seed, options(a, false));
            real += r.real_ms;
            if r.passed {
                progress.tick(None);
            } else {
                failed_here += 1;
                let why = r.failures.first().map(|f| format!("{} — {}", f.check, f.message)).unwrap_or_default();
                progress.tick(Some(&format!("FAIL  {} seed {seed}: {why}", s.name)));
                failing.push((s.name.clone(), s.path.clone(), seed, why));
            }
            log_tenths(&progress, total);
        }
        rows.push((s.name.clone(), failed_here, real));
    }
    let elapsed = started.elapsed().as_secs_f64();
    match a.format {
        Format::Text => {
            for (name, failed, real) in &rows {
                println!(
                    "{}  {:<48} {}/{} {} passed  ({:.1} ms real)",
                    if *failed == 0 { "PASS" } else { "FAIL" },
                    name,
                    seeds - failed,
                    seeds,
                    noun(seeds, "seed"),
                    real
                );
            }
            if !failing.is_empty() {
                println!("\nfailing seeds:");
                for (name, path, seed, why) in &failing {
                    println!("  {name} seed {seed}: {why}\n    reproduce: {}", reproduce(a, path, *seed));
                }
            }
            println!(
                "\n{} ({} × {}): {} passed, {} failed  (real {:.2} s)",
                plural(total, "run"),
                plural(scenarios.len() as u64, "scenario"),
                plural(seeds, "seed"),
                total - failing.len() as u64,
                failing.len(),
                elapsed
            );
        }
        Format::Json => {
            let doc = serde_json::json!({
                "seeds": {"from": from, "to": to},
                "runs": total,
                "failed": failing.iter().map(|(n, p, s, w)| serde_json::json!({"scenario": n, "path": p, "seed": s, "why": w, "reproduce": reproduce(a, p, *s)})).collect::<Vec<_>>(),
                "real_seconds": elapsed,
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    if failing.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// A sweep's progress in the log, every tenth of the way (and at the end).
fn log_tenths(p: &Progress, total: u64) {
    let (done, failed) = (p.done(), p.failed());
    if (done * 10 / total) > ((done - 1) * 10 / total) {
        tracing::info!(done, total, failed, "sweep progress");
    }
}

/// Greedy word wrap for the `about` paragraph.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("starts with one line");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_as_the_options_read_them() {
        for ms in [0, 1, 999, 1000, 1500, 90_000, 120_000, 3_600_000, 5_400_000, 31_536_000_000] {
            let word = duration_word(Millis(ms));
            assert_eq!(parse_duration(&word), Ok(Millis(ms)), "{word}");
        }
        assert_eq!(duration_word(Millis(10_000)), "10s");
        assert_eq!(duration_word(Millis(7_200_000)), "2h");
    }

    #[test]
    fn words_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_word("scenarios/01-happy.toml"), "scenarios/01-happy.toml");
        assert_eq!(shell_word("my scenarios/a.toml"), "'my scenarios/a.toml'");
        assert_eq!(shell_word("it's.toml"), "'it'\\''s.toml'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }
}
