//! Claude Code's agent teams, read as a history (issue 40, in progress):
//! the shapes its runtime writes (`message`), and the team folder that holds
//! them (`folder`). Written against Claude Code 2.1.x; docs/claude-code.md
//! says which version and which public evidence each shape comes from.

pub mod events;
pub mod folder;
pub mod kept;
pub mod message;
pub mod transcript;

use crate::history::{History, Origin};
use crate::protocol::Policy;
use std::path::Path;

/// The team folder `dir` as a history the oracle judges: its entries in
/// time order, each answer applied by its id alone (as the runtime applies
/// it, whoever sends it and however often), and every entry it could not
/// interpret kept in `unjudged`.
pub fn history(dir: &Path, limit: u64) -> History {
    history_of(folder::read(dir, limit))
}

/// The lead's session transcript `text` as a history (its lead is
/// `team-lead`, as the runtime names it): places are its lines.
pub fn transcript_history(text: &str) -> History {
    history_of(transcript::read(text, "team-lead"))
}

/// A reading as a history the oracle judges.
pub fn history_of(reading: folder::Reading) -> History {
    let judged = events::judge(&reading);
    let mut origin = Origin::default();
    let mut lines = Vec::with_capacity(judged.origin.len());
    for place in &judged.origin {
        // `inboxes/alice.json[3]`: the file, and the entry's number; or a
        // transcript's `line 12`.
        let (file, n) = match place.split_once('[') {
            Some((file, entry)) => (file, entry.trim_end_matches(']').parse().unwrap_or(0)),
            None => ("", place.strip_prefix("line ").and_then(|n| n.parse().ok()).unwrap_or(0)),
        };
        let f = match origin.files.iter().position(|x| x == file) {
            Some(f) => f,
            None => {
                origin.files.push(file.to_string());
                origin.files.len() - 1
            }
        };
        origin.of.push(f as u32);
        lines.push(n);
    }
    if origin.files.iter().all(String::is_empty) {
        // A transcript's places are its lines alone.
        origin = Origin::default();
    }
    let mut unjudged = reading.unjudged;
    for place in &judged.in_flight {
        unjudged.push((place.clone(), "not yet read by its owner, still running: in flight".into()));
    }
    if judged.no_zone > 0 {
        let why = format!("{} entries name no time zone: read as UTC", judged.no_zone);
        unjudged.push(("timestamps".into(), why));
    }
    let mut policy = Policy::default();
    policy.defences.sender_check = false;
    policy.defences.pending_check = false;
    let ended_at = judged.events.last().map_or(crate::protocol::Millis::ZERO, |e| e.t);
    History {
        scenario: None,
        seed: None,
        names: judged.names,
        events: judged.events,
        lines,
        origin,
        policy,
        require_plan: judged.require_plan,
        ended_at,
        stop: crate::world::Stop::Settled,
        unjudged,
    }
}
