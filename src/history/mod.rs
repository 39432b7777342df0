//! A history: the trace's JSON Lines read back into the events the oracle
//! judges, so a run can be judged from its file alone (`handshake audit`),
//! by this program or by another that writes the same lines.
//!
//! The format is documented in docs/history.md, with a JSON Schema in
//! docs/history.schema.json. Its first line is a header naming the format
//! and what the oracle needs besides the events: the team (who is the
//! lead, who must have a plan approved before acting) and the policy (the
//! default each timeout applies). Every other line is one event, written
//! and read by the log's codec (`Stamped::to_json`, `trace::Reading`).

pub mod claude;
pub mod follow;
pub mod inbox;
pub mod scenario;
pub mod stamp;
pub mod standing;
pub mod tail;

use crate::protocol::{Millis, Policy};
use crate::trace::{Event, Names, Reading, Stamped, Team};
use crate::world::Outcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format this program writes and reads; a header with another is refused.
pub const FORMAT: u64 = 1;

/// A history's first line, written and read from this one declaration
/// (its keys in this order).
#[derive(Debug, Serialize, Deserialize)]
pub struct Header {
    /// Always `"handshake"`: the key that marks the line as a header.
    pub history: String,
    /// [`FORMAT`]; a header with another is refused before the rest is read.
    pub format: u64,
    /// The program and version that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The team, the lead first, as the events name them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<Vec<Member>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// When the run ended (ms); else when its last event happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<u64>,
    /// Why it ended ([`crate::world::Stop::as_str`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// The mailbox world of the runtime it was read from, when not memory
    /// (`claude-code`): the world `audit --to-scenario` replays it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mailbox: Option<String>,
    /// The invariants the files it was read from cannot decide, and why:
    /// reported unknown unless broken, as they were of the files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<Undecided>,
    /// What the files held that could not be read, and why: a history
    /// that carries any is never judged a bare pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<Unjudged>,
}

/// An invariant a header says the files could not decide.
#[derive(Debug, Serialize, Deserialize)]
pub struct Undecided {
    pub invariant: String,
    pub why: String,
}

/// Something a header says the files held and could not be read.
#[derive(Debug, Serialize, Deserialize)]
pub struct Unjudged {
    pub place: String,
    pub why: String,
}

impl Header {
    /// This header, saying also what the history `h` read from a team's
    /// files carries besides its events: the runtime's mailbox world, the
    /// invariants the files could not decide, and what could not be read.
    /// Audited later, the history is judged as the files were.
    pub fn with_context_of(mut self, h: &History) -> Header {
        self.mailbox = (!h.mailbox.is_memory()).then(|| h.mailbox.name().to_string());
        self.undecided =
            h.undecided.iter().map(|(i, why)| Undecided { invariant: i.name().into(), why: why.clone() }).collect();
        self.unjudged =
            h.unjudged.iter().map(|(place, why)| Unjudged { place: place.clone(), why: why.clone() }).collect();
        self
    }
}

/// One of the team a header lists.
#[derive(Debug, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    #[serde(default)]
    pub require_plan: bool,
}

/// The first line of a history.
pub fn header(scenario: &str, seed: u64, o: &Outcome, policy: &Policy, require_plan: &[bool]) -> Header {
    let end = (o.ended_at, o.stop);
    header_of(scenario, seed, &o.names.agents, end, policy, require_plan)
}

/// The first line of a history of `agents`, ended at `end` for its reason.
pub fn header_of(
    scenario: &str,
    seed: u64,
    agents: &[String],
    end: (Millis, crate::world::Stop),
    policy: &Policy,
    require_plan: &[bool],
) -> Header {
    let team = agents
        .iter()
        .enumerate()
        .map(|(i, name)| Member { name: name.clone(), require_plan: require_plan.get(i).copied().unwrap_or(false) })
        .collect();
    Header {
        history: "handshake".into(),
        format: FORMAT,
        program: Some(concat!("handshake ", env!("CARGO_PKG_VERSION")).into()),
        scenario: Some(scenario.into()),
        seed: Some(seed),
        team: Some(team),
        policy: Some(policy.clone()),
        ended_at: Some(end.0 .0),
        stop: Some(end.1.as_str().into()),
        mailbox: None,
        undecided: Vec::new(),
        unjudged: Vec::new(),
    }
}

/// A history as read: what the oracle needs to judge it.
#[derive(Clone, Debug)]
pub struct History {
    pub scenario: Option<String>,
    pub seed: Option<u64>,
    pub names: Names,
    pub events: Vec<Stamped>,
    /// The line each event came from (1-based), for reports.
    pub lines: Vec<usize>,
    /// For a folder of inbox files, the file each event came from (its
    /// line is in `lines`); empty for a trace.
    pub origin: Origin,
    pub policy: Policy,
    pub require_plan: Vec<bool>,
    pub ended_at: Millis,
    pub stop: crate::world::Stop,
    /// Entries the reader could not interpret, each with where it is and
    /// why: a history that holds any is never judged a bare pass.
    pub unjudged: Vec<(String, String)>,
    /// The invariants the files cannot decide, each with why (a drained
    /// inbox cannot show a lost message): reported unknown unless broken.
    pub undecided: Vec<(crate::oracle::Invariant, String)>,
    /// The mailbox world of the runtime that wrote it: a scenario written
    /// from it (`audit --to-scenario`) replays the incident in that world.
    pub mailbox: crate::world::MailboxWorld,
}

/// The inbox file each event of a folder's history came from: an index a
/// event into the files' names (a number, not a name, so that a line costs
/// four bytes here whatever its file is called).
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub files: Vec<String>,
    pub of: Vec<u32>,
}

impl Origin {
    /// The file event `i` came from, if it came from one.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.of.get(i).and_then(|&f| self.files.get(f as usize)).map(String::as_str)
    }
}

impl History {
    /// The place event `i` was read from: `inboxes/bob.json[2]` (a file
    /// and its entry), or `line 12` (a transcript's or a trace's line).
    pub fn place(&self, i: usize) -> Option<String> {
        let n = self.lines.get(i)?;
        Some(match self.origin.get(i) {
            Some(file) if !file.is_empty() => format!("{file}[{n}]"),
            _ => format!("line {n}"),
        })
    }
}

/// What is wrong with a history, and on which line.
#[derive(Clone, Debug, PartialEq)]
pub struct BadLine {
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// Reads a history written by `run --trace` (or by anything that writes
/// the same lines). Without a header, the team is whoever the lines name
/// (the lead first) and the policy is the default one.
pub fn read(text: &str) -> Result<History, BadLine> {
    let mut h = History {
        scenario: None,
        seed: None,
        names: Names::default(),
        events: Vec::new(),
        lines: Vec::new(),
        origin: Origin::default(),
        policy: Policy::default(),
        require_plan: Vec::new(),
        ended_at: Millis::ZERO,
        stop: crate::world::Stop::Settled,
        unjudged: Vec::new(),
        undecided: Vec::new(),
        mailbox: crate::world::MailboxWorld::Memory,
    };
    // An empty file is no history, not one in which every invariant held.
    if text.trim().is_empty() {
        return Err(BadLine { line: 1, reason: "the file is empty: there are no events to judge".into() });
    }
    let mut ended_at = None;
    let mut header_line = None;
    // The messages sent so far, and the first delivery of one not sent.
    let mut sent: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut unsent: Option<(usize, u64)> = None;
    let mut r = Reading::new();
    r.team.agent(crate::protocol::LEAD_NAME);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        // A byte-order mark is named, as an inbox's is.
        let v: Value =
            serde_json::from_str(raw).map_err(|e| BadLine { line, reason: claude::folder::not_json(raw, &e) })?;
        let Some(m) = v.as_object() else { return Err(BadLine { line, reason: "not a JSON object".into() }) };
        if m.contains_key("history") {
            if !h.events.is_empty() {
                return Err(BadLine { line, reason: "a header after events: the header is the first line".into() });
            }
            if let Some(first) = header_line {
                // A second header would quietly replace the first's team and policy.
                return Err(BadLine {
                    line,
                    reason: format!("a second header (the first is line {first}): a history has one"),
                });
            }
            header_line = Some(line);
            let format = m.get("format").and_then(Value::as_u64);
            if format != Some(FORMAT) {
                return Err(BadLine {
                    line,
                    reason: format!("history format {format:?}: this program reads format {FORMAT}"),
                });
            }
            let header: Header =
                serde_json::from_value(v.clone()).map_err(|e| BadLine { line, reason: format!("the header: {e}") })?;
            h.scenario = header.scenario;
            h.seed = header.seed;
            if let Some(team) = header.team {
                r.team = Team::default();
                for member in team {
                    r.team.agent(&member.name);
                    h.require_plan.push(member.require_plan);
                }
            }
            if let Some(p) = header.policy {
                h.policy = p;
            }
            ended_at = header.ended_at.map(Millis);
            if let Some(stop) = header.stop {
                h.stop = crate::world::Stop::parse(&stop)
                    .ok_or(BadLine { line, reason: format!("the header's stop {stop:?} is not one a run stops by") })?;
            }
            context(&mut h, header.mailbox, header.undecided, header.unjudged)
                .map_err(|reason| BadLine { line, reason })?;
            continue;
        }
        let e = r.event(m).map_err(|reason| BadLine { line, reason })?;
        // Events are lines in the order they happened: a line earlier in
        // time than the one before it (a verdict at 10 ms on a request opened
        // at 5 s) is no history of a run, and judging it would pass what
        // could never have happened.
        if let (Some(last), Some(&was)) = (h.events.last(), h.lines.last()) {
            if e.t < last.t {
                return Err(BadLine {
                    line,
                    reason: format!(
                        "time runs backwards: \"t\" is {} ms, after line {was} at {} ms; each event's \"t\" is at \
                         or after the one before it (events are written in the order they happened)",
                        e.t.0, last.t.0
                    ),
                });
            }
        }
        match &e.event {
            Event::Send { seq, .. } => {
                sent.insert(*seq);
            }
            Event::Deliver { seq, .. } if unsent.is_none() && !sent.contains(seq) => unsent = Some((line, *seq)),
            _ => {}
        }
        h.events.push(e);
        h.lines.push(line);
    }
    // With send lines, each delivery pairs with a send before it: one that
    // does not delivers a message the history never shows sent, which no
    // invariant would see (a history without sends leaves no-silent-loss
    // unknown instead, docs/history.md).
    if let (false, Some((line, seq))) = (sent.is_empty(), unsent) {
        return Err(BadLine {
            line,
            reason: format!(
                "delivers message #{seq}, which no line before it sends: a history with send lines pairs each \
                 deliver with its send (docs/history.md)"
            ),
        });
    }
    // A header alone is no history either: every run logs at least its
    // agents' first status, and nothing judged is no pass.
    if h.events.is_empty() {
        return Err(BadLine { line: 1, reason: "a header and no event: there are no events to judge".into() });
    }
    h.names = r.into_names();
    h.require_plan.resize(h.names.agents.len(), false);
    h.ended_at = ended_at.unwrap_or_else(|| h.events.last().map_or(Millis::ZERO, |e| e.t));
    Ok(h)
}

/// What a header says of the files a history was read from, into `h`.
fn context(
    h: &mut History,
    mailbox: Option<String>,
    undecided: Vec<Undecided>,
    unjudged: Vec<Unjudged>,
) -> Result<(), String> {
    use crate::world::MailboxWorld;
    h.mailbox = match mailbox.as_deref() {
        None => MailboxWorld::Memory,
        Some(name) => MailboxWorld::named(name).ok_or_else(|| {
            format!("the header's mailbox {name:?} is not a mailbox world ({})", MailboxWorld::NAMES.join(", "))
        })?,
    };
    for u in undecided {
        let i = crate::oracle::Invariant::parse(&u.invariant)
            .ok_or_else(|| format!("the header's undecided invariant {:?} is not an invariant", u.invariant))?;
        h.undecided.push((i, u.why));
    }
    h.unjudged.extend(unjudged.into_iter().map(|u| (u.place, u.why)));
    Ok(())
}

/// Writes `o`'s history: the header, then a line an event.
pub fn write(out: &mut impl std::io::Write, header: &Header, o: &Outcome) -> std::io::Result<()> {
    write_events(out, header, &o.events, &o.names)
}

/// [`write`] for events kept anywhere (a watch's, an audit's).
pub fn write_events(
    out: &mut impl std::io::Write,
    header: &Header,
    events: &[Stamped],
    names: &Names,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, header)?;
    out.write_all(b"\n")?;
    for e in events {
        serde_json::to_writer(&mut *out, &e.to_json(names))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
