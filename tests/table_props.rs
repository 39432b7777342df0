//! Property tests of the request table: any sequence of requests, responses
//! (right or wrong in every field, early, on time, at or after the deadline)
//! and clock ticks keeps the state machine's promises.
//!
//! A small model runs beside the table: it knows what was opened, when each
//! deadline falls and which requests are still pending, and checks every
//! verdict, every expiry and `next_deadline()` against the design's rules.

use handshake::protocol::{
    AgentId, Defences, Expiry, Kind, Millis, NewRequest, Reason, RequestId, RequestTable, Response, Status, Verdict,
};
use proptest::prelude::*;

// ---------------------------------------------------------------- operations

/// When a response is delivered.
#[derive(Clone, Debug)]
enum When {
    /// A few milliseconds around the request's deadline: the boundary cases.
    NearDeadline(i64),
    /// Some time from now.
    Later(u64),
    /// Any time at all, possibly before the request was even sent.
    Anytime(u64),
}

/// Which fields of a response match its request.
#[derive(Clone, Debug)]
enum Fit {
    /// Right kind, from the target (truly and by claim), to the requester.
    Matching,
    /// Every field drawn independently: usually something is wrong.
    Random { kind: Kind, sender: u32, claimed_from: u32, recipient: u32 },
}

#[derive(Clone, Debug)]
enum Op {
    /// Open a request at the current time.
    Open { kind: Kind, requester: u32, target: u32, timeout: u64 },
    /// Answer a request made earlier (`known`) or an id never made.
    /// `which` picks one of the requests made so far (modulo their number).
    Answer { known: bool, which: usize, unknown: u32, fit: Fit, approve: bool, when: When },
    /// Advance the clock and expire what is due.
    Tick { by: u64 },
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Shutdown), Just(Kind::Plan)]
}

/// The lead and two teammates.
fn agent() -> impl Strategy<Value = u32> {
    0u32..3
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        2 => (-3i64..=3).prop_map(When::NearDeadline),
        2 => (0u64..20).prop_map(When::Later),
        1 => (0u64..300).prop_map(When::Anytime),
    ]
}

fn fit() -> impl Strategy<Value = Fit> {
    prop_oneof![
        1 => Just(Fit::Matching),
        1 => (kind(), agent(), agent(), agent())
            .prop_map(|(kind, sender, claimed_from, recipient)| Fit::Random { kind, sender, claimed_from, recipient }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (kind(), agent(), agent(), 0u64..60)
            .prop_map(|(kind, requester, target, timeout)| Op::Open { kind, requester, target, timeout }),
        5 => (prop::bool::weighted(0.9), any::<usize>(), any::<u32>(), fit(), any::<bool>(), when()).prop_map(
            |(known, which, unknown, fit, approve, when)| Op::Answer { known, which, unknown, fit, approve, when }
        ),
        2 => (0u64..40).prop_map(|by| Op::Tick { by }),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..80)
}

/// Defences with the pending check on (the others vary).
fn defences_with_pending_check() -> impl Strategy<Value = Defences> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(kind_check, sender_check, sender_auth)| Defences {
        kind_check,
        sender_check,
        sender_auth,
        pending_check: true,
        deadline_check: true,
        incarnation_check: true,
    })
}

// ---------------------------------------------------------------- the model

/// Ids made here carry 0xAA in their last byte, ids never made 0x55: they
/// can never collide.
fn made_id(n: u32) -> RequestId {
    id_with(n, 0xAA)
}

fn never_made_id(n: u32) -> RequestId {
    id_with(n, 0x55)
}

fn id_with(n: u32, marker: u8) -> RequestId {
    let mut bytes = [0u8; 16];
    bytes[..4].copy_from_slice(&n.to_le_bytes());
    bytes[15] = marker;
    RequestId::from_random_bytes(bytes)
}

#[derive(Clone, Debug)]
struct Made {
    id: RequestId,
    kind: Kind,
    requester: AgentId,
    target: AgentId,
    deadline: Millis,
    /// What the model believes; the table must agree after every step.
    status: Status,
    /// Terminal transitions seen (by a verdict or an expiry): at most one.
    endings: u32,
}

struct Run {
    table: RequestTable,
    defences: Defences,
    now: Millis,
    made: Vec<Made>,
}

impl Run {
    fn new(defences: Defences) -> Run {
        Run { table: RequestTable::new(defences), defences, now: Millis::ZERO, made: Vec::new() }
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Open { kind, requester, target, timeout } => self.open(*kind, *requester, *target, *timeout),
            Op::Answer { known, which, unknown, fit, approve, when } => {
                self.answer(*known, *which, *unknown, fit, *approve, when)
            }
            Op::Tick { by } => self.tick(*by),
        }?;
        self.check_agreement()
    }

    fn open(&mut self, kind: Kind, requester: u32, target: u32, timeout: u64) -> Result<(), TestCaseError> {
        let id = made_id(self.made.len() as u32);
        let (requester, target) = (AgentId(requester), AgentId(target));
        let new = NewRequest { kind, requester, target, sent_at: self.now, timeout: Millis(timeout), label: None };
        let r = self.table.open(id, new);
        let deadline = Millis(self.now.0 + timeout);
        prop_assert_eq!(r.status, Status::Pending);
        prop_assert_eq!(r.deadline, deadline);
        self.made.push(Made { id, kind, requester, target, deadline, status: Status::Pending, endings: 0 });
        Ok(())
    }

    fn answer(
        &mut self,
        known: bool,
        which: usize,
        unknown: u32,
        fit: &Fit,
        approve: bool,
        when: &When,
    ) -> Result<(), TestCaseError> {
        let target = (known && !self.made.is_empty()).then(|| which % self.made.len());
        let response = self.response(target, unknown, fit, approve, when);
        let verdict = self.table.apply(&response);
        let Some(i) = target else {
            prop_assert_eq!(verdict, Verdict::Ignored(Reason::UnknownId));
            return Ok(());
        };
        let m = &mut self.made[i];
        let d = self.defences;
        let sender = if d.sender_auth { response.sender } else { response.claimed_from };
        let kind_ok = !d.kind_check || response.kind == m.kind;
        let sender_ok = !d.sender_check || sender == m.target;
        let recipient_ok = response.recipient == m.requester;
        let on_time = response.at < m.deadline;
        let pending = m.status == Status::Pending;
        let all_hold = kind_ok && sender_ok && recipient_ok && on_time && pending;
        match verdict {
            Verdict::Applied { kind, from, to } => {
                prop_assert!(all_hold, "applied although a rule is broken: {:?} to {:?}", response, m);
                prop_assert!(response.at < m.deadline, "a response at/after the deadline was applied");
                prop_assert_eq!(kind, m.kind);
                prop_assert_eq!(from, Status::Pending);
                prop_assert_eq!(to, if approve { Status::Approved } else { Status::Rejected });
                m.status = to;
                m.endings += 1;
            }
            Verdict::Ignored(reason) => {
                prop_assert!(!all_hold, "a matching, on-time response to a pending request was ignored: {:?}", reason);
                let reason_is_true = match reason {
                    Reason::UnknownId => false,
                    Reason::KindMismatch => !kind_ok,
                    Reason::WrongSender => !sender_ok,
                    Reason::WrongRecipient => !recipient_ok,
                    Reason::NotPending => matches!(m.status, Status::Approved | Status::Rejected),
                    Reason::Late => m.status == Status::Expired || !on_time,
                    // Only a request's receiver ignores as expired or stale; the table judges responses.
                    Reason::Expired | Reason::StaleIncarnation => false,
                };
                prop_assert!(reason_is_true, "ignored as {:?}, which is not so: {:?} to {:?}", reason, response, m);
            }
        }
        prop_assert!(m.endings <= 1);
        Ok(())
    }

    fn response(&self, target: Option<usize>, unknown: u32, fit: &Fit, approve: bool, when: &When) -> Response {
        let m = target.map(|i| &self.made[i]);
        let request_id = m.map_or_else(|| never_made_id(unknown), |m| m.id);
        let at = match (when, m) {
            (When::NearDeadline(delta), Some(m)) => Millis(m.deadline.0.saturating_add_signed(*delta)),
            (When::NearDeadline(_), None) => self.now,
            (When::Later(by), _) => Millis(self.now.0 + by),
            (When::Anytime(t), _) => Millis(*t),
        };
        let (kind, sender, claimed_from, recipient) = match (fit, m) {
            (Fit::Matching, Some(m)) => (m.kind, m.target, m.target, m.requester),
            (Fit::Matching, None) => (Kind::Shutdown, AgentId(1), AgentId(1), AgentId::LEAD),
            (Fit::Random { kind, sender, claimed_from, recipient }, _) => {
                (*kind, AgentId(*sender), AgentId(*claimed_from), AgentId(*recipient))
            }
        };
        Response { request_id, kind, approve, sender, claimed_from, recipient, at }
    }

    fn tick(&mut self, by: u64) -> Result<(), TestCaseError> {
        self.now = Millis(self.now.0 + by);
        let mut out = Vec::new();
        self.table.expire_due(self.now, &mut out);
        // Every pending request due by now, earliest deadline first, ties in
        // the order they were made (deadlines and ids are unique per request).
        let mut due: Vec<&Made> =
            self.made.iter().filter(|m| m.status == Status::Pending && m.deadline <= self.now).collect();
        due.sort_by_key(|m| m.deadline);
        let expected: Vec<Expiry> =
            due.iter().map(|m| Expiry { id: m.id, kind: m.kind, target: m.target, deadline: m.deadline }).collect();
        prop_assert_eq!(&out, &expected);
        for e in &out {
            let m = self.made.iter_mut().find(|m| m.id == e.id).expect("expired a request that was made");
            m.status = Status::Expired;
            m.endings += 1;
            prop_assert!(m.endings <= 1);
        }
        Ok(())
    }

    /// The table and the model agree on every request, and `next_deadline()`
    /// is the earliest deadline among pending requests.
    fn check_agreement(&mut self) -> Result<(), TestCaseError> {
        prop_assert_eq!(self.table.len(), self.made.len());
        for m in &self.made {
            let r = self.table.get(m.id).expect("a request made is kept");
            prop_assert_eq!(r.status, m.status, "request {:?}", m);
        }
        let earliest_in_table = self.table.iter().filter(|r| r.status == Status::Pending).map(|r| r.deadline).min();
        let earliest_in_model = self.made.iter().filter(|m| m.status == Status::Pending).map(|m| m.deadline).min();
        prop_assert_eq!(earliest_in_table, earliest_in_model);
        prop_assert_eq!(self.table.next_deadline(), earliest_in_table);
        prop_assert_eq!(self.table.pending(), self.made.iter().filter(|m| m.status == Status::Pending).count());
        Ok(())
    }
}

/// Runs `ops` against a table and checks, after every one, that no terminal
/// state changed.
fn run_ops(defences: Defences, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut run = Run::new(defences);
    for op in ops {
        let before: Vec<Status> = run.made.iter().map(|m| m.status).collect();
        run.step(op)?;
        for (m, was) in run.made.iter().zip(before) {
            if was.is_terminal() {
                prop_assert_eq!(run.table.get(m.id).map(|r| r.status), Some(was), "a terminal state changed");
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// With every defence on: at most one terminal state per request, never
    /// left; a response at or after the deadline is never applied; only a
    /// matching response applies; `next_deadline()` is the earliest pending one.
    #[test]
    fn with_default_defences_the_state_machine_keeps_its_promises(ops in ops()) {
        run_ops(Defences::default(), &ops)?;
    }

    /// The terminal-state and lateness promises rest on the pending check
    /// alone: they hold whatever the kind, sender and authentication checks.
    #[test]
    fn with_the_pending_check_on_terminal_states_are_final_whatever_else_is_off(
        defences in defences_with_pending_check(),
        ops in ops(),
    ) {
        run_ops(defences, &ops)?;
    }
}

#[test]
fn a_response_exactly_at_the_deadline_is_late_even_before_expiry_runs() {
    let mut run = Run::new(Defences::default());
    let ops = [
        Op::Open { kind: Kind::Shutdown, requester: 0, target: 1, timeout: 10 },
        Op::Answer {
            known: true,
            which: 0,
            unknown: 0,
            fit: Fit::Matching,
            approve: true,
            when: When::NearDeadline(0),
        },
    ];
    for op in &ops {
        run.step(op).unwrap();
    }
    assert_eq!(run.made[0].status, Status::Pending);
    assert_eq!(run.table.next_deadline(), Some(Millis(10)));
}
