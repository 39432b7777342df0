//! `handshake run`: play scenario files and report.

use super::progress::Progress;
use super::{default_paths, Format, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::protocol::Millis;
use crate::scenario::discover::{expand, load_all};
use crate::scenario::duration::parse_duration;
use crate::scenario::{run_scenario, Report, RunOptions, Scenario};
use crate::trace::{Names, Stamped};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario files or folders of them [default: scenarios/]
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
    /// Stream every event as it happens, in words
    #[arg(short, long)]
    pub verbose: bool,
    /// Write the event log as JSON Lines to FILE (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Virtual-time cap for a run that never settles, e.g. "10m" [default: the file's, else 1h]
    #[arg(long, value_parser = parse_dur)]
    pub cap: Option<Millis>,
    /// Real time one run may take before it is stopped, e.g. "30s"
    #[arg(long, value_parser = parse_dur, default_value = "60s")]
    pub max_real: Millis,
}

fn parse_dur(s: &str) -> Result<Millis, String> {
    let d = parse_duration(s)?;
    if d > crate::scenario::build::MAX_RUN {
        return Err(format!("{s:?} is longer than a run may be ({})", crate::scenario::build::MAX_RUN));
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
    let files = match expand(&default_paths(a.paths.clone())) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    if files.is_empty() {
        println!("no scenarios yet: add .toml files to scenarios/ (see docs/scenarios.md)");
        return EXIT_OK;
    }
    let (scenarios, errors) = load_all(&files);
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!(
            "nothing was run: fix the file(s) above ({} problem{})",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        return EXIT_BAD_INPUT;
    }
    if a.trace.is_some() && (scenarios.len() != 1 || a.seeds.is_some()) {
        eprintln!("error: --trace writes one run's events: give exactly one scenario file and at most one --seed");
        return EXIT_BAD_INPUT;
    }
    match a.seeds {
        Some(range) => sweep(&a, &scenarios, range),
        None => single(&a, &scenarios),
    }
}

fn options(a: &RunArgs, live: bool) -> RunOptions {
    RunOptions {
        cap: a.cap,
        max_real: Some(a.max_real.as_std()),
        live: live.then(live_printer),
        keep_outcome: a.trace.is_some(),
    }
}

/// Prints events as they happen, learning request labels on the way.
fn live_printer() -> crate::trace::LiveSink {
    let mut names = Names::default();
    Box::new(move |s: &Stamped, agents: &[String]| {
        if names.agents.is_empty() {
            names.agents = agents.to_vec();
        }
        names.learn(&s.event);
        println!("  {}", s.describe(&names));
    })
}

fn single(a: &RunArgs, scenarios: &[Scenario]) -> i32 {
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
        let report = run_scenario(s, seed, options(a, a.verbose && a.format == Format::Text));
        if a.format == Format::Text {
            print_report(&report, a);
        }
        if let (Some(path), Some(outcome)) = (&a.trace, &report.outcome) {
            if let Err(e) = write_trace(path, outcome) {
                eprintln!("error: cannot write {}: {e}", path.display());
                return EXIT_BAD_INPUT;
            }
        }
        reports.push(report);
    }
    let failed = reports.iter().filter(|r| !r.passed).count();
    match a.format {
        Format::Text => {
            let virt: u64 = reports.iter().map(|r| r.virtual_ms).sum();
            println!(
                "\n{} scenario{}: {} passed, {} failed  (virtual {}, real {:.1} ms)",
                reports.len(),
                if reports.len() == 1 { "" } else { "s" },
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

fn reproduce(path: &str, seed: u64) -> String {
    format!("cargo run --release -- run {path} --seed {seed} -v")
}

fn print_report(r: &Report, a: &RunArgs) {
    let c = &r.counts;
    println!(
        "{}  {:<48} seed {:<4} {:>4} msgs {:>3} handshakes {:>2} ignored {:>2} expired {:>2} refused  {:>8} virtual {:>7.2} ms real",
        if r.passed { "PASS" } else { "FAIL" },
        r.name,
        r.seed,
        c.messages,
        c.handshakes,
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
                "      … and {} more failed check{}:",
                r.failures.len() - 1,
                if r.failures.len() == 2 { "" } else { "s" }
            );
            for f in &r.failures[1..] {
                println!("        ✗ {} — {}", f.check, f.message);
            }
        }
        if !a.verbose {
            println!("      reproduce: {}", reproduce(&r.path, r.seed));
        }
    }
}

fn write_trace(path: &PathBuf, o: &crate::team::Outcome) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for e in &o.events {
        serde_json::to_writer(&mut out, &e.to_json(&o.names))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn sweep(a: &RunArgs, scenarios: &[Scenario], (from, to): (u64, u64)) -> i32 {
    let seeds = to - from;
    let total = seeds * scenarios.len() as u64;
    let mut progress = Progress::new(total, "runs", true);
    let started = std::time::Instant::now();
    let mut failing: Vec<(String, String, u64, String)> = Vec::new();
    let mut rows = Vec::new();
    for s in scenarios {
        let mut failed_here = 0;
        let mut real = 0.0;
        for seed in from..to {
            let r = run_scenario(s, seed, options(a, false));
            real += r.real_ms;
            if !r.passed {
                failed_here += 1;
                let why = r.failures.first().map(|f| format!("{} — {}", f.check, f.message)).unwrap_or_default();
                failing.push((s.name.clone(), s.path.clone(), seed, why));
            }
            progress.tick(failing.len() as u64);
        }
        rows.push((s.name.clone(), failed_here, real));
    }
    let elapsed = started.elapsed().as_secs_f64();
    match a.format {
        Format::Text => {
            for (name, failed, real) in &rows {
                println!(
                    "{}  {:<48} {}/{} seeds passed  ({:.1} ms real)",
                    if *failed == 0 { "PASS" } else { "FAIL" },
                    name,
                    seeds - failed,
                    seeds,
                    real
                );
            }
            if !failing.is_empty() {
                println!("\nfailing seeds:");
                for (name, path, seed, why) in &failing {
                    println!("  {name} seed {seed}: {why}\n    reproduce: {}", reproduce(path, *seed));
                }
            }
            println!(
                "\n{} runs ({} scenario{} × {} seeds): {} passed, {} failed  (real {:.2} s)",
                total,
                scenarios.len(),
                if scenarios.len() == 1 { "" } else { "s" },
                seeds,
                total - failing.len() as u64,
                failing.len(),
                elapsed
            );
        }
        Format::Json => {
            let doc = serde_json::json!({
                "seeds": {"from": from, "to": to},
                "runs": total,
                "failed": failing.iter().map(|(n, p, s, w)| serde_json::json!({"scenario": n, "path": p, "seed": s, "why": w, "reproduce": reproduce(p, *s)})).collect::<Vec<_>>(),
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
