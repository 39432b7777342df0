//! single-terminal: each request ends in exactly one terminal state, or is
//! still pending only because the run ended before its deadline.
//!
//! Observes each stall (a stalled requester's timers are frozen with it);
//! the requests and lives it reads are the [`Book`]'s. Checks at the end
//! that no request a live requester should have settled is still pending.

use super::{At, Book, End, Invariant, Life, Violation};
use crate::protocol::{AgentId, Canon, Millis, RequestId, Status};
use crate::trace::{Event, RosterStatus};
use crate::world::Stop;

/// What it keeps: when each stalled agent's latest stall ends.
#[derive(Clone, Debug, Default)]
pub(super) struct SingleTerminal {
    /// Sorted by agent, and only agents that stalled (rarely any).
    stalled_until: Vec<(AgentId, Millis)>,
}

impl SingleTerminal {
    pub(super) fn observe(&mut self, _book: &Book, _at: &At, e: &Event, _out: &mut Vec<Violation>) {
        if let Event::Stall { agent, until } = e {
            match self.stalled_until.binary_search_by_key(agent, |(a, _)| *a) {
                Ok(k) => self.stalled_until[k].1 = *until,
                Err(k) => self.stalled_until.insert(k, (*agent, *until)),
            }
        }
    }

    fn stalled_until(&self, agent: AgentId) -> Millis {
        self.stalled_until.binary_search_by_key(&agent, |(a, _)| *a).map_or(Millis::ZERO, |k| self.stalled_until[k].1)
    }

    pub(super) fn finish(&self, book: &Book, end: &End, out: &mut Vec<Violation>) {
        let (names, ended_at) = (end.names, end.ended_at);
        for (id, r) in &book.requests {
            // With timeouts off a request has no deadline: the run always ends
            // before it, so pending is where it is meant to be.
            if r.status != Status::Pending || r.deadline.is_never() {
                continue;
            }
            // A crashed or killed requester takes its timer with it: its pending
            // requests are abandoned, not forgotten by the protocol.
            if matches!(book.agent(r.requester).life, Life::Crashed { .. } | Life::Final(RosterStatus::Killed)) {
                continue;
            }
            // Made by a process since respawned, and the new one stopped
            // before its deadline: abandoned the same way.
            if book.abandoned(r) && book.agent(r.requester).life != Life::Alive {
                continue;
            }
            // A stalled requester's timers are frozen with it: its request is
            // pending because it is stalled, which breaks nothing.
            if self.stalled_until(r.requester) > ended_at {
                continue;
            }
            // A live requester always has a timer on its earliest deadline, so a
            // run that settled with a request pending lost a timer; a run stopped
            // early may leave one pending only if its deadline is still to come.
            // A schedule ends in the middle of its last instant: a deadline
            // at that instant is still to come (its expiry is queued behind
            // the schedule's last choice).
            let detail = if end.stop == Stop::Settled {
                format!(
                    "[{}] is still pending when nothing is left to happen (deadline {})",
                    super::label(names, RequestId(uuid::Uuid::from_u128(*id))),
                    r.deadline
                )
            } else if r.deadline < ended_at || (r.deadline == ended_at && end.stop != Stop::ScheduleEnd) {
                format!(
                    "[{}] is still pending at {ended_at}, past its deadline {}",
                    super::label(names, RequestId(uuid::Uuid::from_u128(*id))),
                    r.deadline
                )
            } else {
                continue;
            };
            out.push(Violation { invariant: Invariant::SingleTerminal, at: ended_at, event: None, detail });
        }
    }

    /// Hashes when `agent`'s stall ends, in the walk over agents.
    pub(super) fn canon_agent(&self, agent: AgentId, c: &mut Canon) {
        c.millis(self.stalled_until(agent));
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::{Kind, Millis, Policy};
    use crate::trace::Event;
    use crate::world::Stop;

    #[test]
    fn a_request_pending_behind_a_stall_that_outlasts_the_run_is_no_violation() {
        let mut o = outcome(vec![
            (0, opened(1, Kind::Plan, ALICE, LEAD)),
            (1_000, Event::Stall { agent: ALICE, until: Millis(600_000) }),
        ]);
        o.stop = Stop::EndTime;
        o.ended_at = Millis(300_000);
        assert!(check(&o, &Policy::default(), &[false, true]).is_empty());
        // The same request with no stall is pending past its deadline: a lost timer.
        let mut o = outcome(vec![(0, opened(1, Kind::Plan, ALICE, LEAD))]);
        o.stop = Stop::EndTime;
        o.ended_at = Millis(300_000);
        let v = check(&o, &Policy::default(), &[false, true]);
        assert_eq!(v.into_iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::SingleTerminal]);
    }
}
