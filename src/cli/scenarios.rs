//! `handshake scenarios` and `handshake new`: the scenarios the program
//! carries (`format::bundled`), listed, and one written out to edit (or a
//! blank one to start from).

use super::bad_input::{Problem, Refusal};
use super::{Format, EXIT_BAD_INPUT, EXIT_OK};
use crate::format::bundled;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ScenariosArgs {
    /// Output for people (text) or machines (json: each scenario's number, file, name, summary (its about's first sentence) and whole about)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print every key a scenario file takes instead, table by table, as Markdown (docs/reference.md is this)
    #[arg(long)]
    pub keys: bool,
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// The file to write (refused if it exists: nothing is overwritten), or - for the standard output (to pipe through sed)
    pub file: PathBuf,
    /// Start from a bundled scenario, by number or name (`handshake scenarios` lists them); without it, a blank scenario that runs
    #[arg(long, value_name = "SCENARIO")]
    pub from: Option<String>,
}

pub const SCENARIOS_EXAMPLES: &[(&str, &str)] = &[
    ("handshake scenarios", "each bundled scenario: its number, its name and what it teaches"),
    ("handshake run 22 -v", "run one by its number (or its name: peer-deadlock)"),
    ("handshake new --from 22 my.toml", "write one out to edit"),
    ("handshake scenarios --keys", "every key a file takes: default, values, an example (docs/reference.md)"),
];

pub const NEW_EXAMPLES: &[(&str, &str)] = &[
    ("handshake new my.toml", "a blank scenario that runs: one teammate, one shutdown"),
    ("handshake new --from 22 my.toml", "a copy of bundled scenario 22 to edit"),
    ("handshake new --from 17 - | sed 's/59998ms/59997ms/' > e1.toml", "a copy changed on its way"),
    ("handshake run my.toml -v", "then run it"),
];

/// A blank scenario: the least that runs and teaches the file's shape.
const BLANK: &str = r#"name = "my-scenario"
about = """
What this scenario shows, in a sentence or two: the story, the fault, and
what the protocol does about it. docs/reference.md lists every key."""

# [policy]
# shutdown_timeout = "60s"      # how long a shutdown request waits (then: kill)

[[teammate]]
name = "alice"
# on_shutdown = "reject"        # approve (the default), reject or ignore

[[step]]
at = "1s"
do = "shutdown"                 # the lead asks alice to shut down
to = "alice"
label = "stop-alice"

# [[fault]]
# kind = "drop"                 # lose the request: the deadline decides
# type = "shutdown_request"

[[expect]]
request = "stop-alice"
status = "approved"
"#;

/// Each bundled scenario: its number, its short name and its about's first sentence.
pub fn list(a: ScenariosArgs) -> i32 {
    if a.keys {
        print!("{}", crate::format::reference::markdown());
        return EXIT_OK;
    }
    let rows: Vec<(String, String, String, String, String)> = bundled::all()
        .map(|b| {
            let (name, about) = match crate::scenario::load_str(&b.path().display().to_string(), b.text) {
                Ok(s) => (s.name.clone(), s.about.clone()),
                Err(_) => (String::new(), String::new()),
            };
            let number = b.number().map_or_else(|| "-".to_string(), |n| n.to_string());
            let summary = first_sentence(&about);
            (number, b.short().to_string(), name, summary, about)
        })
        .collect();
    match a.format {
        Format::Json => {
            let all: Vec<serde_json::Value> = rows
                .iter()
                .zip(bundled::all())
                .map(|((number, _, name, summary, about), b)| {
                    serde_json::json!({ "number": number.parse::<u32>().ok(), "file": b.file,
                        "path": b.path().display().to_string(), "name": name, "summary": summary, "about": about })
                })
                .collect();
            println!("{}", serde_json::json!({ "scenarios": all }));
        }
        Format::Text => {
            let width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
            for (number, short, _, summary, _) in &rows {
                println!("{number:>3}  {short:<width$}  {summary}");
            }
            let me = super::args::program();
            println!(
                "\n{} scenarios. Run one: {me} run 22 -v (or by name: {me} run peer-deadlock -v).\nEdit one: {me} new \
                 --from 22 my.toml",
                rows.len()
            );
        }
    }
    EXIT_OK
}

/// The first sentence of an about, on one line.
fn first_sentence(about: &str) -> String {
    let flat = about.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.find(". ") {
        Some(i) => flat[..=i].to_string(),
        None => flat,
    }
}

/// Writes a bundled scenario (or the blank one) to a new file.
pub fn new(a: NewArgs) -> i32 {
    let (text, what) = match &a.from {
        None => (BLANK, "a blank scenario".to_string()),
        Some(r) => match bundled::find(r) {
            Some(b) => (b.text, format!("bundled scenario {}", b.file)),
            None => {
                let why = format!("--from {r}: no bundled scenario has this number or name");
                let line = format!("{why}; nothing was written (`handshake scenarios` lists them)");
                return Refusal::line(line, Problem::in_flag("--from", why)).tell(Format::Text);
            }
        },
    };
    if a.file.as_os_str() == "-" {
        print!("{text}");
        return EXIT_OK;
    }
    if std::fs::symlink_metadata(&a.file).is_ok() {
        let why = format!("{} already exists: nothing is overwritten", a.file.display());
        let line = format!("{why}; nothing was written (choose another name, or remove it first)");
        return Refusal::line(line, Problem::new(why).at(a.file.display())).tell(Format::Text);
    }
    // Linked into place only if nothing is there by then (a file made
    // after the check above is not overwritten either).
    if let Err(e) = crate::output::write_new(&a.file, text) {
        eprintln!("error: {e}; nothing was written");
        return EXIT_BAD_INPUT;
    }
    let file = a.file.to_string_lossy();
    println!(
        "wrote {} ({what}); run it with: {} run {} -v",
        crate::input::shown(&file),
        super::args::program(),
        crate::words::path_word(&file)
    );
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blank_scenario_reads_and_passes() {
        let s = crate::scenario::load_str("my.toml", BLANK).expect("the blank scenario reads");
        let r = crate::scenario::run_scenario(&s, s.default_seed(), crate::scenario::RunOptions::default());
        assert!(r.passed, "the blank scenario passes as written: {:?} {:?}", r.failures, r.violations);
    }
}
