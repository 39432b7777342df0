//! What the oracle's unit tests share: a log written by hand, judged by
//! the oracle as a whole and, at every prefix, by a watcher fed event by
//! event. Each invariant's file tests it with a log where it must fail and
//! one where it must hold.

use super::{Invariant, Violation, Watch};
use crate::protocol::Action;
use crate::protocol::{AgentId, Canon, Kind, Label, Millis, Policy, RequestId, Status, Verdict};
use crate::trace::{Event, Names, RosterStatus, Stamped};
use crate::world::{Outcome, Stop};
use std::collections::BTreeMap;

/// The oracle's `check`, shadowed: every log a test here judges is also
/// fed to a [`Watch`] one event at a time and judged after each prefix
/// (see [`assert_one_oracle`]), so each test's log is a case of that
/// guard too, without being written twice.
pub(super) fn check(outcome: &Outcome, policy: &Policy, require_plan: &[bool]) -> Vec<Violation> {
    assert_one_oracle(outcome, policy, require_plan);
    super::check(outcome, policy, require_plan)
}

/// The guard that the watcher fed event by event and `check_log` reading
/// a whole log are one oracle ([`super::watcher_parts_from_log`]).
pub(super) fn assert_one_oracle(o: &Outcome, policy: &Policy, require_plan: &[bool]) {
    if let Some(why) = super::watcher_parts_from_log(o, policy, require_plan) {
        panic!("{why}");
    }
}

pub(super) const LEAD: AgentId = AgentId(0);
pub(super) const ALICE: AgentId = AgentId(1);
pub(super) const AGENT_ADVERSARY: AgentId = AgentId(2);

pub(super) fn id(n: u8) -> RequestId {
    RequestId::from_random_bytes([n; 16])
}

pub(super) fn outcome(events: Vec<(u64, Event)>) -> Outcome {
    let events: Vec<Stamped> = events.into_iter().map(|(t, event)| Stamped { t: Millis(t), event }).collect();
    let ended_at = events.last().map_or(Millis::ZERO, |e| e.t);
    Outcome {
        names: Names { agents: vec!["lead".into(), "alice".into(), "adversary".into()], labels: BTreeMap::new() },
        roster: vec![RosterStatus::Working; 2],
        requests: Vec::new(),
        events,
        files: BTreeMap::new(),
        ended_at,
        stop: Stop::Settled,
        load_done: 0,
        inbox_files: BTreeMap::new(),
        mirror_error: None,
        schedule_error: None,
        frames: None,
    }
}

pub(super) fn violations(events: Vec<(u64, Event)>, require_plan: bool) -> Vec<Violation> {
    check(&outcome(events), &Policy::default(), &[false, require_plan])
}

pub(super) fn broken(events: Vec<(u64, Event)>, require_plan: bool) -> Vec<Invariant> {
    violations(events, require_plan).into_iter().map(|v| v.invariant).collect()
}

pub(super) fn status(agent: AgentId, status: RosterStatus) -> Event {
    Event::Status { agent, status }
}

pub(super) fn write_step(done: u32) -> Event {
    Event::FileStep { agent: ALICE, path: "a.rs".into(), done, total: 4 }
}

pub(super) fn write_starts() -> Event {
    Event::Act { agent: ALICE, action: Action::Write, path: Some("a.rs".into()), blocked: None }
}

pub(super) fn opened(n: u8, kind: Kind, requester: AgentId, target: AgentId) -> Event {
    opened_due(n, kind, requester, target, 60_000)
}

/// As [`opened`], due at `deadline`.
pub(super) fn opened_due(n: u8, kind: Kind, requester: AgentId, target: AgentId, deadline: u64) -> Event {
    Event::Opened {
        id: id(n),
        label: Label::Auto { teammate: if requester == LEAD { target } else { requester }, kind, n: n as u32 },
        kind,
        requester,
        target,
        deadline: Millis(deadline),
    }
}

/// The delivery of `sender`'s answer to request `n`, which `at` judges
/// next (every shell logs a verdict just after its delivery).
pub(super) fn delivered(n: u8, kind: Kind, at: AgentId, sender: AgentId) -> Event {
    Event::Deliver {
        seq: 1_000 + n as u64,
        sender,
        claimed_from: sender,
        to: at,
        message_type: crate::protocol::MessageType::Response(kind),
        request_id: Some(id(n)),
    }
}

pub(super) fn applied(n: u8, kind: Kind, at: AgentId, sender: AgentId, to: Status) -> Event {
    Event::Verdict {
        at,
        request_id: id(n),
        response_kind: kind,
        approve: to == Status::Approved,
        sender,
        claimed_from: sender,
        verdict: Verdict::Applied { kind, from: Status::Pending, to },
    }
}

/// The lead's shutdown request `n` to `target`, opened with its deadline
/// at `t`, expiring then, and the kill its default owes: a kill as the
/// runtime logs one (it kills only so).
pub(super) fn kill_owed(t: u64, n: u8, target: AgentId) -> Vec<(u64, Event)> {
    let asked = opened_due(n, Kind::Shutdown, LEAD, target, t);
    let expired = Event::Expired { id: id(n), kind: Kind::Shutdown, default: crate::protocol::kinds::shutdown::KILL };
    vec![(t, asked), (t, expired), (t, status(target, RosterStatus::Killed))]
}

/// Feeds `log` to a fresh watcher; returns what each event pushed.
pub(super) fn fed(log: &[(u64, Event)]) -> (Watch, Vec<Vec<Violation>>) {
    let o = outcome(log.to_vec());
    let mut w = Watch::new(&[false, false]);
    let pushed = o
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut out = Vec::new();
            w.observe(&Policy::default(), &o.names, i, e, &mut out);
            out
        })
        .collect();
    (w, pushed)
}

pub(super) fn hash_of(w: &Watch) -> u64 {
    let mut c = Canon::new(&[]);
    w.canon(&mut c);
    c.finish()
}
