//! The explorer on the model issue 11 measures against Stateright: a lead
//! shutting down N teammates over a lossy network (any one message may be
//! lost), each teammate rejecting the first request and approving the
//! second. The whole space is explored each iteration.
//!
//! Cases: N = 1, 2, 3 with every reduction on (symmetry and sleep sets) on
//! one thread; N = 3 without symmetry (what symmetry saves, side by side);
//! N = 3 on two threads (what `--jobs 2` gives). N = 4 takes seconds an
//! iteration; `handshake explore` measures it (docs/explore.md).

use criterion::{criterion_group, criterion_main, Criterion};
use handshake::explore::{explore, Bounds, Budgets};
use handshake::scenario::load_str;

#[path = "../tests/common/lossy.rs"]
mod lossy;
use lossy::lossy_shutdown;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("explore_lossy_shutdown");
    g.sample_size(10);
    let budgets = Budgets { drop: 1, ..Budgets::default() };
    let all = Bounds { max_states: 10_000_000, ..Bounds::default() };
    let cases = [
        (1, "sym", all),
        (2, "sym", all),
        (3, "sym", all),
        (3, "nosym", Bounds { symmetry: false, ..all }),
        (3, "sym-jobs2", Bounds { jobs: 2, ..all }),
    ];
    for (n, name, bounds) in cases {
        let scenario = load_str("lossy.toml", &lossy_shutdown(n)).expect("a valid scenario");
        let x = explore(&scenario, budgets, bounds);
        assert!(x.stopped_by.is_none() && x.counterexample.is_none());
        eprintln!("n = {n} {name}: {} states, {} unique, depth {}", x.states, x.unique, x.depth);
        g.bench_function(format!("{n}-teammates-drop-1-{name}"), |b| b.iter(|| explore(&scenario, budgets, bounds)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
