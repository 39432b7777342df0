//! `handshake shrink`: a run that breaks an invariant, cut down to a small
//! scenario file that still breaks it.
//!
//! The work is done on the scenario format's typed document (the reader's
//! [`FileDoc`]), so what the shrinker does not touch keeps its value (not its
//! comments or layout: the file is written anew by the format's
//! [`document`] writer, as every writer of scenario files does). The target is
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
use crate::format::file::{read, toml_string, ExpectDoc, FaultDoc, FileDoc, TeammateDoc, WorkDoc, S};
use crate::format::write::{defences_switched, document, unplaced, work_item};
use crate::protocol::Defences;
use crate::protocol::Millis;
use crate::scenario::{load_str, run_scenario, Expect, Invariant, RunOptions, Scenario};
use std::collections::{BTreeSet, HashMap};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The scenario file being shrunk, as the format reads it.
type Doc = FileDoc;

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
    fn of(doc: &Doc) -> Sizes {
        Sizes {
            faults: doc.faults.len(),
            steps: doc.steps.len(),
            teammates: doc.teammates.len(),
            agents: doc
                .teammates
                .iter()
                .map(|t| t.get_ref().count.as_ref().map_or(1, |n| u64::from(*n.get_ref())))
                .sum(),
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
    load_str(path, text).ok().map(|s| run_scenario(&s, seed, RunOptions::plain()).violations)
}

impl Probe<'_> {
    /// Whether this document, run with the seed, breaks the target. A
    /// document that does not load does not (and costs no run); past the
    /// cap nothing does.
    fn test(&mut self, doc: &Doc) -> bool {
        self.breaks(document(doc))
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
    fn first(&mut self, n: usize, build: impl Fn(usize) -> Doc) -> Option<usize> {
        let mut texts: Vec<Option<String>> = vec![None; n];
        let mut text = |i: usize| texts[i].get_or_insert_with(|| document(&build(i))).clone();
        for i in 0..n {
            // Once Ctrl-C is seen, the candidates left are neither written
            // out nor played ahead: the shrink ends with what it has. (The
            // stop is not asked here but where one thread asks it, so a
            // pool stops where one thread does.)
            if self.interrupted {
                return None;
            }
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
    fn smallest(&mut self, ladder: &[u64], with: impl Fn(u64) -> Doc) -> Option<u64> {
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

    // `target` has loaded the file: it reads without a problem.
    let mut doc = match read(src) {
        Ok((doc, problems)) if problems.is_empty() => doc,
        Ok((_, problems)) => return Err(ShrinkError::BadInput(format!("{path}: {}", problems[0].message))),
        Err(problem) => return Err(ShrinkError::BadInput(format!("{path}: {}", problem.message))),
    };
    let before = Sizes::of(&doc);
    doc.expects.clear();
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
        doc = ddmin_list(&mut probe, doc, |d| &mut d.faults, |d, _| d);
        doc = ddmin_list(&mut probe, doc, |d| &mut d.steps, |d, _| d);
        doc = ddmin_list(&mut probe, doc, |d| &mut d.teammates, drop_dependents);
        doc = shrink_counts(&mut probe, doc, &mut changes);
        doc = simplify(&mut probe, doc, &mut changes);
        if probe.capped || probe.interrupted || text_of(&doc) == round {
            break;
        }
    }
    let minimal = !probe.capped && !probe.interrupted;
    forget_what_went(&mut changes, &doc);
    let after = Sizes::of(&doc);

    // The file as written: the run of `doc` broke the target; now say so.
    let original_name = doc.name.as_ref().map_or("scenario", |n| n.get_ref().as_str()).to_string();
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
    doc.seed = Some(seed);
    let name = opts.name.clone().unwrap_or_else(|| format!("{original_name}-shrunk"));
    doc.name = Some(unplaced(name));
    let file = path.rsplit('/').next().unwrap_or(path);
    let about =
        about_the_shrunk(target, &detail, file, seed, &summary, probe.runs + 1, (minimal, probe.interrupted), a_bug);
    doc.about = Some(unplaced(about));
    let expect: &[Invariant] = &expectable;
    // The written file, run as `handshake run` runs it (its own seed).
    let text = document(&finish(doc, expect));
    let s = load_str(path, &text).map_err(|e| {
        ShrinkError::DoesNotReproduce(format!(
            "the shrunk file does not load ({}): nothing written",
            e.first().map(|e| e.to_string()).unwrap_or_default()
        ))
    })?;
    let report = run_scenario(&s, s.default_seed(), RunOptions::plain());
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
    let report = run_scenario(&scenario, seed, RunOptions::plain());
    let expected: BTreeSet<Invariant> =
        scenario.expects.iter().filter_map(|e| if let Expect::Violation(i) = e { Some(*i) } else { None }).collect();
    // Each invariant once, in the order first broken ("it breaks
    // work-in-assignment, work-in-assignment" said one invariant twice).
    let mut broken: Vec<Invariant> = Vec::new();
    for i in report.violations.iter().filter_map(|v| invariant_of(v)) {
        if !broken.contains(&i) {
            broken.push(i);
        }
    }
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

/// Words every shrunk file's `about` holds, near its start: what tells it
/// from a file of the user's own.
pub const SHRUNK_MARK: &str = "Shrunk by `handshake shrink`";

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
        "Breaks {target}: {detail}. {SHRUNK_MARK} from {file} seed {seed}: {} ({} re-runs{}).{}",
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

fn text_of(doc: &Doc) -> String {
    document(doc)
}

/// The document as written: `name`, `about` and `seed` as given, and one
/// `[[expect]] violation` per invariant (the writer puts them in the order
/// people read them).
fn finish(mut doc: Doc, expect: &[Invariant]) -> Doc {
    doc.expects = expect
        .iter()
        .map(|i| unplaced(ExpectDoc { violation: Some(unplaced(i.name().to_string())), ..ExpectDoc::default() }))
        .collect();
    doc
}

// ---- the document's lists ----

/// One of the document's lists of entries, to be cut by delta debugging.
type List<T> = fn(&mut Doc) -> &mut Vec<S<T>>;

/// The agent names a `[[teammate]]` entry makes.
fn agent_names(t: &TeammateDoc) -> Vec<String> {
    let name = t.name.get_ref();
    match &t.count {
        Some(n) => (1..=*n.get_ref()).map(|i| format!("{name}-{i}")).collect(),
        None => vec![name.clone()],
    }
}

/// Delta-debugs one list of the document: the kept entries are a
/// 1-minimal subset (unless the cap stops it). `fix` repairs a candidate
/// whose entries were removed (given them).
fn ddmin_list<T: Clone>(probe: &mut Probe, mut doc: Doc, list: List<T>, fix: impl Fn(Doc, &[S<T>]) -> Doc) -> Doc {
    let all = list(&mut doc).clone();
    if all.is_empty() {
        return doc;
    }
    let build = |keep: &[usize]| -> Doc {
        let mut d = doc.clone();
        let removed: Vec<S<T>> =
            all.iter().enumerate().filter(|(i, _)| !keep.contains(i)).map(|(_, v)| v.clone()).collect();
        *list(&mut d) = keep.iter().map(|&i| all[i].clone()).collect();
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

/// Removes what names a removed teammate's agents.
fn drop_dependents(mut doc: Doc, removed: &[S<TeammateDoc>]) -> Doc {
    let gone: BTreeSet<String> = removed.iter().flat_map(|t| agent_names(t.get_ref())).collect();
    drop_agents(&mut doc, &gone);
    doc
}

/// Removes the steps and faults that name an agent gone, and the faults
/// that quote a request a removed step made (by its label, or an automatic
/// label under a gone agent's name).
fn drop_agents(doc: &mut Doc, gone: &BTreeSet<String>) {
    if gone.is_empty() {
        return;
    }
    let names = |v: &Option<S<String>>| v.as_ref().is_some_and(|n| gone.contains(n.get_ref()));
    let mut labels_gone: BTreeSet<String> = BTreeSet::new();
    doc.steps.retain(|s| {
        let s = s.get_ref();
        let hit = names(&s.from) || names(&s.to);
        if hit {
            labels_gone.extend(s.label.as_ref().map(|l| l.get_ref().clone()));
        }
        !hit
    });
    let quotes = |label: &str| -> bool {
        let label = label.trim_start_matches('@');
        labels_gone.contains(label) || label.split('/').next().is_some_and(|owner| gone.contains(owner))
    };
    doc.faults.retain(|f| {
        let f = f.get_ref();
        let between = f.between.as_ref().is_some_and(|b| b.get_ref().iter().any(|n| gone.contains(n)));
        let named = names(&f.agent) || names(&f.from) || names(&f.to) || between;
        let forged = f.message.as_ref().and_then(|m| m.get_ref().get("request_id")).and_then(toml::Value::as_str);
        let quoted = f.request.as_ref().is_some_and(|r| quotes(r.get_ref())) || forged.is_some_and(quotes);
        !named && !quoted
    });
}

fn shrink_counts(probe: &mut Probe, mut doc: Doc, changes: &mut Vec<String>) -> Doc {
    for i in 0..doc.teammates.len() {
        let Some(n) = doc.teammates[i].get_ref().count.as_ref().map(|c| u64::from(*c.get_ref())) else { continue };
        let name = doc.teammates[i].get_ref().name.get_ref().clone();
        let with = |k: u64| -> Doc {
            let mut d = doc.clone();
            d.teammates[i].get_mut().count = Some(unplaced(k as u32));
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
            // One of a group is a teammate of its own, under the name it had.
            let mut d = doc.clone();
            let t = d.teammates[i].get_mut();
            t.count = None;
            t.name = unplaced(format!("{name}-1"));
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

fn duration_of(v: Option<&S<String>>) -> Option<u64> {
    v.and_then(|s| parse_duration(s.get_ref()).ok()).map(|m| m.0)
}

fn dur(ms: u64) -> S<String> {
    unplaced(human(Millis(ms)))
}

/// A duration of the document (`read` it, `write` a new one) made as small
/// as the ladder of round durations from `lo` allows, if the violation stays.
struct Shorter<'a> {
    what: &'a str,
    key: &'a str,
    lo: u64,
    read: &'a dyn Fn(&Doc) -> Option<u64>,
    write: &'a dyn Fn(&mut Doc, u64),
}

impl Shorter<'_> {
    fn apply(&self, probe: &mut Probe, doc: &mut Doc, changes: &mut Vec<String>) {
        let Some(cur) = (self.read)(doc) else { return };
        if cur <= self.lo {
            return;
        }
        let ladder = round_durations(self.lo, cur);
        let with = |v: u64| {
            let mut d = doc.clone();
            (self.write)(&mut d, v);
            d
        };
        if let Some(v) = probe.smallest(&ladder, with) {
            *doc = with(v);
            let (key, what) = (self.key, self.what);
            changes.push(format!("{what}: {key} {} → {}", human(Millis(cur)), human(Millis(v))));
        }
    }
}

/// Keeps `edit` of the document if the violation stays; says `change` then.
fn keep_if(
    probe: &mut Probe,
    doc: &mut Doc,
    edit: impl FnOnce(&mut Doc),
    change: Option<String>,
    changes: &mut Vec<String>,
) {
    let mut d = doc.clone();
    edit(&mut d);
    if probe.test(&d) {
        *doc = d;
        changes.extend(change);
    }
}

/// Drops the changes to a fault or a step that a later round removed: the
/// summary says what the file shrunk became, and what is gone is counted
/// in its sizes.
fn forget_what_went(changes: &mut Vec<String>, doc: &Doc) {
    let faults: BTreeSet<usize> = doc.faults.iter().map(|f| f.get_ref().n).collect();
    let steps: BTreeSet<usize> = doc.steps.iter().map(|s| s.get_ref().n).collect();
    let still_there = |change: &str, prefix: &str, kept: &BTreeSet<usize>| {
        let Some(rest) = change.strip_prefix(prefix) else { return true };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().map_or(true, |n: usize| kept.contains(&n))
    };
    changes.retain(|c| still_there(c, "fault #", &faults) && still_there(c, "step #", &steps));
}

fn simplify(probe: &mut Probe, mut doc: Doc, changes: &mut Vec<String>) -> Doc {
    doc = defences_back_on(probe, doc, changes);
    doc = simpler_latency(probe, doc, changes);
    for i in 0..doc.faults.len() {
        doc = simpler_fault(probe, doc, i, changes);
    }
    let mut prev = 0;
    for i in 0..doc.steps.len() {
        // Named by its place in the file shrunk: a later round may remove it.
        let what = format!("step #{}", doc.steps[i].get_ref().n);
        let read = |d: &Doc| duration_of(Some(&d.steps[i].get_ref().at));
        let write = |d: &mut Doc, v: u64| d.steps[i].get_mut().at = dur(v);
        Shorter { what: &what, key: "at", lo: prev, read: &read, write: &write }.apply(probe, &mut doc, changes);
        prev = read(&doc).unwrap_or(prev);
    }
    for i in 0..doc.teammates.len() {
        doc = shorter_work(probe, doc, i, changes);
    }
    doc
}

/// Each defence the file switched off, switched back on if the violation stays.
fn defences_back_on(probe: &mut Probe, mut doc: Doc, changes: &mut Vec<String>) -> Doc {
    let Some(defences) = doc.policy.defences else { return doc };
    for (key, _) in defences_switched(&defences).into_iter().filter(|(_, on)| !on) {
        let Some(now) = doc.policy.defences else { break };
        let Some(on) = now.with_switch(&key, true) else { continue };
        let on = (on != Defences::default()).then_some(on);
        keep_if(probe, &mut doc, |d| d.policy.defences = on, Some(format!("defence {key} back on")), changes);
    }
    doc
}

fn simpler_latency(probe: &mut Probe, mut doc: Doc, changes: &mut Vec<String>) -> Doc {
    let Some(lat) = doc.policy.latency.as_ref().map(|l| l.get_ref().clone()) else { return doc };
    if lat == "1ms" {
        return doc;
    }
    let with = |v: Option<u64>| {
        let mut d = doc.clone();
        d.policy.latency = v.map(dur);
        d
    };
    let d = with(None);
    if probe.test(&d) {
        changes.push(format!("latency {lat} → 1ms (the default)"));
        return d;
    }
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
    doc
}

fn simpler_fault(probe: &mut Probe, mut doc: Doc, i: usize, changes: &mut Vec<String>) -> Doc {
    let f = doc.faults[i].get_ref().clone();
    let named = f.kind.get_ref().as_str();
    // Named by its place in the file shrunk: a later round may remove it.
    let what = format!("fault #{} ({named})", f.n);
    let kind = crate::world::FaultKind::named(named);
    let stall = kind == Some(crate::world::FaultKind::Stall);
    if let Some(p) = &f.probability {
        let change = format!("{what}: probability = {:?} removed", p.get_ref());
        keep_if(probe, &mut doc, |d| fault_at(d, i).probability = None, Some(change), changes);
    }
    if let Some(n) = f.count.as_ref().map(|c| u64::from(*c.get_ref())).filter(|&n| n > 1) {
        let with = |k: u64| {
            let mut d = doc.clone();
            fault_at(&mut d, i).count = Some(unplaced(k as u32));
            d
        };
        let ladder: Vec<u64> = [1u64, 2, 3, 5, 10, 20, 50, 100, 1000].into_iter().filter(|&k| k < n).collect();
        if let Some(k) = probe.smallest(&ladder, with) {
            doc = with(k);
            changes.push(format!("{what}: count {n} → {k}"));
        }
    }
    if let Some(delay) = f.delay.as_ref().map(|d| d.get_ref().clone()).filter(|d| d.contains("..")) {
        let (lo, hi) = delay.split_once("..").unwrap_or_default();
        for fixed in [lo, hi] {
            let mut d = doc.clone();
            fault_at(&mut d, i).delay = Some(unplaced(fixed.to_string()));
            if probe.test(&d) {
                doc = d;
                changes.push(format!("{what}: delay {delay} → {fixed}"));
                break;
            }
        }
    }
    let at = |d: &Doc| duration_of(d.faults[i].get_ref().at.as_ref());
    let until_after_at = |probe: &mut Probe, doc: &mut Doc, changes: &mut Vec<String>| {
        let read = |d: &Doc| duration_of(d.faults[i].get_ref().until.as_ref());
        let write = |d: &mut Doc, v: u64| fault_at(d, i).until = Some(dur(v));
        let lo = at(doc).unwrap_or(0) + 1;
        Shorter { what: &what, key: "until", lo, read: &read, write: &write }.apply(probe, doc, changes);
    };
    if !stall {
        if let Some(until) = &f.until {
            let change = format!("{what}: until = {} removed", toml_string(until.get_ref()));
            keep_if(probe, &mut doc, |d| fault_at(d, i).until = None, Some(change), changes);
        }
    } else {
        until_after_at(probe, &mut doc, changes);
    }
    let write_at = |d: &mut Doc, v: u64| fault_at(d, i).at = Some(dur(v));
    Shorter { what: &what, key: "at", lo: 0, read: &at, write: &write_at }.apply(probe, &mut doc, changes);
    let optional_at = kind.is_some_and(crate::world::FaultKind::at_is_optional);
    if optional_at && at(&doc) == Some(0) {
        // `at = "0ms"` is the default: say nothing.
        keep_if(probe, &mut doc, |d| fault_at(d, i).at = None, None, changes);
    }
    if stall {
        // An earlier start leaves the end where it was: shorten again.
        until_after_at(probe, &mut doc, changes);
    }
    let read = |d: &Doc| duration_of(d.faults[i].get_ref().delay.as_ref());
    let write = |d: &mut Doc, v: u64| fault_at(d, i).delay = Some(dur(v));
    Shorter { what: &what, key: "delay", lo: 1, read: &read, write: &write }.apply(probe, &mut doc, changes);
    let read = |d: &Doc| duration_of(d.faults[i].get_ref().restart.as_ref());
    let write = |d: &mut Doc, v: u64| fault_at(d, i).restart = Some(dur(v));
    Shorter { what: &what, key: "restart", lo: 1, read: &read, write: &write }.apply(probe, &mut doc, changes);
    doc
}

/// Fault #`i` of the document, to edit.
fn fault_at(d: &mut Doc, i: usize) -> &mut FaultDoc {
    d.faults[i].get_mut()
}

/// Teammate #`i`'s work items, to edit.
fn work_of(d: &mut Doc, i: usize) -> &mut Vec<S<WorkDoc>> {
    &mut d.teammates[i].get_mut().work
}

/// Teammate #`i`'s work shorter: fewer items, fewer steps, shorter steps.
fn shorter_work(probe: &mut Probe, mut doc: Doc, i: usize, changes: &mut Vec<String>) -> Doc {
    let name = doc.teammates[i].get_ref().name.get_ref().clone();
    let mut j = work_of(&mut doc, i).len();
    while j > 0 {
        j -= 1;
        let item = work_item(work_of(&mut doc, i)[j].get_ref());
        let change = format!("teammate {name}: work item {} removed ({item})", j + 1);
        keep_if(probe, &mut doc, |d| drop(work_of(d, i).remove(j)), Some(change), changes);
    }
    for j in 0..work_of(&mut doc, i).len() {
        let steps = work_of(&mut doc, i)[j].get_ref().steps.as_ref().map(|n| u64::from(*n.get_ref()));
        if let Some(n) = steps.filter(|&n| n > 1) {
            let with = |k: u64| {
                let mut d = doc.clone();
                work_of(&mut d, i)[j].get_mut().steps = Some(unplaced(k as u32));
                d
            };
            let ladder: Vec<u64> = [1u64, 2, 3, 5, 10, 20, 50, 100, 1000].into_iter().filter(|&k| k < n).collect();
            if let Some(k) = probe.smallest(&ladder, with) {
                doc = with(k);
                changes.push(format!("teammate {name}: work item {} steps {n} → {k}", j + 1));
            }
        }
        let what = format!("teammate {name}: work item {}", j + 1);
        let read = |d: &Doc| duration_of(d.teammates[i].get_ref().work[j].get_ref().step_time.as_ref());
        let write = |d: &mut Doc, v: u64| work_of(d, i)[j].get_mut().step_time = Some(dur(v));
        Shorter { what: &what, key: "step_time", lo: 1, read: &read, write: &write }.apply(probe, &mut doc, changes);
    }
    doc
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
