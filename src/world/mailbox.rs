//! Which mailbox world a run plays in, and the one place the world asks
//! it: where a message that arrives goes, who polls, what a settled run
//! still owes. Each world's rules are its own module's (`filebox`,
//! `teambox`); memory mode is the actors' mailboxes, with nothing here.

use super::{filebox, teambox, FileMailbox, Shell, World};
use crate::protocol::{AgentId, Delivery};
pub use teambox::TeamMailbox;

/// Where messages wait for their receiver (the scenario's `mailbox` key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MailboxWorld {
    /// The actors' mailboxes: a message is in its receiver's queue the
    /// moment it arrives.
    #[default]
    Memory,
    /// The reference course's JSON Lines files (`mailbox = "file"`).
    File(FileMailbox),
    /// Claude Code's JSON array inboxes (`mailbox = "claude-code"`).
    ClaudeCode(TeamMailbox),
}

impl MailboxWorld {
    /// Every world's name, as a file writes it.
    pub const NAMES: &'static [&'static str] = &["memory", "file", "claude-code"];

    pub fn name(&self) -> &'static str {
        match self {
            MailboxWorld::Memory => "memory",
            MailboxWorld::File(_) => "file",
            MailboxWorld::ClaudeCode(_) => "claude-code",
        }
    }

    pub fn is_memory(&self) -> bool {
        matches!(self, MailboxWorld::Memory)
    }

    /// File mode's settings, if this is file mode.
    pub fn file(&self) -> Option<&FileMailbox> {
        match self {
            MailboxWorld::File(m) => Some(m),
            _ => None,
        }
    }
}

/// A message arrives: `true` if an inbox world took it (it waits in a file).
#[inline]
pub fn took<S: Shell>(w: &mut World<S>, d: &Delivery) -> bool {
    if w.sim.inbox.is_some() && filebox::receives(w, d.to) {
        filebox::append(w, d.clone());
        return true;
    }
    if w.sim.team.is_some() {
        teambox::append(w, d.clone());
        return true;
    }
    false
}

/// `agent` (restarted, respawned) reads what its inbox kept at its next poll.
pub fn arm<S: Shell>(w: &mut World<S>, agent: AgentId) {
    filebox::arm(w, agent);
    teambox::arm(w, agent);
}

/// `agent`'s poll comes.
pub fn poll<S: Shell>(w: &mut World<S>, agent: AgentId) {
    if w.sim.team.is_some() {
        teambox::begin(w, agent);
    } else {
        filebox::begin(w, agent);
    }
}

/// The run is over: what the inboxes still hold is lost with its owners.
pub fn settle<S: Shell>(w: &mut World<S>) {
    filebox::settle(w);
    teambox::settle(w);
}

/// Whether an inbox world stopped the run at its bound.
pub fn full<S: Shell>(w: &World<S>) -> bool {
    w.sim.inbox.as_ref().is_some_and(|i| i.full) || w.sim.team.as_ref().is_some_and(|i| i.full)
}
