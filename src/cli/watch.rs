//! `handshake watch`: follow a live Claude Code team folder as it changes,
//! keep every entry ever seen (rewrites, flipped flags and a deleted folder
//! lose nothing), and judge as entries arrive with the oracle `audit` uses.
//! A change is seen through `notify` (inotify where there is one), with a
//! poll every `--interval` as the fallback.

use super::{EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::history::claude::{self, folder, kept::Kept};
use crate::oracle::{check_log, Log};
use crate::protocol::Millis;
use clap::Args;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// A Claude Code team folder, ~/.claude/teams/<team> (docs/claude-code.md)
    pub path: PathBuf,
    /// Also write what was kept, in the history format (docs/history.md), when the watch ends: audit and --to-scenario read it later
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// How often to look again when no change is signalled, e.g. "500ms"
    #[arg(long, value_parser = super::run::parse_span, default_value = "1s")]
    pub interval: Millis,
    /// Stop on its own after this long, e.g. "10m" (default: until Ctrl-C)
    #[arg(long = "for", value_name = "SPAN", value_parser = super::run::parse_span)]
    pub for_: Option<Millis>,
}

pub const WATCH_EXAMPLES: &[(&str, &str)] = &[
    ("handshake watch ~/.claude/teams/my-team", "judge a live team as it works; Ctrl-C for the summary"),
    ("handshake watch ~/.claude/teams/my-team --trace team.jsonl", "and keep its history, to audit later"),
];

/// The most of a folder's inbox files read at each look (as `audit`).
const BOUND: u64 = crate::history::inbox::MAX_FOLDER_BYTES;

pub fn main(a: WatchArgs) -> i32 {
    let shown = a.path.display().to_string();
    if !folder::is_team_folder(&a.path) {
        eprintln!(
            "error: {shown}: not a Claude Code team folder (looked for inboxes/*.json, or config.json with members); \
             nothing was watched"
        );
        return EXIT_BAD_INPUT;
    }
    crate::interrupt::install();
    let (tx, rx) = std::sync::mpsc::channel();
    // Kept alive for the watch; without it (no inotify), the poll alone.
    let _watcher = start_watcher(&a.path, tx);
    let started = Instant::now();
    let mut kept = Kept::default();
    let mut told: BTreeSet<String> = BTreeSet::new();
    let mut failed = false;
    println!("watching {shown} (Ctrl-C for the summary)");
    loop {
        if kept.absorb(folder::read(&a.path, BOUND)) {
            failed |= judge_new(&kept, &mut told);
        }
        if crate::interrupt::requested() || a.for_.is_some_and(|f| started.elapsed() >= f.as_std()) {
            break;
        }
        let wait = a.interval.as_std().min(Duration::from_millis(200)).max(Duration::from_millis(10));
        // A signalled change, or the interval passing; Ctrl-C is looked at
        // every 200 ms at least.
        let deadline = Instant::now() + a.interval.as_std();
        while Instant::now() < deadline && !crate::interrupt::requested() {
            if rx.recv_timeout(wait).is_ok() {
                while rx.try_recv().is_ok() {}
                break;
            }
        }
    }
    summary(&kept, &shown, &a.trace);
    if crate::interrupt::requested() {
        EXIT_INTERRUPTED
    } else if failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

fn start_watcher(path: &std::path::Path, tx: std::sync::mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let mut w = notify::recommended_watcher(move |_: notify::Result<notify::Event>| {
        let _ = tx.send(());
    })
    .ok()?;
    w.watch(path, notify::RecursiveMode::Recursive).ok()?;
    Some(w)
}

/// Judges all that was kept and prints each violation not printed yet;
/// true if any invariant is broken.
fn judge_new(kept: &Kept, told: &mut BTreeSet<String>) -> bool {
    let h = claude::history_of(&kept.reading());
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    for v in &violations {
        let line = format!("✗ invariant {} — {}", v.invariant, super::shown(&v.detail));
        if told.insert(line.clone()) {
            let place =
                v.event.and_then(|i| Some(format!("{}:{}", h.origin.get(i)?, h.lines.get(i)?))).unwrap_or_default();
            println!("{line}  {place}");
        }
    }
    for e in &h.events {
        if let crate::trace::Event::Alert { text, .. } = &e.event {
            // How long a request has been open changes at every look: the
            // summary says it, once.
            if text.contains("was never answered") {
                continue;
            }
            let line = format!("⚠ {text}");
            if told.insert(line.clone()) {
                println!("{line}");
            }
        }
    }
    !violations.is_empty()
}

/// The summary when the watch ends: the verdict on all that was kept, and
/// the history written if asked.
fn summary(kept: &Kept, shown: &str, trace: &Option<PathBuf>) {
    let h = claude::history_of(&kept.reading());
    let log = Log { names: &h.names, events: &h.events, ended_at: h.ended_at, stop: h.stop };
    let violations = check_log(&log, &h.policy, &h.require_plan);
    let word = crate::color::verdict(violations.is_empty());
    let unjudged = match h.unjudged.len() {
        0 => String::new(),
        n => format!("; {} not judged", crate::words::plural(n as u64, "entry")),
    };
    println!(
        "{word}  {shown}  ({} kept, {} broken{unjudged})",
        crate::words::plural(kept.len() as u64, "entry"),
        crate::words::plural(violations.len() as u64, "invariant")
    );
    for e in &h.events {
        if let crate::trace::Event::Alert { text, .. } = &e.event {
            if text.contains("was never answered") {
                println!("      ⚠ {text}");
            }
        }
    }
    if let Some(path) = trace {
        let scenario = format!("watch of {shown}");
        let header =
            crate::history::header_of(&scenario, 0, &h.names.agents, (h.ended_at, h.stop), &h.policy, &h.require_plan);
        let mut bytes = Vec::new();
        let _ = crate::history::write_events(&mut bytes, &header, &h.events, &h.names);
        let text = String::from_utf8_lossy(&bytes);
        match crate::output::write(path, &text) {
            Ok(()) => println!("      wrote {}: handshake audit {}", path.display(), path.display()),
            Err(e) => eprintln!("error: {e}"),
        }
    }
}
