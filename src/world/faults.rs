//! The faults that act at a time ([`Scheduled`]) and what those that strike
//! an agent do (crash, restart, stall, a torn write, a junk line); those that
//! act on the network are carried out in `network`. Their kinds, names and
//! keys are [`FaultKind`]'s.

use super::{filebox, network, Due, Shell, World};
use crate::agent::Input;
pub use crate::fault_kind::FaultKind;
use crate::protocol::{AgentId, Message, Millis};
use crate::trace::{Event, RosterStatus};

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
    /// Claude Code mode: `agent`'s runtime fails to mark its inbox read
    /// `times - 1` times, so each entry reaches it `times` times.
    RepeatedDelivery {
        agent: AgentId,
        times: u32,
    },
    /// Claude Code mode: from now on a read shows `agent` at most `shown` entries.
    DisplayCap {
        agent: AgentId,
        shown: u32,
    },
    /// Claude Code mode: `from` sends `text` to `to`, a name that is not
    /// on the team.
    PhantomSend {
        from: AgentId,
        to: crate::protocol::Text,
        text: crate::protocol::Text,
    },
    /// Claude Code mode: `agent` asks the lead for its own shutdown; the
    /// request's id names its target, the lead.
    MisroutedId {
        agent: AgentId,
    },
    /// The restart a crash scheduled, for the incarnation that crash left:
    /// a later crash or a respawn moves the incarnation on, and this
    /// restart is then void (found by fuzz: a first crash's restart brought
    /// back the agent a second crash had downed, long before the second's).
    Restart {
        agent: AgentId,
        epoch: u32,
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
        Scheduled::Restart { agent, epoch } => restart(w, agent, epoch),
        Scheduled::TornWrite { agent, restart_after } => filebox::tear_next(w, agent, restart_after),
        Scheduled::JunkLine { agent, text } => filebox::write_junk(w, agent, &text),
        Scheduled::RepeatedDelivery { agent, times } => super::teambox::fail_marks(w, agent, times),
        Scheduled::DisplayCap { agent, shown } => super::teambox::cap_display(w, agent, shown),
        Scheduled::PhantomSend { from, to, text } => super::teambox::phantom_send(w, from, &to, text),
        Scheduled::MisroutedId { agent } => super::teambox::ask_the_lead_to_stop(w, agent),
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
fn restart<S: Shell>(w: &mut World<S>, agent: AgentId, epoch: u32) {
    // Another crash's restart, or one a respawn made void: not this one's.
    if w.sim.epochs[agent.index()] != epoch {
        return;
    }
    if !w.sim.restarts_due.remove(&agent) || w.sim.roster.statuses[agent.index()] != RosterStatus::Crashed {
        return;
    }
    w.record(Event::Restart { agent });
    w.set_status(agent, RosterStatus::Working);
    // The incarnation the restart is for: a crash or kill before the agent
    // reads it (a stall can hold it) makes it void.
    let incarnation = w.sim.epochs[agent.index()];
    w.to_mailbox(agent, Input::Restart { incarnation });
    // File mode: the new incarnation finds what the file kept.
    super::mailbox::arm(w, agent);
}

/// An agent freezes until `until`: its inbox and timers wait. Overlapping
/// stalls merge: it reads again when the last ends, and what it holds stays held.
fn stall<S: Shell>(w: &mut World<S>, agent: AgentId, until: Millis) {
    let end = match w.sim.stalls.get_mut(&agent) {
        Some((current, _)) => {
            *current = (*current).max(until);
            *current
        }
        None => {
            w.sim.stalls.insert(agent, (until, Default::default()));
            until
        }
    };
    w.record(Event::Stall { agent, until: end });
    w.schedule(end, Due::Fault(Scheduled::Unstall { agent, until: end }));
}

/// A stall ends, if it is the end of the stall as it now stands: what the
/// agent's inbox held reaches it, in order.
fn unstall<S: Shell>(w: &mut World<S>, agent: AgentId, until: Millis) {
    if w.sim.stalls.get(&agent).is_some_and(|(current, _)| *current != until) {
        return;
    }
    if let Some((_, held)) = w.sim.stalls.remove(&agent) {
        w.record(Event::Note {
            text: format!("{} reads its inbox again ({} waiting)", w.names[agent.index()], held.len()),
        });
        for input in held {
            w.to_mailbox(agent, input);
        }
    }
}
