//! The suite's figures beside their anchors: a handshake beside bare actix,
//! 10,000 requests in flight beside 1,000, 100,000 teammates' peak beside
//! its budget, and a swept run beside a bare event loop. Each is printed as a
//! line with its target and written in the suite's JSON, so that a
//! regression shows in every run of `bench --suite` (docs/performance.md).

use super::noun;
use serde_json::{json, Value};

/// The share of bare actix's rate a handshake should reach, each protocol.
pub const HANDSHAKE_TARGET: f64 = 0.85;

/// The most memory 100,000 teammates alive at once may take, in MB.
pub const PEAK_TARGET_MB: u32 = 150;

/// The share of the ceiling a swept run should reach.
pub const SWEEP_TARGET: f64 = 0.15;

/// Seeds each bundled scenario is played with in the suite's sweep.
pub const SWEEP_SEEDS: std::ops::Range<u64> = 1..101;

/// The least, the median and the most of a figure over its repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(mut values: Vec<f64>) -> Spread {
        values.sort_by(f64::total_cmp);
        let at = |i: usize| values.get(i).copied().unwrap_or(0.0);
        let n = values.len();
        // An even count has two middles: their mean, not the upper one (with
        // two runs, that was the better of them).
        let median = if n > 0 && n.is_multiple_of(2) { (at(n / 2 - 1) + at(n / 2)) / 2.0 } else { at(n / 2) };
        Spread { min: at(0), median, max: at(n.saturating_sub(1)) }
    }

    /// (max − min) / median: how sure a figure is. More than a third is
    /// too wide to quote one figure (docs/performance.md).
    pub fn width(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({ "min": self.min, "median": self.median, "max": self.max })
    }
}

/// One figure beside its anchor.
pub struct Anchored {
    /// What is measured, for people.
    line: String,
    /// None: the figure could not be measured.
    met: Option<bool>,
    key: &'static str,
    json: Value,
}

/// Every figure of the standard suite beside its anchor: `cases` in the
/// suite's order (see `bench::suite`), then the sweep, measured here.
pub fn standard(cases: &[Value], repeat: u32) -> Vec<Anchored> {
    let mut all = of_cases(cases);
    all.push(sweep(repeat));
    all
}

/// The figures read from the suite's cases, in its order: the shutdown
/// handshake (0), 1,000 and 10,000 in flight (1, 2), 100,000 teammates (3),
/// the plan handshake (5).
fn of_cases(cases: &[Value]) -> Vec<Anchored> {
    let case = |i: usize| cases.get(i).unwrap_or(&Value::Null);
    let ratio = |c: &Value| c["spread"]["ratio"].clone();
    let handshake = |c: &Value, what: &str, key: &'static str| {
        let r = ratio(c);
        let median = r["median"].as_f64();
        let line = match median {
            Some(m) => format!(
                "a {what} handshake, 1 teammate: {m:.2} of bare actix's rate{}; the target: at least {HANDSHAKE_TARGET}",
                range(&r, 2)
            ),
            None => format!("a {what} handshake, 1 teammate: not measured"),
        };
        let met = median.map(|m| m >= HANDSHAKE_TARGET);
        Anchored { line, met, key, json: json!({"ratio": r, "target_at_least": HANDSHAKE_TARGET, "met": met}) }
    };
    let ns = |c: &Value| c["protocol"]["ns_per_handshake"].as_f64();
    let in_flight = match (ns(case(2)), ns(case(1))) {
        (Some(many), Some(few)) => Some(many / few),
        _ => None,
    };
    let peak = case(3)["peak_memory_bytes"].as_f64();
    let budget = f64::from(PEAK_TARGET_MB) * 1e6;
    vec![
        handshake(case(0), "shutdown", "shutdown_handshake"),
        handshake(case(5), "plan", "plan_handshake"),
        Anchored {
            line: match in_flight {
                Some(x) => {
                    format!("10,000 in flight: {x:.2}× the ns per handshake of 1,000 in flight; the target: no dearer")
                }
                None => "10,000 in flight beside 1,000: not measured".to_string(),
            },
            met: in_flight.map(|x| x <= 1.0),
            key: "ten_thousand_in_flight",
            json: json!({"ns_ratio_to_one_thousand": in_flight, "target_at_most": 1.0, "met": in_flight.map(|x| x <= 1.0)}),
        },
        Anchored {
            line: match peak {
                Some(b) => {
                    format!("100,000 teammates peaked at {:.1} MB; the target: under {PEAK_TARGET_MB} MB", b / 1e6)
                }
                None => "100,000 teammates: peak memory unknown (no /proc/self/status here)".to_string(),
            },
            met: peak.map(|b| b < budget),
            key: "hundred_thousand_teammates",
            json: json!({"peak_memory_bytes": peak, "target_under_bytes": budget, "met": peak.map(|b| b < budget)}),
        },
    ]
}

/// Whether `cargo bench` was asked to measure the benchmark group `group`,
/// so that a bench prints its figure beside its anchor (a few more runs of
/// it) only then: not for `--list` or `--test`, nor under a filter that
/// names other groups.
pub fn bench_wants(group: &str) -> bool {
    wanted(group, &std::env::args().skip(1).collect::<Vec<_>>())
}

fn wanted(group: &str, args: &[String]) -> bool {
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return false;
    }
    // Criterion's filter is its one argument without a dash; cargo adds `--bench`.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    filters.is_empty() || filters.iter().any(|f| group.contains(f.as_str()) || f.contains(group))
}

/// " (min–max)" of a spread's JSON, when it has one.
fn range(spread: &Value, digits: usize) -> String {
    match (spread["min"].as_f64(), spread["max"].as_f64()) {
        (Some(lo), Some(hi)) if lo != hi => format!(" ({lo:.digits$}–{hi:.digits$})"),
        _ => String::new(),
    }
}

/// The figures as the suite prints them: each marked met (✓) or missed (✗).
pub fn print(anchored: &[Anchored]) {
    println!("\nBeside the anchors (✓ the target met, ✗ missed, ? not measured):");
    for a in anchored {
        let mark = match a.met {
            Some(true) => "✓",
            Some(false) => "✗",
            None => "?",
        };
        println!("  {mark} {}", a.line);
    }
}

/// The figures as the suite's JSON holds them, by name.
pub fn json(anchored: &[Anchored]) -> Value {
    Value::Object(anchored.iter().map(|a| (a.key.to_string(), a.json.clone())).collect())
}

/// A swept run beside its ceiling, alternately `repeat` times: every bundled
/// scenario for each seed on one thread (`run --seeds --jobs 1`), then a
/// bare event loop making as many events in runs of the same mean size,
/// then the same runs unjudged, with their log and with none: the layers
/// the sweep's time stands on (docs/measured/sweep-layers.md).
fn sweep(repeat: u32) -> Anchored {
    use crate::bench::sweep::{event_loop, unjudged};
    let scenarios = crate::bench::sweep::bundled();
    eprintln!(
        "sweep: {} bundled scenarios × seeds {}..{}, one thread, beside a bare event loop, then unjudged…",
        scenarios.len(),
        SWEEP_SEEDS.start,
        SWEEP_SEEDS.end - 1
    );
    let mut figures: [Vec<f64>; 5] = Default::default();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let s = crate::bench::sweep::sweep(&scenarios, SWEEP_SEEDS);
        let c = event_loop(s.events, s.events_per_run());
        let share = |secs: f64| s.events as f64 / secs / c.events_per_second();
        let with_log = share(unjudged(&scenarios, SWEEP_SEEDS, true).as_secs_f64());
        let no_log = share(unjudged(&scenarios, SWEEP_SEEDS, false).as_secs_f64());
        let ratio = share(s.elapsed.as_secs_f64());
        for (all, x) in figures.iter_mut().zip([s.events_per_second(), c.events_per_second(), ratio, with_log, no_log])
        {
            all.push(x);
        }
        last = Some(s);
    }
    let Some(s) = last.filter(|s| s.runs > 0 && s.events > 0) else {
        let line = "the sweep: no bundled scenario loaded, nothing to measure (a bug, please report it)".to_string();
        return Anchored { line, met: None, key: "sweep", json: Value::Null };
    };
    let [swept, ceiling, ratio, with_log, no_log] = figures.map(Spread::of);
    sweep_anchored(&s, &SweepSpreads { swept, ceiling, ratio, with_log, no_log }, repeat)
}

/// The sweep's figures over the repeats: trace events a second, the
/// ceiling's events a second, their ratio, and the same runs' share of the
/// ceiling unjudged, with their log and with none.
pub(super) struct SweepSpreads {
    pub swept: Spread,
    pub ceiling: Spread,
    pub ratio: Spread,
    pub with_log: Spread,
    pub no_log: Spread,
}

/// The sweep beside its ceiling, as a line and as JSON.
fn sweep_anchored(s: &crate::bench::sweep::Swept, f: &SweepSpreads, repeat: u32) -> Anchored {
    let met = f.ratio.median >= SWEEP_TARGET;
    let json = json!({
        "runs": s.runs,
        "trace_events_per_run": s.events_per_run(),
        "trace_events_per_second": f.swept.json(),
        "ceiling_events_per_second": f.ceiling.json(),
        "ratio": f.ratio.json(),
        "unjudged_ratio": {"with_log": f.with_log.json(), "no_log": f.no_log.json()},
        "target_at_least": SWEEP_TARGET,
        "met": met,
    });
    Anchored { line: sweep_line(s, f, repeat), met: Some(met), key: "sweep", json }
}

/// The sweep's line: its rate, the ceiling's and their ratio, each with its
/// spread over the repeats, then the same runs' share unjudged.
pub(super) fn sweep_line(s: &crate::bench::sweep::Swept, f: &SweepSpreads, repeat: u32) -> String {
    let range = |x: &Spread, scale: f64, digits: usize| {
        if repeat > 1 {
            format!(" ({:.digits$}–{:.digits$})", x.min / scale, x.max / scale)
        } else {
            String::new()
        }
    };
    let runs = format!("{} {}", crate::words::grouped(s.runs), noun(s.runs, "run"));
    let each = s.events_per_run();
    let each = format!("{} {}", crate::words::grouped(each), noun(each, "trace event"));
    let (swept, ceiling, ratio) = (&f.swept, &f.ceiling, &f.ratio);
    let mut line = format!(
        "the sweep ({runs}, {each} a run, one thread): {:.2} M trace events/s{}; a bare event loop in runs of that size: {:.1} M events/s{}; {:.3} of the ceiling{} (the target: at least {SWEEP_TARGET}). Unjudged, the same runs reach {:.3}{} of it with their log and {:.3}{} with none (the simulation alone).",
        swept.median / 1e6,
        range(swept, 1e6, 2),
        ceiling.median / 1e6,
        range(ceiling, 1e6, 1),
        ratio.median,
        range(ratio, 1.0, 3),
        f.with_log.median,
        range(&f.with_log, 1.0, 3),
        f.no_log.median,
        range(&f.no_log, 1.0, 3)
    );
    if repeat <= 1 {
        line.push_str(" One run: no spread measured.");
    } else if ratio.width() > 1.0 / 3.0 {
        line.push_str(" The ratio's spread is wider than a third of it: the machine was busy; measure again.");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_sweep_is_printed_beside_its_ceiling_with_its_spread() {
        assert_eq!(
            [0, 7, 999, 1000, 5800, 1_234_567].map(crate::words::grouped),
            ["0", "7", "999", "1,000", "5,800", "1,234,567"]
        );
        let s = crate::bench::sweep::Swept { runs: 5800, events: 197_200, elapsed: Duration::from_millis(127) };
        let spreads = SweepSpreads {
            swept: Spread { min: 1.5e6, median: 1.55e6, max: 1.6e6 },
            ceiling: Spread { min: 34.0e6, median: 34.5e6, max: 35.0e6 },
            ratio: Spread { min: 0.044, median: 0.045, max: 0.046 },
            with_log: Spread { min: 0.127, median: 0.129, max: 0.131 },
            no_log: Spread { min: 0.16, median: 0.162, max: 0.163 },
        };
        let line = sweep_line(&s, &spreads, 3);
        assert!(line.contains("5,800 runs, 34 trace events a run"), "{line}");
        assert!(line.contains("1.55 M trace events/s (1.50–1.60)"), "{line}");
        assert!(line.contains("34.5 M events/s (34.0–35.0)"), "{line}");
        assert!(line.contains("0.045 of the ceiling (0.044–0.046) (the target: at least 0.15)"), "{line}");
        assert!(
            line.contains("Unjudged, the same runs reach 0.129 (0.127–0.131) of it with their log and 0.162 (0.160–0.163) with none"),
            "{line}"
        );
        assert!(!line.contains("spread"), "{line}");
        let one = sweep_line(&s, &spreads, 1);
        assert!(
            one.contains("0.045 of the ceiling (the target")
                && one.contains("reach 0.129 of it with their log and 0.162 with none")
                && one.ends_with("One run: no spread measured."),
            "{one}"
        );
        let wide = SweepSpreads { ratio: Spread { min: 0.02, median: 0.045, max: 0.06 }, ..spreads };
        assert!(sweep_line(&s, &wide, 3).contains("wider than a third"));
    }

    #[test]
    fn a_bench_prints_its_anchor_only_when_its_group_is_measured() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(wanted("sweep_vs_event_loop", &args(&["--bench"])));
        assert!(wanted("sweep_vs_event_loop", &args(&["--bench", "sweep_vs"])));
        assert!(wanted("sweep_vs_event_loop", &args(&["--bench", "sweep_vs_event_loop/event-loop-ceiling"])));
        assert!(!wanted("sweep_vs_event_loop", &args(&["--bench", "sweep_smallest_run"])));
        assert!(!wanted("handshakes", &args(&["--bench", "--list"])));
        assert!(!wanted("handshakes", &args(&["--test"])));
    }

    /// A case of the suite as its child process reports it, with only what
    /// the anchors read.
    fn case(ratio: [f64; 3], ns: f64, peak: Option<f64>) -> Value {
        json!({
            "protocol": {"ns_per_handshake": ns},
            "spread": {"ratio": {"min": ratio[0], "median": ratio[1], "max": ratio[2]}},
            "peak_memory_bytes": peak,
        })
    }

    /// docs/report.schema.json's `anchors` of a suite holds `doc`.
    fn the_schema_holds(doc: &Value) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the schema")).expect("JSON");
        let anchors = json!({
            "$schema": schema["$schema"],
            "$defs": schema["$defs"],
            "$ref": "#/$defs/bench_suite/properties/anchors",
        });
        let v = jsonschema::draft202012::new(&anchors).expect("the anchors' schema compiles");
        let problems: Vec<String> = v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect();
        assert!(problems.is_empty(), "{problems:#?}\n{doc:#}");
    }

    #[test]
    fn each_figure_stands_beside_its_target_and_says_whether_it_is_met() {
        let cases = [
            case([0.58, 0.62, 0.66], 240.0, Some(20e6)),
            case([0.7, 0.7, 0.7], 300.0, None),
            case([0.7, 0.7, 0.7], 270.0, None),
            case([0.7, 0.7, 0.7], 900.0, Some(170.5e6)),
            case([0.1, 0.1, 0.1], 5000.0, None),
            case([0.86, 0.9, 0.95], 250.0, None),
        ];
        // The anchors but the sweep (which plays every bundled scenario).
        let mut all = of_cases(&cases);
        assert_eq!(all.len(), 4);
        assert_eq!(all[0].met, Some(false));
        assert!(
            all[0].line.contains("0.62 of bare actix's rate (0.58–0.66); the target: at least 0.85"),
            "{}",
            all[0].line
        );
        assert_eq!(all[1].met, Some(true));
        assert_eq!(all[2].met, Some(true), "{}", all[2].line);
        assert!(all[2].line.contains("0.90× the ns per handshake of 1,000"), "{}", all[2].line);
        assert_eq!(all[3].met, Some(false));
        assert!(all[3].line.contains("peaked at 170.5 MB; the target: under 150 MB"), "{}", all[3].line);
        let s = crate::bench::sweep::Swept { runs: 5800, events: 197_200, elapsed: Duration::from_millis(127) };
        let spread = |m: f64| Spread { min: m, median: m, max: m };
        let f = SweepSpreads {
            swept: spread(1.5e6),
            ceiling: spread(34e6),
            ratio: spread(0.044),
            with_log: spread(0.13),
            no_log: spread(0.16),
        };
        all.push(sweep_anchored(&s, &f, 3));
        assert_eq!(all[4].met, Some(false));
        let doc = json(&all);
        the_schema_holds(&doc);
        assert_eq!(doc["sweep"]["ratio"]["median"], 0.044);
        assert_eq!(doc["sweep"]["unjudged_ratio"]["with_log"]["median"], 0.13);
        assert_eq!(doc["sweep"]["unjudged_ratio"]["no_log"]["median"], 0.16);
        assert_eq!(doc["hundred_thousand_teammates"]["met"], false);
        assert_eq!(doc["shutdown_handshake"]["ratio"]["median"], 0.62);
        assert_eq!(doc["ten_thousand_in_flight"]["target_at_most"], 1.0);
        // A figure that could not be measured is neither met nor missed.
        let mut unmeasured = cases.clone();
        unmeasured[3]["peak_memory_bytes"] = Value::Null;
        all = of_cases(&unmeasured);
        assert_eq!(all[3].met, None);
        assert!(all[3].line.contains("unknown"));
    }
}
