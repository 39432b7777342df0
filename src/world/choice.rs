//! The world's choice points: where more than one thing could happen next
//! and a shell picks. The actix driver picks by time and queue order; the
//! explorer tries each; a run that follows a schedule takes the one it
//! names. What each choice does is written here, once, for all of them.

use super::faults::{self, FaultKind, Scheduled};
use super::{Due, Shell, World};
use crate::protocol::{AgentId, Message, Millis};
use crate::trace::{Cause, Event, RosterStatus};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// One thing that may happen next: the one type every shell chooses with.
/// `A` is how an agent is named (its id in the world; its name in a
/// schedule file) and `M` how a message in flight is (its number, `#N` in
/// the trace, in the world and in files; its place in flight in the
/// search, [`Place`]). A new kind of choice is one variant here: the
/// schedule file, the search and replay all take it from this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "choice", rename_all = "snake_case", deny_unknown_fields)]
pub enum Choice<A = AgentId, M = u64> {
    /// The message in flight arrives now (the first copy, if it was
    /// duplicated: the copies are alike).
    Deliver {
        #[serde(rename = "seq")]
        msg: M,
    },
    /// `owner`'s first event due at the earliest instant fires; the clock
    /// moves to it. Each owner takes its own events in the order they were
    /// queued (one mailbox, first in, first out); two owners' events due at
    /// the same millisecond may go either way.
    Fire { owner: A },
    /// The message in flight is lost.
    Drop {
        #[serde(rename = "seq")]
        msg: M,
    },
    /// The message in flight will arrive twice.
    Duplicate {
        #[serde(rename = "seq")]
        msg: M,
    },
    /// A running teammate crashes now; with `restart`, a restart may be
    /// chosen later, else the crash is final.
    Crash { agent: A, restart: bool },
    /// A crashed teammate whose restart is due comes back now.
    Restart { agent: A },
    /// The adversary sends `message` to `to`, claiming to be `from`.
    Inject { from: A, to: A, message: Message },
    /// The clock moves to `at`, no later than the next event due. The
    /// search never takes it (a delivery at an event's instant stands for
    /// every arrival until the next one); replaying a real run does.
    Wait {
        #[serde(rename = "at_ms")]
        at: Millis,
    },
}

/// The search's choices name a message by its place in flight, which is
/// what it iterates over.
pub type Place = usize;

impl<A, M> Choice<A, M> {
    /// The same choice with its agents named by `agent` and its message by
    /// `msg`: how the world, the search and a file turn one into another.
    pub fn map<B, N, E>(
        &self,
        mut agent: impl FnMut(&A) -> Result<B, E>,
        msg: impl FnOnce(&M) -> Result<N, E>,
    ) -> Result<Choice<B, N>, E> {
        Ok(match self {
            Choice::Deliver { msg: m } => Choice::Deliver { msg: msg(m)? },
            Choice::Fire { owner } => Choice::Fire { owner: agent(owner)? },
            Choice::Drop { msg: m } => Choice::Drop { msg: msg(m)? },
            Choice::Duplicate { msg: m } => Choice::Duplicate { msg: msg(m)? },
            Choice::Crash { agent: a, restart } => Choice::Crash { agent: agent(a)?, restart: *restart },
            Choice::Restart { agent: a } => Choice::Restart { agent: agent(a)? },
            Choice::Inject { from, to, message } => {
                Choice::Inject { from: agent(from)?, to: agent(to)?, message: message.clone() }
            }
            Choice::Wait { at } => Choice::Wait { at: *at },
        })
    }

    /// As [`Choice::map`], where naming cannot fail.
    pub fn named<B, N>(&self, agent: impl FnMut(&A) -> B, msg: impl FnOnce(&M) -> N) -> Choice<B, N> {
        let mut agent = agent;
        match self.map(|a| Ok::<B, std::convert::Infallible>(agent(a)), |m| Ok(msg(m))) {
            Ok(c) => c,
            Err(never) => match never {},
        }
    }

    /// The message it names, if it names one in flight.
    pub fn message(&self) -> Option<&M> {
        match self {
            Choice::Deliver { msg } | Choice::Drop { msg } | Choice::Duplicate { msg } => Some(msg),
            _ => None,
        }
    }
}

/// Whose mailbox (or whose part of the world) a due event belongs to: an
/// owner's events fire in the order they were queued.
pub fn owner(due: &Due) -> AgentId {
    match due {
        Due::Deliver(d) => d.to,
        Due::Wake { agent, .. } | Due::Input { agent, .. } | Due::ReadInbox { agent } => *agent,
        Due::InboxRead(read) => read.agent,
        Due::TeamRead(read) => read.agent,
        Due::Fault(f) => match f {
            Scheduled::Crash { agent, .. }
            | Scheduled::TornWrite { agent, .. }
            | Scheduled::JunkLine { agent, .. }
            | Scheduled::RepeatedDelivery { agent, .. }
            | Scheduled::DisplayCap { agent, .. }
            | Scheduled::PhantomSend { from: agent, .. }
            | Scheduled::MisroutedId { agent }
            | Scheduled::Restart { agent, .. }
            | Scheduled::Stall { agent, .. }
            | Scheduled::Unstall { agent, .. } => *agent,
            Scheduled::Forge { to, .. } | Scheduled::ReleaseReorder { to, .. } => *to,
            // The network's own: filed under the lead, who is always there.
            Scheduled::Cut { .. } | Scheduled::Heal { .. } | Scheduled::Replay { .. } => AgentId::LEAD,
        },
    }
}

impl<S: Shell> World<S> {
    /// The owners with an event due at the earliest instant, each once, in
    /// the order of their first such event: whose event `Fire` may take.
    pub fn due_now(&self) -> SmallVec<[AgentId; 8]> {
        let mut out = SmallVec::new();
        for (_, due) in self.sim.queue.earliest() {
            let o = owner(due);
            if !out.contains(&o) {
                out.push(o);
            }
        }
        out
    }

    /// `owner`'s first event due at the earliest instant: its time and its
    /// place in the queue's order.
    pub fn first_due_of(&self, who: AgentId) -> Option<(Millis, u64)> {
        let first = self.sim.queue.next_time()?;
        self.sim.queue.earliest().into_iter().find(|(_, d)| owner(d) == who).map(|(k, _)| (first, k))
    }

    /// `owner`'s first event due at the earliest instant, and when: what a
    /// `Fire` choice for it would fire.
    pub fn first_event_of(&self, who: AgentId) -> Option<(Millis, &Due)> {
        let first = self.sim.queue.next_time()?;
        self.sim.queue.earliest().into_iter().find(|(_, d)| owner(d) == who).map(|(_, d)| (first, d))
    }

    /// Where in flight the message numbered `seq` is.
    pub fn in_flight(&self, seq: u64) -> Option<usize> {
        self.sim.flight.as_ref()?.iter().position(|d| d.seq == seq)
    }

    /// Whether `c` can be taken now.
    pub fn can_choose(&self, c: &Choice) -> bool {
        match c {
            Choice::Deliver { msg } | Choice::Drop { msg } | Choice::Duplicate { msg } => {
                self.in_flight(*msg).is_some()
            }
            Choice::Fire { owner } => self.due_now().contains(owner),
            Choice::Crash { agent, .. } => {
                !agent.is_lead() && self.sim.roster.statuses.get(agent.index()).is_some_and(|s| s.is_active())
            }
            Choice::Restart { agent } => {
                self.sim.roster.statuses.get(agent.index()) == Some(&RosterStatus::Crashed)
                    && self.restart_at_any_time(*agent)
            }
            Choice::Inject { from, to, .. } => {
                let team = self.sim.roster.statuses.len();
                from != to && from.index() < team && to.index() < team
            }
            Choice::Wait { at } => *at >= self.now() && self.sim.queue.next_time().is_none_or(|t| *at <= t),
        }
    }

    /// Carries out `c`, which must be possible ([`World::can_choose`]).
    /// What it hands to agents waits in their mailboxes, for the shell.
    pub fn choose(&mut self, c: &Choice) {
        match c {
            Choice::Deliver { msg } => {
                if let Some(i) = self.in_flight(*msg) {
                    self.deliver_at(i);
                }
            }
            Choice::Fire { owner } => self.fire_first_of(*owner),
            Choice::Drop { msg } => {
                if let Some(i) = self.in_flight(*msg) {
                    self.drop_at(i);
                }
            }
            Choice::Duplicate { msg } => {
                if let Some(i) = self.in_flight(*msg) {
                    self.duplicate_at(i);
                }
            }
            Choice::Crash { agent, restart } => {
                // A restart may follow at any time: the log says one is due
                // from now, the earliest it could be.
                let now = self.now();
                self.crash(*agent, restart.then_some(now));
            }
            Choice::Restart { agent } => {
                // Chosen now, so for the incarnation the agent is in.
                let epoch = self.sim.epochs[agent.index()];
                faults::fire(self, Scheduled::Restart { agent: *agent, epoch })
            }
            Choice::Inject { from, to, message } => faults::fire(
                self,
                Scheduled::Forge { claimed_from: *from, to: *to, message: message.clone(), id_label: None },
            ),
            Choice::Wait { at } => {
                self.advance_to(*at);
            }
        }
    }

    /// The message at place `i` in flight arrives now.
    pub fn deliver_at(&mut self, i: usize) {
        let Some(flight) = &mut self.sim.flight else { return };
        let mut d = flight.remove(i);
        d.at = self.now();
        self.last_event = self.now();
        self.arrive(d);
    }

    /// The message at place `i` in flight is lost.
    pub fn drop_at(&mut self, i: usize) {
        let Some(flight) = &mut self.sim.flight else { return };
        let d = flight.remove(i);
        let message_type = d.envelope.message.message_type();
        self.record(Event::Dropped { seq: d.seq, to: d.to, message_type, cause: Cause::Drop });
    }

    /// The message at place `i` in flight will arrive twice.
    pub fn duplicate_at(&mut self, i: usize) {
        let Some(flight) = &mut self.sim.flight else { return };
        let d = flight[i].clone();
        let seq = d.seq;
        flight.insert(i, d);
        self.record(Event::Fault { seq, fault: FaultKind::Duplicate, detail: "delivered twice".into() });
    }

    /// `who`'s first event due at the earliest instant fires.
    pub fn fire_first_of(&mut self, who: AgentId) {
        let Some((_, k)) = self.first_due_of(who) else { return };
        if let Some((at, due)) = self.sim.queue.take(k) {
            self.advance_to(at);
            self.fire(due);
        }
    }
}
