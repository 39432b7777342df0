//! `handshake shrink`: a run that breaks an invariant, cut down to a small
//! scenario file that still breaks it.
//!
//! The work is done on the TOML document itself (a [`toml::Table`]), so what
//! the shrinker does not touch keeps its value (not its comments or layout:
//! the file is written anew by [`write_doc`]). The target is
//! "the run, with the given seed, breaks the same invariant (by name)".
//!
//! 1. Delta debugging (Zeller's ddmin) over the `[[fault]]` entries, then the
//!    `[[step]]` entries, then the teammates (removing a teammate removes the
//!    steps and faults that name it, and the faults that quote its requests),
//!    then each `count = N` group's N. The three phases repeat until a round
//!    removes nothing, so the result is 1-minimal: removing any single
//!    remaining fault, step or teammate makes the violation disappear.
//! 2. Then what remains is simplified, each change kept only if the
//!    violation stays: defences switched back on, a fixed latency, times
//!    earlier, counts smaller, probability 1, windows (`until`) removed,
//!    delays and restarts shorter, teammates' work shorter. New values are
//!    taken from a ladder of round durations (1ms, 2ms, 5ms, 10ms, ... 1m,
//!    2m, 5m ...), so the file stays readable; a value that only works
//!    exactly where it is (a delay landing on a deadline) is left as it was.
//!    If simplifying changed anything, step 1 runs again.
//! 3. The result is written with `name = "<orig>-shrunk"`, an `about` saying
//!    what it shows, `seed = S`, and one `[[expect]] violation` per invariant
//!    its run breaks, so that `handshake run` passes it as a saved regression.
//!    The file's own `[[expect]]` entries are dropped: they describe the
//!    original story, and keeping them would make the shrinker keep whatever
//!    they mention. A file may expect a violation only with a defence off
//!    (or, for no-silent-loss alone, with `drain = "truncate"`, which loses
//!    messages by design); with every defence on (a real bug), the file is
//!    written without the expectation, and `handshake run` fails it until
//!    the bug is fixed.
//!
//! Every candidate is a scenario file run once; identical candidates are run
//! once (a cache keyed by the text). The number of runs is capped; at the
//! cap the best file so far is kept (it always reproduces) and the result is
//! not claimed to be 1-minimal.
//!
//! With `jobs` threads, where the search tests candidates in turn until one
//! reproduces (a ddmin round, the first steps of a ladder search), the next
//! few not yet played are played at once and the first that reproduces in
//! that order is taken. Runs are counted, and capped, as one thread plays
//! them (a candidate played ahead counts when the order reaches it), so the
//! file, the count and the report are the same for any number of threads.

use crate::format::duration::{human, parse_duration};
use crate::protocol::Millis;
use crate::scenario::{load_str, run_scenario, Expect, Invariant, RunOptions, Scenario};
use std::collections::{BTreeSet, HashMap};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use toml::{Table, Value};

/// Re-runs allowed by default (the target for a 1-minimal result).
pub const DEFAULT_MAX_RUNS: u64 = 2000;

/// How to shrink.
#[derive(Clone, Debug)]
pub struct Options {
    /// The seed of the failing run; `None`: the file's own.
    pub seed: Option<u64>,
    /// At most this many runs of candidate files.
    pub max_runs: u64,
    /// The invariant to keep broken; `None`: the first one the run breaks
    /// that the file does not expect.
    pub invariant: Option<Invariant>,
    /// The written file's `name`; `None`: `<the file's name>-shrunk`.
    pub name: Option<String>,
    /// Threads that play candidates (at least 1). The result, `runs` and
    /// the cap are the same for any number; only `played` and the time differ.
    pub jobs: usize,
    /// Asked before each candidate is played whether to stop (Ctrl-C): the
    /// shrink then ends as the cap ends it, with the smallest file so far.
    pub stop: fn() -> bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { seed: None, max_runs: DEFAULT_MAX_RUNS, invariant: None, name: None, jobs: 1, stop: never }
    }
}

/// The shrink is never asked to stop early.
fn never() -> bool {
    false
}

/// How big a scenario is, in the entries shrinking removes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Sizes {
    pub faults: usize,
    pub steps: usize,
    /// `[[teammate]]` entries.
    pub teammates: usize,
    /// Agents they make, `count` included.
    pub agents: u64,
}

impl Sizes {
    fn of(doc: &Table) -> Sizes {
        let teammates = entries(doc, "teammate");
        Sizes {
            faults: entries(doc, "fault").len(),
            steps: entries(doc, "step").len(),
            teammates: teammates.len(),
            agents: teammates.iter().map(|t| count_of(t).unwrap_or(1)).sum(),
        }
    }
}

/// What shrinking made.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The scenario file, checked by running it.
    pub text: String,
    pub invariant: Invariant,
    /// The violation's detail, from the shrunk file's run.
    pub detail: String,
    pub seed: u64,
    pub before: Sizes,
    pub after: Sizes,
    /// Runs of candidate files (the first run of the original and the final
    /// check of the written file included) as one thread plays them: the
    /// same for any `jobs`.
    pub runs: u64,
    /// Runs really played: `runs` with one thread; with more, also the
    /// candidates played ahead that a success earlier in the order made useless.
    pub played: u64,
    /// Threads that played them: `--jobs`, or fewer if no round could use so many.
    pub jobs: usize,
    pub max_runs: u64,
    /// The cap stopped it before it was done.
    pub capped: bool,
    /// Ctrl-C stopped it before it was done (the file is the smallest so far).
    pub interrupted: bool,
    /// Removing any one remaining fault, step or teammate was tried and
    /// makes the violation disappear.
    pub minimal: bool,
    /// The simplifications kept, in words.
    pub changes: Vec<String>,
    /// Every invariant the shrunk file's run breaks (the target first).
    pub broken: Vec<Invariant>,
    /// The written file passes under `handshake run` (it expects what it breaks).
    pub passes: bool,
    /// Real time, the whole shrink: it depends on the machine, not the input.
    pub elapsed: Duration,
}

/// Why nothing was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShrinkError {
    /// The file does not load or parse, or an option makes no sense.
    BadInput(String),
    /// The run breaks no invariant (the file does not expect).
    NothingToShrink(String),
    /// The written file did not break the invariant when run.
    DoesNotReproduce(String),
    /// Ctrl-C came before the first candidate was played: nothing is smaller.
    Interrupted(String),
}

impl std::fmt::Display for ShrinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShrinkError::BadInput(m)
            | ShrinkError::NothingToShrink(m)
            | ShrinkError::DoesNotReproduce(m)
            | ShrinkError::Interrupted(m) => f.write_str(m),
        }
    }
}

/// The invariant a report line (`"name: detail"`) names.
fn invariant_of(line: &str) -> Option<Invariant> {
    Invariant::parse(line.split_once(':').map_or(line, |(n, _)| n).trim())
}

/// Runs candidates and remembers what each did.
///
/// `runs` counts what the one-thread shrinker plays, whatever `--jobs` is:
/// a candidate played ahead on another thread counts only when the
/// one-thread order reaches it, so the cap, the count reported and every
/// decision are the same for any number of threads. `played` counts what
/// was really played (more, with threads: candidates played ahead that a
/// success earlier in the order made useless).
struct Probe<'a> {
    path: &'a str,
    seed: u64,
    target: Invariant,
    runs: u64,
    played: u64,
    /// Runs of candidates allowed (the cap less the final check).
    limit: u64,
    capped: bool,
    stop: fn() -> bool,
    interrupted: bool,
    cache: HashMap<String, Seen>,
    pool: Option<&'a Pool>,
}

/// What a candidate's run reported.
struct Seen {
    /// The violations (`None`: the candidate does not load).
    violations: Option<Vec<String>>,
    /// The one-thread order has reached it (it counts in `runs`); not yet:
    /// it was only played ahead.
    counted: bool,
}

/// One run of a candidate: the violations it reports, `None` if it does not load.
fn play(path: &str, text: &str, seed: u64) -> Option<Vec<String>> {
    load_str(path, text).ok().map(|s| run_scenario(&s, seed, RunOptions::default()).violations)
}

impl Probe<'_> {
    /// Whether this document, run with the seed, breaks the target. A
    /// document that does not load does not (and costs no run); past the
    /// cap nothing does.
    fn test(&mut self, doc: &Table) -> bool {
        self.breaks(write_doc(doc))
    }

    fn breaks(&mut self, text: String) -> bool {
        let target = self.target;
        self.violations(text).is_some_and(|v| v.iter().any(|v| invariant_of(v) == Some(target)))
    }

    /// The first of the candidates `build(0..n)` that breaks the target, as
    /// if each were tested in turn and the testing stopped there. With a
    /// pool, the candidates not yet played are played ahead, a few at a
    /// time, on its threads; the answer, `runs` and the cap are those of
    /// testing them in turn.
    fn first(&mut self, n: usize, build: impl Fn(usize) -> Table) -> Option<usize> {
        let mut texts: Vec<Option<String>> = vec![None; n];
        let mut text = |i: usize| texts[i].get_or_insert_with(|| write_doc(&build(i))).clone();
        for i in 0..n {
            let t = text(i);
            if let Some(pool) = self.pool.filter(|_| !self.cache.contains_key(&t)) {
                // No more ahead than the threads play at once, nor than the cap leaves.
                let room = (self.limit.saturating_sub(self.runs) as usize).min(pool.jobs);
                let mut ahead: Vec<String> = Vec::new();
                for j in i..n {
                    if ahead.len() >= room {
                        break;
                    }
                    let u = text(j);
                    if !self.cache.contains_key(&u) && !ahead.contains(&u) {
                        ahead.push(u);
                    }
                }
                // One alone is played here, in turn, as without a pool.
                if ahead.len() > 1 {
                    for (u, violations) in ahead.iter().zip(pool.play(&ahead)) {
                        self.played += u64::from(violations.is_some());
                        self.cache.insert(u.clone(), Seen { violations, counted: false });
                    }
                }
            }
            if self.breaks(t) {
                return Some(i);
            }
        }
        None
    }

    /// The smallest value of the ladder for which `with(value)` breaks the
    /// target ([`smallest_by`]).
    fn smallest(&mut self, ladder: &[u64], with: impl Fn(u64) -> Table) -> Option<u64> {
        smallest_by(ladder, |values| self.first(values.len(), |i| with(values[i])))
    }

    /// Whether no more candidates may count: the cap is reached, or Ctrl-C
    /// asked for an end. Either way the shrink ends with what it has.
    fn over(&mut self) -> bool {
        if self.runs >= self.limit {
            self.capped = true;
        } else if !self.interrupted && (self.stop)() {
            self.interrupted = true;
        }
        self.capped || self.interrupted
    }

    fn violations(&mut self, text: String) -> Option<&Vec<String>> {
        let counted = self.cache.get(&text).map(|seen| seen.counted);
        // Each candidate the one-thread order reaches counts, whether it is
        // played now or was played ahead: the cap is on those.
        if counted != Some(true) && self.over() {
            return None;
        }
        match self.cache.get_mut(&text) {
            Some(seen) if seen.counted => {}
            Some(seen) => {
                // Played ahead: it counts now, where one thread would have played it.
                seen.counted = true;
                self.runs += u64::from(seen.violations.is_some());
            }
            None => {
                let violations = play(self.path, &text, self.seed);
                self.runs += u64::from(violations.is_some());
                self.played += u64::from(violations.is_some());
                tracing::debug!(runs = self.runs, "shrink: a candidate played");
                self.cache.insert(text.clone(), Seen { violations, counted: true });
            }
        }
        self.cache.get(&text).and_then(|s| s.violations.as_ref())
    }
}

/// Threads that play candidates, for as long as one shrink lasts: `jobs`
/// less one, as the shrinking thread plays its share instead of waiting. A
/// loaded scenario holds hooks that may not cross threads, so what crosses
/// is the candidate's text, and each thread loads it.
struct Pool {
    jobs: usize,
    path: String,
    seed: u64,
    work: Option<mpsc::Sender<(usize, String)>>,
    done: mpsc::Receiver<(usize, std::thread::Result<Option<Vec<String>>>)>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    /// The pool, or why its threads could not be started.
    fn new(path: &str, seed: u64, jobs: usize) -> Result<Pool, String> {
        let (work, queue) = mpsc::channel::<(usize, String)>();
        let queue = Arc::new(Mutex::new(queue));
        let (report, done) = mpsc::channel();
        let mut pool = Pool { jobs, path: path.to_string(), seed, work: Some(work), done, threads: Vec::new() };
        for n in 1..jobs {
            let (queue, report, path) = (Arc::clone(&queue), report.clone(), path.to_string());
            let spawned = std::thread::Builder::new().name(format!("shrink-{n}")).spawn(move || loop {
                // A poisoned lock or a closed queue: the shrink is over.
                let next = match queue.lock() {
                    Ok(q) => q.recv(),
                    Err(_) => break,
                };
                let Ok((i, text)) = next else { break };
                // A panic is carried back and raised on the shrinking
                // thread, as it would be without threads.
                let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| play(&path, &text, seed)));
                if report.send((i, seen)).is_err() {
                    break;
                }
            });
            // Dropping the pool ends the threads already started.
            pool.threads.push(spawned.map_err(|e| format!("--jobs {jobs}: thread {n} could not be started: {e}"))?);
        }
        Ok(pool)
    }

    /// Each text's run, in the texts' order: the first played here, the
    /// others on the pool's threads.
    fn play(&self, texts: &[String]) -> Vec<Option<Vec<String>>> {
        let Some((mine, theirs)) = texts.split_first() else { return Vec::new() };
        let work = self.work.as_ref().expect("the queue is open until the pool is dropped");
        for (i, t) in theirs.iter().enumerate() {
            work.send((i + 1, t.clone())).expect("the pool's threads wait for work until it is dropped");
        }
        let mut out: Vec<Option<Option<Vec<String>>>> = vec![None; texts.len()];
        out[0] = Some(play(&self.path, mine, self.seed));
        for _ in 0..theirs.len() {
            let (i, seen) = self.done.recv().expect("the pool's threads answer every text they take");
            out[i] = Some(seen.unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        out.into_iter().map(|s| s.expect("every text was answered")).collect()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the queue ends each thread once it is done with what it holds.
        drop(self.work.take());
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Shrinks the scenario `src` (read from `path`, which only names it in
/// messages and the `about`).
pub fn shrink(path: &str, src: &str, opts: &Options) -> Result<Shrunk, ShrinkError> {
    let started = Instant::now();
    let (seed, target) = target(path, src, opts)?;

    let mut doc: Table = src.parse().map_err(|e| ShrinkError::BadInput(format!("{path}: {e}")))?;
    let before = Sizes::of(&doc);
    doc.remove("expect");
    if opts.max_runs < 3 {
        return Err(ShrinkError::BadInput(format!(
            "--max-runs {} is too few: the original, one candidate and the written file take three",
            opts.max_runs
        )));
    }
    if opts.jobs == 0 {
        return Err(ShrinkError::BadInput("--jobs must be at least 1".into()));
    }
    // No round offers more candidates than the empty list, the chunks and
    // their complements of the longest list: threads past that would idle.
    let longest = before.faults.max(before.steps).max(before.teammates);
    let threads = opts.jobs.min(2 * longest + 1).max(1);
    let pool = if threads > 1 { Some(Pool::new(path, seed, threads).map_err(ShrinkError::BadInput)?) } else { None };
    let mut probe = Probe {
        path,
        seed,
        target,
        runs: 1,
        played: 1,
        limit: opts.max_runs - 1,
        capped: false,
        stop: opts.stop,
        interrupted: false,
        cache: HashMap::new(),
        pool: pool.as_ref(),
    };
    if !probe.test(&doc) {
        if probe.interrupted {
            return Err(ShrinkError::Interrupted(
                "interrupted (Ctrl-C) before the first candidate: nothing was shrunk, nothing written".into(),
            ));
        }
        return Err(ShrinkError::DoesNotReproduce(format!(
            "the file without its [[expect]] entries does not break {target} with seed {seed}"
        )));
    }

    let mut changes = Vec::new();
    loop {
        let round = text_of(&doc);
        doc = ddmin_list(&mut probe, doc, "fault", |d, _| d);
        doc = ddmin_list(&mut probe, doc, "step", |d, _| d);
        doc = ddmin_list(&mut probe, doc, "teammate", drop_dependents);
        doc = shrink_counts(&mut probe, doc, &mut changes);
        doc = simplify(&mut probe, doc, &mut changes);
        if probe.capped || probe.interrupted || text_of(&doc) == round {
            break;
        }
    }
    let minimal = !probe.capped && !probe.interrupted;
    let after = Sizes::of(&doc);

    // The file as written: the run of `doc` broke the target; now say so.
    let original_name = doc.get("name").and_then(Value::as_str).unwrap_or("scenario").to_string();
    let summary = sizes_before_and_after(&before, &after);
    // What the last candidate kept broke, the target first (it was run: the cache has it).
    let seen = probe.violations(text_of(&doc)).cloned().unwrap_or_default();
    let detail = seen
        .iter()
        .find(|v| invariant_of(v) == Some(target))
        .map(|v| v.split_once(':').map_or(v.as_str(), |(_, d)| d.trim()).to_string())
        .unwrap_or_default();
    let mut broken = vec![target];
    for i in seen.iter().filter_map(|v| invariant_of(v)) {
        if !broken.contains(&i) {
            broken.push(i);
        }
    }
    let expectable = load_str(path, &text_of(&doc)).map_or_else(|_| Vec::new(), |s| expectable(&s, &broken));
    let a_bug = !expectable.contains(&target);
    let mut doc = doc;
    doc.insert("seed".into(), Value::Integer(seed as i64));
    let name = opts.name.clone().unwrap_or_else(|| format!("{original_name}-shrunk"));
    doc.insert("name".into(), Value::String(name));
    let file = path.rsplit('/').next().unwrap_or(path);
    let about =
        about_the_shrunk(target, &detail, file, seed, &summary, probe.runs + 1, (minimal, probe.interrupted), a_bug);
    doc.insert("about".into(), Value::String(about));
    let expect: &[Invariant] = &expectable;
    // The written file, run as `handshake run` runs it (its own seed).
    let text = write_doc(&finish(&doc, expect));
    let s = load_str(path, &text).map_err(|e| {
        ShrinkError::DoesNotReproduce(format!(
            "the shrunk file does not load ({}): nothing written",
            e.first().map(|e| e.to_string()).unwrap_or_default()
        ))
    })?;
    let report = run_scenario(&s, s.default_seed(), RunOptions::default());
    probe.runs += 1;
    probe.played += 1;
    if !report.violations.iter().any(|v| invariant_of(v) == Some(target)) {
        return Err(ShrinkError::DoesNotReproduce(format!(
            "the shrunk file, run with seed {seed}, does not break {target}: nothing written"
        )));
    }
    Ok(Shrunk {
        text,
        invariant: target,
        detail,
        seed,
        before,
        after,
        runs: probe.runs,
        played: probe.played,
        jobs: threads,
        max_runs: opts.max_runs,
        capped: probe.capped,
        interrupted: probe.interrupted,
        minimal,
        changes,
        broken,
        passes: report.passed,
        elapsed: started.elapsed(),
    })
}

/// The seed to shrink with and the invariant to keep broken: the one asked
/// for, else the first the run breaks that the file does not expect.
fn target(path: &str, src: &str, opts: &Options) -> Result<(u64, Invariant), ShrinkError> {
    let scenario = load_str(path, src)
        .map_err(|e| ShrinkError::BadInput(e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")))?;
    let seed = opts.seed.unwrap_or(scenario.default_seed());
    let report = run_scenario(&scenario, seed, RunOptions::default());
    let expected: BTreeSet<Invariant> =
        scenario.expects.iter().filter_map(|e| if let Expect::Violation(i) = e { Some(*i) } else { None }).collect();
    let broken: Vec<Invariant> = report.violations.iter().filter_map(|v| invariant_of(v)).collect();
    let target = match opts.invariant {
        Some(i) if broken.contains(&i) => i,
        Some(i) => {
            return Err(ShrinkError::NothingToShrink(format!(
                "nothing to shrink: the run (seed {seed}) does not break {i}{}",
                if broken.is_empty() { String::new() } else { format!(" (it breaks {})", names(&broken)) }
            )))
        }
        None => match broken.iter().find(|i| !expected.contains(i)) {
            Some(i) => *i,
            None if broken.is_empty() => {
                return Err(ShrinkError::NothingToShrink(format!(
                    "nothing to shrink: the run breaks no invariant (seed {seed})"
                )))
            }
            None => {
                return Err(ShrinkError::NothingToShrink(format!(
                    "nothing to shrink: the run breaks no invariant the file does not expect (seed {seed}; it breaks \
                     {}, which it expects: name one with --invariant to shrink it anyway)",
                    names(&broken)
                )))
            }
        },
    };
    Ok((seed, target))
}

/// What shrinking cut, list by list: faults, steps, teammates (and agents,
/// where `count` makes teammates).
fn sizes_before_and_after(before: &Sizes, after: &Sizes) -> Vec<String> {
    let mut summary = vec![
        format!("{} → {}", plural(before.faults, "fault"), after.faults),
        format!("{} → {}", plural(before.steps, "step"), after.steps),
        format!("{} → {}", plural(before.teammates, "teammate"), after.teammates),
    ];
    if before.agents != before.teammates as u64 || after.agents != after.teammates as u64 {
        summary.push(format!("{} → {}", plural(before.agents as usize, "agent"), after.agents));
    }
    summary
}

/// The shrunk file's `about`: what it breaks, where it came from, how far
/// shrinking got, and whether it is a bug.
#[allow(clippy::too_many_arguments)]
fn about_the_shrunk(
    target: Invariant,
    detail: &str,
    file: &str,
    seed: u64,
    summary: &[String],
    runs: u64,
    (minimal, interrupted): (bool, bool),
    a_bug: bool,
) -> String {
    format!(
        "Breaks {target}: {detail}. Shrunk by `handshake shrink` from {file} seed {seed}: {} ({} re-runs{}).{}",
        summary.join(", "),
        runs,
        if minimal {
            ", 1-minimal"
        } else if interrupted {
            ", stopped by Ctrl-C: not 1-minimal"
        } else {
            ", stopped by the cap: not 1-minimal"
        },
        if a_bug {
            " Every defence is on, so this is a bug: the file cannot expect the violation, and fails until it is fixed."
        } else {
            ""
        }
    )
}

/// What a file may expect of what its run breaks (`broken`): the rule the
/// file check applies ([`Scenario::may_expect`]).
fn expectable(s: &Scenario, broken: &[Invariant]) -> Vec<Invariant> {
    broken.iter().copied().filter(|&i| s.may_expect(i)).collect()
}

fn names(list: &[Invariant]) -> String {
    list.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
}

fn plural(n: usize, word: &str) -> String {
    crate::words::plural(n as u64, word)
}

fn text_of(doc: &Table) -> String {
    write_doc(doc)
}

/// The document in the order people read it: name, about, seed, the rest,
/// then one `[[expect]] violation` per invariant.
fn finish(doc: &Table, expect: &[Invariant]) -> Table {
    let mut out = Table::new();
    for key in ["name", "about", "seed"] {
        if let Some(v) = doc.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    for (k, v) in doc {
        if !matches!(k.as_str(), "name" | "about" | "seed" | "expect") {
            out.insert(k.clone(), v.clone());
        }
    }
    if !expect.is_empty() {
        let list = expect
            .iter()
            .map(|i| {
                let mut e = Table::new();
                e.insert("violation".into(), Value::String(i.name().into()));
                Value::Table(e)
            })
            .collect();
        out.insert("expect".into(), Value::Array(list));
    }
    out
}

/// The document as a scenario file people write: plain keys first, then
/// each table, then each list of tables as `[[key]]` entries whose values
/// (work items, a forged message) stay inline.
pub fn write_doc(doc: &Table) -> String {
    let mut out = String::new();
    let is_list_of_tables = |v: &Value| matches!(v, Value::Array(a) if !a.is_empty() && a.iter().all(|x| x.is_table()));
    for (k, v) in doc {
        if !v.is_table() && !is_list_of_tables(v) {
            out.push_str(&format!("{} = {v}\n", key(k)));
        }
    }
    fn table(out: &mut String, path: &str, t: &Table) {
        out.push_str(&format!("\n[{path}]\n"));
        for (k, v) in t {
            if !v.is_table() {
                out.push_str(&format!("{} = {v}\n", key(k)));
            }
        }
        for (k, v) in t {
            if let Value::Table(sub) = v {
                table(out, &format!("{path}.{}", key(k)), sub);
            }
        }
    }
    for (k, v) in doc {
        if let Value::Table(t) = v {
            table(&mut out, &key(k), t);
        }
    }
    for (k, v) in doc {
        if let (true, Value::Array(list)) = (is_list_of_tables(v), v) {
            for entry in list.iter().filter_map(Value::as_table) {
                out.push_str(&format!("\n[[{}]]\n", key(k)));
                for (ek, ev) in entry {
                    out.push_str(&format!("{} = {ev}\n", key(ek)));
                }
            }
        }
    }
    out
}

/// A key, quoted unless it is bare.
fn key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

// ---- the document's lists ----

fn entries(doc: &Table, key: &str) -> Vec<Value> {
    match doc.get(key) {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

fn set_entries(doc: &mut Table, key: &str, list: Vec<Value>) {
    if list.is_empty() {
        doc.remove(key);
    } else {
        doc.insert(key.into(), Value::Array(list));
    }
}

fn count_of(t: &Value) -> Option<u64> {
    t.get("count").and_then(Value::as_integer).map(|n| n.max(0) as u64)
}

/// The agent names a `[[teammate]]` entry makes.
fn agent_names(t: &Value) -> Vec<String> {
    let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
    match count_of(t) {
        Some(n) => (1..=n).map(|i| format!("{name}-{i}")).collect(),
        None => vec![name.to_string()],
    }
}

/// Delta-debugs the list `key` of the document: the kept entries are a
/// 1-minimal subset (unless the cap stops it). `fix` repairs a candidate
/// whose entries were removed (given their indices).
fn ddmin_list(probe: &mut Probe, doc: Table, key: &str, fix: impl Fn(Table, &[Value]) -> Table) -> Table {
    let all = entries(&doc, key);
    if all.is_empty() {
        return doc;
    }
    let build = |keep: &[usize]| -> Table {
        let mut d = doc.clone();
        let removed: Vec<Value> =
            all.iter().enumerate().filter(|(i, _)| !keep.contains(i)).map(|(_, v)| v.clone()).collect();
        set_entries(&mut d, key, keep.iter().map(|&i| all[i].clone()).collect());
        fix(d, &removed)
    };
    let kept = ddmin_by(all.len(), |candidates| probe.first(candidates.len(), |i| build(&candidates[i])));
    if kept.len() == all.len() {
        doc
    } else {
        build(&kept)
    }
}

/// Zeller's ddmin over the indices `0..n`: a subset for which `test` holds
/// and from which removing any one index makes it fail (given `test` holds
/// for all of them). The empty set is tried first.
pub fn ddmin(n: usize, mut test: impl FnMut(&[usize]) -> bool) -> Vec<usize> {
    ddmin_by(n, |candidates| candidates.iter().position(|c| test(c)))
}

/// [`ddmin`], asking `first` for the first of each round's candidates (in
/// the order ddmin tests them one by one) for which the test holds: the
/// empty set (first round only), the chunks, then their complements. A
/// `first` that tries them in turn is ddmin itself; one that tries them at
/// once and answers the same gets the same result.
fn ddmin_by(n: usize, mut first: impl FnMut(&[Vec<usize>]) -> Option<usize>) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let mut c: Vec<usize> = (0..n).collect();
    let mut parts = 2usize;
    let mut empty_first = true;
    loop {
        let chunks: Vec<Vec<usize>> = if c.len() >= 2 { split(&c, parts) } else { Vec::new() };
        let mut candidates: Vec<Vec<usize>> = Vec::new();
        if empty_first {
            candidates.push(Vec::new());
        }
        let skip = candidates.len();
        candidates.extend(chunks.iter().cloned());
        if chunks.len() > 2 {
            for i in 0..chunks.len() {
                candidates.push(
                    chunks.iter().enumerate().filter(|(j, _)| *j != i).flat_map(|(_, ch)| ch.iter().copied()).collect(),
                );
            }
        }
        if candidates.is_empty() {
            break;
        }
        empty_first = false;
        match first(&candidates) {
            Some(k) if k < skip => return Vec::new(),
            Some(k) if k < skip + chunks.len() => {
                c = candidates.swap_remove(k);
                parts = 2;
            }
            Some(k) => {
                c = candidates.swap_remove(k);
                parts = (parts - 1).max(2);
            }
            None if c.len() < 2 || parts >= c.len() => break,
            None => parts = (parts * 2).min(c.len()),
        }
    }
    c
}

fn split(c: &[usize], parts: usize) -> Vec<Vec<usize>> {
    let parts = parts.min(c.len()).max(1);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for i in 0..parts {
        let end = start + (c.len() - start) / (parts - i);
        out.push(c[start..end].to_vec());
        start = end;
    }
    out
}

/// After teammates were removed: the steps and faults that name them, the
/// faults that quote their requests, and the faults that quote the labels
/// of steps removed with them.
fn drop_dependents(mut doc: Table, removed: &[Value]) -> Table {
    let gone: BTreeSet<String> = removed.iter().flat_map(agent_names).collect();
    drop_agents(&mut doc, &gone);
    doc
}

fn drop_agents(doc: &mut Table, gone: &BTreeSet<String>) {
    if gone.is_empty() {
        return;
    }
    let names = |v: &Value, key: &str| -> Vec<String> {
        match v.get(key) {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        }
    };
    let mut labels_gone: BTreeSet<String> = BTreeSet::new();
    let steps: Vec<Value> = entries(doc, "step")
        .into_iter()
        .filter(|s| {
            let hit = ["from", "to"].iter().any(|k| names(s, k).iter().any(|n| gone.contains(n)));
            if hit {
                labels_gone.extend(names(s, "label"));
            }
            !hit
        })
        .collect();
    set_entries(doc, "step", steps);
    let quotes = |label: &str| -> bool {
        let label = label.trim_start_matches('@');
        labels_gone.contains(label) || label.split('/').next().is_some_and(|owner| gone.contains(owner))
    };
    let faults: Vec<Value> = entries(doc, "fault")
        .into_iter()
        .filter(|f| {
            let named = ["agent", "from", "to", "between"].iter().any(|k| names(f, k).iter().any(|n| gone.contains(n)));
            let quoted = f.get("request").and_then(Value::as_str).is_some_and(quotes)
                || f.get("message").and_then(|m| m.get("request_id")).and_then(Value::as_str).is_some_and(quotes);
            !named && !quoted
        })
        .collect();
    set_entries(doc, "fault", faults);
}

/// Each `count = N` group: N made smaller (toward 1), the agents past the
/// new N removed with what names them. A group of one becomes a plain
/// teammate named `<name>-1`, so that what names it still does.
fn shrink_counts(probe: &mut Probe, mut doc: Table, changes: &mut Vec<String>) -> Table {
    let n_teammates = entries(&doc, "teammate").len();
    for i in 0..n_teammates {
        let team = entries(&doc, "teammate");
        let Some(n) = count_of(&team[i]) else { continue };
        let name = team[i].get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let with = |k: u64| -> Table {
            let mut d = doc.clone();
            let mut team = entries(&d, "teammate");
            if let Value::Table(t) = &mut team[i] {
                t.insert("count".into(), Value::Integer(k as i64));
            }
            set_entries(&mut d, "teammate", team);
            drop_agents(&mut d, &((k + 1)..=n).map(|j| format!("{name}-{j}")).collect());
            d
        };
        let ladder: Vec<u64> = [1u64, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000]
            .into_iter()
            .filter(|&k| k < n)
            .collect();
        let mut now = n;
        if let Some(k) = probe.smallest(&ladder, with) {
            doc = with(k);
            changes.push(format!("teammate {name}: count {n} → {k}"));
            now = k;
        }
        if now == 1 {
            let mut d = doc.clone();
            let mut team = entries(&d, "teammate");
            if let Value::Table(t) = &mut team[i] {
                t.remove("count");
                t.insert("name".into(), Value::String(format!("{name}-1")));
            }
            set_entries(&mut d, "teammate", team);
            if probe.test(&d) {
                doc = d;
                changes.push(format!("teammate {name} with count 1 → teammate {name}-1"));
            }
        }
    }
    doc
}

/// The smallest of `ladder` (ascending) for which a test holds, searched by
/// halving as if the test were monotone; every value returned was tried.
/// `first` answers which of the values it is given, tried in turn, is the
/// first for which the test holds. The lowest value and the first halving's
/// are given together: when the lowest fails, the halving's is the next
/// tried anyway, so a pool can play both at once.
fn smallest_by(ladder: &[u64], mut first: impl FnMut(&[u64]) -> Option<usize>) -> Option<u64> {
    let &lowest = ladder.first()?;
    let (mut lo, mut hi) = (1usize, ladder.len());
    let mut lowest_tried = false;
    while lo < hi {
        let mid = (lo + hi) / 2;
        let holds = if lowest_tried {
            first(&[ladder[mid]]).is_some()
        } else {
            lowest_tried = true;
            match first(&[lowest, ladder[mid]]) {
                Some(0) => return Some(lowest),
                found => found.is_some(),
            }
        };
        if holds {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if !lowest_tried && first(&[lowest]).is_some() {
        return Some(lowest);
    }
    ladder.get(hi).copied()
}

/// Round durations, in milliseconds, strictly between `lo` and `below`,
/// with `lo` first.
fn round_durations(lo: u64, below: u64) -> Vec<u64> {
    let mut out = vec![lo];
    let mut unit = 1u64;
    while unit < below.saturating_mul(10) && unit < u64::MAX / 10 {
        for m in [1, 2, 5] {
            let v = unit * m;
            if v > lo && v < below {
                out.push(v);
            }
        }
        unit *= 10;
    }
    for v in [30_000u64, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000] {
        if v > lo && v < below {
            out.push(v);
        }
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&v| v < below);
    out
}

// ---- simplifying what remains ----

/// One entry of a list, edited.
fn edit_entry(doc: &Table, list: &str, i: usize, f: impl FnOnce(&mut Table)) -> Table {
    let mut d = doc.clone();
    let mut all = entries(&d, list);
    if let Some(Value::Table(t)) = all.get_mut(i) {
        f(t);
    }
    set_entries(&mut d, list, all);
    d
}

fn duration_at(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_str).and_then(|s| parse_duration(s).ok()).map(|m| m.0)
}

fn dur(ms: u64) -> Value {
    Value::String(human(Millis(ms)))
}

/// A duration key of one entry made smaller, down to `lo`: kept at the
/// smallest round value that still breaks the target.
#[allow(clippy::too_many_arguments)]
fn shorter(
    probe: &mut Probe,
    doc: &mut Table,
    list: &str,
    i: usize,
    key: &str,
    lo: u64,
    what: &str,
    changes: &mut Vec<String>,
) {
    let entry = entries(doc, list).get(i).cloned();
    let Some(cur) = duration_at(entry.as_ref().and_then(|e| e.get(key))) else { return };
    if cur <= lo {
        return;
    }
    let ladder = round_durations(lo, cur);
    let with = |v: u64| edit_entry(doc, list, i, |t| drop(t.insert(key.into(), dur(v))));
    if let Some(v) = probe.smallest(&ladder, with) {
        *doc = with(v);
        changes.push(format!("{what}: {key} {} → {}", human(Millis(cur)), human(Millis(v))));
    }
}

/// Removes a key of one entry if the target stays broken.
fn without(probe: &mut Probe, doc: &mut Table, list: &str, i: usize, key: &str, what: &str, changes: &mut Vec<String>) {
    let Some(old) = entries(doc, list).get(i).and_then(|e| e.get(key)).cloned() else { return };
    let d = edit_entry(doc, list, i, |t| drop(t.remove(key)));
    if probe.test(&d) {
        *doc = d;
        changes.push(format!("{what}: {key} = {old} removed"));
    }
}

fn simplify(probe: &mut Probe, mut doc: Table, changes: &mut Vec<String>) -> Table {
    doc = defences_back_on(probe, doc, changes);
    doc = simpler_latency(probe, doc, changes);
    // Faults: probability 1, counts toward 1, windows removed, earlier,
    // delays and restarts shorter, stalls shorter.
    for i in 0..entries(&doc, "fault").len() {
        doc = simpler_fault(probe, doc, i, changes);
    }
    // Steps earlier, each no earlier than the one before it.
    let mut prev = 0;
    for i in 0..entries(&doc, "step").len() {
        shorter(probe, &mut doc, "step", i, "at", prev, &format!("step #{}", i + 1), changes);
        prev = duration_at(entries(&doc, "step")[i].get("at")).unwrap_or(prev);
    }
    // Teammates' work shorter: fewer items, fewer steps, shorter steps.
    for i in 0..entries(&doc, "teammate").len() {
        doc = shorter_work(probe, doc, i, changes);
    }
    doc
}

/// Defences back on: what remains needs only the ones still off.
fn defences_back_on(probe: &mut Probe, mut doc: Table, changes: &mut Vec<String>) -> Table {
    let off: Vec<String> = doc
        .get("policy")
        .and_then(|p| p.get("defences"))
        .and_then(Value::as_table)
        .map(|d| d.iter().filter(|(_, v)| v.as_bool() == Some(false)).map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    for key in off {
        let mut d = doc.clone();
        if let Some(Value::Table(p)) = d.get_mut("policy") {
            if let Some(Value::Table(def)) = p.get_mut("defences") {
                def.remove(&key);
                if def.is_empty() {
                    p.remove("defences");
                }
            }
            if p.is_empty() {
                d.remove("policy");
            }
        }
        if probe.test(&d) {
            doc = d;
            changes.push(format!("defence {key} back on"));
        }
    }
    doc
}

/// A fixed latency: the default 1ms, else the smallest round one.
fn simpler_latency(probe: &mut Probe, mut doc: Table, changes: &mut Vec<String>) -> Table {
    if let Some(lat) = doc.get("policy").and_then(|p| p.get("latency")).and_then(Value::as_str).map(str::to_string) {
        if lat != "1ms" {
            let with = |v: Option<u64>| {
                let mut d = doc.clone();
                if let Some(Value::Table(p)) = d.get_mut("policy") {
                    match v {
                        None => drop(p.remove("latency")),
                        Some(v) => drop(p.insert("latency".into(), dur(v))),
                    }
                    if p.is_empty() {
                        d.remove("policy");
                    }
                }
                d
            };
            let d = with(None);
            if probe.test(&d) {
                doc = d;
                changes.push(format!("latency {lat} → 1ms (the default)"));
            } else {
                let (lo, hi) = match lat.split_once("..") {
                    Some((a, b)) => (parse_duration(a).map(|m| m.0).ok(), parse_duration(b).map(|m| m.0).ok()),
                    None => (Some(0), parse_duration(&lat).map(|m| m.0).ok()),
                };
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    let mut ladder = round_durations(lo, hi);
                    if lat.contains("..") {
                        ladder.push(hi);
                    }
                    if let Some(v) = probe.smallest(&ladder, |v| with(Some(v))) {
                        doc = with(Some(v));
                        changes.push(format!("latency {lat} → {}", human(Millis(v))));
                    }
                }
            }
        }
    }
    doc
}

/// Fault #`i` simpler, key by key, each change kept only if the run still breaks.
fn simpler_fault(probe: &mut Probe, mut doc: Table, i: usize, changes: &mut Vec<String>) -> Table {
    let f = entries(&doc, "fault")[i].clone();
    let named = f.get("kind").and_then(Value::as_str).unwrap_or_default();
    let what = format!("fault #{} ({named})", i + 1);
    let kind = crate::world::FaultKind::named(named);
    let stall = kind == Some(crate::world::FaultKind::Stall);
    without(probe, &mut doc, "fault", i, "probability", &what, changes);
    if let Some(n) = f.get("count").and_then(Value::as_integer).filter(|&n| n > 1) {
        let with = |k: u64| edit_entry(&doc, "fault", i, |t| drop(t.insert("count".into(), Value::Integer(k as i64))));
        let ladder: Vec<u64> = [1u64, 2, 3, 5, 10, 20, 50, 100, 1000].into_iter().filter(|&k| k < n as u64).collect();
        if let Some(k) = probe.smallest(&ladder, with) {
            doc = with(k);
            changes.push(format!("{what}: count {n} → {k}"));
        }
    }
    if let Some(delay) = f.get("delay").and_then(Value::as_str).filter(|d| d.contains("..")) {
        let (lo, hi) = delay.split_once("..").unwrap_or_default();
        for fixed in [lo, hi] {
            let d = edit_entry(&doc, "fault", i, |t| drop(t.insert("delay".into(), Value::String(fixed.into()))));
            if probe.test(&d) {
                doc = d;
                changes.push(format!("{what}: delay {delay} → {fixed}"));
                break;
            }
        }
    }
    if !stall {
        without(probe, &mut doc, "fault", i, "until", &what, changes);
    }
    if stall {
        let at = duration_at(entries(&doc, "fault")[i].get("at")).unwrap_or(0);
        shorter(probe, &mut doc, "fault", i, "until", at + 1, &what, changes);
    }
    shorter(probe, &mut doc, "fault", i, "at", 0, &what, changes);
    let optional_at = kind.is_some_and(crate::world::FaultKind::at_is_optional);
    if optional_at && duration_at(entries(&doc, "fault")[i].get("at")) == Some(0) {
        // `at = "0ms"` is the default: say nothing.
        let d = edit_entry(&doc, "fault", i, |t| drop(t.remove("at")));
        if probe.test(&d) {
            doc = d;
        }
    }
    if stall {
        // An earlier start leaves the end where it was: shorten again.
        let at = duration_at(entries(&doc, "fault")[i].get("at")).unwrap_or(0);
        shorter(probe, &mut doc, "fault", i, "until", at + 1, &what, changes);
    }
    shorter(probe, &mut doc, "fault", i, "delay", 1, &what, changes);
    shorter(probe, &mut doc, "fault", i, "restart", 1, &what, changes);
    doc
}

/// Teammate #`i`'s work shorter: fewer items, fewer steps, shorter steps.
fn shorter_work(probe: &mut Probe, mut doc: Table, i: usize, changes: &mut Vec<String>) -> Table {
    let name = entries(&doc, "teammate")[i].get("name").and_then(Value::as_str).unwrap_or_default().to_string();
    let work = |doc: &Table| -> Vec<Value> {
        match entries(doc, "teammate")[i].get("work") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        }
    };
    let set_work = |doc: &Table, w: Vec<Value>| {
        edit_entry(doc, "teammate", i, |t| {
            if w.is_empty() {
                t.remove("work");
            } else {
                t.insert("work".into(), Value::Array(w));
            }
        })
    };
    let mut j = work(&doc).len();
    while j > 0 {
        j -= 1;
        let mut w = work(&doc);
        let item = w.remove(j);
        let d = set_work(&doc, w);
        if probe.test(&d) {
            doc = d;
            changes.push(format!("teammate {name}: work item {} removed ({})", j + 1, inline(&item)));
        }
    }
    for j in 0..work(&doc).len() {
        let item = work(&doc)[j].clone();
        if let Some(n) = item.get("steps").and_then(Value::as_integer).filter(|&n| n > 1) {
            let with = |k: u64| {
                let mut w = work(&doc);
                if let Value::Table(t) = &mut w[j] {
                    t.insert("steps".into(), Value::Integer(k as i64));
                }
                set_work(&doc, w)
            };
            let ladder: Vec<u64> =
                [1u64, 2, 3, 5, 10, 20, 50, 100, 1000].into_iter().filter(|&k| k < n as u64).collect();
            if let Some(k) = probe.smallest(&ladder, with) {
                doc = with(k);
                changes.push(format!("teammate {name}: work item {} steps {n} → {k}", j + 1));
            }
        }
        if let Some(cur) = duration_at(item.get("step_time")) {
            let with = |v: u64| {
                let mut w = work(&doc);
                if let Value::Table(t) = &mut w[j] {
                    t.insert("step_time".into(), dur(v));
                }
                set_work(&doc, w)
            };
            if let Some(v) = probe.smallest(&round_durations(1, cur), with) {
                doc = with(v);
                changes.push(format!(
                    "teammate {name}: work item {} step_time {} → {}",
                    j + 1,
                    human(Millis(cur)),
                    human(Millis(v))
                ));
            }
        }
    }
    doc
}

/// A value as one line of TOML.
fn inline(v: &Value) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19, point 6: with every defence on, the truncate drain excuses
    /// no-silent-loss alone (it loses messages by design); a graceful-complete
    /// broken there is a bug, and the shrunk file must not expect it.
    #[test]
    fn with_every_defence_on_only_the_truncate_drains_loss_may_be_expected() {
        let file = |policy: &str| {
            let text = format!("name = \"x\"\n{policy}[[teammate]]\nname = \"alice\"\n");
            load_str("x.toml", &text).expect("valid")
        };
        let broken = [Invariant::GracefulComplete, Invariant::NoSilentLoss];
        let truncate = "[policy]\nmailbox = \"file\"\ndrain = \"truncate\"\n";
        assert_eq!(expectable(&file(truncate), &broken), vec![Invariant::NoSilentLoss]);
        assert_eq!(expectable(&file(truncate), &broken[..1]), Vec::<Invariant>::new());
        let off = format!("{truncate}[policy.defences]\nkind_check = false\n");
        assert_eq!(expectable(&file(&off), &broken), broken.to_vec());
        assert_eq!(expectable(&file(""), &broken), Vec::<Invariant>::new());
    }

    #[test]
    fn ddmin_finds_a_one_minimal_subset() {
        // Fails when both 3 and 7 are kept.
        let mut calls = 0;
        let kept = ddmin(10, |k| {
            calls += 1;
            k.contains(&3) && k.contains(&7)
        });
        assert_eq!(kept, vec![3, 7]);
        assert!(calls < 40, "{calls}");
        assert_eq!(ddmin(5, |_| true), Vec::<usize>::new());
        assert_eq!(ddmin(5, |k| k.contains(&4)), vec![4]);
    }

    /// `smallest_by` with each value tried in turn.
    fn smallest(ladder: &[u64], mut ok: impl FnMut(u64) -> bool) -> Option<u64> {
        smallest_by(ladder, |values| values.iter().position(|&v| ok(v)))
    }

    /// The search as it was written before a pool could play its tries
    /// ahead: `smallest_by` must try the same values in the same order.
    fn smallest_in_turn(ladder: &[u64], mut ok: impl FnMut(u64) -> bool) -> Option<u64> {
        let first = *ladder.first()?;
        if ok(first) {
            return Some(first);
        }
        let (mut lo, mut hi) = (1usize, ladder.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if ok(ladder[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        ladder.get(hi).copied()
    }

    /// ddmin as it was written before a pool could play a round's
    /// candidates ahead: `ddmin` must test the same subsets in the same order.
    fn ddmin_in_turn(n: usize, mut test: impl FnMut(&[usize]) -> bool) -> Vec<usize> {
        let mut c: Vec<usize> = (0..n).collect();
        if c.is_empty() || test(&[]) {
            return Vec::new();
        }
        let mut parts = 2usize;
        while c.len() >= 2 {
            let chunks: Vec<Vec<usize>> = split(&c, parts);
            let mut next = None;
            for chunk in &chunks {
                if test(chunk) {
                    next = Some((chunk.clone(), 2));
                    break;
                }
            }
            if next.is_none() && chunks.len() > 2 {
                for i in 0..chunks.len() {
                    let rest: Vec<usize> = chunks
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .flat_map(|(_, ch)| ch.iter().copied())
                        .collect();
                    if test(&rest) {
                        next = Some((rest, (parts - 1).max(2)));
                        break;
                    }
                }
            }
            match next {
                Some((smaller, p)) => {
                    c = smaller;
                    parts = p;
                }
                None if parts >= c.len() => break,
                None => parts = (parts * 2).min(c.len()),
            }
        }
        c
    }

    /// A test that holds for some subsets and not others, with no pattern
    /// (monotone or not): which ones depends on `salt`.
    fn scattered(salt: u64, keep: &[usize], percent: u64) -> bool {
        let mut h = 0xcbf2_9ce4_8422_2325u64 ^ salt;
        for &k in keep {
            h = (h ^ (k as u64 + 1)).wrapping_mul(0x100_0000_01b3);
        }
        h = (h ^ (keep.len() as u64)).wrapping_mul(0x100_0000_01b3);
        (h >> 7) % 100 < percent
    }

    #[test]
    fn ddmin_by_rounds_tests_what_ddmin_tested_in_turn() {
        for n in 0..14 {
            for salt in 0..40u64 {
                for percent in [10, 40, 80] {
                    let (mut old, mut new) = (Vec::new(), Vec::new());
                    let a = ddmin_in_turn(n, |k| {
                        old.push(k.to_vec());
                        scattered(salt, k, percent)
                    });
                    let b = ddmin(n, |k| {
                        new.push(k.to_vec());
                        scattered(salt, k, percent)
                    });
                    assert_eq!((a, old), (b, new), "n {n}, salt {salt}, {percent}%");
                }
            }
            // Monotone: every superset of {1, n-2} holds.
            let holds = |k: &[usize]| n < 3 || (k.contains(&1) && k.contains(&(n - 2)));
            let (mut old, mut new) = (Vec::new(), Vec::new());
            let a = ddmin_in_turn(n, |k| {
                old.push(k.to_vec());
                holds(k)
            });
            let b = ddmin(n, |k| {
                new.push(k.to_vec());
                holds(k)
            });
            assert_eq!((a, old), (b, new), "n {n}");
        }
    }

    #[test]
    fn smallest_by_tries_what_the_search_tried_in_turn() {
        for len in 0..10u64 {
            let ladder: Vec<u64> = (0..len).map(|i| i * 10).collect();
            for salt in 0..60u64 {
                let (mut old, mut new) = (Vec::new(), Vec::new());
                let a = smallest_in_turn(&ladder, |v| {
                    old.push(v);
                    scattered(salt, &[v as usize], 50)
                });
                let b = smallest(&ladder, |v| {
                    new.push(v);
                    scattered(salt, &[v as usize], 50)
                });
                assert_eq!((a, old), (b, new), "ladder {ladder:?}, salt {salt}");
            }
        }
    }

    #[test]
    fn smallest_searches_by_halving() {
        assert_eq!(smallest(&[0, 1, 2, 5, 10], |v| v >= 2), Some(2));
        assert_eq!(smallest(&[0, 1, 2, 5, 10], |v| v >= 20), None);
        assert_eq!(smallest(&[0, 1, 2], |_| true), Some(0));
    }

    #[test]
    fn round_durations_lie_below_the_value() {
        assert_eq!(
            round_durations(0, 70_000),
            vec![0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 50_000, 60_000]
        );
        assert_eq!(round_durations(1000, 1001), vec![1000]);
    }
}
