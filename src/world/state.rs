//! Which of a world's fields are its simulated state, said once, by name.
//!
//! Two worlds are in the same state when these parts agree: the explorer
//! fingerprints them (`explore::model`'s walk) and nothing else. They are
//! the world's `Sim`, the simulated part of it; the rest of a world is the
//! run's: its shell, its log, its switches and scratch.
//! [`World::state_parts`] names every field of `World`, so a field added
//! there is a compile error here until it is sorted into one side or the
//! other; the walk names every field of [`StateParts`], so one added here is
//! a compile error there until it is hashed.

use super::filebox::Inboxes;
use super::network::{NetRng, Network};
use super::queue::Queue;
use super::{FileState, Shell, Sim, World};
use crate::agent::Roster;
use crate::protocol::{AgentId, Delivery, Millis, WaitFor};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A world's simulated state, borrowed.
pub struct StateParts<'a> {
    pub now: Millis,
    /// Each agent's roster status.
    pub roster: &'a Roster,
    /// Each agent's incarnation.
    pub epochs: &'a [u32],
    /// What is due, and when.
    pub queue: &'a Queue,
    /// How far the network's stream has drawn: its next coin.
    pub net_rng: &'a NetRng,
    pub files: &'a BTreeMap<String, FileState>,
    /// Latency, the file's faults and what they hold.
    pub net: &'a Network,
    /// The messages a shell chooses the arrival of (the explorer's).
    pub flight: &'a [Delivery],
    pub stalls: &'a BTreeMap<AgentId, (Millis, VecDeque<crate::agent::Input>)>,
    pub restarts_due: &'a BTreeSet<AgentId>,
    pub waits: &'a WaitFor,
    pub inbox: Option<&'a Inboxes>,
}

impl<S: Shell> World<S> {
    /// The parts of this world that are its state (see the module's words
    /// on why every field is named).
    pub fn state_parts(&self) -> StateParts<'_> {
        let World {
            sim: Sim { clock, roster, epochs, queue, net_rng, files, net, flight, stalls, restarts_due, waits, inbox },
            // The same for every state of a run: set before it starts.
            policy: _,
            names: _,
            run: _,
            // Names, not state: a request id is named by the order the walk
            // meets it, a message by what it carries; the streams that draw
            // ids, and the counter that numbers messages, only pick names.
            ids: _,
            next_msg: _,
            // The shell's: between two states its mailboxes are empty (a
            // step hands every input over).
            shell: _,
            // What the run logged and when, and what it keeps for pictures:
            // history, not state.
            trace: _,
            stamp_at: _,
            last_logged: _,
            last_event: _,
            frames: _,
            // Scratch and guards: empty, or the same, between two states.
            out: _,
            handled: _,
            aborted: _,
        } = self;
        StateParts {
            now: *clock,
            roster,
            epochs,
            queue,
            net_rng,
            files,
            net,
            flight: flight.as_deref().unwrap_or_default(),
            stalls,
            restarts_due,
            waits,
            inbox: inbox.as_deref(),
        }
    }
}
