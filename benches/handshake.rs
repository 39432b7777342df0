//! Handshake throughput, the protocol beside a bare actix baseline in the same
//! run. `cargo bench` prints each case's time per run of 1,000,000 handshakes and
//! the throughput in handshakes per second, then each protocol's ratio to bare
//! actix from back-to-back pairs and 10,000 in flight beside 1,000, each with
//! its target ("beside its anchor: ..."). 100,000 teammates' peak memory is
//! `handshake bench --suite`'s: a process's peak only grows.
//!
//! Cases (see docs/performance.md):
//! 1. one teammate, sequential handshakes through the full protocol;
//! 2. 1,000 teammates, all in flight at once;
//! 3. 10,000 requests in flight with deadlines armed (1,000 teammates × 10);
//! 4. the baseline: bare actix do_send ping-pong, same messages, each shape;
//! 5. a whole scenario end to end (100 teammates shut down);
//! 6. file mode's cost: case 1 through file inboxes (100,000 handshakes a run);
//! 7. the plan handshake: one teammate and 1,000, each submitting plans the
//!    lead rejects (one in flight per teammate).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use handshake::bench::{baseline, protocol, protocol_in, protocol_of, Mailbox, Measured, Protocol, Shape};
use handshake::scenario::{load_file, run_scenario, RunOptions};
use std::path::Path;
use std::time::Duration;

const HANDSHAKES: u64 = 1_000_000;

fn timed(iters: u64, f: impl Fn() -> Measured) -> Duration {
    (0..iters).map(|_| f().elapsed).sum()
}

fn throughput(c: &mut Criterion) {
    let mut g = c.benchmark_group("handshakes");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(2));
    let shapes = [
        ("1-teammate-sequential", Shape { teammates: 1, in_flight: 1, handshakes: HANDSHAKES }),
        ("1000-teammates-in-flight", Shape { teammates: 1000, in_flight: 1, handshakes: HANDSHAKES }),
        ("10000-in-flight", Shape { teammates: 1000, in_flight: 10, handshakes: HANDSHAKES }),
    ];
    g.throughput(Throughput::Elements(HANDSHAKES));
    for (name, shape) in shapes {
        g.bench_function(BenchmarkId::new("protocol", name), |b| b.iter_custom(|n| timed(n, || protocol(shape))));
        g.bench_function(BenchmarkId::new("baseline", name), |b| b.iter_custom(|n| timed(n, || baseline(shape))));
    }
    g.finish();
    // Criterion times each side alone; the ratio, the anchor's own figure,
    // is taken here from back-to-back pairs, so it shows in every run that
    // measures this group.
    if !handshake::cli::anchors::bench_wants("handshakes") {
        return;
    }
    let mut ns = Vec::new();
    for (name, shape) in shapes {
        let pairs = paired(|| protocol(shape), || baseline(shape));
        ns.push(median(pairs.iter().map(|(p, _)| p.nanos_each()).collect()));
        say_ratio(&format!("shutdown, {name}"), &pairs);
    }
    eprintln!(
        "beside its anchor: 10,000 in flight costs {:.2}× the ns per handshake of 1,000 (the target: no dearer)",
        ns[2] / ns[1]
    );
}

/// Five back-to-back pairs of the protocol and bare actix.
fn paired(p: impl Fn() -> Measured, b: impl Fn() -> Measured) -> Vec<(Measured, Measured)> {
    (0..5).map(|_| (p(), b())).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The protocol's rate over bare actix's, median and range over the pairs.
fn say_ratio(what: &str, pairs: &[(Measured, Measured)]) {
    let mut r: Vec<f64> = pairs.iter().map(|(p, b)| p.per_second() / b.per_second()).collect();
    r.sort_by(f64::total_cmp);
    eprintln!(
        "beside its anchor: {what}: {:.2} of bare actix's rate ({:.2}–{:.2} over {} back-to-back pairs; the target: at least {})",
        r[r.len() / 2],
        r[0],
        r[r.len() - 1],
        r.len(),
        handshake::cli::anchors::HANDSHAKE_TARGET
    );
}

/// Every message appended to a JSON Lines file and read back: what file
/// inboxes cost beside case 1's memory mailboxes.
fn file_inboxes(c: &mut Criterion) {
    const FILE_HANDSHAKES: u64 = 100_000;
    let mut g = c.benchmark_group("handshakes-file-inboxes");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(FILE_HANDSHAKES));
    let shape = Shape { teammates: 1, in_flight: 1, handshakes: FILE_HANDSHAKES };
    g.bench_function(BenchmarkId::new("protocol", "1-teammate-sequential-file"), |b| {
        b.iter_custom(|n| timed(n, || protocol_in(shape, Mailbox::File)))
    });
    g.finish();
}

fn scenario(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/21-whole-team-shutdown.toml");
    let s = match load_file(&path) {
        Ok(s) => s,
        Err(e) => panic!("the bundled scenario must load: {e:?}"),
    };
    let mut g = c.benchmark_group("scenario");
    g.sample_size(20);
    g.throughput(Throughput::Elements(100));
    g.bench_function("whole-team-shutdown-100", |b| b.iter(|| run_scenario(&s, 1, RunOptions::default())));
    g.finish();
}

/// The plan handshake beside the shutdown one: teammates ask, the lead answers.
fn plans(c: &mut Criterion) {
    let mut g = c.benchmark_group("plan-handshakes");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(HANDSHAKES));
    let shapes = [
        ("1-teammate-sequential", Shape { teammates: 1, in_flight: 1, handshakes: HANDSHAKES }),
        ("1000-teammates-in-flight", Shape { teammates: 1000, in_flight: 1, handshakes: HANDSHAKES }),
    ];
    for (name, shape) in shapes {
        g.bench_function(BenchmarkId::new("protocol", name), |b| {
            b.iter_custom(|n| timed(n, || protocol_of(Protocol::Plan, shape, Mailbox::Memory)))
        });
    }
    g.finish();
    if !handshake::cli::anchors::bench_wants("plan-handshakes") {
        return;
    }
    for (name, shape) in shapes {
        say_ratio(
            &format!("plan, {name}"),
            &paired(|| protocol_of(Protocol::Plan, shape, Mailbox::Memory), || baseline(shape)),
        );
    }
}

criterion_group!(benches, throughput, file_inboxes, scenario, plans);
criterion_main!(benches);
