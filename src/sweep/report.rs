//! A sweep's report: what `run --seeds` prints and `merge` reads back and
//! combines, as a value (the command prints it).

use super::plan::Shard;
use crate::input::shown;
use crate::words::{noun, plural};

/// The failing seeds a report lists of each scenario, the lowest: a person
/// acts on the first few, and a sweep that fails every run must not hold
/// one line a run. The rows count them all.
pub const LISTED_PER_SCENARIO: u64 = 100;

/// A sweep's report, as `--format json` prints it and `handshake merge`
/// reads it back: everything the text report is made of, so a merge of
/// shards prints what one unsharded sweep prints. The first four keys are the
/// ones earlier versions printed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepDoc {
    pub seeds: SeedRange,
    pub runs: u64,
    /// Failing runs, each scenario's lowest [`LISTED_PER_SCENARIO`]: by
    /// scenario in the order given, then by seed. The rows count them all.
    pub failed: Vec<FailedSeed>,
    #[serde(serialize_with = "crate::words::serialize_real_seconds")]
    pub real_seconds: f64,
    /// Which shard this is; absent for a whole sweep (and a merge of shards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// One row per scenario, in the order given.
    pub scenarios: Vec<ScenarioRow>,
    /// The options that change what a run does (`--cap`, `--max-real`), as
    /// the reproduce lines carry them: shards merge only if these agree.
    pub options: Vec<String>,
    /// Present with `--check-determinism`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub determinism: Option<Determinism>,
    /// Present when the sweep was stopped (Ctrl-C) before its last run: the
    /// seed its resume line starts at (seeds before it were played by every
    /// scenario). Such a report does not merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_from: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRange {
    pub from: u64,
    pub to: u64,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioRow {
    pub name: String,
    pub path: String,
    /// The file's text as played, hashed (FNV-1a, 16 hex digits): shards
    /// played against different contents of one path do not merge.
    pub contents: String,
    /// Seeds played (this shard's).
    pub seeds: u64,
    pub failed: u64,
    /// The runs' real time added up.
    #[serde(serialize_with = "crate::words::serialize_real_ms")]
    pub real_ms: f64,
}

impl ScenarioRow {
    /// A scenario's row before any of its seeds is counted.
    pub fn unplayed(name: String, path: String, contents: String) -> ScenarioRow {
        ScenarioRow { name, path, contents, seeds: 0, failed: 0, real_ms: 0.0 }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailedSeed {
    pub scenario: String,
    pub path: String,
    pub seed: u64,
    pub why: String,
    pub reproduce: String,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Determinism {
    /// Runs played twice and compared.
    pub compared: u64,
    /// Seeds whose two traces differ, in the order of `failed`.
    pub nondeterministic: Vec<Nondeterministic>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nondeterministic {
    pub scenario: String,
    pub path: String,
    pub seed: u64,
    /// The two traces' hashes (FNV-1a, 64 bits, of the JSON Lines `--trace` writes), in hex.
    pub hashes: [String; 2],
    pub reproduce: String,
    /// The guard that stopped one of the two plays (`real-time guard`),
    /// if one did: a moment of real time, not the simulation, parted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
}

impl SweepDoc {
    pub fn passed(&self) -> bool {
        self.failed.is_empty() && self.determinism.as_ref().is_none_or(|d| d.nondeterministic.is_empty())
    }

    /// The failing runs, listed or not.
    pub fn failed_runs(&self) -> u64 {
        self.scenarios.iter().map(|r| r.failed).sum()
    }

    /// The seeds each scenario played.
    pub fn seed_count(&self) -> u64 {
        let SeedRange { from, to } = self.seeds;
        self.shard.map_or(to - from, |s| s.seeds(from, to))
    }

    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let seeds = self.seed_count();
        // Failures first, the part a person acts on, before a table that
        // may run to hundreds of rows; the rows then list the failing
        // scenarios first, each group in the order the files were given.
        if !self.failed.is_empty() {
            out.push_str("failing seeds:\n");
            for f in &self.failed {
                let _ = writeln!(
                    out,
                    "  {} seed {}: {}\n    reproduce: {}",
                    shown(&f.scenario),
                    f.seed,
                    shown(&f.why),
                    shown(&f.reproduce)
                );
            }
            let unlisted = self.failed_runs().saturating_sub(self.failed.len() as u64);
            if unlisted > 0 {
                let s = if unlisted == 1 { "" } else { "s" };
                let _ = writeln!(
                    out,
                    "  … and {unlisted} more failing seed{s}, not listed (each scenario's lowest \
                     {LISTED_PER_SCENARIO} are; its row counts them all)"
                );
            }
            out.push('\n');
        }
        let (failing, passing): (Vec<_>, Vec<_>) = self.scenarios.iter().partition(|r| r.failed > 0);
        for r in failing.into_iter().chain(passing) {
            if r.seeds == 0 {
                // Stopped before it, or a shard with no seed of its own: no run, no verdict.
                let none = crate::color::paint("NONE", crate::color::Paint::Warn, crate::color::stdout());
                let _ = writeln!(out, "{none}  {:<48} no seed played", shown(&r.name));
                continue;
            }
            let _ = writeln!(
                out,
                "{}  {:<48} {}/{} {} passed  ({:.1} ms real)",
                crate::color::verdict(r.failed == 0),
                shown(&r.name),
                r.seeds.saturating_sub(r.failed),
                r.seeds,
                noun(r.seeds, "seed"),
                r.real_ms
            );
        }
        if let Some(d) = &self.determinism {
            if d.nondeterministic.is_empty() {
                let _ = writeln!(
                    out,
                    "\ndeterminism: each of {} played twice gave the same trace",
                    plural(d.compared, "run")
                );
            } else {
                let _ = writeln!(
                    out,
                    "\nnondeterministic seeds ({} of {} played twice gave two different traces):",
                    d.nondeterministic.len(),
                    plural(d.compared, "run")
                );
                for n in &d.nondeterministic {
                    let guard = n.stopped_by.as_deref().map_or(String::new(), |g| {
                        format!(" (the {} stopped a play: real time, not the simulation, parted them)", shown(g))
                    });
                    let _ = writeln!(
                        out,
                        "  {} seed {}: trace hashes {} and {}{guard}\n    reproduce: {}",
                        shown(&n.scenario),
                        n.seed,
                        shown(&n.hashes[0]),
                        shown(&n.hashes[1]),
                        shown(&n.reproduce)
                    );
                }
            }
        }
        if let Some(s) = self.shard {
            let _ = writeln!(
                out,
                "\nshard {s} of seeds {}..{}: {} (seed s where (s - {}) % {} = {}); combine the shards' --format json with handshake merge",
                self.seeds.from,
                self.seeds.to,
                plural(seeds, "seed"),
                self.seeds.from,
                s.of,
                s.index - 1
            );
            let all = self.seeds.to - self.seeds.from;
            if s.of > all {
                // Not an error (a fixed matrix over a short sweep), but the
                // empty shards are the user's to know of.
                let _ = writeln!(
                    out,
                    "{} for {}: each shard plays at most one seed, and shards {} to {} play none",
                    plural(s.of, "shard"),
                    plural(all, "seed"),
                    all + 1,
                    s.of
                );
            }
        }
        let whole = (self.scenarios.len() as u64).saturating_mul(seeds);
        let _ = writeln!(
            out,
            "\n{} ({}{} × {}{}): {} passed, {} failed  (real {:.2} s)",
            plural(self.runs, "run"),
            if self.runs < whole { "stopped early, of " } else { "" },
            plural(self.scenarios.len() as u64, "scenario"),
            plural(seeds, "seed"),
            if self.runs < whole { ": each scenario's row counts the seeds it played" } else { "" },
            self.runs.saturating_sub(self.failed_runs()),
            self.failed_runs(),
            self.real_seconds
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nondeterministic_seed_is_listed_with_both_hashes_and_fails_the_sweep() {
        let doc = SweepDoc {
            seeds: SeedRange { from: 1, to: 3 },
            runs: 2,
            failed: Vec::new(),
            real_seconds: 0.5,
            shard: None,
            scenarios: vec![ScenarioRow {
                name: "a".into(),
                path: "a.toml".into(),
                contents: "0123456789abcdef".into(),
                seeds: 2,
                failed: 0,
                real_ms: 1.0,
            }],
            options: Vec::new(),
            determinism: Some(Determinism {
                compared: 2,
                nondeterministic: vec![Nondeterministic {
                    scenario: "a".into(),
                    path: "a.toml".into(),
                    seed: 2,
                    hashes: ["00000000000000aa".into(), "00000000000000bb".into()],
                    stopped_by: None,
                    reproduce: "handshake run a.toml --seed 2 -v".into(),
                }],
            }),
            resume_from: None,
        };
        assert!(!doc.passed());
        let text = doc.text();
        assert!(text.contains("nondeterministic seeds (1 of 2 runs played twice"), "{text}");
        assert!(text.contains("  a seed 2: trace hashes 00000000000000aa and 00000000000000bb\n    reproduce: handshake run a.toml --seed 2 -v"), "{text}");
        let back: SweepDoc = serde_json::from_value(serde_json::to_value(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
    }
}
