//! `handshake run`: play scenario files and report.

use super::args::{parse_seeds, parse_span, program, resume_shard_command};
use super::bad_input::{Problem, Refusal};
use super::progress::Progress;
use super::{noun, plural, scenario_files, shown, Format, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::format::discover::load_all_with_text;
use crate::protocol::Millis;
use crate::scenario::{run_scenario, Report, RunOptions, Scenario};
use crate::sweep::{Settings, Shard, Sweep, SweepDoc};
use crate::trace::{Names, Stamped};
use crate::words::shell_word;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario files or folders of them, subfolders included, or a bundled scenario's number or name, like 22 (`handshake scenarios` lists them) [default: scenarios/, or every bundled scenario where there is none]
    #[arg(value_parser = super::scenario_arg())]
    pub paths: Vec<PathBuf>,
    /// Run with this seed instead of the file's
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// Sweep seeds A..B (B excluded), e.g. 1..201; failing seeds are listed with the command to reproduce each
    #[arg(long, value_parser = parse_seeds)]
    pub seeds: Option<(u64, u64)>,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Stream every event as it happens, in words (one run at a time: not with --seeds)
    #[arg(short, long)]
    pub verbose: bool,
    /// With -v: every event, or only the protocol's (hides each step of work written)
    #[arg(long, value_enum, default_value = "all", value_name = "WHICH")]
    pub events: Events,
    /// Write the run's history to FILE: JSON Lines, a header then one event a line (docs/history.md; `handshake audit FILE` judges it again) (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Draw the run as an SVG sequence diagram in FILE (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write the run as a Mermaid sequenceDiagram to FILE, to paste into Markdown (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub mermaid: Option<PathBuf>,
    /// Write one self-contained HTML page of the run to FILE: verdict, a stepper (← → through the events, each agent's state at each), picture, requests, events (one scenario, one seed)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// With --html: play the run again with one [policy] setting changed, e.g. 'sender_auth=false', and step both runs together on the page, the first event where they part marked (one scenario, one seed)
    #[arg(long, value_name = "KEY=VALUE", requires = "html", conflicts_with_all = ["seeds", "schedule"])]
    pub compare: Option<String>,
    /// Take the choices of a schedule the explorer wrote (`explore --save-schedule S`) at every tie, so the actors replay its counterexample exactly (one scenario; the schedule's seed)
    #[arg(long, value_name = "S", conflicts_with = "seeds")]
    pub schedule: Option<PathBuf>,
    /// Write the run's inbox files to DIR (mailbox = "file": DIR/<name>.jsonl as the run makes them; "claude-code": the team folder as it stood at the end), replacing those a previous run wrote there; a folder with inbox files no run wrote is refused (one scenario, one seed)
    #[arg(long, value_name = "DIR")]
    pub inbox_dir: Option<PathBuf>,
    /// Virtual-time cap for a run that never settles, e.g. "10m" [default: the file's, else 1h]
    #[arg(long, value_parser = parse_span)]
    pub cap: Option<Millis>,
    /// Real time one run may take before it is stopped, e.g. "30s"
    #[arg(long, value_parser = parse_span, default_value = DEFAULT_MAX_REAL)]
    pub max_real: Millis,
    /// With --seeds: threads that play runs, each run on its own runtime; the report is the same for any number [default: every core]
    #[arg(long, value_name = "N", requires = "seeds")]
    pub jobs: Option<usize>,
    /// With --seeds: play only shard I of N (1-based): seed s belongs to shard (s - A) % N + 1. Combine the shards' --format json with `handshake merge`
    #[arg(long, value_name = "I/N", value_parser = parse_shard, requires = "seeds", allow_hyphen_values = true)]
    pub shard: Option<Shard>,
    /// With --seeds: like --shard, the index read from the environment variable VAR, counted from 0 (as a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX), e.g. JOB_COMPLETION_INDEX/4
    #[arg(long, value_name = "VAR/N", value_parser = parse_shard_env, requires = "seeds", conflicts_with = "shard")]
    pub shard_from_env: Option<(String, u64)>,
    /// With --seeds: play every seed twice and compare the two traces' hashes; a seed whose traces differ fails the sweep
    #[arg(long, requires = "seeds")]
    pub check_determinism: bool,
}

const DEFAULT_MAX_REAL: &str = "60s";

/// Which events `-v` streams.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Events {
    All,
    Protocol,
}

fn shard_count(n: &str) -> Result<u64, String> {
    match n.trim().parse::<u64>() {
        Ok(0) => Err("the number of shards must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{n:?} is not a number of shards")),
    }
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let (i, n) =
        s.split_once('/').ok_or_else(|| format!("{s:?}: write I/N, e.g. 2/4 for the second of four shards"))?;
    let of = shard_count(n)?;
    let index: u64 = i.trim().parse().map_err(|_| format!("{i:?} is not a shard number (1 to {of})"))?;
    if index == 0 || index > of {
        return Err(format!(
            "shards are numbered from 1 to {of}: {index} is not one (for an index counted from 0, use --shard-from-env)"
        ));
    }
    Ok(Shard { index, of })
}

fn parse_shard_env(s: &str) -> Result<(String, u64), String> {
    let (var, n) = s
        .rsplit_once('/')
        .ok_or_else(|| format!("{s:?}: write VAR/N, e.g. JOB_COMPLETION_INDEX/4 for one of four shards"))?;
    if var.is_empty() || var.contains('=') || var.contains('\0') {
        return Err(format!("{var:?} is not the name of an environment variable"));
    }
    Ok((var.to_string(), shard_count(n)?))
}

/// The shard to play, from `--shard` or `--shard-from-env`, or why there is none.
fn resolve_shard(a: &RunArgs) -> Result<Option<Shard>, String> {
    if let Some((var, of)) = &a.shard_from_env {
        let flag = format!("--shard-from-env {var}/{of}");
        let value = std::env::var(var).map_err(|_| {
            format!("{flag}: {var} is not set (a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in each pod)")
        })?;
        let index: u64 = match value.trim().parse() {
            Ok(i) if i < *of => i,
            _ => return Err(format!("{flag}: {var}={value:?} is not a shard index from 0 to {}", of - 1)),
        };
        return Ok(Some(Shard { index: index + 1, of: *of }));
    }
    Ok(a.shard)
}

pub fn main(a: RunArgs) -> i32 {
    if let Some(code) = super::refuse_bad_jobs(a.jobs, "run", a.format) {
        return code;
    }
    // Every refusal below says what stderr always said, and with --format
    // json the same as the error object on stdout.
    let refuse =
        |flag: &str, why: String, line: String| Refusal::line(line, Problem::in_flag(flag, why)).tell(a.format);
    let shard = match resolve_shard(&a) {
        Ok(s) => s,
        Err(e) => return refuse("--shard-from-env", e.clone(), format!("{e}; nothing was run")),
    };
    if a.events != Events::All && !a.verbose {
        let why = "--events chooses what -v streams: add -v";
        return refuse("--events", why.to_string(), format!("{why} (nothing was run)"));
    }
    if a.verbose && a.seeds.is_some() {
        let why = "-v streams the events of one run and --seeds makes many: sweep without -v, then replay a \
                   failing seed alone with --seed N -v (each failing seed's reproduce line is that command)";
        return refuse("--verbose", why.to_string(), format!("{why}; nothing was run"));
    }
    let files = match scenario_files(&a.paths) {
        Ok(f) => f,
        Err(problem) => return super::refuse_paths(problem, a.format),
    };
    let (loaded, errors) = load_all_with_text(&files);
    let (scenarios, sources): (Vec<Scenario>, Vec<(String, String)>) = loaded.into_iter().unzip();
    if !errors.is_empty() {
        let tail = format!("nothing was run: fix the file(s) above ({})", plural(errors.len() as u64, "problem"));
        return Refusal::files(&errors, "nothing was run", &tail).tell(a.format);
    }
    if a.inbox_dir.is_some() {
        if scenarios.len() != 1 || a.seeds.is_some() {
            let why = "--inbox-dir writes one run's files: give exactly one scenario file and at most one --seed";
            return refuse("--inbox-dir", why.to_string(), format!("{why}; nothing was run"));
        }
        if scenarios[0].team.mailbox.is_memory() {
            let why = format!(
                "--inbox-dir: {} keeps its inboxes in memory; set mailbox = \"file\" or \"claude-code\" in its \
                 [policy] to have files to write",
                scenarios[0].path
            );
            return refuse("--inbox-dir", why.clone(), format!("{why}; nothing was run"));
        }
    }
    let schedule = match &a.schedule {
        None => None,
        Some(path) => match read_schedule(path, &scenarios) {
            Ok(s) if a.seed.is_some_and(|seed| seed != s.seed) => {
                let why = format!(
                    "--schedule {} was taken with seed {} (its request ids are that seed's), not --seed {}",
                    path.display(),
                    s.seed,
                    a.seed.unwrap_or_default()
                );
                return refuse("--schedule", why.clone(), format!("{why}; nothing was run"));
            }
            Ok(s) => Some(s),
            Err(e) => {
                let line = format!("--schedule {}: {e}; nothing was run", path.display());
                return Refusal::line(line, Problem::in_flag("--schedule", e).at(path.display())).tell(a.format);
            }
        },
    };
    let wanted = outputs_wanted(&a);
    if let Some(first) = wanted.first() {
        if scenarios.len() != 1 || a.seeds.is_some() {
            let why =
                format!("{} writes one run: give exactly one scenario file and at most one --seed", first.0.option());
            return refuse(first.0.option(), why.clone(), format!("{why}; nothing was run"));
        }
    }
    let what_if = match &a.compare {
        None => None,
        Some(words) => match what_if(words, &sources) {
            Ok(w) => Some(w),
            Err(e) => return refuse("--compare", e.clone(), format!("--compare {words:?}: {e}; nothing was run")),
        },
    };
    let mut inputs: Vec<(&str, &Path)> = files.iter().map(|f| ("the scenario file", f.as_path())).collect();
    inputs.extend(a.schedule.as_deref().map(|p| ("--schedule", p)));
    let named: Vec<(&'static str, &Path)> = wanted.iter().map(|(o, p)| (o.option(), *p)).collect();
    let clash = super::clashing_output(&named, &inputs).or_else(|| super::into_the_json_report(&named, a.format));
    if let Some((option, why)) = clash {
        return refuse(option, why.clone(), format!("{why}; nothing was run"));
    }
    if let Some(dir) = a.inbox_dir.as_deref() {
        let all: Vec<(&str, &Path)> = named.iter().map(|(o, p)| (*o, *p)).chain(inputs.iter().copied()).collect();
        if let Some(why) = super::inbox_dir::problem(dir, &all) {
            return refuse("--inbox-dir", why.clone(), format!("--inbox-dir: {why}; nothing was run"));
        }
    }
    // Outputs are opened before anything runs: exit 2 promises nothing ran,
    // and a long run should not end in "cannot write".
    let mut outputs: Vec<(Output, PathBuf, crate::output::Pending)> = Vec::new();
    for (output, path) in wanted {
        match open_output(output, path) {
            Ok(file) => outputs.push((output, path.to_path_buf(), file)),
            Err(e) => {
                let problem = Problem::in_flag(output.option(), e.clone()).at(path.display());
                return Refusal::line(format!("{e}; nothing was run"), problem).tell(a.format);
            }
        }
    }
    // The inbox folder is made and emptied of the team's old files last,
    // once nothing else can refuse: bad input changes nothing.
    if let Some(dir) = a.inbox_dir.as_deref() {
        if let Err(e) = super::inbox_dir::prepare(dir) {
            let line = format!("--inbox-dir: {e}; nothing was run");
            return Refusal::line(line, Problem::in_flag("--inbox-dir", e).at(dir.display())).tell(a.format);
        }
    }
    match a.seeds {
        Some(range) => sweep(&a, &scenarios, &sources, range, shard),
        None => single(&a, &scenarios, outputs, schedule, what_if.as_ref()),
    }
}

/// The one scenario with `--compare`'s setting made, read as any file is.
fn what_if(words: &str, sources: &[(String, String)]) -> Result<WhatIf, String> {
    let [(path, text)] = sources else { return Err("compare one scenario file at a time".into()) };
    let (scenario, setting) = crate::scenario::whatif::scenario_with_words(path, text, words)?;
    Ok(WhatIf { scenario, setting })
}

/// `--compare`: the second run's scenario and what was changed in it.
struct WhatIf {
    scenario: Scenario,
    setting: crate::scenario::whatif::Setting,
}

/// The schedule `--schedule` names, read against the one scenario it is for.
fn read_schedule(path: &Path, scenarios: &[Scenario]) -> Result<crate::world::Schedule, String> {
    let [s] = scenarios else {
        return Err(format!("a schedule is one run's: give exactly one scenario file, not {}", scenarios.len()));
    };
    // A schedule is a line a choice: a million lines is far past any search.
    let text = crate::input::read_text(path, 256 << 20).map_err(|e| e.to_string())?;
    let mut names = vec![crate::protocol::LEAD_NAME.to_string()];
    names.extend(s.team.teammates.iter().map(|(n, _)| n.clone()));
    names.push("adversary".to_string());
    let schedule = crate::world::Schedule::parse(&text, &names)?;
    // Its choices name messages by number and agents by name: taken in
    // another file, they may still parse and mean something else.
    let this_file = crate::input::read_text(Path::new(&s.path), 4 << 20).ok().map(|t| crate::fnv::contents_hash(&t));
    if let (Some(theirs), Some(ours)) = (&schedule.file, this_file) {
        if *theirs != ours {
            eprintln!(
                "warning: {} was saved from another file, or from {} before it changed: its choices may not mean what \
                 they meant there",
                path.display(),
                s.path
            );
        }
    }
    Ok(schedule)
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

/// Opens an output file for writing (never through a link to a file), or
/// says why it cannot be.
fn open_output(output: Output, path: &Path) -> Result<crate::output::Pending, String> {
    crate::output::create(path).map_err(|e| format!("{}: {e}", output.option()))
}

/// Writes what each output option asked for; the picture is drawn once even
/// when both `--svg` and `--html` want it.
fn write_outputs(
    outputs: Vec<(Output, PathBuf, crate::output::Pending)>,
    s: &Scenario,
    report: &Report,
    outcome: &crate::world::Outcome,
    reproduce: &str,
    what_if: Option<(&WhatIf, &Report, &crate::world::Outcome)>,
) -> Result<(), String> {
    let opts = crate::view::ViewOptions::titled(&s.name);
    let mut svg: Option<String> = None;
    let mut done: Vec<(Output, crate::output::Pending)> = Vec::new();
    for (output, path, mut file) in outputs {
        let written = match output {
            Output::Trace => write_trace(&mut file, s, report.seed, outcome),
            Output::Mermaid => write_text(&mut file, &crate::view::mermaid(outcome, &opts)),
            Output::Svg | Output::Html => {
                let svg = svg.get_or_insert_with(|| crate::view::svg(outcome, &opts));
                if output == Output::Svg {
                    write_text(&mut file, svg)
                } else if let Some((w, other, theirs)) = what_if {
                    use crate::view::compare::{page, Side};
                    let words = w.setting.words();
                    let heading = format!("with {words}");
                    let svg_b = crate::view::svg(theirs, &crate::view::ViewOptions::titled(&heading));
                    let replay_b = format!("{reproduce} --html PAGE.html --compare {}", shell_word(&words));
                    let a = Side {
                        outcome,
                        page: crate::view::html::Page { about: &s.about, report, reproduce, svg },
                        heading: "as written",
                    };
                    let b = Side {
                        outcome: theirs,
                        page: crate::view::html::Page {
                            about: &s.about,
                            report: other,
                            reproduce: &replay_b,
                            svg: &svg_b,
                        },
                        heading: &heading,
                    };
                    write_text(&mut file, &page(&a, &b, &words))
                } else {
                    let page = crate::view::html::Page { about: &s.about, report, reproduce, svg };
                    write_text(&mut file, &crate::view::html::html(outcome, &page))
                }
            }
        };
        written.map_err(|e| format!("writing {} to {}: {e}", output.option(), path.display()))?;
        done.push((output, file));
    }
    // Each output in place only once all are whole: a failure above leaves
    // every previous file as it was.
    // Ctrl-C now would leave some in place and some not: held off.
    crate::interrupt::not_during(|| {
        for (output, file) in done {
            file.commit().map_err(|e| format!("{}: {e}", output.option()))?;
        }
        Ok(())
    })
}

fn write_text(file: &mut crate::output::Pending, text: &str) -> std::io::Result<()> {
    file.write_all(text.as_bytes())
}

fn options(a: &RunArgs, live: bool) -> RunOptions {
    RunOptions {
        cap: a.cap,
        max_real: Some(a.max_real.as_std()),
        live: live.then(|| live_printer(a.events)),
        keep_outcome: !outputs_wanted(a).is_empty() || a.check_determinism,
        frames: a.html.is_some(),
        inbox_dir: a.inbox_dir.clone(),
        schedule: None,
        ends: a.format == Format::Json,
        plain: false,
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

fn single(
    a: &RunArgs,
    scenarios: &[Scenario],
    mut outputs: Vec<(Output, PathBuf, crate::output::Pending)>,
    schedule: Option<crate::world::Schedule>,
    what_if: Option<&WhatIf>,
) -> i32 {
    let mut reports = Vec::new();
    let started = std::time::Instant::now();
    for s in scenarios {
        let seed = schedule.as_ref().map_or_else(|| a.seed.unwrap_or_else(|| s.default_seed()), |x| x.seed);
        if a.verbose && a.format == Format::Text {
            println!("── {} (seed {seed})", s.name);
            for line in wrap(&s.about, 76) {
                println!("   {line}");
            }
        }
        let mut opts = options(a, a.verbose && a.format == Format::Text);
        opts.schedule = schedule.clone();
        let mut report = run_scenario(s, seed, opts);
        if let Some(code) = parted_from_schedule(a, &report) {
            return code;
        }
        if a.format == Format::Text {
            // Alone or watched, a run says what broke as expected; in the
            // whole suite's list that is a line too many a scenario.
            print_report(&report, a, a.verbose || scenarios.len() == 1);
        }
        if let Some(outcome) = report.outcome.take() {
            let replay = reproduce(a, &report.path, report.seed);
            let other = what_if.map(|w| {
                let mut opts = options(a, false);
                opts.keep_outcome = true;
                // --inbox-dir is the file's own run's inboxes, not the what-if's.
                opts.inbox_dir = None;
                let mut r = run_scenario(&w.scenario, seed, opts);
                let o = r.outcome.take();
                if a.format == Format::Text {
                    print_what_if(&r, w, o.as_ref(), &outcome);
                }
                (w, r, o)
            });
            let compared = other.as_ref().and_then(|(w, r, o)| o.as_ref().map(|o| (*w, r, o)));
            if let Err(e) = write_outputs(std::mem::take(&mut outputs), s, &report, &outcome, &replay, compared) {
                // An output that cannot be written is bad input (docs/cli.md),
                // though the run, whose verdict is above, happened. JSON asked
                // for one document: the error object, with no verdict above.
                return match a.format {
                    Format::Text => {
                        eprintln!("error: {e}; the run's verdict is above, and none of its outputs was written");
                        EXIT_BAD_INPUT
                    }
                    Format::Json => {
                        let line = format!("{e}; the run was played, and none of its outputs was written");
                        Refusal::line(line, Problem::new(e)).tell(a.format)
                    }
                };
            }
        }
        reports.push(report);
    }
    if let Some(dir) = a.inbox_dir.as_deref() {
        if let Err(e) = super::inbox_dir::list_files_left(dir) {
            eprintln!("warning: --inbox-dir: {e}; the next run there will take every inbox file in it as this run's");
        }
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

/// A run that parted from its `--schedule` (a choice it cannot take): the
/// schedule was not this file's, or not this seed's. That is bad input, not
/// a verdict: nothing is judged or written (the outputs are dropped unmade).
fn parted_from_schedule(a: &RunArgs, report: &Report) -> Option<i32> {
    let path = a.schedule.as_ref()?;
    let parted = report.failures.iter().find(|f| f.check == "schedule")?;
    let why = &parted.message;
    let line = format!("--schedule {}: {why}; the run is not judged, and nothing was written", path.display());
    Some(Refusal::line(line, Problem::in_flag("--schedule", why.clone()).at(path.display())).tell(a.format))
}

/// `--seeds`: the sweep played by the library, its progress shown as it
/// goes, its report printed.
fn sweep(
    a: &RunArgs,
    scenarios: &[Scenario],
    sources: &[(String, String)],
    seeds: (u64, u64),
    shard: Option<Shard>,
) -> i32 {
    let settings = Settings {
        scenarios,
        sources,
        seeds,
        shard,
        cap: a.cap,
        max_real: a.max_real.as_std(),
        check_determinism: a.check_determinism,
        jobs: jobs(a),
        options: options_that_change_the_run(a),
    };
    let sweep = match Sweep::new(settings) {
        Ok(s) => s,
        Err(e) => return Refusal::line(format!("{e}; nothing was run"), Problem::new(e.to_string())).tell(a.format),
    };
    // Each run is played twice with --check-determinism: the line counts plays.
    let unit = if a.check_determinism { "play" } else { "run" };
    let mut progress = Progress::new(sweep.plays(), unit, "failed", a.format == Format::Text);
    // A file's runs follow one another (blocks of seeds): one file failing
    // every seed must not take all the live lines from the others.
    let per_file = match scenarios.len() {
        1 => u64::MAX,
        n => (super::progress::LIVE_FAILURES / n as u64).max(3),
    };
    let mut said_of = vec![0u64; scenarios.len()];
    crate::interrupt::install();
    let played = sweep.play(
        |path, seed| reproduce(a, path, seed),
        |k, seed, runs| {
            if !runs[0].passed {
                progress.count_failure();
                let s = &scenarios[k];
                said_of[k] += 1;
                let fail = crate::color::paint("FAIL", crate::color::Paint::Fail, crate::color::stderr());
                if said_of[k] <= per_file {
                    progress.say_failure(&format!("{fail}  {} seed {seed}: {}", shown(&s.name), shown(&runs[0].why)));
                } else if said_of[k] == per_file + 1 {
                    progress.say_failure(&format!(
                        "… more failures of {}: the report at the end counts them all",
                        shown(&s.name)
                    ));
                }
            }
            progress.advance(runs.len() as u64);
        },
    );
    // Done, stopped or broken: the report or the error takes the line's place.
    progress.clear();
    let runs = sweep.plays() / if a.check_determinism { 2 } else { 1 };
    match played {
        // Ctrl-C while the last runs were in hand stops nothing: every run
        // was played, and the report is the whole sweep's.
        Ok(doc @ SweepDoc { resume_from: Some(resume), .. }) => {
            super::sweep::print(&doc, a.format);
            eprintln!(
                "interrupted: {} of {runs} runs played ({} failed); resume with:\n  {}",
                doc.runs,
                doc.failed_runs(),
                resume_shard_command(resume, doc.seeds.to, shard)
            );
            if let Some(s) = shard.filter(|s| s.of > 1) {
                eprintln!(
                    "  (the rest of shard {s} as shard 1/{} of a range starting at {resume}: its report is that \
                     range's, not to be merged with the other shards' reports)",
                    s.of
                );
            }
            super::EXIT_INTERRUPTED
        }
        Ok(doc) => {
            let code = super::sweep::print(&doc, a.format);
            if crate::interrupt::requested() {
                // Pressed while the last runs were in hand: nothing was left to stop.
                eprintln!("interrupted as the last runs were playing: every run was played, and the report is whole");
            }
            code
        }
        Err(e) => {
            eprintln!("error: {e}; the sweep stopped");
            EXIT_FAILED
        }
    }
}

/// The command that plays this run again: the program as it was started,
/// the file, the seed, and every option that changes what the run does.
fn reproduce(a: &RunArgs, path: &str, seed: u64) -> String {
    let path = crate::words::path_word(path);
    let mut words = vec![program(), "run".to_string(), path, "--seed".to_string(), seed.to_string()];
    words.extend(options_that_change_the_run(a));
    words.push("-v".to_string());
    words.join(" ")
}

/// Spelled out field by field, so a new option cannot be added without
/// deciding whether a reproduce line must carry it.
fn options_that_change_the_run(a: &RunArgs) -> Vec<String> {
    let RunArgs {
        paths: _,     // replaced by the one file that failed
        seed: _,      // replaced by the seed that failed
        seeds: _,     // replaced by the seed that failed
        format: _,    // how the report reads, not what happens
        verbose: _,   // always on: the point of reproducing is to watch
        trace: _,     // an output, not an input
        svg: _,       // an output
        mermaid: _,   // an output
        html: _,      // an output
        inbox_dir: _, // an output: the files are a window on the run
        events: _,    // what -v shows, not what happens
        jobs: _,      // where runs are played, not what happens in them
        shard: _,     // which seeds: replaced by the seed that failed
        shard_from_env: _,
        check_determinism: _, // plays each run twice, changes neither
        compare: _,           // plays a second run beside this one, for the page
        cap,
        max_real,
        schedule,
    } = a;
    let mut out = Vec::new();
    if let Some(path) = schedule {
        out.extend(["--schedule".to_string(), shell_word(&path.display().to_string())]);
    }
    if let Some(cap) = cap {
        out.extend(["--cap".to_string(), super::args::duration_word(*cap)]);
    }
    if Some(*max_real) != super::args::parse_dur(DEFAULT_MAX_REAL).ok() {
        out.extend(["--max-real".to_string(), super::args::duration_word(*max_real)]);
    }
    out
}

fn bracketed(labels: &[String]) -> String {
    labels.iter().map(|l| format!("[{l}]")).collect::<Vec<_>>().join(", ")
}

/// When a failed check failed: an end state is judged when the run ends,
/// which is not when the request or agent got there ("what led to it" says
/// that).
fn when(f: &crate::scenario::check::Failure) -> String {
    if f.at_end {
        format!("at the end, {}", Millis(f.at_ms))
    } else {
        format!("at {}", Millis(f.at_ms))
    }
}

/// `--compare`: the second run's verdict, and where it parts from the first.
fn print_what_if(r: &Report, w: &WhatIf, theirs: Option<&crate::world::Outcome>, ours: &crate::world::Outcome) {
    let verdict = match r.failures.first() {
        None => "PASS".to_string(),
        Some(f) => format!("FAIL: {} — {} ({})", shown(&f.check), shown(&f.message), when(f)),
    };
    println!("      with {}: {verdict}", w.setting.words());
    if let Some(theirs) = theirs {
        match crate::view::compare::parted(ours, theirs) {
            Some(k) => {
                let at = ours.events.get(k).or(theirs.events.get(k)).map_or(String::new(), |e| format!(" ({})", e.t));
                println!("      the two runs part at event {}{at}", k + 1);
            }
            None => println!("      the two runs are the same, event for event"),
        }
    }
}

fn print_report(r: &Report, a: &RunArgs, show_expected: bool) {
    let c = &r.counts;
    println!(
        "{}  {:<48} seed {:<4} {:>4} {:<4} {:>3} {:<10} {:>2} ignored {:>2} expired {:>2} refused  {:>8} virtual {:>7.2} ms real",
        crate::color::verdict(r.passed),
        shown(&r.name),
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
        // The first few by label, then a count: 100,000 pending made a line
        // of 2 MB (`--format json` lists them all).
        const LISTED: usize = 20;
        let pending = match r.pending.len() {
            0 => String::new(),
            n if n <= LISTED => format!("; still pending: {}", r.pending.join(", ")),
            n => format!("; still pending: {}, and {} more", r.pending[..LISTED].join(", "), n - LISTED),
        };
        // "the schedule's end" names itself with its article.
        let by = r.stopped_by.strip_prefix("the ").unwrap_or(r.stopped_by);
        println!("      stopped by the {by} at {}{pending}", Millis(r.virtual_ms));
    }
    if r.expectations_judged == Some(false) {
        println!(
            "      judged as the explorer judged this schedule: by the invariants (a violation the file expects \
             may happen, need not); the file's [[expect]] entries describe its own run and were not judged \
             (`explore --expect` judges them, and its schedules say so)"
        );
    }
    for d in &r.deadlocks {
        let formed = Millis(d.formed_ms);
        match (d.broken_ms, &d.broken_by) {
            (Some(at), Some(by)) => {
                let how = d.default.map_or_else(|| "ending".to_string(), |x| format!("expiring (default {x})"));
                println!("      deadlock {} at {formed}, broken at {} by [{by}] {how}", d.cycle(), Millis(at));
            }
            _ => println!(
                "      {}: {} since {formed}, waiting on {}",
                crate::color::paint("DEADLOCKED", crate::color::Paint::Warn, crate::color::stdout()),
                d.cycle(),
                bracketed(&d.requests)
            ),
        }
    }
    if show_expected {
        print_expected_violations(r);
    }
    if let Some(f) = r.failures.first() {
        let cross = crate::color::paint("✗", crate::color::Paint::Fail, crate::color::stdout());
        println!("      {cross} {} — {} ({})", shown(&f.check), shown(&f.message), when(f));
        if !f.context.is_empty() {
            println!("        what led to it:");
            for line in &f.context {
                println!("        {}", shown(line));
            }
        }
        if r.failures.len() > 1 {
            println!(
                "      … and {} more failed {}:",
                r.failures.len() - 1,
                noun(r.failures.len() as u64 - 1, "check")
            );
            for f in &r.failures[1..] {
                println!("        ✗ {} — {}", shown(&f.check), shown(&f.message));
            }
        }
        if !a.verbose {
            println!("      reproduce: {}", reproduce(a, &r.path, r.seed));
        }
    }
}

/// The violations the oracle reported that the file expects: a scenario
/// that teaches an invariant breaking passes because it broke, and the
/// reader should see what broke (the ones it does not expect are failures,
/// printed with ✗ below).
fn print_expected_violations(r: &Report) {
    let unexpected = |v: &str| {
        r.failures.iter().any(|f| {
            f.check
                .strip_prefix("invariant ")
                .is_some_and(|i| v.strip_prefix(i).and_then(|rest| rest.strip_prefix(": ")) == Some(&f.message))
        })
    };
    let why = if r.expectations_judged == Some(false) { "allowed by the file" } else { "as the file expects" };
    for v in r.violations.iter().filter(|v| !unexpected(v)) {
        let tick = crate::color::paint("✓", crate::color::Paint::Pass, crate::color::stdout());
        let (invariant, detail) = v.split_once(": ").unwrap_or((v, ""));
        println!("      {tick} {} — {} ({why})", shown(invariant), shown(detail));
    }
}

/// The run's history: a header line (docs/history.md), then a line an event.
fn write_trace(
    out: &mut crate::output::Pending,
    s: &Scenario,
    seed: u64,
    o: &crate::world::Outcome,
) -> std::io::Result<()> {
    let header = crate::history::header(&s.name, seed, o, s.policy(), &s.require_plan());
    crate::history::write(out, &header, o)?;
    out.flush()
}

fn jobs(a: &RunArgs) -> usize {
    super::jobs_or_every_core(a.jobs)
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
    use crate::format::duration::parse_duration;

    #[test]
    fn durations_are_written_as_the_options_read_them() {
        for ms in [0, 1, 999, 1000, 1500, 90_000, 120_000, 3_600_000, 5_400_000, 31_536_000_000] {
            let word = crate::cli::args::duration_word(Millis(ms));
            assert_eq!(parse_duration(&word), Ok(Millis(ms)), "{word}");
        }
        assert_eq!(crate::cli::args::duration_word(Millis(10_000)), "10s");
        assert_eq!(crate::cli::args::duration_word(Millis(7_200_000)), "2h");
    }

    #[test]
    fn shard_values_are_read_or_refused() {
        assert_eq!(parse_shard("2/3"), Ok(Shard { index: 2, of: 3 }));
        for bad in ["0/3", "4/3", "1/0", "x", "1/x", "/3", "3"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_shard_env("JOB_COMPLETION_INDEX/4"), Ok(("JOB_COMPLETION_INDEX".to_string(), 4)));
        assert!(parse_shard_env("JOB_COMPLETION_INDEX").is_err());
        assert!(parse_shard_env("/4").is_err());
        assert!(parse_shard_env("X/0").is_err());
    }
}
