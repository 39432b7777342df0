//! What a sweep keeps while it runs.

use super::report::{FailedSeed, Nondeterministic, ScenarioRow};
use super::Played;

/// A row per scenario and the seeds that failed, never a row per run, so
/// its size is the scenarios' and the failures', whatever the range.
pub struct Tally {
    rows: Vec<ScenarioRow>,
    /// With the scenario's index, to list them in the report's order at the end.
    failed: Vec<(usize, FailedSeed)>,
    nondeterministic: Vec<(usize, Nondeterministic)>,
}

impl Tally {
    /// Rows count the seeds as they are played (all of them, unless the
    /// sweep was interrupted); `_seeds` is how many each will have at most.
    pub fn new(scenarios: &[(String, String)], _seeds: u64) -> Tally {
        let rows = scenarios
            .iter()
            .map(|(name, path)| ScenarioRow {
                name: name.clone(),
                path: path.clone(),
                seeds: 0,
                failed: 0,
                real_ms: 0.0,
            })
            .collect();
        Tally { rows, failed: Vec::new(), nondeterministic: Vec::new() }
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

#[cfg(test)]
mod tests {
    use super::*;

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
