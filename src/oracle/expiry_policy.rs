//! expiry-policy: an expired request applies its policy's default, and the
//! default takes effect: a kill kills the target, a keep does not, a reject
//! leaves the author's gate shut. A teammate that shuts down on a request
//! that had already expired breaks it too: its lead no longer waits for
//! that answer, so the two disagree.
//!
//! Observes each expiry (the default it applied, then the events at the
//! same instant, which must carry its effect), each approval sent at or
//! after its request's deadline, and each shutdown. Checks at the end that
//! no kill a default required is still missing.

use super::{place, At, Book, End, Invariant, Violation};
use crate::protocol::{AgentId, Canon, Effect, GateState, Millis, RequestId, TimeoutDefault, YesMeans};
use crate::trace::{Event, Names, RosterStatus, Stamped};
use std::hash::Hash;

/// What it keeps: the obligations of the current instant, and who approved
/// a shutdown after its request had expired.
#[derive(Clone, Debug, Default)]
pub(super) struct ExpiryPolicy {
    /// All at the instant of the latest event.
    obligations: Vec<Obligation>,
    /// A shutdown each agent approved after its request had expired: sorted
    /// by agent, and only those that did (rarely any).
    obeyed_expired: Vec<(AgentId, RequestId)>,
    /// Whether an obligation was about the event being judged (the kill an
    /// expiry owed, say): set by `end_instant`, read by `observe` of the
    /// same event, so never state between two events.
    met: bool,
}

/// What an expiry's default requires of the events at its own instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Need {
    /// Default kill: the target must be killed.
    Killed,
    /// Default keep: the target must not be killed.
    NotKilled,
    /// Default kill, but the target was respawned since it was asked: the
    /// new process must not be killed.
    Spared,
    /// Default reject: the author's gate must not open.
    GateShut,
}

/// An expiry's default whose effect is judged by what else happens at the
/// same instant: the lookahead of a whole-log reading, turned into a promise
/// the watcher keeps until the instant is over.
#[derive(Clone, Copy, Debug)]
struct Obligation {
    need: Need,
    /// The default that set it, which the violation names.
    default: TimeoutDefault,
    /// The instant of the expiry.
    t: Millis,
    /// Index of the `Expired` event, which the violation names.
    event: usize,
    id: RequestId,
    /// The agent to be killed, not killed, or whose gate must stay shut.
    agent: AgentId,
}

impl Obligation {
    /// Whether `e` is the event the obligation is about: the kill, or the
    /// gate opening.
    fn meets(&self, e: &Event) -> bool {
        match self.need {
            Need::Killed | Need::NotKilled | Need::Spared => {
                matches!(e, Event::Status { agent, status: RosterStatus::Killed } if *agent == self.agent)
            }
            Need::GateShut => {
                matches!(e, Event::Gate { agent, state: GateState::Approved } if *agent == self.agent)
            }
        }
    }

    fn violation(&self, names: &Names) -> Violation {
        let (id, who, default) = (super::label(names, self.id), names.agent(self.agent), self.default.name);
        let detail = match self.need {
            Need::Killed => format!("[{id}] expired with default {default}, but {who} was not killed"),
            Need::NotKilled => format!("[{id}] expired with default {default}, yet {who} was killed"),
            Need::Spared => format!(
                "[{id}] expired with default {default} after {who} was respawned, yet the new {who} was killed: it \
                 was never asked"
            ),
            Need::GateShut => format!("[{id}] expired with default {default}, yet {who}'s gate opened"),
        };
        Violation { invariant: Invariant::ExpiryPolicy, at: self.t, event: Some(self.event), detail }
    }
}

impl ExpiryPolicy {
    /// Judges the obligations left open by the events before `e`, first
    /// of all. An event at the same instant discharges one (the kill came)
    /// or breaks it at once (a kill or an opened gate the default forbids);
    /// an event at another instant ends the instant, which breaks a kill
    /// that never came. A broken one is placed at its expiry (see [`place`]).
    pub(super) fn end_instant(&mut self, names: &Names, e: &Stamped, out: &mut Vec<Violation>) {
        self.met = false;
        if self.obligations.is_empty() {
            return;
        }
        let met = &mut self.met;
        self.obligations.retain(|o| {
            let (broken, open) = if o.t != e.t {
                (o.need == Need::Killed, false)
            } else if o.meets(&e.event) {
                *met = true;
                (o.need != Need::Killed, false)
            } else {
                (false, true)
            };
            if broken {
                place(out, o.violation(names));
            }
            open
        });
    }

    pub(super) fn observe(&mut self, book: &Book, at: &At, e: &Event, out: &mut Vec<Violation>) {
        match e {
            Event::Expired { id, kind, default } => {
                let Some(r) = book.request(*id) else { return };
                if at.t < r.deadline {
                    // The default is for a request nobody answered in time:
                    // applied before the deadline, it overrode an answer
                    // that could still come.
                    let detail = format!(
                        "[{}] expired at {}, before its deadline {}: the {} default was applied to a request \
                         still open to an answer",
                        at.label(*id),
                        at.t,
                        r.deadline,
                        default.as_str()
                    );
                    out.push(at.violation(Invariant::ExpiryPolicy, detail));
                }
                let wanted = at.policy.on_expiry(*kind);
                if *default != wanted {
                    let detail = format!(
                        "[{}] expired and applied {}, but the policy says {}",
                        at.label(*id),
                        default.as_str(),
                        wanted.as_str()
                    );
                    out.push(at.violation(Invariant::ExpiryPolicy, detail));
                    return;
                }
                // The default's effect must follow at the same instant: what
                // comes next at `t` says whether it did.
                let (need, agent) = match default.effect {
                    // Shut down or already killed: nothing left to kill. A
                    // crashed teammate must still be killed, or a restart
                    // would bring back what the policy stopped.
                    Effect::KillTarget if book.agent(r.target).life.is_final() => return,
                    // The one asked was respawned since: the new process
                    // under its name was never asked, and must not be killed.
                    Effect::KillTarget if book.superseded(r) => (Need::Spared, r.target),
                    Effect::KillTarget => (Need::Killed, r.target),
                    // Made by a process since respawned: the new one's gate
                    // follows its own plans, not this one.
                    Effect::Answer { yes: false } if book.abandoned(r) => return,
                    Effect::Answer { yes: false } => (Need::GateShut, r.requester),
                    Effect::KeepTarget => (Need::NotKilled, r.target),
                    // Whether an approved plan opens a gate depends on whether
                    // it is the gate's current plan; the gate checks that.
                    Effect::Answer { yes: true } => {
                        let requester = r.requester;
                        self.another_plan_approved(book, requester, *id);
                        return;
                    }
                    // Whom a request goes to next depends on who is idle then;
                    // the invariants of its protocol judge what follows.
                    Effect::AskNext | Effect::Nothing => return,
                };
                self.obligations.push(Obligation { need, default: *default, t: at.t, event: at.i, id: *id, agent });
            }
            // Another plan of the same author approved at this instant, by
            // the lead or by its own timeout default: a gate that opens now
            // opens on that plan, which gated-action judges, not on the one
            // that expired (issue 39: a plan expiring the instant a new one
            // is submitted and approved at once, with no latency).
            Event::Verdict {
                at: agent,
                request_id,
                verdict: crate::protocol::Verdict::Applied { to: crate::protocol::Status::Approved, .. },
                ..
            } => self.another_plan_approved(book, *agent, *request_id),
            // The runtime kills only as a shutdown's expiry default: a kill
            // no expiry at this instant owed (none met it) is one the policy
            // never ordered.
            Event::Status { agent, status: RosterStatus::Killed } if !self.met => {
                let detail = format!(
                    "{} was killed, but no request to it expired then with the kill default: only the shutdown \
                     policy's default kills",
                    at.who(*agent)
                );
                out.push(at.violation(Invariant::ExpiryPolicy, detail));
            }
            Event::Status { agent, status: RosterStatus::Shutdown } => {
                let Some(id) = self.obeyed(*agent) else { return };
                let Some(r) = book.request(id) else { return };
                let default = at.policy.on_expiry(r.kind).as_str();
                let detail = format!(
                    "{} shut down on [{}], which had expired at {} (default {default}): the lead no longer waits \
                     for that answer, so the two disagree",
                    at.who(*agent),
                    at.label(id),
                    r.deadline
                );
                out.push(at.violation(Invariant::ExpiryPolicy, detail));
            }
            // A yes that stops its teammate (a shutdown approved), sent at or
            // after the request's own deadline: the asker has applied its
            // default by then.
            Event::Send { from, message_type, request_id: Some(id), approve: Some(true), .. }
                if !at.replayed && message_type.yes_means() == YesMeans::Stop =>
            {
                let Some(r) = book.request(*id) else { return };
                if r.target == *from && at.t >= r.deadline && book.life(*from).is_some() {
                    match self.obeyed_expired.binary_search_by_key(from, |(a, _)| *a) {
                        Ok(k) => self.obeyed_expired[k].1 = *id,
                        Err(k) => self.obeyed_expired.insert(k, (*from, *id)),
                    }
                }
            }
            _ => {}
        }
    }

    /// `author`'s request `id` to the lead was approved: a gate opening now
    /// is that plan's, so an earlier plan's reject no longer speaks for it.
    fn another_plan_approved(&mut self, book: &Book, author: AgentId, id: RequestId) {
        let Some(r) = book.request(id) else { return };
        if r.requester != author || !r.target.is_lead() {
            return;
        }
        self.obligations.retain(|o| !(o.need == Need::GateShut && o.agent == author && o.id != id));
    }

    /// The run is over, so the instant of the latest expiry is too: a kill
    /// it required that has not come never will.
    pub(super) fn finish(&self, end: &End, out: &mut Vec<Violation>) {
        for o in self.obligations.iter().filter(|o| o.need == Need::Killed) {
            place(out, o.violation(end.names));
        }
    }

    fn obeyed(&self, agent: AgentId) -> Option<RequestId> {
        self.obeyed_expired.binary_search_by_key(&agent, |(a, _)| *a).ok().map(|k| self.obeyed_expired[k].1)
    }

    /// Hashes what it keeps of `agent`, in the walk over agents.
    pub(super) fn canon_agent(&self, agent: AgentId, c: &mut Canon) {
        match self.obeyed(agent) {
            Some(id) => c.id(id),
            None => c.word(u64::MAX),
        }
    }

    /// Hashes the open obligations.
    pub(super) fn canon(&self, c: &mut Canon) {
        c.word(self.obligations.len() as u64);
        for o in &self.obligations {
            o.need.hash(c);
            c.millis(o.t);
            c.id(o.id);
            c.agent(o.agent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use crate::oracle::{Invariant, Watch};
    use crate::protocol::kinds;
    use crate::protocol::{Kind, Millis, Policy, Status};
    use crate::trace::{Event, RosterStatus};
    use crate::world::Stop;

    #[test]
    fn shutting_down_on_an_expired_request_breaks_expiry_policy() {
        let approve = |t| {
            (
                t,
                Event::Send {
                    seq: 2,
                    from: ALICE,
                    to: crate::protocol::Address::Agent(LEAD),
                    message_type: crate::protocol::MessageType::Response(crate::protocol::Kind::Shutdown),
                    request_id: Some(id(1)),
                    approve: Some(true),
                    words: None,
                },
            )
        };
        let keep = Policy::default().expiring(Kind::Shutdown, kinds::shutdown::KEEP);
        let run = |answer_at: u64| {
            let mut log = vec![(0, opened(1, Kind::Shutdown, LEAD, ALICE))];
            if answer_at >= 60_000 {
                log.push((60_000, Event::Expired { id: id(1), kind: Kind::Shutdown, default: kinds::shutdown::KEEP }));
            }
            log.push(approve(answer_at));
            log.push((answer_at, status(ALICE, RosterStatus::Shutdown)));
            log.push((
                answer_at + 1,
                Event::Dropped {
                    seq: 2,
                    to: LEAD,
                    message_type: crate::protocol::MessageType::Response(crate::protocol::Kind::Shutdown),
                    cause: crate::trace::Cause::Drop,
                },
            ));
            if answer_at < 60_000 {
                log.push((60_000, Event::Expired { id: id(1), kind: Kind::Shutdown, default: kinds::shutdown::KEEP }));
            }
            check(&outcome(log), &keep, &[false, false]).into_iter().map(|v| v.invariant).collect::<Vec<_>>()
        };
        assert!(run(1_000).is_empty(), "an answer in time that is lost on the wire is no one's fault");
        assert_eq!(run(70_000), vec![Invariant::ExpiryPolicy]);
    }

    fn kill_default_expires() -> Event {
        Event::Expired { id: id(1), kind: Kind::Shutdown, default: kinds::shutdown::KILL }
    }

    #[test]
    fn a_kill_default_is_an_obligation_on_its_own_instant() {
        let opened = (0, opened(1, Kind::Shutdown, LEAD, ALICE));
        let note = |t| (t, Event::Note { text: "something else".into() });
        let expired = (60_000, kill_default_expires());
        let killed = (60_000, status(ALICE, RosterStatus::Killed));

        // The kill two events after the expiry, at the same instant: kept.
        let (w, pushed) = fed(&[opened.clone(), expired.clone(), note(60_000), killed, note(61_000)]);
        assert!(pushed.iter().all(Vec::is_empty), "{pushed:?}");
        let mut end = Vec::new();
        w.finish(&Policy::default(), &outcome(vec![]).names, Millis(61_000), Stop::Settled, &mut end);
        assert!(end.is_empty(), "{end:?}");

        // No kill: broken when an event at a later instant arrives, before it
        // is read, and reported at the expiry.
        let (_, pushed) = fed(&[opened.clone(), expired.clone(), note(60_000), note(61_000)]);
        assert!(pushed[..3].iter().all(Vec::is_empty), "{pushed:?}");
        assert_eq!(pushed[3].len(), 1, "{pushed:?}");
        let v = &pushed[3][0];
        assert_eq!((v.invariant, v.at, v.event), (Invariant::ExpiryPolicy, Millis(60_000), Some(1)));
        assert!(v.detail.contains("expired with default kill, but alice was not killed"), "{}", v.detail);

        // No kill and the run ends at that instant: broken at `finish`, the
        // same report.
        let (w, pushed) = fed(&[opened, expired, note(60_000)]);
        assert!(pushed.iter().all(Vec::is_empty), "{pushed:?}");
        let mut end = Vec::new();
        w.finish(&Policy::default(), &outcome(vec![]).names, Millis(60_000), Stop::EndTime, &mut end);
        assert_eq!(end.len(), 1, "{end:?}");
        assert_eq!(end[0], *v);
    }

    #[test]
    fn a_kill_no_expiry_owed_breaks_expiry_policy() {
        assert_eq!(broken(kill_owed(60_000, 1, ALICE), false), vec![]);
        // Killed after her shutdown was approved: nothing expired.
        let log = vec![
            (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
            (1_000, delivered(1, Kind::Shutdown, LEAD, ALICE)),
            (1_000, applied(1, Kind::Shutdown, LEAD, ALICE, Status::Approved)),
            (2_000, status(ALICE, RosterStatus::Killed)),
        ];
        let v = violations(log, false);
        assert_eq!(
            v.iter().map(|v| (v.invariant, v.event)).collect::<Vec<_>>(),
            vec![(Invariant::ExpiryPolicy, Some(3))]
        );
        assert!(v[0].detail.contains("alice was killed, but no request to it expired then"), "{}", v[0].detail);
    }

    #[test]
    fn a_request_that_expires_before_its_deadline_breaks_expiry_policy() {
        // Its deadline is 60 s; the kill its default owes follows the expiry.
        let log = |t| {
            vec![
                (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
                (t, kill_default_expires()),
                (t, status(ALICE, RosterStatus::Killed)),
            ]
        };
        assert_eq!(broken(log(60_000), false), vec![]);
        // Late is allowed: a stalled lead's timer fires when it wakes.
        assert_eq!(broken(log(90_000), false), vec![]);
        let v = violations(log(2_000), false);
        assert_eq!(
            v.iter().map(|v| (v.invariant, v.event)).collect::<Vec<_>>(),
            vec![(Invariant::ExpiryPolicy, Some(1))]
        );
        assert!(v[0].detail.contains("expired at 2s, before its deadline 1m:"), "{}", v[0].detail);
    }

    #[test]
    fn a_kill_default_spares_a_teammate_respawned_since_it_was_asked() {
        let log = |killed: bool| {
            let mut log = vec![
                (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
                (1_000, status(ALICE, RosterStatus::Shutdown)),
                (2_000, Event::Respawn { agent: ALICE }),
                (2_000, status(ALICE, RosterStatus::Working)),
                (60_000, kill_default_expires()),
            ];
            if killed {
                log.push((60_000, status(ALICE, RosterStatus::Killed)));
            }
            log
        };
        assert!(broken(log(false), false).is_empty(), "the one asked is gone; the new one was never asked");
        let v = violations(log(true), false);
        assert_eq!(v.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![Invariant::ExpiryPolicy], "{v:?}");
        assert!(v[0].detail.contains("after alice was respawned, yet the new alice was killed"), "{}", v[0].detail);
    }

    #[test]
    fn a_forbidden_kill_breaks_a_keep_default_at_once() {
        let keep = Policy::default().expiring(Kind::Shutdown, kinds::shutdown::KEEP);
        let o = outcome(vec![
            (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
            (60_000, Event::Expired { id: id(1), kind: Kind::Shutdown, default: kinds::shutdown::KEEP }),
            (60_000, status(ALICE, RosterStatus::Killed)),
        ]);
        let mut w = Watch::new(&[false, false]);
        let mut out = Vec::new();
        for (i, e) in o.events.iter().enumerate() {
            w.observe(&keep, &o.names, i, e, &mut out);
        }
        // Reported by the kill itself, not when the instant ends.
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].invariant, out[0].event), (Invariant::ExpiryPolicy, Some(1)));
        assert!(out[0].detail.contains("default keep, yet alice was killed"), "{}", out[0].detail);
        assert_eq!(check(&o, &keep, &[false, false]), out);
    }

    #[test]
    fn a_late_obligation_is_reported_at_its_expiry_among_the_others() {
        // A kill that never comes, and between the expiry and the end of its
        // instant a response for an id nobody issued: the expiry's report
        // comes first, in event order, as when the oracle looked ahead.
        let log = vec![
            (0, opened(1, Kind::Shutdown, LEAD, ALICE)),
            (60_000, kill_default_expires()),
            (60_000, delivered(9, Kind::Plan, ALICE, LEAD)),
            (60_000, applied(9, Kind::Plan, ALICE, LEAD, Status::Approved)),
            (61_000, Event::Note { text: "later".into() }),
        ];
        let v = violations(log, false);
        let found: Vec<(Invariant, Option<usize>)> = v.iter().map(|v| (v.invariant, v.event)).collect();
        assert_eq!(found, vec![(Invariant::ExpiryPolicy, Some(1)), (Invariant::MatchingResponse, Some(3))], "{v:?}");
    }

    #[test]
    fn a_gate_opened_by_a_new_plan_approved_at_the_instant_an_old_one_expired_is_the_new_plans() {
        // Issue 39, point 2: with no latency, plan 1 expires (default reject)
        // at the instant plan 2 goes out and is approved.
        let reject = Event::Expired { id: id(1), kind: Kind::Plan, default: kinds::plan::REJECT };
        let gate_opens = (5_000, Event::Gate { agent: ALICE, state: crate::protocol::GateState::Approved });
        let log = |approved_first: bool| {
            // Plan 1 was sent with a 5 s timeout: it is due at 5 s.
            let mut log = vec![(0, opened_due(1, Kind::Plan, ALICE, LEAD, 5_000)), (5_000, reject.clone())];
            log.push((5_000, opened(2, Kind::Plan, ALICE, LEAD)));
            let approved = [
                (5_000, delivered(2, Kind::Plan, ALICE, LEAD)),
                (5_000, applied(2, Kind::Plan, ALICE, LEAD, Status::Approved)),
            ];
            if approved_first {
                log.extend(approved);
                log.push(gate_opens.clone());
            } else {
                log.push(gate_opens.clone());
                log.extend(approved);
            }
            log
        };
        let broke = |approved_first| {
            violations(log(approved_first), true).into_iter().filter(|v| v.invariant == Invariant::ExpiryPolicy).count()
        };
        assert_eq!(broke(true), 0, "the gate opened on plan 2's approval");
        assert_eq!(broke(false), 1, "opened before any plan was approved: plan 1's reject broken");
    }
}
