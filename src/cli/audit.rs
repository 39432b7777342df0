//! `handshake audit`: judge a history (a run's `--trace`, or lines another
//! program wrote in the same format) with the same oracle `run` uses.

use super::bad_input::{Problem, Refusal};
use super::{Format, EXIT_FAILED, EXIT_OK};
use crate::oracle::{check_log, Log};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// A history (JSON Lines as `run --trace` writes them: docs/history.md), or a team's inbox folder: *.jsonl in it or in its .team/inbox, inbox or .mailboxes (docs/audit.md), or a Claude Code team folder, ~/.claude/teams/<team> (docs/claude-code.md)
    pub path: PathBuf,
    /// Output for people (text) or machines (json: one document on stdout, bad input as an error object; docs/json.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write the history as a scenario file F that replays its lines (each request and answer a step at its time, delivery times as delays), to run, explore or shrink the incident
    #[arg(long, value_name = "F")]
    pub to_scenario: Option<PathBuf>,
    /// Exit 2 if any entry could not be interpreted (an unknown message type, a time it cannot read): without it, such entries are counted on the verdict line, and the history is judged without them
    #[arg(long)]
    pub strict: bool,
}

pub const AUDIT_EXAMPLES: &[(&str, &str)] = &[
    ("handshake run scenarios/14-sender-auth-off.toml --trace run.jsonl", "keep a run's history"),
    ("handshake audit run.jsonl", "judge it again, from the file alone"),
    ("handshake audit run.jsonl --format json", "every violation with the line that shows it"),
    ("handshake audit path/to/project", "a real team's inbox files (.team/inbox, .mailboxes)"),
    ("handshake audit ~/.claude/teams/my-team", "a Claude Code team's inboxes (docs/claude-code.md)"),
    (
        "handshake audit path/to/project --to-scenario incident.toml",
        "the incident as a scenario to run, explore or shrink",
    ),
];

/// The longest history read: a million events is far past any bundled run.
const MAX_BYTES: u64 = 512 << 20;

pub fn main(a: AuditArgs) -> i32 {
    let shown = a.path.display().to_string();
    // A folder is a team's inbox files; a file is a history.
    let claude = a.path.is_dir() && crate::history::claude::folder::is_team_folder(&a.path);
    let mut transcript = false;
    let (h, from_inboxes) = if claude {
        // Claude Code's team folder (docs/claude-code.md).
        let bound = crate::history::inbox::MAX_FOLDER_BYTES;
        (crate::history::claude::history(&a.path, bound), Some(a.path.clone()))
    } else if a.path.is_dir() {
        let Some(dir) = crate::history::inbox::find(&a.path) else {
            let why = "no inbox files here (*.jsonl in it, or in its .team/inbox, inbox or .mailboxes)";
            let line = format!("{shown}: {why}; nothing was judged");
            return Refusal::line(line, Problem::in_file(&shown, why)).tell(a.format);
        };
        match crate::history::inbox::read(&dir) {
            Ok(h) => (h, Some(dir)),
            Err(bad) => {
                // The reason starts with the file of the folder it is about
                // (line 0: the file as a whole), or is about the folder.
                let (file, why) = match bad.reason.split_once(": ") {
                    Some((file, why)) if bad.line > 0 || file.ends_with(".jsonl") => (dir.join(file), why),
                    _ => (dir.clone(), bad.reason.as_str()),
                };
                let mut problem = Problem::in_file(file.display(), why);
                let line = if bad.line > 0 {
                    problem = problem.on_line(bad.line);
                    format!("{}:{}: {why}; nothing was judged", file.display(), bad.line)
                } else {
                    format!("{}: {why}; nothing was judged", file.display())
                };
                return Refusal::line(line, problem).tell(a.format);
            }
        }
    } else {
        let text = match crate::input::read_text(&a.path, MAX_BYTES) {
            Ok(t) => t,
            Err(e) => {
                return Refusal::line(format!("{shown}: {e}"), Problem::in_file(&shown, e.to_string())).tell(a.format)
            }
        };
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if crate::history::claude::transcript::looks_like(first) {
            // A Claude Code lead's session transcript (docs/claude-code.md).
            transcript = true;
            (crate::history::claude::transcript_history(&text), None)
        } else {
            match crate::history::read(&text) {
                Ok(h) => (h, None),
                Err(bad) => {
                    let line = format!("{shown}:{}: {}; nothing was judged", bad.line, bad.reason);
                    return Refusal::line(line, Problem::in_file(&shown, bad.reason).on_line(bad.line)).tell(a.format);
                }
            }
        }
    };
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    let line_of = |i: Option<usize>| i.and_then(|i| h.lines.get(i).copied());
    // Written first: a scenario that cannot be written is bad input, and
    // then nothing is reported as judged either.
    let wrote = match &a.to_scenario {
        Some(f) => match write_scenario(&h, &shown, &violations, f) {
            Ok(steps) => Some(format!("wrote {} ({steps}): handshake run {} -v", f.display(), f.display())),
            Err(e) => {
                let problem = Problem::in_flag("--to-scenario", e.clone()).at(f.display());
                return Refusal::line(format!("{e}; nothing was written"), problem).tell(a.format);
            }
        },
        None => None,
    };
    match a.format {
        Format::Text => {
            let of = match (&h.scenario, h.seed) {
                (Some(s), Some(seed)) => format!(", a run of {s} with seed {seed}"),
                (Some(s), None) => format!(", a run of {s}"),
                _ => String::new(),
            };
            let word = crate::color::verdict(violations.is_empty());
            match &from_inboxes {
                Some(dir) => {
                    let messages =
                        h.events.iter().filter(|e| matches!(e.event, crate::trace::Event::Deliver { .. })).count();
                    let unjudged = match h.unjudged.len() {
                        0 => String::new(),
                        n => format!("; {} not judged", crate::words::plural(n as u64, "entry")),
                    };
                    println!(
                        "{word}  {}  ({} among {}{unjudged})",
                        dir.display(),
                        crate::words::plural(messages as u64, "message"),
                        crate::words::plural(h.names.agents.len() as u64, "agent")
                    );
                    if claude {
                        println!(
                            "      read as a Claude Code 2.1 team folder (docs/claude-code.md): an answer applied by its \
                             id alone, as its runtime applies one"
                        );
                    } else {
                        println!(
                            "      read as received messages; a file a read drained holds only its unread tail \
                             (docs/history.md)"
                        );
                    }
                }
                None => {
                    let unjudged = match h.unjudged.len() {
                        0 => String::new(),
                        n => format!("; {} not judged", crate::words::plural(n as u64, "entry")),
                    };
                    println!(
                        "{word}  {shown}  ({}{of}{unjudged})",
                        crate::words::plural(h.events.len() as u64, "event")
                    );
                    if transcript {
                        println!(
                            "      read as a Claude Code lead's session transcript (docs/claude-code.md): its sends, \
                             and what reached it"
                        );
                    }
                }
            }
            for e in &h.events {
                if let crate::trace::Event::Alert { text, .. } = &e.event {
                    println!("      ⚠ {text}");
                }
            }
            for (place, why) in &h.unjudged {
                println!("      ? {place}: {}", super::shown(why));
            }
            match (violations.is_empty(), h.unjudged.len()) {
                // What a rewrite lost is not in the files to be judged.
                (true, 0) if claude => println!(
                    "      every invariant held in what the folder shows (an entry a whole-file rewrite lost leaves \
                     no trace: no-silent-loss is undecided)"
                ),
                (true, 0) => println!("      every invariant held"),
                (true, n) => println!(
                    "      every invariant held in what could be read; {} could not be, so this is no clean bill",
                    crate::words::plural(n as u64, "entry")
                ),
                _ => {}
            }
            // What inbox files cannot tell: a read cut what it read.
            let unknown = violations.iter().any(|v| v.detail.contains("never issued"));
            if from_inboxes.is_some() && unknown {
                println!(
                    "      note: an answer whose request is in no file may answer a request a read took and truncated \
                     away; only a trace or the offset drain's whole files can tell the two apart"
                );
            }
            for v in &violations {
                let cross = crate::color::paint("✗", crate::color::Paint::Fail, crate::color::stdout());
                println!("      {cross} invariant {} — {} (at {})", v.invariant, super::shown(&v.detail), v.at);
                match (v.event, line_of(v.event), v.event.and_then(|i| h.origin.get(i))) {
                    (Some(i), Some(line), Some(file)) => {
                        println!("        {file}:{line}: {}", h.events[i].describe(&h.names))
                    }
                    (Some(i), Some(line), None) => println!("        line {line}: {}", h.events[i].describe(&h.names)),
                    _ => {}
                }
            }
        }
        Format::Json => {
            // Written as it is serialised: a folder's history may hold half a
            // million violations, which as one JSON value would cost memory
            // several times the input's (docs/audit.md states the bound).
            let doc = Doc {
                path: &shown,
                scenario: h.scenario.as_deref(),
                seed: h.seed,
                events: h.events.len(),
                passed: violations.is_empty(),
                unjudged: h.unjudged.iter().map(|(w, why)| serde_json::json!({"where": w, "why": why})).collect(),
                violations: Found { h: &h, list: &violations },
                alerts: h
                    .events
                    .iter()
                    .filter_map(|e| match &e.event {
                        crate::trace::Event::Alert { text, .. } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect(),
            };
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let _ = serde_json::to_writer_pretty(&mut out, &doc);
            let _ = std::io::Write::write_all(&mut out, b"\n");
        }
    }
    if let Some(w) = wrote {
        // Beside the report, not in it: JSON on stdout stays one document.
        match a.format {
            Format::Text => println!("      {w}"),
            Format::Json => eprintln!("{w}"),
        }
    }
    if !violations.is_empty() {
        EXIT_FAILED
    } else if a.strict && !h.unjudged.is_empty() {
        eprintln!("--strict: {} could not be judged", crate::words::plural(h.unjudged.len() as u64, "entry"));
        super::EXIT_BAD_INPUT
    } else {
        EXIT_OK
    }
}

/// `audit --format json`'s document (`$defs/audit` in docs/report.schema.json).
#[derive(serde::Serialize)]
struct Doc<'a> {
    path: &'a str,
    scenario: Option<&'a str>,
    seed: Option<u64>,
    events: usize,
    passed: bool,
    violations: Found<'a>,
    /// What the reader noted without judging it: lines that are not
    /// messages, links skipped, an id used again for another request.
    alerts: Vec<&'a str>,
    /// Entries the reader could not interpret: where, and why.
    unjudged: Vec<serde_json::Value>,
}

/// The violations, each serialised as it is written.
struct Found<'a> {
    h: &'a crate::history::History,
    list: &'a [crate::oracle::Violation],
}

impl serde::Serialize for Found<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let h = self.h;
        s.collect_seq(self.list.iter().map(|v| {
            serde_json::json!({
                "invariant": v.invariant.name(),
                "at_ms": v.at.0,
                "line": v.event.and_then(|i| h.lines.get(i).copied()),
                "file": v.event.and_then(|i| h.origin.get(i)),
                "detail": v.detail,
            })
        }))
    }
}

/// Writes `h` as a scenario file to `path`, after reading it back as `run`
/// would (a file this program cannot run is never left behind). Returns a
/// count of its steps, in words.
fn write_scenario(
    h: &crate::history::History,
    shown: &str,
    violations: &[crate::oracle::Violation],
    path: &std::path::Path,
) -> Result<String, String> {
    let found: Vec<String> = violations.iter().map(|v| format!("{} ({})", v.invariant, v.detail)).collect();
    let text = crate::history::scenario::to_scenario(h, shown, &found).map_err(|e| e.to_string())?;
    let written = path.display().to_string();
    if let Err(e) = crate::scenario::load_str(&written, &text) {
        return Err(format!(
            "{written}: the scenario written from {shown} does not load ({e:?}): a bug, please report it"
        ));
    }
    let steps = text.matches("[[step]]").count();
    // As every writer does: never through a link, whole or not at all.
    crate::output::write(path, &text)?;
    Ok(crate::words::plural(steps as u64, "step"))
}
