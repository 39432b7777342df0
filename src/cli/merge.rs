//! `handshake merge`: the shards of one sweep, each `handshake run --seeds
//! A..B --shard I/N --format json`, combined into the report the whole sweep
//! prints (real times aside: they are added up).

use super::run::{Determinism, ScenarioRow, Shard, SweepDoc};
use super::{Format, EXIT_BAD_INPUT};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' `--format json` outputs, one file each, all N of them, in any order
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output for people (text) or machines (json)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub const MERGE_EXAMPLES: &[(&str, &str)] = &[
    ("handshake merge out/shard-*.json", "the sweep's report, as one run would print it"),
    ("handshake merge out/*.json --format json", "the same as one JSON document"),
];

pub fn main(a: MergeArgs) -> i32 {
    let mut docs = Vec::new();
    for f in &a.files {
        match read(f) {
            Ok(d) => docs.push((f.display().to_string(), d)),
            Err(e) => {
                eprintln!("error: {e}; nothing was merged");
                return EXIT_BAD_INPUT;
            }
        }
    }
    match merge(&docs) {
        Ok(doc) => doc.print(a.format),
        Err(e) => {
            eprintln!("error: {e}; nothing was merged");
            EXIT_BAD_INPUT
        }
    }
}

/// The most of a shard's report that is read: about a million failing seeds
/// listed, far more than a sweep worth merging lists, and a bound on what a
/// wrong file (or `/dev/zero`) can make the merge hold.
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

fn read(f: &std::path::Path) -> Result<SweepDoc, String> {
    let text = crate::input::read_text(f, MAX_REPORT_BYTES).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!("{} is not the output of `handshake run --seeds A..B --format json` (this version's): {e}", f.display())
    })
}

/// The shards' documents (named by file) as the whole sweep's, or why they
/// are not the shards of one sweep.
pub fn merge(docs: &[(String, SweepDoc)]) -> Result<SweepDoc, String> {
    let (first_file, first) = docs.first().ok_or("no shard to merge")?;
    let of = first.shard.map_or(1, |s| s.of);
    let mut by_index: Vec<Option<&str>> = vec![None; of as usize];
    for (file, d) in docs {
        let differ = |what: String| format!("{file} and {first_file} come from different sweeps: {what}");
        if d.seeds != first.seeds {
            return Err(differ(format!(
                "seeds {}..{} and {}..{}",
                d.seeds.from, d.seeds.to, first.seeds.from, first.seeds.to
            )));
        }
        let this_of = d.shard.map_or(1, |s| s.of);
        if this_of != of {
            return Err(differ(format!("{} and {}", shards(this_of), shards(of))));
        }
        let names = |d: &SweepDoc| d.scenarios.iter().map(|r| (r.name.clone(), r.path.clone())).collect::<Vec<_>>();
        if names(d) != names(first) {
            return Err(differ("they played different scenario files".to_string()));
        }
        if d.options != first.options {
            return Err(differ(format!("options {:?} and {:?}", d.options.join(" "), first.options.join(" "))));
        }
        if d.determinism.is_some() != first.determinism.is_some() {
            return Err(differ("one was played with --check-determinism, the other without".to_string()));
        }
        let shard = d.shard.unwrap_or(Shard { index: 1, of: 1 });
        if shard.index == 0 || shard.index > shard.of {
            return Err(format!("{file}: shard {shard} is not one of {}", shards(shard.of)));
        }
        let slot = &mut by_index[(shard.index - 1) as usize];
        if let Some(other) = slot {
            return Err(format!("{other} and {file} are both shard {shard}: each shard once"));
        }
        *slot = Some(file);
        let expected = shard.seeds(d.seeds.from, d.seeds.to);
        if d.scenarios.iter().any(|r| r.seeds != expected) || d.runs != expected * d.scenarios.len() as u64 {
            return Err(format!(
                "{file}: shard {shard} of seeds {}..{} has {expected} seeds per scenario, but the file says otherwise",
                d.seeds.from, d.seeds.to
            ));
        }
    }
    let missing: Vec<String> =
        by_index.iter().enumerate().filter(|(_, f)| f.is_none()).map(|(i, _)| format!("{}/{of}", i + 1)).collect();
    if !missing.is_empty() {
        return Err(format!("shard {} missing: give all {} files", missing.join(", "), of));
    }
    let mut out = SweepDoc {
        seeds: first.seeds,
        runs: 0,
        failed: Vec::new(),
        real_seconds: 0.0,
        shard: None,
        scenarios: first
            .scenarios
            .iter()
            .map(|r| ScenarioRow { name: r.name.clone(), path: r.path.clone(), seeds: 0, failed: 0, real_ms: 0.0 })
            .collect(),
        options: first.options.clone(),
        determinism: first.determinism.as_ref().map(|_| Determinism { compared: 0, nondeterministic: Vec::new() }),
    };
    // Added in shard order, so that sums of real times do not depend on the
    // order the files were named in.
    let mut ordered: Vec<&SweepDoc> = docs.iter().map(|(_, d)| d).collect();
    ordered.sort_by_key(|d| d.shard.map_or(1, |s| s.index));
    for d in ordered {
        out.runs += d.runs;
        out.real_seconds += d.real_seconds;
        for (row, theirs) in out.scenarios.iter_mut().zip(&d.scenarios) {
            row.seeds += theirs.seeds;
            row.failed += theirs.failed;
            row.real_ms += theirs.real_ms;
        }
        out.failed.extend(d.failed.iter().cloned());
        if let (Some(mine), Some(theirs)) = (&mut out.determinism, &d.determinism) {
            mine.compared += theirs.compared;
            mine.nondeterministic.extend(theirs.nondeterministic.iter().cloned());
        }
    }
    let key = |doc: &SweepDoc, name: &str, path: &str, seed: u64| doc.position(name, path, seed);
    let mut failed = std::mem::take(&mut out.failed);
    failed.sort_by_key(|f| key(&out, &f.scenario, &f.path, f.seed));
    out.failed = failed;
    if let Some(mut d) = out.determinism.take() {
        d.nondeterministic.sort_by_key(|n| key(&out, &n.scenario, &n.path, n.seed));
        out.determinism = Some(d);
    }
    Ok(out)
}

fn shards(n: u64) -> String {
    if n == 1 {
        "an unsharded sweep".to_string()
    } else {
        format!("{n} shards")
    }
}
