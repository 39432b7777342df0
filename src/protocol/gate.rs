//! The plan gate: a teammate that must plan first cannot run mutating actions
//! until the lead approves its current plan. The runtime consults the gate
//! before every action, so safety does not depend on the teammate's manners.

use super::message::RequestId;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateState {
    /// This teammate may act freely.
    NotRequired,
    /// A plan is needed and none has been submitted yet.
    Required,
    /// A plan is waiting for approval.
    Pending,
    Approved,
    Rejected,
}

impl GateState {
    pub fn as_str(self) -> &'static str {
        match self {
            GateState::NotRequired => "not_required",
            GateState::Required => "required",
            GateState::Pending => "pending",
            GateState::Approved => "approved",
            GateState::Rejected => "rejected",
        }
    }
}

impl fmt::Display for GateState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a teammate may try to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Read,
    Write,
    Edit,
    Shell,
    SubmitPlan,
}

impl Action {
    /// Mutating actions change the world and are what the gate holds back.
    pub fn is_mutating(self) -> bool {
        matches!(self, Action::Write | Action::Edit | Action::Shell)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Write => "write",
            Action::Edit => "edit",
            Action::Shell => "shell",
            Action::SubmitPlan => "submit_plan",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("{} is blocked: the plan gate is {state} (a plan must be approved first)", action.as_str())]
    Closed { action: Action, state: GateState },
    #[error("a plan is already waiting for approval")]
    AlreadyPending,
}

/// How a plan verdict moved the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateChange {
    Opened,
    StaysClosed,
    /// The verdict was for a plan other than the current one: a stale answer
    /// must never open the gate.
    Stale,
    /// The gate is not in play (not required, or the verdict is for a peer plan).
    NotInPlay,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanGate {
    state: GateState,
    current: Option<RequestId>,
}

impl PlanGate {
    pub fn new(required: bool) -> PlanGate {
        PlanGate { state: if required { GateState::Required } else { GateState::NotRequired }, current: None }
    }

    pub fn state(&self) -> GateState {
        self.state
    }

    pub fn current_plan(&self) -> Option<RequestId> {
        self.current
    }

    /// Whether `action` may run now.
    pub fn check(&self, action: Action) -> Result<(), GateError> {
        let open = matches!(self.state, GateState::NotRequired | GateState::Approved);
        if action.is_mutating() && !open {
            return Err(GateError::Closed { action, state: self.state });
        }
        Ok(())
    }

    /// A plan went out under `id` and becomes the current plan. The gate
    /// follows the current plan: a new plan closes an open gate until it is
    /// approved, because approving the old plan said nothing about this one
    /// (`DROP TABLE users` must not ride on an approved `add an index`). A
    /// gate not in play (no plan required) is left alone.
    pub fn submitted(&mut self, id: RequestId) -> Result<(), GateError> {
        match self.state {
            GateState::Required | GateState::Rejected | GateState::Approved => {
                self.state = GateState::Pending;
                self.current = Some(id);
                Ok(())
            }
            GateState::Pending => Err(GateError::AlreadyPending),
            GateState::NotRequired => Ok(()),
        }
    }

    /// The lead asks for a plan: the gate is in play from now on and closed
    /// until a new plan is approved (an approval given earlier was for the
    /// work as it stood then). False, and nothing changes, when a plan is
    /// already pending: that plan is the one the lead will see.
    pub fn plan_asked(&mut self) -> bool {
        if self.state == GateState::Pending {
            return false;
        }
        self.state = GateState::Required;
        self.current = None;
        true
    }

    /// The plan `id` was approved or rejected (by a response or by the timeout
    /// policy). Only the current plan can move the gate.
    pub fn decided(&mut self, id: RequestId, approved: bool) -> GateChange {
        if matches!(self.state, GateState::NotRequired) {
            return GateChange::NotInPlay;
        }
        if self.current != Some(id) {
            return GateChange::Stale;
        }
        if self.state != GateState::Pending {
            // A second verdict for the current plan (possible only with the
            // pending check switched off) must not flip an already decided gate.
            return GateChange::Stale;
        }
        if approved {
            self.state = GateState::Approved;
            GateChange::Opened
        } else {
            self.state = GateState::Rejected;
            GateChange::StaysClosed
        }
    }
}

impl PlanGate {
    /// Hashes the gate for the explorer's fingerprint.
    pub fn canon(&self, c: &mut super::Canon) {
        let PlanGate { state, current } = self;
        c.word(*state as u64);
        match *current {
            Some(id) => c.id(id),
            None => c.word(u64::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> RequestId {
        RequestId::from_random_bytes([n; 16])
    }

    const MUTATING: [Action; 3] = [Action::Write, Action::Edit, Action::Shell];

    #[test]
    fn not_required_allows_everything() {
        let g = PlanGate::new(false);
        for a in [Action::Read, Action::Write, Action::Edit, Action::Shell, Action::SubmitPlan] {
            assert_eq!(g.check(a), Ok(()));
        }
    }

    #[test]
    fn required_pending_and_rejected_block_mutations_but_not_reads() {
        let mut g = PlanGate::new(true);
        let mut states = vec![];
        states.push(g.clone());
        g.submitted(id(1)).unwrap();
        states.push(g.clone());
        g.decided(id(1), false);
        states.push(g.clone());
        for g in states {
            for a in MUTATING {
                let err = g.check(a).unwrap_err();
                assert_eq!(err, GateError::Closed { action: a, state: g.state() });
                assert!(err.to_string().contains(g.state().as_str()), "{err}");
            }
            assert_eq!(g.check(Action::Read), Ok(()));
            assert_eq!(g.check(Action::SubmitPlan), Ok(()));
        }
    }

    #[test]
    fn approval_of_the_current_plan_opens_the_gate() {
        let mut g = PlanGate::new(true);
        g.submitted(id(1)).unwrap();
        assert_eq!(g.decided(id(1), true), GateChange::Opened);
        for a in MUTATING {
            assert_eq!(g.check(a), Ok(()));
        }
    }

    #[test]
    fn a_rejected_plan_needs_a_new_submission_with_a_new_id() {
        let mut g = PlanGate::new(true);
        g.submitted(id(1)).unwrap();
        assert_eq!(g.decided(id(1), false), GateChange::StaysClosed);
        // The old id cannot be approved now: it is no longer pending.
        assert_eq!(g.decided(id(1), true), GateChange::Stale);
        assert_eq!(g.state(), GateState::Rejected);
        g.submitted(id(2)).unwrap();
        assert_eq!(g.current_plan(), Some(id(2)));
        assert_eq!(g.decided(id(2), true), GateChange::Opened);
    }

    #[test]
    fn a_stale_plan_response_cannot_open_the_gate() {
        let mut g = PlanGate::new(true);
        g.submitted(id(1)).unwrap();
        g.decided(id(1), false);
        g.submitted(id(2)).unwrap();
        assert_eq!(g.decided(id(1), true), GateChange::Stale);
        assert_eq!(g.state(), GateState::Pending);
        assert!(g.check(Action::Write).is_err());
    }

    #[test]
    fn a_new_plan_closes_an_open_gate_until_it_is_approved() {
        let mut g = PlanGate::new(true);
        g.submitted(id(1)).unwrap();
        assert_eq!(g.decided(id(1), true), GateChange::Opened);
        g.submitted(id(2)).unwrap();
        assert_eq!(g.state(), GateState::Pending);
        assert!(g.check(Action::Write).is_err());
        // The first plan's approval cannot be used again.
        assert_eq!(g.decided(id(1), true), GateChange::Stale);
        assert_eq!(g.decided(id(2), false), GateChange::StaysClosed);
        assert!(g.check(Action::Write).is_err(), "a rejected later plan keeps the gate closed");
    }

    #[test]
    fn cannot_submit_twice_while_pending() {
        let mut g = PlanGate::new(true);
        g.submitted(id(1)).unwrap();
        assert_eq!(g.submitted(id(2)), Err(GateError::AlreadyPending));
        assert_eq!(g.current_plan(), Some(id(1)));
    }

    #[test]
    fn a_plan_asked_for_closes_any_gate_but_a_pending_one() {
        let mut free = PlanGate::new(false);
        assert!(free.plan_asked());
        assert_eq!(free.state(), GateState::Required);
        assert!(free.check(Action::Write).is_err(), "a gate asked for is in play");
        let mut open = PlanGate::new(true);
        open.submitted(id(1)).unwrap();
        open.decided(id(1), true);
        assert!(open.plan_asked());
        assert!(open.check(Action::Shell).is_err(), "the old approval does not cover what comes next");
        assert_eq!(open.decided(id(1), true), GateChange::Stale);
        open.submitted(id(2)).unwrap();
        assert!(!open.plan_asked(), "a pending plan is the one the lead will see");
        assert_eq!((open.state(), open.current_plan()), (GateState::Pending, Some(id(2))));
    }

    #[test]
    fn a_peer_plan_does_not_touch_a_gate_not_in_play() {
        let mut g = PlanGate::new(false);
        g.submitted(id(1)).unwrap();
        assert_eq!(g.decided(id(1), false), GateChange::NotInPlay);
        assert_eq!(g.state(), GateState::NotRequired);
    }
}
