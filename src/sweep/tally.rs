//! What a sweep keeps while it runs.

use super::report::{FailedSeed, Nondeterministic, ScenarioRow, LISTED_PER_SCENARIO};
use super::Played;
use std::collections::BTreeMap;

/// A row per scenario and, of each, its first failing seeds, never a row
/// per run: its size is the scenarios', whatever the range and however
/// many of its runs fail.
pub struct Tally {
    rows: Vec<ScenarioRow>,
    /// Each scenario's lowest failing seeds, at most
    /// [`LISTED_PER_SCENARIO`], by seed: the same seeds whatever order the
    /// threads finish them in.
    failed: Vec<BTreeMap<u64, FailedSeed>>,
    nondeterministic: Vec<(usize, Nondeterministic)>,
}

impl Tally {
    /// Rows count the seeds as they are played (all of them, unless the
    /// sweep was interrupted), from `rows` unplayed; `_seeds` is how many
    /// each will have at most.
    pub fn new(rows: Vec<ScenarioRow>, _seeds: u64) -> Tally {
        let failed = rows.iter().map(|_| BTreeMap::new()).collect();
        Tally { rows, failed, nondeterministic: Vec::new() }
    }

    /// One seed of scenario `s`, played once (or twice, compared, with
    /// `--check-determinism`); `replay` is the command that plays it again.
    pub fn add(&mut self, s: usize, seed: u64, runs: &[Played], replay: impl Fn() -> String) {
        let row = &mut self.rows[s];
        let first = &runs[0];
        row.seeds += 1;
        row.real_ms += first.real_ms;
        if !first.passed {
            row.failed += 1;
            let listed = &mut self.failed[s];
            let full = listed.len() as u64 >= LISTED_PER_SCENARIO;
            if !full || listed.last_key_value().is_some_and(|(&top, _)| seed < top) {
                let failed = FailedSeed {
                    scenario: row.name.clone(),
                    path: row.path.clone(),
                    seed,
                    why: first.why.clone(),
                    reproduce: replay(),
                };
                listed.insert(seed, failed);
                if full {
                    listed.pop_last();
                }
            }
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
                        stopped_by: [one, two].iter().find_map(|p| p.stopped_by_guard().map(str::to_string)),
                    },
                ));
            }
        }
    }

    /// The rows and the failures, in the report's order (threads finish
    /// runs in any order).
    pub fn finish(mut self) -> (Vec<ScenarioRow>, Vec<FailedSeed>, Vec<Nondeterministic>) {
        let failed = self.failed.into_iter().flat_map(BTreeMap::into_values).collect();
        self.nondeterministic.sort_by_key(|(s, n)| (*s, n.seed));
        (self.rows, failed, without_index(self.nondeterministic))
    }
}

fn without_index<T>(v: Vec<(usize, T)>) -> Vec<T> {
    v.into_iter().map(|(_, x)| x).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::check::REAL_TIME_GUARD;

    fn passed() -> Played {
        Played { passed: true, why: String::new(), real_ms: 0.5, hash: None, stopped_by: "settled" }
    }

    #[test]
    fn a_pair_the_real_time_guard_parted_is_listed_with_the_guard() {
        let rows = ["a"].map(|n| ScenarioRow::unplayed(n.into(), format!("{n}.toml"), String::new()));
        let mut tally = Tally::new(rows.into(), 3);
        let play = |hash, why: &str| Played {
            passed: why.is_empty(),
            why: why.into(),
            real_ms: 1.0,
            hash: Some(hash),
            stopped_by: if why.starts_with(REAL_TIME_GUARD) { REAL_TIME_GUARD } else { "settled" },
        };
        let stopped = "real-time guard — the run used more than 1ms of real time and was stopped";
        tally.add(0, 1, &[play(1, ""), play(2, stopped)], || "again 1".into());
        tally.add(0, 2, &[play(3, ""), play(4, "")], || "again 2".into());
        tally.add(0, 3, &[play(5, stopped), play(5, stopped)], || "again 3".into());
        let (_, _, nondeterministic) = tally.finish();
        let listed: Vec<(u64, Option<&str>)> =
            nondeterministic.iter().map(|n| (n.seed, n.stopped_by.as_deref())).collect();
        assert_eq!(listed, [(1, Some("real-time guard")), (2, None)]);
    }

    #[test]
    fn a_tally_keeps_rows_and_failures_never_a_row_per_run() {
        let rows = ["a", "b"].map(|n| ScenarioRow::unplayed(n.into(), format!("{n}.toml"), String::new()));
        let mut tally = Tally::new(rows.into(), 1_000_000);
        let failed = Played {
            passed: false,
            why: "single-terminal — x".into(),
            real_ms: 1.0,
            hash: None,
            stopped_by: "settled",
        };
        // Out of order, as threads finish them.
        for seed in (0..1_000_000u64).rev() {
            for (s, failing) in [(0, 3), (1, 7)] {
                let run = if seed == failing { failed.clone() } else { passed() };
                tally.add(s, seed, &[run], || format!("replay {seed}"));
            }
        }
        assert_eq!(tally.failed.iter().map(BTreeMap::len).sum::<usize>(), 2);
        let (rows, failed, nondeterministic) = tally.finish();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].failed, rows[1].seeds), (1, 1_000_000));
        assert!(nondeterministic.is_empty());
        let order: Vec<(&str, u64)> = failed.iter().map(|f| (f.scenario.as_str(), f.seed)).collect();
        assert_eq!(order, [("a", 3), ("b", 7)], "by scenario, then seed, whatever order they came in");
    }

    #[test]
    fn a_sweep_that_fails_every_run_lists_each_scenarios_lowest_failing_seeds_and_counts_the_rest() {
        let rows = vec![ScenarioRow::unplayed("a".into(), "a.toml".into(), String::new())];
        let mut tally = Tally::new(rows, 1_000_000);
        let failed = Played { passed: false, why: "x".into(), real_ms: 1.0, hash: None, stopped_by: "settled" };
        // Out of order, as threads finish them: the listed seeds are the same.
        for k in 0..1_000_000u64 {
            let seed = (k * 7_919) % 1_000_000;
            tally.add(0, seed, std::slice::from_ref(&failed), || format!("replay {seed}"));
        }
        assert!(tally.failed[0].len() as u64 <= LISTED_PER_SCENARIO);
        let (rows, failed, _) = tally.finish();
        assert_eq!(rows[0].failed, 1_000_000, "every failure counted");
        let seeds: Vec<u64> = failed.iter().map(|f| f.seed).collect();
        assert_eq!(seeds, (0..LISTED_PER_SCENARIO).collect::<Vec<u64>>(), "the lowest, in order");
    }
}
