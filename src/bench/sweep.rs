//! A swept run and the ceiling it is measured against: how many trace
//! events a second `run --seeds` plays over every bundled scenario on one
//! thread, beside a bare event loop doing the least any simulator does
//! per event. Their ratio is the share of the ceiling a sweep reaches.
//!
//! Both are counted in trace events, the sweep's own measure of work: a
//! change that logs more or fewer events for the same work moves the ratio
//! too, so compare it across such a change with runs a second as well.

use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// Runs played, the trace events they made, and the time they took.
#[derive(Clone, Copy, Debug)]
pub struct Swept {
    pub runs: u64,
    pub events: u64,
    pub elapsed: Duration,
}

impl Swept {
    pub fn events_per_second(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64()
    }

    /// The mean events of a run (at least one).
    pub fn events_per_run(&self) -> u64 {
        (self.events / self.runs.max(1)).max(1)
    }
}

/// Every bundled scenario, loaded as `run` loads a file.
pub fn bundled() -> Vec<crate::scenario::Scenario> {
    crate::format::bundled::all()
        .filter_map(|b| crate::scenario::load_str(&b.path().display().to_string(), b.text).ok())
        .collect()
}

/// Plays every scenario of `scenarios` for each seed of `seeds`, judged by
/// the oracle and the file's expectations, as `run --seeds --jobs 1` does:
/// with the options it plays with, so no outcome is kept (keeping one makes
/// a run build what only a trace or a picture reads, a Claude Code team
/// folder among them), and in its order (`sweep::Plan`); the report counts
/// the trace's events.
pub fn sweep(scenarios: &[crate::scenario::Scenario], seeds: std::ops::Range<u64>) -> Swept {
    let started = Instant::now();
    let (mut runs, mut events) = (0, 0);
    for (s, seed) in in_sweep_order(scenarios, seeds) {
        let report = crate::scenario::run_scenario(s, seed, crate::scenario::RunOptions::plain());
        runs += 1;
        events += report.events as u64;
    }
    Swept { runs, events, elapsed: started.elapsed() }
}

/// Each scenario of `scenarios` on each seed of `seeds`, in the order
/// `run --seeds --jobs 1` plays them.
fn in_sweep_order(
    scenarios: &[crate::scenario::Scenario],
    seeds: std::ops::Range<u64>,
) -> impl Iterator<Item = (&crate::scenario::Scenario, u64)> {
    let plan = crate::sweep::Plan::new((seeds.start, seeds.end.max(seeds.start)), None, scenarios.len(), 1)
        .expect("a bench's sweep is countable");
    (0..plan.runs()).map(move |k| {
        let (s, seed) = plan.run(k);
        (&scenarios[s], seed)
    })
}

/// The sweep's runs played again with nothing judged (no oracle, no
/// expectations, no report), through the same plain shell, with their log
/// kept or with none: the time the simulation alone takes, the layers a
/// judged sweep's time stands on. A Claude Code or file-mode run leaves no
/// inbox files, as a sweep that reads none asks.
pub fn unjudged(scenarios: &[crate::scenario::Scenario], seeds: std::ops::Range<u64>, log: bool) -> Duration {
    let started = Instant::now();
    for (s, seed) in in_sweep_order(scenarios, seeds) {
        std::hint::black_box(crate::team::run_plain(unjudged_spec(s, seed, log)));
    }
    started.elapsed()
}

/// The team `unjudged` plays for `s` and `seed`: its log kept or not, no
/// inbox files left.
fn unjudged_spec(s: &crate::scenario::Scenario, seed: u64, log: bool) -> crate::world::TeamSpec {
    let mut spec = s.team_spec(seed, None);
    spec.trace = log;
    spec.folder = false;
    spec
}

/// The ceiling: `events` events in runs of `per_run`, each a bare event
/// loop of four agents. An event is the least a discrete-event simulator
/// does: take the earliest from a heap (its time, a sequence number that
/// breaks ties, its agent), write a record of it to the run's log, and
/// schedule that agent's next event a seeded random time later. Each run
/// starts with a new heap and a new log, as each scenario run does.
pub fn event_loop(events: u64, per_run: u64) -> Swept {
    const AGENTS: u32 = 4;
    let per_run = per_run.max(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let started = Instant::now();
    let (mut runs, mut done) = (0, 0);
    while done < events {
        let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
        let mut log: Vec<(u64, u32)> = Vec::new();
        let mut seq = 0;
        for agent in 0..AGENTS {
            heap.push(Reverse((0, seq, agent)));
            seq += 1;
        }
        let this_run = per_run.min(events - done);
        while (log.len() as u64) < this_run {
            let Some(Reverse((t, _, agent))) = heap.pop() else { break };
            log.push((t, agent));
            heap.push(Reverse((t + rng.gen_range(1..100u64), seq, agent)));
            seq += 1;
        }
        done += std::hint::black_box(&log).len() as u64;
        runs += 1;
    }
    Swept { runs, events: done, elapsed: started.elapsed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_loop_makes_exactly_the_events_asked_in_runs_of_the_size_asked() {
        let s = event_loop(1000, 300);
        assert_eq!((s.events, s.runs), (1000, 4));
        assert_eq!(s.events_per_run(), 250);
    }

    #[test]
    fn unjudged_runs_are_the_sweeps_runs_with_or_without_their_log() {
        let first = &bundled()[..1];
        let judged = crate::scenario::run_scenario(
            &first[0],
            1,
            crate::scenario::RunOptions { keep_outcome: true, ..Default::default() },
        );
        let played = crate::team::run_plain(unjudged_spec(&first[0], 1, true));
        assert_eq!(played.events, judged.outcome.expect("kept").events, "the same run, judged or not");
        assert!(unjudged(first, 1..3, true) > Duration::ZERO);
        assert!(unjudged(first, 1..3, false) > Duration::ZERO);
    }

    #[test]
    fn a_sweep_counts_each_run_and_its_trace_events() {
        let all = bundled();
        assert_eq!(all.len(), crate::format::bundled::all().count(), "every bundled scenario loads");
        let first = &all[..1];
        let s = sweep(first, 1..3);
        assert_eq!(s.runs, 2);
        let one = crate::scenario::run_scenario(
            &first[0],
            1,
            crate::scenario::RunOptions { keep_outcome: true, ..Default::default() },
        );
        let events = one.outcome.expect("kept").events.len() as u64;
        assert!(events > 0 && s.events >= events, "{} events in two runs, {events} in the first", s.events);
    }
}
