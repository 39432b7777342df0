//! `handshake check`: validate files, run nothing.

use super::bad_input::{print_json, Problem};
use super::{noun, scenario_files, Format, EXIT_BAD_INPUT, EXIT_OK};
use crate::color::{paint, Paint};
use crate::scenario::{load_str, read_file, Scenario, ScenarioError};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files or folders of them, subfolders included, or a bundled scenario's number or name (`handshake scenarios` lists them) [default: scenarios/, or every bundled scenario where there is none]
    #[arg(value_parser = super::scenario_arg())]
    pub paths: Vec<PathBuf>,
    /// Output for people (text) or machines (json: each file, ok or bad with its problems; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// One file checked: the name of the scenario it holds, or its problems.
/// Only the name is kept: a folder of many large files held every one
/// loaded whole (7.7 MB more for each 1 MB file).
struct Checked {
    path: String,
    loaded: Result<String, Vec<ScenarioError>>,
}

pub fn main(a: CheckArgs) -> i32 {
    let files = match scenario_files(&a.paths) {
        Ok(f) => f,
        Err(problem) => return super::refuse_paths(problem, a.format),
    };
    let checked: Vec<Checked> = files
        .iter()
        .map(|f| {
            let path = f.display().to_string();
            let loaded = read_file(f).map_err(|e| vec![e]).and_then(|text| load_str(&path, &text)).map(name_of);
            Checked { path, loaded }
        })
        .collect();
    let bad = checked.iter().filter(|c| c.loaded.is_err()).count();
    // stderr says the problems in either format, as every command's does.
    let errors: Vec<ScenarioError> =
        checked.iter().filter_map(|c| c.loaded.as_ref().err()).flatten().cloned().collect();
    if !errors.is_empty() {
        eprint!("{}", crate::diagnostic::render_all(&errors, crate::diagnostic::stderr_color()));
    }
    match a.format {
        Format::Text => print_text(&checked),
        Format::Json => print_json(&report(&checked)),
    }
    if bad == 0 {
        EXIT_OK
    } else {
        EXIT_BAD_INPUT
    }
}

/// The name of a scenario loaded, the rest let go.
fn name_of(s: Scenario) -> String {
    s.name
}

/// Each good file and the count, after the problems.
fn print_text(checked: &[Checked]) {
    let ok: Vec<(&str, &str)> =
        checked.iter().filter_map(|c| c.loaded.as_ref().ok().map(|name| (c.path.as_str(), name.as_str()))).collect();
    let colored = crate::color::stdout();
    for (path, name) in &ok {
        println!("{}    {}  ({})", paint("ok", Paint::Pass, colored), super::shown(path), super::shown(name));
    }
    let (total, bad) = (checked.len(), checked.len() - ok.len());
    // Red says something is wrong, and "0 bad" says nothing is.
    let bad_word = if bad > 0 { paint("bad", Paint::Fail, colored) } else { "bad".to_string() };
    println!("{} {}: {} ok, {bad} {bad_word}", total, noun(total as u64, "file"), ok.len());
}

/// The check report (`$defs/check` in docs/report.schema.json): each file
/// in the order checked, its problems in the error object's shape.
fn report(checked: &[Checked]) -> serde_json::Value {
    let files: Vec<serde_json::Value> = checked
        .iter()
        .map(|c| {
            let (name, errors): (Option<&str>, Vec<Problem>) = match &c.loaded {
                Ok(name) => (Some(name), Vec::new()),
                Err(errors) => (None, errors.iter().map(Problem::from).collect()),
            };
            serde_json::json!({"path": c.path, "ok": c.loaded.is_ok(), "name": name, "errors": errors})
        })
        .collect();
    let ok = checked.iter().filter(|c| c.loaded.is_ok()).count();
    serde_json::json!({
        "files": files,
        "summary": {"total": checked.len(), "ok": ok, "bad": checked.len() - ok},
    })
}
