//! What every agent and the world looked like as a run went on, kept only
//! when asked (`run --html`): the page that steps through a run shows the
//! simulator's own state at each event, never one re-derived from the log.
//!
//! A frame is taken when a turn ends (the agent that took it) and when the
//! world has fired an event (its shared parts, when one changed). A turn is
//! one step of the simulator, whatever it logs, so its frame is stamped
//! with its first event: `events logged before it + 1`. The state at event
//! `k` is then, for each part, the last frame stamped `k + 1` or less: at
//! every event of a turn, the state the turn left.

use super::{FileState, Shell, World};
use crate::agent::{Agent, Roster};
use crate::protocol::{AgentId, WaitFor};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct Frames {
    /// Each agent after each of its turns, and before its first.
    pub agents: Vec<AgentFrame>,
    /// The world's shared parts whenever one changed.
    pub world: Vec<WorldFrame>,
}

#[derive(Clone, Debug)]
pub struct AgentFrame {
    /// Events logged before its turn, plus one (0 before the run).
    pub after: usize,
    pub agent: AgentId,
    pub state: Agent,
}

#[derive(Clone, Debug)]
pub struct WorldFrame {
    pub after: usize,
    /// Shared with the world until it writes them: a frame of a part that
    /// did not change costs a pointer.
    pub roster: Arc<Roster>,
    pub files: Arc<BTreeMap<String, FileState>>,
    pub waits: WaitFor,
    /// File mode: each inbox file (`alice.jsonl`, an offset drain's
    /// `alice.jsonl.offset`) and what it holds; empty in memory mode.
    pub inbox: Vec<(String, String)>,
    /// File mode: who is busy reading its inbox, and until when.
    pub reading: Vec<(AgentId, crate::protocol::Millis)>,
}

impl<S: Shell> World<S> {
    /// Events logged so far: a step's frames are stamped with this, taken
    /// before the step, plus one.
    pub fn logged(&self) -> usize {
        self.trace.as_ref().map_or(0, Vec::len)
    }

    /// Keeps `agent`'s state as `me` leaves its turn, and the world's if it
    /// changed, stamped `after`. Only called with frames on.
    pub fn frame_agent(&mut self, me: AgentId, agent: &Agent, after: usize) {
        if let Some(f) = &mut self.frames {
            f.agents.push(AgentFrame { after, agent: me, state: agent.clone() });
        }
        self.frame_world(after);
    }

    /// Keeps the world's shared parts, stamped `after`, if one changed
    /// since the last frame.
    pub fn frame_world(&mut self, after: usize) {
        let Some(f) = &mut self.frames else { return };
        let inbox: Vec<(String, String)> = self.inbox.as_ref().map_or_else(Vec::new, |i| {
            i.fs.files().map(|(p, file)| (p.to_string(), String::from_utf8_lossy(&file.bytes).into_owned())).collect()
        });
        let reading: Vec<(AgentId, crate::protocol::Millis)> = self.inbox.as_ref().map_or_else(Vec::new, |i| {
            i.reading.iter().enumerate().filter_map(|(a, r)| r.map(|until| (AgentId(a as u32), until))).collect()
        });
        let same = f.world.last().is_some_and(|w| {
            Arc::ptr_eq(&w.roster, &self.roster)
                && Arc::ptr_eq(&w.files, &self.files)
                && w.waits == self.waits
                && w.inbox == inbox
                && w.reading == reading
        });
        if !same {
            let (roster, files, waits) = (Arc::clone(&self.roster), Arc::clone(&self.files), self.waits.clone());
            f.world.push(WorldFrame { after, roster, files, waits, inbox, reading });
        }
    }
}
