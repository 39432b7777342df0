//! no-silent-loss: a message disappears only through an injected fault,
//! and the trace says so.
//!
//! Observes each message sent to an agent, delivered or dropped; a drop by
//! the reference inbox's drain (no fault injected) breaks it at once.
//! Checks at the end of a run that settled that every message sent was
//! delivered or dropped: with nothing left to happen, one neither was lost
//! silently.

use super::{At, Book, End, Invariant, Violation};
use crate::protocol::{Address, AgentId, Millis};
use crate::trace::{Cause, Event};
use crate::world::Stop;
use std::collections::BTreeMap;

/// What it keeps: the messages sent and not yet delivered or dropped.
#[derive(Clone, Debug, Default)]
pub(super) struct NoSilentLoss {
    /// By seq, the order it reports them in. A map, not a sorted list: a
    /// broadcast to 100,000 teammates puts 100,000 in flight, and taking
    /// each out of a list shifted the rest (quadratic: 3 such broadcasts
    /// took 7 s to judge after a 1 s run).
    unaccounted: BTreeMap<u64, Unaccounted>,
}

/// A message sent to an agent and neither delivered nor dropped yet. What
/// it needs to report it: its number, where it was sent, to whom.
#[derive(Clone, Copy, Debug)]
struct Unaccounted {
    seq: u64,
    event: usize,
    t: Millis,
    to: AgentId,
}

impl NoSilentLoss {
    pub(super) fn observe(&mut self, _book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        match e {
            Event::Send { seq, to: Address::Agent(to), .. } => {
                self.unaccounted.insert(*seq, Unaccounted { seq: *seq, event: at.i, t: at.t, to: *to });
            }
            Event::Dropped {
                seq,
                to,
                cause: cause @ (Cause::DrainLoss | Cause::LostUpdate | Cause::MarkedRead),
                ..
            } => {
                // Accounted for (the trace names the cause), but no fault was
                // injected: the inboxes' own rules destroyed it.
                self.unaccounted.remove(seq);
                let who = at.who(*to);
                let detail = match cause {
                    Cause::DrainLoss => format!(
                        "message #{seq} to {who} was appended between the read and the truncate of its inbox and \
                         destroyed unread (drain = \"truncate\"); no fault took it"
                    ),
                    Cause::LostUpdate => format!(
                        "message #{seq} to {who} was written to its inbox while the runtime read it, and the \
                         runtime's rewrite, without the lock, overwrote it (lock = \"off\"); no fault took it"
                    ),
                    _ => format!(
                        "message #{seq} to {who} was marked read by a read that never showed it, so {who} never \
                         saw it (mark_read = \"all\"); no fault took it"
                    ),
                };
                out.push(at.violation(Invariant::NoSilentLoss, detail));
            }
            Event::Deliver { seq, .. } | Event::Dropped { seq, .. } => {
                self.unaccounted.remove(seq);
            }
            _ => {}
        }
    }

    /// A run stopped early may still deliver what is in flight; one that
    /// settled never will.
    pub(super) fn finish(&self, end: &End, out: &mut Vec<Violation>) {
        if end.stop != Stop::Settled {
            return;
        }
        for u in self.unaccounted.values() {
            out.push(Violation {
                invariant: Invariant::NoSilentLoss,
                at: u.t,
                event: Some(u.event),
                detail: format!(
                    "message #{} to {} was never delivered and no fault took it",
                    u.seq,
                    end.names.agent(u.to)
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::Address;
    use crate::trace::{Cause, Event};
    use crate::world::{Outcome, Stop};

    fn note(seq: u64) -> Event {
        Event::Send {
            seq,
            from: LEAD,
            to: Address::Agent(ALICE),
            message_type: crate::protocol::MessageType::Message,
            request_id: None,
            approve: None,
            words: None,
        }
    }

    #[test]
    fn a_message_neither_delivered_nor_dropped_breaks_no_silent_loss_once_the_run_settles() {
        let dropped = Event::Dropped {
            seq: 1,
            to: ALICE,
            message_type: crate::protocol::MessageType::Message,
            cause: Cause::Drop,
        };
        assert_eq!(broken(vec![(0, note(1)), (5, dropped)], false), vec![], "a fault took it, and the trace says so");
        let v = violations(vec![(0, note(1))], false);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::NoSilentLoss]);
        assert!(v[0].detail.contains("message #1 to alice was never delivered"), "{}", v[0].detail);
        // Stopped by its end time, the run may yet deliver it.
        let o = Outcome { stop: Stop::EndTime, ..outcome(vec![(0, note(1))]) };
        assert_eq!(check(&o, &Default::default(), &[false, false]), vec![]);
    }

    #[test]
    fn a_message_the_drain_destroyed_breaks_no_silent_loss() {
        let lost = Event::Dropped {
            seq: 1,
            to: ALICE,
            message_type: crate::protocol::MessageType::Message,
            cause: Cause::DrainLoss,
        };
        assert_eq!(broken(vec![(0, note(1)), (5, lost)], false), vec![Invariant::NoSilentLoss]);
    }
}
