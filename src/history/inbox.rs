//! A folder of inbox files as a history: what real teams leave behind.
//!
//! Three shapes are read, recognised from the lines themselves:
//! - the reference course's s09/s10 bus, `.team/inbox/<name>.jsonl`: `type`,
//!   `from`, `content`, `timestamp` and the protocol's fields at the top
//!   level; no `to` (the file's name is the recipient); 8-hex request ids;
//!   a plan is *submitted* as a `plan_approval_response` carrying `plan`;
//! - s13's `.mailboxes/<name>.jsonl`: `from`, `to`, `type`, `ts` and the
//!   protocol's fields under `metadata` (`req_000042` ids);
//! - the production agent's shapes: `shutdown_request {reason?}`,
//!   `shutdown_response {request_id, approve, reason?}` (or `shutdown_approved`
//!   / `shutdown_rejected`), `plan_approval_response {request_id, approve,
//!   feedback?}`, the lead named `team-lead`.
//!
//! Each line is a message its file's owner received. It becomes a send and
//! its delivery at the line's time; a request opens a request; a response is
//! applied by its receiver as these runtimes' trackers apply it (by id, with
//! no other check: the s10 bug the oracle is there to catch). Files a read
//! drained hold only their unread tail: what was read and cut is not there,
//! so an answer can look unprompted and a lost line cannot be seen at all.

use super::{BadLine, History};
use crate::protocol::kinds::{OtherName, Written};
use crate::protocol::{Address, AgentId, Kind, Label, MessageType, Millis, Policy, RequestId, Status, Verdict};
use crate::trace::{Event, Names, Stamped};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder of inbox files under `path`: `path` itself, or its
/// `.team/inbox`, `inbox` or `.mailboxes`; `None` if none holds a `.jsonl`.
pub fn find(path: &Path) -> Option<PathBuf> {
    let has = |d: &Path| {
        std::fs::read_dir(d)
            .is_ok_and(|mut r| r.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jsonl"))))
    };
    [path.join(".team").join("inbox"), path.join("inbox"), path.join(".mailboxes"), path.to_path_buf()]
        .into_iter()
        .find(|d| has(d))
}

/// One line of one file, as read.
struct Line {
    owner: String,
    file: String,
    n: usize,
    at: f64,
    v: Map<String, Value>,
}

/// Reads every `*.jsonl` in `dir` (sorted by name) into one history, in the
/// order of the lines' times (a file's own order for equal times).
pub fn read(dir: &Path) -> Result<History, BadLine> {
    let bad = |file: &str, line: usize, reason: String| BadLine { line, reason: format!("{file}: {reason}") };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| bad(&dir.display().to_string(), 0, e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut lines = Vec::new();
    let mut alerts = Vec::new();
    for path in &files {
        let file = path.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        let owner = file.trim_end_matches(".jsonl").to_string();
        let text = crate::input::read_text(path, 64 << 20).map_err(|e| bad(&file, 0, e.to_string()))?;
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(raw) {
                Ok(Value::Object(v)) => {
                    let at = v.get("timestamp").or_else(|| v.get("ts")).and_then(Value::as_f64).unwrap_or(0.0);
                    lines.push(Line { owner: owner.clone(), file: file.clone(), n: i + 1, at, v });
                }
                // The reference's read_inbox would stop on this line (json.loads raises):
                // a finding, not a reason to judge nothing.
                _ => alerts.push((
                    owner.clone(),
                    format!(
                        "line {} of {file} is not a JSON object: a reader that parses every line stops here",
                        i + 1
                    ),
                )),
            }
        }
    }
    lines.sort_by(|a, b| a.at.total_cmp(&b.at));
    let start = lines.first().map_or(0.0, |l| l.at);
    let mut b = Builder::default();
    b.agent(lead_name(&lines));
    for (owner, text) in alerts {
        let agent = b.agent(&owner);
        b.events.push((Stamped { t: Millis::ZERO, event: Event::Alert { agent, text } }, (0, String::new())));
    }
    for l in &lines {
        let t = Millis(((l.at - start).max(0.0) * 1000.0).round() as u64);
        b.line(l, t).map_err(|reason| bad(&l.file, l.n, reason))?;
    }
    let (events, at): (Vec<Stamped>, Vec<(usize, String)>) = b.events.into_iter().unzip();
    let (line_of, origin): (Vec<usize>, Vec<String>) = at.into_iter().unzip();
    let mut names = b.names;
    names.agents = b.team.names;
    let count = names.agents.len();
    let ended_at = events.last().map_or(Millis::ZERO, |e| e.t);
    // How the runtime that wrote the files judged answers, as defences: s13
    // (fields under `metadata`) checks them as this program does; s10 and
    // the production shapes apply an answer by its id alone, whoever sends
    // it and however often (`audit --to-scenario` writes this policy).
    let mut policy = Policy::default();
    if !lines.iter().any(|l| l.v.get("metadata").is_some()) {
        policy.defences.sender_check = false;
        policy.defences.pending_check = false;
    }
    Ok(History {
        scenario: None,
        seed: None,
        names,
        events,
        lines: line_of,
        origin,
        policy,
        require_plan: vec![false; count],
        ended_at,
        stop: crate::world::Stop::Settled,
    })
}

/// The production agent's lead is `team-lead`; the course's is `lead`.
fn lead_name(lines: &[Line]) -> &'static str {
    let named = |n: &str| lines.iter().any(|l| l.owner == n || l.v.get("from").and_then(Value::as_str) == Some(n));
    if named("team-lead") && !named("lead") {
        "team-lead"
    } else {
        crate::protocol::LEAD_NAME
    }
}

#[derive(Default)]
struct Builder {
    team: super::Team,
    names: Names,
    /// Each id as written (`3f2a9c1e`, `req_000042`) and the id it stands for.
    ids: BTreeMap<String, RequestId>,
    /// Each request: its kind, who asked, whom.
    requests: BTreeMap<RequestId, (Kind, AgentId, AgentId)>,
    events: Vec<(Stamped, (usize, String))>,
    seq: u64,
    /// Requests a checked tracker has already applied an answer to.
    decided: std::collections::BTreeSet<RequestId>,
    /// Each request's state as its tracker holds it.
    status: BTreeMap<RequestId, Status>,
}

impl Builder {
    fn agent(&mut self, name: &str) -> AgentId {
        self.team.agent(name)
    }

    /// The id a written id stands for: numbered in the order met, and
    /// labelled with what was written, so reports quote the team's own id.
    fn id(&mut self, written: &str) -> RequestId {
        if let Some(&id) = self.ids.get(written) {
            return id;
        }
        let n = self.ids.len() as u128 + 1;
        let id = RequestId(uuid::Uuid::from_u128(n));
        self.ids.insert(written.to_string(), id);
        self.names.labels.insert(id, written.to_string());
        id
    }

    fn push(&mut self, t: Millis, event: Event, l: &Line) {
        self.events.push((Stamped { t, event }, (l.n, format!("{}:{}", l.file, l.n))));
    }

    fn line(&mut self, l: &Line, t: Millis) -> Result<(), String> {
        let v = &l.v;
        // s13 keeps the protocol's fields under `metadata`.
        let meta = v.get("metadata").and_then(Value::as_object);
        let field = |k: &str| v.get(k).or_else(|| meta.and_then(|m| m.get(k)));
        let from_name = v.get("from").and_then(Value::as_str).ok_or("a message names its sender in \"from\"")?;
        let from = self.agent(from_name);
        let to_name = v.get("to").and_then(Value::as_str).unwrap_or(&l.owner);
        let to = self.agent(to_name);
        let written_type = v.get("type").and_then(Value::as_str).unwrap_or("message");
        let approve = field("approve").and_then(Value::as_bool);
        let rid = field("request_id").map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string));
        // Other runtimes' names for this program's types, as each protocol
        // lists them, then the types as this program names them.
        let other = Kind::ALL.into_iter().find_map(|k| {
            let fits = |o: &&OtherName| {
                o.written == written_type && o.only_with.is_none_or(|f| approve.is_none() && field(f).is_some())
            };
            k.spec().other_names.iter().find(fits).map(|o| (k, o.is))
        });
        let (message_type, approve) = match other {
            Some((k, Written::Request)) => (MessageType::Request(k), None),
            Some((k, Written::Answer { yes })) => (MessageType::Response(k), Some(yes)),
            None => (MessageType::parse(written_type).unwrap_or(MessageType::Message), approve),
        };
        let mut word_keys = vec!["content"];
        for k in Kind::ALL {
            word_keys.extend([k.spec().answer_words, k.spec().request_words.key]);
        }
        let words =
            word_keys.iter().find_map(|k| field(k).and_then(Value::as_str).filter(|s| !s.is_empty())).map(Into::into);
        let kind = message_type.protocol().map(|(k, _)| k);
        // A production shutdown request may carry no id: it is its own request.
        let rid = match rid {
            None if message_type.is_request() => Some(format!("{}:{}", l.file, l.n)),
            r => r,
        };
        let request_id = rid.as_deref().map(|r| self.id(r));
        if let (Some(id), Some(kind), true) = (request_id, kind, message_type.is_request()) {
            if let std::collections::btree_map::Entry::Vacant(slot) = self.requests.entry(id) {
                slot.insert((kind, from, to));
                let label = Label::Named(self.names.label_or_short(id).into());
                self.push(
                    t,
                    Event::Opened { id, label, kind, requester: from, target: to, deadline: Millis::NEVER },
                    l,
                );
            }
        }
        self.seq += 1;
        let seq = self.seq;
        self.push(t, Event::Send { seq, from, to: Address::Agent(to), message_type, request_id, approve, words }, l);
        self.push(t, Event::Deliver { seq, sender: from, claimed_from: from, to, message_type, request_id }, l);
        // The receiver's tracker judges the answer as the runtime that wrote
        // the files does: s10 (and the production agent) by its id alone, s13
        // (fields under `metadata`) by its `match_response`.
        if let (Some(id), Some(kind), true) = (request_id, kind, message_type.is_response()) {
            let approve = approve.ok_or_else(|| format!("a {written_type} says whether it approves (\"approve\")"))?;
            let to_status = if approve { Status::Approved } else { Status::Rejected };
            let checked = meta.is_some();
            let refused = match self.requests.get(&id) {
                _ if !checked => None,
                None => Some(crate::protocol::Reason::UnknownId),
                Some(&(k, _, _)) if k != kind => Some(crate::protocol::Reason::KindMismatch),
                Some(&(_, asker, target)) if from != target || to != asker => {
                    Some(crate::protocol::Reason::WrongSender)
                }
                Some(_) if self.decided.contains(&id) => Some(crate::protocol::Reason::NotPending),
                Some(_) => None,
            };
            if refused.is_none() {
                self.decided.insert(id);
            }
            let was = self.status.insert(id, to_status).unwrap_or(Status::Pending);
            let verdict = match refused {
                Some(why) => {
                    self.status.insert(id, was);
                    Verdict::Ignored(why)
                }
                None => Verdict::Applied { kind, from: was, to: to_status },
            };
            let event = Event::Verdict {
                at: to,
                request_id: id,
                response_kind: kind,
                approve,
                sender: from,
                claimed_from: from,
                verdict,
            };
            self.push(t, event, l);
        }
        Ok(())
    }
}
