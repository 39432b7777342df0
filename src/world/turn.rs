//! An agent's turn, carried out the same way in every shell: the world
//! hands the input to the agent's pure logic, then performs the commands it
//! returns. Stale inputs (sent to a life that has since ended) are recorded
//! as lost here, once, for the actors and the explorer alike.

use super::{Due, FileState, Shell, World};
use crate::agent::{Agent, Command, Ctx, Input};
use crate::protocol::AgentId;
use crate::trace::{Cause, Event, RosterStatus};
use std::sync::Arc;

/// What a shell keeps of one agent's process besides its logic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Life {
    /// The incarnation this process runs; the world bumps its own count on
    /// a crash or kill, and inputs for the old one are then lost.
    pub epoch: u32,
    /// The agent shut down gracefully. Its mailbox stays open to the end of
    /// the run, so that a message still reaching it is recorded, not
    /// silently dropped with the mailbox.
    pub stopped: bool,
}

#[cfg(test)]
thread_local! {
    /// Turns the mailroom off on this thread, to compare a run with it and
    /// without (`bench`'s tests).
    static NO_MAILROOM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Tests only: no mailroom for the turns played on this thread while `off`.
#[cfg(test)]
pub fn lend_no_mailroom(off: bool) {
    NO_MAILROOM.with(|c| c.set(off));
}

#[cfg(test)]
fn mailroom_off() -> bool {
    NO_MAILROOM.with(|c| c.get())
}

#[cfg(not(test))]
#[inline(always)]
fn mailroom_off() -> bool {
    false
}

/// The most room for commands the world keeps between turns.
const KEPT_COMMANDS: usize = 1024;

/// Hands one input to agent `me`'s logic and carries out its commands.
// The input by reference, all the way down to the agent: moved, it was
// copied (104 bytes) at each step, and each copy's reads waited on the
// previous copy's differently cut stores (docs/architecture.md).
#[inline(always)]
pub fn turn<S: Shell>(w: &mut World<S>, me: AgentId, life: &mut Life, agent: &mut Agent, input: &Input) {
    w.handled += 1;
    let first = if w.frames.is_some() { w.logged() + 1 } else { 0 };
    // The real-time guard reads the clock: asked every 1,024 inputs.
    let stop = if w.handled.is_multiple_of(1024) { w.guard_says_stop() } else { w.aborted };
    if stop {
        return;
    }
    if w.sim.epochs[me.index()] != life.epoch {
        match input {
            // A new incarnation after a crash, unless a later crash or a
            // kill overtook the restart (it waited behind a stall): then
            // it is void, or a killed agent would come back to life.
            Input::Restart { incarnation } if *incarnation == w.sim.epochs[me.index()] => life.epoch = *incarnation,
            // A new process: whatever the old one was (stopped, killed,
            // crashed), this one runs.
            Input::Respawn { incarnation } if *incarnation == w.sim.epochs[me.index()] => {
                *life = Life { epoch: *incarnation, stopped: false };
            }
            Input::Respawn { .. } => {
                // The new process exists (the log says it was respawned), but
                // a crash or kill came before it ran: it waits, unstarted, for
                // the restart that crash may bring, which is then its start.
                agent.reset_for_respawn();
                // The old process's stop is not the new one's: the restart
                // starts it (found by fuzz: a teammate that had shut down,
                // respawned behind a stall and crashed, stayed stopped after
                // its restart, and its plan never expired).
                life.stopped = false;
                let name = &w.names[me.index()];
                let text = format!("{name}'s new process went down before it started");
                w.record(Event::Note { text });
                return;
            }
            Input::Restart { .. } => {
                let name = &w.names[me.index()];
                let text = format!("{name}'s restart is void: a later crash or kill overtook it");
                w.record(Event::Note { text });
                return;
            }
            Input::Deliver(d) => {
                // The message was in the mailbox when the agent crashed or was killed.
                let cause = if w.sim.roster.statuses[me.index()] == RosterStatus::Killed {
                    Cause::Killed
                } else {
                    Cause::Crash
                };
                let message_type = d.envelope.message.message_type();
                w.record(Event::Dropped { seq: d.seq, to: me, message_type, cause });
                return;
            }
            _ => return,
        }
    }
    if life.stopped {
        if let Input::Deliver(d) = input {
            let message_type = d.envelope.message.message_type();
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
                message_type: m.message_type(),
                request_id: m.request_id(),
            });
        }
    }
    let now = w.now();
    let tracing = w.run.agents_report;
    // One command buffer for the whole team, lent to whoever runs: a
    // buffer per actor would cost 300 bytes a teammate at 100,000 teammates.
    let incarnation = life.epoch;
    // Asked once a turn, not once a command (the handshake path's cost).
    let may_die = super::filebox::armed_to_tear(w, me);
    // Rare: what the turn starts from, to play it again up to a death.
    // An agent draws ids from its own stream only: that lane is all of the
    // streams the turn can move.
    let before = may_die.then(|| Box::new((agent.clone(), w.ids.lane(me), w.sim.roster.clone())));
    // The id streams are the world's, not the process's: an agent's
    // outlives its crashes, as its request table does.
    let mut cx = Ctx {
        me,
        incarnation,
        now,
        ids: &mut w.ids,
        dir: &w.sim.roster,
        policy: &w.policy,
        out: &mut w.out,
        tracing,
        sends_left: u32::MAX,
        // Only where the world's own path would post straight to the
        // mailbox (`World::transmit`), and never where a death may cut the
        // turn short (a tear is armed only with file inboxes).
        mailroom: (w.run.direct_delivery && !may_die && !mailroom_off()).then(|| crate::agent::Mailroom {
            mailboxes: &mut w.shell,
            sent: &mut w.next_msg,
            epochs: &w.sim.epochs,
            timers: 0,
        }),
    };
    agent.handle(input, &mut cx);
    // In place, by index: carrying out a command never queues another, and
    // this is cheaper than lending the buffer out and draining it.
    let queued = w.out.len();
    let mut sends = 0;
    for i in 0..queued {
        let cmd = std::mem::replace(&mut w.out[i], Command::Stop);
        // Counted only where a death may need it (a tear is armed).
        sends += (may_die && matches!(cmd, Command::Send(_))) as u32;
        if perform(w, me, life.epoch, cmd) {
            life.stopped = true;
        }
        if may_die && w.sim.epochs[me.index()] != life.epoch {
            // It died carrying out its own command (a torn append in file
            // mode): what it had yet to do dies with it, and so does what it
            // decided after that send (a task taken up, a plan opened).
            if let Some(before) = before {
                replay_until_death(w, me, incarnation, agent, input, *before, sends);
            }
            break;
        }
    }
    debug_assert_eq!(w.out.len(), queued, "carrying out a command queued another; it would be lost");
    w.out.clear();
    if w.out.capacity() > KEPT_COMMANDS {
        // A burst (a load's start: one request per teammate) is not kept for
        // the rest of the run.
        w.out = Vec::new();
    }
    if w.frames.is_some() {
        w.frame_agent(me, agent, first);
    }
}

/// Plays `me`'s turn again from what it started from, with its `sends`-th
/// send its last act: the agent is left as it was when it died, not as its
/// whole turn would have left it. The turn is a pure function of what it
/// started from, so the replay decides the same up to that send; its
/// commands were carried out already (up to the death) and are dropped.
#[cold]
fn replay_until_death<S: Shell>(
    w: &mut World<S>,
    me: AgentId,
    incarnation: u32,
    agent: &mut Agent,
    input: &Input,
    before: (Agent, Option<Box<rand_chacha::ChaCha8Rng>>, Arc<crate::agent::Roster>),
    sends: u32,
) {
    let (old, lane, roster) = before;
    *agent = old;
    w.ids.set_lane(me, lane);
    let mut dropped = Vec::new();
    let mut cx = Ctx {
        me,
        incarnation,
        now: w.now(),
        ids: &mut w.ids,
        dir: &roster,
        policy: &w.policy,
        out: &mut dropped,
        tracing: w.run.agents_report,
        sends_left: sends,
        mailroom: None,
    };
    agent.handle(input, &mut cx);
}

/// Carries out one command for agent `me`; true when the agent stops.
// Out of line on purpose: the command is then handed over in memory, whole,
// instead of being split into registers and stored back piece by piece
// before the delivery is built from it, a copy whose wide loads wait on the
// narrow stores (perf put a sixth of the handler's time there).
#[inline(never)]
fn perform<S: Shell>(w: &mut World<S>, me: AgentId, epoch: u32, cmd: Command) -> bool {
    match cmd {
        Command::Send(env) => w.send(me, env),
        Command::Wake { at, timer } => w.schedule(at, Due::Wake { agent: me, epoch, timer }),
        Command::Record(e) => w.record(*e),
        Command::Status(s) => w.set_status(me, s),
        Command::FileStep { path, done, total } => {
            // Most steps write a file already begun: no new key to allocate.
            let state = FileState { done, total, writer: me };
            let files = Arc::make_mut(&mut w.sim.files);
            match files.get_mut(&*path) {
                Some(f) => *f = state,
                None => {
                    files.insert(path.to_string(), state);
                }
            }
            w.record(Event::FileStep { agent: me, path, done, total });
        }
        Command::Kill(target) => {
            // A crashed teammate waiting for its restart is killed too: the
            // policy's word is final, and the restart must not bring it back.
            // One already down for good (shut down, killed, crashed with no
            // restart) stays as it is: a final state never changes.
            let status = w.sim.roster.statuses[target.index()];
            let name = &w.names[target.index()];
            if status.is_active() || w.sim.restarts_due.remove(&target) {
                tracing::debug!(at = %w.now(), agent = %name, "killed: no answer to its shutdown request in time");
                let text = format!("{name} did not answer its shutdown request in time: force-stopped");
                w.halt(target, RosterStatus::Killed);
                w.record(Event::Alert { agent: target, text });
            } else {
                let text = format!("the kill default finds {name} already {status}: nothing to kill");
                w.record(Event::Note { text });
            }
        }
        Command::Respawn(target) => w.respawn(target),
        Command::Stop => {
            tracing::debug!(at = %w.now(), agent = %w.names[me.index()], "agent stops (graceful shutdown)");
            return true;
        }
    }
    false
}
