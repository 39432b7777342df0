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
use crate::agent::Agent;
use crate::protocol::{AgentId, GateState, Request, RequestId, WaitFor};
use crate::trace::{Event, RosterStatus};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct Frames {
    /// Each agent after each of its turns, and before its first.
    pub agents: Vec<AgentFrame>,
    /// The world's shared parts whenever one changed.
    pub world: Vec<WorldFrame>,
    /// The roster as the first world frame found it.
    pub roster: Vec<RosterStatus>,
    /// Who changed status since the last world frame (`World::set_status`).
    pub(super) moved: Vec<AgentId>,
}

/// What the page shows of an agent after a turn: its own words for what it
/// does, its gate and what it put aside, and the rows of its request table
/// the turn may have changed. Not the agent itself: a copy of the lead
/// after each of its turns held its whole table each time, so a team of
/// thousands took the team's size times its turns (issue 39, point 16).
#[derive(Clone, Debug)]
pub struct AgentFrame {
    /// Events logged before its turn, plus one (0 before the run).
    pub after: usize,
    pub agent: AgentId,
    /// `None` for the lead.
    pub doing: Option<String>,
    /// A teammate's gate and the plan it waits on.
    pub gate: Option<(GateState, Option<RequestId>)>,
    /// What it set aside: message type, the request it quotes, its sender.
    pub set_aside: Vec<(&'static str, Option<RequestId>, AgentId)>,
    /// Its table's rows the turn's events name (every row of a short table).
    pub requests: Vec<Request>,
}

/// Past this many rows, a frame keeps only the rows its turn's events name.
const WHOLE_TABLE: usize = 64;

impl AgentFrame {
    fn of(me: AgentId, agent: &Agent, after: usize, turn: &[crate::trace::Stamped]) -> AgentFrame {
        let requests = match agent.table() {
            Some(t) if t.len() <= WHOLE_TABLE => t.iter().cloned().collect(),
            Some(t) => {
                let mut ids: Vec<RequestId> = turn
                    .iter()
                    .filter_map(|e| match &e.event {
                        Event::Opened { id, .. } | Event::Expired { id, .. } => Some(*id),
                        Event::Verdict { request_id, .. } => Some(*request_id),
                        _ => None,
                    })
                    .collect();
                // Each once, where the turn first names it: a request is
                // opened before anything else names it, so rows come in the
                // order the table opened them, as a whole table lists them.
                let mut once = std::collections::BTreeSet::new();
                ids.retain(|id| once.insert(*id));
                ids.iter().filter_map(|id| t.get(*id).cloned()).collect()
            }
            None => Vec::new(),
        };
        match agent {
            Agent::Lead(_) => AgentFrame { after, agent: me, doing: None, gate: None, set_aside: Vec::new(), requests },
            Agent::Teammate(t) => {
                let set_aside = match t.set_aside() {
                    Some(held) => held
                        .iter()
                        .map(|d| (d.envelope.message.type_name(), d.envelope.message.request_id(), d.sender))
                        .collect(),
                    None => Vec::new(),
                };
                let gate = t.gate();
                let gate = Some((gate.state(), gate.current_plan()));
                AgentFrame { after, agent: me, doing: Some(t.doing()), gate, set_aside, requests }
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct WorldFrame {
    pub after: usize,
    /// Who changed status since the previous world frame, and to what (the
    /// roster at a frame is `Frames::roster` with every change up to it):
    /// a whole roster at each change was a team's size times its changes.
    pub roster: Vec<(AgentId, RosterStatus)>,
    pub files: Arc<BTreeMap<String, FileState>>,
    pub waits: WaitFor,
    /// File mode: each inbox file (`alice.jsonl`, an offset drain's
    /// `alice.jsonl.offset`) and what it holds; Claude Code mode: each
    /// inbox array that holds an entry (`inboxes/alice.json`); empty in
    /// memory mode.
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
        let turn = self.trace.as_deref().map_or(&[][..], |t| &t[after.saturating_sub(1).min(t.len())..]);
        if let Some(f) = &mut self.frames {
            f.agents.push(AgentFrame::of(me, agent, after, turn));
        }
        self.frame_world(after);
    }

    /// Keeps the world's shared parts, stamped `after`, if one changed
    /// since the last frame.
    pub fn frame_world(&mut self, after: usize) {
        let Some(f) = &mut self.frames else { return };
        let inbox: Vec<(String, String)> = match (&self.sim.inbox, &self.sim.team) {
            (Some(i), _) => {
                i.fs.files()
                    .map(|(p, file)| (p.to_string(), String::from_utf8_lossy(&file.bytes).into_owned()))
                    .collect()
            }
            (None, Some(t)) => t.inboxes_text(&self.names),
            (None, None) => Vec::new(),
        };
        let busy = match (&self.sim.inbox, &self.sim.team) {
            (Some(i), _) => &i.reading[..],
            (None, Some(t)) => &t.reading[..],
            (None, None) => &[][..],
        };
        let reading: Vec<(AgentId, crate::protocol::Millis)> =
            busy.iter().enumerate().filter_map(|(a, r)| r.map(|until| (AgentId(a as u32), until))).collect();
        let first = f.world.is_empty();
        let same = f.world.last().is_some_and(|w| {
            f.moved.is_empty()
                && Arc::ptr_eq(&w.files, &self.sim.files)
                && w.waits == self.sim.waits
                && w.inbox == inbox
                && w.reading == reading
        });
        if first {
            f.roster = self.sim.roster.statuses.clone();
            f.moved.clear();
        }
        if !same {
            let statuses = &self.sim.roster.statuses;
            let mut moved = std::mem::take(&mut f.moved);
            moved.sort_unstable();
            moved.dedup();
            let roster = moved.into_iter().map(|a| (a, statuses[a.index()])).collect();
            let (files, waits) = (Arc::clone(&self.sim.files), self.sim.waits.clone());
            f.world.push(WorldFrame { after, roster, files, waits, inbox, reading });
        }
    }
}
