//! `handshake run --seeds A..B`: every scenario played on every seed of a
//! range, on as many threads as asked. A range may be as long as `u64`
//! allows, so nothing here is sized by it: runs are numbered and worked out
//! from their number when a thread takes one, results are added up as they
//! arrive, and only what the report lists (a row per scenario, the failing
//! seeds) is kept.

use super::progress::Progress;
use super::run::{
    jobs, options_that_change_the_run, play, reproduce, Determinism, FailedSeed, Nondeterministic, Played, RunArgs,
    ScenarioRow, SeedRange, Shard, SweepDoc,
};
use super::{EXIT_BAD_INPUT, EXIT_FAILED};
use crate::scenario::{load_str, Scenario};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The runs of a sweep, numbered from 0 in the order the report lists them:
/// by scenario, then seed. Run `k` is worked out from `k`, so the plan is the
/// same few numbers for ten seeds or for every `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The first seed this shard plays.
    first: u64,
    /// Between one of this shard's seeds and the next.
    step: u64,
    /// Seeds each scenario plays.
    per_scenario: u64,
    scenarios: usize,
    /// Plays of each run: two with `--check-determinism`, compared.
    times: u64,
}

impl Plan {
    /// The plan, or why no sweep could play it: the number of plays must
    /// fit a `u64`, which counts the report's `runs`.
    pub fn new((from, to): (u64, u64), shard: Option<Shard>, scenarios: usize, times: u64) -> Result<Plan, String> {
        let shard = shard.unwrap_or(Shard { index: 1, of: 1 });
        let per_scenario = shard.seeds(from, to);
        let plan = Plan { first: from + (shard.index - 1), step: shard.of, per_scenario, scenarios, times };
        match plan.plays_checked() {
            Some(_) => Ok(plan),
            None => Err(format!(
                "--seeds {from}..{to}: {per_scenario} seeds × {}{} is more runs than can be counted (at most {}): \
                 sweep fewer seeds, or shard the sweep",
                super::plural(scenarios as u64, "scenario"),
                if times > 1 { ", each played twice," } else { "" },
                u64::MAX
            )),
        }
    }

    fn plays_checked(&self) -> Option<u64> {
        self.per_scenario.checked_mul(self.scenarios as u64)?.checked_mul(self.times)
    }

    /// Runs in the sweep (each seed of each scenario once).
    pub fn runs(&self) -> u64 {
        self.per_scenario.saturating_mul(self.scenarios as u64)
    }

    /// Runs played, counting each play of a run compared with itself.
    pub fn plays(&self) -> u64 {
        self.plays_checked().unwrap_or(u64::MAX)
    }

    pub fn seeds_per_scenario(&self) -> u64 {
        self.per_scenario
    }

    /// Run `k`: which scenario (its index), on which seed.
    pub fn run(&self, k: u64) -> (usize, u64) {
        let (scenario, nth) = (k / self.per_scenario, k % self.per_scenario);
        (scenario as usize, self.first + nth * self.step)
    }
}

/// What a sweep keeps while it runs: a row per scenario and the seeds that
/// failed, never a row per run, so its size is the scenarios' and the
/// failures', whatever the range.
pub struct Tally {
    rows: Vec<ScenarioRow>,
    /// With the scenario's index, to list them in the report's order at the end.
    failed: Vec<(usize, FailedSeed)>,
    nondeterministic: Vec<(usize, Nondeterministic)>,
}

impl Tally {
    pub fn new(scenarios: &[(String, String)], seeds: u64) -> Tally {
        let rows = scenarios
            .iter()
            .map(|(name, path)| ScenarioRow { name: name.clone(), path: path.clone(), seeds, failed: 0, real_ms: 0.0 })
            .collect();
        Tally { rows, failed: Vec::new(), nondeterministic: Vec::new() }
    }

    /// One seed of scenario `s`, played once (or twice, compared, with
    /// `--check-determinism`); `replay` is the command that plays it again.
    pub fn add(&mut self, s: usize, seed: u64, runs: &[Played], replay: impl Fn() -> String) {
        let row = &mut self.rows[s];
        let first = &runs[0];
        row.real_ms += first.real_ms;
        if !first.passed {
            row.failed += 1;
            let failed = FailedSeed {
                scenario: row.name.clone(),
                path: row.path.clone(),
                seed,
                why: first.why.clone(),
                reproduce: replay(),
            };
            self.failed.push((s, failed));
        }
        if let [one, two] = runs {
            if one.hash != two.hash || one.passed != two.passed {
                let hex = |p: &Played| p.hash.map_or_else(|| "none".to_string(), |h| format!("{h:016x}"));
                let row = &self.rows[s];
                self.nondeterministic.push((
                    s,
                    Nondeterministic {
                        scenario: row.name.clone(),
                        path: row.path.clone(),
                        seed,
                        hashes: [hex(one), hex(two)],
                        reproduce: replay(),
                    },
                ));
            }
        }
    }

    /// The rows and the failures, in the report's order (threads finish
    /// runs in any order).
    pub fn finish(mut self) -> (Vec<ScenarioRow>, Vec<FailedSeed>, Vec<Nondeterministic>) {
        self.failed.sort_by_key(|(s, f)| (*s, f.seed));
        self.nondeterministic.sort_by_key(|(s, n)| (*s, n.seed));
        (self.rows, without_index(self.failed), without_index(self.nondeterministic))
    }
}

fn without_index<T>(v: Vec<(usize, T)>) -> Vec<T> {
    v.into_iter().map(|(_, x)| x).collect()
}

/// `sources` are the files' texts, as `(path shown, text)`, read once.
pub fn sweep(
    a: &RunArgs,
    scenarios: &[Scenario],
    sources: &[(String, String)],
    range: (u64, u64),
    shard: Option<Shard>,
) -> i32 {
    let times = if a.check_determinism { 2 } else { 1 };
    let plan = match Plan::new(range, shard, scenarios.len(), times) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}; nothing was run");
            return EXIT_BAD_INPUT;
        }
    };
    let (from, to) = range;
    let total = plan.runs();
    let ids: Vec<(String, String)> = scenarios.iter().map(|s| (s.name.clone(), s.path.clone())).collect();
    let mut tally = Tally::new(&ids, plan.seeds_per_scenario());
    let mut progress = Progress::new(plan.plays(), "run", a.format == super::Format::Text);
    let started = std::time::Instant::now();
    tracing::info!(runs = total, scenarios = scenarios.len(), from, to, shard = ?shard, jobs = jobs(a), "sweep starts");
    let played = play_all(a, scenarios, sources, plan, jobs(a), |k, runs| {
        let (s, seed) = plan.run(k);
        let failure = (!runs[0].passed).then(|| format!("FAIL  {} seed {seed}: {}", scenarios[s].name, runs[0].why));
        progress.tick(failure.as_deref());
        for _ in 1..runs.len() {
            progress.tick(None);
        }
        log_tenths(&progress, plan.plays());
        tally.add(s, seed, runs, || reproduce(a, &scenarios[s].path, seed));
    });
    if let Err(e) = played {
        eprintln!("error: {e}; the sweep stopped");
        return EXIT_FAILED;
    }
    let (rows, failed, nondeterministic) = tally.finish();
    let doc = SweepDoc {
        seeds: SeedRange { from, to },
        runs: total,
        failed,
        real_seconds: started.elapsed().as_secs_f64(),
        shard,
        scenarios: rows,
        options: options_that_change_the_run(a),
        determinism: a.check_determinism.then_some(Determinism { compared: total, nondeterministic }),
    };
    doc.print(a.format)
}

/// Plays every run of `plan`, each `times` times, on `jobs` threads; `done`
/// hears of each run `k` once all its plays have ended, in any order. The
/// plays of one run are handed out one after the other, so with two threads
/// or more they usually land on different threads, and a run waits for its
/// second play only while that play is in flight: the runs held back number
/// about the threads, never the range. Each thread loads its own scenarios
/// from the texts in `sources` (a scenario holds hooks that stay on one
/// thread; the files are not read again: a pipe cannot be) and
/// plays whole runs, each on its own runtime: a run is the same whichever
/// thread plays it.
fn play_all(
    a: &RunArgs,
    scenarios: &[Scenario],
    sources: &[(String, String)],
    plan: Plan,
    jobs: usize,
    mut done: impl FnMut(u64, &[Played]),
) -> Result<(), String> {
    let (plays, times) = (plan.plays(), plan.times);
    let jobs = u64::try_from(jobs).unwrap_or(u64::MAX).min(plays).max(1);
    if jobs == 1 {
        for k in 0..plan.runs() {
            let (s, seed) = plan.run(k);
            let runs: Vec<Played> = (0..times).map(|_| play(a, &scenarios[s], seed)).collect();
            done(k, &runs);
        }
        return Ok(());
    }
    let next = AtomicU64::new(0);
    // Takes the next play's number, or none when every play is taken (never
    // counting past the last: a sweep may have `u64::MAX` of them).
    let take = || next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| (i < plays).then_some(i + 1)).ok();
    let mut error = None;
    let ids: Vec<(&str, &str)> = scenarios.iter().map(|s| (s.name.as_str(), s.path.as_str())).collect();
    let (ids, take) = (&ids, &take);
    // First plays waiting for their second, by run.
    let mut waiting: BTreeMap<u64, Played> = BTreeMap::new();
    std::thread::scope(|scope| {
        // Bounded: threads wait for the report to catch up rather than
        // queue results without limit.
        let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Result<Played, String>)>(4 * jobs as usize);
        for _ in 0..jobs {
            let tx = tx.clone();
            scope.spawn(move || {
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
                        let _ = tx.send((0, Err(e)));
                        return;
                    }
                };
                while let Some(i) = take() {
                    let (s, seed) = plan.run(i / times);
                    if tx.send((i, Ok(play(a, &mine[s], seed)))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, played) in rx {
            match played {
                Ok(p) if times == 1 => done(i, &[p]),
                Ok(p) => {
                    let k = i / times;
                    match waiting.remove(&k) {
                        None => {
                            waiting.insert(k, p);
                        }
                        Some(other) if i % times == 0 => done(k, &[p, other]),
                        Some(other) => done(k, &[other, p]),
                    }
                }
                Err(e) => {
                    // Stop handing out work; the threads finish what they hold.
                    next.store(plays, Ordering::Relaxed);
                    error.get_or_insert(e);
                }
            }
        }
    });
    error.map_or(Ok(()), Err)
}

/// A sweep's progress in the log, every tenth of the way (and at the end).
fn log_tenths(p: &Progress, total: u64) {
    let (done, failed) = (p.done(), p.failed());
    let tenth = |n: u64| u128::from(n) * 10 / u128::from(total);
    if tenth(done) > tenth(done - 1) {
        tracing::info!(done, total, failed, "sweep progress");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_worked_out_from_their_number_in_report_order() {
        let plan = Plan::new((5, 12), None, 2, 1).unwrap();
        let runs: Vec<(usize, u64)> = (0..plan.runs()).map(|k| plan.run(k)).collect();
        let expected: Vec<(usize, u64)> = (0..2).flat_map(|s| (5..12).map(move |seed| (s, seed))).collect();
        assert_eq!(runs, expected);
        let shard = Shard { index: 2, of: 3 };
        let plan = Plan::new((5, 12), Some(shard), 2, 1).unwrap();
        let runs: Vec<(usize, u64)> = (0..plan.runs()).map(|k| plan.run(k)).collect();
        let mine: Vec<u64> = (5..12).filter(|&s| shard.has(5, s)).collect();
        let expected: Vec<(usize, u64)> = (0..2).flat_map(|s| mine.iter().map(move |&seed| (s, seed))).collect();
        assert_eq!(runs, expected);
    }

    #[test]
    fn the_longest_range_is_a_plan_of_a_few_numbers_and_too_many_runs_are_refused() {
        let plan = Plan::new((0, u64::MAX), None, 1, 1).unwrap();
        assert_eq!(plan.runs(), u64::MAX);
        assert_eq!(plan.run(u64::MAX - 1), (0, u64::MAX - 1));
        let err = Plan::new((0, u64::MAX), None, 2, 1).unwrap_err();
        assert!(err.contains("--seeds 0..18446744073709551615") && err.contains("shard"), "{err}");
        assert!(Plan::new((0, u64::MAX), None, 1, 2).is_err(), "each run played twice");
        assert!(Plan::new((0, u64::MAX), Some(Shard { index: 2, of: 2 }), 2, 1).is_ok());
    }

    fn passed() -> Played {
        Played { passed: true, why: String::new(), real_ms: 0.5, hash: None }
    }

    #[test]
    fn a_tally_keeps_rows_and_failures_never_a_row_per_run() {
        let ids = vec![("a".to_string(), "a.toml".to_string()), ("b".to_string(), "b.toml".to_string())];
        let mut tally = Tally::new(&ids, 1_000_000);
        let failed = Played { passed: false, why: "single-terminal — x".into(), real_ms: 1.0, hash: None };
        // Out of order, as threads finish them.
        for seed in (0..1_000_000u64).rev() {
            for (s, failing) in [(0, 3), (1, 7)] {
                let run = if seed == failing { failed.clone() } else { passed() };
                tally.add(s, seed, &[run], || format!("replay {seed}"));
            }
        }
        assert_eq!(tally.failed.len(), 2);
        assert!(tally.failed.capacity() < 16, "kept {} slots for 2 failures", tally.failed.capacity());
        let (rows, failed, nondeterministic) = tally.finish();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].failed, rows[1].seeds), (1, 1_000_000));
        assert!(nondeterministic.is_empty());
        let order: Vec<(&str, u64)> = failed.iter().map(|f| (f.scenario.as_str(), f.seed)).collect();
        assert_eq!(order, [("a", 3), ("b", 7)], "by scenario, then seed, whatever order they came in");
    }
}
