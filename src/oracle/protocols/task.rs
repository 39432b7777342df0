//! Two invariants of task assignment, which share what they keep: the task
//! each offer made, and who holds which.
//!
//! - single-holder: a task is held by one teammate at a time. A teammate
//!   holds a task from the moment the lead applies its acceptance until it
//!   has written the task's file, or stops, is killed, crashes for good or
//!   is respawned. The lead offers a task again only once the last offer
//!   expired, so two holders need an expired offer accepted after all (the
//!   pending check off).
//! - work-in-assignment: a teammate takes up a task only while the offer
//!   stands: it never accepts one past the offer's deadline, when the lead
//!   has let it go (reassigned it, or dropped it). The deadline check keeps
//!   a late offer from being taken up.
//!
//! Neither sees an acceptance lost on its way: the offer expires, the task
//! goes to the next teammate, and the one whose acceptance was lost does
//! the task too. A timeout cannot tell a slow answer from a lost one; what
//! the lead knows stays consistent (one holder), and the task is done at
//! least once (docs/oracle.md says so).
//!
//! A task is one offer and the offers its expiries passed it on to: the
//! lead's reassignment opens the next offer in the same turn, as the very
//! next thing it does after recording the expiry (an expiry that finds
//! nobody idle records a note instead). Two offers a script makes are two
//! tasks, even in the same words and at the same instant (a lead may hand
//! out two copies of a job). The words of each offer are read from the
//! request's send (the request table keeps no words).

use super::{At, Book, Violation, Witness};
use crate::oracle::Invariant;
use crate::protocol::{AgentId, Canon, Kind, MessageType, RequestId, Status, Text, Verdict};
use crate::trace::{Event, RosterStatus};
use std::collections::BTreeMap;

/// The task spec's own invariants, in the order it lists them.
const SINGLE_HOLDER: Invariant = Invariant::Own { kind: Kind::Task, index: 0 };
const WORK_IN_ASSIGNMENT: Invariant = Invariant::Own { kind: Kind::Task, index: 1 };

#[derive(Clone, Debug, Default)]
pub(super) struct TaskHolders {
    /// Each offer's task: the first offer of it, and its words. By id (a
    /// map: a sorted list moved the rest at each of a big run's offers).
    offered: std::collections::BTreeMap<RequestId, Offer>,
    /// Who holds what, by holder (a run may have tens of thousands of holders at once:
    /// a list was searched whole at each acceptance and each file written).
    holds: BTreeMap<AgentId, Vec<Hold>>,
    /// The holders of each task, by its first offer: `holds` the other
    /// way round (derived, not hashed), for the single-holder check.
    holders: BTreeMap<RequestId, smallvec::SmallVec<[AgentId; 1]>>,
    /// An offer that expired with the default reassign, as the last event:
    /// an offer the lead opens as the next event passes its task on.
    passing_on: Option<RequestId>,
    /// Offers opened to pass a task on, and the offer whose task they
    /// carry, until their send (which has the words) is seen.
    passed: Vec<(RequestId, RequestId)>,
    /// Offers their target accepted, each once: an assignment, whose work is
    /// done once. `written` is set when its file is complete.
    /// By agent, each agent's in the order taken.
    taken: BTreeMap<AgentId, Vec<Taken>>,
}

#[derive(Clone, Debug)]
struct Taken {
    agent: AgentId,
    id: RequestId,
    task: Text,
    written: bool,
}

#[derive(Clone, Debug)]
struct Offer {
    first: RequestId,
    words: Text,
}

#[derive(Clone, Debug)]
struct Hold {
    agent: AgentId,
    /// The task's first offer, and its words.
    first: RequestId,
    task: Text,
    /// The offer it accepted.
    id: RequestId,
}

impl Witness for TaskHolders {
    fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        // Only the event right after the expiry passes its task on.
        let expired = self.passing_on.take();
        match e {
            Event::Opened { id, kind: Kind::Task, requester, .. } if requester.is_lead() => {
                if let Some(old) = expired {
                    self.passed.push((*id, old));
                }
            }
            Event::Send {
                message_type: MessageType::Request(Kind::Task),
                request_id: Some(id),
                words: Some(task),
                ..
            } if !at.replayed => {
                let old = self.passed.iter().position(|(new, _)| new == id).map(|k| self.passed.remove(k).1);
                let first = old.and_then(|old| self.offer(old)).map_or(*id, |o| o.first);
                self.offered.entry(*id).or_insert_with(|| Offer { first, words: task.clone() });
            }
            Event::Expired { id, kind: Kind::Task, default } if default.effect == crate::protocol::Effect::AskNext => {
                self.passing_on = Some(*id);
            }
            Event::Send {
                from,
                message_type: MessageType::Response(Kind::Task),
                request_id: Some(id),
                approve: Some(true),
                ..
            } if !at.replayed => self.takes_up(*from, *id, book, at, out),
            Event::Act { agent, action: crate::protocol::Action::Write, path: Some(path), blocked: None } => {
                self.starts_writing(*agent, path, at, out)
            }
            Event::Verdict {
                request_id,
                verdict: Verdict::Applied { kind: Kind::Task, to: Status::Approved, .. },
                ..
            } => self.accepted(*request_id, book, at, out),
            Event::FileStep { agent, path, done, total } if done >= total => {
                self.release(*agent, |h| *h.task == **path);
                let mine = self.taken.get_mut(agent).into_iter().flatten();
                if let Some(t) = mine.into_iter().find(|t| !t.written && *t.task == **path) {
                    t.written = true;
                }
            }
            Event::Status { agent, status: RosterStatus::Shutdown | RosterStatus::Killed }
            | Event::Respawn { agent } => {
                self.release(*agent, |_| true);
            }
            Event::Crash { agent, restart_at: None } => self.release(*agent, |_| true),
            _ => {}
        }
    }

    /// Hashes who holds what and the offers' tasks (see `Watch::canon`).
    fn canon(&self, c: &mut Canon) {
        c.word(self.offered.len() as u64);
        for (id, offer) in &self.offered {
            c.id(*id);
            c.id(offer.first);
            c.text(&offer.words);
        }
        match self.passing_on {
            Some(id) => c.id(id),
            None => c.word(u64::MAX),
        }
        c.word(self.passed.len() as u64);
        for (new, old) in &self.passed {
            c.id(*new);
            c.id(*old);
        }
        c.word(self.holds.values().map(Vec::len).sum::<usize>() as u64);
        for h in self.holds.values().flatten() {
            c.agent(h.agent);
            c.id(h.first);
            c.id(h.id);
            c.text(&h.task);
        }
        c.word(self.taken.values().map(Vec::len).sum::<usize>() as u64);
        for t in self.taken.values().flatten() {
            c.agent(t.agent);
            c.id(t.id);
            c.text(&t.task);
            c.word(t.written as u64);
        }
    }

    fn is_idle(&self) -> bool {
        self.offered.is_empty()
            && self.holds.is_empty()
            && self.passing_on.is_none()
            && self.passed.is_empty()
            && self.taken.is_empty()
    }

    fn boxed(&self) -> Box<dyn Witness> {
        Box::new(self.clone())
    }
}

impl TaskHolders {
    /// `agent` no longer holds the tasks `which` picks.
    fn release(&mut self, agent: AgentId, which: impl Fn(&Hold) -> bool) {
        let Some(mine) = self.holds.get_mut(&agent) else { return };
        for h in mine.iter().filter(|h| which(h)) {
            if let Some(who) = self.holders.get_mut(&h.first) {
                who.retain(|a| *a != agent);
                if who.is_empty() {
                    self.holders.remove(&h.first);
                }
            }
        }
        mine.retain(|h| !which(h));
        if mine.is_empty() {
            self.holds.remove(&agent);
        }
    }

    fn offer(&self, id: RequestId) -> Option<Offer> {
        self.offered.get(&id).cloned()
    }

    /// The lead applied an acceptance of offer `id`: its target holds the
    /// task from now.
    fn accepted(&mut self, id: RequestId, book: &Book, at: &At, out: &mut Vec<Violation>) {
        let (Some(r), Some(offer)) = (book.request(id), self.offer(id)) else { return };
        let (holder, task) = (r.target, offer.words);
        let others = self.holders.get(&offer.first).into_iter().flatten().filter(|a| **a != holder);
        let held = |a: &AgentId| self.holds.get(a).into_iter().flatten().find(|h| h.first == offer.first);
        if let Some(other) = others.filter_map(held).next() {
            let detail = format!(
                "{} holds \"{task}\" ([{}]) while {} still holds it ([{}]): two teammates do one task",
                at.who(holder),
                at.label(id),
                at.who(other.agent),
                at.label(other.id)
            );
            out.push(at.violation(SINGLE_HOLDER, detail));
        }
        let mine = self.holds.entry(holder).or_default();
        if !mine.iter().any(|h| h.id == id) {
            mine.push(Hold { agent: holder, first: offer.first, task, id });
            self.holders.entry(offer.first).or_default().push(holder);
        }
    }

    /// `from` accepts offer `id` and starts on it: the offer must stand.
    fn takes_up(&mut self, from: AgentId, id: RequestId, book: &Book, at: &At, out: &mut Vec<Violation>) {
        // Only the one offered the task takes it up (an acceptance sent by
        // anyone else is matching-response's to judge at the lead).
        let Some(r) = book.request(id).filter(|r| r.target == from) else { return };
        let Some(task) = self.offer(id).map(|o| o.words) else { return };
        if r.status == Status::Expired || at.t >= r.deadline {
            // Said as it stands: an offer answered before its deadline did
            // not expire, though taking it up past that deadline is still
            // work no standing offer asks for (a review read "expired" of
            // an offer approved long before).
            let why = match r.status {
                Status::Expired => {
                    format!("after the offer expired at {}: the lead has let that assignment go", r.deadline)
                }
                Status::Pending => {
                    format!("past the offer's deadline, {}: the lead lets that assignment go", r.deadline)
                }
                settled => format!(
                    "past the offer's deadline, {}, the offer already {}: no offer stands for it now",
                    r.deadline,
                    settled.as_str()
                ),
            };
            let detail = format!("{} takes up \"{task}\" ([{}]) {why}", at.who(from), at.label(id));
            out.push(at.violation(WORK_IN_ASSIGNMENT, detail));
        }
        // Only an offer's target takes it up: its entries are `from`'s.
        let mine = self.taken.entry(from).or_default();
        if !mine.iter().any(|t| t.id == id) {
            mine.push(Taken { agent: from, id, task, written: false });
        }
    }

    /// `agent` starts writing `path`: if that is a task it was assigned,
    /// an assignment whose file is not yet written must be there to start.
    /// An assignment is done once: its work taken up again after its file
    /// was complete (a copy of the offer answered as a new one) is work no
    /// assignment asked for. A crash's redo is of an unfinished file, so it
    /// is the same assignment's work. (A teammate whose own list writes the
    /// file of a task it finished would read as doing that task again: a
    /// scenario that means it should name another file.)
    fn starts_writing(&mut self, agent: AgentId, path: &str, at: &At, out: &mut Vec<Violation>) {
        let mine = |t: &&Taken| *t.task == *path;
        let Some(taken) = self.taken.get(&agent) else { return };
        if taken.iter().filter(mine).any(|t| !t.written) {
            return;
        }
        if let Some(done) = taken.iter().rfind(mine) {
            let detail = format!(
                "{} writes \"{path}\" again after finishing it for [{}]: the work of one assignment done twice",
                at.who(agent),
                at.label(done.id)
            );
            out.push(at.violation(WORK_IN_ASSIGNMENT, detail));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SINGLE_HOLDER, WORK_IN_ASSIGNMENT};
    use crate::oracle::fixture::*;
    use crate::oracle::Invariant;
    use crate::protocol::kinds;
    use crate::protocol::{Address, AgentId, Kind, MessageType, Millis, Policy, Status};
    use crate::trace::Event;

    const BOB: AgentId = AgentId(2);

    /// Offer `n` of the task to `to` at `t`, due a minute later.
    fn offer_at(n: u8, to: AgentId, seq: u64, t: u64) -> Vec<(u64, Event)> {
        let label = crate::protocol::Label::Auto { teammate: to, kind: Kind::Task, n: n as u32 };
        let opened = Event::Opened {
            id: id(n),
            label,
            kind: Kind::Task,
            requester: LEAD,
            target: to,
            deadline: Millis(t + 60_000),
        };
        let send = Event::Send {
            seq,
            from: LEAD,
            to: Address::Agent(to),
            message_type: MessageType::Request(Kind::Task),
            request_id: Some(id(n)),
            approve: None,
            words: Some("docs/intro.md".into()),
        };
        vec![(t, opened), (t, send)]
    }

    fn offer(n: u8, to: AgentId, seq: u64) -> Vec<(u64, Event)> {
        offer_at(n, to, seq, 0)
    }

    fn accept(n: u8, from: AgentId, seq: u64, t: u64) -> (u64, Event) {
        let e = Event::Send {
            seq,
            from,
            to: Address::Agent(LEAD),
            message_type: MessageType::Response(Kind::Task),
            request_id: Some(id(n)),
            approve: Some(true),
            words: None,
        };
        (t, e)
    }

    fn step(agent: AgentId, done: u32, t: u64) -> (u64, Event) {
        (t, Event::FileStep { agent, path: "docs/intro.md".into(), done, total: 2 })
    }

    fn judged(log: Vec<(u64, Event)>) -> Vec<(Invariant, String)> {
        let mut o = outcome(log);
        o.names.agents = vec!["lead".into(), "alice".into(), "bob".into()];
        o.roster = vec![crate::trace::RosterStatus::Working; 3];
        check(&o, &Policy::default(), &[false, false, false]).into_iter().map(|v| (v.invariant, v.detail)).collect()
    }

    fn task_invariants(v: &[(Invariant, String)]) -> Vec<Invariant> {
        v.iter().map(|(i, _)| *i).filter(|i| [SINGLE_HOLDER, WORK_IN_ASSIGNMENT].contains(i)).collect()
    }

    fn expired(n: u8, t: u64) -> (u64, Event) {
        (t, Event::Expired { id: id(n), kind: Kind::Task, default: kinds::task::REASSIGN })
    }

    fn late_applied(n: u8, at: AgentId, sender: AgentId) -> Event {
        Event::Verdict {
            at,
            request_id: id(n),
            response_kind: Kind::Task,
            approve: true,
            sender,
            claimed_from: sender,
            verdict: crate::protocol::Verdict::Applied {
                kind: Kind::Task,
                from: Status::Expired,
                to: Status::Approved,
            },
        }
    }

    /// Alice's offer expires and goes to bob, who accepts and starts; alice
    /// then accepts hers after all, and the lead applies it (the pending
    /// check off).
    fn late_acceptance(alice_at: u64) -> Vec<(u64, Event)> {
        let mut log = offer(1, ALICE, 1);
        log.push(expired(1, 60_000));
        log.extend(offer_at(2, BOB, 2, 60_000));
        log.push(accept(2, BOB, 3, 60_001));
        log.push((60_002, applied(2, Kind::Task, LEAD, BOB, Status::Approved)));
        log.push(step(BOB, 1, 60_500));
        log.push(accept(1, ALICE, 4, alice_at));
        log.push((alice_at + 1, late_applied(1, LEAD, ALICE)));
        log
    }

    #[test]
    fn a_task_held_by_a_second_teammate_while_the_first_holds_it_breaks_single_holder() {
        let v = judged(late_acceptance(61_000));
        assert_eq!(task_invariants(&v), vec![WORK_IN_ASSIGNMENT, SINGLE_HOLDER], "{v:?}");
        let (_, detail) = v.iter().find(|(i, _)| *i == SINGLE_HOLDER).unwrap();
        assert!(
            detail.contains("alice holds \"docs/intro.md\"") && detail.contains("while bob still holds it"),
            "{detail}"
        );
        let (_, detail) = v.iter().find(|(i, _)| *i == WORK_IN_ASSIGNMENT).unwrap();
        assert!(
            detail.contains("alice takes up \"docs/intro.md\"") && detail.contains("after the offer expired"),
            "{detail}"
        );
    }

    #[test]
    fn a_task_finished_before_another_holds_it_has_one_holder_at_a_time() {
        let mut log = late_acceptance(61_000);
        // Bob finished first: one holder at a time (alice's taking up a
        // let-go offer is still work outside the assignment).
        log.insert(log.len() - 2, step(BOB, 2, 60_900));
        let v = judged(log);
        assert_eq!(task_invariants(&v), vec![WORK_IN_ASSIGNMENT], "{v:?}");
    }

    #[test]
    fn an_acceptance_in_time_keeps_the_assignment_and_a_forged_one_holds_nothing() {
        let mut log = offer(1, ALICE, 1);
        // Sent by bob: not alice taking the task up.
        log.push(accept(1, BOB, 2, 59_999));
        log.push(accept(1, ALICE, 3, 1_002));
        log.push((1_003, applied(1, Kind::Task, LEAD, ALICE, Status::Approved)));
        log.push(step(ALICE, 1, 1_500));
        let v = judged(log);
        assert_eq!(task_invariants(&v), vec![], "{v:?}");
    }

    #[test]
    fn an_offer_a_script_makes_at_the_instant_of_an_expiry_that_found_nobody_is_another_task() {
        // Alice's offer expires and finds nobody idle (a note says it is
        // dropped); a step at that same instant offers bob a task in the
        // same words. Bob's is a new task, not alice's passed on: her late
        // acceptance is work outside her assignment, but nobody holds her
        // task twice.
        let mut log = offer(1, ALICE, 1);
        log.push(expired(1, 60_000));
        log.push((60_000, Event::Note { text: "no idle teammate left to offer it to: it is dropped".into() }));
        log.extend(offer_at(2, BOB, 2, 60_000));
        log.push(accept(2, BOB, 3, 60_001));
        log.push((60_002, applied(2, Kind::Task, LEAD, BOB, Status::Approved)));
        log.push(accept(1, ALICE, 4, 61_000));
        log.push((61_001, late_applied(1, LEAD, ALICE)));
        let v = judged(log);
        assert_eq!(task_invariants(&v), vec![WORK_IN_ASSIGNMENT], "{v:?}");
    }

    #[test]
    fn two_offers_a_script_makes_in_the_same_words_are_two_tasks() {
        let mut log = offer(1, ALICE, 1);
        log.push(accept(1, ALICE, 2, 1));
        log.push((2, applied(1, Kind::Task, LEAD, ALICE, Status::Approved)));
        log.extend(offer_at(2, BOB, 3, 3));
        log.push(accept(2, BOB, 4, 4));
        log.push((5, applied(2, Kind::Task, LEAD, BOB, Status::Approved)));
        let v = judged(log);
        assert_eq!(task_invariants(&v), vec![], "{v:?}");
    }

    #[test]
    fn a_lost_acceptance_is_not_seen_the_task_is_done_twice() {
        // Alice's acceptance is lost; the offer expires and bob takes the
        // task while alice writes it: what the lead knows has one holder.
        let mut log = offer(1, ALICE, 1);
        log.push(accept(1, ALICE, 2, 1_001));
        log.push(step(ALICE, 1, 1_500));
        log.push(expired(1, 60_000));
        log.extend(offer_at(2, BOB, 3, 60_000));
        log.push(accept(2, BOB, 4, 60_001));
        log.push((60_002, applied(2, Kind::Task, LEAD, BOB, Status::Approved)));
        log.push(step(ALICE, 2, 60_500));
        let v = judged(log);
        assert_eq!(task_invariants(&v), vec![], "{v:?}");
    }

    #[test]
    fn a_task_written_again_after_its_file_was_complete_breaks_work_in_assignment() {
        // Issue 39, point 1: a copy of the offer taken up as a new one.
        let act = |t: u64| {
            let path = Some("docs/intro.md".into());
            (t, Event::Act { agent: ALICE, action: crate::protocol::Action::Write, path, blocked: None })
        };
        let mut log = offer(1, ALICE, 1);
        log.push(accept(1, ALICE, 2, 1_001));
        log.push(act(1_001));
        log.push(accept(1, ALICE, 3, 1_001));
        log.push((1_002, applied(1, Kind::Task, LEAD, ALICE, Status::Approved)));
        log.push(step(ALICE, 1, 1_501));
        // A crash's redo of the unfinished file is the same assignment's work.
        log.push(act(1_600));
        log.push(step(ALICE, 1, 2_100));
        log.push(step(ALICE, 2, 2_600));
        assert_eq!(task_invariants(&judged(log.clone())), vec![], "one assignment, written once");
        log.push(act(2_600));
        let v = judged(log);
        assert_eq!(task_invariants(&v), vec![WORK_IN_ASSIGNMENT], "{v:?}");
        let (_, detail) = v.iter().find(|(i, _)| *i == WORK_IN_ASSIGNMENT).unwrap();
        assert!(detail.contains("alice writes \"docs/intro.md\" again after finishing it"), "{detail}");
    }
}
