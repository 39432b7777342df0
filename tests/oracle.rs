//! The oracle as its own layer: one oracle whether fed event by event (as
//! the explorer feeds it) or a whole log (as the runner does), and a layer
//! that the explorer and the runtime use without depending on the scenario
//! format above them.

use handshake::scenario::discover::expand;
use handshake::scenario::load_file;
use std::path::{Path, PathBuf};

#[test]
fn the_bundled_scenarios_are_judged_the_same_event_by_event() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"));
    let files = expand(&[dir]).unwrap();
    assert!(files.len() >= 29, "{files:?}");
    for f in &files {
        let s = load_file(f).unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
        for seed in [s.default_seed(), 1, 2] {
            let o = handshake::team::run(s.team_spec(seed, None));
            let parted = handshake::oracle::watcher_parts_from_log(&o, s.policy(), &s.require_plan());
            assert_eq!(parted, None, "{}, seed {seed}", f.display());
        }
    }
}

/// The source files under `src/<dir>`, with the lines that name the
/// scenario layer (outside the file's unit tests).
fn naming_scenario(dir: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut found = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files.iter().filter(|f| f.extension().is_some_and(|x| x == "rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            if line.contains("crate::scenario") {
                found.push(format!("{}:{}: {line}", f.display(), n + 1));
            }
        }
    }
    found
}

#[test]
fn the_oracle_the_runtime_and_the_explorer_do_not_depend_on_the_scenario_format() {
    for dir in ["oracle", "team", "explore"] {
        assert_eq!(naming_scenario(dir), Vec::<String>::new(), "src/{dir} names the scenario layer above it");
    }
}
