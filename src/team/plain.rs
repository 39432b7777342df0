//! The plain shell: the actix shell's runs without actix or tokio. One loop
//! on one thread hands each input to its agent's turn in the order the actix
//! shell's runtime would, so a run's log is the same byte for byte
//! (tests/plain_shell.rs), at less cost.
//!
//! The order it copies, from actix 0.13.5 on tokio 1.54's current-thread
//! runtime with its `LocalSet` (`actix_rt`):
//!
//! - Actors are tasks in the `LocalSet`'s one first-in first-out run queue
//!   (no LIFO slot there). A post wakes an actor only if it is parked: its
//!   mailbox's waker is taken by the first wake and given back only when
//!   the mailbox is found empty, so an actor is queued once, never while it
//!   runs, and its first post after it ran puts it at the back.
//! - A run of an actor handles its whole mailbox in order, inputs posted to
//!   itself meanwhile included (`Mailbox::poll` loops until `Pending`; the
//!   256 limit is only an assertion behind a feature).
//! - `block_on` polls the `LocalSet`'s `RunUntil`, which polls the driver
//!   (the `simulate` future) first, then runs at most 61 queued actors
//!   (`MAX_TASKS_PER_TICK`), then, if it stopped at 61, wakes itself: the
//!   driver is polled between every such round, woken or not.
//! - `yield_now` defers the driver's waker until the runtime runs out of
//!   work: after firing the due events the driver lets one round run.
//! - The driver's biased `select!` takes the `sooner` notice first. A
//!   `Notify` keeps one permit when told with no waiter (the driver busy
//!   firing, say), which the next wait takes at once; told while the driver
//!   waits, it wakes it. Otherwise the driver waits, round after round,
//!   until every mailbox is empty (`idle` is told exactly then).
//! - At the end the driver gives up the addresses (later posts are dropped)
//!   and sends `Finish` to each agent in team order, awaiting each: it is
//!   handled behind what that mailbox holds, rounds of every queued actor
//!   running meanwhile.
//!
//! A new runtime would also have two tasks of `actix_rt`'s own (the system
//! and its arbiter) queued ahead of the first run's actors; `sim::system`
//! runs them once before any run, so every run is played as here.
//!
//! A run that follows a schedule (`run --schedule`) is left to the actix
//! shell.

use super::hooks::{Ends, Hooks};
use super::sim::write_folder;
use crate::agent::{Agent, Input};
use crate::protocol::{AgentId, Millis};
use crate::world::{turn, Life, Outcome, Shell, Stop, TeamSpec, World};
use std::collections::VecDeque;

/// Actors tokio's `LocalSet` runs before it lets its owner run again.
const ROUND: usize = 61;

/// What the plain shell lends the world: one mailbox per agent, the run
/// queue of agents with mail, and the run's hooks.
pub struct Plain {
    mail: Vec<VecDeque<Input>>,
    /// Agents to run, in the order their mailboxes woke them.
    ready: VecDeque<usize>,
    /// Whether an agent waits for mail (neither queued nor running).
    parked: Vec<bool>,
    /// Mail is taken: false once the run's end began (the actix shell has
    /// given up its addresses then).
    open: bool,
    /// `sooner`, as the driver's `Notify` keeps it: told while the driver
    /// waits on it (`waiting`), it wakes the driver (`told`); otherwise it
    /// is kept as the one permit the next wait takes at once.
    waiting: bool,
    told: bool,
    permit: bool,
    pub hooks: super::hooks::Hooks,
}

impl Plain {
    pub fn new(team: usize) -> Plain {
        Plain {
            mail: (0..team).map(|_| VecDeque::new()).collect(),
            // Every actor is queued once as it starts, in team order.
            ready: (0..team).collect(),
            parked: vec![false; team],
            open: true,
            waiting: false,
            told: false,
            permit: false,
            hooks: super::hooks::Hooks::default(),
        }
    }

    /// Whether some mailbox still holds an input.
    fn busy(&self) -> bool {
        !self.ready.is_empty()
    }
}

impl Shell for Plain {
    #[inline(always)]
    fn post(&mut self, agent: AgentId, input: Input) {
        if !self.open {
            return;
        }
        let i = agent.index();
        self.mail[i].push_back(input);
        if self.parked[i] {
            self.parked[i] = false;
            self.ready.push_back(i);
        }
    }

    #[inline(always)]
    fn sooner(&mut self) {
        if self.waiting && !self.told {
            self.told = true;
        } else {
            self.permit = true;
        }
    }

    super::hooks::ears_from_hooks!();
}

/// The world and the agents it does not hold: what the loop steps.
struct Team {
    world: World<Plain>,
    agents: Vec<Option<Agent>>,
    lives: Vec<Life>,
    /// At the end: agents told to finish once their mailbox is empty.
    finishing: Vec<bool>,
}

impl Team {
    /// One round of the run queue: up to [`ROUND`] actors, each handling its
    /// whole mailbox.
    fn round(&mut self) {
        for _ in 0..ROUND {
            let Some(i) = self.world.shell_mut().ready.pop_front() else { return };
            let me = AgentId(i as u32);
            while let Some(input) = self.world.shell_mut().mail[i].pop_front() {
                if let Some(agent) = self.agents[i].as_mut() {
                    turn(&mut self.world, me, &mut self.lives[i], agent, &input);
                }
            }
            if self.finishing[i] {
                // `Finish` handled: the actor stops, its agent is read.
                self.finishing[i] = false;
            } else {
                self.world.shell_mut().parked[i] = true;
            }
        }
    }

    /// The driver's `select!`: rounds of actors until `sooner` is told
    /// (true: look at the queue again) or every mailbox is empty (false).
    fn wait(&mut self) -> bool {
        let shell = self.world.shell_mut();
        if std::mem::take(&mut shell.permit) {
            return true;
        }
        shell.waiting = true;
        loop {
            let shell = self.world.shell_mut();
            if std::mem::take(&mut shell.told) {
                shell.waiting = false;
                return true;
            }
            if !shell.busy() {
                shell.waiting = false;
                return false;
            }
            self.round();
        }
    }

    /// `sim::drive` in the plain shell: the same steps, with a round of
    /// actors where that one awaits.
    fn drive(&mut self, end: Option<Millis>, cap: Millis) -> Stop {
        let limit = end.map_or(cap, |e| e.min(cap));
        let mut wakes = 0u32;
        loop {
            wakes = wakes.wrapping_add(1);
            let w = &mut self.world;
            let stop = if wakes % 64 == 1 { w.guard_says_stop() } else { w.aborted() };
            if stop {
                return w.stopped_as();
            }
            let next = w.queue().next_time();
            let wake_at = next.map_or(limit, |t| t.min(limit));
            if wake_at > w.now() && self.wait() {
                continue;
            }
            let w = &mut self.world;
            let now = w.advance_to(wake_at);
            tracing::debug!(at = %now, queued = w.queue().len(), "driver wakes");
            match next {
                None => return Stop::Settled,
                Some(t) if t > limit => return if end.is_some_and(|e| e <= cap) { Stop::EndTime } else { Stop::Cap },
                Some(_) => {}
            }
            while let Some(d) = w.pop_due(now) {
                tracing::trace!(at = %now, event = ?d, "event due");
                w.fire(d);
            }
            // `yield_now`: the actors have one round.
            self.round();
        }
    }

    /// `Finish` to agent `i`, behind what its mailbox holds: rounds until
    /// it is handled; then its agent, taken.
    fn finish(&mut self, i: usize) -> Option<Agent> {
        self.finishing[i] = true;
        let shell = self.world.shell_mut();
        if shell.parked[i] {
            shell.parked[i] = false;
            shell.ready.push_back(i);
        }
        while self.finishing[i] {
            self.round();
        }
        self.agents[i].take()
    }
}

/// Runs a team to the end on the virtual clock, as [`super::run`] does and
/// with the same log, without actors. A run that follows a schedule is left
/// to the actix shell.
pub fn run_plain(mut spec: TeamSpec) -> Outcome {
    if spec.schedule.is_some() {
        return super::run(spec);
    }
    super::hooks::announce(&spec);
    let team = spec.teammates.len() + 1;
    let mut shell = Plain::new(team);
    let setup = Hooks::take(&mut spec);
    shell.hooks = setup.hooks;
    let journal = shell.hooks.mirror.is_some();
    let mut world = World::for_team(&mut spec, journal, shell);
    world.shell_mut().hooks.probe = spec.probe.take();
    world.set_mirror_error(setup.mirror_error);
    let agents: Vec<Option<Agent>> = super::hooks::agents(&mut spec).map(Some).collect();
    if world.keeps_frames() {
        for (i, agent) in agents.iter().enumerate() {
            world.frame_agent(AgentId(i as u32), agent.as_ref().expect("every agent is there"), 0);
        }
    }
    world.begin(&mut spec);
    let mut t = Team { world, agents, lives: vec![Life::default(); team], finishing: vec![false; team] };

    let stop = t.drive(spec.end, spec.cap);
    let ending = t.world.begin_ending(stop, false);
    t.world.shell_mut().open = false;
    let mut ends = Ends::default();
    for i in 0..team {
        if let Some(agent) = t.finish(i) {
            ends.add(t.world.roster(), AgentId(i as u32), &agent);
        }
    }
    let stop = t.world.finish_ending(ending, ends.live_pending);
    let mut outcome = t.world.outcome(stop, ends.requests, ends.load_done);
    if let Some(dir) = setup.team_folder {
        outcome.mirror_error = write_folder(&dir, &outcome.inbox_files).err();
    }
    outcome
}
