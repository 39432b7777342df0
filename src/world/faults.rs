//! Every kind of fault a scenario can schedule, as one enum: its name as a
//! scenario file writes it, the keys it takes, and what it acts on. The
//! scenario reader, fuzz, shrink, replay, the history and the log read
//! names and keys from here, so a new kind is one variant, and the compiler
//! points at each `match` that must learn it.
//!
//! Here too, the faults that act at a time ([`Scheduled`]) and what those
//! that strike an agent do (crash, restart, stall, a torn write, a junk
//! line); those that act on the network are carried out in `network`.

use super::{filebox, network, Due, Shell, World};
use crate::agent::Input;
use crate::protocol::{AgentId, Message, Millis};
use crate::trace::{Event, RosterStatus};

/// A kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// Messages on a link arrive later.
    Delay,
    /// Messages on a link are lost.
    Drop,
    /// Messages on a link arrive twice.
    Duplicate,
    /// A message on a link is overtaken by the next.
    Reorder,
    /// Two agents cannot reach each other for a while.
    Partition,
    /// A teammate stops, for good or until a restart.
    Crash,
    /// A teammate freezes: its inbox and timers wait.
    Stall,
    /// A message claiming to be from someone it is not.
    Forge,
    /// The network sends a message it saw once more.
    Replay,
    /// An append to an inbox file is cut short (file inboxes only).
    TornWrite,
    /// A line that is not a message lands in an inbox file (file inboxes only).
    JunkLine,
}

impl FaultKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [FaultKind; 11] = [
        FaultKind::Delay,
        FaultKind::Drop,
        FaultKind::Duplicate,
        FaultKind::Reorder,
        FaultKind::Partition,
        FaultKind::Crash,
        FaultKind::Stall,
        FaultKind::Forge,
        FaultKind::Replay,
        FaultKind::TornWrite,
        FaultKind::JunkLine,
    ];

    /// Its name, as a scenario file writes it (`kind = "torn_write"`).
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Delay => "delay",
            FaultKind::Drop => "drop",
            FaultKind::Duplicate => "duplicate",
            FaultKind::Reorder => "reorder",
            FaultKind::Partition => "partition",
            FaultKind::Crash => "crash",
            FaultKind::Stall => "stall",
            FaultKind::Forge => "forge",
            FaultKind::Replay => "replay",
            FaultKind::TornWrite => "torn_write",
            FaultKind::JunkLine => "junk_line",
        }
    }

    /// The kind a file names, if it is one.
    pub fn named(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The keys a fault of this kind takes, `kind` aside.
    pub fn keys(self) -> &'static [&'static str] {
        const LINK: &[&str] = &["at", "until", "from", "to", "type", "request", "count", "probability"];
        match self {
            FaultKind::Delay => &["at", "until", "from", "to", "type", "request", "count", "probability", "delay"],
            FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder => LINK,
            FaultKind::Partition => &["at", "until", "between", "direction", "mode"],
            FaultKind::Crash | FaultKind::TornWrite => &["at", "agent", "restart"],
            FaultKind::JunkLine => &["at", "agent", "text"],
            FaultKind::Stall => &["at", "until", "agent"],
            FaultKind::Forge => &["at", "from", "to", "message"],
            FaultKind::Replay => &["at", "request", "type"],
        }
    }

    /// Whether a file may leave out `at`: a fault on links, or a
    /// partition, then acts from the start. The others happen at a time.
    pub fn at_is_optional(self) -> bool {
        matches!(
            self,
            FaultKind::Delay | FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder | FaultKind::Partition
        )
    }

    /// Whether it acts on inbox files, so only a team with file inboxes
    /// (`mailbox = "file"`) can have it.
    pub fn needs_inbox_files(self) -> bool {
        matches!(self, FaultKind::TornWrite | FaultKind::JunkLine)
    }
}

/// A fault that acts at a time rather than on a message.
#[derive(Clone, Debug)]
pub enum Scheduled {
    Crash {
        agent: AgentId,
        restart_after: Option<Millis>,
    },
    /// File mode: from now on, `agent`'s next append is cut short and the
    /// agent crashes in the middle of it (restarted after `restart_after`).
    TornWrite {
        agent: AgentId,
        restart_after: Option<Millis>,
    },
    /// File mode: a whole line that is not JSON lands in `agent`'s inbox
    /// file (a hand edit, another program's log line).
    JunkLine {
        agent: AgentId,
        text: crate::protocol::Text,
    },
    Restart {
        agent: AgentId,
    },
    Stall {
        agent: AgentId,
        until: Millis,
    },
    Unstall {
        agent: AgentId,
        until: Millis,
    },
    /// A partition begins (it cuts messages by itself; this records it).
    Cut {
        partition: usize,
    },
    Heal {
        partition: usize,
    },
    /// An adversary injects `message`, claiming to be `claimed_from`.
    /// `@label` request ids are resolved when it fires.
    Forge {
        claimed_from: AgentId,
        to: AgentId,
        message: Message,
        id_label: Option<String>,
    },
    /// The network delivers again the last `message_type` seen for a labelled request.
    Replay {
        label: String,
        message_type: crate::protocol::MessageType,
    },
    /// Let a reorder-held message go if nothing followed it.
    ReleaseReorder {
        from: AgentId,
        to: AgentId,
        /// The held message this release is for: a later hold on the same
        /// link must wait its own full patience.
        seq: u64,
    },
}

/// Runs a time-triggered fault.
pub fn fire<S: Shell>(w: &mut World<S>, f: Scheduled) {
    tracing::debug!(at = %w.now(), fault = ?f, "fault fires");
    match f {
        Scheduled::Crash { agent, restart_after } => w.crash_for(agent, restart_after),
        Scheduled::Restart { agent } => restart(w, agent),
        Scheduled::TornWrite { agent, restart_after } => filebox::tear_next(w, agent, restart_after),
        Scheduled::JunkLine { agent, text } => filebox::write_junk(w, agent, &text),
        Scheduled::Stall { agent, until } => stall(w, agent, until),
        Scheduled::Unstall { agent, until } => unstall(w, agent, until),
        Scheduled::Cut { partition } => network::cut(w, partition),
        Scheduled::Heal { partition } => network::heal(w, partition),
        Scheduled::Forge { claimed_from, to, message, id_label } => {
            network::forge(w, claimed_from, to, message, id_label)
        }
        Scheduled::Replay { label, message_type } => network::replay(w, &label, message_type),
        Scheduled::ReleaseReorder { from, to, seq } => network::release_reorder(w, from, to, seq),
    }
}

/// A crashed agent comes back, a new incarnation, unless it was killed
/// while it was down (the kill stands).
fn restart<S: Shell>(w: &mut World<S>, agent: AgentId) {
    if !w.restarts_due.remove(&agent) || w.roster.statuses[agent.index()] != RosterStatus::Crashed {
        return;
    }
    w.record(Event::Restart { agent });
    w.set_status(agent, RosterStatus::Working);
    // The incarnation the restart is for: a crash or kill before the agent
    // reads it (a stall can hold it) makes it void.
    let incarnation = w.epochs[agent.index()];
    w.to_mailbox(agent, Input::Restart { incarnation });
    // File mode: the new incarnation finds what the file kept.
    filebox::arm(w, agent);
}

/// An agent freezes until `until`: its inbox and timers wait. Overlapping
/// stalls merge: it reads again when the last ends, and what it holds stays held.
fn stall<S: Shell>(w: &mut World<S>, agent: AgentId, until: Millis) {
    let end = match w.stalls.get_mut(&agent) {
        Some((current, _)) => {
            *current = (*current).max(until);
            *current
        }
        None => {
            w.stalls.insert(agent, (until, Default::default()));
            until
        }
    };
    w.record(Event::Stall { agent, until: end });
    w.schedule(end, Due::Fault(Scheduled::Unstall { agent, until: end }));
}

/// A stall ends, if it is the end of the stall as it now stands: what the
/// agent's inbox held reaches it, in order.
fn unstall<S: Shell>(w: &mut World<S>, agent: AgentId, until: Millis) {
    if w.stalls.get(&agent).is_some_and(|(current, _)| *current != until) {
        return;
    }
    if let Some((_, held)) = w.stalls.remove(&agent) {
        w.record(Event::Note {
            text: format!("{} reads its inbox again ({} waiting)", w.names[agent.index()], held.len()),
        });
        for input in held {
            w.to_mailbox(agent, input);
        }
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_once_and_read_back_by_its_name() {
        for (i, k) in FaultKind::ALL.iter().enumerate() {
            assert_eq!(FaultKind::named(k.name()), Some(*k));
            assert!(!FaultKind::ALL[..i].contains(k), "{k:?} listed twice");
            assert!(k.keys().contains(&"at"), "{k:?} is scheduled at a time");
        }
        assert_eq!(FaultKind::named("torn-write"), None, "one spelling: the file's");
    }
}
