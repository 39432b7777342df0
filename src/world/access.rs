//! What a shell and the explorer may read of a world and do to it: the
//! world's fields are private to `world/`, so everything outside goes
//! through here, and a change to how the world keeps something is a change
//! to this file, not to every reader.

use super::queue::Queue;
use super::{Due, FileState, Shell, World};
use crate::agent::{Command, IdStreams, Roster};
use crate::protocol::{AgentId, Delivery, Millis, Policy};
use crate::trace::{RosterStatus, Stamped};
use std::collections::BTreeMap;

impl<S: Shell> World<S> {
    /// The shell's mailboxes and hooks.
    pub fn shell(&self) -> &S {
        &self.shell
    }

    pub fn shell_mut(&mut self) -> &mut S {
        &mut self.shell
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The team's names, the lead first, then the adversary's.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn roster(&self) -> &Roster {
        &self.sim.roster
    }

    /// Each agent's roster status, the lead first.
    pub fn statuses(&self) -> &[RosterStatus] {
        &self.sim.roster.statuses
    }

    /// Each agent's incarnation: bumped when it crashes or is killed.
    pub fn epochs(&self) -> &[u32] {
        &self.sim.epochs
    }

    /// Whether `agent` crashed and a restart is due.
    pub fn restart_due(&self, agent: AgentId) -> bool {
        self.sim.restarts_due.contains(&agent)
    }

    /// Whether `agent`'s due restart may come at any time (a crash the
    /// explorer chose), not at the time a file's crash set for it, which the
    /// queue holds and fires then (found by a review: the explorer restarted
    /// a file's crash at once, a schedule no run can take).
    pub fn restart_at_any_time(&self, agent: AgentId) -> bool {
        let epoch = self.sim.epochs[agent.index()];
        let timed = |d: &super::Due| matches!(d, super::Due::Fault(super::Scheduled::Restart { agent: a, epoch: e }) if *a == agent && *e == epoch);
        self.restart_due(agent) && !self.sim.queue.iter().any(timed)
    }

    /// What is due, and when.
    pub fn queue(&self) -> &Queue {
        &self.sim.queue
    }

    /// The next thing due at or before `now`, taken off the queue.
    pub fn pop_due(&mut self, now: Millis) -> Option<Due> {
        self.sim.queue.pop_due(now)
    }

    /// The simulated files, by path.
    pub fn files(&self) -> &BTreeMap<String, FileState> {
        &self.sim.files
    }

    /// The messages waiting for a shell to choose when each arrives; `None`
    /// where the network times its own deliveries.
    pub fn flight(&self) -> Option<&[Delivery]> {
        self.sim.flight.as_deref()
    }

    /// From now on messages wait in flight until a shell chooses when each
    /// arrives (the explorer, a run following a schedule): none is
    /// delivered straight to its mailbox.
    pub fn hold_in_flight(&mut self) {
        self.sim.flight = Some(Vec::new());
        self.run.direct_delivery = false;
    }

    /// How many messages the router has numbered: the next is one more.
    pub fn messages_numbered(&self) -> u64 {
        self.next_msg
    }

    /// Starts the network's stream over from `seed`.
    pub fn reseed_network(&mut self, seed: u64) {
        self.sim.net_rng = super::network::NetRng::new(seed);
    }

    /// The agents' request-id streams (the explorer lends them to each step).
    pub fn id_streams_mut(&mut self) -> &mut IdStreams {
        &mut self.ids
    }

    /// The log, if this run keeps one.
    pub fn log_mut(&mut self) -> &mut Option<Vec<Stamped>> {
        &mut self.trace
    }

    /// The command buffer actors borrow while they handle an input: empty
    /// between inputs (the explorer lends it room).
    pub fn commands_mut(&mut self) -> &mut Vec<Command> {
        &mut self.out
    }

    /// Inputs the agents have handled so far.
    pub fn inputs_handled(&self) -> u64 {
        self.handled
    }

    /// Whether a guard stopped the run.
    pub fn aborted(&self) -> bool {
        self.aborted
    }

    /// Whether the run keeps frames for a page (`run --html`).
    pub fn keeps_frames(&self) -> bool {
        self.frames.is_some()
    }

    /// File mode: whether an append would have taken the inbox files past
    /// their bound.
    pub fn inbox_full(&self) -> bool {
        super::mailbox::full(self)
    }

    /// Why a run the guard stopped was stopped: a bound it reached, or the
    /// abort guard (real time, Ctrl-C).
    pub fn stopped_as(&self) -> super::Stop {
        if self.inbox_full() {
            super::Stop::InboxBound
        } else if self.trace.as_ref().is_some_and(|t| t.len() >= super::MAX_LOGGED) {
            super::Stop::LogBound
        } else {
            super::Stop::Aborted
        }
    }

    /// File mode: why mirroring the files on disk failed, said with the run.
    pub fn set_mirror_error(&mut self, error: Option<String>) {
        if let Some(inbox) = &mut self.sim.inbox {
            inbox.mirror_error = error;
        }
    }
}
