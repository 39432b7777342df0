//! The actix shell around the world: one actor and one mailbox per agent.
//! An actor takes an input from its mailbox and hands it, with the agent's
//! logic, to the world's turn ([`crate::world::turn`]), which decides and
//! carries out; the world hands inputs back through [`Actors::post`].

use crate::agent::{Agent, Input};
use crate::protocol::AgentId;
use crate::world::{turn, Life, Shell, World};
use actix::{Actor, ActorContext, Addr, Context, Handler, Message};
use std::cell::RefCell;
use std::rc::Rc;
use tokio::sync::Notify;

impl Message for Input {
    type Result = ();
}

/// An agent's start, as a message of its own: it carries nothing, so its
/// envelope in the mailbox is a few bytes where an [`Input`] is a hundred,
/// and the world posts one to every agent at once (100,000 at the start of
/// a large team). It takes its place in the mailbox's order like any input
/// and is handled as [`Input::Start`].
pub struct Start;
impl Message for Start {
    type Result = ();
}

/// At the end of a run: hand over the agent's final state.
pub struct Finish;
impl Message for Finish {
    type Result = Option<Agent>;
}

/// The world as the actors share it: one thread, so an `Rc<RefCell<..>>`,
/// never borrowed across an await.
pub type Shared = Rc<RefCell<World<Actors>>>;

/// What the actix shell lends the world: the actors' mailboxes, the
/// driver's wake-ups, and the run's hooks.
pub struct Actors {
    pub addrs: Vec<Option<Addr<AgentActor>>>,
    /// Inputs handed to mailboxes so far. When the world's `handled` catches
    /// up with it every actor is idle: the moment a paused tokio clock would
    /// jump, and the driver may move time on. (Two totals rather than one
    /// count of mail waiting: `handled` is kept anyway, so an input costs one
    /// count.)
    pub posted: u64,
    /// Told when something is queued sooner than the driver waits for.
    pub notify: Rc<Notify>,
    /// Told when `handled` catches up with `posted`.
    pub idle: Rc<Notify>,
    /// The run's hooks: live view, probe, guard, mirror.
    pub hooks: super::hooks::Hooks,
    /// Following a schedule: inputs wait here, in the order handed over,
    /// and the driver gives them to the actors one at a time, so that actix
    /// cannot take them in another order than the explorer did.
    pub held: Option<std::collections::VecDeque<(AgentId, Input)>>,
}

impl Actors {
    pub fn new(team: usize) -> Actors {
        Actors {
            addrs: vec![None; team],
            posted: 0,
            notify: Rc::new(Notify::new()),
            idle: Rc::new(Notify::new()),
            hooks: super::hooks::Hooks::default(),
            held: None,
        }
    }
}

impl Actors {
    /// Into the actor's mailbox, counted until it is handled.
    #[inline(always)]
    pub fn hand(&mut self, agent: AgentId, input: Input) {
        if let Some(addr) = &self.addrs[agent.index()] {
            self.posted += 1;
            match input {
                Input::Start => addr.do_send(Start),
                input => addr.do_send(input),
            }
        }
    }
}

impl Shell for Actors {
    #[inline(always)]
    fn post(&mut self, agent: AgentId, input: Input) {
        match &mut self.held {
            Some(held) => held.push_back((agent, input)),
            None => self.hand(agent, input),
        }
    }

    #[inline(always)]
    fn sooner(&mut self) {
        self.notify.notify_one();
    }

    super::hooks::ears_from_hooks!();
}

/// Whether some mailbox still holds an input.
#[inline]
pub fn busy(w: &World<Actors>) -> bool {
    w.shell().posted != w.inputs_handled()
}

pub struct AgentActor {
    pub id: AgentId,
    pub life: Life,
    pub agent: Option<Agent>,
    pub world: Shared,
}

impl Actor for AgentActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // The default mailbox holds 16 messages before `do_send` starts to
        // over-fill it; a pipelined lead needs room for far more.
        ctx.set_mailbox_capacity(usize::MAX >> 1);
        tracing::trace!(agent = self.id.0, "actor started");
    }
}

impl Handler<Input> for AgentActor {
    type Result = ();

    // Out of line: actix moves the input out of its boxed envelope onto the
    // stack, and inlined here it moved it once more, in 16-byte pieces that
    // straddled the first copy's; the reads of the second copy then waited
    // for both stores to land (docs/architecture.md, "Why the code is shaped
    // so"). Called, it reads the first copy in place.
    #[inline(never)]
    fn handle(&mut self, input: Input, _: &mut Context<Self>) {
        self.take(&input);
    }
}

impl Handler<Start> for AgentActor {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.take(&Input::Start);
    }
}

impl AgentActor {
    /// The agent's turn with `input`.
    #[inline(always)]
    fn take(&mut self, input: &Input) {
        // The fields one by one, so that the world's borrow and the actor's
        // own state are disjoint (no reference count to bump per input).
        let mut guard = self.world.borrow_mut();
        if let Some(agent) = self.agent.as_mut() {
            turn(&mut guard, self.id, &mut self.life, agent, input);
        }
        // Looked at after the input's own sends, so the team never looks idle
        // while this input is still making work for others.
        if !busy(&guard) {
            guard.shell().idle.notify_one();
        }
    }
}

impl Handler<Finish> for AgentActor {
    type Result = Option<Agent>;
    fn handle(&mut self, _: Finish, ctx: &mut Context<Self>) -> Option<Agent> {
        tracing::trace!(agent = self.id.0, "actor stops");
        ctx.stop();
        self.agent.take()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_agent_actor_keeps_its_task_in_the_smaller_size_class() {
        // tokio allocates each actor's task in steps of 128 bytes, and
        // actix's context takes most of it: up to 72 bytes of actor, a
        // task is 512 bytes, as bare actix's is; one byte more and it is
        // 640, 12.8 MB more at 100,000 teammates. A teammate that only
        // answers keeps everything else in its `More`, made on first use.
        let future =
            std::mem::size_of::<actix::dev::ContextFut<super::AgentActor, actix::Context<super::AgentActor>>>();
        let actor = std::mem::size_of::<super::AgentActor>();
        assert!(actor <= 72, "an agent actor of {actor} bytes (its future: {future})");
    }
}
