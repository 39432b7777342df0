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

/// Exploring by hand (`explore --serve`): what the server does for a click
/// on scenario 41 at N = 6 with any message lost (issue 43 asks under
/// 50 ms): the state the path leads to, told as JSON; and the stepper page
/// of the path that the page then loads. The path takes the first choice
/// at each step to the end (every teammate shut down, each after a
/// rejection): each click replays its path whole.
fn by_hand(c: &mut Criterion) {
    use handshake::explore::by_hand::ByHand;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("scenarios/41-lossy-re-ask.toml")).unwrap();
    let mut scenario = load_str("41-at-6.toml", &text.replace("count = 3", "count = 6")).expect("a valid scenario");
    scenario.expects.clear();
    let h = ByHand::new(&scenario, &scenario.name, Budgets { drop: Budgets::ANY, ..Budgets::default() });
    let mut path = Vec::new();
    loop {
        let v = h.view(&path).unwrap();
        let n = v["choices"].as_array().unwrap().len();
        if n == 0 {
            break;
        }
        path.push(0);
    }
    eprintln!("by hand, 41 at N = 6, --drop any: a path of {} steps", path.len());
    let mut g = c.benchmark_group("explore_by_hand");
    g.bench_function("41-at-6-click", |b| b.iter(|| h.view(&path).unwrap().to_string()));
    g.bench_function("41-at-6-stepper", |b| {
        b.iter(|| {
            let s = h.schedule(&path).unwrap();
            handshake::view::page::stepping_page(&scenario, s.seed, Some(s), "by hand", "").unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench, by_hand);
criterion_main!(benches);
