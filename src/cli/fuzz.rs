//! `handshake fuzz`: swarm testing over scenario files (see `crate::fuzz`).

use super::args::{parse_seeds, parse_span};
use super::bad_input::{Problem, Refusal};
use super::{noun, plural, scenario_files, Format, EXIT_FAILED, EXIT_OK};
use crate::fuzz::{Case, Target};
use crate::protocol::Millis;
use crate::words::path_word;
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const FUZZ_EXAMPLES: &[(&str, &str)] = &[
    ("handshake fuzz", "seeds 1 to 100 over every scenario in scenarios/"),
    ("handshake fuzz --seeds 1..10001 --shrink", "10,000 seeds, each find shrunk as it is made"),
    ("handshake fuzz my.toml --out finds/", "one file, its finds written to finds/"),
    ("handshake fuzz --format json", "one JSON document for machines"),
];

#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Scenario files or folders of them, subfolders included, or a bundled scenario's number or name (`handshake scenarios` lists them) [default: scenarios/, or every bundled scenario where there is none]
    #[arg(value_parser = super::scenario_arg())]
    pub paths: Vec<PathBuf>,
    /// Seeds A..B (B excluded): each seed adds its own random faults to every scenario
    #[arg(long, value_parser = parse_seeds, default_value = "1..101")]
    pub seeds: (u64, u64),
    /// Folder each find is written to, as a scenario file `handshake run` replays
    #[arg(long, value_name = "DIR", default_value = "fuzz-findings")]
    pub out: PathBuf,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Real time one run may take before it is stopped (a stopped run is a find), e.g. "30s"
    #[arg(long, value_parser = parse_span, default_value = "60s")]
    pub max_real: Millis,
    /// Threads that play runs; finds are reported in seed order, the same for any number [default: every core]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Shrink each find as it is made (as `handshake shrink` does) and write the shrunk file beside it
    #[arg(long)]
    pub shrink: bool,
    /// Count what a file's own switched-off defences let through as finds. By default a run that breaks an
    /// invariant in a file that switches defences off is played again with every defence on: a violation
    /// only the file's choice causes is shown as SEEN, naming the defence, and not counted
    #[arg(long)]
    pub count_defences_off: bool,
}

/// One find as reported: where it was written and how to replay it.
#[derive(serde::Serialize)]
struct Found {
    #[serde(flatten)]
    case: Case,
    file: Option<String>,
    reproduce: Option<String>,
    /// With `--shrink`: the shrunk file, or why there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    shrunk: Option<Result<String, String>>,
}

pub fn main(a: FuzzArgs) -> i32 {
    let files = match scenario_files(&a.paths) {
        Ok(f) => f,
        Err(problem) => return super::refuse_paths(problem, a.format),
    };
    let targets = match load_targets(&a, &files) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let stems = file_names(&targets);
    let (from, to) = a.seeds;
    let seeds = to - from;
    let total = seeds.saturating_mul(targets.len() as u64);
    let text = a.format == Format::Text;
    let mut progress = super::progress::Progress::new(total, "run", "found", text);
    let started = Instant::now();
    let max_real = Some(a.max_real.as_std());
    let mut tally = Tally::default();
    if let Some(code) = super::refuse_bad_jobs(a.jobs, "fuzzed", a.format) {
        return code;
    }
    // Where the finds go is checked before any run: found and then lost is worse than refused.
    if let Err(why) = finds_folder(&a.out) {
        return Refusal::line(format!("{why}; nothing was fuzzed"), Problem::in_flag("--out", why)).tell(a.format);
    }
    if let Some(why) = input_in_the_way(&a.out, &targets, &stems, a.seeds) {
        return Refusal::line(format!("{why}; nothing was fuzzed"), Problem::in_flag("--out", why)).tell(a.format);
    }
    let jobs = super::jobs_or_every_core(a.jobs);
    crate::interrupt::install();
    // Seed by seed (in chunks), every scenario of a chunk before the next:
    // a fuzz stopped by Ctrl-C resumes from the first seed of its chunk
    // that the chunk's last file has not played (every earlier file has).
    let chunk = chunk_of_seeds(targets.len());
    let mut stopped_at = None;
    'all: for start in (from..to).step_by(chunk as usize) {
        let end = start.saturating_add(chunk).min(to);
        for (k, (t, stem)) in targets.iter().zip(&stems).enumerate() {
            if crate::interrupt::requested() {
                stopped_at = Some(start);
                break 'all;
            }
            let (played, whole) = cases(t, start..end, max_real, jobs);
            let last_file = k + 1 == targets.len();
            let resume = if last_file { first_unplayed(start, played.iter().map(|(s, _)| *s)) } else { start };
            for (seed, case) in played {
                tally.take(&a, t, stem, seed, case, jobs, &mut progress);
                progress.advance(1);
            }
            if !whole {
                // Cut short by Ctrl-C: what the chunk's files have not all played is played again on resume.
                stopped_at = Some(resume);
                break 'all;
            }
        }
    }
    // Done or stopped: the summary takes the line's place.
    progress.clear();
    tally.report(&a, targets.len(), started.elapsed().as_secs_f64(), stopped_at.is_some());
    if let Some(start) = stopped_at {
        eprintln!(
            "interrupted: {} of {} runs played ({} with a find); resume with:\n  {}",
            tally.played,
            seeds.saturating_mul(targets.len() as u64),
            tally.found.runs,
            super::args::resume_command(start, to)
        );
        return super::EXIT_INTERRUPTED;
    }
    if tally.found.runs == 0 && tally.refused.runs == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The first seed from `start` on that `played` lacks: the threads of a
/// chunk each stop before their next seed, so what they played need not
/// be one run of seeds.
fn first_unplayed(start: u64, played: impl Iterator<Item = u64>) -> u64 {
    let mut seeds: Vec<u64> = played.collect();
    seeds.sort_unstable();
    let mut next = start;
    for s in seeds {
        if s != next {
            break;
        }
        next += 1;
    }
    next
}

/// How many seeds of each file a chunk plays: about 512 runs a chunk, so a
/// resume after Ctrl-C plays few runs again, however many files; at least
/// 32 a file, so each batch of a file's seeds keeps the threads busy.
fn chunk_of_seeds(files: usize) -> u64 {
    (512 / files.max(1) as u64).clamp(32, 512)
}

/// Every file loaded (and run once, plain) before any fuzzing, or the exit
/// code of the refusal: exit 2 promises nothing was fuzzed.
fn load_targets(a: &FuzzArgs, files: &[std::path::PathBuf]) -> Result<Vec<Target>, i32> {
    let mut targets = Vec::new();
    let mut said = String::new();
    let mut problems = Vec::new();
    for f in files {
        let shown = f.display().to_string();
        let text = match crate::scenario::read_file(f) {
            Ok(t) => t,
            Err(e) => {
                said.push_str(&crate::diagnostic::render(&e, crate::diagnostic::stderr_color()));
                problems.push(Problem::from(&e));
                continue;
            }
        };
        match Target::new(&shown, text) {
            Ok(mut t) => {
                t.count_defences_off = a.count_defences_off;
                targets.push(t)
            }
            Err(errors) => {
                said.push_str(&crate::diagnostic::render_all(&errors, crate::diagnostic::stderr_color()));
                problems.extend(errors.iter().map(Problem::from));
            }
        }
    }
    if !problems.is_empty() {
        said.push_str(&format!(
            "nothing was fuzzed: fix the file(s) above ({})\n",
            plural(problems.len() as u64, "problem")
        ));
        return Err(Refusal::problems(said, problems, "nothing was fuzzed").tell(a.format));
    }
    Ok(targets)
}

/// Runs of one scenario whose finds have the same causes (`Case::causes`):
/// one root cause, said once, with how often and from which seeds.
#[derive(serde::Serialize)]
struct Cause {
    scenario: String,
    path: String,
    causes: Vec<String>,
    /// The first run's words: its first finding, unmasked.
    detail: String,
    /// The first [`LISTED`] seeds.
    seeds: Vec<u64>,
    /// Every run of the cause, listed or not.
    runs: u64,
    smallest_seed: u64,
    /// How to replay the smallest seed's find (for finds written to a file).
    reproduce: Option<String>,
    /// The causes besides the first finding's: two causes whose first
    /// findings read the same differ there (in the JSON, `causes` has all).
    #[serde(skip)]
    also: Vec<String>,
}

/// The causes seen so far, in the order first seen.
#[derive(Default)]
struct Causes {
    all: Vec<Cause>,
    index: std::collections::HashMap<(String, Vec<String>), usize>,
}

impl Causes {
    /// Counts `case` under its cause; true if the cause is new (the case is
    /// to be said), false if it was seen before (only counted).
    fn count(&mut self, case: &Case, reproduce: Option<&String>) -> bool {
        let causes = case.causes();
        let key = (case.path.clone(), causes.clone());
        if let Some(&i) = self.index.get(&key) {
            let c = &mut self.all[i];
            c.runs += 1;
            if c.seeds.len() < LISTED {
                c.seeds.push(case.seed);
            }
            if case.seed < c.smallest_seed {
                c.smallest_seed = case.seed;
                c.reproduce = reproduce.cloned();
            }
            return false;
        }
        let first = case.findings.first().or(case.only_without.first());
        let also = causes.iter().filter(|c| first.is_none_or(|f| f.cause() != **c)).cloned().collect();
        self.index.insert(key, self.all.len());
        self.all.push(Cause {
            also,
            scenario: case.scenario.clone(),
            path: case.path.clone(),
            causes,
            detail: first.map(|f| format!("{} — {}", f.invariant, f.detail)).unwrap_or_default(),
            seeds: vec![case.seed],
            runs: 1,
            smallest_seed: case.seed,
            reproduce: reproduce.cloned(),
        });
        true
    }

    /// Each cause once: how many runs, the seeds, the smallest's reproduce line.
    fn print(&self, heading: &str) {
        if self.all.is_empty() {
            return;
        }
        let runs: u64 = self.all.iter().map(|c| c.runs).sum();
        println!("{heading} ({} in {}):", plural(self.all.len() as u64, "cause"), plural(runs, "run"));
        for c in &self.all {
            const SHOWN: usize = 8;
            let mut seeds: Vec<String> = c.seeds.iter().take(SHOWN).map(u64::to_string).collect();
            if c.runs > SHOWN as u64 {
                seeds.push(format!("and {} more", c.runs - SHOWN as u64));
            }
            println!("  ×{:<4} {}: {}", c.runs, c.scenario, crate::fuzz::one_line(&c.detail, 150));
            for other in &c.also {
                println!("         and {}", crate::fuzz::one_line(other, 150));
            }
            // A cause kept only as seen (or whose find could not be
            // written) has no file to replay: the fuzz of its seed plays it.
            let replay = match &c.reproduce {
                Some(r) => format!("replays: {r}"),
                None => {
                    let seed = c.smallest_seed;
                    format!("is played again by: {}", super::args::resume_command(seed, seed.saturating_add(1)))
                }
            };
            println!(
                "         {} {}; the smallest, {}, {replay}",
                noun(c.runs, "seed"),
                seeds.join(", "),
                c.smallest_seed
            );
        }
    }
}

/// The most runs a fuzz lists of each kind (finds, refusals, runs broken
/// only without a defence) and the most seeds it lists of a cause: the
/// rest are counted. A fuzz may play for days, and one that kept every
/// such run grew with them.
const LISTED: usize = 100;

/// Runs of one kind: the first [`LISTED`] kept, every one counted.
struct Listed<T> {
    items: Vec<T>,
    runs: u64,
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Listed { items: Vec::new(), runs: 0 }
    }
}

impl<T> Listed<T> {
    fn push(&mut self, item: T) {
        self.runs += 1;
        if self.items.len() < LISTED {
            self.items.push(item);
        }
    }
}

/// What a fuzz found so far, run by run.
#[derive(Default)]
struct Tally {
    played: u64,
    faults_added: u64,
    steps_added: u64,
    /// Runs whose additions changed an outcome the file expects.
    changed: u64,
    found: Listed<Found>,
    /// The generator's bugs: additions the file reader refused.
    refused: Listed<Case>,
    /// Broken only without a defence the file itself switches off: shown,
    /// not counted (exit 1 means an invariant broke with every defence on).
    only_without: Listed<Case>,
    by_invariant: BTreeMap<String, u64>,
    by_scenario: BTreeMap<String, u64>,
    /// The finds by root cause: only the first of each cause is said as it comes.
    causes: Causes,
    /// The same for runs broken only without a defence the file switches off.
    seen_causes: Causes,
}

impl Tally {
    /// One run of `t` (written under `stem`) with `seed`: counted, and a
    /// find written, shrunk if asked, and said.
    #[allow(clippy::too_many_arguments)]
    fn take(
        &mut self,
        a: &FuzzArgs,
        t: &Target,
        stem: &str,
        seed: u64,
        case: Case,
        jobs: usize,
        progress: &mut super::progress::Progress,
    ) {
        let text = a.format == Format::Text;
        let Tally {
            played,
            faults_added,
            steps_added,
            changed,
            found,
            refused,
            only_without,
            by_invariant,
            by_scenario,
            causes,
            seen_causes,
        } = self;
        *played += 1;
        *faults_added += case.faults_added() as u64;
        *steps_added += case.steps_added() as u64;
        *changed += u64::from(case.changed);
        if !case.refused.is_empty() {
            progress.above(|| {
                eprintln!(
                    "generator bug: {} seed {seed}: the additions were refused: {}",
                    t.name,
                    case.refused.join("; ")
                )
            });
            refused.push(case);
        } else if !case.only_without.is_empty() {
            // A cause seen before is counted, not said again.
            if seen_causes.count(&case, None) && text {
                progress.above(|| print_only_without(&case));
            }
            only_without.push(case);
        } else if case.found() {
            let invariants: std::collections::BTreeSet<&str> =
                case.findings.iter().map(|f| f.invariant.as_str()).collect();
            for i in invariants {
                *by_invariant.entry(i.to_string()).or_default() += 1;
            }
            *by_scenario.entry(t.path.clone()).or_default() += 1;
            let options = reproduce_options(a);
            let (file, reproduce) = match write_finding(&a.out, stem, t, &case, &options) {
                Ok(p) => {
                    let p = p.display().to_string();
                    let r = format!("{} run {} --seed {seed}{options}", super::args::program(), path_word(&p));
                    (Some(p), Some(r))
                }
                Err(e) => {
                    progress.above(|| eprintln!("error: {e}"));
                    (None, None)
                }
            };
            let shrunk = match (&file, a.shrink) {
                (Some(path), true) => Some(shrink_find(path, seed, jobs)),
                _ => None,
            };
            let new_cause = causes.count(&case, reproduce.as_ref());
            let f = Found { case, file, reproduce, shrunk };
            if text && new_cause {
                progress.above(|| print_found(&f));
            }
            progress.count_failure();
            found.push(f);
        }
    }

    /// The summary, as text or JSON.
    fn report(&self, a: &FuzzArgs, targets: usize, elapsed: f64, stopped_early: bool) {
        let (from, to) = a.seeds;
        let seeds = to - from;
        let total = self.played;
        let Tally {
            faults_added,
            steps_added,
            changed,
            found,
            refused,
            only_without,
            by_invariant,
            by_scenario,
            causes,
            seen_causes,
            ..
        } = self;
        let (faults_added, steps_added, changed) = (*faults_added, *steps_added, *changed);
        match a.format {
            Format::Text => {
                println!(
                    "\n{} ({}{} × {}, {} and {} added): {} with a find, {} refused  (real {:.1} s, {:.0} runs/s)",
                    plural(total, "run"),
                    if stopped_early { "stopped early, of " } else { "" },
                    plural(targets as u64, "scenario"),
                    plural(seeds, "seed"),
                    plural(faults_added, "fault"),
                    plural(steps_added, "step"),
                    found.runs,
                    refused.runs,
                    elapsed,
                    total as f64 / elapsed.max(1e-9)
                );
                println!(
                    "the additions changed an outcome the file expects in {changed} of them ({:.0}%)",
                    100.0 * changed as f64 / total.max(1) as f64
                );
                if only_without.runs > 0 {
                    println!(
                        "{} broke an invariant only without a defence its file switches off: not counted as finds",
                        plural(only_without.runs, "run")
                    );
                }
                if !by_invariant.is_empty() {
                    println!("finds by invariant:");
                    for (inv, n) in by_invariant {
                        println!("  {inv:<20} {n} {}", noun(*n, "run"));
                    }
                    println!("finds by scenario:");
                    for (name, n) in by_scenario {
                        println!("  {name:<48} {n} {}", noun(*n, "seed"));
                    }
                }
                // Each root cause once: the stream said only its first run.
                causes.print("finds by cause");
                seen_causes.print("broken only without a defence, by cause");
            }
            Format::Json => {
                let doc = serde_json::json!({
                    "seeds": {"from": from, "to": to},
                    "scenarios": targets,
                    "runs": total,
                    "faults_added": faults_added,
                    "steps_added": steps_added,
                    "changed": changed,
                    "found": found.items,
                    "finds": found.runs,
                    "refused": refused.items,
                    "refused_runs": refused.runs,
                    "only_without_a_defence": only_without.items,
                    "only_without_a_defence_runs": only_without.runs,
                    "listed_at_most": LISTED,
                    "by_invariant": by_invariant,
                    "by_scenario": by_scenario,
                    "causes": causes.all,
                    "causes_only_without_a_defence": seen_causes.all,
                    "real_seconds": crate::words::real_seconds(elapsed),
                });
                println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            }
        }
    }
}

fn print_found(f: &Found) {
    let c = &f.case;
    let first = &c.findings[0];
    let word = crate::color::paint("FOUND", crate::color::Paint::Fail, crate::color::stdout());
    println!("{word}  {} seed {}: {} — {}", c.scenario, c.seed, first.invariant, first.detail);
    for more in others(&c.findings) {
        println!("       and {} — {}", more.invariant, more.detail);
    }
    println!("       {}", c.summary());
    if c.defences_on {
        println!("       judged with every defence on (the file switches off {})", c.ran_without.join(", "));
    }
    if let Some(r) = &f.reproduce {
        println!("       reproduce: {r}");
    }
    match &f.shrunk {
        Some(Ok(line)) => println!("       shrunk: {line}"),
        Some(Err(why)) => println!("       not shrunk: {why}"),
        None => {}
    }
}

/// The findings after the first whose cause is not one already said
/// (the same break of another request is the same line to a reader).
fn others(all: &[crate::fuzz::Finding]) -> impl Iterator<Item = &crate::fuzz::Finding> {
    let mut said = std::collections::BTreeSet::new();
    all.iter().filter(move |f| said.insert(f.cause())).skip(1)
}

/// A run that broke an invariant only because its file switches a
/// defence off: said, with the defence, and not counted.
fn print_only_without(c: &Case) {
    let first = &c.only_without[0];
    let word = crate::color::paint("SEEN", crate::color::Paint::Warn, crate::color::stdout());
    println!("{word}   {} seed {}: {} — {}", c.scenario, c.seed, first.invariant, first.detail);
    for more in others(&c.only_without) {
        println!("       and {} — {}", more.invariant, more.detail);
    }
    println!(
        "       only without {} (the file switches it off; with every defence on, nothing broke): not a find",
        c.ran_without.join(", ")
    );
}

/// Each seed's case of `seeds` (at most a chunk), in seed order, played
/// `jobs` at a time (a find is reported when the chunk is done), and
/// whether every seed was played: Ctrl-C stops each thread before its next
/// seed, and the cases played so far are still reported. A loaded scenario
/// holds hooks that may not cross threads, so each thread loads the file
/// again.
fn cases(t: &Target, seeds: std::ops::Range<u64>, max_real: Option<Duration>, jobs: usize) -> (Vec<(u64, Case)>, bool) {
    let seeds: Vec<u64> = seeds.collect();
    let play = |target: &Target, part: &[u64]| -> Vec<(u64, Case)> {
        part.iter().take_while(|_| !crate::interrupt::requested()).map(|&s| (s, target.run(s, max_real))).collect()
    };
    let played: Vec<(u64, Case)> = if jobs == 1 || seeds.len() < 2 {
        play(t, &seeds)
    } else {
        let part = seeds.len().div_ceil(jobs);
        std::thread::scope(|scope| {
            let handles: Vec<_> = seeds
                .chunks(part)
                .map(|part| {
                    let (path, text, count_off) = (t.path.clone(), t.text.clone(), t.count_defences_off);
                    scope.spawn(move || {
                        // The file loaded once already: it loads again.
                        let mut mine = Target::new(&path, text).expect("a file that loaded once loads again");
                        mine.count_defences_off = count_off;
                        play(&mine, part)
                    })
                })
                .collect();
            // A thread that panicked hit a broken invariant of the runtime itself.
            handles.into_iter().flat_map(|h| h.join().expect("a fuzz thread panicked")).collect()
        })
    };
    let whole = played.len() == seeds.len();
    (played, whole)
}

/// Shrinks the find written at `path` and writes `<path>-shrunk.toml`
/// beside it: what it became, or why it was not shrunk. The fuzzing
/// threads are done with their batch by now (finds are reported after it),
/// so the shrink's own `jobs` threads are the only ones running.
fn shrink_find(path: &str, seed: u64, jobs: usize) -> Result<String, String> {
    let src = crate::scenario::read_file(Path::new(path)).map_err(|e| e.to_string())?;
    // Ctrl-C ends a shrink in hand with the smallest file so far, as `shrink` does.
    let opts = crate::shrink::Options {
        seed: Some(seed),
        jobs,
        stop: crate::interrupt::requested,
        ..crate::shrink::Options::default()
    };
    let s = crate::shrink::shrink(path, &src, &opts).map_err(|e| e.to_string())?;
    let out = format!("{}-shrunk.toml", path.strip_suffix(".toml").unwrap_or(path));
    super::ours_or_absent(Path::new(&out), crate::shrink::SHRUNK_MARK, "fuzz", "give another --out")?;
    crate::output::write(Path::new(&out), &s.text)?;
    let (b, a) = (s.before, s.after);
    Ok(format!(
        "{out} ({} → {} faults, {} → {} steps, {} → {} teammates, {} runs{}; `{} run {}`)",
        b.faults,
        a.faults,
        b.steps,
        a.steps,
        b.teammates,
        a.teammates,
        s.runs,
        if s.minimal { ", 1-minimal" } else { "" },
        super::args::program(),
        path_word(&out)
    ))
}

/// The name each scenario's finds are written under: its file's stem, or,
/// when two files share a stem (`a/x.toml`, `b/x.toml`), its path with the
/// separators turned into `_`, so that no find overwrites another's.
fn file_names(targets: &[Target]) -> Vec<String> {
    let stem = |t: &Target| {
        let s = Path::new(&t.path).file_stem().map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
        // A bundled scenario's finds are files of the user's own: no prefix.
        s.strip_prefix(crate::format::bundled::PREFIX).map_or(s.clone(), str::to_string)
    };
    let stems: Vec<String> = targets.iter().map(stem).collect();
    targets
        .iter()
        .zip(&stems)
        .map(|(t, s)| {
            if stems.iter().filter(|x| *x == s).count() == 1 {
                return s.clone();
            }
            let p = t.path.strip_suffix(".toml").unwrap_or(&t.path);
            p.trim_start_matches("./").replace(['/', '\\'], "_")
        })
        .collect()
}

/// Whether `out` can take the finds: a folder, or a name for one in a
/// folder that is there (it is made at the first find); why not.
fn finds_folder(out: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "--out {} is a symbolic link: finds are never written through a link; name a folder",
            out.display()
        )),
        Ok(_) => Err(format!("--out {} is a file, not a folder for the finds", out.display())),
        Err(_) => match out.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) if !parent.is_dir() => {
                Err(format!("--out {}: there is no folder {} to make it in", out.display(), parent.display()))
            }
            _ => Ok(()),
        },
    }
}

/// An input file that a find or its shrunk copy would be written over (a
/// file named `<stem>-seed<S>.toml` in the `--out` folder, for a seed
/// fuzzed): why the run is refused.
fn input_in_the_way(out: &Path, targets: &[Target], stems: &[String], (from, to): (u64, u64)) -> Option<String> {
    let out = std::fs::canonicalize(out).ok()?;
    let would_write = |name: &str| {
        stems.iter().any(|stem| {
            let seed = name.strip_prefix(stem.as_str()).and_then(|r| r.strip_prefix("-seed"));
            let seed = seed.and_then(|r| r.strip_suffix(".toml")).map(|r| r.strip_suffix("-shrunk").unwrap_or(r));
            seed.and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| (from..to).contains(&n))
        })
    };
    targets.iter().find_map(|t| {
        let input = std::fs::canonicalize(&t.path).ok()?;
        let name = input.file_name()?.to_str()?;
        (input.parent() == Some(out.as_path()) && would_write(name))
            .then(|| format!("--out {} holds the input {}, which a find would be written over", out.display(), t.path))
    })
}

/// Writes the find as `<out>/<file stem>-seed<S>.toml`.
/// What a reproduce line needs beside the file and seed: the real-time
/// budget, when it is not `run`'s own default (a find it stopped is made
/// again only under it).
fn reproduce_options(a: &FuzzArgs) -> String {
    match a.max_real {
        Millis(60_000) => String::new(),
        m => format!(" --max-real {}", super::args::duration_word(m)),
    }
}

fn write_finding(out: &Path, stem: &str, t: &Target, case: &Case, options: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create the folder {}: {e}", out.display()))?;
    let path = out.join(format!("{stem}-seed{}.toml", case.seed));
    super::ours_or_absent(&path, crate::fuzz::FIND_MARK, "fuzz", "give another --out")?;
    let text = t.finding_file(case, &path_word(&path.display().to_string()), options);
    crate::output::write(&path, &text)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_runs_keeps_the_first_hundred_and_counts_them_all() {
        let mut l = Listed::default();
        for seed in 0..1_000_000u64 {
            l.push(seed);
        }
        assert_eq!(l.runs, 1_000_000);
        assert_eq!(l.items, (0..LISTED as u64).collect::<Vec<_>>(), "the first ones, in order");
        assert!(l.items.capacity() <= 2 * LISTED, "memory for the listed ones only");
    }

    #[test]
    fn a_resume_starts_at_the_first_seed_not_played() {
        // Two threads, each stopped before its next seed: 10..13 and 26..28 played.
        assert_eq!(first_unplayed(10, [26, 27, 10, 11, 12].into_iter()), 13);
        assert_eq!(first_unplayed(10, [26, 27].into_iter()), 10, "the first thread played nothing");
        assert_eq!(first_unplayed(10, std::iter::empty()), 10);
        assert_eq!(first_unplayed(10, 10..42), 42, "a whole chunk");
    }

    #[test]
    fn a_chunk_holds_about_512_runs_and_at_least_32_seeds_a_file() {
        assert_eq!(chunk_of_seeds(1), 512);
        assert_eq!(chunk_of_seeds(4), 128);
        assert_eq!(chunk_of_seeds(58), 32, "the bundled files resume within 32 seeds");
        assert_eq!(chunk_of_seeds(0), 512);
    }
}
