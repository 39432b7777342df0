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
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most of a folder's inbox files `read` reads in all, in bytes, each
/// line counted as at least [`LINE_FLOOR`] bytes: past it, the folder is
/// refused (naming the bound and the file that passed it) rather than run
/// out of memory. A line costs its events whatever its length, so a short
/// line is charged the floor; memory then stays within
/// [`MEMORY_PER_BYTE`] bytes for each byte counted (docs/audit.md).
pub const MAX_FOLDER_BYTES: u64 = 64 << 20;
/// See [`MAX_FOLDER_BYTES`].
pub const LINE_FLOOR: u64 = 128;
/// The memory `audit` of a folder may take for each byte counted against
/// [`MAX_FOLDER_BYTES`], as measured (tests/attack_audit.rs holds it).
pub const MEMORY_PER_BYTE: u64 = 10;
/// Lines that are not a message said one by one in each file; past these, a
/// count (a file of junk would otherwise cost a note a line).
const ALERTS_A_FILE: usize = 5;

/// The folder of inbox files under `path`: `path` itself, or its
/// `.team/inbox`, `inbox` or `.mailboxes`; `None` if none holds a `.jsonl`.
/// A linked folder under `path` is not followed: only what is inside it.
pub fn find(path: &Path) -> Option<PathBuf> {
    let has = |d: &Path| {
        std::fs::read_dir(d)
            .is_ok_and(|mut r| r.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "jsonl"))))
    };
    let real_dir = |d: &Path| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir());
    [path.join(".team").join("inbox"), path.join("inbox"), path.join(".mailboxes")]
        .into_iter()
        .filter(|d| real_dir(d) && d.parent().is_some_and(real_dir))
        .chain([path.to_path_buf()])
        .find(|d| has(d))
}

/// A note about an agent (its name; empty: about the folder), shown as an
/// alert: what the reader saw but does not judge.
type Note = (String, String);

/// One line of one file, as read: only what the reader looks at, so that a
/// line costs memory for its fields, not for a parsed JSON object.
struct Line {
    /// The file it is in, an index into the files read.
    file: u32,
    n: usize,
    at: f64,
    from: Option<String>,
    to: Option<String>,
    typ: Option<String>,
    /// s13 keeps the protocol's fields under `metadata`.
    meta: bool,
    /// The protocol's fields this reader uses ([`fields`]), from the top
    /// level or else from `metadata`.
    fields: Vec<(&'static str, Value)>,
}

impl Line {
    fn field(&self, k: &str) -> Option<&Value> {
        self.fields.iter().find(|(key, _)| *key == k).map(|(_, v)| v)
    }
}

/// Every field of a line the reader looks at besides `from`, `to`, `type`:
/// the ids and answers, the words of each protocol, and the fields other
/// runtimes' names depend on.
fn fields() -> Vec<&'static str> {
    let mut out = vec!["approve", "request_id", "content"];
    for k in Kind::ALL {
        out.extend([k.spec().answer_words, k.spec().request_words.key]);
        out.extend(k.spec().other_names.iter().filter_map(|o| o.only_with));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The regular `*.jsonl` files in `dir` (sorted by name), and a note for
/// each link skipped: only regular files inside the folder are read, so a
/// link cannot have a file outside it (`/etc/passwd`) read and reported on,
/// nor one file read several times.
pub(crate) fn listed(dir: &Path) -> Result<(Vec<PathBuf>, Vec<Note>), BadLine> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|e| BadLine { line: 0, reason: format!("cannot list the folder: {e}") })?;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        match e.file_type() {
            // About the folder, not an agent: the lead's report carries it.
            Ok(t) if t.is_symlink() => skipped.push((
                String::new(),
                format!("{name} is a symbolic link: only regular files inside the folder are read; skipped"),
            )),
            // Anything else (a folder, a pipe, a device) is refused by the read, saying what it is.
            _ => files.push(path),
        }
    }
    files.sort();
    Ok((files, skipped))
}

/// Reads every regular `*.jsonl` in `dir` (sorted by name) into one history,
/// in the order of the lines' times (a file's own order for equal times).
/// Refused: a folder where no line is a message (nothing could be read),
/// and one past [`MAX_FOLDER_BYTES`].
pub fn read(dir: &Path) -> Result<History, BadLine> {
    let (files, skipped) = listed(dir)?;
    let names = files.iter().map(|p| p.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned()));
    // Each file read when its turn comes, so that one file's text is held at a time.
    read_each(names.collect(), skipped, |i, room| crate::input::read_regular(&files[i], room).map(Cow::Owned))
}

/// Reads inbox files' texts held in memory, `(file name, text)` sorted by
/// name, as [`read`] reads a folder's (what `watch` has kept of one).
pub fn read_texts(texts: &[(String, String)]) -> Result<History, BadLine> {
    let names = texts.iter().map(|(name, _)| name.clone()).collect();
    read_each(names, Vec::new(), |i, room| {
        let text = &texts[i].1;
        match text.len() as u64 > room {
            true => Err(crate::input::ReadError::TooBig { bytes: Some(text.len() as u64), max: room }),
            false => Ok(Cow::Borrowed(text.as_str())),
        }
    })
}

/// Reads the inbox files `files`, the text of the `i`th given by `text_of(i,
/// room)`, at most `room` bytes; `skipped`: what was not read, already said.
fn read_each<'t>(
    files: Vec<String>,
    skipped: Vec<Note>,
    mut text_of: impl FnMut(usize, u64) -> Result<Cow<'t, str>, crate::input::ReadError>,
) -> Result<History, BadLine> {
    let bad = |file: &str, line: usize, reason: String| BadLine { line, reason: format!("{file}: {reason}") };
    let wanted = fields();
    let mut names: Vec<String> = Vec::with_capacity(files.len());
    let mut lines = Vec::new();
    let mut alerts = skipped;
    let mut unjudged: Vec<(String, String)> = Vec::new();
    let links = alerts.len();
    let mut junk_total = 0usize;
    let mut untimed_total = 0usize;
    let mut counted = 0u64;
    for (i, file) in files.iter().enumerate() {
        let file = file.clone();
        let owner = file.trim_end_matches(".jsonl").to_string();
        let past = |line: usize| {
            let why = format!(
                "the folder's inbox files come to more than {} MiB with this one (each line counted as at least \
                 {LINE_FLOOR} bytes); at most {} MiB of a folder's inbox files are read in all (docs/audit.md): \
                 audit a part of the folder",
                MAX_FOLDER_BYTES >> 20,
                MAX_FOLDER_BYTES >> 20
            );
            bad(&file, line, why)
        };
        let text = text_of(i, MAX_FOLDER_BYTES - counted).map_err(|e| match e {
            crate::input::ReadError::TooBig { .. } => past(0),
            e => bad(&file, 0, e.to_string()),
        })?;
        let index = names.len() as u32;
        let mut junk = 0usize;
        let mut untimed = 0usize;
        for (i, raw) in text.lines().enumerate() {
            let blank = raw.trim().is_empty();
            counted += if blank { raw.len() as u64 + 1 } else { (raw.len() as u64 + 1).max(LINE_FLOOR) };
            if counted > MAX_FOLDER_BYTES {
                return Err(past(i + 1));
            }
            if blank {
                continue;
            }
            match serde_json::from_str::<Value>(raw) {
                // The reference writes `time.time()`: a line with no such
                // number cannot be placed in time, and is not judged (taken
                // as 0, it could make an answer come before its question).
                Ok(Value::Object(v)) if !has_seconds(&v) => {
                    untimed += 1;
                    if untimed <= ALERTS_A_FILE {
                        let why = "its timestamp is missing or not a number of seconds (the reference writes \
                                   time.time()): it cannot be placed in time";
                        unjudged.push((format!("{file}:{}", i + 1), why.to_string()));
                    }
                }
                Ok(Value::Object(v)) => lines.push(compact(index, i + 1, v, &wanted)),
                // The reference's read_inbox would stop on this line (json.loads raises):
                // a finding, not a reason to judge nothing.
                _ => {
                    junk += 1;
                    if junk <= ALERTS_A_FILE {
                        let text = format!(
                            "line {} of {file} is not a JSON object: a reader that parses every line stops here",
                            i + 1
                        );
                        alerts.push((owner.clone(), text));
                    }
                }
            }
        }
        if untimed > ALERTS_A_FILE {
            let why = format!("and {} more lines with no timestamp in seconds", untimed - ALERTS_A_FILE);
            unjudged.push((file.clone(), why));
        }
        junk_total += junk;
        untimed_total += untimed;
        if junk > ALERTS_A_FILE {
            let more = format!("and {} more lines of {file} that are not JSON objects", junk - ALERTS_A_FILE);
            alerts.push((owner.clone(), more));
        }
        names.push(file);
    }
    // Nothing to judge is not a pass: a folder whose files hold no message
    // is refused as a single unreadable file is. (A folder with no inbox
    // file at all reads as no events: `find` says there is none to audit.)
    if lines.is_empty() && !(files.is_empty() && alerts.is_empty() && unjudged.is_empty()) {
        let mut why = vec![crate::words::plural(names.len() as u64, "regular inbox file")];
        if junk_total > 0 {
            why.push(format!(
                "{} that {} not a JSON object",
                crate::words::plural(junk_total as u64, "line"),
                if junk_total == 1 { "is" } else { "are" }
            ));
        }
        if links > 0 {
            why.push(format!("{} skipped", crate::words::plural(links as u64, "symbolic link")));
        }
        if untimed_total > 0 {
            why.push(format!("{} with no timestamp in seconds", crate::words::plural(untimed_total as u64, "line")));
        }
        if why.len() == 1 {
            why.push("every one empty".into());
        }
        let first = alerts.first().map_or(String::new(), |(_, a)| format!(" (first: {a})"));
        let why = format!(
            "no line of its inbox files is a message: {}{first}; a message is a JSON object on a line of a regular \
             *.jsonl file in the folder",
            why.join(", ")
        );
        return Err(BadLine { line: 0, reason: why });
    }
    let mut h = build(lines, alerts, names)?;
    h.unjudged = unjudged;
    Ok(h)
}

/// Whether a line gives its time as the reference writes it: a number of
/// seconds (`timestamp`, or `ts`).
fn has_seconds(v: &Map<String, Value>) -> bool {
    v.get("timestamp").or_else(|| v.get("ts")).and_then(Value::as_f64).is_some_and(f64::is_finite)
}

/// `v` reduced to what the reader uses.
fn compact(file: u32, n: usize, mut v: Map<String, Value>, wanted: &[&'static str]) -> Line {
    // Lines without it are set aside before (`has_seconds`).
    let at = v.get("timestamp").or_else(|| v.get("ts")).and_then(Value::as_f64).unwrap_or(0.0);
    let mut text = |k: &str| match v.remove(k) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let (from, to, typ) = (text("from"), text("to"), text("type"));
    let mut meta = match v.remove("metadata") {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    };
    let mut fields = Vec::new();
    for &k in wanted {
        if let Some(x) = v.remove(k).or_else(|| meta.as_mut().and_then(|m| m.remove(k))) {
            fields.push((k, x));
        }
    }
    fields.shrink_to_fit();
    Line { file, n, at, from, to, typ, meta: meta.is_some(), fields }
}

/// The history the lines `lines` of the files `files` tell, the notes
/// `alerts` (each about an agent) first.
fn build(mut lines: Vec<Line>, alerts: Vec<Note>, files: Vec<String>) -> Result<History, BadLine> {
    // At the same instant a request goes first and a response last: the
    // files cannot say which came first, and an answer never precedes its
    // question (in the files' order, `lead.jsonl` comes before `zed.jsonl`).
    let rank = |l: &Line| match l.typ.as_deref() {
        Some(t) if t.ends_with("_request") => 0,
        Some(t) if t.ends_with("_response") => 2,
        _ => 1,
    };
    lines.sort_by(|a, b| a.at.total_cmp(&b.at).then_with(|| rank(a).cmp(&rank(b))));
    let start = lines.first().map_or(0.0, |l| l.at);
    let mut b = Builder::default();
    // Two or three events a line: reserved, so that growing the lists never
    // holds two copies of them.
    let room = 2 * lines.len() + alerts.len();
    b.events.reserve(room);
    b.line_of.reserve(room);
    b.origin.reserve(room);
    let lead = b.agent(lead_name(&lines, &files));
    for (owner, text) in alerts {
        let agent = if owner.is_empty() { lead } else { b.agent(&owner) };
        b.push(Millis::ZERO, Event::Alert { agent, text }, 0, u32::MAX);
    }
    for l in &lines {
        let t = Millis(((l.at - start).max(0.0) * 1000.0).round() as u64);
        let owner = files[l.file as usize].trim_end_matches(".jsonl");
        b.line(l, owner, &files, t)
            .map_err(|reason| BadLine { line: l.n, reason: format!("{}: {reason}", files[l.file as usize]) })?;
    }
    if b.reuses > REUSES_SAID {
        let more = b.reuses - REUSES_SAID;
        let s = if more == 1 { "" } else { "s" };
        let text = format!("and {more} more request{s} made under an id already used");
        b.push(b.events.last().map_or(Millis::ZERO, |e| e.t), Event::Alert { agent: lead, text }, 0, u32::MAX);
    }
    let checked = lines.iter().any(|l| l.meta);
    drop(lines);
    let (events, line_of, origin) = (b.events, b.line_of, b.origin);
    let mut names = b.names;
    names.agents = b.team.names;
    let count = names.agents.len();
    let ended_at = events.last().map_or(Millis::ZERO, |e| e.t);
    // How the runtime that wrote the files judged answers, as defences: s13
    // (fields under `metadata`) checks them as this program does; s10 and
    // the production shapes apply an answer by its id alone, whoever sends
    // it and however often (`audit --to-scenario` writes this policy).
    let mut policy = Policy::default();
    if !checked {
        policy.defences.sender_check = false;
        policy.defences.pending_check = false;
    }
    Ok(History {
        scenario: None,
        seed: None,
        names,
        events,
        lines: line_of,
        origin: super::Origin { files, of: origin },
        policy,
        require_plan: vec![false; count],
        ended_at,
        stop: crate::world::Stop::Settled,
        unjudged: Vec::new(),
        undecided: undecided(),
        // The reference's files are replayed as messages, not as its drains.
        mailbox: crate::world::MailboxWorld::Memory,
    })
}

/// What a folder of inbox files cannot show: a message lost on the way, or
/// taken by a read that drained it, leaves no line in them.
fn undecided() -> Vec<(crate::oracle::Invariant, String)> {
    let lost = "the files hold what reached each inbox, not what was sent: a message lost on the way leaves no line";
    let mut list = vec![(crate::oracle::Invariant::NoSilentLoss, lost.to_string())];
    list.extend(super::standing::not_in_messages());
    list
}

/// The production agent's lead is `team-lead`; the course's is `lead`.
fn lead_name(lines: &[Line], files: &[String]) -> &'static str {
    let named = |n: &str| {
        files.iter().any(|f| f.trim_end_matches(".jsonl") == n) || lines.iter().any(|l| l.from.as_deref() == Some(n))
    };
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
    /// An id written again for another request (another kind, asker or
    /// target), and the requests made under it.
    reused: BTreeMap<String, Reused>,
    /// Requests made under an id already used, so far.
    reuses: usize,
    /// Each request: its kind, who asked, whom, and the file and line that made it.
    requests: BTreeMap<RequestId, Made>,
    events: Vec<Stamped>,
    /// Each event's line, and its file (an index into the files read).
    line_of: Vec<usize>,
    origin: Vec<u32>,
    seq: u64,
    /// Ids made so far.
    made: u128,
    /// Requests a checked tracker has already applied an answer to.
    decided: std::collections::BTreeSet<RequestId>,
    /// Each request's state as its tracker holds it.
    status: BTreeMap<RequestId, Status>,
}

/// The requests made under one written id used again.
struct Reused {
    /// The last made.
    latest: RequestId,
    /// How many were made under it.
    count: usize,
    /// The last made of each target by each asker: what an answer from the
    /// target to the asker quoting the id answers.
    of: BTreeMap<(AgentId, AgentId), RequestId>,
}

/// Reused ids said one by one; past these, a count.
const REUSES_SAID: usize = 20;

/// A request as its line made it.
#[derive(Clone, Copy)]
struct Made {
    kind: Kind,
    asker: AgentId,
    target: AgentId,
    file: u32,
    line: usize,
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
        self.fresh(written, written.to_string())
    }

    fn fresh(&mut self, written: &str, label: String) -> RequestId {
        self.made += 1;
        let id = RequestId(uuid::Uuid::from_u128(self.made));
        self.ids.entry(written.to_string()).or_insert(id);
        self.names.labels.insert(id, label);
        id
    }

    /// The id of the request a line makes under the written id `written`.
    /// The same request sent again keeps its id; another request under an
    /// id already used is a request of its own (labelled `id#2`), with a
    /// note: ids are fresh for each request, and merging the two would judge
    /// one's answers against the other's target.
    fn request(&mut self, written: &str, made: Made, files: &[String], t: Millis) -> RequestId {
        let Some(&first) = self.ids.get(written) else { return self.id(written) };
        let last = self.reused.get(written).map_or(first, |r| r.latest);
        match self.requests.get(&last) {
            Some(m) if (m.kind, m.asker, m.target) == (made.kind, made.asker, made.target) => return last,
            None => return last,
            Some(_) => {}
        }
        let m = self.requests[&first];
        let count = self.reused.get(written).map_or(1, |r| r.count) + 1;
        let label = format!("{written}#{count}");
        let id = self.fresh(written, label.clone());
        let r = self.reused.entry(written.to_string()).or_insert_with(|| Reused {
            latest: first,
            count: 1,
            of: BTreeMap::from([((m.target, m.asker), first)]),
        });
        r.latest = id;
        r.count = count;
        r.of.insert((made.target, made.asker), id);
        // Said one by one for the first few: a file reusing one id on every
        // line would otherwise cost a note a line (a count says the rest).
        self.reuses += 1;
        if self.reuses > REUSES_SAID {
            return id;
        }
        let name = |a: AgentId| self.team.names.get(a.index()).cloned().unwrap_or_default();
        let file = |f: u32| files.get(f as usize).map_or("", String::as_str);
        let text = format!(
            "request id {written} is used again, at {}:{}, for a {} request from {} to {} ([{label}]); {}:{} made \
             it for a {} request from {} to {}: each request needs an id of its own, and an answer quoting it is \
             judged against the request made of the one answering",
            file(made.file),
            made.line,
            made.kind,
            name(made.asker),
            name(made.target),
            file(m.file),
            m.line,
            m.kind,
            name(m.asker),
            name(m.target),
        );
        self.push(t, Event::Alert { agent: made.asker, text }, made.line, made.file);
        id
    }

    /// The request an answer from `from` to `to` quoting `written` answers:
    /// under a reused id, the latest made of `from` by `to`, else the latest.
    fn answered(&mut self, written: &str, from: AgentId, to: AgentId) -> RequestId {
        match self.reused.get(written) {
            Some(r) => r.of.get(&(from, to)).copied().unwrap_or(r.latest),
            None => self.id(written),
        }
    }

    fn push(&mut self, t: Millis, event: Event, line: usize, file: u32) {
        self.events.push(Stamped { t, event });
        self.line_of.push(line);
        self.origin.push(file);
    }

    fn line(&mut self, l: &Line, owner: &str, files: &[String], t: Millis) -> Result<(), String> {
        let field = |k: &str| l.field(k);
        let from_name = l.from.as_deref().ok_or("a message names its sender in \"from\"")?;
        let from = self.agent(from_name);
        let to_name = l.to.as_deref().unwrap_or(owner);
        let to = self.agent(to_name);
        let written_type = l.typ.as_deref().unwrap_or("message");
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
            None if message_type.is_request() => Some(format!("{}:{}", files[l.file as usize], l.n)),
            r => r,
        };
        let request_id = match (rid.as_deref(), kind) {
            (Some(r), Some(kind)) if message_type.is_request() => {
                let made = Made { kind, asker: from, target: to, file: l.file, line: l.n };
                Some(self.request(r, made, files, t))
            }
            (Some(r), Some(_)) if message_type.is_response() => Some(self.answered(r, from, to)),
            (r, _) => r.map(|r| self.id(r)),
        };
        if let (Some(id), Some(kind), true) = (request_id, kind, message_type.is_request()) {
            if let std::collections::btree_map::Entry::Vacant(slot) = self.requests.entry(id) {
                slot.insert(Made { kind, asker: from, target: to, file: l.file, line: l.n });
                let label = Label::Named(self.names.label_or_short(id).into());
                self.push(
                    t,
                    Event::Opened { id, label, kind, requester: from, target: to, deadline: Millis::NEVER },
                    l.n,
                    l.file,
                );
            }
        }
        self.seq += 1;
        let seq = self.seq;
        self.push(
            t,
            Event::Send { seq, from, to: Address::Agent(to), message_type, request_id, approve, words },
            l.n,
            l.file,
        );
        self.push(
            t,
            Event::Deliver { seq, sender: from, claimed_from: from, to, message_type, request_id },
            l.n,
            l.file,
        );
        // The receiver's tracker judges the answer as the runtime that wrote
        // the files does: s10 (and the production agent) by its id alone, s13
        // (fields under `metadata`) by its `match_response`.
        if let (Some(id), Some(kind), true) = (request_id, kind, message_type.is_response()) {
            let approve = approve.ok_or_else(|| format!("a {written_type} says whether it approves (\"approve\")"))?;
            let to_status = if approve { Status::Approved } else { Status::Rejected };
            let checked = l.meta;
            let refused = match self.requests.get(&id) {
                _ if !checked => None,
                None => Some(crate::protocol::Reason::UnknownId),
                Some(m) if m.kind != kind => Some(crate::protocol::Reason::KindMismatch),
                Some(m) if from != m.target || to != m.asker => Some(crate::protocol::Reason::WrongSender),
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
            self.push(t, event, l.n, l.file);
        }
        Ok(())
    }
}
