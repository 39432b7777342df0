//! Claude Code's agent teams, read as a history (issue 40, in progress):
//! the shapes its runtime writes (`message`), and the team folder that holds
//! them (`folder`). Written against Claude Code 2.1.x; docs/claude-code.md
//! says which version and which public evidence each shape comes from.

pub mod events;
pub mod folder;
pub mod kept;
pub mod message;
pub mod transcript;
pub mod witness;

use crate::history::{History, Origin};
use crate::oracle::Invariant;
use crate::protocol::Policy;
use crate::trace::Event;
use std::collections::HashMap;
use std::path::Path;

/// The team folder `dir` as a history the oracle judges: its entries in
/// time order, each answer applied by its id alone (as the runtime applies
/// it, whoever sends it and however often), and every entry it could not
/// interpret kept in `unjudged`.
pub fn history(dir: &Path, limit: u64) -> History {
    history_of(&folder::read(dir, limit))
}

/// The lead's session transcript `text` as a history (its lead is
/// `team-lead`, as the runtime names it): places are its lines.
pub fn transcript_history(text: &str) -> History {
    transcript_of(&transcript::read(text, "team-lead"))
}

/// A transcript's reading as a history the oracle judges.
pub fn transcript_of(reading: &folder::Reading) -> History {
    let mut h = history_of(reading);
    let lead_only = "a lead's transcript shows the lead's side only: what teammates sent each other, and a message \
                     lost on the way, are not in it";
    for (i, why) in &mut h.undecided {
        if *i == Invariant::NoSilentLoss {
            *why = lead_only.to_string();
        }
    }
    h
}

/// A reading as a history the oracle judges.
pub fn history_of(reading: &folder::Reading) -> History {
    let judged = events::judge_in_place(reading);
    let mut origin = Origin::default();
    let mut lines = Vec::with_capacity(judged.origin.len());
    // Each file's number in `origin.files`, found without scanning them all.
    let mut numbered: HashMap<&str, u32> = HashMap::new();
    for place in &judged.origin {
        // `inboxes/alice.json[3]`: the file, and the entry's number; or a
        // transcript's `line 12`.
        let (file, n) = match place.split_once('[') {
            Some((file, entry)) => (file, entry.trim_end_matches(']').parse().unwrap_or(0)),
            None => ("", place.strip_prefix("line ").and_then(|n| n.parse().ok()).unwrap_or(0)),
        };
        let f = *numbered.entry(file).or_insert_with(|| {
            origin.files.push(file.to_string());
            origin.files.len() as u32 - 1
        });
        origin.of.push(f);
        lines.push(n);
    }
    if origin.files.iter().all(String::is_empty) {
        // A transcript's places are its lines alone.
        origin = Origin::default();
    }
    let mut unjudged = reading.unjudged.clone();
    for place in &judged.in_flight {
        unjudged.push((place.clone(), "not yet read by its owner, still running: in flight".into()));
    }
    if judged.no_zone > 0 {
        let why = format!("{} entries name no time zone: read as UTC", judged.no_zone);
        unjudged.push(("timestamps".into(), why));
    }
    let policy = policy();
    let undecided = undecided(&judged.events);
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
        undecided,
    }
}

/// As the runtime applies an answer: by its id alone, whoever sends it and
/// however often.
pub fn policy() -> Policy {
    let mut policy = Policy::default();
    policy.defences.sender_check = false;
    policy.defences.pending_check = false;
    policy
}

/// What a team folder cannot show: an entry a whole-file rewrite lost, the
/// work a plan gates, deadlines; and, while some request is still open, how
/// it would have ended.
fn undecided(events: &[crate::trace::Stamped]) -> Vec<(Invariant, String)> {
    let lost = "an entry a whole-file rewrite lost leaves no trace in the folder (claude-code#53896)";
    let mut list = vec![(Invariant::NoSilentLoss, lost.to_string())];
    list.extend(crate::history::standing::not_in_messages());
    let mut open = std::collections::BTreeSet::new();
    for e in events {
        match e.event {
            Event::Opened { id, .. } => {
                open.insert(id);
            }
            Event::Verdict { request_id, .. } => {
                open.remove(&request_id);
            }
            _ => {}
        }
    }
    let open = open.len();
    if open > 0 {
        let why = format!(
            "{} still open when the files end, and the runtime keeps no deadline that would settle {}",
            crate::words::plural(open as u64, "request"),
            if open == 1 { "it" } else { "them" }
        );
        list.push((Invariant::SingleTerminal, why));
    }
    list
}

/// The generation of Claude Code that wrote `reading`, told from the shapes
/// it holds (docs/claude-code.md, "Generations"): a line for the report.
pub fn generation(reading: &folder::Reading) -> String {
    let has = |shape: &str| reading.shapes.contains_key(shape);
    let mut told = Vec::new();
    for (form, versions) in transcript::FORMS.iter().zip(["2.1.75 – 2.1.260", "2.1.30 – 2.1.74", "2.1.20 – 2.1.29"])
    {
        if has(form) {
            told.push(format!("the lead's calls are {form}, as Claude Code {versions} makes them"));
        }
    }
    let inbox = ["shutdown_approved", "shutdown_rejected", "plan_approval_response", "shutdown_request"];
    if inbox.iter().any(|s| has(s)) {
        told.push(
            "the messages are the camelCase shapes (requestId, shutdown_approved / shutdown_rejected) that \
             Claude Code 2.1.20 – 2.1.260 writes"
                .to_string(),
        );
    }
    if has("shutdown_response") {
        told.push(
            "shutdown_response frames: the tool's input, or another product's inbox frame (not seen in Claude \
             Code's own inboxes), read as answers all the same"
                .to_string(),
        );
    }
    if told.is_empty() {
        return "no protocol message in the files: which generation wrote them cannot be told".to_string();
    }
    told.join("; ")
}
