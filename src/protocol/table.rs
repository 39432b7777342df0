//! The request table: every request one requester has made, its state, and the
//! rules for applying a response. Pure: the caller supplies ids and times.
//!
//! ```text
//! pending --approve--> approved
//! pending --reject---> rejected
//! pending --deadline-> expired
//! ```

use super::deadlines::DeadlineQueue;
use super::message::{IdHashBuilder, Kind, RequestId, Text};
use super::names::AgentId;
use super::policy::Defences;
use super::time::Millis;
use serde::Serialize;
use std::collections::HashMap;
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
    /// Renders the label with the team's names.
    pub fn render(&self, name_of: impl Fn(AgentId) -> String) -> String {
        match self {
            Label::Named(t) => t.to_string(),
            Label::Auto { teammate, kind, n } => format!("{}/{}/{}", name_of(*teammate), kind, n),
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
        match self.kind {
            Kind::Shutdown => self.target,
            Kind::Plan => self.requester,
        }
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
}

impl Reason {
    pub const ALL: [Reason; 7] = [
        Reason::UnknownId,
        Reason::KindMismatch,
        Reason::WrongSender,
        Reason::WrongRecipient,
        Reason::NotPending,
        Reason::Late,
        Reason::Expired,
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

#[derive(Clone, Debug, Default)]
pub struct RequestTable {
    /// Looked up by id only; never iterated (iteration order would depend on
    /// hashing). `order` keeps the order requests were made, for reports.
    requests: HashMap<RequestId, Request, IdHashBuilder>,
    order: Vec<RequestId>,
    deadlines: DeadlineQueue,
    defences: Defences,
    /// Per teammate, how many requests of each kind were made: numbers auto labels.
    counts: Vec<[u32; 2]>,
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
        // Twice the room: ended requests leave tombstones, and with more live
        // entries than half its room the map would grow, copying itself while
        // both copies are held. With the room, it only ever rehashes in place.
        let requests = HashMap::with_capacity_and_hasher(in_flight.saturating_mul(2), IdHashBuilder::default());
        RequestTable { defences, forget_ended: true, requests, ..RequestTable::default() }
    }

    /// Records a new pending request under `id` and arms its deadline.
    #[inline(always)]
    pub fn open(&mut self, id: RequestId, new: NewRequest) -> &Request {
        let deadline = new.sent_at.after(new.timeout);
        // Every request takes the next number, named or not, so `alice/shutdown/2`
        // is always the second shutdown request to alice.
        let teammate = match new.kind {
            Kind::Shutdown => new.target,
            Kind::Plan => new.requester,
        };
        let i = teammate.index();
        if self.counts.len() <= i {
            self.counts.resize(i + 1, [0, 0]);
        }
        let slot = &mut self.counts[i][new.kind as usize];
        *slot += 1;
        let label = match new.label {
            Some(t) => Label::Named(t),
            None => Label::Auto { teammate, kind: new.kind, n: *slot },
        };
        let ticket = self.deadlines.arm(deadline, new.kind, id);
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
        if !self.forget_ended {
            self.order.push(id);
        }
        match self.requests.entry(id) {
            std::collections::hash_map::Entry::Vacant(v) => v.insert(request),
            // An id collision would be a broken RNG, never user input.
            std::collections::hash_map::Entry::Occupied(_) => unreachable!("request id drawn twice"),
        }
    }

    /// Applies a response if every enabled check passes. The checks run in a
    /// fixed order so the reason given is always the first rule broken.
    pub fn apply(&mut self, r: &Response) -> Verdict {
        use std::collections::hash_map::Entry;
        // One lookup serves the checks, the update and (when forgetting) the removal.
        let Entry::Occupied(mut entry) = self.requests.entry(r.request_id) else {
            return Verdict::Ignored(Reason::UnknownId);
        };
        if let Err(reason) = Self::matches(entry.get(), r, self.defences) {
            return Verdict::Ignored(reason);
        }
        let req = entry.get();
        let (from, kind, deadline, ticket) = (req.status, req.kind, req.deadline, req.ticket);
        let to = if r.approve { Status::Approved } else { Status::Rejected };
        if self.forget_ended {
            entry.remove();
        } else {
            entry.get_mut().status = to;
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
        while let Some((deadline, id)) = self.deadlines.peek() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            let Some(req) = self.requests.get_mut(&id) else { continue };
            if req.status != Status::Pending {
                continue;
            }
            req.status = Status::Expired;
            out.push(Expiry { id, kind: req.kind, target: req.target, deadline });
            if self.forget_ended {
                self.requests.remove(&id);
            }
        }
    }

    /// The earliest deadline of a still-pending request: when the single
    /// timer should fire next. The queue holds only pending requests' live
    /// entries at its fronts; the check is a guard, not the mechanism.
    pub fn next_deadline(&mut self) -> Option<Millis> {
        while let Some((deadline, id)) = self.deadlines.peek() {
            match self.requests.get(&id) {
                Some(r) if r.status == Status::Pending => return Some(deadline),
                _ => {
                    self.deadlines.pop();
                }
            }
        }
        None
    }

    pub fn get(&self, id: RequestId) -> Option<&Request> {
        self.requests.get(&id)
    }

    /// Requests in the order they were made.
    pub fn iter(&self) -> impl Iterator<Item = &Request> {
        self.order.iter().filter_map(|id| self.requests.get(id))
    }

    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const LEAD: AgentId = AgentId::LEAD;
    const ALICE: AgentId = AgentId(1);
    const BOB: AgentId = AgentId(2);

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
        assert_eq!(t.get(id).unwrap().label.render(|_| "x".into()), "stop-alice");
        let auto = Label::Auto { teammate: ALICE, kind: Kind::Plan, n: 2 };
        assert_eq!(auto.render(|_| "alice".into()), "alice/plan/2");
    }
}
