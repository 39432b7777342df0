//! `handshake audit`: judge a history (a run's `--trace`, or lines another
//! program wrote in the same format) with the same oracle `run` uses.

use super::{Format, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK};
use crate::oracle::{check_log, Log};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// A history: JSON Lines as `run --trace` writes them (see docs/history.md)
    pub path: PathBuf,
    /// Output for people (text) or machines (json)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub const AUDIT_EXAMPLES: &[(&str, &str)] = &[
    ("handshake run scenarios/14-sender-auth-off.toml --trace run.jsonl", "keep a run's history"),
    ("handshake audit run.jsonl", "judge it again, from the file alone"),
    ("handshake audit run.jsonl --format json", "every violation with the line that shows it"),
];

/// The longest history read: a million events is far past any bundled run.
const MAX_BYTES: u64 = 512 << 20;

pub fn main(a: AuditArgs) -> i32 {
    let shown = a.path.display().to_string();
    let text = match crate::input::read_text(&a.path, MAX_BYTES) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {shown}: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let h = match crate::history::read(&text) {
        Ok(h) => h,
        Err(bad) => {
            eprintln!("error: {shown}:{}: {}; nothing was judged", bad.line, bad.reason);
            return EXIT_BAD_INPUT;
        }
    };
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    let line_of = |i: Option<usize>| i.and_then(|i| h.lines.get(i).copied());
    match a.format {
        Format::Text => {
            let of = match (&h.scenario, h.seed) {
                (Some(s), Some(seed)) => format!(", a run of {s} with seed {seed}"),
                (Some(s), None) => format!(", a run of {s}"),
                _ => String::new(),
            };
            let word = if violations.is_empty() { "PASS" } else { "FAIL" };
            println!("{word}  {shown}  ({}{of})", crate::words::plural(h.events.len() as u64, "event"));
            if violations.is_empty() {
                println!("      every invariant held");
            }
            for v in &violations {
                println!("      ✗ invariant {} — {} (at {})", v.invariant, super::shown(&v.detail), v.at);
                if let (Some(i), Some(line)) = (v.event, line_of(v.event)) {
                    println!("        line {line}: {}", h.events[i].describe(&h.names));
                }
            }
        }
        Format::Json => {
            let list: Vec<serde_json::Value> = violations
                .iter()
                .map(|v| {
                    serde_json::json!({
                        "invariant": v.invariant.name(),
                        "at_ms": v.at.0,
                        "line": line_of(v.event),
                        "detail": v.detail,
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "path": shown,
                "scenario": h.scenario,
                "seed": h.seed,
                "events": h.events.len(),
                "passed": violations.is_empty(),
                "violations": list,
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    if violations.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
