//! Claude Code mode (`mailbox = "claude-code"`): each agent's inbox is one
//! JSON array, `inboxes/<name>.json`, kept by the runtime as Claude Code 2.1
//! keeps it (docs/claude-code-runtime.md gives each rule's evidence).
//!
//! - A send writes one entry, its message as JSON inside `text` in the
//!   runtime's shapes (`shutdown_approved`, `requestId`), under the inbox's
//!   lock: read the array, push, rewrite.
//! - The owner's runtime polls every `inbox_poll`. Its read takes no lock and
//!   takes time (the array's size times `read_cost_per_kib`); when it is done
//!   it marks what it read `read`, a rewrite under the lock, and queues the
//!   entries for the agent (#58179: `read` means queued, not seen). The
//!   agent gets them at its turn's end (#50779): a stalled agent is in the
//!   middle of a turn, and a crash then loses what was queued.
//! - Inboxes are by name: a file outlives the process that read it, and a
//!   send to a teammate that has stopped is written all the same (#32276).
//! - An approved shutdown ends the teammate, and the runtime tells the lead
//!   (`teammate_terminated`, in memory, not in a file).
//!
//! What a policy switch or fault changes: `lock = "off"` makes the reader's
//! rewrite a second writer that does not re-read the array, so an entry
//! written during the read is overwritten (#53896); `mark_read = "all"`
//! marks every entry read, also one the read never saw (v2.1.88); a
//! `repeated_delivery` fault fails the mark, so the next poll delivers the
//! same entries again, same timestamps (#92244); a `display_cap` shows at
//! most so many entries a poll (#63684).
//!
//! As in file mode, the world keeps the router's copy of each entry until it
//! is marked read, so an entry handed over is the message the router
//! authenticated (sender, incarnation stamp): the protocol's own checks stay
//! what they are in memory mode.

use super::{Due, Shell, World};
use crate::agent::Input;
use crate::inbox::team::{self as folder, Written};
use crate::inbox::team_text::{self, Said};
use crate::inbox::{ReadCost, MAX_HELD_BYTES};
use crate::protocol::{AgentId, Delivery, Message, Millis, RequestId};
use crate::trace::{Cause, Event};
use std::collections::BTreeMap;

/// How Claude Code's inboxes behave in a run (the scenario's `[policy]` keys).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamMailbox {
    /// The runtime reads an inbox at the next multiple of this after an
    /// entry is written (the lead's and a pane's poller: 1 s).
    pub poll: Millis,
    /// What a read costs, growing with the array's bytes.
    pub cost: ReadCost,
    /// Rewrites take the inbox's lock and re-read the array under it.
    pub lock: bool,
    /// The mark after a read marks every entry read, not only those read.
    pub mark_all: bool,
    /// A send to a name not on the team is refused, not written.
    pub check_recipients: bool,
}

impl Default for TeamMailbox {
    fn default() -> Self {
        TeamMailbox {
            poll: Millis(1000),
            cost: ReadCost { per_read: Millis(1), per_kib: Millis::ZERO },
            lock: true,
            mark_all: false,
            check_recipients: true,
        }
    }
}

/// One entry of an inbox array.
#[derive(Clone, Debug)]
struct Entry {
    /// The inbox's count of entries written: names the entry across rewrites.
    number: u64,
    seq: u64,
    /// Who the entry says wrote it (the claimed sender, as the file shows).
    from: AgentId,
    at: Millis,
    read: bool,
    text: Box<str>,
    /// The router's copy, until the entry is marked read.
    copy: Option<Box<Delivery>>,
}

/// A read begun, waiting for its cost to be paid.
#[derive(Clone, Debug)]
pub struct PendingRead {
    pub agent: AgentId,
    /// The incarnation that began it: a crash in between voids the read.
    pub epoch: u32,
    /// The last entry the read saw (entries after it were written during it).
    last: u64,
    /// The entries it read, by number, in the array's order.
    shown: Vec<u64>,
}

/// The inboxes of one run in Claude Code mode.
#[derive(Clone, Debug)]
pub struct TeamInboxes {
    pub spec: TeamMailbox,
    arrays: Vec<Vec<Entry>>,
    written: u64,
    /// The id each request is written with (`shutdown-<ms>@alice`), by the
    /// request's own: its answers quote the same.
    ids: BTreeMap<RequestId, Box<str>>,
    /// The id texts written so far, to find one not yet taken.
    id_texts: std::collections::BTreeSet<Box<str>>,
    /// Bytes of every array together, counted against the bound.
    held: u64,
    pub full: bool,
    /// An entry was written since the owner's last read began.
    dirty: Vec<bool>,
    armed: Vec<bool>,
    /// When the read this agent is busy with is done.
    pub reading: Vec<Option<Millis>>,
    /// `repeated_delivery`: how many of the agent's next marks fail.
    failing_marks: BTreeMap<AgentId, u32>,
    /// `display_cap`: at most this many entries a read shows the agent.
    caps: BTreeMap<AgentId, u32>,
    /// Who must have plans approved first, by agent (`config.json` says so).
    planned: Vec<bool>,
}

impl TeamInboxes {
    /// `planned`: each member's `planModeRequired`; `names`: how many names
    /// the run has (the members, the adversary, names not on the team).
    pub fn new(spec: TeamMailbox, planned: Vec<bool>, names: usize) -> TeamInboxes {
        let agents = names;
        TeamInboxes {
            spec,
            planned,
            arrays: vec![Vec::new(); agents],
            written: 0,
            ids: BTreeMap::new(),
            id_texts: Default::default(),
            held: 0,
            full: false,
            dirty: vec![false; agents],
            armed: vec![false; agents],
            reading: vec![None; agents],
            failing_marks: BTreeMap::new(),
            caps: BTreeMap::new(),
        }
    }

    /// Everything that decides what the inboxes do next, as text: the
    /// explorer's fingerprint of a state in this mode.
    pub fn state_text(&self) -> String {
        format!(
            "{:?} {:?} {} {:?} {:?} {:?} {:?}",
            self.arrays, self.ids, self.full, self.dirty, self.armed, self.failing_marks, self.caps
        )
    }

    fn bytes_of(&self, agent: AgentId) -> u64 {
        let a = &self.arrays[agent.index()];
        let text: u64 = a.iter().map(|e| e.text.len() as u64).sum();
        folder::array_bytes(a.len() as u64, text, 16 * a.len() as u64)
    }

    /// Each inbox that holds an entry, by its path, as its file reads now
    /// (the stepping page's view of the arrays).
    pub fn inboxes_text(&self, names: &[String]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for i in (0..self.arrays.len()).filter(|i| !self.arrays[*i].is_empty()) {
            out.push((folder::inbox_path(&names[i]), String::from_utf8_lossy(&self.array(i, names)).into_owned()));
        }
        out
    }

    /// Agent `i`'s inbox file as it reads now.
    fn array(&self, i: usize, names: &[String]) -> Vec<u8> {
        let entries = self.arrays[i].iter().map(|e| Written {
            from: &names[e.from.index()],
            text: &e.text,
            at: e.at,
            read: e.read,
        });
        folder::array(entries)
    }

    /// The team folder as the run leaves it, before the runtime removes
    /// it: `config.json` and each inbox, by path inside the folder.
    pub fn folder(&self, names: &[String]) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        let members: Vec<(String, bool)> =
            names.iter().zip(&self.planned).skip(1).map(|(n, p)| (n.clone(), *p)).collect();
        out.insert("config.json".to_string(), folder::config(&names[0], &members));
        // Each member's inbox, and that of each name not on the team that
        // was written to (the adversary, not a member, has none).
        let members = self.planned.len();
        for (i, name) in names.iter().enumerate().take(self.arrays.len()) {
            if i < members || (i > members && !self.arrays[i].is_empty()) {
                out.insert(folder::inbox_path(name), self.array(i, names));
            }
        }
        out
    }
}

/// The text the runtime writes for `m`, sent by `from` at `at`: a
/// protocol's message in its production shape, prose as itself. The task
/// protocol has no production shape: it is written in this simulator's own
/// (`{"type":"task_request",…}`), which an audit reports as unknown.
fn text_of(m: &Message, id: Option<String>, from: &str, at: Millis) -> String {
    let said = match m {
        Message::Message { text } | Message::Broadcast { text } | Message::PlanRequest { text } => {
            return text.to_string()
        }
        Message::Request { kind, words, .. } => {
            Said::Request { kind: *kind, id, words: words.as_ref().map(|w| w.to_string()) }
        }
        Message::Response { kind, approve, words, .. } => {
            Said::Answer { kind: *kind, id, yes: *approve, words: words.as_ref().map(|w| w.to_string()) }
        }
    };
    let timestamp = folder::timestamp(at);
    team_text::write(&said, from, &timestamp).unwrap_or_else(|| {
        serde_json::json!({"type": m.message_type().name(), "requestId": id_text(&said), "from": from, "timestamp": timestamp})
            .to_string()
    })
}

fn id_text(said: &Said) -> Option<&str> {
    match said {
        Said::Request { id, .. } | Said::Answer { id, .. } => id.as_deref(),
        _ => None,
    }
}

/// The id `m` is written with: a request gets the runtime's
/// `<kind>-<ms>@<target>` (one not yet taken), an answer quotes its
/// request's; an id no request was written with (a forgery) is its own.
fn written_id(inb: &mut TeamInboxes, m: &Message, target: &str, at: Millis) -> Option<String> {
    let (kind, id, request) = match m {
        Message::Request { kind, request_id, .. } => (*kind, *request_id, true),
        Message::Response { kind, request_id, .. } => (*kind, *request_id, false),
        _ => return None,
    };
    if let Some(text) = inb.ids.get(&id) {
        return Some(text.to_string());
    }
    if !request {
        return Some(id.to_string());
    }
    let mut ms = folder::EPOCH_MS + at.0 as i64;
    let text = loop {
        let t = format!("{kind}-{ms}@{target}");
        if !inb.id_texts.contains(t.as_str()) {
            break t;
        }
        ms += 1;
    };
    inb.ids.insert(id, text.clone().into_boxed_str());
    inb.id_texts.insert(text.clone().into_boxed_str());
    Some(text)
}

/// What an entry of `text` bytes holds against the bound: its bytes in the
/// file, and the router's copy the world keeps beside it (counted as file
/// mode counts its own).
fn entry_cost(text: usize) -> u64 {
    text as u64 + folder::array_bytes(1, 0, 16) + super::filebox::UNREAD_LINE_BYTES
}

/// A message reaches its receiver: one entry written to its array. Every
/// name has a file, running or not: the runtime writes to any (#32276).
pub fn append<S: Shell>(w: &mut World<S>, mut d: Delivery) {
    d.at = w.now();
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    if inb.full {
        return;
    }
    let (from, to) = (d.envelope.from, d.to);
    let id = written_id(inb, &d.envelope.message, &w.names[to.index()], d.at);
    let text = text_of(&d.envelope.message, id, &w.names[from.index()], d.at);
    let cost = entry_cost(text.len());
    if inb.held.saturating_add(cost) > MAX_HELD_BYTES {
        inb.full = true;
        w.aborted = true;
        let text = format!(
            "message #{} would take the inbox arrays past their bound ({} bytes held, at most {} MiB): the run stops",
            d.seq,
            inb.held,
            MAX_HELD_BYTES >> 20
        );
        w.record(Event::Note { text });
        return;
    }
    inb.held += cost;
    inb.written += 1;
    let seq = d.seq;
    let entry = Entry {
        number: inb.written,
        seq,
        from,
        at: d.at,
        read: false,
        text: text.into_boxed_str(),
        copy: Some(Box::new(d)),
    };
    let array = &mut inb.arrays[to.index()];
    array.push(entry);
    let entries = array.len();
    inb.dirty[to.index()] = true;
    if w.tracing() {
        let path = folder::inbox_path(&w.names[to.index()]);
        let entries = crate::words::plural(entries as u64, "entry");
        w.record(Event::Note { text: format!("message #{seq} written to {path} ({entries})") });
    }
    arm(w, to);
}

/// Makes sure `agent`'s runtime reads its inbox at its next poll.
pub fn arm<S: Shell>(w: &mut World<S>, agent: AgentId) {
    let now = w.now();
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    if std::mem::replace(&mut inb.armed[agent.index()], true) {
        return;
    }
    let at = super::mailbox::next_poll(now, inb.spec.poll);
    w.schedule(at, Due::ReadInbox { agent });
}

/// The poll: the runtime reads the array, unlocked. What it read is marked
/// and queued when the read's cost is paid.
pub fn begin<S: Shell>(w: &mut World<S>, agent: AgentId) {
    let now = w.now();
    let epoch = w.sim.epochs[agent.index()];
    let active = w.sim.roster.statuses[agent.index()].is_active();
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    if !active {
        // Down: a restart or a respawn reads again (the file stays).
        inb.armed[agent.index()] = false;
        return;
    }
    inb.dirty[agent.index()] = false;
    let cap = inb.caps.get(&agent).map_or(usize::MAX, |c| *c as usize);
    let array = &inb.arrays[agent.index()];
    let last = array.last().map_or(0, |e| e.number);
    let shown: Vec<u64> = array.iter().filter(|e| !e.read).take(cap).map(|e| e.number).collect();
    let bytes = inb.bytes_of(agent);
    let cost = inb.spec.cost.of(bytes);
    inb.reading[agent.index()] = Some(now.after(cost));
    let lines = shown.len() as u32;
    w.schedule(now.after(cost), Due::TeamRead(Box::new(PendingRead { agent, epoch, last, shown })));
    if w.tracing() {
        let path = folder::inbox_path(&w.names[agent.index()]);
        w.record(Event::Read { agent, path, lines, bytes, busy: cost });
    }
}

/// The read is done: mark what was read (a rewrite), and queue it for the
/// agent, who gets it at its turn's end.
pub fn finish<S: Shell>(w: &mut World<S>, read: PendingRead) {
    let PendingRead { agent, epoch, last, shown } = read;
    let stale = w.sim.epochs[agent.index()] != epoch;
    let active = w.sim.roster.statuses[agent.index()].is_active();
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    inb.armed[agent.index()] = false;
    inb.reading[agent.index()] = None;
    if stale {
        // The process that read is gone before it marked anything.
        if active {
            arm(w, agent);
        }
        return;
    }
    let mut notes = Vec::new();
    let mut lost = Vec::new();
    let failed = match inb.failing_marks.get_mut(&agent) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    };
    let (lock, mark_all) = (inb.spec.lock, inb.spec.mark_all);
    let array = &mut inb.arrays[agent.index()];
    let mut handed: Vec<Delivery> = Vec::with_capacity(shown.len());
    for e in array.iter_mut().filter(|e| shown.binary_search(&e.number).is_ok()) {
        if let Some(d) = &e.copy {
            handed.push((**d).clone());
        }
    }
    if failed {
        let (entries, stay) =
            (crate::words::plural(shown.len() as u64, "entry"), if shown.len() == 1 { "stays" } else { "stay" });
        notes.push(format!("the mark after the read fails: {entries} {stay} unread, to be read again"));
    } else {
        if !lock {
            // The rewrite writes back the array it read: whatever was
            // written during the read is overwritten.
            let gone: Vec<Entry> = array.iter().filter(|e| e.number > last).cloned().collect();
            array.retain(|e| e.number <= last);
            for e in gone {
                lost.push((e, Cause::LostUpdate));
            }
        }
        for e in array.iter_mut() {
            let was_shown = shown.binary_search(&e.number).is_ok();
            if !e.read && (was_shown || mark_all) {
                e.read = true;
                if let Some(d) = e.copy.take() {
                    if !was_shown {
                        lost.push((Entry { copy: Some(d), ..e.clone() }, Cause::MarkedRead));
                    }
                }
            }
        }
    }
    if !failed && !handed.is_empty() {
        let name = &w.names[agent.index()];
        let marked =
            if mark_all { "every entry".to_string() } else { crate::words::plural(shown.len() as u64, "entry") };
        let path = folder::inbox_path(name);
        notes.push(format!("the runtime marks {marked} of {path} read and queues {} for {name}", handed.len()));
    }
    let held_back = array.iter().any(|e| !e.read);
    let more = inb.dirty[agent.index()] || held_back || failed;
    let removed: u64 =
        lost.iter().filter(|(_, c)| *c == Cause::LostUpdate).map(|(e, _)| entry_cost(e.text.len())).sum();
    inb.held = inb.held.saturating_sub(removed);
    for text in notes {
        w.record(Event::Note { text });
    }
    for (e, cause) in lost {
        let message_type =
            e.copy.as_ref().map_or(crate::protocol::MessageType::Message, |d| d.envelope.message.message_type());
        w.record(Event::Dropped { seq: e.seq, to: agent, message_type, cause });
    }
    let now = w.now();
    for mut d in handed {
        d.at = now;
        w.to_mailbox(agent, Input::Deliver(d));
    }
    if more {
        arm(w, agent);
    }
}

/// `repeated_delivery`: the next `times - 1` marks of `agent`'s reads fail.
pub fn fail_marks<S: Shell>(w: &mut World<S>, agent: AgentId, times: u32) {
    let name = w.names[agent.index()].clone();
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    inb.failing_marks.insert(agent, times.saturating_sub(1));
    let text = format!(
        "{name}'s runtime will fail to mark its inbox read {} times: each poll delivers the same entries again",
        times.saturating_sub(1)
    );
    w.record(Event::Note { text });
}

/// `display_cap`: from now on a read shows `agent` at most `shown` entries.
pub fn cap_display<S: Shell>(w: &mut World<S>, agent: AgentId, shown: u32) {
    let name = w.names[agent.index()].clone();
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    inb.caps.insert(agent, shown);
    let entries = crate::words::plural(u64::from(shown), "entry");
    w.record(Event::Note { text: format!("{name}'s runtime now shows at most {entries} a read") });
}

/// `phantom_send`: `from` sends `text` to `to`, a name not on the team. With
/// `recipients = "team"` (the default) the runtime refuses it and the
/// sender is told; with `"any"`, as Claude Code does (claude-code#84494,
/// #25135), it writes `inboxes/<to>.json` and reports the message sent,
/// and nobody ever reads it.
pub fn phantom_send<S: Shell>(w: &mut World<S>, from: AgentId, to: &str, text: crate::protocol::Text) {
    let Some(p) = w.names.iter().position(|n| n == to).map(|i| AgentId(i as u32)) else { return };
    let Some(inb) = w.sim.team.as_deref() else { return };
    let message_type = crate::protocol::MessageType::Message;
    if !w.sim.roster.statuses[from.index()].is_active() {
        let text = format!("{} is not running: no message to {to} is sent", w.names[from.index()]);
        w.record(Event::Note { text });
        return;
    }
    if inb.spec.check_recipients {
        let error = crate::protocol::SendError::UnknownRecipient;
        let to = crate::protocol::Address::Agent(p);
        w.record(Event::Refuse { from, to, message_type, error });
        return;
    }
    w.next_msg += 1;
    let seq = w.next_msg;
    let at = w.now();
    let to_address = crate::protocol::Address::Agent(p);
    let words = Some(text.clone());
    w.record(Event::Send { seq, from, to: to_address, message_type, request_id: None, approve: None, words });
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    let cost = entry_cost(text.len());
    inb.held = inb.held.saturating_add(cost);
    inb.written += 1;
    let entry =
        Entry { number: inb.written, seq, from, at, read: false, text: text.to_string().into_boxed_str(), copy: None };
    inb.arrays[p.index()].push(entry);
    let path = folder::inbox_path(to);
    let sender = &w.names[from.index()];
    let text = format!(
        "{sender}'s message to {to} is written to {path} and reported sent: {to} is not on the team, and nobody will read it (claude-code#84494)"
    );
    w.record(Event::Alert { agent: from, text });
}

/// `misrouted_id`: teammate `agent` asks the lead for its own shutdown, as
/// Claude Code lets a teammate do (claude-code#81464). Its runtime checks no
/// asker: the request goes out, and its id names its target, the lead
/// (`shutdown-<ms>@lead`). What the lead does with it is the lead's: the
/// sender check turns it away (only the lead asks for a shutdown).
pub fn ask_the_lead_to_stop<S: Shell>(w: &mut World<S>, agent: AgentId) {
    let name = w.names[agent.index()].clone();
    if !w.sim.roster.statuses[agent.index()].is_active() {
        w.record(Event::Note { text: format!("{name} is not running: it asks nothing") });
        return;
    }
    // Its own id, from the run's message count: the same run, the same id.
    let request_id = RequestId(uuid::Uuid::from_u128(0x81464 << 96 | u128::from(w.next_msg + 1)));
    let words = Some(crate::protocol::Text::from("my work is done: may I stop?"));
    let message =
        Message::Request { kind: crate::protocol::Kind::Shutdown, request_id, words, deadline: Millis::NEVER };
    let lead = AgentId::LEAD;
    let text = format!(
        "{name}'s runtime lets {name} ask the lead for a shutdown of its own; the request's id names its target, {} \
         (claude-code#81464)",
        w.names[lead.index()]
    );
    w.record(Event::Note { text });
    let env =
        crate::protocol::Envelope { from: agent, to: crate::protocol::Address::Agent(lead), sent_at: w.now(), message };
    w.transmit(agent, lead, env);
}

/// A teammate shut down: the runtime tells the lead, in memory (the lead's
/// inbox file never holds it).
pub fn terminated<S: Shell>(w: &mut World<S>, agent: AgentId) {
    if w.sim.team.is_none() || agent.index() == 0 {
        return;
    }
    let (name, lead) = (&w.names[agent.index()], &w.names[0]);
    let text =
        format!("the runtime tells {lead}: \"{name} has shut down.\" (teammate_terminated, not written to a file)");
    w.record(Event::Note { text });
}

/// The run is over: entries nobody will read are lost with their owner,
/// and the runtime removes the team folder.
pub fn settle<S: Shell>(w: &mut World<S>) {
    let Some(inb) = w.sim.team.as_deref_mut() else { return };
    let mut left = Vec::new();
    for a in &mut inb.arrays {
        for e in a.iter_mut().filter(|e| !e.read) {
            if let Some(d) = e.copy.take() {
                left.push(*d);
            }
        }
    }
    for d in left {
        w.lost_with_receiver(&d);
    }
    w.record(Event::Note { text: "the session ends: the runtime removes the team folder".to_string() });
}
