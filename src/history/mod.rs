//! A history: the trace's JSON Lines read back into the events the oracle
//! judges, so a run can be judged from its file alone (`handshake audit`),
//! by this program or by another that writes the same lines.
//!
//! The format is documented in docs/history.md, with a JSON Schema in
//! docs/history.schema.json. Its first line is a header naming the format
//! and what the oracle needs besides the events: the team (who is the
//! lead, who must have a plan approved before acting) and the policy (the
//! default each timeout applies). Every other line is one event, as
//! `Stamped::to_json` writes it.

pub mod claude;
pub mod follow;
pub mod inbox;
pub mod scenario;
pub mod stamp;
pub mod standing;

use crate::protocol::{
    Action, Address, AgentId, GateState, Kind, Label, MessageType, Millis, Policy, Reason, RequestId, SendError,
    Status, TimeoutDefault, Verdict,
};
use crate::trace::{Cause, Event, Names, RosterStatus, Stamped};
use crate::world::Outcome;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The format this program writes and reads; a header with another is refused.
pub const FORMAT: u64 = 1;

/// The first line of a history.
pub fn header(scenario: &str, seed: u64, o: &Outcome, policy: &Policy, require_plan: &[bool]) -> Value {
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
) -> Value {
    let team: Vec<Value> = agents
        .iter()
        .enumerate()
        .map(|(i, name)| json!({ "name": name, "require_plan": require_plan.get(i).copied().unwrap_or(false) }))
        .collect();
    json!({
        "history": "handshake",
        "format": FORMAT,
        "program": concat!("handshake ", env!("CARGO_PKG_VERSION")),
        "scenario": scenario,
        "seed": seed,
        "team": team,
        "policy": policy,
        "ended_at": end.0 .0,
        "stop": end.1.as_str(),
    })
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
    };
    let mut ended_at = None;
    let mut r = Reader { team: Team::default() };
    r.agent(crate::protocol::LEAD_NAME);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(raw).map_err(|e| BadLine { line, reason: format!("not JSON: {e}") })?;
        let Some(m) = v.as_object() else { return Err(BadLine { line, reason: "not a JSON object".into() }) };
        if m.contains_key("history") {
            if line != 1 && !h.events.is_empty() {
                return Err(BadLine { line, reason: "a header after events: the header is the first line".into() });
            }
            let format = m.get("format").and_then(Value::as_u64);
            if format != Some(FORMAT) {
                return Err(BadLine {
                    line,
                    reason: format!("history format {format:?}: this program reads format {FORMAT}"),
                });
            }
            h.scenario = m.get("scenario").and_then(Value::as_str).map(str::to_string);
            h.seed = m.get("seed").and_then(Value::as_u64);
            if let Some(team) = m.get("team").and_then(Value::as_array) {
                r = Reader { team: Team::default() };
                for t in team {
                    let name = t
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or(BadLine { line, reason: "each of the header's team needs a \"name\"".into() })?;
                    r.agent(name);
                    h.require_plan.push(t.get("require_plan").and_then(Value::as_bool).unwrap_or(false));
                }
            }
            if let Some(p) = m.get("policy") {
                h.policy = serde_json::from_value(p.clone())
                    .map_err(|e| BadLine { line, reason: format!("the header's policy: {e}") })?;
            }
            ended_at = m.get("ended_at").and_then(Value::as_u64).map(Millis);
            if let Some(stop) = m.get("stop").and_then(Value::as_str) {
                h.stop = crate::world::Stop::parse(stop)
                    .ok_or(BadLine { line, reason: format!("the header's stop {stop:?} is not one a run stops by") })?;
            }
            continue;
        }
        let e = r.event(m, &mut h.names).map_err(|reason| BadLine { line, reason })?;
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
        h.events.push(e);
        h.lines.push(line);
    }
    h.names.agents = r.team.names;
    h.require_plan.resize(h.names.agents.len(), false);
    h.ended_at = ended_at.unwrap_or_else(|| h.events.last().map_or(Millis::ZERO, |e| e.t));
    Ok(h)
}

/// The team as a history names it: each name an id, in the order met.
#[derive(Default)]
pub(crate) struct Team {
    ids: BTreeMap<String, AgentId>,
    pub names: Vec<String>,
}

impl Team {
    pub fn agent(&mut self, name: &str) -> AgentId {
        if let Some(&a) = self.ids.get(name) {
            return a;
        }
        let a = AgentId(self.names.len() as u32);
        self.ids.insert(name.to_string(), a);
        self.names.push(name.to_string());
        a
    }
}

struct Reader {
    team: Team,
}

fn one_of<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str, s: &str, what: &str) -> Result<T, String> {
    all.iter().copied().find(|&x| name(x) == s).ok_or_else(|| {
        let known: Vec<&str> = all.iter().map(|&x| name(x)).collect();
        format!("{s:?} is not a {what} (one of {})", known.join(", "))
    })
}

const STATUSES: [Status; 4] = [Status::Pending, Status::Approved, Status::Rejected, Status::Expired];
const GATES: [GateState; 5] =
    [GateState::NotRequired, GateState::Required, GateState::Pending, GateState::Approved, GateState::Rejected];
const ACTIONS: [Action; 5] = [Action::Read, Action::Write, Action::Edit, Action::Shell, Action::SubmitPlan];
const ROSTER: [RosterStatus; 6] = [
    RosterStatus::Working,
    RosterStatus::WaitingApproval,
    RosterStatus::Idle,
    RosterStatus::Shutdown,
    RosterStatus::Killed,
    RosterStatus::Crashed,
];
const CAUSES: [Cause; 7] = [
    Cause::Drop,
    Cause::Partition,
    Cause::Crash,
    Cause::Killed,
    Cause::Undeliverable,
    Cause::DrainLoss,
    Cause::TornWrite,
];
impl Reader {
    fn agent(&mut self, name: &str) -> AgentId {
        self.team.agent(name)
    }

    fn event(&mut self, m: &Map<String, Value>, names: &mut Names) -> Result<Stamped, String> {
        let t = Millis(u64_of(m, "t")?);
        let kind = str_of(m, "event")?;
        let s = |k: &str| str_of(m, k);
        let agent = |me: &mut Reader, k: &str| -> Result<AgentId, String> { Ok(me.agent(s(k)?)) };
        let claimed = |me: &mut Reader, sender: AgentId| -> Result<AgentId, String> {
            match m.get("claimed_from").and_then(Value::as_str) {
                Some(c) => Ok(me.agent(c)),
                None => Ok(sender),
            }
        };
        let typ = |k: &str| -> Result<MessageType, String> {
            let t = s(k)?;
            MessageType::parse(t).ok_or_else(|| {
                format!("{t:?} is not a message type ({})", crate::protocol::message::message_types().join(", "))
            })
        };
        let event = match kind {
            "send" => {
                let from = agent(self, "from")?;
                let to = match s("to")? {
                    "*" => Address::Everyone,
                    name => Address::Agent(self.agent(name)),
                };
                Event::Send {
                    seq: u64_of(m, "seq")?,
                    from,
                    to,
                    message_type: typ("type")?,
                    request_id: request(m, names)?,
                    approve: m.get("approve").and_then(Value::as_bool),
                    words: m.get("words").and_then(Value::as_str).map(Into::into),
                }
            }
            "refuse" => {
                let from = agent(self, "from")?;
                let to = match s("to")? {
                    "*" => Address::Everyone,
                    name => Address::Agent(self.agent(name)),
                };
                let rule = s("rule")?;
                let message_type = typ("type")?;
                let mut error = one_of(&SendError::all(), SendError::rule, rule, "send rule")?;
                if let SendError::ProtocolBroadcast(_) = error {
                    error = SendError::ProtocolBroadcast(message_type.name());
                }
                Event::Refuse { from, to, message_type, error }
            }
            "deliver" => {
                let sender = agent(self, "from")?;
                let claimed_from = claimed(self, sender)?;
                Event::Deliver {
                    seq: u64_of(m, "seq")?,
                    sender,
                    claimed_from,
                    to: agent(self, "to")?,
                    message_type: typ("type")?,
                    request_id: request(m, names)?,
                }
            }
            "drop" => Event::Dropped {
                seq: u64_of(m, "seq")?,
                to: agent(self, "to")?,
                message_type: typ("type")?,
                cause: one_of(&CAUSES, Cause::as_str, s("cause")?, "cause of a loss")?,
            },
            "fault" => {
                let f = s("fault")?;
                let fault = crate::scenario::file::FAULT_KINDS
                    .iter()
                    .copied()
                    .find(|x| *x == f)
                    .ok_or_else(|| format!("{f:?} is not a fault kind"))?;
                Event::Fault { seq: u64_of(m, "seq")?, fault, detail: s("detail")?.to_string() }
            }
            "scripted" => Event::Scripted { agent: agent(self, "agent")? },
            "forge" => Event::Forge {
                seq: u64_of(m, "seq")?,
                claimed_from: agent(self, "claimed_from")?,
                to: agent(self, "to")?,
                message_type: typ("type")?,
            },
            "request" => {
                let id = request(m, names)?.ok_or("a request needs its \"request_id\"")?;
                let label =
                    names.label(id).map_or_else(|| Label::Named(id.to_string().into()), |l| Label::Named(l.into()));
                Event::Opened {
                    id,
                    label,
                    kind: one_of(&Kind::ALL, Kind::as_str, s("kind")?, "kind")?,
                    requester: agent(self, "from")?,
                    target: agent(self, "to")?,
                    deadline: m.get("deadline").and_then(Value::as_u64).map_or(Millis::NEVER, Millis),
                }
            }
            "verdict" => {
                let sender = agent(self, "from")?;
                let response_kind = one_of(&Kind::ALL, Kind::as_str, s("kind")?, "kind")?;
                let verdict = match s("verdict")?.split_once(':') {
                    Some(("applied", to)) => {
                        let to = one_of(&STATUSES, Status::as_str, to, "status")?;
                        Verdict::Applied { kind: response_kind, from: Status::Pending, to }
                    }
                    Some(("ignored", why)) => {
                        Verdict::Ignored(Reason::parse(why).ok_or_else(|| format!("{why:?} is not a reason"))?)
                    }
                    _ => return Err("a verdict is \"applied:STATUS\" or \"ignored:REASON\"".into()),
                };
                Event::Verdict {
                    at: agent(self, "at")?,
                    request_id: request(m, names)?.ok_or("a verdict needs its \"request_id\"")?,
                    response_kind,
                    approve: m.get("approve").and_then(Value::as_bool).ok_or("a verdict needs \"approve\"")?,
                    sender,
                    claimed_from: claimed(self, sender)?,
                    verdict,
                }
            }
            "expiry" => {
                let id = request(m, names)?.ok_or("an expiry needs its \"request_id\"")?;
                let kind = one_of(&Kind::ALL, Kind::as_str, s("kind")?, "kind")?;
                // One of the defaults its own protocol may choose: a shutdown
                // that expired cannot have been reassigned.
                let what = format!("{kind} timeout default");
                let default = one_of(kind.spec().on_expiry, TimeoutDefault::as_str, s("default")?, &what)?;
                Event::Expired { id, kind, default }
            }
            "gate" => Event::Gate {
                agent: agent(self, "agent")?,
                state: one_of(&GATES, GateState::as_str, s("state")?, "gate state")?,
            },
            "action" => Event::Act {
                agent: agent(self, "agent")?,
                action: one_of(&ACTIONS, Action::as_str, s("action")?, "action")?,
                path: m.get("path").and_then(Value::as_str).map(str::to_string),
                blocked: match m.get("gate").and_then(Value::as_str) {
                    Some(g) if m.get("allowed") == Some(&Value::Bool(false)) => {
                        Some(one_of(&GATES, GateState::as_str, g, "gate state")?)
                    }
                    _ => None,
                },
            },
            "file" => Event::FileStep {
                agent: agent(self, "agent")?,
                path: s("path")?.to_string(),
                done: u64_of(m, "done")? as u32,
                total: u64_of(m, "total")? as u32,
            },
            "status" => Event::Status {
                agent: agent(self, "agent")?,
                status: one_of(&ROSTER, RosterStatus::as_str, s("status")?, "roster status")?,
            },
            "deferred" | "no_answer" => {
                let a = agent(self, "agent")?;
                let request_id = request(m, names)?.ok_or("needs its \"request_id\"")?;
                if kind == "deferred" {
                    Event::Deferred { agent: a, request_id }
                } else {
                    Event::NoAnswer { agent: a, request_id }
                }
            }
            "request_ignored" => {
                let a = agent(self, "agent")?;
                let sender = agent(self, "from")?;
                let why = s("reason")?;
                Event::RequestIgnored {
                    agent: a,
                    request_id: request(m, names)?.ok_or("needs its \"request_id\"")?,
                    message_type: typ("type")?,
                    sender,
                    claimed_from: claimed(self, sender)?,
                    reason: Reason::parse(why).ok_or_else(|| format!("{why:?} is not a reason"))?,
                }
            }
            "crash" => Event::Crash {
                agent: agent(self, "agent")?,
                restart_at: m.get("restart_at").and_then(Value::as_u64).map(Millis),
            },
            "restart" => Event::Restart { agent: agent(self, "agent")? },
            "respawn" => Event::Respawn { agent: agent(self, "agent")? },
            "stall" => Event::Stall { agent: agent(self, "agent")?, until: Millis(u64_of(m, "until")?) },
            "partition" if m.contains_key("between") => {
                let between = m.get("between").and_then(Value::as_array).ok_or("\"between\" names two agents")?;
                let side = |i: usize| between.get(i).and_then(Value::as_str).ok_or("\"between\" names two agents");
                let (a, b) = (side(0)?, side(1)?);
                Event::Partition {
                    index: (u64_of(m, "partition")?.max(1) - 1) as u32,
                    a: self.agent(a),
                    b: self.agent(b),
                    one_way: s("direction")? == "one_way",
                    drop: s("mode")? == "drop",
                    until: m.get("until").and_then(Value::as_u64).map(Millis),
                }
            }
            "heal" => Event::Heal { index: (u64_of(m, "partition")?.max(1) - 1) as u32 },
            "alert" => Event::Alert { agent: agent(self, "agent")?, text: s("text")?.to_string() },
            "read" => Event::Read {
                agent: agent(self, "agent")?,
                path: s("path")?.to_string(),
                lines: u64_of(m, "lines")? as u32,
                bytes: u64_of(m, "bytes")?,
                busy: Millis(u64_of(m, "busy_ms")?),
            },
            "deadlock" => {
                let members = self.members(m)?;
                let requests = m
                    .get("requests")
                    .and_then(Value::as_array)
                    .ok_or("a deadlock names its \"requests\"")?
                    .iter()
                    .map(|r| {
                        r.as_str().and_then(|l| by_label_or_id(l, names)).ok_or("an unknown request in a deadlock")
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Event::Deadlock { members, requests }
            }
            "deadlock_broken" => Event::DeadlockBroken {
                members: self.members(m)?,
                by: request(m, names)?.ok_or("needs its \"request_id\"")?,
                default: match m.get("default").and_then(Value::as_str) {
                    Some(d) => Some(one_of(
                        &TimeoutDefault::all().collect::<Vec<_>>(),
                        TimeoutDefault::as_str,
                        d,
                        "timeout default",
                    )?),
                    None => None,
                },
            },
            "note" => Event::Note { text: s("text")?.to_string() },
            other => return Err(format!("{other:?} is not an event this program knows")),
        };
        Ok(Stamped { t, event })
    }

    fn members(&mut self, m: &Map<String, Value>) -> Result<Vec<AgentId>, String> {
        let list = m.get("members").and_then(Value::as_array).ok_or("names its \"members\"")?;
        list.iter().map(|v| v.as_str().map(|n| self.agent(n)).ok_or_else(|| "a member is a name".to_string())).collect()
    }
}

fn u64_of(m: &Map<String, Value>, k: &str) -> Result<u64, String> {
    m.get(k).and_then(Value::as_u64).ok_or_else(|| format!("needs \"{k}\", a whole number"))
}

fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> Result<&'a str, String> {
    m.get(k).and_then(Value::as_str).ok_or_else(|| format!("needs \"{k}\", a string"))
}

/// The line's `request_id`, learning its `label` on the way.
fn request(m: &Map<String, Value>, names: &mut Names) -> Result<Option<RequestId>, String> {
    let Some(raw) = m.get("request_id") else { return Ok(None) };
    let text = raw.as_str().ok_or("\"request_id\" is a string")?;
    let id =
        uuid::Uuid::parse_str(text).map(RequestId).map_err(|_| format!("{text:?} is not a request id (a UUID)"))?;
    if let Some(label) = m.get("label").and_then(Value::as_str) {
        names.labels.entry(id).or_insert_with(|| label.to_string());
    }
    Ok(Some(id))
}

fn by_label_or_id(s: &str, names: &Names) -> Option<RequestId> {
    uuid::Uuid::parse_str(s)
        .ok()
        .map(RequestId)
        .or_else(|| names.labels.iter().find(|(_, l)| l.as_str() == s).map(|(id, _)| *id))
}

/// Writes `o`'s history: the header, then a line an event.
pub fn write(out: &mut impl std::io::Write, header: &Value, o: &Outcome) -> std::io::Result<()> {
    write_events(out, header, &o.events, &o.names)
}

/// [`write`] for events kept anywhere (a watch's, an audit's).
pub fn write_events(
    out: &mut impl std::io::Write,
    header: &Value,
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
