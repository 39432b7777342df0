//! The pure shell's mailboxes: every input handed to an agent waits in one
//! queue, in the order handed over, until the shell gives it to the agent's
//! turn. The explorer runs its world with these, and so does the replay of
//! a recorded run: no threads, no actors, the same world.

use super::Shell;
use crate::agent::Input;
use crate::protocol::AgentId;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct Hand {
    pub ready: VecDeque<(AgentId, Input)>,
}

impl Shell for Hand {
    #[inline]
    fn post(&mut self, agent: AgentId, input: Input) {
        self.ready.push_back((agent, input));
    }
}
