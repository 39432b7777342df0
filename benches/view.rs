//! Drawing a run: the 50-teammate whole-team shutdown as SVG and as Mermaid.
//! The run itself happens once, outside the measurement (budget: under 50 ms
//! for the SVG).

use criterion::{criterion_group, criterion_main, Criterion};
use handshake::scenario::{load_str, run_scenario, RunOptions};
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

fn bench(c: &mut Criterion) {
    let scenario = load_str("fifty.toml", &fifty_teammates()).expect("a valid scenario");
    let mut report = run_scenario(&scenario, 1, RunOptions { keep_outcome: true, ..RunOptions::default() });
    let outcome = report.outcome.take().expect("kept");
    let opts = ViewOptions::titled("whole-team-shutdown-50");
    let mut g = c.benchmark_group("view_50_teammates");
    g.bench_function("svg", |b| b.iter(|| svg(&outcome, &opts)));
    g.bench_function("mermaid", |b| b.iter(|| mermaid(&outcome, &opts)));
    g.bench_function("model_only", |b| b.iter(|| model::build(&outcome, &opts)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
