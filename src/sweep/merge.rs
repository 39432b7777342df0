//! The shards of one sweep, each `handshake run --seeds A..B --shard I/N
//! --format json`, checked and combined into the report the whole sweep
//! prints (real times aside: they are added up).

use super::plan::Shard;
use super::report::{Determinism, ScenarioRow, SeedRange, SweepDoc, LISTED_PER_SCENARIO};
use crate::input::shown;
use crate::words::plural;
use std::collections::BTreeMap;

/// The most of a shard's report that is read: about a million failing seeds
/// listed, far more than a sweep worth merging lists, and a bound on what a
/// wrong file (or `/dev/zero`) can make the merge hold.
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// A shard's report, read back from the file it was written to.
pub fn read(f: &std::path::Path) -> Result<SweepDoc, String> {
    let text = crate::input::read_text(f, MAX_REPORT_BYTES).map_err(|e| format!("{}: {e}", f.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!("{} is not the output of `handshake run --seeds A..B --format json` (this version's): {e}", f.display())
    })
}

/// The shards' documents (named by file) as the whole sweep's, or why they
/// are not the shards of one sweep.
pub fn merge(docs: &[(String, SweepDoc)]) -> Result<SweepDoc, String> {
    let (first_file, first) = docs.first().ok_or("no shard to merge")?;
    for (file, d) in docs {
        agrees_with_itself(file, d)?;
    }
    let of = first.shard.map_or(1, |s| s.of);
    // By shard index: sized by the files given, not by the `of` a file claims.
    let mut by_index: BTreeMap<u64, &str> = BTreeMap::new();
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
        if let Some((mine, theirs)) = d.scenarios.iter().zip(&first.scenarios).find(|(a, b)| a.contents != b.contents) {
            return Err(differ(format!(
                "{} had other contents in each (its text's hash {} and {}): the file changed between the shards",
                shown(&mine.path),
                mine.contents,
                theirs.contents
            )));
        }
        if d.options != first.options {
            return Err(differ(format!("options {:?} and {:?}", d.options.join(" "), first.options.join(" "))));
        }
        if d.determinism.is_some() != first.determinism.is_some() {
            return Err(differ("one was played with --check-determinism, the other without".to_string()));
        }
        let shard = d.shard.unwrap_or(Shard::WHOLE);
        if let Some(other) = by_index.insert(shard.index, file) {
            return Err(format!("{other} and {file} are both shard {shard}: each shard once"));
        }
    }
    if (by_index.len() as u64) < of {
        const NAMED: usize = 10;
        let absent = (1..=of).filter(|i| !by_index.contains_key(i));
        let mut missing: Vec<String> = absent.take(NAMED + 1).map(|i| format!("{i}/{of}")).collect();
        if missing.len() > NAMED {
            missing[NAMED] = format!("and {} more", of - by_index.len() as u64 - NAMED as u64);
        }
        let (these, are) = if missing.len() == 1 { ("shard", "is") } else { ("shards", "are") };
        let named = match missing.split_last() {
            Some((last, rest)) if last.starts_with("and ") => format!("{} {last}", rest.join(", ")),
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => missing.join(""),
        };
        return Err(format!("{these} {named} {are} missing: give all {} files", of));
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
            .map(|r| ScenarioRow::unplayed(r.name.clone(), r.path.clone(), r.contents.clone()))
            .collect(),
        options: first.options.clone(),
        determinism: first.determinism.as_ref().map(|_| Determinism { compared: 0, nondeterministic: Vec::new() }),
        resume_from: None,
    };
    // Added in shard order, so that sums of real times do not depend on the
    // order the files were named in.
    let mut ordered: Vec<&SweepDoc> = docs.iter().map(|(_, d)| d).collect();
    ordered.sort_by_key(|d| d.shard.map_or(1, |s| s.index));
    // Counts past what a report can hold are no shards of a real sweep:
    // added unchecked they wrapped round, to a small sum and a PASS.
    let too_many = || "the shards' counts add up past any number a report can hold: they are not a sweep's".to_string();
    let add = |a: &mut u64, b: u64| a.checked_add(b).map(|sum| *a = sum).ok_or_else(too_many);
    for d in ordered {
        add(&mut out.runs, d.runs)?;
        out.real_seconds += d.real_seconds;
        for (row, theirs) in out.scenarios.iter_mut().zip(&d.scenarios) {
            add(&mut row.seeds, theirs.seeds)?;
            add(&mut row.failed, theirs.failed)?;
            row.real_ms += theirs.real_ms;
        }
        out.failed.extend(d.failed.iter().cloned());
        if let (Some(mine), Some(theirs)) = (&mut out.determinism, &d.determinism) {
            add(&mut mine.compared, theirs.compared)?;
            mine.nondeterministic.extend(theirs.nondeterministic.iter().cloned());
        }
    }
    if !out.real_seconds.is_finite() {
        return Err(
            "the shards' real times add up past any number a report can hold: one of them is not a sweep's".into()
        );
    }
    let all = std::mem::take(&mut out.failed);
    let failed = in_row_order(&out, all, |f| (&f.scenario, &f.path, f.seed));
    // Each scenario's lowest failing seeds, as one sweep lists them.
    let mut listed: BTreeMap<usize, u64> = BTreeMap::new();
    out.failed = failed
        .into_iter()
        .filter(|(row, _)| {
            let n = listed.entry(*row).or_default();
            *n += 1;
            *n <= LISTED_PER_SCENARIO
        })
        .map(|(_, f)| f)
        .collect();
    if let Some(mut d) = out.determinism.take() {
        let all = std::mem::take(&mut d.nondeterministic);
        d.nondeterministic =
            in_row_order(&out, all, |n| (&n.scenario, &n.path, n.seed)).into_iter().map(|(_, n)| n).collect();
        out.determinism = Some(d);
    }
    Ok(out)
}

/// `items` in the order one sweep lists them, each with its row: row by
/// row, seed by seed. A file named twice is two rows of one name and path
/// (failing on the same seeds: a run is the same however often it is
/// played), so the n-th item of a seed is the n-th such row's.
fn in_row_order<T>(doc: &SweepDoc, items: Vec<T>, id: impl Fn(&T) -> (&String, &String, u64)) -> Vec<(usize, T)> {
    let mut rows: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, r) in doc.scenarios.iter().enumerate() {
        rows.entry((r.name.as_str(), r.path.as_str())).or_default().push(i);
    }
    let mut seen: BTreeMap<(String, String, u64), usize> = BTreeMap::new();
    let mut keyed: Vec<((usize, u64), T)> = items
        .into_iter()
        .map(|item| {
            let (name, path, seed) = id(&item);
            let n = seen.entry((name.clone(), path.clone(), seed)).or_default();
            let row = rows.get(&(name.as_str(), path.as_str())).and_then(|r| r.get(*n)).copied().unwrap_or(usize::MAX);
            *n += 1;
            ((row, seed), item)
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|((row, _), item)| (row, item)).collect()
}

/// Whether a report's numbers agree with each other and with its shard: a
/// report edited by hand, or cut short, would otherwise be merged into a
/// sweep's report that contradicts itself (a row that says 3 seeds failed
/// beside a total of 0). Each disagreement is named, with the file.
fn agrees_with_itself(file: &str, d: &SweepDoc) -> Result<(), String> {
    let SeedRange { from, to } = d.seeds;
    if to <= from {
        return Err(format!("{file}: seeds {from}..{to} is empty: a sweep's range ends after it starts"));
    }
    let shard = d.shard.unwrap_or(Shard::WHOLE);
    if shard.of == 0 || shard.index == 0 || shard.index > shard.of {
        return Err(format!("{file}: shard {shard} is not one of {}", shards(shard.of)));
    }
    let times = std::iter::once(("real_seconds".to_string(), d.real_seconds))
        .chain(d.scenarios.iter().map(|r| (format!("real_ms of {}", shown(&r.name)), r.real_ms)));
    for (what, t) in times {
        if !(t >= 0.0 && t.is_finite()) {
            return Err(format!("{file}: {what} is {t}: a time taken is never negative"));
        }
    }
    let expected = shard.seeds(from, to);
    let runs = expected.checked_mul(d.scenarios.len() as u64);
    if let Some(resume) = d.resume_from {
        return Err(format!(
            "{file}: shard {shard} of seeds {from}..{to} was stopped early ({} of {} played, every seed before {resume} \
             by every scenario): a shard merges only when whole; play it again whole (its resume line plays the \
             rest as a shard of another range, whose report does not merge either)",
            d.runs,
            runs.map_or("more".to_string(), |r| plural(r, "run"))
        ));
    }
    if d.scenarios.iter().any(|r| r.seeds != expected) || Some(d.runs) != runs {
        return Err(format!(
            "{file}: shard {shard} of seeds {from}..{to} has {} per scenario, but the file says otherwise",
            plural(expected, "seed")
        ));
    }
    if let Some(r) = d.scenarios.iter().find(|r| r.failed > r.seeds) {
        return Err(format!("{file}: {} failed on {} of its {} seeds", shown(&r.name), r.failed, r.seeds));
    }
    // A scenario given twice has two rows: its seeds may then be listed twice.
    let mut rows: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for r in &d.scenarios {
        let (copies, failed) = rows.entry((&r.name, &r.path)).or_default();
        *copies += 1;
        *failed += r.failed;
    }
    let listing = Listing { file, rows, from, to, shard };
    let failed = listing.count("failing", d.failed.iter().map(|f| (f.scenario.as_str(), f.path.as_str(), f.seed)))?;
    for (&(name, path), &(_, says)) in &listing.rows {
        let lists: u64 = failed.range((name, path, 0)..=(name, path, u64::MAX)).map(|(_, n)| n).sum();
        // Each copy of a scenario lists its lowest failing seeds, up to the most listed.
        let copies = listing.rows.get(&(name, path)).map_or(1, |r| r.0);
        if says.min(copies.saturating_mul(LISTED_PER_SCENARIO)) != lists {
            return Err(format!(
                "{file}: {} says {says} failed, but lists {}: the count and the list of failing seeds must agree",
                shown(name),
                plural(lists, "failing seed")
            ));
        }
    }
    if let Some(det) = &d.determinism {
        if det.compared != d.runs {
            return Err(format!(
                "{file}: {} played, but {} compared: with --check-determinism every run is",
                plural(d.runs, "run"),
                det.compared
            ));
        }
        let seeds = det.nondeterministic.iter().map(|n| (n.scenario.as_str(), n.path.as_str(), n.seed));
        listing.count("nondeterministic", seeds)?;
    }
    Ok(())
}

/// What a report's lists of seeds are checked against.
struct Listing<'a> {
    file: &'a str,
    /// By (name, path): how many rows, and the failures they count.
    rows: BTreeMap<(&'a str, &'a str), (u64, u64)>,
    from: u64,
    to: u64,
    shard: Shard,
}

impl<'a> Listing<'a> {
    /// How often each (name, path, seed) is listed, or the first seed that
    /// is not one of the report's: an unknown scenario, outside the range,
    /// another shard's, or listed twice.
    fn count(
        &self,
        what: &str,
        seeds: impl Iterator<Item = (&'a str, &'a str, u64)>,
    ) -> Result<BTreeMap<(&'a str, &'a str, u64), u64>, String> {
        let Listing { file, from, to, shard, .. } = *self;
        let mut counted: BTreeMap<(&str, &str, u64), u64> = BTreeMap::new();
        for (name, path, seed) in seeds {
            let at = format!("{file}: {what} seed {seed} of {} ({})", shown(name), shown(path));
            let Some(&(copies, _)) = self.rows.get(&(name, path)) else {
                return Err(format!("{at}: the report has no row for that scenario"));
            };
            if !(from..to).contains(&seed) {
                return Err(format!("{at} is outside the sweep's seeds {from}..{to}"));
            }
            if !shard.has(from, seed) {
                let belongs = Shard { index: (seed - from) % shard.of + 1, of: shard.of };
                return Err(format!(
                    "{at} is shard {belongs}'s, not shard {shard}'s: seed s is shard (s - {from}) % {} + 1",
                    shard.of
                ));
            }
            let n = counted.entry((name, path, seed)).or_default();
            *n += 1;
            if *n > copies {
                return Err(format!("{at} is listed twice: each seed once"));
            }
        }
        Ok(counted)
    }
}

fn shards(n: u64) -> String {
    if n == 1 {
        "an unsharded sweep".to_string()
    } else {
        format!("{n} shards")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard_of(of: u64) -> SweepDoc {
        SweepDoc {
            seeds: SeedRange { from: 1, to: 3 },
            runs: 1,
            failed: Vec::new(),
            real_seconds: 0.1,
            shard: Some(Shard { index: 1, of }),
            scenarios: vec![ScenarioRow {
                name: "a".into(),
                path: "a.toml".into(),
                contents: "0123456789abcdef".into(),
                seeds: 1,
                failed: 0,
                real_ms: 1.0,
            }],
            options: Vec::new(),
            determinism: None,
            resume_from: None,
        }
    }

    #[test]
    fn a_report_claiming_a_trillion_shards_is_refused_without_making_room_for_them() {
        let e = merge(&[("a.json".to_string(), shard_of(1_000_000_000_000))]).unwrap_err();
        assert!(e.starts_with("shards 2/1000000000000, 3/1000000000000,"), "{e}");
        assert!(
            e.contains(", 11/1000000000000 and 999999999989 more are missing: give all 1000000000000 files"),
            "{e}"
        );
        let whole = SweepDoc { seeds: SeedRange { from: 1, to: 2 }, shard: None, ..shard_of(1) };
        assert_eq!(merge(&[("a.json".to_string(), whole.clone())]), Ok(whole));
    }

    #[test]
    fn real_times_that_add_up_past_any_number_are_refused_not_written_as_null() {
        let huge = |index| SweepDoc { real_seconds: 1.7e308, shard: Some(Shard { index, of: 2 }), ..shard_of(2) };
        let half = |d: SweepDoc| SweepDoc { seeds: SeedRange { from: 1, to: 3 }, ..d };
        let e = merge(&[("a.json".to_string(), half(huge(1))), ("b.json".to_string(), half(huge(2)))]).unwrap_err();
        assert!(e.contains("past any number"), "{e}");
    }

    #[test]
    fn shards_of_a_file_that_changed_between_them_do_not_merge() {
        let shard = |index, contents: &str| {
            let mut d = SweepDoc { shard: Some(Shard { index, of: 2 }), ..shard_of(2) };
            d.scenarios[0].contents = contents.into();
            ("shard.json".to_string(), d)
        };
        let same = merge(&[shard(1, "0123456789abcdef"), shard(2, "0123456789abcdef")]);
        assert!(same.is_ok(), "{same:?}");
        let e = merge(&[shard(1, "0123456789abcdef"), shard(2, "fedcba9876543210")]).unwrap_err();
        assert!(e.contains("a.toml had other contents in each"), "{e}");
        assert!(e.contains("fedcba9876543210 and 0123456789abcdef"), "{e}");
    }
}
