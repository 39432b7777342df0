//! The crate's layering (issue 20 point 7): the top-level modules of `src/`
//! import each other without a cycle, so every arrow points down, and only
//! the command line prints or exits. `scripts/module-graph.py` prints the
//! same graph with its layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without its `//` comments: a doc link names a module
/// without depending on it.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn ident(s: &str) -> String {
    s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// The top-level modules a piece of code names through `crate::`, in a
/// `use` (`crate::a::b`, `crate::{a, b}`) or inline.
fn named(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(ident));
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// Module -> the modules it imports, for every top-level module of `src/`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let top = |f: &Path| {
        let first = f.strip_prefix(&src).unwrap().components().next().unwrap();
        first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string()
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = top(f);
        if m != "lib" && m != "main" {
            graph.entry(m).or_default();
        }
    }
    for f in &files {
        let m = top(f);
        let Some(_) = graph.get(&m) else { continue };
        let deps: BTreeSet<String> = named(&code(f)).into_iter().filter(|d| *d != m && graph.contains_key(d)).collect();
        graph.get_mut(&m).unwrap().extend(deps);
    }
    graph
}

/// A cycle through the graph, as the modules on it, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut ring: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            ring.push(m.to_string());
            return Some(ring);
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for d in &graph[m] {
            if let Some(ring) = visit(d, graph, path, done) {
                return Some(ring);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_import_each_other_without_a_cycle() {
    let graph = graph();
    assert!(graph.contains_key("cli") && graph.contains_key("sweep") && graph["cli"].contains("sweep"), "{graph:?}");
    if let Some(ring) = cycle(&graph) {
        panic!("the modules import each other in a circle: {}", ring.join(" -> "));
    }
}

#[test]
fn the_library_never_reaches_up_into_the_command_line() {
    let importers: Vec<String> = graph().into_iter().filter(|(_, deps)| deps.contains("cli")).map(|(m, _)| m).collect();
    assert!(importers.is_empty(), "{importers:?} import cli/: move what they share below both");
}

#[test]
fn only_the_command_line_prints_or_exits() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut offenders = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel.starts_with("cli") || rel == Path::new("main.rs") {
            continue;
        }
        let code = code(&f);
        for word in ["println!", "eprintln!", "print!(", "eprint!(", "process::exit"] {
            if code.contains(word) {
                offenders.push(format!("{}: {word}", rel.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "library code returns values and the command line prints them: {offenders:?}");
}

#[test]
fn the_scan_sees_every_way_of_naming_a_module() {
    let code = "use crate::a::b;\nuse crate::{c, d::e};\nlet x = crate::f::g();";
    let expected: BTreeSet<String> = ["a", "c", "d", "f"].map(String::from).into();
    assert_eq!(named(code), expected);
    let ring: BTreeMap<String, BTreeSet<String>> =
        [("x", "y"), ("y", "x")].iter().map(|(a, b)| (a.to_string(), [b.to_string()].into())).collect();
    assert_eq!(cycle(&ring), Some(vec!["x".to_string(), "y".to_string(), "x".to_string()]));
}

/// Issue 20 point 1: the world both shells run is pure. No actix, no tokio,
/// no clock, no files, no threads: what it does depends on its state and
/// its inputs alone, so the explorer can copy it and the actors can share it.
#[test]
fn the_world_is_pure_and_below_both_shells() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src.join("world"), &mut files);
    assert!(files.len() >= 5, "{files:?}");
    let mut offenders = Vec::new();
    for f in &files {
        let code = code(f);
        for word in
            ["actix", "tokio", "std::time", "Instant", "SystemTime", "std::fs", "std::thread", "std::net", "RefCell"]
        {
            if code.contains(word) {
                offenders.push(format!("{}: {word}", f.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(offenders.is_empty(), "the world must stay pure: {offenders:?}");
    let graph = graph();
    for shell in ["team", "explore"] {
        assert!(graph[shell].contains("world"), "{shell} runs the world: {:?}", graph[shell]);
    }
    for above in ["team", "explore", "scenario", "oracle", "cli"] {
        assert!(!graph["world"].contains(above), "world imports {above}, a layer above it");
    }
    // The explorer is the world's second shell, not a user of the first.
    assert!(!graph["explore"].contains("team"), "explore imports team: {:?}", graph["explore"]);
}

/// Issue 41 point 8: the search does not reach into the bench for a fact
/// about the process (a small module below both holds those), and no
/// command uses another command's module as a library: what two commands
/// share sits below them (`cli/args.rs`, `words`, `view::page`).
#[test]
fn no_arrow_points_sideways_into_the_bench_or_another_command() {
    let graph = graph();
    assert!(!graph["explore"].contains("bench"), "explore imports bench: {:?}", graph["explore"]);
    assert!(graph["explore"].contains("process"), "{:?}", graph["explore"]);
    let cli = src().join("cli");
    let files: Vec<(String, String)> = std::fs::read_dir(&cli)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), code(&p)))
        .collect();
    // A command's module is the one with its `main`; the others are shared.
    let commands: Vec<&str> =
        files.iter().filter(|(_, code)| code.contains("pub fn main(")).map(|(n, _)| n.as_str()).collect();
    assert!(commands.contains(&"run") && commands.contains(&"explore"), "{commands:?}");
    for (name, code) in &files {
        for &other in &commands {
            if other == name {
                continue;
            }
            for way in [format!("super::{other}::"), format!("cli::{other}::")] {
                assert!(!code.contains(&way), "cli/{name}.rs uses cli/{other}.rs as a library ({way})");
            }
        }
    }
}

/// Every module `from` imports, directly or through others.
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(m) = todo.pop() {
        for d in graph.get(&m).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

/// Issue 41 point 5: the scenario format (reading, building, finding files)
/// is a layer below the engine, and what reads, writes or runs scenario
/// files without searching them (fuzz, shrink, the history) does not pull
/// in the explorer, not even through another module. The explorer and the
/// runner do not depend on each other: what bridges them (`explore_file`)
/// sits above both.
#[test]
fn the_scenario_format_sits_below_the_explorer_and_its_writers_need_no_explorer() {
    let graph = graph();
    let below = reaches(&graph, "format");
    for above in ["explore", "explore_file", "scenario", "team", "cli", "fuzz", "shrink", "history"] {
        assert!(!below.contains(above), "format reaches {above}: {below:?}");
    }
    for writer in ["fuzz", "shrink", "history"] {
        let r = reaches(&graph, writer);
        assert!(r.contains("format") && !r.contains("explore"), "{writer} reaches {r:?}");
    }
    assert!(!reaches(&graph, "explore").contains("scenario"), "{:?}", graph["explore"]);
    assert!(!reaches(&graph, "scenario").contains("explore"), "{:?}", graph["scenario"]);
    assert!(graph["explore_file"].is_superset(&["explore", "scenario"].map(String::from).into()));
}
