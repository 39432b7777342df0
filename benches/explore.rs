//! The explorer on the model issue 11 measures against Stateright: a lead
//! shutting down N teammates over a lossy network (any one message may be
//! lost), each teammate rejecting the first request and approving the
//! second. The whole space is explored each iteration.

use criterion::{criterion_group, criterion_main, Criterion};
use handshake::explore::{explore, Bounds, Budgets};
use handshake::scenario::load_str;

/// The bundled scenario 29 with `n` teammates instead of three.
fn lossy_shutdown(n: usize) -> String {
    let mut s = format!(
        "name = \"lossy-shutdown-{n}\"\nabout = \"{n} teammates, each rejects once\"\n\
         [[teammate]]\nname = \"worker\"\ncount = {n}\non_shutdown = [\"reject\", \"approve\"]\n\
         reject_reason = \"still busy\"\n"
    );
    for at in ["1s", "6s"] {
        for i in 1..=n {
            s.push_str(&format!("[[step]]\nat = \"{at}\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("explore_lossy_shutdown");
    g.sample_size(10);
    for n in [1, 2] {
        let scenario = load_str("lossy.toml", &lossy_shutdown(n)).expect("a valid scenario");
        let budgets = Budgets { drop: 1, ..Budgets::default() };
        let x = explore(&scenario, budgets, Bounds { max_states: 10_000_000, ..Bounds::default() });
        assert!(x.stopped_by.is_none() && x.counterexample.is_none());
        eprintln!("n = {n}: {} states, {} unique, depth {}", x.states, x.unique, x.depth);
        g.bench_function(format!("{n}-teammates-drop-1"), |b| {
            b.iter(|| explore(&scenario, budgets, Bounds { max_states: 10_000_000, ..Bounds::default() }))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
