//! Which runs a sweep plays: its shard of the seeds, and the runs numbered so
//! that each is worked out from its number.

use crate::words::plural;

/// One shard of a sweep: `index` of `of`, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: u64,
    pub of: u64,
}

impl Shard {
    /// The whole sweep, as one shard of one.
    pub const WHOLE: Shard = Shard { index: 1, of: 1 };

    /// Whether `seed` of the sweep starting at `from` is this shard's.
    pub fn has(self, from: u64, seed: u64) -> bool {
        (seed - from) % self.of == self.index - 1
    }

    /// How many seeds of `from..to` are this shard's.
    pub fn seeds(self, from: u64, to: u64) -> u64 {
        let (len, first) = (to - from, self.index - 1);
        if len > first {
            (len - first - 1) / self.of + 1
        } else {
            0
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

/// Seeds a block holds: each scenario plays the block's seeds in turn before
/// the next scenario does, so one file's runs follow one another and find
/// what they read (its spec, its agents' code and tables) still in the
/// processor's caches, instead of every file of the sweep between two runs
/// of one. A resume replays at most a block (see [`Plan::resume_seed`]).
pub const BLOCK_SEEDS: u64 = 32;

/// The runs of a sweep, numbered from 0 block by block: within a block of
/// [`BLOCK_SEEDS`] seeds, every seed of the first scenario, then every seed
/// of the next. The runs played when a sweep is stopped are whole blocks
/// but the last, and it resumes from a seed (`--seeds N..`). Run `k` is
/// worked out from `k`, so the plan is the same few numbers for ten seeds
/// or for every `u64`.
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
        let shard = shard.unwrap_or(Shard::WHOLE);
        let per_scenario = shard.seeds(from, to);
        let plan = Plan { first: from + (shard.index - 1), step: shard.of, per_scenario, scenarios, times };
        match plan.plays_checked() {
            Some(_) => Ok(plan),
            None => Err(format!(
                "--seeds {from}..{to}: {per_scenario} seeds × {}{} is more runs than can be counted (at most {}): \
                 sweep fewer seeds, or shard the sweep",
                plural(scenarios as u64, "scenario"),
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

    /// Plays of each run.
    pub fn times(&self) -> u64 {
        self.times
    }

    pub fn seeds_per_scenario(&self) -> u64 {
        self.per_scenario
    }

    /// Run `k`: which scenario (its index), on which seed.
    pub fn run(&self, k: u64) -> (usize, u64) {
        let (block, within, len) = self.block_of(k);
        let (scenario, nth) = (within / len, within % len);
        (scenario as usize, self.first + (block * BLOCK_SEEDS + nth) * self.step)
    }

    /// Run `k`'s block, its place in the block, and the seeds the block
    /// holds (fewer than [`BLOCK_SEEDS`] in the last block only).
    fn block_of(&self, k: u64) -> (u64, u64, u64) {
        let n = self.scenarios.max(1) as u64;
        let whole = n * BLOCK_SEEDS;
        let block = k / whole;
        let len = self.per_scenario.saturating_sub(block * BLOCK_SEEDS).clamp(1, BLOCK_SEEDS);
        (block, k % whole, len)
    }

    /// The seed to resume from when runs `0..done` have been played: the
    /// first seed not every scenario has played. In a block, the last
    /// scenario's runs each finish a seed.
    pub fn resume_seed(&self, done: u64) -> u64 {
        if done >= self.runs() {
            return self.first.saturating_add(self.per_scenario.saturating_mul(self.step));
        }
        let (block, within, len) = self.block_of(done);
        let before_last = (self.scenarios.max(1) as u64 - 1) * len;
        self.first + (block * BLOCK_SEEDS + within.saturating_sub(before_last)) * self.step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_seeds_each_into_exactly_one() {
        for (from, to) in [(1, 2), (1, 11), (5, 8), (0, 100)] {
            for of in 1..=7 {
                let shards: Vec<Shard> = (1..=of).map(|index| Shard { index, of }).collect();
                for seed in from..to {
                    assert_eq!(
                        shards.iter().filter(|s| s.has(from, seed)).count(),
                        1,
                        "{seed} of {from}..{to} in /{of}"
                    );
                }
                for s in &shards {
                    assert_eq!(s.seeds(from, to), (from..to).filter(|&x| s.has(from, x)).count() as u64, "{s}");
                }
            }
        }
    }

    #[test]
    fn runs_are_worked_out_from_their_number_block_by_block() {
        let plan = Plan::new((5, 12), None, 2, 1).unwrap();
        let runs: Vec<(usize, u64)> = (0..plan.runs()).map(|k| plan.run(k)).collect();
        // Seven seeds are one block: every seed of scenario 0, then of 1.
        let expected: Vec<(usize, u64)> = (0..2).flat_map(|s| (5..12).map(move |seed| (s, seed))).collect();
        assert_eq!(runs, expected);
        // Stopped after 9 runs (scenario 1 has played seeds 5 and 6): it resumes at 7.
        assert_eq!(plan.resume_seed(9), 7);
        assert_eq!(plan.resume_seed(6), 5, "no seed is whole until the last scenario plays it");
        // Past a block: the second block begins with scenario 0's seed 1 + 32.
        let plan = Plan::new((1, 101), None, 3, 1).unwrap();
        assert_eq!(plan.run(BLOCK_SEEDS - 1), (0, BLOCK_SEEDS));
        assert_eq!(plan.run(BLOCK_SEEDS), (1, 1));
        assert_eq!(plan.run(3 * BLOCK_SEEDS), (0, 1 + BLOCK_SEEDS));
    }

    /// Every run of every plan once, and each resume seed the first seed
    /// some scenario has not played, over ranges, shards and team sizes that
    /// end in a whole block, a part of one, or inside the first.
    #[test]
    fn every_run_is_played_once_and_a_resume_skips_only_whole_seeds() {
        for (from, to) in [(1, 2), (1, 33), (1, 34), (5, 80), (0, 100)] {
            for of in 1..=3 {
                for index in 1..=of {
                    for scenarios in [1, 2, 5] {
                        let plan = Plan::new((from, to), Some(Shard { index, of }), scenarios, 1).unwrap();
                        let mut runs: Vec<(usize, u64)> = (0..plan.runs()).map(|k| plan.run(k)).collect();
                        let shard = Shard { index, of };
                        let seeds: Vec<u64> = (from..to).filter(|&x| shard.has(from, x)).collect();
                        for done in 0..=plan.runs() {
                            let played = &runs[..done as usize];
                            let whole = |seed: &&u64| (0..scenarios).all(|s| played.contains(&(s, **seed)));
                            let first_not_whole = seeds.iter().find(|x| !whole(x)).copied();
                            let resume = plan.resume_seed(done);
                            match first_not_whole {
                                Some(seed) => {
                                    assert_eq!(resume, seed, "{from}..{to} {shard} ×{scenarios}, {done} done")
                                }
                                None => assert!(seeds.iter().all(|&x| x < resume), "{from}..{to} {shard}: {resume}"),
                            }
                            let skipped: Vec<&(usize, u64)> = runs.iter().filter(|r| r.1 < resume).collect();
                            assert!(skipped.iter().all(|r| played.contains(r)), "a resume skips only runs played");
                        }
                        runs.sort();
                        let each: Vec<(usize, u64)> =
                            (0..scenarios).flat_map(|s| seeds.iter().map(move |&x| (s, x))).collect();
                        assert_eq!(runs, each, "{from}..{to} {shard} ×{scenarios}");
                    }
                }
            }
        }
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
}
