//! `handshake explore`: every interleaving of one small scenario, within
//! fault budgets, and the shortest schedule that breaks an invariant.

use super::bad_input::{Problem, Refusal};
use super::{Format, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::color::{paint, Paint};
use crate::explore::{explore_with, Bounds, Budgets, Order};
use crate::scenario::load_str;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// One scenario file, or a bundled scenario's number or name (keep it small: the states grow fast with each agent and message)
    #[arg(value_parser = super::scenario_arg())]
    pub path: PathBuf,
    /// Messages the explorer may drop, anywhere in any schedule; `any`: any message, any number of times (a lossy network)
    #[arg(long, default_value = "0", value_name = "N|any", value_parser = parse_drop)]
    pub drop: u32,
    /// Messages the explorer may deliver twice
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub duplicate: u32,
    /// Teammates that may crash (each may then restart)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub crash: u32,
    /// Messages the adversary may inject: any protocol message quoting an id seen on the wire, claiming any member
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub forge: u32,
    /// Stop exploring deeper than this many steps
    #[arg(long, default_value_t = Bounds::default().max_depth, value_name = "N")]
    pub max_depth: usize,
    /// Stop at this many distinct states. It bounds the work too: states are expanded only as far as the states still allowed need, so the search makes and holds about the states it counts, whatever --max-memory allows
    #[arg(long, default_value_t = Bounds::default().max_states, value_name = "N")]
    pub max_states: usize,
    /// Stop when the explorer's memory passes SIZE (e.g. 2GB, 512MB): states beyond it are not explored, exit 3 [default: three quarters of the memory free when the search begins]. Looked at every 10,000 distinct states, and for big states (a team of hundreds) every 64 MiB of them and before the first; a team of more than 10000 teammates is refused (exit 2). With --serve, the page's background search stops there (looked at every 64 states)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Explore every order of deliveries to different teammates too (to measure what the reduction saves)
    #[arg(long)]
    pub no_partial_order: bool,
    /// Tell identical teammates apart (by default, states that differ only in which one is which are one state)
    #[arg(long)]
    pub no_symmetry: bool,
    /// Leave out the file's own [[fault]] entries (by default they are played as a run plays them, at their times, except that counted or chance drops and duplicates become budgets and delays and reorders are covered by every arrival order)
    #[arg(long)]
    pub without_file_faults: bool,
    /// Also judge the file's [[expect]] entries at the end of every schedule (best without budgets: they describe the written schedule, and most fail once a message can be lost)
    #[arg(long)]
    pub expect: bool,
    /// Every message arrives within DURATION of being sent (e.g. 5ms): no timer fires past a message still due. By default there is no bound: any message may arrive after any timer, deadlines included
    #[arg(long, value_name = "DURATION", value_parser = parse_latency)]
    pub max_latency: Option<Latency>,
    /// Also explore with each reduction off, and report what each saves (takes longer: up to three searches)
    #[arg(long)]
    pub compare: bool,
    /// Threads that expand states; the result is the same for any number, unless --max-memory stops it [default: every core]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// breadth: level by level, so a counterexample is a shortest one (holds a whole level of states). depth: one path at a time, on one thread (holds only the seen set, a few dozen bytes a state, for spaces too big to hold a level); a counterexample is then a schedule that breaks, not a shortest one: `handshake shrink` shortens it
    #[arg(long, value_enum, default_value = "breadth", value_name = "ORDER")]
    pub order: SearchOrder,
    /// Write the shortest counterexample to FILE as a scenario that `handshake run` replays (checked by running it)
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// Write the shortest counterexample's choices to S, which `handshake run FILE --schedule S` makes the actors take exactly, reaching the same violation
    #[arg(long, value_name = "S")]
    pub save_schedule: Option<PathBuf>,
    /// Write the shortest counterexample as a page to step through (as `run --html` writes one): the actors replay its schedule, and the page shows every agent's state at each event
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Explore by hand instead of searching: serve a page on ADDR (default 127.0.0.1 and a free port, printed with the URL) on which you take each choice yourself; the budgets say what may go wrong. The page says what a search in the background finds through each choice, takes your path under a changed setting ("what if"), and edits the file: apply rereads it, save writes it (nothing is written otherwise). Ctrl-C stops it
    // What the page does not use is refused with it, not ignored: a search
    // flag, an output, another format.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:0",
        conflicts_with_all = [
            "max_depth", "max_states", "no_partial_order", "no_symmetry", "expect", "max_latency", "compare",
            "jobs", "order", "write", "save_schedule", "html", "format",
        ]
    )]
    pub serve: Option<String>,
}

/// `--order`, as the command line names the search orders.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchOrder {
    Breadth,
    Depth,
}

/// A latency bound, as a scenario file writes durations.
#[derive(Clone, Copy, Debug)]
pub struct Latency(crate::protocol::Millis);

fn parse_latency(text: &str) -> Result<Latency, String> {
    crate::format::duration::parse_duration(text).map(Latency).map_err(|e| format!("`{text}`: {e}"))
}

/// The least `--max-memory` takes: the program holds about 20 MB before it
/// explores a state, so a smaller bound could only stop every search at its
/// first look (a bound of one byte is a typo, not a budget).
const MIN_MEMORY: u64 = 16 * 1024 * 1024;

/// `2GB`, `512MB`, `1.5GiB`, `800000000`: a size in bytes, at least `MIN_MEMORY`.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number.trim().parse().map_err(|_| format!("`{text}` is not a size like 2GB or 512MB"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("`{unit}` is not a unit: use B, KB, MB, GB, KiB, MiB or GiB")),
    };
    if n.is_nan() || n <= 0.0 || !n.is_finite() {
        return Err(format!("`{text}`: a memory bound must be more than zero"));
    }
    let bytes = (n * scale) as u64;
    if bytes < MIN_MEMORY {
        return Err(format!(
            "`{text}` is less than the program itself takes: give at least 16MiB (the explorer alone holds about 20 MB)"
        ));
    }
    Ok(bytes)
}

pub fn main(a: ExploreArgs) -> i32 {
    let (scenario, text) = match checked(&a) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let budgets = budgets(&a, &scenario);
    if let Some(addr) = &a.serve {
        // The page reads the file itself, and again at each "apply" of an
        // edit, with these flags: one reading of the text it shows.
        let setup = super::serve::Setup {
            flags: Budgets { drop: a.drop, duplicate: a.duplicate, crash: a.crash, forge: a.forge },
            without_file_faults: a.without_file_faults,
            max_memory: a.max_memory.or_else(crate::process::default_memory_bound),
        };
        return super::serve::serve(&a.path, &setup, addr);
    }
    let started = std::time::Instant::now();
    if let Some(code) = super::refuse_bad_jobs(a.jobs, "explored", a.format) {
        return code;
    }
    let order = match a.order {
        SearchOrder::Breadth => Order::Breadth,
        SearchOrder::Depth => Order::Depth,
    };
    if order == Order::Depth && a.jobs.is_some_and(|j| j > 1) {
        eprintln!("note: --order depth searches on one thread; --jobs is for breadth first");
    }
    let bounds = bounds(&a, order);
    crate::interrupt::install();
    let line = super::progress::Progress::open_ended(a.format == Format::Text);
    let mut progress = |x: &crate::explore::Exploration| {
        // A point of the search a log reader (or a test's Ctrl-C) can wait for.
        tracing::debug!(states = x.states, unique = x.unique, depth = x.depth, "explore: searching");
        line.show(format!("{} states ({} unique), depth {}", x.states, x.unique, x.depth));
    };
    let x = explore_with(&scenario, budgets, bounds, &mut progress);
    line.clear();
    let secs = started.elapsed().as_secs_f64();
    // What each reduction saves, measured by searching again without it.
    let interrupted = x.stopped_by == Some("interrupted");
    let factor = |off: Bounds| {
        let y = explore_with(&scenario, budgets, off, &mut |_| {});
        let complete = y.stopped_by.is_none() && x.stopped_by.is_none();
        (y.unique as f64 / x.unique.max(1) as f64, y.states as f64 / x.states.max(1) as f64, complete)
    };
    // An interrupted search is not searched again: Ctrl-C asked for an end.
    let compare = a.compare && !interrupted;
    let symmetry =
        (compare && bounds.symmetry && !x.symmetric.is_empty()).then(|| factor(Bounds { symmetry: false, ..bounds }));
    let partial = (compare && bounds.partial_order).then(|| factor(Bounds { partial_order: false, ..bounds }));
    let report = Report { x: &x, scenario: &scenario, order, secs, symmetry, partial, compare };
    if a.format == Format::Json {
        report.json();
    } else {
        report.text(&a, &bounds);
    }
    // What the file does not expect first; else the first thing it does.
    let mut all_written = true;
    if let Some(c) = x.counterexample.as_ref().or(x.expected.first()) {
        all_written = write_outputs(&a, &scenario, &text, c);
    } else {
        // Said for each output asked for, as a page is: an old file at the
        // path is left as it was, and nothing says it is this search's.
        let asked = [
            (&a.write, "scenario", "write"),
            (&a.save_schedule, "schedule", "write"),
            (&a.html, "page", "step through"),
        ];
        for (_, what, to) in asked.iter().filter(|(path, ..)| path.is_some()) {
            eprintln!("no {what} written: nothing broke, so there is no schedule to {to}");
        }
    }
    // What the file expects broken passes, as `run` passes such a file;
    // anything else fails, as in `run`.
    // A search a bound stopped found nothing, which is not the same as
    // there being nothing to find: a status of its own. An output that
    // failed as it was written is bad input, as in `run`: its verdict is
    // above, and a script must not take the missing file for written.
    if !all_written {
        EXIT_BAD_INPUT
    } else if x.counterexample.is_some() {
        EXIT_FAILED
    } else if interrupted {
        super::EXIT_INTERRUPTED
    } else if x.stopped_by.is_some() {
        super::EXIT_BOUND
    } else {
        EXIT_OK
    }
}

/// The scenario and the text it was read from (read once: a pipe gives
/// nothing the second time, and a file may change during the search), once
/// the flags and the file are fit to explore; else the exit code of the
/// refusal, said before the search (exit 2 promises nothing ran).
fn checked(a: &ExploreArgs) -> Result<(crate::scenario::Scenario, String), i32> {
    if a.max_depth == 0 || a.max_states == 0 {
        let flag = if a.max_depth == 0 { "--max-depth" } else { "--max-states" };
        let why = "--max-depth and --max-states must be at least 1";
        return Err(Refusal::line(format!("{why}; nothing was explored"), Problem::in_flag(flag, why)).tell(a.format));
    }
    // Refused before the search, not after it: exit 2 promises nothing ran.
    let outputs: Vec<(&'static str, &std::path::Path)> =
        [("--write", &a.write), ("--save-schedule", &a.save_schedule), ("--html", &a.html)]
            .into_iter()
            .filter_map(|(flag, out)| out.as_deref().map(|p| (flag, p)))
            .collect();
    for &(flag, path) in &outputs {
        if let Err(e) = crate::output::check(path) {
            let problem = Problem::in_flag(flag, e.clone()).at(path.display());
            return Err(Refusal::line(format!("{flag}: {e}; nothing was explored"), problem).tell(a.format));
        }
    }
    let clash = super::clashing_output(&outputs, &[("the scenario file", &a.path)])
        .or_else(|| super::into_the_json_report(&outputs, a.format));
    if let Some((flag, why)) = clash {
        return Err(Refusal::line(format!("{why}; nothing was explored"), Problem::in_flag(flag, why)).tell(a.format));
    }
    let loaded = crate::scenario::read_file(&a.path)
        .map_err(|e| vec![e])
        .and_then(|text| Ok((load_str(&a.path.display().to_string(), &text)?, text)));
    let (scenario, text) = match loaded {
        Ok(s) => s,
        Err(errors) => {
            return Err(Refusal::files(&errors, "nothing was explored", "nothing was explored: fix the file above")
                .tell(a.format))
        }
    };
    if let Some(why) = crate::explore::too_big(&scenario) {
        let problem = Problem::in_file(a.path.display(), why.clone());
        let line = format!("{}: {why}; nothing was explored", a.path.display());
        return Err(Refusal::line(line, problem).tell(a.format));
    }
    Ok((scenario, text))
}

/// The budgets of drops, duplicates, crashes and forgeries: the flags',
/// and the file's own faults turned into budgets (said in a note).
fn budgets(a: &ExploreArgs, scenario: &crate::scenario::Scenario) -> Budgets {
    let flags = Budgets { drop: a.drop, duplicate: a.duplicate, crash: a.crash, forge: a.forge };
    let own = scenario.team.link_faults.len() + scenario.team.partitions.len() + scenario.team.timed.len();
    if own > 0 && a.without_file_faults {
        if a.format == Format::Text {
            println!("note: the file's [[fault]] entries are left out (--without-file-faults)");
        }
    } else if own > 0 {
        let plan = crate::explore::plan_file_faults(scenario);
        if a.format == Format::Text {
            let mut parts = Vec::new();
            if plan.played > 0 {
                parts.push(format!(
                    "{} played as a run plays {}",
                    plan.played,
                    if plan.played == 1 { "it" } else { "them" }
                ));
            }
            let (d, u) = (plan.budgets.drop, plan.budgets.duplicate);
            if d > 0 || u > 0 {
                let count = |n: u32| if n == Budgets::ANY { "any".to_string() } else { format!("+{n}") };
                parts.push(format!(
                    "counted or chance drops and duplicates become budgets spent anywhere ({} drop, {} duplicate)",
                    count(d),
                    count(u)
                ));
            }
            if plan.covered > 0 {
                parts.push(format!("{} delay/reorder covered (every arrival order is explored)", plan.covered));
            }
            println!("note: the file's faults: {}", parts.join("; "));
        }
    }
    flags.with_file_faults(scenario, a.without_file_faults)
}

/// The search's bounds and reductions, as the flags set them.
fn bounds(a: &ExploreArgs, order: Order) -> Bounds {
    let jobs = super::jobs_or_every_core(a.jobs);
    Bounds {
        max_depth: a.max_depth,
        max_states: a.max_states,
        // No bound given: what the system has free as the search starts, so
        // that a search of big states stops, said, rather than is killed.
        max_memory: a.max_memory.or_else(crate::process::default_memory_bound),
        partial_order: !a.no_partial_order,
        symmetry: !a.no_symmetry,
        jobs,
        file_faults: !a.without_file_faults,
        expectations: a.expect,
        latency_bound: a.max_latency.map(|d| d.0),
        order,
        stop: crate::interrupt::requested,
    }
}

/// What a search found and how it went, to be told in text or JSON.
struct Report<'a> {
    x: &'a crate::explore::Exploration,
    scenario: &'a crate::scenario::Scenario,
    order: Order,
    secs: f64,
    /// What symmetry and partial order save (distinct states, states, and
    /// whether the search without it ended), where --compare measured it.
    symmetry: Option<(f64, f64, bool)>,
    partial: Option<(f64, f64, bool)>,
    compare: bool,
}

impl Report<'_> {
    fn json(&self) {
        let Report { x, scenario, order, secs, symmetry, partial, .. } = *self;
        let doc = serde_json::json!({
            "scenario": scenario.name,
            "order": match order { Order::Breadth => "breadth", Order::Depth => "depth" },
            "states": x.states,
            "unique": x.unique,
            "depth": x.depth,
            "seconds": crate::words::real_seconds(secs),
            "stopped_by": x.stopped_by,
            "explored_to_depth": x.explored_to,
            "partial_order_slept": x.slept,
            "symmetric_groups": x.symmetric,
            "set_apart_by_expectations": x.set_apart,
            "symmetry_factor_unique": symmetry.map(|f| f.0),
            "partial_order_factor_states": partial.map(|f| f.1),
            "deadlock": x.deadlock.as_ref().map(|d| serde_json::json!({
                "detail": d.detail,
                "schedule": d.actions,
            })),
            "violation": x.counterexample.as_ref().map(|c| serde_json::json!({
                "broke": c.broke.to_string(),
                "expected_by_the_file": false,
                "detail": c.detail,
                "schedule": c.actions,
                "events": c.narrate(),
            })),
            "expected_violations": x.expected.iter().map(|c| serde_json::json!({
                "broke": c.broke.to_string(),
                "expected_by_the_file": true,
                "detail": c.detail,
                "schedule": c.actions,
                "events": c.narrate(),
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    }

    fn text(&self, a: &ExploreArgs, bounds: &Bounds) {
        let Report { x, scenario, order, secs, symmetry, partial, compare, .. } = *self;
        let rate = x.states as f64 / secs.max(1e-9);
        let interrupted = x.stopped_by == Some("interrupted");
        let sym = match (&symmetry, x.symmetric.is_empty(), bounds.symmetry) {
            (Some((u, _, complete)), _, _) => format!("symmetry ×{u:.2}{}", if *complete { "" } else { " (bounded)" }),
            (None, _, false) => "symmetry off".to_string(),
            (None, true, true) if x.set_apart > 0 => format!(
                "symmetry: none ({} teammates alike, named by the expectations, which tells them apart)",
                x.set_apart
            ),
            (None, true, true) => "symmetry: no identical teammates".to_string(),
            (None, false, true) => format!(
                "symmetry on ({} interchangeable teammates)",
                x.symmetric.iter().map(|g| g.to_string()).collect::<Vec<_>>().join(" + ")
            ),
        };
        let por = match (&partial, bounds.partial_order) {
            (Some((_, t, complete)), _) => {
                format!("partial order ×{t:.2}{}", if *complete { "" } else { " (bounded)" })
            }
            (None, true) => format!("partial order: {} transitions slept", x.slept),
            (None, false) => "partial order off".to_string(),
        };
        println!(
            "explored {} states ({} unique), depth {}, {:.2} s ({:.0} states/s); {sym}; {por}",
            x.states, x.unique, x.depth, secs, rate
        );
        if compare {
            println!(
                "(symmetry ×: distinct states without it over with it; partial order ×: states generated \
                 without it over with it; --compare searched again with each off)"
            );
        }
        let explored = explored_to(x);
        match x.stopped_by {
            Some("interrupted") => println!(
                "interrupted (Ctrl-C): {explored} (a search cannot resume: run it again, with --max-states or \
                 --max-depth to bound it)"
            ),
            Some("max-memory") => println!(
                "stopped at --max-memory{}: {explored} (a state of this team holds about {})",
                if a.max_memory.is_none() {
                    " (none given: three quarters of the memory free when the search began)"
                } else {
                    ""
                },
                crate::words::bytes(x.state_bytes)
            ),
            Some("max-depth") => println!("stopped at --max-depth: states deeper than it were not explored"),
            Some(bound) => {
                println!("stopped at --{bound}: {explored} (a violation there may be missed: raise the bound)")
            }
            None => {}
        }
        for c in &x.expected {
            println!(
                "✓ {} — {} (found, as the file expects: it switches a defence off to show it; the search goes on \
                 for what the file does not expect)",
                c.broke,
                super::shown(&c.detail)
            );
            print_schedule(c, order);
        }
        match &x.counterexample {
            None if interrupted => println!("no invariant violated in the states explored"),
            None => {
                if x.expected.is_empty() {
                    println!("no invariant violated within the bounds");
                } else {
                    println!("no invariant the file does not expect is violated within the bounds");
                }
                if let Some(d) = &x.deadlock {
                    // Allowed by the policy or expected by the file, and
                    // worth seeing: how the team can come to wait on itself.
                    let can = paint("a deadlock can form", Paint::Warn, crate::color::stdout());
                    let why =
                        if scenario.policy().fail_on_deadlock { "the file expects it" } else { "the policy allows it" };
                    println!("{can} ({why}): {}", super::shown(&d.detail));
                    println!("  {} that forms it ({} steps):", schedule_name(order), d.actions.len());
                    for step in &d.actions {
                        println!("    {}", super::shown(step));
                    }
                }
            }
            Some(c) => {
                let cross = paint("✗", Paint::Fail, crate::color::stdout());
                println!("{cross} {} — {}", c.broke, super::shown(&c.detail));
                print_schedule(c, order);
                if order == Order::Depth {
                    println!(
                        "  (found depth first: `{} shrink` shortens it, or explore breadth first for a shortest one)",
                        super::args::program()
                    );
                }
            }
        }
    }
}

/// The counterexample written where the flags ask: as a scenario file, as
/// a schedule, as a page to step through. False when one of them could
/// not be (each said); the others are written all the same.
fn write_outputs(
    a: &ExploreArgs,
    scenario: &crate::scenario::Scenario,
    original: &str,
    c: &crate::explore::Counterexample,
) -> bool {
    let mut all = true;
    if let Some(out) = &a.write {
        let written = crate::explore_file::scenario_file(original, &out.to_string_lossy(), c)
            .and_then(|text| crate::output::write(out, &text));
        match written {
            Ok(()) => eprintln!(
                "wrote {}: `{} run {} -v` replays the violation",
                out.display(),
                super::args::program(),
                crate::words::path_word(&out.display().to_string())
            ),
            Err(e) => {
                all = false;
                eprintln!("no scenario written: {e}")
            }
        }
    }
    if let Some(out) = &a.save_schedule {
        match crate::output::write(out, &c.schedule_text(original)) {
            Ok(()) => eprintln!(
                "wrote {}: `{} run {} --schedule {}` makes the actors take these choices{}",
                out.display(),
                super::args::program(),
                crate::words::path_word(&a.path.display().to_string()),
                crate::words::path_word(&out.display().to_string()),
                read_once(&a.path)
            ),
            Err(e) => {
                all = false;
                eprintln!("no schedule written: {e}")
            }
        }
    }
    if let Some(out) = &a.html {
        match counterexample_page(scenario, &a.path, c).and_then(|page| crate::output::write(out, &page)) {
            Ok(()) => {
                eprintln!("wrote {}: the schedule to step through, event by event{}", out.display(), read_once(&a.path))
            }
            Err(e) => {
                all = false;
                eprintln!("no page written: {e}")
            }
        }
    }
    all
}

/// What a replay line adds when the scenario came from a pipe (`<(…)`,
/// `/dev/stdin`): the path it names will not give the text again.
fn read_once(path: &std::path::Path) -> &'static str {
    let on_disk = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if on_disk || crate::format::bundled::is_bundled(path) {
        ""
    } else {
        " (the scenario came from a pipe: save its text to a file to replay it)"
    }
}

/// The counterexample as `run --html` draws a run: the actors replay its
/// schedule (with its seed) keeping their frames.
fn counterexample_page(
    s: &crate::scenario::Scenario,
    path: &std::path::Path,
    c: &crate::explore::Counterexample,
) -> Result<String, String> {
    let shown = crate::words::path_word(&path.display().to_string());
    let me = super::args::program();
    let reproduce = format!("{me} explore {shown} --save-schedule S, then {me} run {shown} --schedule S -v");
    let title = format!("{} — {}", s.name, c.broke);
    crate::view::page::stepping_page(s, c.seed, Some(c.schedule()), &title, &reproduce)
}

/// A counterexample's schedule and what happens in it, as `-v` tells it.
fn print_schedule(c: &crate::explore::Counterexample, order: Order) {
    println!("  {} that breaks it ({} steps):", schedule_name(order), c.actions.len());
    // Paths and words come from the file: shown, never let act on the
    // terminal or pass for a line of the report.
    for step in &c.actions {
        println!("    {}", super::shown(step));
    }
    println!("  what happens:");
    for line in c.narrate() {
        println!("  {}", super::shown(&line));
    }
}

/// What a found schedule is: breadth first finds a shortest one.
fn schedule_name(order: Order) -> &'static str {
    match order {
        Order::Breadth => "the shortest schedule",
        Order::Depth => "a schedule",
    }
}

/// `--drop`: a count, or `any` for a network that may lose every message.
fn parse_drop(s: &str) -> Result<u32, String> {
    if s == "any" {
        return Ok(Budgets::ANY);
    }
    match s.parse::<u32>() {
        Ok(n) if n < Budgets::ANY => Ok(n),
        _ => Err(format!("{s:?} is not a count of messages: give a number like 1, or `any`")),
    }
}

/// What a search stopped before its end explored: breadth first, every
/// schedule up to a depth (what a bounded search proves); depth first, only
/// the states it counted.
fn explored_to(x: &crate::explore::Exploration) -> String {
    match x.explored_to {
        Some(0) => "not even every first step was explored".to_string(),
        Some(d) => format!(
            "every schedule of up to {} was explored, longer ones only partly",
            crate::words::plural(d as u64, "step")
        ),
        None => "the states counted were judged, but the last of them were not expanded, so what follows them was \
                 not explored"
            .to_string(),
    }
}
