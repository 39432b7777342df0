//! `handshake bench`: handshakes per second, against a bare actix baseline
//! measured in the same process, the same run.

use super::anchors::Spread;
use super::bad_input::{Problem, Refusal};
use super::{noun, plural, Format, EXIT_FAILED, EXIT_OK};
use crate::bench::{baseline, latencies_of, percentile, protocol_of, Mailbox, Measured, Protocol, Shape};
use crate::process::{peak_memory, reset_peak_memory};
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Teammates the lead talks to
    #[arg(long, default_value_t = 1)]
    pub teammates: u32,
    /// Requests kept in flight per teammate (teammates × in-flight outstanding at once)
    #[arg(long, default_value_t = 1)]
    pub in_flight: u32,
    /// Handshakes to complete in each measurement (at least teammates × in-flight)
    #[arg(long, default_value_t = 1_000_000)]
    pub handshakes: u64,
    /// Handshakes timed one by one for the latency percentiles (a separate pass)
    #[arg(long, default_value_t = 200_000)]
    pub latency_sample: u64,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Measurements of each side, alternating protocol and baseline; the
    /// medians are reported with the min and max, the ratio is the median
    /// over the pairs, and a spread wider than a third is warned about
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Where messages wait: the actors' mailboxes (memory), or file inboxes
    /// (file: each message appended to a JSON Lines file and read back)
    #[arg(long, value_enum, default_value = "memory")]
    pub mailbox: MailboxArg,
    // The handshake measured; its help, made from the protocols, says how each is measured.
    #[arg(long, default_value = "shutdown", value_parser = protocol_parser(), help = protocol_help())]
    pub protocol: Protocol,
    /// Run the standard cases of docs/performance.md's suite table one after another, each in
    /// a fresh process so that each reports its own peak memory
    /// (1 teammate; 1,000 in flight; 10,000 in flight; 100,000 teammates; then
    /// 1 teammate through file inboxes, at most 100,000 handshakes)
    #[arg(long, conflicts_with_all = ["teammates", "in_flight", "handshakes", "mailbox", "protocol"])]
    pub suite: bool,
    /// The suite's cases instead of docs/performance.md's, as TEAMMATESxIN_FLIGHTxHANDSHAKES,...
    /// (for tests of the suite itself)
    #[arg(long, hide = true, requires = "suite", value_parser = parse_cases)]
    pub cases: Option<Cases>,
}

/// `--protocol`'s values: every protocol's name.
fn protocol_parser() -> impl clap::builder::TypedValueParser<Value = Protocol> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(crate::protocol::Kind::ALL.map(|k| k.as_str()))
        // Only a protocol's name gets past the possible values.
        .map(|name| crate::protocol::Kind::parse(&name).expect("a protocol's name"))
}

/// `--protocol`'s help, which says what the bench does with each protocol.
fn protocol_help() -> String {
    let each: Vec<String> = crate::protocol::Kind::ALL
        .iter()
        .map(|k| {
            if k.spec().asker.is_lead() {
                format!("{k} (the lead asks, every teammate says no to stay free for the next round)")
            } else {
                format!("{k} (teammates ask and wait, the lead says no; one in flight per teammate)")
            }
        })
        .collect();
    format!("The handshake measured: {}", each.join(", "))
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailboxArg {
    Memory,
    File,
}

impl MailboxArg {
    fn mailbox(self) -> Mailbox {
        match self {
            MailboxArg::Memory => Mailbox::Memory,
            MailboxArg::File => Mailbox::File,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            MailboxArg::Memory => "memory",
            MailboxArg::File => "file",
        }
    }
}

/// The cases a suite measures.
#[derive(Clone, Debug)]
pub struct Cases(pub Vec<Shape>);

fn parse_cases(s: &str) -> Result<Cases, String> {
    let shape = |c: &str| -> Result<Shape, String> {
        let n: Vec<u64> = c
            .split('x')
            .map(|n| n.trim().parse().map_err(|_| format!("{c:?}: write 1000x1x100000")))
            .collect::<Result<_, _>>()?;
        match n.as_slice() {
            [t, f, h] if *t >= 1 && *f >= 1 && *h >= 1 && *t <= u32::MAX as u64 && *f <= u32::MAX as u64 => {
                if let Some(why) = times_the_set_up(*h, t * f) {
                    return Err(format!("{c:?}: handshakes {why}"));
                }
                Ok(Shape { teammates: *t as u32, in_flight: *f as u32, handshakes: *h })
            }
            _ => Err(format!("{c:?}: write teammates x in-flight x handshakes, each at least 1, e.g. 1000x1x100000")),
        }
    };
    s.split(',').map(shape).collect::<Result<Vec<_>, _>>().map(Cases)
}

/// One case measured: the medians of the protocol's and the baseline's runs,
/// latency percentiles from a separate pass, and the protocol's peak memory.
struct Case {
    /// The handshake measured.
    kind: Protocol,
    shape: Shape,
    protocol: Measured,
    baseline: Measured,
    /// Protocol rate over baseline rate, the median over back-to-back pairs.
    ratio: f64,
    /// How far the repeats spread: the protocol's and the baseline's rates
    /// and the pairs' ratios, each as min / median / max.
    spread: [Spread; 3],
    /// Measurements of each side (`--repeat`).
    runs: u32,
    p50: Duration,
    p99: Duration,
    max: Duration,
    timed: usize,
    peak: Option<u64>,
}

/// What to say when a figure's repeats spread wider than a third of it.
fn spread_warning(spread: &[Spread; 3], repeat: u32) -> Option<String> {
    let names = ["the protocol's rate", "the baseline's rate", "the ratio"];
    let (name, widest) = names.iter().zip(spread).max_by(|a, b| a.1.width().total_cmp(&b.1.width()))?;
    (widest.width() > 1.0 / 3.0).then(|| {
        format!(
            "{name} spread by {:.0} % of its median over {repeat} runs (more than a third): the machine is busy or \
             its speed drifts; pin it (taskset -c 1), give more --repeat, or measure instructions (docs/performance.md)",
            widest.width() * 100.0
        )
    })
}

/// A run at the median rate ([`Spread::of`]'s: with an even count, the
/// mean of the two middle rates), for the same handshakes.
fn median(runs: Vec<Measured>) -> Measured {
    let handshakes = runs.first().map_or(0, |r| r.handshakes);
    let rate = Spread::of(runs.iter().map(Measured::per_second).collect()).median;
    Measured { handshakes, elapsed: Duration::from_secs_f64(handshakes as f64 / rate) }
}

/// Why `handshakes` measure the load's set-up rather than its handshakes
/// (fewer than the `outstanding` in flight), if they do.
fn times_the_set_up(handshakes: u64, outstanding: u64) -> Option<String> {
    (handshakes < outstanding).then(|| {
        format!(
            "{handshakes} is fewer than the {outstanding} handshakes in flight (teammates × in-flight): such a \
             measurement times the load's set-up, not its handshakes; give at least {outstanding}"
        )
    })
}

fn measure(
    protocol: Protocol,
    shape: Shape,
    mailbox: Mailbox,
    latency_sample: u64,
    repeat: u32,
    say: &dyn Fn(&str),
) -> Case {
    // A short warm-up of both sides first (allocator, page faults, caches),
    // then protocol and baseline alternate so a noisy moment hits both; the
    // medians are compared. The peak memory window opens just before the
    // first measured protocol run, so the peak is the protocol's own.
    let warm = Shape { handshakes: (shape.handshakes / 10).clamp(1, 100_000), ..shape };
    say("warm-up");
    protocol_of(protocol, warm, mailbox);
    baseline(warm);
    let mut ps = Vec::new();
    let mut bs = Vec::new();
    let mut peak = None;
    for i in 0..repeat.max(1) {
        say(&format!("protocol, run {} of {repeat}", i + 1));
        if i == 0 {
            reset_peak_memory();
        }
        ps.push(protocol_of(protocol, shape, mailbox));
        if i == 0 {
            peak = peak_memory();
        }
        say(&format!("baseline (bare actix do_send ping-pong, same messages), run {} of {repeat}", i + 1));
        bs.push(baseline(shape));
    }
    // Each protocol run is paired with the baseline run right after it, a
    // second apart, and the ratio is the median over the pairs: on a machine
    // whose speed drifts over minutes, a pair sees the same machine, while
    // two medians taken separately can each land in a different phase.
    let ratios: Vec<f64> = ps.iter().zip(&bs).map(|(p, b)| p.per_second() / b.per_second()).collect();
    let spread = [
        Spread::of(ps.iter().map(Measured::per_second).collect()),
        Spread::of(bs.iter().map(Measured::per_second).collect()),
        Spread::of(ratios),
    ];
    let ratio = spread[2].median;
    say("latency (each handshake timed, separate pass)");
    let lat =
        latencies_of(protocol, Shape { handshakes: latency_sample.min(shape.handshakes).max(1), ..shape }, mailbox);
    Case {
        kind: protocol,
        shape,
        protocol: median(ps),
        baseline: median(bs),
        ratio,
        spread,
        runs: repeat.max(1),
        p50: percentile(&lat, 0.50),
        p99: percentile(&lat, 0.99),
        max: lat.last().copied().unwrap_or_default(),
        timed: lat.len(),
        peak,
    }
}

fn case_json(c: &Case) -> serde_json::Value {
    serde_json::json!({
        "handshake": c.kind.as_str(),
        "teammates": c.shape.teammates,
        "in_flight": c.shape.in_flight,
        "handshakes": c.protocol.handshakes,
        "protocol": {"per_second": c.protocol.per_second(), "ns_per_handshake": c.protocol.nanos_each()},
        "baseline": {"per_second": c.baseline.per_second(), "ns_per_round_trip": c.baseline.nanos_each()},
        "ratio": c.ratio,
        "spread": {
            "runs": c.runs,
            "protocol_per_second": c.spread[0].json(),
            "baseline_per_second": c.spread[1].json(),
            "ratio": c.spread[2].json(),
            "warning": spread_warning(&c.spread, c.runs),
        },
        "latency_us": {"p50": micros(c.p50), "p99": micros(c.p99), "max": micros(c.max), "samples": c.timed},
        "peak_memory_bytes": c.peak,
        "release_build": !cfg!(debug_assertions),
        "profile": env!("HANDSHAKE_PROFILE"),
    })
}

/// What to say about a build whose figures are not the README's: those come
/// from the `perf` profile (fat LTO, one codegen unit).
fn build_warning(profile: &str, debug_assertions: bool) -> Option<String> {
    if debug_assertions {
        return Some(format!(
            "this is a debug build ({profile}); figures are only meaningful with `cargo run --profile perf -- bench`"
        ));
    }
    match profile {
        "perf" | "bench" => None,
        other => Some(format!(
            "built with the `{other}` profile, without link-time optimisation: expect lower figures than the \
             README's, which come from `cargo run --profile perf -- bench`"
        )),
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The most rounds a bench repeats: a spread is a handful of them, and a
/// typo of a few more digits would run for days.
const MOST_REPEATS: u32 = 1000;

pub fn main(a: BenchArgs) -> i32 {
    let zero = [
        ("--teammates", a.teammates == 0),
        ("--in-flight", a.in_flight == 0),
        ("--handshakes", a.handshakes == 0),
        ("--repeat", a.repeat == 0),
        ("--latency-sample", a.latency_sample == 0),
    ];
    if let Some((flag, _)) = zero.into_iter().find(|(_, zero)| *zero) {
        let why = "--teammates, --in-flight, --handshakes, --repeat and --latency-sample must be at least 1";
        return Refusal::line(why, Problem::in_flag(flag, why)).tell(a.format);
    }
    // As a scenario's team: past it the lead's tables alone outgrow memory.
    let most = crate::format::file::limits::MAX_TEAMMATES;
    let outstanding = u64::from(a.teammates) * u64::from(a.in_flight);
    let over = [("--teammates", u64::from(a.teammates) > most), ("--in-flight", outstanding > most * 10)];
    if let Some((flag, _)) = over.into_iter().find(|(_, over)| *over) {
        let why = format!(
            "at most {most} --teammates, and at most {} handshakes in flight (--teammates × --in-flight), are \
             benchmarked: a team as large as a scenario may have",
            most * 10
        );
        return Refusal::line(why.clone(), Problem::in_flag(flag, why)).tell(a.format);
    }
    if let Some(why) = times_the_set_up(a.handshakes, outstanding).filter(|_| !a.suite) {
        let why = format!("--handshakes {why}");
        return Refusal::line(why.clone(), Problem::in_flag("--handshakes", why)).tell(a.format);
    }
    if a.repeat > MOST_REPEATS {
        let why = format!("--repeat {} is more rounds than a spread needs: at most {MOST_REPEATS}", a.repeat);
        return Refusal::line(why.clone(), Problem::in_flag("--repeat", why)).tell(a.format);
    }
    if a.protocol.spec().blocks_asker && a.in_flight > 1 {
        let why = format!(
            "--protocol {} keeps one {} in flight per teammate (a teammate waits for its {}'s answer): leave \
             --in-flight at 1 and give more --teammates",
            a.protocol, a.protocol, a.protocol
        );
        return Refusal::line(why.clone(), Problem::in_flag("--in-flight", why)).tell(a.format);
    }
    if let Some(warning) = build_warning(env!("HANDSHAKE_PROFILE"), cfg!(debug_assertions)) {
        let word = crate::color::paint("warning", crate::color::Paint::Warn, crate::color::stderr());
        eprintln!("{word}: {warning}");
    }
    let say = |what: &str| eprintln!("  measuring {what}…");
    if a.suite {
        return suite(&a);
    }
    let shape = Shape { teammates: a.teammates, in_flight: a.in_flight, handshakes: a.handshakes };
    if a.format == Format::Text {
        println!(
            "handshake bench, {}: {} × {} in flight = {} outstanding, {} per measurement{}",
            a.protocol.as_str(),
            plural(a.teammates.into(), "teammate"),
            a.in_flight,
            a.teammates as u64 * a.in_flight as u64,
            plural(a.handshakes, "handshake"),
            if a.mailbox == MailboxArg::File { ", file inboxes" } else { "" }
        );
    }
    let c = measure(a.protocol, shape, a.mailbox.mailbox(), a.latency_sample, a.repeat, &say);
    match a.format {
        Format::Text => {
            let (p, b) = (c.protocol, c.baseline);
            let [ps, bs, rs] = c.spread;
            // One run has no spread to show: said, not printed as min = max.
            let one = c.runs < 2;
            let m = |x: f64| format!("{:.2} M", x / 1e6);
            let spread = |s: Spread, f: &dyn Fn(f64) -> String| {
                if one {
                    "one run: no spread measured".to_string()
                } else {
                    format!("min {} · max {}", f(s.min), f(s.max))
                }
            };
            // Small ratios (file inboxes) keep their significant digits.
            let r = |x: f64| if x < 0.1 { format!("{x:.3}") } else { format!("{x:.2}") };
            println!(
                "  protocol   {:>12.0} handshakes/s  {:>7.0} ns/handshake   {}{}",
                p.per_second(),
                p.nanos_each(),
                spread(ps, &m),
                if one { String::new() } else { format!(" over {} runs", c.runs) }
            );
            println!(
                "  baseline   {:>12.0} round trips/s {:>7.0} ns/round trip  {}",
                b.per_second(),
                b.nanos_each(),
                spread(bs, &m)
            );
            println!(
                "  ratio      {:>12} of the baseline's rate (median over {} back-to-back {}; {})",
                r(c.ratio),
                c.runs,
                if one { "pair" } else { "pairs" },
                spread(rs, &r)
            );
            println!(
                "  build      the `{}` profile{}",
                env!("HANDSHAKE_PROFILE"),
                if matches!(env!("HANDSHAKE_PROFILE"), "perf" | "bench") {
                    ""
                } else {
                    " (docs/performance.md's figures come from `perf`)"
                }
            );
            if let Some(w) = spread_warning(&c.spread, c.runs) {
                let word = crate::color::paint("warning", crate::color::Paint::Warn, crate::color::stdout());
                println!("  {word}: {w}");
            }
            println!(
                "  latency    p50 {:.2} µs   p99 {:.2} µs   max {:.1} µs   ({} timed)",
                micros(c.p50),
                micros(c.p99),
                micros(c.max),
                plural(c.timed as u64, "handshake")
            );
            match c.peak {
                Some(bytes) => {
                    println!("  memory     peak {:.1} MB resident during the protocol run", bytes as f64 / 1e6)
                }
                None => println!("  memory     peak unknown (no /proc/self/status here)"),
            }
            if p.handshakes < a.handshakes {
                println!(
                    "  note: only {} of {} {} completed",
                    p.handshakes,
                    a.handshakes,
                    noun(a.handshakes, "handshake")
                );
            }
        }
        Format::Json => {
            let mut doc = case_json(&c);
            doc["mailbox"] = a.mailbox.as_str().into();
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default())
        }
    }
    EXIT_OK
}

/// docs/performance.md's suite table. Each case runs in a fresh process (this program, as
/// `bench --format json` for that one shape): a process's peak memory only
/// grows, and the allocator keeps the heap a large case leaves behind, so in
/// one process every case after the first would report its predecessor's peak.
fn suite(a: &BenchArgs) -> i32 {
    let standard = [
        Shape { teammates: 1, in_flight: 1, handshakes: 1_000_000 },
        Shape { teammates: 1000, in_flight: 1, handshakes: 1_000_000 },
        Shape { teammates: 1000, in_flight: 10, handshakes: 1_000_000 },
        Shape { teammates: 100_000, in_flight: 1, handshakes: 100_000 },
    ];
    let shapes = a.cases.as_ref().map_or(standard.to_vec(), |c| c.0.clone());
    let mut runs: Vec<(Protocol, Shape, MailboxArg)> =
        shapes.iter().map(|s| (Protocol::Shutdown, *s, MailboxArg::Memory)).collect();
    if a.cases.is_none() {
        // The suite table (docs/performance.md) ends with the first case again through file
        // inboxes: file mode's cost as a row of its own, beside the memory
        // figure it is paid on (fewer handshakes: each is far dearer); then
        // the plan handshake, one teammate and a thousand.
        runs.push((Protocol::Shutdown, Shape { handshakes: 100_000, ..standard[0] }, MailboxArg::File));
        runs.push((Protocol::Plan, standard[0], MailboxArg::Memory));
        runs.push((Protocol::Plan, standard[1], MailboxArg::Memory));
    }
    let mut cases = Vec::new();
    for (i, (protocol, shape, mailbox)) in runs.iter().enumerate() {
        eprintln!(
            "case {}/{}: {}, {} × {} in flight, {} mailbox",
            i + 1,
            runs.len(),
            protocol.as_str(),
            plural(shape.teammates.into(), "teammate"),
            shape.in_flight,
            mailbox.as_str()
        );
        match measure_in_child(*protocol, *shape, *mailbox, a) {
            Ok(case) => cases.push(case),
            Err(e) => {
                eprintln!("error: case {} failed: {e}", i + 1);
                return EXIT_FAILED;
            }
        }
    }
    // The standard suite's figures beside their anchors; a suite of other
    // cases has none to stand beside.
    let anchors = a.cases.is_none().then(|| super::anchors::standard(&cases, a.repeat));
    match a.format {
        Format::Text => {
            print_table(&cases);
            if let Some(anchors) = &anchors {
                super::anchors::print(anchors);
            }
        }
        Format::Json => {
            let doc = serde_json::json!({
                "cases": cases,
                "anchors": anchors.as_deref().map(super::anchors::json),
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default())
        }
    }
    EXIT_OK
}

/// Measures one shape in a new process of this program and reads its report.
/// The child's progress goes straight to our stderr.
fn measure_in_child(
    protocol: Protocol,
    shape: Shape,
    mailbox: MailboxArg,
    a: &BenchArgs,
) -> Result<serde_json::Value, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to start it again: {e}"))?;
    let args = [
        "bench".to_string(),
        format!("--teammates={}", shape.teammates),
        format!("--in-flight={}", shape.in_flight),
        format!("--handshakes={}", shape.handshakes),
        format!("--latency-sample={}", a.latency_sample),
        format!("--repeat={}", a.repeat),
        format!("--mailbox={}", mailbox.as_str()),
        format!("--protocol={}", protocol.as_str()),
        "--format=json".to_string(),
    ];
    let out = std::process::Command::new(&exe)
        .args(&args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{} {} ended with {}", exe.display(), args.join(" "), out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("its report is not JSON: {e}"))
}

fn print_table(cases: &[serde_json::Value]) {
    // Which build measured: the figures compare with docs/performance.md's
    // only from the `perf` profile (the help promises this line).
    println!("build: the `{}` profile", env!("HANDSHAKE_PROFILE"));
    println!(
        "| handshake, teammates × in flight, mailbox | protocol handshakes/s | ns/handshake | baseline round trips/s | ratio (min–max) | p50 µs | p99 µs | max µs | peak MB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for c in cases {
        let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
        let ratio = &c["spread"]["ratio"];
        println!(
            "| {}, {} × {}, {} | {:.0} | {:.0} | {:.0} | {:.2} ({:.2}–{:.2}) | {:.2} | {:.2} | {:.1} | {} |",
            c["handshake"].as_str().unwrap_or("shutdown"),
            c["teammates"],
            c["in_flight"],
            c["mailbox"].as_str().unwrap_or("memory"),
            f(&c["protocol"]["per_second"]),
            f(&c["protocol"]["ns_per_handshake"]),
            f(&c["baseline"]["per_second"]),
            f(&c["ratio"]),
            f(&ratio["min"]),
            f(&ratio["max"]),
            f(&c["latency_us"]["p50"]),
            f(&c["latency_us"]["p99"]),
            f(&c["latency_us"]["max"]),
            c["peak_memory_bytes"].as_f64().map_or("?".to_string(), |b| format!("{:.1}", b / 1e6))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{build_warning, median, spread_warning, Measured, Spread};
    use std::time::Duration;

    #[test]
    fn a_spread_wider_than_a_third_is_warned_about_and_named() {
        let even = Spread::of(vec![0.75, 0.25]);
        assert_eq!((even.min, even.median, even.max), (0.25, 0.5, 0.75), "two runs: their mean, not the better");
        let one = |secs: f64| Measured { handshakes: 1000, elapsed: Duration::from_secs_f64(secs) };
        let m = median(vec![one(1.0), one(0.5)]);
        assert!((m.per_second() - 1500.0).abs() < 1e-6, "{}", m.per_second());
        assert_eq!(median(vec![one(1.0), one(0.5), one(0.25)]).per_second(), 2000.0);
        let narrow = Spread::of(vec![1.0, 1.1, 1.2]);
        assert_eq!((narrow.min, narrow.median, narrow.max), (1.0, 1.1, 1.2));
        assert!(spread_warning(&[narrow; 3], 3).is_none(), "0.2 / 1.1 is under a third");
        // The three runs: 1.96, 1.38 and 0.99 M handshakes/s.
        let wide = Spread::of(vec![1.96e6, 1.38e6, 0.99e6]);
        let w = spread_warning(&[wide, narrow, narrow], 3).expect("70 % is wider than a third");
        assert!(w.starts_with("the protocol's rate spread by 70 %") && w.contains("over 3 runs"), "{w}");
        assert!(spread_warning(&[narrow, narrow, Spread::of(vec![0.4, 0.6, 0.65])], 5)
            .unwrap()
            .starts_with("the ratio"));
    }

    #[test]
    fn the_bench_says_when_its_build_is_not_the_one_the_readme_measured() {
        assert!(build_warning("debug", true).is_some_and(|w| w.contains("--profile perf")));
        assert!(build_warning("release", false).is_some_and(|w| w.contains("--profile perf")));
        assert_eq!(build_warning("perf", false), None);
    }
}
