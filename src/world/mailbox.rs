//! Which mailbox world a run plays in, and the one place the world asks
//! it: where a message that arrives goes, who polls, what a settled run
//! still owes. Each world's rules are its own module's (`filebox`,
//! `teambox`); memory mode is the actors' mailboxes, with nothing here.

use super::{filebox, teambox, FileMailbox, Shell, World};
use crate::protocol::{AgentId, Delivery, Millis};
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

    /// The world a file names `name`, with its default settings.
    pub fn named(name: &str) -> Option<MailboxWorld> {
        match name {
            "memory" => Some(MailboxWorld::Memory),
            "file" => Some(MailboxWorld::File(FileMailbox::default())),
            "claude-code" => Some(MailboxWorld::ClaudeCode(TeamMailbox::default())),
            _ => None,
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

/// When an owner polling every `poll` next reads, after `now`: the next
/// multiple of it (a poll of 0 is taken as 1 ms).
pub(super) fn next_poll(now: Millis, poll: Millis) -> Millis {
    let poll = poll.0.max(1);
    Millis((now.0 / poll + 1) * poll)
}

/// A message arrives: an inbox world takes it (it waits in a file), or it
/// is handed back for the actor's mailbox.
#[inline]
pub fn take<S: Shell>(w: &mut World<S>, d: Delivery) -> Option<Delivery> {
    if w.sim.inbox.is_some() && filebox::receives(w, d.to) {
        filebox::append(w, d);
        return None;
    }
    if w.sim.team.is_some() {
        teambox::append(w, d);
        return None;
    }
    Some(d)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_poll_is_the_next_multiple_strictly_after_now() {
        let s = Millis::from_secs(1);
        assert_eq!(next_poll(Millis(0), s), Millis(1000));
        assert_eq!(next_poll(Millis(999), s), Millis(1000));
        assert_eq!(next_poll(Millis(1000), s), Millis(2000), "a poll now has been taken: the next");
        assert_eq!(next_poll(Millis(7), Millis::ZERO), Millis(8), "a zero poll reads every millisecond");
    }

    #[test]
    fn each_world_is_named_as_a_file_writes_it() {
        let all = [
            MailboxWorld::Memory,
            MailboxWorld::File(FileMailbox::default()),
            MailboxWorld::ClaudeCode(TeamMailbox::default()),
        ];
        let names: Vec<&str> = all.iter().map(MailboxWorld::name).collect();
        assert_eq!(names, MailboxWorld::NAMES);
        assert!(all[0].is_memory() && all[1].file().is_some() && all[2].file().is_none());
    }

    #[test]
    fn each_name_gives_back_its_world_with_the_default_settings() {
        for name in MailboxWorld::NAMES {
            assert_eq!(MailboxWorld::named(name).map(|w| w.name()), Some(*name));
        }
        assert_eq!(MailboxWorld::named("claude-code"), Some(MailboxWorld::ClaudeCode(TeamMailbox::default())));
        assert_eq!(MailboxWorld::named("mmap"), None);
    }
}
