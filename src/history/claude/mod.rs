//! Claude Code's agent teams, read as a history (issue 40, in progress):
//! the shapes its runtime writes (`message`), the team folder that holds
//! them (`folder`), and the team's tasks folder (`tasks`). Written against Claude Code 2.1.x; docs/claude-code.md
//! says which version and which public evidence each shape comes from.

pub mod events;
pub mod folder;
pub mod kept;
pub use crate::inbox::team_text as message;
pub mod tasks;
pub mod transcript;
pub mod witness;

use crate::history::{History, Origin};
use crate::inbox::team_text::{Notice, Said};
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
        let (file, n) = match folder::entry_place(place) {
            Some(entry) => entry,
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
    let last = judged.events.last().map_or(crate::protocol::Millis::ZERO, |e| e.t);
    for (place, queued) in &judged.in_flight {
        // How long it has waited says whether it is on its way or stuck
        // (a teammate that no longer reads: claude-code#47396).
        let waited = crate::protocol::Millis(last.0.saturating_sub(queued.0));
        let why =
            format!("not yet read by its owner, still running: in flight, unread for {waited} when the files end");
        unjudged.push((place.clone(), why));
    }
    unjudged.extend(judged.not_judged.iter().cloned());
    if judged.no_zone > 0 {
        let names = if judged.no_zone == 1 { "names" } else { "name" };
        let why = format!("{} {names} no time zone: read as UTC", crate::words::plural(judged.no_zone as u64, "entry"));
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
        mailbox: crate::world::MailboxWorld::ClaudeCode(Default::default()),
    }
}

/// Adds what the team's tasks folder shows to the team's history `h`:
/// each check's alert, at the history's end (a task file has no time the
/// oracle could place it at), and every file it could not read. The roster
/// is the team's config; who has ended, the history's own roster.
pub fn with_tasks(h: &mut History, t: &tasks::Tasks, reading: &folder::Reading) {
    let team = &reading.team;
    let mut members = Vec::new();
    // A roster read in part is not known: an owner missing from it may be
    // the member that could not be read.
    if !team.members.is_empty() && !team.members_in_part {
        members.push(team.lead.clone().unwrap_or_else(|| "team-lead".to_string()));
        members.extend(team.members.iter().map(|(m, _)| m.clone()));
    }
    let ended = ended(h);
    let assigned = assignments(reading);
    for text in tasks::alerts(t, tasks::Roster { members: &members, ended: &ended, assigned: &assigned }) {
        alert(h, text);
    }
    h.unjudged.extend(t.unjudged.iter().cloned());
}

/// Each task's last `task_assignment` in `reading`, in the order of the
/// times they are stamped with (the files' order breaking a tie).
fn assignments(reading: &folder::Reading) -> Vec<tasks::Assigned> {
    let mut notices: Vec<(i64, &folder::Entry, &str)> = reading
        .entries
        .iter()
        .filter_map(|e| match &e.said {
            Said::Notice(Notice::TaskAssigned { task }) => Some((e.at.ms, e, task.as_str())),
            _ => None,
        })
        .collect();
    notices.sort_by_key(|(ms, _, _)| *ms);
    let last: HashMap<&str, usize> = notices.iter().enumerate().map(|(i, (_, _, task))| (*task, i)).collect();
    notices
        .iter()
        .enumerate()
        .filter(|(i, (_, _, task))| last.get(task) == Some(i))
        .map(|(_, (_, e, task))| tasks::Assigned { task: task.to_string(), to: e.to.clone(), place: e.origin.clone() })
        .collect()
}

/// A tasks folder audited alone, as a history: no messages, so every
/// invariant is unknown, and what the tasks say of each other is its alerts.
pub fn tasks_history(t: &tasks::Tasks) -> History {
    let mut names = crate::trace::Names::default();
    names.agents.push("team-lead".to_string());
    let why = "a tasks folder holds no messages: audit the team folder (~/.claude/teams/<team>) for them";
    let mut h = History {
        scenario: None,
        seed: None,
        names,
        events: Vec::new(),
        lines: Vec::new(),
        origin: Origin::default(),
        policy: policy(),
        require_plan: vec![false],
        ended_at: crate::protocol::Millis::ZERO,
        stop: crate::world::Stop::Settled,
        unjudged: t.unjudged.clone(),
        undecided: Invariant::all().into_iter().map(|i| (i, why.to_string())).collect(),
        mailbox: crate::world::MailboxWorld::ClaudeCode(Default::default()),
    };
    for text in tasks::alerts(t, tasks::Roster::default()) {
        alert(&mut h, text);
    }
    h
}

/// The teammates `h` shows ended (the runtime said so) and not back since.
fn ended(h: &History) -> Vec<String> {
    let mut ended = std::collections::BTreeSet::new();
    for e in &h.events {
        match e.event {
            Event::Status { agent, status } if !status.is_active() => {
                ended.insert(agent);
            }
            Event::Respawn { agent } => {
                ended.remove(&agent);
            }
            _ => {}
        }
    }
    ended.into_iter().filter_map(|a| h.names.agents.get(a.index()).cloned()).collect()
}

/// An alert at the end of `h`, said by the lead (whose team it is); it
/// comes from no entry of a file the history places.
fn alert(h: &mut History, text: String) {
    let placed = h.origin.of.len() == h.events.len();
    h.events.push(crate::trace::Stamped {
        t: h.ended_at,
        event: Event::Alert { agent: crate::protocol::AgentId::LEAD, text },
    });
    h.lines.push(0);
    if placed {
        h.origin.of.push(u32::MAX);
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
    // The task protocol's own: Claude Code has no offer to take.
    let assigns = "Claude Code assigns a task by writing its owner (task_assignment asks no answer): the offer and \
                   take this judges are not in its files; the task files' owners are checked against the \
                   assignments instead";
    let task_own = (0..crate::protocol::Kind::Task.spec().invariants.len())
        .map(|index| (Invariant::Own { kind: crate::protocol::Kind::Task, index: index as u8 }, assigns.to_string()));
    list.extend(task_own);
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
    if has(folder::MSG_ID) {
        told.push(
            "entries carry msg_id, as Claude Code 2.1.220 and later write them: that generation deletes an entry \
             once delivered, so an answer whose request is gone is not judged"
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
