//! current-incarnation: an agent answers only the requests sent to its
//! current incarnation. One sent before its crash (or before it was
//! respawned: the production agent's leftover shutdown) was meant for a
//! process that is gone, and its asker settles it by the deadline, not by an answer
//! from the restart.
//!
//! Observes each request sent (with the incarnation it was meant for, as
//! derived from the crashes seen before the send, not as the router stamped
//! it), each delivered, each crash, and each response sent. Checks nothing
//! at the end: a stale request left unanswered breaks nothing.

use super::{At, Book, Invariant, Violation};
use crate::protocol::{Address, AgentId, Canon, MessageType, RequestId};
use crate::trace::Event;

/// What it keeps: the requests sent, and those delivered stale.
#[derive(Clone, Debug)]
pub(super) struct CurrentIncarnation {
    /// Every request sent, by seq (sorted): a copy may still arrive, late,
    /// duplicated or replayed, after its receiver crashed and restarted.
    requests_sent: Vec<SentTo>,
    /// Requests delivered to an incarnation later than the one they were
    /// sent to, and not since delivered to the current one: answering one of
    /// these breaks current-incarnation. Sorted by (agent, id).
    stale: Vec<(AgentId, RequestId)>,
}

/// A request sent to an agent, with the incarnation of the agent it was sent to.
#[derive(Clone, Copy, Debug)]
struct SentTo {
    seq: u64,
    id: RequestId,
    to: AgentId,
    incarnation: u32,
}

/// Room from the start for a short run's requests: a sweep plays thousands
/// of them, and each grew the list from nothing, a copy at each doubling.
impl Default for CurrentIncarnation {
    fn default() -> CurrentIncarnation {
        CurrentIncarnation { requests_sent: Vec::with_capacity(8), stale: Vec::new() }
    }
}

impl CurrentIncarnation {
    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        match e {
            Event::Send { seq, from, to: Address::Agent(to), message_type, request_id: Some(id), .. } => {
                if is_request(message_type) {
                    self.sent_request(book, *seq, *id, *to, at.replayed);
                } else if is_response(message_type) && !at.replayed {
                    self.answered(book, at, *from, *id, out);
                }
            }
            // What the old incarnation was handed died with its mailbox.
            Event::Crash { agent, .. } | Event::Respawn { agent } => self.stale.retain(|(who, _)| who != agent),
            Event::Deliver { seq, to, request_id: Some(id), message_type, .. } if is_request(message_type) => {
                self.delivered_request(book, *seq, *id, *to);
            }
            _ => {}
        }
    }

    /// Remembers which incarnation of `to` request `id` was sent to. A replay
    /// is the network handing over a copy of an earlier send, so it was meant
    /// for whom that send was: the latest send of the same request to `to`.
    fn sent_request(&mut self, book: &Book, seq: u64, id: RequestId, to: AgentId, replayed: bool) {
        let Some(agent) = book.agents.get(to.index()) else { return };
        let original = replayed
            .then(|| self.requests_sent.iter().rev().find(|s| s.id == id && s.to == to))
            .flatten()
            .map(|s| s.incarnation);
        let incarnation = original.unwrap_or(agent.incarnation);
        let sent = SentTo { seq, id, to, incarnation };
        match self.requests_sent.binary_search_by_key(&seq, |s| s.seq) {
            Ok(k) => self.requests_sent[k] = sent,
            Err(k) => self.requests_sent.insert(k, sent),
        }
    }

    /// A copy of request message `seq` reached `to`: stale if it was sent to
    /// an earlier incarnation, current otherwise (which makes answering the
    /// request legitimate again, whatever stale copy came before).
    fn delivered_request(&mut self, book: &Book, seq: u64, id: RequestId, to: AgentId) {
        let Some(agent) = book.agents.get(to.index()) else { return };
        let Ok(k) = self.requests_sent.binary_search_by_key(&seq, |s| s.seq) else { return };
        let stale = self.requests_sent[k].incarnation < agent.incarnation;
        let key = (to, id);
        match (self.stale.binary_search(&key), stale) {
            (Err(k), true) => self.stale.insert(k, key),
            (Ok(k), false) => {
                self.stale.remove(k);
            }
            _ => {}
        }
    }

    /// `from` sent a response quoting request `id`.
    fn answered(&mut self, book: &Book, at: &At, from: AgentId, id: RequestId, out: &mut Vec<Violation>) {
        let Ok(k) = self.stale.binary_search(&(from, id)) else { return };
        self.stale.remove(k);
        let incarnation = book.agent(from).incarnation;
        let detail = format!(
            "{} (incarnation {incarnation}) answered [{}], which was sent to an earlier incarnation: the process \
             it was meant for is gone, and its asker should settle it by the deadline",
            at.who(from),
            at.label(id)
        );
        out.push(at.violation(Invariant::CurrentIncarnation, detail));
    }

    /// Hashes which stale requests an answer would break current-incarnation
    /// on. Not `requests_sent`: the explorer's messages in flight carry the
    /// same incarnation stamps, and the sends that are no longer in flight
    /// are history.
    pub(super) fn canon(&self, c: &mut Canon) {
        let mut stale: Vec<(u32, u32)> = self.stale.iter().map(|(a, id)| (c.agent_index(*a), c.number(*id))).collect();
        stale.sort_unstable();
        c.word(stale.len() as u64);
        for (a, id) in stale {
            c.word(a as u64 | (id as u64) << 32);
        }
    }
}

fn is_request(message_type: &MessageType) -> bool {
    message_type.is_request()
}

fn is_response(message_type: &MessageType) -> bool {
    message_type.is_response()
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::{AgentId, Kind, Millis, Policy, Status};
    use crate::trace::{Event, RosterStatus};
    use crate::world::{Outcome, Stop};

    fn message(seq: u64, from: AgentId, to: AgentId, message_type: &'static str, sent: bool) -> Event {
        let (request_id, approve) = (Some(id(1)), (message_type == "shutdown_response").then_some(true));
        let message_type = crate::protocol::MessageType::parse(message_type).expect("a message type");
        if sent {
            let to = crate::protocol::Address::Agent(to);
            Event::Send { seq, from, to, message_type, request_id, approve, words: None }
        } else {
            Event::Deliver { seq, sender: from, claimed_from: from, to, message_type, request_id }
        }
    }

    /// The lead asks alice to shut down at `asked`; alice crashes at 2 s and
    /// restarts at 5 s; the request reaches her at 11 s and she approves it
    /// (or, without `answers`, says nothing and the request stays pending).
    fn respawn_log(asked: u64, answers: bool) -> Vec<(u64, Event)> {
        let mut log = vec![
            (asked, opened(1, Kind::Shutdown, LEAD, ALICE)),
            (asked, message(1, LEAD, ALICE, "shutdown_request", true)),
            (2_000, Event::Crash { agent: ALICE, restart_at: Some(Millis(5_000)) }),
            (2_000, status(ALICE, RosterStatus::Crashed)),
            (5_000, Event::Restart { agent: ALICE }),
            (5_000, status(ALICE, RosterStatus::Working)),
        ];
        log.sort_by_key(|(t, _)| *t);
        log.push((11_000, message(1, LEAD, ALICE, "shutdown_request", false)));
        if answers {
            log.push((11_000, message(2, ALICE, LEAD, "shutdown_response", true)));
            log.push((11_001, message(2, ALICE, LEAD, "shutdown_response", false)));
            log.push((11_001, applied(1, Kind::Shutdown, LEAD, ALICE, Status::Approved)));
        }
        log
    }

    #[test]
    fn answering_a_request_sent_before_the_crash_breaks_current_incarnation() {
        let v = violations(respawn_log(1_000, true), false);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::CurrentIncarnation], "{v:?}");
        assert_eq!((v[0].at, v[0].event), (Millis(11_000), Some(7)), "reported at the answer");
        assert!(v[0].detail.contains("alice (incarnation 1) answered"), "{}", v[0].detail);
    }

    #[test]
    fn a_request_sent_after_the_restart_may_be_answered() {
        assert_eq!(broken(respawn_log(6_000, true), false), vec![]);
    }

    #[test]
    fn a_stale_request_left_unanswered_breaks_nothing() {
        // Still pending at the end, before its deadline: the run stopped early.
        let o = Outcome { stop: Stop::EndTime, ..outcome(respawn_log(1_000, false)) };
        assert_eq!(check(&o, &Policy::default(), &[false, false]), vec![]);
    }

    #[test]
    fn a_fresh_copy_after_a_stale_one_makes_the_answer_legitimate() {
        // A forgery quoting the same id, sent after the restart, reaches alice
        // first: she may answer it, and the stale copy is answered by that.
        let mut log = respawn_log(1_000, true);
        let fresh = |sent| message(9, AGENT_ADVERSARY, ALICE, "shutdown_request", sent);
        log.insert(7, (11_000, fresh(true)));
        log.insert(8, (11_000, fresh(false)));
        assert_eq!(broken(log, false), vec![]);
    }

    #[test]
    fn the_state_hash_keeps_which_requests_are_stale() {
        let run = |asked| fed(&respawn_log(asked, false)).0;
        assert_ne!(hash_of(&run(1_000)), hash_of(&run(6_000)));
    }
}
