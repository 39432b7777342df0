//! gated-action: no gated mutating action runs before its plan is approved,
//! and not behind a gate that a response that does not match opened.
//!
//! Observes each plan request to the lead (the author's gate waits on it),
//! each ask for a plan the lead's `plan_request` delivers (which puts the
//! gate in play mid-run),
//! each verdict on it and its expiry (which open or shut the gate), and
//! each mutating action. The gate is derived from requests and verdicts,
//! not from what the agent says of its own gate, so a lying agent cannot
//! hide a write. A file step belongs to the item an action started: one
//! written behind a gate in play with no action that passed it (a history
//! whose writes skipped the gate) breaks it too; a step of an item begun
//! while the gate was open does not, as the runtime checks the gate when
//! an item starts, not at each of its steps. Checks nothing at the end.

use super::matching_response::mismatches;
use super::{At, Book, Invariant, Violation};
use crate::protocol::{
    AgentId, Canon, Effect, GateState, Kind, MessageType, RequestId, Status, Text, Verdict, YesMeans,
};
use crate::trace::Event;

/// What it keeps: the gate of each agent that needs a plan. An agent that
/// needs none has a gate that never moves, so it is not kept.
#[derive(Clone, Debug)]
pub(super) struct GatedAction {
    /// Sorted by agent.
    gates: Vec<(AgentId, Gate)>,
    /// Who must plan first from the start (sorted): a respawned process
    /// starts with the gate the team gives it, not the old one's.
    required: Vec<AgentId>,
    /// Who has sent an approval of a shutdown (sorted): it is stopping, and
    /// a plan asked of it then closes nothing (it finishes, or redoes after
    /// a crash, the item it promised to finish).
    stopping: Vec<AgentId>,
    /// The offers each agent has said yes to that gave it new work (sorted):
    /// saying yes again to one (a copy of the offer arrived) takes on
    /// nothing new, and closes no gate. A new process forgets its old ones.
    took_on: Vec<(AgentId, RequestId)>,
    /// The file each agent is writing, by the action that started it
    /// (sorted by agent): until its last step, a crash or a respawn.
    writing: Vec<(AgentId, Text)>,
}

/// An agent's plan gate as the oracle derives it.
#[derive(Clone, Copy, Debug)]
struct Gate {
    state: GateState,
    /// The plan the gate follows: the latest one sent to the lead.
    current: Option<RequestId>,
    /// Whether the decision that opened it was legitimate (a matching
    /// response or the timeout policy). A gate opened by a forgery must not
    /// license a write.
    legit: bool,
}

/// The gate of an agent that must plan first, before it has.
const SHUT: Gate = Gate { state: GateState::Required, current: None, legit: false };

/// The gate of an agent that needs no plan.
const OPEN: Gate = Gate { state: GateState::NotRequired, current: None, legit: false };

impl GatedAction {
    /// Gates for a team whose agents need a plan where `require_plan` says.
    pub(super) fn new(require_plan: &[bool]) -> GatedAction {
        let required: Vec<AgentId> =
            require_plan.iter().enumerate().filter(|(_, p)| **p).map(|(i, _)| AgentId(i as u32)).collect();
        GatedAction {
            gates: required.iter().map(|a| (*a, SHUT)).collect(),
            required,
            stopping: Vec::new(),
            took_on: Vec::new(),
            writing: Vec::new(),
        }
    }

    fn gate(&self, agent: AgentId) -> Gate {
        self.gates.binary_search_by_key(&agent, |(a, _)| *a).map_or(OPEN, |k| self.gates[k].1)
    }

    fn gate_mut(&mut self, agent: AgentId) -> Option<&mut Gate> {
        let k = self.gates.binary_search_by_key(&agent, |(a, _)| *a).ok()?;
        Some(&mut self.gates[k].1)
    }

    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        match e {
            Event::Opened { id, kind: Kind::Plan, requester, target, .. } if target.is_lead() => {
                if let Some(g) = self.gate_mut(*requester) {
                    *g = Gate { state: GateState::Pending, current: Some(*id), legit: false };
                }
            }
            Event::Verdict {
                at: by, request_id, response_kind, sender, verdict: Verdict::Applied { to, .. }, ..
            } => {
                let Some(r) = book.request(*request_id) else { return };
                if r.kind != Kind::Plan {
                    return;
                }
                if let Some(g) = self.gate_mut(r.requester).filter(|g| g.current == Some(*request_id)) {
                    if g.state == GateState::Pending {
                        g.state = if *to == Status::Approved { GateState::Approved } else { GateState::Rejected };
                        g.legit = mismatches(r, *response_kind, *sender, *by, at).is_empty();
                    }
                }
            }
            Event::Expired { id, kind: Kind::Plan, default } => {
                let Some(r) = book.request(*id) else { return };
                if let Some(g) = self.gate_mut(r.requester).filter(|g| g.current == Some(*id)) {
                    if g.state == GateState::Pending {
                        let approve = default.effect == Effect::Answer { yes: true };
                        g.state = if approve { GateState::Approved } else { GateState::Rejected };
                        g.legit = true;
                    }
                }
            }
            // A teammate's yes: one that stops it takes it out of the lead's
            // later asks for a plan; one that takes on new work closes a gate
            // in play until a new plan is approved (an approval covers the
            // work it was given for: the reference's
            // `test_plan_approval_cannot_cross_assignment_boundary`).
            Event::Send { from, message_type, approve: Some(true), request_id, .. }
                if !from.is_lead() && !at.replayed =>
            {
                match message_type.yes_means() {
                    YesMeans::Stop => {
                        if let Err(k) = self.stopping.binary_search(from) {
                            self.stopping.insert(k, *from);
                        }
                    }
                    YesMeans::NewWork => {
                        if let Some(id) = request_id {
                            match self.took_on.binary_search(&(*from, *id)) {
                                Ok(_) => return,
                                Err(k) => self.took_on.insert(k, (*from, *id)),
                            }
                        }
                        if let Some(g) = self.gate_mut(*from) {
                            *g = Gate { state: GateState::Required, current: None, legit: false };
                        }
                    }
                    YesMeans::Nothing => {}
                }
            }
            // The lead asked for a plan: the gate is in play from here on,
            // closed until a new plan is approved. Only the lead's own ask
            // counts (what the router saw, not what a message claims).
            Event::Deliver { sender, to, message_type: MessageType::PlanRequest, .. }
                if sender.is_lead() && self.stopping.binary_search(to).is_err() =>
            {
                let asked = Gate { state: GateState::Required, current: None, legit: false };
                match self.gates.binary_search_by_key(to, |(a, _)| *a) {
                    Ok(k) if self.gates[k].1.state == GateState::Pending => {}
                    Ok(k) => self.gates[k].1 = asked,
                    Err(k) => self.gates.insert(k, (*to, asked)),
                }
            }
            // A new process: the gate the team gives it, whatever the old
            // one's was (s13's spawn sets it afresh).
            Event::Respawn { agent } => {
                if let Ok(k) = self.stopping.binary_search(agent) {
                    self.stopping.remove(k);
                }
                self.stop_writing(*agent);
                self.took_on.retain(|(a, _)| a != agent);
                let k = self.gates.binary_search_by_key(agent, |(a, _)| *a);
                match (k, self.required.binary_search(agent).is_ok()) {
                    (Ok(k), true) => self.gates[k].1 = SHUT,
                    (Ok(k), false) => {
                        self.gates.remove(k);
                    }
                    (Err(k), true) => self.gates.insert(k, (*agent, SHUT)),
                    (Err(_), false) => {}
                }
            }
            Event::Crash { agent, .. } => self.stop_writing(*agent),
            Event::FileStep { agent, path, done, total } => {
                let started = self.writing_of(*agent).is_some_and(|p| p == path);
                let g = self.gate(*agent);
                if !started && g.state != GateState::NotRequired {
                    let detail = format!(
                        "{} wrote step {done}/{total} of {path} with no action that passed its plan gate ({})",
                        at.who(*agent),
                        g.state
                    );
                    out.push(at.violation(Invariant::GatedAction, detail));
                }
                if done >= total {
                    self.stop_writing(*agent);
                }
            }
            Event::Act { agent, action, blocked: None, path } if action.is_mutating() => {
                if let Some(path) = path {
                    self.start_writing(*agent, path);
                }
                let g = self.gate(*agent);
                let what = || path.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
                let act = action.as_str();
                if !matches!(g.state, GateState::NotRequired | GateState::Approved) {
                    let state = g.state;
                    let plan = g.current.map(|id| format!(" (current plan [{}])", at.label(id))).unwrap_or_default();
                    let detail =
                        format!("{} ran {act}{} while its plan gate was {state}{plan}", at.who(*agent), what());
                    out.push(at.violation(Invariant::GatedAction, detail));
                } else if g.state == GateState::Approved && !g.legit {
                    let detail = format!(
                        "{} ran {act}{} behind a gate opened by a response that does not match",
                        at.who(*agent),
                        what()
                    );
                    out.push(at.violation(Invariant::GatedAction, detail));
                }
            }
            _ => {}
        }
    }

    fn writing_of(&self, agent: AgentId) -> Option<&Text> {
        self.writing.binary_search_by_key(&agent, |(a, _)| *a).ok().map(|k| &self.writing[k].1)
    }

    fn start_writing(&mut self, agent: AgentId, path: &Text) {
        match self.writing.binary_search_by_key(&agent, |(a, _)| *a) {
            Ok(k) => self.writing[k].1 = path.clone(),
            Err(k) => self.writing.insert(k, (agent, path.clone())),
        }
    }

    fn stop_writing(&mut self, agent: AgentId) {
        if let Ok(k) = self.writing.binary_search_by_key(&agent, |(a, _)| *a) {
            self.writing.remove(k);
        }
    }

    /// Hashes the gate of `agent`, in the walk over agents.
    pub(super) fn canon_agent(&self, agent: AgentId, c: &mut Canon) {
        let g = self.gate(agent);
        let stopping = self.stopping.binary_search(&agent).is_ok();
        c.word(
            gate_code(g.state) as u64
                | ((g.state == GateState::Approved && g.legit) as u64) << 8
                | (stopping as u64) << 9,
        );
        match g.current {
            Some(id) => c.id(id),
            None => c.word(u64::MAX),
        }
        let from = self.took_on.partition_point(|(a, _)| *a < agent);
        let mine = self.took_on[from..].iter().take_while(|(a, _)| *a == agent);
        c.word(mine.clone().count() as u64);
        for (_, id) in mine {
            c.id(*id);
        }
        match self.writing_of(agent) {
            Some(path) => std::hash::Hash::hash(&**path, c),
            None => c.word(u64::MAX),
        }
    }
}

/// The one code a gate state hashes as (`GateState` has no `Hash`).
fn gate_code(s: GateState) -> u8 {
    match s {
        GateState::NotRequired => 0,
        GateState::Required => 1,
        GateState::Pending => 2,
        GateState::Approved => 3,
        GateState::Rejected => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::{Kind, Policy, Status};
    use crate::world::Stop;

    #[test]
    fn a_write_after_a_later_plan_was_rejected_breaks_gated_action() {
        // The gate is derived from the requests: the agent's own gate events
        // are not consulted, so a lying agent cannot hide the write.
        let first = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, delivered(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (2, write_starts()),
        ];
        assert!(broken(first.clone(), true).is_empty());
        let mut second = first;
        second.push((10, opened(2, Kind::Plan, ALICE, LEAD)));
        second.push((12, delivered(2, Kind::Plan, ALICE, LEAD)));
        second.push((12, applied(2, Kind::Plan, ALICE, LEAD, Status::Rejected)));
        second.push((13, write_starts()));
        let v = violations(second, true);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].invariant, Invariant::GatedAction);
        assert!(v[0].detail.contains("rejected"), "{}", v[0].detail);
    }

    #[test]
    fn a_file_written_with_no_action_through_the_gate_breaks_gated_action() {
        let rejected = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, delivered(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Rejected)),
        ];
        // Steps with no action starting them, behind the rejected gate.
        let mut steps = rejected.clone();
        steps.extend([(3, write_step(1)), (4, write_step(2))]);
        let v = violations(steps, true);
        assert_eq!(
            v.iter().map(|v| (v.invariant, v.event)).collect::<Vec<_>>(),
            vec![(Invariant::GatedAction, Some(3)), (Invariant::GatedAction, Some(4))]
        );
        assert!(
            v[0].detail.contains("alice wrote step 1/4 of a.rs with no action that passed its plan gate (rejected)"),
            "{}",
            v[0].detail
        );
        // With no gate in play, a step is not the gate's business.
        assert_eq!(broken(vec![(3, write_step(1))], false), vec![]);
    }

    #[test]
    fn a_file_begun_through_an_open_gate_may_finish_after_it_closes() {
        // The runtime checks the gate when an item starts: the lead's ask for
        // a plan mid-item closes the gate for the next one, not this one.
        let log = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, delivered(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (3, write_starts()),
            (4, write_step(1)),
            (5, plan_asked(LEAD)),
            (6, write_step(2)),
            (7, write_step(3)),
            (8, write_step(4)),
        ];
        assert_eq!(broken(log.clone(), true), vec![]);
        // After its last step the item is done: a step more is a new write
        // no action started.
        let mut more = log;
        more.push((9, write_step(1)));
        assert_eq!(broken(more, true), vec![Invariant::GatedAction]);
    }

    /// The lead's `plan_request`, as the router delivered it to alice.
    fn plan_asked(sender: crate::protocol::AgentId) -> crate::trace::Event {
        crate::trace::Event::Deliver {
            seq: 9,
            sender,
            claimed_from: LEAD,
            to: ALICE,
            message_type: crate::protocol::MessageType::PlanRequest,
            request_id: None,
        }
    }

    #[test]
    fn a_write_after_the_lead_asked_for_a_plan_waits_for_its_approval() {
        // Alice needs no plan until the lead asks for one.
        assert!(broken(vec![(0, write_starts())], false).is_empty());
        let asked = vec![(0, plan_asked(LEAD)), (1, write_starts())];
        assert_eq!(broken(asked, false), vec![Invariant::GatedAction]);
        let approved = vec![
            (0, plan_asked(LEAD)),
            (1, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, delivered(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (3, write_starts()),
        ];
        assert!(broken(approved, false).is_empty());
        // Only the lead's ask counts: one the adversary sent claiming to be
        // the lead closes nothing the oracle watches.
        assert!(broken(vec![(0, plan_asked(AGENT_ADVERSARY)), (1, write_starts())], false).is_empty());
    }

    /// Alice accepts the lead's task offer 3 (sent as the router saw it).
    fn task_accepted() -> crate::trace::Event {
        crate::trace::Event::Send {
            seq: 7,
            from: ALICE,
            to: crate::protocol::Address::Agent(LEAD),
            message_type: crate::protocol::MessageType::Response(Kind::Task),
            request_id: Some(id(3)),
            approve: Some(true),
            words: None,
        }
    }

    #[test]
    fn a_write_after_taking_on_new_work_waits_for_a_new_plan() {
        // A plan approved for the work alice had does not cover the task she
        // accepts after it (the reference's
        // test_plan_approval_cannot_cross_assignment_boundary).
        let approved = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, delivered(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (5, task_accepted()),
        ];
        let mut crossed = approved.clone();
        crossed.push((6, write_starts()));
        // (The acceptance is never delivered here: no-silent-loss says so.)
        let gated = |log, require_plan| {
            let mut v = violations(log, require_plan);
            v.retain(|v| v.invariant == Invariant::GatedAction);
            v
        };
        let v = gated(crossed, true);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].detail.contains("while its plan gate was required"), "{}", v[0].detail);
        let mut replanned = approved;
        replanned.push((6, opened(2, Kind::Plan, ALICE, LEAD)));
        replanned.push((8, delivered(2, Kind::Plan, ALICE, LEAD)));
        replanned.push((8, applied(2, Kind::Plan, ALICE, LEAD, Status::Approved)));
        replanned.push((9, write_starts()));
        assert_eq!(gated(replanned, true), vec![]);
        // A teammate with no gate in play takes on work freely.
        assert_eq!(gated(vec![(5, task_accepted()), (6, write_starts())], false), vec![]);
    }

    #[test]
    fn a_write_while_a_later_plan_is_pending_breaks_gated_action() {
        let log = vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (2, delivered(1, Kind::Plan, ALICE, LEAD)),
            (2, applied(1, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (10, opened(2, Kind::Plan, ALICE, LEAD)),
            (11, write_starts()),
        ];
        // The run ends before the second plan's deadline, so it may still be pending.
        let mut o = outcome(log);
        o.stop = Stop::EndTime;
        let found: Vec<Invariant> =
            check(&o, &Policy::default(), &[false, true]).into_iter().map(|v| v.invariant).collect();
        assert_eq!(found, vec![Invariant::GatedAction]);
    }
}
