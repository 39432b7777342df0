//! Helpers the integration tests share. Each test file compiles this module
//! on its own and uses only part of it.
#![allow(dead_code)]

pub mod binary;
pub mod lossy;
pub mod terminal;

use handshake::scenario::{load_file, load_str, run_scenario, Report, RunOptions};
use handshake::team::Outcome;
use std::path::{Path, PathBuf};

/// The bundled scenario files, sorted as the runner lists them.
pub fn bundled_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no bundled scenarios in {}", dir.display());
    v
}

/// Loads a scenario written inline and runs it with `seed`, keeping the outcome.
pub fn run_toml(toml: &str, seed: u64) -> (Report, Outcome) {
    let s = match load_str("inline.toml", toml) {
        Ok(s) => s,
        Err(e) => panic!("scenario must load: {e:?}"),
    };
    let mut r = run_scenario(&s, seed, RunOptions { keep_outcome: true, ..RunOptions::default() });
    let o = r.outcome.take().expect("kept");
    (r, o)
}

/// Runs the bundled scenario `scenarios/<stem>.toml` on its own seed,
/// keeping the outcome.
pub fn bundled(stem: &str) -> (Report, Outcome) {
    run_bundled(stem, None)
}

/// [`bundled`], mirroring file inboxes to `inbox_dir` when given.
pub fn run_bundled(stem: &str, inbox_dir: Option<&Path>) -> (Report, Outcome) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{stem}.toml"));
    let s = load_file(&path).unwrap_or_else(|e| panic!("{stem} must load: {e:?}"));
    let opts = RunOptions { keep_outcome: true, inbox_dir: inbox_dir.map(Path::to_path_buf), ..RunOptions::default() };
    let mut r = run_scenario(&s, s.default_seed(), opts);
    let o = r.outcome.take().expect("kept");
    (r, o)
}

/// Whether the oracle reported a violation of `invariant`.
pub fn reports(r: &Report, invariant: &str) -> bool {
    r.violations.iter().any(|v| v.starts_with(invariant))
}

/// The run's events as sentences, for failure messages.
pub fn dump(o: &Outcome) -> String {
    o.events.iter().map(|e| e.describe(&o.names)).collect::<Vec<_>>().join("\n")
}

/// A valid scenario whose expectation is wrong on every seed: alice approves
/// the shutdown, but the file claims the request expired.
pub const WRONG_EXPECTATION: &str = r#"name = "wrong-expectation"
about = "Alice approves the shutdown, but this file claims the request expired."

[[teammate]]
name = "alice"
on_shutdown = "approve"

[[step]]
at = "1s"
do = "shutdown"
to = "alice"
label = "stop-alice"

[[expect]]
request = "stop-alice"
status = "expired"
"#;

/// A run's history as `run --trace` writes it (its header line, then a line
/// an event), made through the library: the trace two runs are compared by.
pub fn library_trace(s: &handshake::scenario::Scenario, seed: u64) -> String {
    let report = run_scenario(s, seed, RunOptions { keep_outcome: true, ..RunOptions::default() });
    let outcome = report.outcome.expect("keep_outcome keeps the outcome");
    let header = handshake::history::header(&s.name, seed, &outcome, s.policy(), &s.require_plan());
    let mut out = Vec::new();
    handshake::history::write(&mut out, &header, &outcome).expect("writes to memory");
    String::from_utf8(out).expect("UTF-8")
}
