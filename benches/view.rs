//! Drawing a run: the 50-teammate whole-team shutdown as SVG and as Mermaid.
//! The run itself happens once, outside the measurement (budget: under 50 ms
//! for the SVG). Its workers are alike, so the picture folds them into one
//! lane; `svg_unfolded` draws fifty workers whose names keep them apart
//! (`workerN`, not `worker-N`), every one on its own lane: the labels'
//! placement at its widest.

use criterion::{criterion_group, criterion_main, Criterion};
use handshake::scenario::{load_str, run_scenario, RunOptions};
use handshake::team::Outcome;
use handshake::view::{mermaid, model, svg, ViewOptions};

fn fifty_teammates() -> String {
    let mut s = String::from(
        r#"
name = "whole-team-shutdown-50"
about = "50 workers, each asked to stop at the same moment."
[policy]
latency = "1ms..20ms"
[[teammate]]
name = "worker"
count = 50
work = [{ shell = "cargo test", steps = 4, step_time = "500ms" }]
"#,
    );
    for i in 1..=50 {
        s.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
    }
    s
}

/// The same team, each worker named by hand so none is folded into another.
fn fifty_apart() -> String {
    let mut s = String::from(
        r#"
name = "whole-team-shutdown-50-apart"
about = "50 workers named apart, each asked to stop at the same moment."
[policy]
latency = "1ms..20ms"
"#,
    );
    for i in 1..=50 {
        s.push_str(&format!(
            "[[teammate]]\nname = \"worker{i}\"\nwork = [{{ shell = \"cargo test\", steps = 4, step_time = \"500ms\" }}]\n"
        ));
    }
    for i in 1..=50 {
        s.push_str(&format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker{i}\"\n"));
    }
    s
}

fn outcome(name: &str, toml: &str) -> Outcome {
    let scenario = load_str(name, toml).expect("a valid scenario");
    let mut report = run_scenario(&scenario, 1, RunOptions { keep_outcome: true, ..RunOptions::default() });
    report.outcome.take().expect("kept")
}

fn bench(c: &mut Criterion) {
    let outcome_folded = outcome("fifty.toml", &fifty_teammates());
    let outcome_apart = outcome("fifty-apart.toml", &fifty_apart());
    let opts = ViewOptions::titled("whole-team-shutdown-50");
    let mut g = c.benchmark_group("view_50_teammates");
    g.bench_function("svg", |b| b.iter(|| svg(&outcome_folded, &opts)));
    g.bench_function("svg_unfolded", |b| b.iter(|| svg(&outcome_apart, &opts)));
    g.bench_function("mermaid", |b| b.iter(|| mermaid(&outcome_folded, &opts)));
    g.bench_function("model_only", |b| b.iter(|| model::build(&outcome_folded, &opts)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
