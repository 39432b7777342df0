//! no-silent-loss: a message disappears only through an injected fault,
//! and the trace says so.
//!
//! Observes each message sent to an agent, delivered or dropped; a drop by
//! the reference inbox's drain (no fault injected) breaks it at once.
//! Checks at the end of a run that settled that every message sent was
//! delivered or dropped: with nothing left to happen, one neither was lost
//! silently.

use super::{At, Book, End, Invariant, Life, Violation};
use crate::protocol::{Address, AgentId, Millis};
use crate::trace::{Cause, Event, RosterStatus};
use crate::world::Stop;
use std::collections::VecDeque;

/// What it keeps: the messages sent and not yet delivered or dropped.
#[derive(Clone, Debug, Default)]
pub(super) struct NoSilentLoss {
    /// By seq, the order it reports them in.
    unaccounted: InFlight,
}

/// Messages by seq: a list sorted by seq, since the world numbers its sends
/// in the order it logs them, so a send is nearly always a push at the back
/// and a lookup a binary search. A message taken out leaves its slot empty
/// rather than shifting the rest (a broadcast to 100,000 teammates puts
/// 100,000 in flight, and shifting made judging it quadratic); empty slots
/// go from the front at once, and from anywhere once they are the most.
#[derive(Clone, Debug)]
struct InFlight {
    slots: VecDeque<(u64, Option<Unaccounted>)>,
    /// The slots that hold a message.
    live: usize,
}

/// Room from the start for the messages a short run has in flight at
/// once: a sweep plays thousands of them, and each grew the list from
/// nothing, a copy at each doubling. (A watcher's copy holds what it holds.)
impl Default for InFlight {
    fn default() -> InFlight {
        InFlight { slots: VecDeque::with_capacity(16), live: 0 }
    }
}

impl InFlight {
    /// Keeps `u` under `seq`, in place of any message kept under it.
    fn insert(&mut self, seq: u64, u: Unaccounted) {
        if self.slots.back().is_none_or(|(last, _)| *last < seq) {
            self.slots.push_back((seq, Some(u)));
            self.live += 1;
            return;
        }
        match self.slots.binary_search_by_key(&seq, |(s, _)| *s) {
            Ok(k) => {
                self.live += usize::from(self.slots[k].1.is_none());
                self.slots[k].1 = Some(u);
            }
            Err(k) => {
                self.slots.insert(k, (seq, Some(u)));
                self.live += 1;
            }
        }
    }

    fn remove(&mut self, seq: u64) {
        let Ok(k) = self.slots.binary_search_by_key(&seq, |(s, _)| *s) else { return };
        if self.slots[k].1.take().is_none() {
            return;
        }
        self.live -= 1;
        while self.slots.front().is_some_and(|(_, u)| u.is_none()) {
            self.slots.pop_front();
        }
        if self.slots.len() > 2 * self.live + 16 {
            self.slots.retain(|(_, u)| u.is_some());
        }
    }

    /// The messages kept, by seq.
    fn values(&self) -> impl Iterator<Item = &Unaccounted> {
        self.slots.iter().filter_map(|(_, u)| u.as_ref())
    }
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
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
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
                self.unaccounted.remove(*seq);
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
            // A loss blamed on its receiver's crash or kill, which the log
            // never shows: the cause it names did not happen.
            Event::Dropped { seq, to, cause: cause @ (Cause::Crash | Cause::Killed), .. }
                if !book_shows(book, *to, *cause) =>
            {
                self.unaccounted.remove(*seq);
                let who = at.who(*to);
                let fault = if *cause == Cause::Crash { "crash" } else { "kill" };
                // Said without "fault": an audit judges real files, where
                // nothing is injected.
                let detail = format!(
                    "message #{seq} to {who} was lost to {who}'s {fault}, which the log never shows: nothing in the \
                     log accounts for it"
                );
                out.push(at.violation(Invariant::NoSilentLoss, detail));
            }
            Event::Deliver { seq, .. } | Event::Dropped { seq, .. } => {
                self.unaccounted.remove(*seq);
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
                    "message #{} to {} was never delivered, and nothing in the log accounts for it",
                    u.seq,
                    end.names.agent(u.to)
                ),
            });
        }
    }
}

/// Whether the log has shown the fault a loss to `to` blames: for a crash,
/// a crash (or a kill and a new process since, whose old mailbox a crash's
/// rule empties); for a kill, `to` killed.
fn book_shows(book: &Book, to: AgentId, cause: Cause) -> bool {
    let Some(life) = book.life(to) else { return false };
    match cause {
        Cause::Killed => life == Life::Final(RosterStatus::Killed),
        _ => book.agent(to).incarnation > 0,
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
    fn a_loss_blamed_on_a_crash_or_kill_the_log_never_shows_breaks_no_silent_loss() {
        let lost =
            |cause| Event::Dropped { seq: 1, to: ALICE, message_type: crate::protocol::MessageType::Message, cause };
        let crash = Event::Crash { agent: ALICE, restart_at: None };
        assert_eq!(broken(vec![(0, note(1)), (1, crash), (1, lost(Cause::Crash))], false), vec![]);
        let mut killed = vec![(0, note(1))];
        killed.extend(kill_owed(1, 2, ALICE));
        killed.push((1, lost(Cause::Killed)));
        assert_eq!(broken(killed, false), vec![]);
        for cause in [Cause::Crash, Cause::Killed] {
            let v = violations(vec![(0, note(1)), (1, lost(cause))], false);
            assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::NoSilentLoss], "{v:?}");
            assert!(v[0].detail.contains("which the log never shows"), "{}", v[0].detail);
        }
    }

    #[test]
    fn the_messages_in_flight_are_kept_as_a_map_by_seq_keeps_them() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut list, mut map) = (super::InFlight::default(), std::collections::BTreeMap::new());
        let mut next = 0u64;
        for i in 0..20_000usize {
            // Mostly new numbers at the back, some old ones again, many taken out.
            let seq = if rng.gen_bool(0.5) {
                next += 1 + rng.gen_range(0..3);
                next
            } else {
                rng.gen_range(0..=next + 2)
            };
            let u = super::Unaccounted { seq, event: i, t: crate::protocol::Millis(i as u64), to: ALICE };
            if rng.gen_bool(0.45) {
                list.insert(seq, u);
                map.insert(seq, u);
            } else {
                list.remove(seq);
                map.remove(&seq);
            }
            let got: Vec<(u64, usize)> = list.values().map(|u| (u.seq, u.event)).collect();
            let want: Vec<(u64, usize)> = map.values().map(|u| (u.seq, u.event)).collect();
            assert_eq!(got, want, "after step {i}");
            assert_eq!(list.live, map.len());
        }
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
