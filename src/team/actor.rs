//! The actix shell around an agent's pure logic: take an input from the
//! mailbox, let the logic decide, carry out the commands through the world.

use super::world::{Due, FileState, World};
use crate::agent::{Agent, Command, Ctx, Input};
use crate::protocol::AgentId;
use crate::trace::{Cause, Event, RosterStatus};
use actix::{Actor, ActorContext, Context, Handler, Message};
use std::cell::RefCell;
use std::rc::Rc;

impl Message for Input {
    type Result = ();
}

/// At the end of a run: hand over the agent's final state.
pub struct Finish;
impl Message for Finish {
    type Result = Option<Agent>;
}

pub struct AgentActor {
    pub id: AgentId,
    /// The incarnation this actor runs; the world bumps it on a crash or kill.
    pub epoch: u32,
    pub agent: Option<Agent>,
    pub world: Rc<RefCell<World>>,
    /// The agent shut down gracefully. The actor stays alive until the end of
    /// the run so that a message still reaching it is recorded, not silently
    /// dropped with the mailbox.
    pub stopped: bool,
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
    // for both stores to land (perf: a quarter of this handler's time, and
    // the bench 3 % slower). Called, it reads the first copy in place.
    #[inline(never)]
    fn handle(&mut self, input: Input, _: &mut Context<Self>) {
        // The fields one by one, so that the world's borrow and the actor's
        // own state are disjoint (no reference count to bump per input).
        let mut guard = self.world.borrow_mut();
        take(self.id, &mut self.epoch, &mut self.agent, &mut self.stopped, &mut guard, &input);
        // Looked at after the input's own sends, so the team never looks idle
        // while this input is still making work for others.
        guard.handled_one();
    }
}

/// Hands one input to agent `me`'s logic and carries out its commands.
// The input by reference, all the way down to the agent: moved, it was
// copied (104 bytes) at each step, and each copy's reads waited on the
// previous copy's differently cut stores (perf: a third of the handler).
#[inline(always)]
fn take(me: AgentId, epoch: &mut u32, agent: &mut Option<Agent>, stopped: &mut bool, w: &mut World, input: &Input) {
    w.handled += 1;
    // The real-time guard reads the clock: asked every 1,024 inputs.
    let stop = if w.handled.is_multiple_of(1024) { w.guard_says_stop() } else { w.aborted };
    if stop {
        return;
    }
    if w.epochs[me.index()] != *epoch {
        match input {
            // A new incarnation after a crash, unless a later crash or a
            // kill overtook the restart (it waited behind a stall): then
            // it is void, or a killed agent would come back to life.
            Input::Restart { incarnation } if *incarnation == w.epochs[me.index()] => *epoch = *incarnation,
            Input::Restart { .. } => {
                let name = &w.names[me.index()];
                let text = format!("{name}'s restart is void: a later crash or kill overtook it");
                w.record(Event::Note { text });
                return;
            }
            Input::Deliver(d) => {
                // The message was in the mailbox when the agent crashed or was killed.
                let cause =
                    if w.roster.statuses[me.index()] == RosterStatus::Killed { Cause::Killed } else { Cause::Crash };
                let message_type = d.envelope.message.type_name();
                w.record(Event::Dropped { seq: d.seq, to: me, message_type, cause });
                return;
            }
            _ => return,
        }
    }
    let Some(agent) = agent.as_mut() else { return };
    if *stopped {
        if let Input::Deliver(d) = input {
            let message_type = d.envelope.message.type_name();
            w.record(Event::Dropped { seq: d.seq, to: me, message_type, cause: Cause::Undeliverable });
        }
        return;
    }
    if let Input::Deliver(d) = input {
        if w.tracing() {
            let m = &d.envelope.message;
            w.record(Event::Deliver {
                seq: d.seq,
                sender: d.sender,
                claimed_from: d.envelope.from,
                to: me,
                message_type: m.type_name(),
                request_id: m.request_id(),
            });
        }
    }
    let now = w.now();
    let tracing = w.agents_report;
    // One command buffer for the whole team, lent to whoever runs: a
    // buffer per actor would cost 300 bytes a teammate at 100,000 teammates.
    let incarnation = *epoch;
    // The id streams are the world's, not the actor's: an agent's outlives
    // its crashes, as its request table does.
    let mut cx =
        Ctx { me, incarnation, now, ids: &mut w.ids, dir: &w.roster, policy: &w.policy, out: &mut w.out, tracing };
    agent.handle(input, &mut cx);
    // In place, by index: carrying out a command never queues another, and
    // this is cheaper than lending the buffer out and draining it.
    let queued = w.out.len();
    // Asked once a turn, not once a command (the handshake path's cost).
    let may_die = super::filebox::armed_to_tear(w, me);
    for i in 0..queued {
        let cmd = std::mem::replace(&mut w.out[i], Command::Stop);
        if perform(w, me, *epoch, cmd) {
            *stopped = true;
        }
        if may_die && w.epochs[me.index()] != *epoch {
            // It died carrying out its own command (a torn append in file
            // mode): what it had yet to do dies with it.
            break;
        }
    }
    debug_assert_eq!(w.out.len(), queued, "carrying out a command queued another; it would be lost");
    w.out.clear();
}

/// Carries out one command for agent `me`; true when the agent stops.
// Out of line on purpose: the command is then handed over in memory, whole,
// instead of being split into registers and stored back piece by piece
// before the delivery is built from it, a copy whose wide loads wait on the
// narrow stores (perf put a sixth of the handler's time there).
#[inline(never)]
fn perform(w: &mut World, me: AgentId, epoch: u32, cmd: Command) -> bool {
    match cmd {
        Command::Send(env) => w.send(me, env),
        Command::Wake { at, timer } => w.schedule(at, Due::Wake { agent: me, epoch, timer }),
        Command::Record(e) => w.record(*e),
        Command::Status(s) => w.set_status(me, s),
        Command::FileStep { path, done, total } => {
            // Most steps write a file already begun: no new key to allocate.
            let state = FileState { done, total, writer: me };
            match w.files.get_mut(&*path) {
                Some(f) => *f = state,
                None => {
                    w.files.insert(path.to_string(), state);
                }
            }
            w.record(Event::FileStep { agent: me, path: path.to_string(), done, total });
        }
        Command::Kill(target) => {
            // A crashed teammate waiting for its restart is killed too: the
            // policy's word is final, and the restart must not bring it back.
            // One already down for good (shut down, killed, crashed with no
            // restart) stays as it is: a final state never changes.
            let status = w.roster.statuses[target.index()];
            let name = &w.names[target.index()];
            if status.is_active() || w.restarts_due.remove(&target) {
                tracing::debug!(at = %w.now(), agent = %name, "killed: no answer to its shutdown request in time");
                let text = format!("{name} did not answer its shutdown request in time: force-stopped");
                w.halt(target, RosterStatus::Killed);
                w.record(Event::Alert { agent: target, text });
            } else {
                let text = format!("the kill default finds {name} already {status}: nothing to kill");
                w.record(Event::Note { text });
            }
        }
        Command::Stop => {
            tracing::debug!(at = %w.now(), agent = %w.names[me.index()], "agent stops (graceful shutdown)");
            return true;
        }
    }
    false
}

impl Handler<Finish> for AgentActor {
    type Result = Option<Agent>;
    fn handle(&mut self, _: Finish, ctx: &mut Context<Self>) -> Option<Agent> {
        tracing::trace!(agent = self.id.0, "actor stops");
        ctx.stop();
        self.agent.take()
    }
}
