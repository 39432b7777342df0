//! File mode: each agent's inbox is an append-only JSON Lines file in the
//! simulated file system (`crate::inbox`), as in the reference course.
//!
//! A message that arrives is appended to its receiver's file instead of
//! being put in the actor's mailbox. The owner reads the file on its own
//! schedule (a poll every `inbox_poll`, on the clock's ticks), and a read
//! takes virtual time (its cost grows with the file): only when it is done
//! do the lines reach the actor, and only then does the drain truncate or
//! commit. Whatever lands in between is where the reference loses messages.
//!
//! The world keeps the router's copy of every line not yet read, by message
//! number, so a line read back is handed over as the router authenticated it
//! (sender, incarnation stamp): a file cannot say who wrote it, the router
//! can, and the protocol's checks stay what they are in memory mode.

use super::{Due, Shell, World};
use crate::agent::Input;
use crate::inbox::drain::{begin_read_by, finish_read_by};
use crate::inbox::{
    framed_shared, inbox_path, prune, Drain, Line, LineError, ReadCost, ReadToken, SharedText, SimFs, Skipped,
    MAX_HELD_BYTES,
};
use crate::protocol::{AgentId, Delivery, Millis};
use crate::trace::{Cause, Event, RosterStatus};
use std::collections::{BTreeMap, VecDeque};

/// How file inboxes behave in a run (the scenario's `[policy]` keys).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMailbox {
    pub drain: Drain,
    /// An owner reads its file at the next multiple of this after a line lands.
    pub poll: Millis,
    pub cost: ReadCost,
    /// Cut what has been read from the front of the file after each read.
    pub prune: bool,
}

impl Default for FileMailbox {
    fn default() -> Self {
        FileMailbox {
            drain: Drain::ReadThenTruncate,
            poll: Millis(100),
            cost: ReadCost { per_read: Millis(1), per_kib: Millis::ZERO },
            prune: false,
        }
    }
}

/// A read begun, waiting for its cost to be paid.
#[derive(Clone, Debug)]
pub struct PendingRead {
    pub agent: AgentId,
    /// The incarnation that began it: a crash in between voids the read.
    pub epoch: u32,
    pub token: ReadToken,
    /// The message numbers of the lines read, in file order: all a finished
    /// read needs of them (the router's copies say the rest). The parsed
    /// lines are dropped as the read begins, not held while it is paid for:
    /// 100,000 owners reading a big broadcast at once held a copy each.
    pub seqs: Vec<u64>,
    pub skipped: Vec<Skipped>,
}

/// The file inboxes of one run.
#[derive(Clone)]
pub struct Inboxes {
    pub spec: FileMailbox,
    pub fs: SimFs,
    /// The router's copy of each line not yet read or lost, by message
    /// number (one a line: a queue a line cost four times the copy).
    unread: BTreeMap<u64, Delivery>,
    /// Lines in `unread` and `copies` together.
    unread_lines: u64,
    /// The later copies of a duplicated message (two lines of one number),
    /// oldest first; `unread` holds the first.
    copies: BTreeMap<u64, VecDeque<Delivery>>,
    /// The append that would have taken the files past their bound: the run
    /// stops there (see [`MAX_HELD_BYTES`]).
    pub full: bool,
    /// The last text appended, escaped once for all the lines that share it.
    shared: SharedText,
    /// A line landed in the agent's file since its last read began: a
    /// finished read with this set reads again. (Counting unread lines
    /// instead would poll for ever after a line no read can return.)
    /// reads again.
    dirty: Vec<bool>,
    /// A read is scheduled or in progress for this agent.
    armed: Vec<bool>,
    /// When the read this agent is busy with is done, while it is busy:
    /// what the stepping page shows ("reading alice.jsonl until 3.631s").
    pub reading: Vec<Option<Millis>>,
    /// Writers whose next append is cut short: the incarnation the tear was
    /// armed for (a torn append is that process's last act, so a later one
    /// is not torn) and the restart delay.
    torn: BTreeMap<AgentId, (u32, Option<Millis>)>,
    /// Each broadcast's message numbers, first to last, by its first: its
    /// copies are one writer's appends in a row, so a writer that dies in
    /// the middle of one never makes the rest. (One entry a broadcast.)
    broadcasts: BTreeMap<u64, u64>,
    /// The first message number of each broadcast whose writer died in the
    /// middle of it.
    cut: std::collections::BTreeSet<u64>,
    /// Where each `junk_line` landed, (owner, absolute offset): a junk line
    /// is never a message, whatever its text (a line of valid JSON with a
    /// `seq` once handed over a message not yet sent). One entry a fault.
    junk: std::collections::BTreeSet<(AgentId, u64)>,
    /// The first failure of the disk mirror: the run goes on, the CLI reports it.
    pub mirror_error: Option<String>,
    /// The lines the router appended and no read has met yet, in each
    /// agent's file order (see [`Written`]).
    written: Vec<VecDeque<Written>>,
}

/// A whole line the router appended: where it starts in its file, how long
/// it is without its newline, and the message number it was written for.
///
/// The router wrote it, so a read that meets exactly these bytes there knows
/// what they parse to (the line, with this number) without parsing them back.
/// Exactly these: a file's bytes never move from their position (a truncate
/// or a prune only cuts them away, positions count from the file's
/// creation, and the world never rewrites, renames or removes an inbox
/// file), so a line that starts at the same position with the same length
/// is this one. Anything else there (a torn fragment glued in front, a junk
/// line) starts elsewhere or is longer, and is parsed as before. A line met
/// once is forgotten: a read after a crash parses it again.
#[derive(Clone, Copy, Debug)]
struct Written {
    offset: u64,
    len: usize,
    seq: u64,
}

#[cfg(test)]
thread_local! {
    /// Lines a read knew without parsing them, on this thread (tests only).
    static KNOWN_LINES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Tests only: how many lines reads on this thread have known without
/// parsing them, so a test of that path cannot pass by meeting none.
#[cfg(test)]
pub fn known_lines() -> u64 {
    KNOWN_LINES.with(|n| n.get())
}

/// What a read keeps of each message line: its number, known without
/// parsing for a line the router wrote (see [`Written`]), else parsed.
fn seq_of(written: &mut VecDeque<Written>, owner: &str, offset: u64, body: &[u8]) -> Result<Option<u64>, LineError> {
    // Lines met before this one (skipped, or read from further on) are met
    // no more: positions only grow within a read.
    while written.front().is_some_and(|w| w.offset < offset) {
        written.pop_front();
    }
    match written.front() {
        Some(w) if w.offset == offset && w.len == body.len() => {
            let seq = w.seq;
            written.pop_front();
            // Tests check the claim on every line they meet (the unit test
            // `every_line_the_router_wrote_parses_back_to_its_number` plays
            // every bundled scenario through here).
            if cfg!(any(test, debug_assertions)) {
                let parsed = Line::parse(body, owner).map(|l| l.seq);
                assert_eq!(parsed, Ok(Some(seq)), "a line the router wrote at {offset} parses back to its number");
                #[cfg(test)]
                KNOWN_LINES.with(|n| n.set(n.get() + 1));
            }
            Ok(Some(seq))
        }
        _ => Line::parse(body, owner).map(|l| l.seq),
    }
}

impl Inboxes {
    /// `journal`: the file system keeps its changes for a shell that
    /// mirrors them on disk.
    pub fn new(spec: FileMailbox, agents: usize, journal: bool) -> Inboxes {
        let fs = if journal { SimFs::with_journal() } else { SimFs::new() };
        Inboxes {
            spec,
            fs,
            unread: BTreeMap::new(),
            copies: BTreeMap::new(),
            unread_lines: 0,
            full: false,
            shared: SharedText::default(),
            dirty: vec![false; agents],
            armed: vec![false; agents],
            reading: vec![None; agents],
            torn: BTreeMap::new(),
            broadcasts: BTreeMap::new(),
            cut: Default::default(),
            junk: Default::default(),
            mirror_error: None,
            written: vec![VecDeque::new(); agents],
        }
    }

    /// The router's copy of the oldest unread line numbered `seq`.
    fn take(&mut self, seq: u64) -> Option<Delivery> {
        let d = self.unread.remove(&seq)?;
        self.unread_lines -= 1;
        if let Some(later) = self.copies.get_mut(&seq) {
            if let Some(next) = later.pop_front() {
                self.unread.insert(seq, next);
            }
            if later.is_empty() {
                self.copies.remove(&seq);
            }
        }
        Some(d)
    }

    fn keep(&mut self, d: Delivery) {
        self.unread_lines += 1;
        match self.unread.entry(d.seq) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(d);
            }
            std::collections::btree_map::Entry::Occupied(_) => self.copies.entry(d.seq).or_default().push_back(d),
        }
    }

    /// Every copy still unread of message `seq`, oldest first.
    fn take_all(&mut self, seq: u64) -> Vec<Delivery> {
        let first = self.unread.remove(&seq);
        let all: Vec<Delivery> = first.into_iter().chain(self.copies.remove(&seq).into_iter().flatten()).collect();
        self.unread_lines -= all.len() as u64;
        all
    }

    /// A broadcast numbered `first..=last` is being sent. Recorded before its
    /// copies go out (`last` is then open), as a copy that arrives at once
    /// may be torn while the rest are still to be sent.
    pub fn broadcast(&mut self, first: u64, last: u64) {
        self.broadcasts.insert(first, last);
    }

    /// Everything that decides what the inboxes do next, as text: the
    /// explorer's fingerprint of a file-mode state (rare enough to write
    /// out whole).
    pub fn state_text(&self) -> String {
        format!(
            "{:?} {:?} {:?} {} {:?} {:?} {:?} {:?} {:?} {:?}",
            self.fs,
            self.unread,
            self.copies,
            self.full,
            self.dirty,
            self.armed,
            self.torn,
            self.broadcasts,
            self.cut,
            self.junk
        )
    }

    /// The broadcast message `seq` is a copy of, by its first number.
    fn broadcast_of(&self, seq: u64) -> Option<u64> {
        let (&first, &last) = self.broadcasts.range(..=seq).next_back()?;
        (seq <= last).then_some(first)
    }
}

/// The file system changed: the shell may replay it on disk; its first
/// failure is kept (the run goes on, the CLI reports it).
fn sync(shell: &mut impl Shell, inb: &mut Inboxes) {
    if inb.mirror_error.is_none() {
        if let Err(e) = shell.files_changed(&mut inb.fs) {
            inb.mirror_error = Some(e);
        }
    }
}

/// Whether a message to `to` goes into its file: the file outlives a crash
/// that will be restarted, not a final state.
pub fn receives<S: Shell>(w: &World<S>, to: AgentId) -> bool {
    let status = w.sim.roster.statuses[to.index()];
    status.is_active() || (status == RosterStatus::Crashed && w.sim.restarts_due.contains(&to))
}

/// A message reaches its receiver: one line appended to the receiver's file.
#[inline(never)]
pub fn append<S: Shell>(w: &mut World<S>, mut d: Delivery) {
    d.at = w.now();
    let (seq, to, sender) = (d.seq, d.to, d.sender);
    // Stopped by the bound: the rest of the instant's appends are not made
    // (nor their lines built, a broadcast's worth of copies).
    if w.sim.inbox.as_ref().is_none_or(|i| i.full) || unmade(w, &d) {
        return;
    }
    let names = &w.names;
    let line = Line::from_delivery(&d, |a| names[a.index()].as_str());
    let owner = names[to.index()].clone();
    let path = inbox_path(&owner);
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    let bytes = framed_shared(&inb.fs, &path, &line, &mut inb.shared);
    drop(line);
    if over_bound(w, &d, &path, bytes.len()) {
        return;
    }
    if let Some(restart_after) = tears(w, sender) {
        let Some(inb) = w.sim.inbox.as_mut() else { return };
        // Half the line lands, then the writer dies.
        inb.fs.append_torn(&path, &bytes, bytes.len() / 2);
        sync(&mut w.shell, inb);
        if let Some(first) = inb.broadcast_of(seq) {
            inb.cut.insert(first);
        }
        let message_type = d.envelope.message.message_type();
        w.record(Event::Dropped { seq, to, message_type, cause: Cause::TornWrite });
        // At once, not queued for this instant: the torn append is the
        // writer's last act, even when it lands inside the writer's own turn
        // (no latency), whose remaining commands then die with it.
        w.crash_for(sender, restart_after);
        arm(w, to);
        return;
    }
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    // Where the line starts: after the file's end, and after the newline
    // that ends a torn fragment there, if the append begins with one.
    let framing = usize::from(bytes.first() == Some(&b'\n'));
    let offset = inb.fs.file(&path).map_or(0, |f| f.end()) + framing as u64;
    inb.fs.append(&path, &bytes);
    if let Some(lines) = inb.written.get_mut(to.index()) {
        lines.push_back(Written { offset, len: bytes.len() - framing - 1, seq });
    }
    drop(bytes);
    sync(&mut w.shell, inb);
    let size = inb.fs.size(&path);
    inb.keep(d);
    inb.dirty[to.index()] = true;
    if w.tracing() {
        w.record(Event::Note { text: format!("message #{seq} appended to {path} ({size} bytes)") });
    }
    arm(w, to);
}

/// What the router's copy of an unread line costs, counted against the
/// bound with the files' bytes: a delivery in a map entry (about 130 bytes)
/// and its note in the log.
pub const UNREAD_LINE_BYTES: u64 = 160;

/// Whether appending `len` bytes would take the files past their bound. If
/// so the append is not made and the run stops here, with the reason in
/// the log: a clear end rather than memory running out (`docs/inboxes.md`).
fn over_bound<S: Shell>(w: &mut World<S>, d: &Delivery, path: &str, len: usize) -> bool {
    let Some(inb) = w.sim.inbox.as_mut() else { return false };
    // The router's copy of each unread line is counted with the files: with
    // short lines it costs more than the line itself.
    let held = inb.fs.held() + (inb.unread_lines + 1) * UNREAD_LINE_BYTES;
    if held.saturating_add(len as u64) <= MAX_HELD_BYTES {
        return false;
    }
    inb.full = true;
    w.aborted = true;
    let text = format!(
        "message #{} ({len} bytes) would take the inbox files past their bound ({held} bytes held with the router's copies, at most {} MiB): the run stops",
        d.seq,
        MAX_HELD_BYTES >> 20
    );
    tracing::debug!(at = %w.now(), path, "inbox bound reached");
    w.record(Event::Note { text });
    true
}

/// A copy of a broadcast whose writer died in the middle of it: the writer
/// never got to this append. Lost to the torn write, and the log says so.
fn unmade<S: Shell>(w: &mut World<S>, d: &Delivery) -> bool {
    let Some(inb) = w.sim.inbox.as_ref() else { return false };
    if inb.cut.is_empty() || !inb.broadcast_of(d.seq).is_some_and(|first| inb.cut.contains(&first)) {
        return false;
    }
    let (writer, owner) = (&w.names[d.sender.index()], &w.names[d.to.index()]);
    let text = format!(
        "message #{} is never appended to {}: {writer} died in the middle of the broadcast",
        d.seq,
        inbox_path(owner)
    );
    w.record(Event::Note { text });
    let message_type = d.envelope.message.message_type();
    w.record(Event::Dropped { seq: d.seq, to: d.to, message_type, cause: Cause::TornWrite });
    true
}

/// Whether `writer`'s next append is armed to tear (so it may die in the
/// middle of its own turn). In memory mode, one test of the inbox's absence.
#[inline]
pub fn armed_to_tear<S: Shell>(w: &World<S>, writer: AgentId) -> bool {
    w.sim.inbox.as_ref().is_some_and(|i| i.torn.contains_key(&writer))
}

/// Whether `writer`'s append now is the torn one, and if so the crash's
/// restart delay. A tear armed for an incarnation that has since stopped
/// (shut down, killed, crashed) is spent without tearing anything: the
/// append is a message it finished sending before it stopped.
fn tears<S: Shell>(w: &mut World<S>, writer: AgentId) -> Option<Option<Millis>> {
    let inb = w.sim.inbox.as_mut()?;
    let &(epoch, restart_after) = inb.torn.get(&writer)?;
    inb.torn.remove(&writer);
    let status = w.sim.roster.statuses[writer.index()];
    if status.is_active() && w.sim.epochs[writer.index()] == epoch {
        return Some(restart_after);
    }
    let name = &w.names[writer.index()];
    let text = format!("{name} stopped ({status}) before its next append: the torn write tears nothing");
    w.record(Event::Note { text });
    None
}

/// Makes sure `agent` will read its file at its next poll.
pub fn arm<S: Shell>(w: &mut World<S>, agent: AgentId) {
    let now = w.now();
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    if std::mem::replace(&mut inb.armed[agent.index()], true) {
        return;
    }
    let at = super::mailbox::next_poll(now, inb.spec.poll);
    w.schedule(at, Due::ReadInbox { agent });
}

/// Arms a torn write: `writer`'s next append is cut short and it crashes.
/// A writer that is not running has no append to cut: nothing is armed.
pub fn tear_next<S: Shell>(w: &mut World<S>, writer: AgentId, restart_after: Option<Millis>) {
    let name = w.names[writer.index()].clone();
    let status = w.sim.roster.statuses[writer.index()];
    let epoch = w.sim.epochs[writer.index()];
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    if !status.is_active() {
        w.record(Event::Note { text: format!("{name} is not running ({status}): no append to tear") });
        return;
    }
    inb.torn.insert(writer, (epoch, restart_after));
    w.record(Event::Note { text: format!("{name}'s next append will be torn: it crashes in the middle of it") });
}

/// A `junk_line` fault: a whole line that is not JSON lands in `owner`'s
/// inbox file, as a hand edit or another program's log line would. The
/// reader skips it (the reference's `json.loads` would stop the read there).
pub fn write_junk<S: Shell>(w: &mut World<S>, owner: AgentId, text: &str) {
    let path = inbox_path(&w.names[owner.index()]);
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    let mut bytes = text.replace(['\n', '\r'], " ").into_bytes();
    bytes.push(b'\n');
    inb.fs.append(&path, &bytes);
    // Where the line starts: after any torn fragment the append ended.
    let end = inb.fs.file(&path).map_or(0, |f| f.end());
    inb.junk.insert((owner, end - bytes.len() as u64));
    sync(&mut w.shell, inb);
    inb.dirty[owner.index()] = true;
    let what = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(_) => "a line of JSON that no message was sent as",
        Err(_) => "a line that is not JSON",
    };
    w.record(Event::Note { text: format!("{what} is written to {path}: {text:?}") });
    arm(w, owner);
}

/// The owner's poll: the first step of a read. The lines reach the owner
/// when the read's cost has been paid.
pub fn begin<S: Shell>(w: &mut World<S>, agent: AgentId) {
    let now = w.now();
    let epoch = w.sim.epochs[agent.index()];
    let active = w.sim.roster.statuses[agent.index()].is_active();
    let owner = w.names[agent.index()].clone();
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    if !active {
        // Down: a restart or a respawn reads again. The lines stay in the
        // file till then, and are lost with their owner only if the run
        // ends with nobody reading them (`settle`).
        inb.armed[agent.index()] = false;
        return;
    }
    inb.dirty[agent.index()] = false;
    let written = &mut inb.written[agent.index()];
    let (batch, token) =
        begin_read_by(&inb.fs, &owner, inb.spec.drain, |offset, body| seq_of(written, &owner, offset, body));
    let cost = inb.spec.cost.of(batch.scanned);
    let (lines, scanned) = (batch.lines.len(), batch.scanned);
    // A read returns what was in the file when it began, and only the lines
    // the router appended: a line that names a message not yet sent, or
    // none, or that a junk fault wrote, is skipped and said so.
    let mut skipped = batch.skipped;
    let mut seqs = Vec::with_capacity(lines);
    for (offset, seq) in &batch.lines {
        match *seq {
            Some(s) if inb.unread.contains_key(&s) && !inb.junk.contains(&(agent, *offset)) => seqs.push(s),
            _ => skipped.push(Skipped::NotSent { offset: *offset }),
        }
    }
    let read = PendingRead { agent, epoch, token, seqs, skipped };
    inb.reading[agent.index()] = Some(now.after(cost));
    w.schedule(now.after(cost), Due::InboxRead(Box::new(read)));
    if w.tracing() {
        let path = inbox_path(&owner);
        w.record(Event::Read { agent, path, lines: lines as u32, bytes: scanned, busy: cost });
    }
}

/// The read's cost is paid: truncate or commit, then hand the lines over.
pub fn finish<S: Shell>(w: &mut World<S>, read: PendingRead) {
    let PendingRead { agent, epoch, token, seqs, skipped } = read;
    let owner = w.names[agent.index()].clone();
    let stale = w.sim.epochs[agent.index()] != epoch;
    let active = w.sim.roster.statuses[agent.index()].is_active();
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    inb.armed[agent.index()] = false;
    inb.reading[agent.index()] = None;
    if stale {
        // The reader crashed mid-read and never truncated or committed: its
        // lines are still in the file, for the next incarnation.
        drop(token);
        if active {
            arm(w, agent);
        }
        return;
    }
    let written = &mut inb.written[agent.index()];
    let done = finish_read_by(&mut inb.fs, token, |offset, body| seq_of(written, &owner, offset, body));
    if inb.spec.prune {
        prune(&mut inb.fs, &owner, inb.spec.drain);
    }
    sync(&mut w.shell, inb);
    let mut lost = Vec::new();
    for (_, seq) in &done.lost {
        if let Some(d) = seq.and_then(|s| inb.take(s)) {
            lost.push((d.seq, d.envelope.message.message_type()));
        }
    }
    let mut handed = Vec::with_capacity(seqs.len());
    for s in seqs {
        if let Some(d) = inb.take(s) {
            handed.push(d);
        }
    }
    let more = inb.dirty[agent.index()];
    for (seq, message_type) in lost {
        w.record(Event::Dropped { seq, to: agent, message_type, cause: Cause::DrainLoss });
    }
    for s in skipped.iter().chain(&done.skipped) {
        let text = match s {
            // A fragment of a message starts as one does; anything else is junk.
            Skipped::Torn { offset, bytes } if bytes.first() == Some(&b'{') => {
                format!("{owner} skips a torn line at byte {offset} of {} ({} bytes)", inbox_path(&owner), bytes.len())
            }
            Skipped::Torn { offset, bytes } => format!(
                "{owner} skips a line that is not JSON at byte {offset} of {} ({} bytes)",
                inbox_path(&owner),
                bytes.len()
            ),
            Skipped::NotSent { offset } => {
                format!("{owner} skips a line at byte {offset} of {} that no message was sent as", inbox_path(&owner))
            }
            other => format!("{owner} skips a line that is not a message at byte {}", other.offset()),
        };
        w.record(Event::Note { text });
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

/// The run is over: lines left in the files of agents that will never read
/// again are lost with their owner, and the log says how.
pub fn settle<S: Shell>(w: &mut World<S>) {
    let Some(inb) = w.sim.inbox.as_mut() else { return };
    let seqs: Vec<u64> = inb.unread.keys().copied().collect();
    let left: Vec<Delivery> = seqs.into_iter().flat_map(|s| inb.take_all(s)).collect();
    for d in left {
        w.lost_with_receiver(&d);
    }
}
