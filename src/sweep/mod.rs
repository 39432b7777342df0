//! A seed sweep: every scenario played on every seed of a range (or one
//! shard's), on as many threads as asked, each run compared with a second
//! play of itself when determinism is checked; and the shards of a sweep
//! merged back into its report. What `run --seeds` and `merge` do, as values:
//! the commands parse their arguments and print what this returns.
//!
//! A range may be as long as `u64` allows, so nothing here is sized by it:
//! runs are numbered and worked out from their number when a thread takes
//! one, results are added up as they arrive, and only what the report lists
//! (a row per scenario, the failing seeds) is kept.

pub mod merge;
pub mod plan;
pub mod report;
pub mod tally;

pub use merge::merge;
pub use plan::{Plan, Shard};
pub use report::{Determinism, FailedSeed, Nondeterministic, ScenarioRow, SeedRange, SweepDoc};
pub use tally::Tally;

use crate::protocol::Millis;
use crate::scenario::{load_str, run_scenario, RunOptions, Scenario};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a sweep plays and how.
pub struct Settings<'a> {
    pub scenarios: &'a [Scenario],
    /// The files' texts, as `(path shown, text)`, read once: each thread
    /// loads its own scenarios from them.
    pub sources: &'a [(String, String)],
    /// `from..to`, `to` excluded.
    pub seeds: (u64, u64),
    /// The shard to play; none for the whole sweep.
    pub shard: Option<Shard>,
    /// Virtual-time cap for a run (the file's, else the default, when none).
    pub cap: Option<Millis>,
    /// Real time one run may take before it is stopped.
    pub max_real: Duration,
    /// Play every run twice and compare the traces' hashes.
    pub check_determinism: bool,
    /// Threads that play runs.
    pub jobs: usize,
    /// The options that change what a run does, as the reproduce lines carry
    /// them: the report records them, and shards merge only if they agree.
    pub options: Vec<String>,
}

/// A sweep ready to play: its settings and the plan they make.
pub struct Sweep<'a> {
    settings: Settings<'a>,
    plan: Plan,
}

/// What one run left for the report.
#[derive(Clone, Debug)]
pub struct Played {
    pub passed: bool,
    /// The first failed check, with its message; empty if the run passed.
    pub why: String,
    pub real_ms: f64,
    /// The trace's hash, when determinism is checked.
    pub hash: Option<u64>,
    /// What ended the run (the report's `stopped_by`).
    pub stopped_by: &'static str,
}

impl Played {
    /// The guard that stopped this play at a moment of real time, if one did.
    pub fn stopped_by_guard(&self) -> Option<&'static str> {
        use crate::scenario::check::REAL_TIME_GUARD;
        (self.stopped_by == REAL_TIME_GUARD).then_some(REAL_TIME_GUARD)
    }
}

impl<'a> Sweep<'a> {
    /// The sweep, or why it cannot be played (nothing has run then).
    pub fn new(settings: Settings<'a>) -> Result<Sweep<'a>, String> {
        let times = if settings.check_determinism { 2 } else { 1 };
        let plan = Plan::new(settings.seeds, settings.shard, settings.scenarios.len(), times)?;
        Ok(Sweep { settings, plan })
    }

    /// Plays the sweep will make, counting both plays of a run compared with itself.
    pub fn plays(&self) -> u64 {
        self.plan.plays()
    }

    /// Plays every run and returns the report, or why the sweep stopped.
    /// `replay(path, seed)` is the command that plays one run again, for the
    /// report's reproduce lines; `seen` hears of each run (the scenario's
    /// index in the settings, the seed, and its plays) as it ends, in any
    /// order.
    pub fn play(
        &self,
        replay: impl Fn(&str, u64) -> String,
        mut seen: impl FnMut(usize, u64, &[Played]),
    ) -> Result<SweepDoc, String> {
        let Settings { scenarios, sources, seeds: (from, to), shard, check_determinism, .. } = self.settings;
        let plan = self.plan;
        let total = plan.runs();
        let rows = scenarios
            .iter()
            .zip(sources)
            .map(|(s, (_, text))| {
                ScenarioRow::unplayed(s.name.clone(), s.path.clone(), crate::fnv::contents_hash(text))
            })
            .collect();
        let mut tally = Tally::new(rows, plan.seeds_per_scenario());
        let started = std::time::Instant::now();
        let jobs = self.settings.jobs;
        tracing::info!(runs = total, scenarios = scenarios.len(), from, to, shard = ?shard, jobs, "sweep starts");
        let mut count = Count { plays: plan.plays(), done: 0, failed: 0 };
        let played = self.play_all(|k, runs| {
            let (s, seed) = plan.run(k);
            seen(s, seed, runs);
            count.add(runs);
            tally.add(s, seed, runs, || replay(&scenarios[s].path, seed));
        })?;
        let (rows, failed, nondeterministic) = tally.finish();
        Ok(SweepDoc {
            seeds: SeedRange { from, to },
            runs: played,
            failed,
            real_seconds: started.elapsed().as_secs_f64(),
            shard,
            scenarios: rows,
            options: self.settings.options.clone(),
            determinism: check_determinism.then_some(Determinism { compared: played, nondeterministic }),
            resume_from: (played < total).then(|| plan.resume_seed(played)),
        })
    }

    /// Plays every run of the plan, each `times` times, on `jobs` threads;
    /// `done` hears of each run `k` once all its plays have ended, in any
    /// order. The plays of one run are handed out one after the other, so
    /// with two threads or more they usually land on different threads, and
    /// a run waits for its second play only while that play is in flight: the
    /// runs held back number about the threads times a batch, never the range. Each thread
    /// loads its own scenarios from the texts in `sources` (a scenario holds
    /// hooks that stay on one thread; the files are not read again: a pipe
    /// cannot be) and plays whole runs, each on its own runtime: a run is the
    /// same whichever thread plays it.
    /// Returns how many runs were played: all of them, or, after Ctrl-C
    /// (no run is handed out once it is pressed), the runs `0..n` it let
    /// finish.
    fn play_all(&self, mut done: impl FnMut(u64, &[Played])) -> Result<u64, String> {
        let Settings { scenarios, sources, .. } = self.settings;
        let plan = self.plan;
        let (plays, times) = (plan.plays(), plan.times());
        // What a thread needs to play a run: a scenario stays on its thread.
        let how = How {
            cap: self.settings.cap,
            max_real: self.settings.max_real,
            check_determinism: self.settings.check_determinism,
        };
        let jobs = u64::try_from(self.settings.jobs).unwrap_or(u64::MAX).min(plays).max(1);
        if jobs == 1 {
            for k in 0..plan.runs() {
                if crate::interrupt::requested() {
                    return Ok(k);
                }
                let (s, seed) = plan.run(k);
                let runs: Vec<Played> = (0..times).map(|t| how.play(&scenarios[s], seed, t == 1)).collect();
                done(k, &runs);
            }
            return Ok(plan.runs());
        }
        let next = AtomicU64::new(0);
        // Takes the next play's number, or none when every play is taken (never
        // counting past the last: a sweep may have `u64::MAX` of them).
        // After Ctrl-C nothing more is handed out, and only whole runs were:
        // the plays of a run are taken one after the other, so the count
        // stops at a run's first play.
        let take = || {
            next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| {
                (i < plays && !(crate::interrupt::requested() && i % times == 0)).then_some(i + 1)
            })
            .ok()
        };
        let mut error = None;
        let ids: Vec<(&str, &str)> = scenarios.iter().map(|s| (s.name.as_str(), s.path.as_str())).collect();
        let (ids, take) = (&ids, &take);
        // First plays waiting for their second, by run.
        let mut waiting: BTreeMap<u64, Played> = BTreeMap::new();
        std::thread::scope(|scope| {
            // Bounded: threads wait for the report to catch up rather than
            // queue results without limit.
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<(u64, Played)>, String>>(4 * jobs as usize);
            for started in 0..jobs {
                let tx = tx.clone();
                // A system that refuses another thread leaves the sweep to
                // those it has; refusing the first is an error, not a panic.
                let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                    let mine: Result<Vec<Scenario>, String> = sources
                        .iter()
                        .zip(ids)
                        .map(|((path, text), &(name, shown))| match load_str(path, text) {
                            Ok(mine) if mine.name == name && mine.path == shown => Ok(mine),
                            _ => Err(format!("{path} did not load again from its own text")),
                        })
                        .collect();
                    let mine = match mine {
                        Ok(m) => m,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    // Results go to the report in batches: a run is a few
                    // microseconds, and a hand-over each woke the other
                    // thread (two futex calls a run made two threads slower
                    // than one). A slow run's batch goes at once.
                    let mut batch = Vec::with_capacity(BATCH);
                    let mut since = std::time::Instant::now();
                    while let Some(i) = take() {
                        let (s, seed) = plan.run(i / times);
                        batch.push((i, how.play(&mine[s], seed, i % times == 1)));
                        if batch.len() >= BATCH || since.elapsed() >= BATCH_WAIT {
                            if tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                                return;
                            }
                            since = std::time::Instant::now();
                        }
                    }
                    if !batch.is_empty() {
                        let _ = tx.send(Ok(batch));
                    }
                });
                if let Err(e) = spawned {
                    if started == 0 {
                        next.store(plays, Ordering::Relaxed);
                        error = Some(format!("could not start a thread to play runs on: {e}"));
                    }
                    break;
                }
            }
            drop(tx);
            for batch in rx {
                let batch = match batch {
                    Ok(b) => b,
                    Err(e) => {
                        // Stop handing out work; the threads finish what they hold.
                        next.store(plays, Ordering::Relaxed);
                        error.get_or_insert(e);
                        continue;
                    }
                };
                for (i, p) in batch {
                    if times == 1 {
                        done(i, &[p]);
                        continue;
                    }
                    let k = i / times;
                    match waiting.remove(&k) {
                        None => {
                            waiting.insert(k, p);
                        }
                        Some(other) if i % times == 0 => done(k, &[p, other]),
                        Some(other) => done(k, &[other, p]),
                    }
                }
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(next.load(Ordering::Relaxed) / times),
        }
    }
}

/// Results a thread hands the report at once, and the longest it keeps
/// them: a batch of short runs costs one hand-over, a slow run is reported
/// as it ends (the progress line and the live failures follow it).
const BATCH: usize = 64;
const BATCH_WAIT: Duration = Duration::from_millis(50);

/// How each run is played: the settings a thread takes with it.
#[derive(Clone, Copy)]
struct How {
    cap: Option<Millis>,
    max_real: Duration,
    check_determinism: bool,
}

impl How {
    /// One play of scenario `s` on `seed`, in the plain shell; the `second`
    /// of a run played twice (`--check-determinism`) in the actix shell, so
    /// that the check holds the two shells to one trace too.
    fn play(self, s: &Scenario, seed: u64, second: bool) -> Played {
        let options = RunOptions {
            cap: self.cap,
            max_real: Some(self.max_real),
            live: None,
            keep_outcome: self.check_determinism,
            inbox_dir: None,
            schedule: None,
            frames: false,
            ends: false,
            // Sweeps play in the plain shell: the same trace, at less cost.
            plain: !second,
        };
        let mut r = run_scenario(s, seed, options);
        let why = r.failures.first().map(|f| format!("{} — {}", f.check, f.message)).unwrap_or_default();
        let hash = r.outcome.take().filter(|_| self.check_determinism).map(|o| trace_hash(&o));
        Played { passed: r.passed, why, real_ms: r.real_ms, hash, stopped_by: r.stopped_by }
    }
}

/// Plays done and runs failed, for the log's progress lines.
struct Count {
    plays: u64,
    done: u64,
    failed: u64,
}

impl Count {
    /// One run's plays, logged whenever they end a tenth of the way (and at the end).
    fn add(&mut self, runs: &[Played]) {
        self.done += runs.len() as u64;
        self.failed += u64::from(!runs[0].passed);
        let (done, total, failed) = (self.done, self.plays, self.failed);
        let tenth = |n: u64| u128::from(n) * 10 / u128::from(total);
        if tenth(done) > tenth(done - 1) {
            tracing::info!(done, total, failed, "sweep progress");
        }
    }
}

/// FNV-1a (64 bits) of the event log as `--trace` writes it: the same on
/// every machine and every build, unlike a hasher with random keys.
pub fn trace_hash(o: &crate::world::Outcome) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::fnv::Fnv1a::default();
    for e in &o.events {
        let _ = serde_json::to_writer(&mut h, &e.to_json(&o.names));
        h.write_u8(b'\n');
    }
    h.finish()
}
