//! The plain shell (`handshake::team::plain`) plays a run exactly as the
//! actix shell does: for every bundled scenario and seeds 1 to 30, the trace
//! `run --trace` would write is the same byte for byte, and so is the
//! report.

mod common;

use handshake::scenario::{load_file, run_scenario, RunOptions, Scenario};
use std::path::PathBuf;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=30;

fn bundled() -> Vec<PathBuf> {
    common::bundled_files()
}

/// The run's trace as `run --trace` writes it, and its report in short.
fn play(s: &Scenario, seed: u64, plain: bool) -> (String, String) {
    let mut report = run_scenario(s, seed, RunOptions { keep_outcome: true, plain, ..RunOptions::default() });
    let outcome = report.outcome.take().expect("keep_outcome keeps the outcome");
    let header = handshake::history::header(&s.name, seed, &outcome, s.policy(), &s.require_plan());
    let mut out = Vec::new();
    handshake::history::write(&mut out, &header, &outcome).expect("writes to memory");
    let summary = format!(
        "passed {} stopped by {} at {} ms, {:?}, pending {:?}, failures {:?}, violations {:?}",
        report.passed,
        report.stopped_by,
        report.virtual_ms,
        report.counts,
        report.pending,
        report.failures.iter().map(|f| (&f.check, f.at_ms, &f.message)).collect::<Vec<_>>(),
        report.violations
    );
    (String::from_utf8(out).expect("UTF-8"), summary)
}

#[test]
fn plain_shell_writes_the_actix_shells_trace_byte_for_byte() {
    let mut mismatches = Vec::new();
    let mut runs = 0;
    for path in bundled() {
        let s = load_file(&path).unwrap_or_else(|e| panic!("{} does not load: {e:?}", path.display()));
        for seed in SEEDS {
            runs += 1;
            let (actix, actix_report) = play(&s, seed, false);
            let (plain, plain_report) = play(&s, seed, true);
            if actix != plain {
                let (n, (a, p)) = actix
                    .lines()
                    .chain(std::iter::repeat("<end>"))
                    .zip(plain.lines().chain(std::iter::repeat("<end>")))
                    .enumerate()
                    .find(|(_, (a, p))| a != p)
                    .expect("traces differ somewhere");
                mismatches.push(format!(
                    "{} seed {seed}: line {} differs\n  actix: {a}\n  plain: {p}",
                    path.display(),
                    n + 1
                ));
            } else if actix_report != plain_report {
                mismatches.push(format!(
                    "{} seed {seed}: reports differ\n  actix: {actix_report}\n  plain: {plain_report}",
                    path.display()
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{} of {runs} runs differ:\n{}", mismatches.len(), mismatches.join("\n"));
}

/// A crowd at one instant: 100 idle workers, every shutdown asked at `at`,
/// the run ending at `end`. With a latency of 0 to 1 ms the lead's turn
/// makes deliveries due at once while more than 61 actors wait to run,
/// which no bundled scenario does: the order then depends on how many
/// actors tokio runs before it polls the driver again. The test's first run
/// is on its thread's new runtime, where actix_rt's own two tasks took two
/// places of the first round until `sim::system` ran them beforehand.
fn crowd(latency: &str, at: &str, end: Option<&str>) -> Scenario {
    let end = end.map_or(String::new(), |e| format!("end = \"{e}\"\n"));
    let mut toml = format!(
        "name = \"zero-latency-crowd\"\nabout = \"100 idle workers, every shutdown at once.\"\n{end}\
         [policy]\nlatency = \"{latency}\"\n\
         [[teammate]]\nname = \"worker\"\ncount = 100\n\
         work = []\n"
    );
    for i in 1..=100 {
        toml.push_str(&format!("[[step]]\nat = \"{at}\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
    }
    handshake::scenario::load_str("crowd.toml", &toml).unwrap_or_else(|e| panic!("the crowd loads: {e:?}"))
}

#[test]
fn plain_shell_follows_the_actix_shell_through_a_crowd() {
    // Ended at the instant of the crowd, the run ends with mail in 40
    // mailboxes: the agents finish it in the actix shell's order, and what
    // they send then is not delivered (no latency: it would be at once).
    let crowds =
        [("0ms..1ms", "0s", None), ("0ms..1ms", "1s", None), ("0ms..1ms", "1s", Some("1s")), ("0ms", "1s", Some("1s"))];
    for (latency, at, end) in crowds {
        let s = crowd(latency, at, end);
        for seed in 1..=10 {
            let (actix, _) = play(&s, seed, false);
            let (plain, _) = play(&s, seed, true);
            let first = actix.lines().zip(plain.lines()).position(|(a, p)| a != p);
            assert!(
                actix == plain,
                "crowd with latency {latency} at {at}, end {end:?}, seed {seed}: first differing line {first:?}"
            );
        }
    }
}

/// The bench's loads: no log, an ideal network, so messages go straight from
/// turn to mailbox and long chains run at one instant. The events agents
/// report (the bench's probe sees them with the log off) come in the same
/// order, and the runs end alike.
#[test]
fn plain_shell_plays_the_bench_loads_in_the_actix_order() {
    use handshake::bench::{spec_in, Mailbox, Shape};
    use handshake::protocol::Kind;
    use std::cell::RefCell;
    use std::rc::Rc;
    let play = |spec: handshake::world::TeamSpec, plain: bool| {
        let seen: Rc<RefCell<Vec<String>>> = Rc::default();
        let mut spec = spec;
        let s = Rc::clone(&seen);
        spec.probe = Some(Box::new(move |e| s.borrow_mut().push(format!("{e:?}"))));
        let o = if plain { handshake::team::run_plain(spec) } else { handshake::team::run(spec) };
        let end =
            format!("{:?} at {} ms, {} done, {:?}, {:?}", o.stop, o.ended_at.0, o.load_done, o.roster, o.requests);
        (seen.take(), end)
    };
    let shapes = [
        Shape { teammates: 1, in_flight: 1, handshakes: 200 },
        Shape { teammates: 4, in_flight: 8, handshakes: 1_000 },
        Shape { teammates: 100, in_flight: 2, handshakes: 2_000 },
    ];
    for kind in Kind::ALL {
        for shape in shapes {
            for mailbox in [Mailbox::Memory, Mailbox::File] {
                let (actix, actix_end) = play(spec_in(kind, shape, mailbox), false);
                let (plain, plain_end) = play(spec_in(kind, shape, mailbox), true);
                assert!(!actix.is_empty(), "{kind:?} {shape:?} {mailbox:?}: the probe saw nothing");
                let first = actix.iter().zip(&plain).position(|(a, p)| a != p);
                assert!(
                    actix == plain,
                    "{kind:?} {shape:?} {mailbox:?}: {} and {} events, first differing {first:?}",
                    actix.len(),
                    plain.len()
                );
                assert_eq!(actix_end, plain_end, "{kind:?} {shape:?} {mailbox:?}");
            }
        }
    }
}

/// With frames kept (`run --html`), every agent's state after each turn is
/// the same in both shells.
#[test]
fn plain_shell_keeps_the_same_frames() {
    for path in bundled() {
        let s = load_file(&path).unwrap_or_else(|e| panic!("{} does not load: {e:?}", path.display()));
        for seed in 1..=3 {
            let frames = |plain| {
                let opts = RunOptions { keep_outcome: true, frames: true, plain, ..RunOptions::default() };
                let o = run_scenario(&s, seed, opts).outcome.expect("kept");
                format!("{:?}", o.frames.expect("frames kept"))
            };
            assert!(frames(false) == frames(true), "{} seed {seed}: the frames differ", path.display());
        }
    }
}
