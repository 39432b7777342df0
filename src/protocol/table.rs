//! The request table: every request one requester has made, its state, and the
//! rules for applying a response. Pure: the caller supplies ids and times.
//!
//! ```text
//! pending --approve--> approved
//! pending --reject---> rejected
//! pending --deadline-> expired
//! ```

use super::deadlines::DeadlineQueue;
use super::message::{Kind, RequestId, Text};
use super::names::AgentId;
use super::policy::Defences;
use super::time::Millis;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Approved,
    Rejected,
    Expired,
}

impl Status {
    pub fn is_terminal(self) -> bool {
        self != Status::Pending
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
            Status::Expired => "expired",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A readable name for a request: the scenario's label, or
/// `<teammate>/<kind>/<n>` (alice's second plan is `alice/plan/2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Label {
    Named(Text),
    Auto { teammate: AgentId, kind: Kind, n: u32 },
}

impl Label {
    /// Renders the label, `name_of` giving the team's names. By hand rather
    /// than `format!`: every run names every request it made, and the
    /// formatting machinery cost more than the rest of a label's work.
    pub fn render<'n>(&self, name_of: impl Fn(AgentId) -> &'n str) -> String {
        match self {
            Label::Named(t) => t.to_string(),
            Label::Auto { teammate, kind, n } => {
                let teammate = name_of(*teammate);
                let kind = kind.as_str();
                let mut out = String::with_capacity(teammate.len() + kind.len() + 12);
                out.push_str(teammate);
                out.push('/');
                out.push_str(kind);
                out.push('/');
                out.push_str(itoa::Buffer::new().format(*n));
                out
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: RequestId,
    pub kind: Kind,
    pub requester: AgentId,
    pub target: AgentId,
    pub sent_at: Millis,
    pub deadline: Millis,
    pub status: Status,
    pub label: Label,
    /// Its deadline's ticket in the deadline queue, to drop it when answered.
    ticket: u64,
}

impl Request {
    /// The teammate a request is about: the target of a shutdown, the author of a plan.
    pub fn teammate(&self) -> AgentId {
        self.kind.spec().about.of(self.requester, self.target)
    }
}

/// What the requester is about to ask.
#[derive(Clone, Debug)]
pub struct NewRequest {
    pub kind: Kind,
    pub requester: AgentId,
    pub target: AgentId,
    pub sent_at: Millis,
    pub timeout: Millis,
    pub label: Option<Text>,
}

/// A response as it reaches the requester.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    pub request_id: RequestId,
    pub kind: Kind,
    pub approve: bool,
    /// Who the router saw send it.
    pub sender: AgentId,
    /// Who the envelope claims sent it.
    pub claimed_from: AgentId,
    /// Whom it was addressed to.
    pub recipient: AgentId,
    /// When it was delivered.
    pub at: Millis,
}

/// Why a response changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No request with this id was ever made here (a forged or garbled id).
    UnknownId,
    /// A shutdown answer quoting a plan's id, or the other way round.
    KindMismatch,
    /// Someone other than the request's target answered.
    WrongSender,
    /// The response was addressed to someone other than the requester.
    WrongRecipient,
    /// The request was already decided (a duplicate or a replay).
    NotPending,
    /// The answer came at or after the deadline.
    Late,
    /// A request that reached its receiver at or after its own deadline: its
    /// asker has already applied the timeout default, so obeying it now would
    /// make the two sides disagree.
    Expired,
    /// A request the router stamped for an earlier incarnation of its
    /// receiver: it was sent before a crash, to a process that is gone, and
    /// the restarted one must not answer for it.
    StaleIncarnation,
}

impl Reason {
    pub const ALL: [Reason; 8] = [
        Reason::UnknownId,
        Reason::KindMismatch,
        Reason::WrongSender,
        Reason::WrongRecipient,
        Reason::NotPending,
        Reason::Late,
        Reason::Expired,
        Reason::StaleIncarnation,
    ];

    /// The reason a scenario file names, as the trace spells it.
    pub fn parse(name: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::UnknownId => "unknown_id",
            Reason::KindMismatch => "kind_mismatch",
            Reason::WrongSender => "wrong_sender",
            Reason::WrongRecipient => "wrong_recipient",
            Reason::NotPending => "not_pending",
            Reason::Late => "late",
            Reason::Expired => "expired",
            Reason::StaleIncarnation => "stale_incarnation",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of applying a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The request moved from `from` to `to`.
    Applied {
        kind: Kind,
        from: Status,
        to: Status,
    },
    Ignored(Reason),
}

/// A request whose deadline passed while it was pending.
#[derive(Clone, Debug, PartialEq)]
pub struct Expiry {
    pub id: RequestId,
    pub kind: Kind,
    pub target: AgentId,
    pub deadline: Millis,
}

/// Where each request sits in the table, found by its id: open addressing
/// with linear probing, kept at most half full. A slot is one word, the
/// request's place plus one (zero when empty) beside 32 bits of its id's
/// hash, so with 10,000 requests in flight the whole index is 256 KB and a
/// lookup reads one cache line of it. The requests themselves lie packed in
/// `RequestTable::requests` (800 KB). A map holding them was four times the
/// size (96-byte buckets, kept at most half full so that ended requests'
/// tombstones never made it grow), and opening and answering a request each
/// missed the second-level cache several times (docs/architecture.md).
#[derive(Clone, Debug, Default)]
struct IdIndex {
    slots: Vec<u64>,
    len: usize,
}

impl IdIndex {
    /// A table for `n` requests at once without growing.
    fn with_room(n: usize) -> IdIndex {
        let slots = if n == 0 { 0 } else { n.saturating_mul(2).next_power_of_two().max(16) };
        IdIndex { slots: vec![0; slots], len: 0 }
    }

    /// 32 bits of the id's hash; the slot it belongs in is these bits under the mask.
    #[inline(always)]
    fn hash(id: RequestId) -> u32 {
        // Ids are random: one multiply spreads any two words well enough.
        let (hi, lo) = id.0.as_u64_pair();
        ((hi ^ lo.rotate_left(29)).wrapping_mul(0x517c_c1b7_2722_0a95) >> 32) as u32
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The slot holding the id for which `is` says yes, and its place.
    #[inline(always)]
    fn find(&self, id: RequestId, is: impl Fn(usize) -> bool) -> Option<(usize, usize)> {
        if self.len == 0 {
            return None;
        }
        let h = Self::hash(id);
        let mask = self.mask();
        let mut i = h as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            let at = (s >> 32) as usize - 1;
            if s as u32 == h && is(at) {
                return Some((i, at));
            }
            i = (i + 1) & mask;
        }
    }

    /// Files place `at` under `id`; `is` says whether a filed place holds
    /// `id` already, which would be a broken RNG, never user input.
    #[inline(always)]
    fn insert(&mut self, id: RequestId, at: usize, is: impl Fn(usize) -> bool) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let h = Self::hash(id);
        let mask = self.mask();
        let mut i = h as usize & mask;
        while self.slots[i] != 0 {
            let s = self.slots[i];
            assert!(s as u32 != h || !is((s >> 32) as usize - 1), "request id drawn twice");
            i = (i + 1) & mask;
        }
        self.slots[i] = ((at as u64 + 1) << 32) | u64::from(h);
        self.len += 1;
    }

    /// Empties slot `i` and shifts back the entries after it that probed
    /// past it, so no lookup ever needs a tombstone.
    #[inline]
    fn remove_slot(&mut self, mut i: usize) {
        let mask = self.mask();
        let mut j = (i + 1) & mask;
        loop {
            let s = self.slots[j];
            if s == 0 {
                break;
            }
            let home = s as u32 as usize & mask;
            // The entry at j may move to the hole at i only if its home is
            // not cyclically within (i, j].
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.slots[i] = s;
                i = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[i] = 0;
        self.len -= 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![0; n]);
        let mask = n - 1;
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut i = s as u32 as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct RequestTable {
    /// The requests, in the order they were made unless ended ones are
    /// forgotten (then a forgotten request's place is taken by the next one).
    /// Found by id through `index`; never iterated in hash order.
    requests: Vec<Request>,
    index: IdIndex,
    /// Places of forgotten requests, newest last: the next request takes
    /// the place just freed, still in cache.
    free: Vec<u32>,
    /// Deadlines by place in `requests`.
    deadlines: DeadlineQueue<u32>,
    defences: Defences,
    /// Per teammate, how many requests of each kind were made: numbers auto labels.
    counts: Vec<[u32; Kind::COUNT]>,
    /// Drop requests once they end. For load generation only: a late reply to
    /// a forgotten request is then ignored as an unknown id.
    forget_ended: bool,
}

impl RequestTable {
    pub fn new(defences: Defences) -> RequestTable {
        RequestTable { defences, ..RequestTable::default() }
    }

    /// A table that keeps only pending requests, at most `in_flight` at once,
    /// so a long benchmark runs in constant memory.
    pub fn forgetful(defences: Defences, in_flight: usize) -> RequestTable {
        RequestTable {
            defences,
            forget_ended: true,
            requests: Vec::with_capacity(in_flight),
            index: IdIndex::with_room(in_flight),
            deadlines: DeadlineQueue::with_room(in_flight),
            ..RequestTable::default()
        }
    }

    /// The place of the request with this id, and its slot in the index.
    #[inline(always)]
    fn find(&self, id: RequestId) -> Option<(usize, usize)> {
        let requests = &self.requests;
        self.index.find(id, |at| requests[at].id == id)
    }

    /// Forgets the request at `at`, filed in index slot `slot`.
    #[inline(always)]
    fn forget(&mut self, slot: usize, at: usize) {
        self.index.remove_slot(slot);
        self.free.push(at as u32);
    }

    /// Records a new pending request under `id` and arms its deadline.
    #[inline(always)]
    pub fn open(&mut self, id: RequestId, new: NewRequest) -> &Request {
        let deadline = new.sent_at.after(new.timeout);
        // Every request takes the next number, named or not, so `alice/shutdown/2`
        // is always the second shutdown request to alice.
        let teammate = new.kind.spec().about.of(new.requester, new.target);
        let i = teammate.index();
        if self.counts.len() <= i {
            self.counts.resize(i + 1, [0; Kind::COUNT]);
        }
        let slot = &mut self.counts[i][new.kind.index()];
        *slot += 1;
        let label = match new.label {
            Some(t) => Label::Named(t),
            None => Label::Auto { teammate, kind: new.kind, n: *slot },
        };
        let at = match self.free.pop() {
            Some(at) => at as usize,
            None => self.requests.len(),
        };
        let place = u32::try_from(at).expect("fewer than 2^32 requests held at once");
        let ticket = self.deadlines.arm(deadline, new.kind, place);
        let requests = &self.requests;
        self.index.insert(id, at, |other| requests[other].id == id);
        let request = Request {
            id,
            kind: new.kind,
            requester: new.requester,
            target: new.target,
            sent_at: new.sent_at,
            deadline,
            status: Status::Pending,
            label,
            ticket,
        };
        if at == self.requests.len() {
            self.requests.push(request);
        } else {
            self.requests[at] = request;
        }
        &self.requests[at]
    }

    /// Applies a response if every enabled check passes. The checks run in a
    /// fixed order so the reason given is always the first rule broken.
    pub fn apply(&mut self, r: &Response) -> Verdict {
        // One lookup serves the checks, the update and (when forgetting) the removal.
        let Some((slot, at)) = self.find(r.request_id) else {
            return Verdict::Ignored(Reason::UnknownId);
        };
        let req = &mut self.requests[at];
        if let Err(reason) = Self::matches(req, r, self.defences) {
            return Verdict::Ignored(reason);
        }
        let (from, kind, deadline, ticket) = (req.status, req.kind, req.deadline, req.ticket);
        let to = if r.approve { Status::Approved } else { Status::Rejected };
        if self.forget_ended {
            self.forget(slot, at);
        } else {
            req.status = to;
        }
        self.deadlines.forget(kind, deadline, ticket);
        Verdict::Applied { kind, from, to }
    }

    /// The matching rule: every enabled check, in a fixed order, so the reason
    /// given is always the first rule broken.
    fn matches(req: &Request, r: &Response, d: Defences) -> Result<(), Reason> {
        if d.kind_check && req.kind != r.kind {
            return Err(Reason::KindMismatch);
        }
        let sender = if d.sender_auth { r.sender } else { r.claimed_from };
        if d.sender_check && sender != req.target {
            return Err(Reason::WrongSender);
        }
        if r.recipient != req.requester {
            return Err(Reason::WrongRecipient);
        }
        if d.pending_check {
            match req.status {
                Status::Expired => return Err(Reason::Late),
                Status::Approved | Status::Rejected => return Err(Reason::NotPending),
                Status::Pending if r.at >= req.deadline => return Err(Reason::Late),
                Status::Pending => {}
            }
        }
        Ok(())
    }

    /// Moves every pending request whose deadline is at or before `now` to
    /// `expired`, in deadline order, and reports each.
    pub fn expire_due(&mut self, now: Millis, out: &mut Vec<Expiry>) {
        while let Some((deadline, at)) = self.deadlines.peek() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            // A live deadline's place always holds its own request: an ended
            // request's entry never reaches the front, so its place, even
            // when taken again, is never looked at through it.
            let req = &mut self.requests[at as usize];
            if req.status != Status::Pending {
                continue;
            }
            req.status = Status::Expired;
            out.push(Expiry { id: req.id, kind: req.kind, target: req.target, deadline });
            if self.forget_ended {
                let id = req.id;
                if let Some((slot, at)) = self.find(id) {
                    self.forget(slot, at);
                }
            }
        }
    }

    /// The earliest deadline of a still-pending request: when the single
    /// timer should fire next. The queue holds only pending requests' live
    /// entries at its fronts; the check is a guard, not the mechanism.
    pub fn next_deadline(&mut self) -> Option<Millis> {
        while let Some((deadline, at)) = self.deadlines.peek() {
            if self.requests[at as usize].status == Status::Pending {
                return Some(deadline);
            }
            self.deadlines.pop();
        }
        None
    }

    pub fn get(&self, id: RequestId) -> Option<&Request> {
        self.find(id).map(|(_, at)| &self.requests[at])
    }

    /// Requests in the order they were made. A table that forgets ended
    /// requests (load generation) lists none.
    pub fn iter(&self) -> impl Iterator<Item = &Request> {
        self.requests_listed().iter()
    }

    /// What [`RequestTable::iter`] gives, as a slice: positions in it are
    /// positions in the iteration.
    pub fn requests_listed(&self) -> &[Request] {
        if self.forget_ended {
            &[]
        } else {
            &self.requests[..]
        }
    }

    pub fn len(&self) -> usize {
        self.index.len
    }

    pub fn is_empty(&self) -> bool {
        self.index.len == 0
    }

    pub fn pending(&self) -> usize {
        self.iter().filter(|r| r.status == Status::Pending).count()
    }

    /// Deadline queue entries, ended ones not yet dropped included: lets tests
    /// check that answered requests leave nothing behind.
    pub fn armed_deadlines(&self) -> usize {
        self.deadlines.len()
    }
}

impl RequestTable {
    /// Hashes what decides the table's future: each request but not its
    /// deadline ticket (the queue is rebuilt from the requests' deadlines),
    /// grouped by the teammate it is about in the permutation's order, so a
    /// lead's table reads the same whichever identical teammate it asked first.
    pub fn canon(&self, c: &mut super::Canon) {
        let RequestTable {
            requests,
            index: _,     // finds a request by id: derived from `requests`
            free: _,      // places of forgotten requests (a benchmark's load only)
            deadlines: _, // rebuilt from the requests' deadlines
            defences: _,  // fixed for the run
            counts,
            forget_ended: _, // fixed for the run
        } = self;
        let mut order: smallvec::SmallVec<[(u32, usize); 16]> = smallvec::SmallVec::new();
        order.extend(requests.iter().enumerate().map(|(i, r)| (c.agent_index(r.teammate()), i)));
        order.sort_unstable();
        c.word(order.len() as u64);
        for &(_, i) in order.iter() {
            // Not its deadline ticket: the queue is rebuilt from the deadlines.
            let Request { id, kind, requester, target, sent_at, deadline, status, label, ticket: _ } = &requests[i];
            c.id(*id);
            c.word(*kind as u64 | (*status as u64) << 8);
            c.agent(*requester);
            c.agent(*target);
            c.millis(*sent_at);
            c.millis(*deadline);
            match label {
                Label::Named(t) => c.text(t),
                Label::Auto { teammate, kind, n } => {
                    c.agent(*teammate);
                    c.word(*kind as u64 | (*n as u64) << 8);
                }
            }
        }
        // Counts number the next auto labels, per teammate.
        let mut renamed: smallvec::SmallVec<[(u32, [u32; Kind::COUNT]); 16]> = smallvec::SmallVec::new();
        renamed.extend(counts.iter().enumerate().map(|(i, k)| (c.agent_index(AgentId(i as u32)), *k)));
        renamed.sort_unstable();
        for (_, per_kind) in renamed.iter() {
            // Two counts a word.
            for pair in per_kind.chunks(2) {
                c.word(pair[0] as u64 | (pair.get(1).copied().unwrap_or(0) as u64) << 32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const LEAD: AgentId = AgentId::LEAD;
    const ALICE: AgentId = AgentId(1);
    const BOB: AgentId = AgentId(2);

    #[test]
    fn labels_render_as_teammate_kind_number() {
        for n in [0, 1, 9, 10, 12, 999, 1000, u32::MAX] {
            for kind in [Kind::Shutdown, Kind::Plan] {
                let label = Label::Auto { teammate: ALICE, kind, n };
                assert_eq!(label.render(|_| "alice"), format!("alice/{kind}/{n}"));
            }
        }
        let named = Label::Named("stop-alice".into());
        assert_eq!(named.render(|_| "ignored"), "stop-alice");
    }

    struct Fixture {
        table: RequestTable,
        rng: rand_chacha::ChaCha8Rng,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture::with(Defences::default())
        }
        fn with(d: Defences) -> Fixture {
            Fixture { table: RequestTable::new(d), rng: rand_chacha::ChaCha8Rng::seed_from_u64(7) }
        }
        /// The lead asks alice to shut down at t=0 with a 60 s timeout.
        fn shutdown(&mut self, target: AgentId) -> RequestId {
            let id = RequestId::draw(&mut self.rng);
            self.table.open(
                id,
                NewRequest {
                    kind: Kind::Shutdown,
                    requester: LEAD,
                    target,
                    sent_at: Millis(0),
                    timeout: Millis(60_000),
                    label: None,
                },
            );
            id
        }
        /// Alice asks the lead to approve a plan at t=0.
        fn plan(&mut self, author: AgentId) -> RequestId {
            let id = RequestId::draw(&mut self.rng);
            self.table.open(
                id,
                NewRequest {
                    kind: Kind::Plan,
                    requester: author,
                    target: LEAD,
                    sent_at: Millis(0),
                    timeout: Millis(120_000),
                    label: None,
                },
            );
            id
        }
        fn status(&self, id: RequestId) -> Status {
            self.table.get(id).unwrap().status
        }
    }

    /// Alice's answer to a shutdown request, delivered to the lead at 1 s.
    fn answer(id: RequestId, approve: bool) -> Response {
        Response {
            request_id: id,
            kind: Kind::Shutdown,
            approve,
            sender: ALICE,
            claimed_from: ALICE,
            recipient: LEAD,
            at: Millis(1000),
        }
    }

    fn applied(to: Status) -> Verdict {
        Verdict::Applied { kind: Kind::Shutdown, from: Status::Pending, to }
    }

    #[test]
    fn a_new_request_is_pending_with_its_deadline() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        let r = f.table.get(id).unwrap();
        assert_eq!(r.status, Status::Pending);
        assert_eq!(r.deadline, Millis(60_000));
        assert_eq!(r.label, Label::Auto { teammate: ALICE, kind: Kind::Shutdown, n: 1 });
        assert_eq!(f.table.next_deadline(), Some(Millis(60_000)));
    }

    #[test]
    fn approve_and_reject_move_to_their_terminal_state() {
        let mut f = Fixture::new();
        let a = f.shutdown(ALICE);
        let b = f.shutdown(ALICE);
        assert_eq!(f.table.apply(&answer(a, true)), applied(Status::Approved));
        assert_eq!(f.table.apply(&answer(b, false)), applied(Status::Rejected));
        assert_eq!(f.status(a), Status::Approved);
        assert_eq!(f.status(b), Status::Rejected);
        assert_eq!(f.table.get(b).unwrap().label, Label::Auto { teammate: ALICE, kind: Kind::Shutdown, n: 2 });
    }

    #[test]
    fn a_forged_unknown_id_is_ignored_and_changes_nothing() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        let forged = RequestId::from_random_bytes([0xee; 16]);
        assert_eq!(f.table.apply(&answer(forged, true)), Verdict::Ignored(Reason::UnknownId));
        assert_eq!(f.status(id), Status::Pending);
        assert_eq!(f.table.len(), 1);
    }

    #[test]
    fn a_duplicate_or_replayed_response_is_not_applied_twice() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        assert_eq!(f.table.apply(&answer(id, true)), applied(Status::Approved));
        assert_eq!(f.table.apply(&answer(id, true)), Verdict::Ignored(Reason::NotPending));
        assert_eq!(f.table.apply(&answer(id, false)), Verdict::Ignored(Reason::NotPending));
        assert_eq!(f.status(id), Status::Approved);
    }

    #[test]
    fn bob_answering_alices_shutdown_leaves_it_pending() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        let by_bob = Response { sender: BOB, claimed_from: BOB, ..answer(id, true) };
        assert_eq!(f.table.apply(&by_bob), Verdict::Ignored(Reason::WrongSender));
        assert_eq!(f.status(id), Status::Pending);
    }

    #[test]
    fn a_shutdown_answer_quoting_a_plan_id_is_a_kind_mismatch() {
        let mut f = Fixture::new();
        // The lead holds alice's plan request (as target) in a shared table
        // here only to exercise the kind check; ownership is the runtime's job.
        let plan = f.plan(ALICE);
        let wrong_kind = Response {
            request_id: plan,
            kind: Kind::Shutdown,
            approve: true,
            sender: LEAD,
            claimed_from: LEAD,
            recipient: ALICE,
            at: Millis(5),
        };
        assert_eq!(f.table.apply(&wrong_kind), Verdict::Ignored(Reason::KindMismatch));
        assert_eq!(f.status(plan), Status::Pending);
    }

    #[test]
    fn with_the_kind_check_off_a_mismatched_kind_is_applied() {
        let mut f = Fixture::with(Defences { kind_check: false, ..Defences::default() });
        let plan = f.plan(ALICE);
        let wrong_kind = Response {
            request_id: plan,
            kind: Kind::Shutdown,
            approve: true,
            sender: LEAD,
            claimed_from: LEAD,
            recipient: ALICE,
            at: Millis(5),
        };
        assert_eq!(
            f.table.apply(&wrong_kind),
            Verdict::Applied { kind: Kind::Plan, from: Status::Pending, to: Status::Approved }
        );
    }

    #[test]
    fn with_the_sender_check_off_anyone_may_answer() {
        let mut f = Fixture::with(Defences { sender_check: false, ..Defences::default() });
        let id = f.shutdown(ALICE);
        let by_bob = Response { sender: BOB, claimed_from: BOB, ..answer(id, true) };
        assert_eq!(f.table.apply(&by_bob), applied(Status::Approved));
    }

    #[test]
    fn a_forgery_claiming_the_target_is_caught_by_sender_authentication() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        // Bob injects a response claiming to be alice.
        let forged = Response { sender: BOB, claimed_from: ALICE, ..answer(id, true) };
        assert_eq!(f.table.apply(&forged), Verdict::Ignored(Reason::WrongSender));
        let mut trusting = Fixture::with(Defences { sender_auth: false, ..Defences::default() });
        let id = trusting.shutdown(ALICE);
        let forged = Response { sender: BOB, claimed_from: ALICE, ..answer(id, true) };
        assert_eq!(trusting.table.apply(&forged), applied(Status::Approved));
    }

    #[test]
    fn a_response_addressed_to_someone_else_is_ignored() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        let misrouted = Response { recipient: BOB, ..answer(id, true) };
        assert_eq!(f.table.apply(&misrouted), Verdict::Ignored(Reason::WrongRecipient));
        assert_eq!(f.status(id), Status::Pending);
    }

    #[test]
    fn a_reply_at_or_after_the_deadline_is_late() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        let just_in = Response { at: Millis(59_999), ..answer(id, true) };
        let on_time = f.table.clone().apply(&just_in);
        assert_eq!(on_time, applied(Status::Approved));
        // Exactly at the deadline, before the expiry has even been processed.
        let at_deadline = Response { at: Millis(60_000), ..answer(id, true) };
        assert_eq!(f.table.apply(&at_deadline), Verdict::Ignored(Reason::Late));
        let mut out = vec![];
        f.table.expire_due(Millis(60_000), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(f.table.apply(&Response { at: Millis(70_000), ..answer(id, true) }), Verdict::Ignored(Reason::Late));
        assert_eq!(f.status(id), Status::Expired);
    }

    #[test]
    fn expiry_happens_at_the_deadline_not_before() {
        let mut f = Fixture::new();
        let a = f.shutdown(ALICE);
        let p = f.plan(ALICE);
        let mut out = vec![];
        f.table.expire_due(Millis(59_999), &mut out);
        assert!(out.is_empty());
        f.table.expire_due(Millis(60_000), &mut out);
        assert_eq!(out, vec![Expiry { id: a, kind: Kind::Shutdown, target: ALICE, deadline: Millis(60_000) }]);
        assert_eq!(f.table.next_deadline(), Some(Millis(120_000)));
        out.clear();
        f.table.expire_due(Millis(500_000), &mut out);
        assert_eq!(out.iter().map(|e| e.id).collect::<Vec<_>>(), vec![p]);
        assert_eq!(f.table.next_deadline(), None);
    }

    #[test]
    fn a_decided_request_never_expires() {
        let mut f = Fixture::new();
        let id = f.shutdown(ALICE);
        f.table.apply(&answer(id, false));
        let mut out = vec![];
        f.table.expire_due(Millis(1_000_000), &mut out);
        assert!(out.is_empty());
        assert_eq!(f.status(id), Status::Rejected);
    }

    #[test]
    fn stale_deadline_entries_are_reclaimed() {
        let mut f = Fixture::new();
        let ids: Vec<_> = (0..100).map(|_| f.shutdown(ALICE)).collect();
        for id in &ids {
            f.table.apply(&answer(*id, true));
        }
        assert_eq!(f.table.next_deadline(), None);
        assert_eq!(f.table.armed_deadlines(), 0);
    }

    #[test]
    fn answers_in_any_order_leave_no_deadline_behind() {
        let mut f = Fixture::new();
        let ids: Vec<_> = (0..100).map(|_| f.shutdown(ALICE)).collect();
        // Newest first: each answer overtakes every older request.
        for id in ids.iter().rev() {
            f.table.apply(&answer(*id, true));
        }
        assert_eq!(f.table.next_deadline(), None);
        assert_eq!(f.table.armed_deadlines(), 0);
    }

    #[test]
    fn with_the_pending_check_off_a_terminal_state_can_change() {
        let mut f = Fixture::with(Defences { pending_check: false, ..Defences::default() });
        let id = f.shutdown(ALICE);
        f.table.apply(&answer(id, false));
        assert_eq!(
            f.table.apply(&answer(id, true)),
            Verdict::Applied { kind: Kind::Shutdown, from: Status::Rejected, to: Status::Approved }
        );
    }

    #[test]
    fn the_first_broken_rule_is_the_reason_given() {
        let mut f = Fixture::new();
        let plan = f.plan(ALICE);
        // Wrong kind and wrong sender and late: kind is checked first.
        let everything_wrong = Response {
            request_id: plan,
            kind: Kind::Shutdown,
            approve: true,
            sender: BOB,
            claimed_from: BOB,
            recipient: BOB,
            at: Millis(999_999),
        };
        assert_eq!(f.table.apply(&everything_wrong), Verdict::Ignored(Reason::KindMismatch));
    }

    #[test]
    fn a_forgetful_table_keeps_only_pending_requests() {
        let mut t = RequestTable::forgetful(Defences::default(), 1);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1000 {
            let id = RequestId::draw(&mut rng);
            t.open(
                id,
                NewRequest {
                    kind: Kind::Shutdown,
                    requester: LEAD,
                    target: ALICE,
                    sent_at: Millis(0),
                    timeout: Millis(60_000),
                    label: None,
                },
            );
            assert!(matches!(t.apply(&answer(id, true)), Verdict::Applied { .. }));
        }
        assert_eq!(t.len(), 0);
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn the_id_index_agrees_with_a_map_through_inserts_and_removals() {
        // A small index, kept near half full, so probes collide, wrap around
        // the end and shift back on removal all the time.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut ids: Vec<(RequestId, usize)> = Vec::new();
        let mut index = IdIndex::with_room(8);
        // Place → id, as the table's requests would say.
        let mut model: std::collections::HashMap<usize, RequestId> = Default::default();
        for at in 0..20_000 {
            if ids.len() < 12 && (ids.is_empty() || rng.gen_bool(0.5)) {
                let id = RequestId::draw(&mut rng);
                index.insert(id, at, |p| model.get(&p) == Some(&id));
                model.insert(at, id);
                ids.push((id, at));
            } else {
                let (id, at) = ids.swap_remove(rng.gen_range(0..ids.len()));
                let (slot, found) = index.find(id, |p| model.get(&p) == Some(&id)).expect("a filed id is found");
                assert_eq!(found, at);
                index.remove_slot(slot);
                model.remove(&at);
            }
            assert_eq!(index.len, model.len());
            for (at, id) in &model {
                assert_eq!(index.find(*id, |p| model.get(&p) == Some(id)).map(|(_, p)| p), Some(*at));
            }
            let stranger = RequestId::draw(&mut rng);
            assert_eq!(index.find(stranger, |p| model.get(&p) == Some(&stranger)), None);
        }
        assert_eq!(index.slots.len(), 32, "never more than twelve held: the index never grew past its room");
    }

    #[test]
    fn a_forgetful_table_reuses_the_places_of_ended_requests() {
        // 100 in flight, 10,000 made: the table holds room for 100, however
        // the answers and expiries interleave.
        let mut t = RequestTable::forgetful(Defences::default(), 100);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut pending = std::collections::VecDeque::new();
        let mut now = 0;
        for n in 0..10_000u64 {
            let id = RequestId::draw(&mut rng);
            let timeout = if n % 7 == 0 { 5 } else { 60_000 };
            let new = NewRequest {
                kind: Kind::Shutdown,
                requester: LEAD,
                target: ALICE,
                sent_at: Millis(now),
                timeout: Millis(timeout),
                label: None,
            };
            t.open(id, new);
            pending.push_back(id);
            if pending.len() == 100 {
                // Answer one from the middle, one from the front.
                let mid = pending.remove(50).unwrap();
                let r = Response { at: Millis(now), ..answer(mid, true) };
                assert!(matches!(t.apply(&r), Verdict::Applied { .. }) || t.get(mid).is_none());
                let old = pending.pop_front().unwrap();
                t.apply(&Response { at: Millis(now), ..answer(old, false) });
            }
            now += 1;
            let mut out = vec![];
            t.expire_due(Millis(now), &mut out);
            for e in out {
                pending.retain(|p| *p != e.id);
                assert!(t.get(e.id).is_none(), "an expired request is forgotten");
            }
            assert_eq!(t.len(), pending.len());
        }
        assert!(t.requests.len() <= 100, "{} places for at most 100 in flight", t.requests.len());
        assert_eq!(t.index.slots.len(), 256);
        for id in &pending {
            assert_eq!(t.get(*id).map(|r| r.status), Some(Status::Pending));
        }
    }

    #[test]
    fn named_labels_are_kept() {
        let mut t = RequestTable::new(Defences::default());
        let id = RequestId::from_random_bytes([3; 16]);
        t.open(
            id,
            NewRequest {
                kind: Kind::Shutdown,
                requester: LEAD,
                target: ALICE,
                sent_at: Millis(0),
                timeout: Millis(10),
                label: Some("stop-alice".into()),
            },
        );
        assert_eq!(t.get(id).unwrap().label.render(|_| "x"), "stop-alice");
        let auto = Label::Auto { teammate: ALICE, kind: Kind::Plan, n: 2 };
        assert_eq!(auto.render(|_| "alice"), "alice/plan/2");
    }
}
