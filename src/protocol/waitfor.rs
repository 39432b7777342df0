//! The wait-for graph: who is blocked waiting on whom, and the cycles that
//! make a deadlock.
//!
//! An edge `a → b` means `a` is blocked on a request it asked `b` (a teammate
//! waiting on its own plan answers nothing until the plan is decided). A
//! blocked agent waits on exactly one request, so every agent has at most one
//! outgoing edge, and a cycle is found by following the chain from the agent
//! that just became blocked: no search, no allocation unless a cycle closes.
//! The lead never blocks, so a cycle through the lead cannot form.

use super::message::RequestId;
use super::names::AgentId;
use std::collections::BTreeMap;

/// One deadlock: the agents in the cycle in waiting order (`alice → bob →
/// alice` is `[alice, bob]`), with the request each one waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub members: Vec<AgentId>,
    /// `requests[i]` is what `members[i]` waits on (asked of `members[i + 1]`).
    pub requests: Vec<RequestId>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitFor {
    /// Blocked agent → (the agent it waits on, the request it waits on).
    waits: BTreeMap<AgentId, (AgentId, RequestId)>,
    /// The cycles standing now, so an edge that leaves one can say which it broke.
    cycles: Vec<Cycle>,
}

impl WaitFor {
    pub fn new() -> WaitFor {
        WaitFor::default()
    }

    /// `from` is now blocked on `request`, asked of `to`. Returns the cycle
    /// this closes, if it closes one.
    pub fn wait(&mut self, from: AgentId, to: AgentId, request: RequestId) -> Option<Cycle> {
        self.waits.insert(from, (to, request));
        let cycle = self.cycle_through(from)?;
        self.cycles.push(cycle.clone());
        Some(cycle)
    }

    /// `request` no longer blocks anyone (answered, expired, or its asker is
    /// gone). Returns the cycles it was part of, now broken.
    pub fn release(&mut self, request: RequestId) -> Vec<Cycle> {
        self.waits.retain(|_, (_, r)| *r != request);
        let (broken, standing): (Vec<Cycle>, Vec<Cycle>) =
            std::mem::take(&mut self.cycles).into_iter().partition(|c| c.requests.contains(&request));
        self.cycles = standing;
        broken
    }

    /// `agent` is gone for good (killed, shut down): it waits on nothing.
    pub fn forget(&mut self, agent: AgentId) -> Vec<Cycle> {
        match self.waits.get(&agent) {
            Some((_, request)) => {
                let request = *request;
                self.release(request)
            }
            None => Vec::new(),
        }
    }

    /// Every wait: who is blocked, on whom, for which request.
    pub fn edges(&self) -> impl Iterator<Item = (AgentId, AgentId, RequestId)> + '_ {
        self.waits.iter().map(|(&from, &(to, request))| (from, to, request))
    }

    /// The request `agent` is blocked on, if it is blocked.
    pub fn waiting_on(&self, agent: AgentId) -> Option<RequestId> {
        self.waits.get(&agent).map(|(_, r)| *r)
    }

    /// The deadlocks standing now, in the order they formed.
    pub fn cycles(&self) -> &[Cycle] {
        &self.cycles
    }

    /// Follows the chain of waits from `start`; a cycle exists if it comes
    /// back to `start` (it cannot close elsewhere: every other agent on the
    /// chain had its one edge before, and any cycle among them was found then).
    fn cycle_through(&self, start: AgentId) -> Option<Cycle> {
        let mut members = vec![start];
        let mut requests = Vec::new();
        let mut at = start;
        // At most one step per blocked agent: the chain cannot be longer.
        for _ in 0..=self.waits.len() {
            let (next, request) = *self.waits.get(&at)?;
            requests.push(request);
            if next == start {
                return Some(Cycle { members, requests });
            }
            if members.contains(&next) {
                return None;
            }
            members.push(next);
            at = next;
        }
        None
    }
}

impl WaitFor {
    /// Hashes who waits on whom, for the explorer's fingerprint.
    pub fn canon(&self, c: &mut super::Canon) {
        let WaitFor { waits, cycles } = self;
        let mut edges: Vec<(u32, u32, RequestId)> =
            waits.iter().map(|(a, (b, r))| (c.agent_index(*a), c.agent_index(*b), *r)).collect();
        edges.sort_unstable_by_key(|e| (e.0, e.1));
        for (a, b, r) in edges {
            c.word(a as u64 | (b as u64) << 32);
            c.id(r);
        }
        c.word(cycles.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> RequestId {
        RequestId::from_random_bytes([n; 16])
    }

    const ALICE: AgentId = AgentId(1);
    const BOB: AgentId = AgentId(2);
    const CAROL: AgentId = AgentId(3);

    #[test]
    fn two_agents_waiting_on_each_other_close_a_cycle() {
        let mut g = WaitFor::new();
        assert_eq!(g.wait(ALICE, BOB, id(1)), None);
        let c = g.wait(BOB, ALICE, id(2)).expect("a cycle");
        assert_eq!(c.members, vec![BOB, ALICE]);
        assert_eq!(c.requests, vec![id(2), id(1)]);
        assert_eq!(g.cycles().len(), 1);
    }

    #[test]
    fn a_three_way_cycle_is_named_in_waiting_order() {
        let mut g = WaitFor::new();
        assert_eq!(g.wait(ALICE, BOB, id(1)), None);
        assert_eq!(g.wait(BOB, CAROL, id(2)), None);
        let c = g.wait(CAROL, ALICE, id(3)).expect("a cycle");
        assert_eq!(c.members, vec![CAROL, ALICE, BOB]);
        assert_eq!(c.requests, vec![id(3), id(1), id(2)]);
    }

    #[test]
    fn a_chain_that_ends_at_an_agent_not_waiting_is_no_deadlock() {
        let mut g = WaitFor::new();
        assert_eq!(g.wait(ALICE, BOB, id(1)), None);
        assert_eq!(g.wait(BOB, AgentId::LEAD, id(2)), None);
        assert_eq!(g.wait(CAROL, ALICE, id(3)), None);
        assert!(g.cycles().is_empty());
    }

    #[test]
    fn an_answer_or_expiry_breaks_the_cycle_it_was_part_of() {
        let mut g = WaitFor::new();
        g.wait(ALICE, BOB, id(1));
        g.wait(BOB, ALICE, id(2));
        assert!(g.release(id(9)).is_empty(), "a request outside the cycle breaks nothing");
        let broken = g.release(id(1));
        assert_eq!(broken.len(), 1);
        assert!(g.cycles().is_empty());
        // Bob still waits on alice, but alone that is no cycle.
        assert_eq!(g.release(id(2)), vec![]);
    }

    #[test]
    fn an_agent_gone_for_good_breaks_its_cycle() {
        let mut g = WaitFor::new();
        g.wait(ALICE, BOB, id(1));
        g.wait(BOB, ALICE, id(2));
        assert_eq!(g.forget(BOB).len(), 1);
        assert!(g.forget(CAROL).is_empty());
    }

    #[test]
    fn waiting_again_after_a_cycle_broke_can_close_a_new_one() {
        let mut g = WaitFor::new();
        g.wait(ALICE, BOB, id(1));
        g.wait(BOB, ALICE, id(2));
        g.release(id(1));
        let c = g.wait(ALICE, BOB, id(3)).expect("a new cycle");
        assert_eq!(c.requests, vec![id(3), id(2)]);
    }
}
