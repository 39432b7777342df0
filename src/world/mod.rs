//! The world one simulation runs in, pure: the roster and incarnations, the
//! network (latency, link faults, partitions, holds), every fault kind, the
//! simulated files and inboxes, the virtual-time event queue, the labels and
//! the log. No actix, no clock, no I/O.
//!
//! Two shells run it (the shape Stateright uses: handlers emit commands, and
//! two short interpreters carry them out over the same state): the actix
//! runtime (`team`), with one actor and one mailbox per agent, and the
//! explorer (`explore`), which searches the world's choice points. A shell
//! gives the world its mailboxes and its ears ([`Shell`]); everything else
//! (what a command does, what a fault does, where a message goes) is written
//! here, once: [`turn`] carries out an agent's turn, [`World::fire`] what is due.

pub mod access;
pub mod choice;
pub mod deadlock;
pub mod ending;
pub mod faults;
pub mod filebox;
pub mod frames;
pub mod hand;
pub mod mailbox;
pub mod network;
pub mod queue;
pub mod schedule;
pub mod spec;
pub mod state;
pub mod teambox;
pub mod turn;

pub use choice::{Choice, Place};
pub use ending::{Ending, Limit};
pub use faults::{FaultKind, Scheduled};
pub use filebox::FileMailbox;
pub use hand::Hand;
pub use mailbox::{MailboxWorld, TeamMailbox};
pub use network::{Filter, Latency, LinkEffect, LinkFault, Partition};
pub use schedule::Schedule;
pub use spec::{LeadSpec, Outcome, Step, Stop, TeamSpec};
pub use turn::{turn, Life};

use crate::agent::{IdStreams, Input, Roster, Timer};
use crate::protocol::{Address, AgentId, Delivery, Directory, Envelope, Millis, Policy};
use crate::trace::{Cause, Event, RosterStatus, Stamped};
use network::{Network, Route};
use state::{PerAgent, Sim};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a shell lends the world: the agents' mailboxes, and the ears and
/// hands outside the simulation (a live view, a probe, a real-time guard, a
/// disk mirror). Generic, not a trait object: the runtime's `post` is on
/// every message's path and must inline. One exception: a turn's mailroom
/// (`agent::Mailroom`) reaches it as a `dyn Mailboxes`, one indirect call
/// in place of a command's trip through the buffer, which costs more.
pub trait Shell {
    /// Puts `input` in `agent`'s mailbox, to be handed to its turn.
    fn post(&mut self, agent: AgentId, input: Input);
    /// Something was queued earlier than anything before it (a driver
    /// waiting for the next due time looks again).
    #[inline(always)]
    fn sooner(&mut self) {}
    /// Whether someone besides the log hears events as they happen.
    #[inline(always)]
    fn listening(&self) -> bool {
        false
    }
    /// An event as it is logged (the CLI's `-v`).
    #[inline(always)]
    fn hear(&mut self, _event: &Stamped, _names: &[String]) {}
    /// Every event an agent reports, even with the log off (the bench).
    #[inline(always)]
    fn probe(&mut self, _event: &Event) {}
    /// Asked now and then: true stops the run (a real-time guard).
    #[inline(always)]
    fn must_stop(&mut self) -> bool {
        false
    }
    /// The simulated files changed: a shell that mirrors them on disk
    /// follows, and says how it failed.
    #[inline(always)]
    fn files_changed(&mut self, _fs: &mut crate::inbox::SimFs) -> Result<(), String> {
        Ok(())
    }
}

/// A turn's mailroom posts through its shell (see `agent::Mailroom`).
impl<S: Shell> crate::agent::Mailboxes for S {
    #[inline(always)]
    fn put(&mut self, to: AgentId, input: Input) {
        self.post(to, input)
    }
}

/// A simulated file, as far as the writes of the run got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    pub done: u32,
    pub total: u32,
    pub writer: AgentId,
}

impl FileState {
    pub fn is_complete(&self) -> bool {
        self.done >= self.total
    }
}

/// Something due at a virtual time.
#[derive(Clone, Debug)]
pub enum Due {
    /// A message reaches its recipient's mailbox.
    Deliver(Delivery),
    /// An agent's timer, valid only for the incarnation that armed it.
    Wake { agent: AgentId, epoch: u32, timer: Timer },
    /// A scripted input (start, a step, a restart).
    Input { agent: AgentId, input: Input },
    /// A fault that acts on the world at this time.
    Fault(faults::Scheduled),
    /// File mode: an agent polls its inbox file (the read begins).
    ReadInbox { agent: AgentId },
    /// File mode: a read's cost is paid (the read ends).
    InboxRead(Box<filebox::PendingRead>),
    /// Claude Code mode: a read of an inbox array is done (the mark and the hand-over).
    TeamRead(Box<teambox::PendingRead>),
}

#[derive(Clone)]
pub struct World<S: Shell> {
    /// What is simulated: the state two runs must agree on to be in the
    /// same state (the rest of a world is how the run is played and what
    /// it keeps).
    sim: Sim,
    policy: Policy,
    /// Shared: the explorer copies the world into every state it keeps.
    names: Arc<Vec<String>>,
    /// The shell's mailboxes and hooks.
    shell: S,
    /// How this run is played: set before it starts, the same for every
    /// state of it.
    run: Switches,
    trace: Option<Vec<Stamped>>,
    /// Set while the run settles: the time its closing records are stamped.
    stamp_at: Option<Millis>,
    /// When the last event was logged (every shell logs the same events;
    /// not every shell keeps them).
    last_logged: Millis,
    /// Each agent's request-id stream (`agent::ids`), made on its first
    /// draw: one word per agent until then.
    ids: IdStreams,
    /// Message sequence numbers pair each send with its delivery or loss.
    next_msg: u64,
    last_event: Millis,
    /// The command buffer actors borrow while they handle an input.
    out: Vec<crate::agent::Command>,
    /// Inputs handled so far (the shell's guard is asked every 1,024), and
    /// whether the run must stop.
    handled: u64,
    aborted: bool,
    /// What every agent and the world looked like as the run went on (`run
    /// --html`); `None`, and no cost but this word, otherwise.
    frames: Option<Box<frames::Frames>>,
}

/// The most events a run's log holds: the log is kept whole for judging,
/// so a small file (a broadcast to 100,000 teammates, sent 200 times) could
/// otherwise take the machine's memory. An event is held in about a hundred
/// bytes; a run past the bound stops there, with [`Stop::LogBound`].
pub const MAX_LOGGED: usize = 4_000_000;

/// How a run is played, set before it starts: when it stops even with work
/// left, and what its hot paths may skip.
#[derive(Clone, Debug)]
struct Switches {
    /// When the run stops even with work left (its `end`, else its `cap`).
    limit: ending::Limit,
    /// Nothing is logged, the network is ideal and no fault is scheduled:
    /// messages can skip the router's checks.
    direct_delivery: bool,
    /// Whether agents should build events (for the log, `-v` or a probe).
    agents_report: bool,
    /// Whether a fault names requests by label (a filter's `request`, a
    /// forgery's `@label`, a replay): only then are labels written out as
    /// the requests open, a formatted string each.
    learn_labels: bool,
    /// Whether the run's outcome carries its inbox files (`Outcome::inbox_files`):
    /// the team folder in Claude Code mode, the inboxes in file mode. A
    /// sweep that reads none of them skips them.
    folder: bool,
}

impl<S: Shell> World<S> {
    /// `names` lists the team (lead first) and then the adversary, which can
    /// forge messages but is not a member and cannot receive, then the names
    /// not on the team that a phantom send writes to (Claude Code mode).
    /// `team` is how many of the names are members; after them come the
    /// adversary and any name a phantom send writes to.
    pub fn new(
        policy: Policy,
        names: Vec<String>,
        team: usize,
        seed: u64,
        net: Network,
        trace: bool,
        shell: S,
    ) -> World<S> {
        let n = team;
        World {
            sim: Sim {
                clock: Millis::ZERO,
                roster: Arc::new(Roster { statuses: vec![RosterStatus::Working; n] }),
                epochs: Arc::new(PerAgent(vec![0; n])),
                queue: Default::default(),
                net_rng: network::NetRng::new(seed),
                files: Arc::default(),
                net: Arc::new(net),
                flight: None,
                stalls: BTreeMap::new(),
                restarts_due: Default::default(),
                waits: Default::default(),
                inbox: None,
                team: None,
            },
            policy,
            names: Arc::new(names),
            shell,
            run: Switches {
                limit: ending::Limit { end: None, cap: Millis::NEVER },
                direct_delivery: false,
                agents_report: true,
                learn_labels: true,
                folder: true,
            },
            // A run logs a few dozen events, and about ten more per teammate
            // (start, a request, its answer, a status, deliveries): room for
            // them from the start rather than growing (and copying) the log
            // four or five times. Capped: the bench's 100,000 teammates run
            // without a log, and a huge team's log grows as it needs.
            trace: trace.then(|| Vec::with_capacity((64 + 12 * n).min(1 << 16))),
            ids: IdStreams::new(seed, n),
            next_msg: 0,
            last_event: Millis::ZERO,
            out: Vec::new(),
            handled: 0,
            aborted: false,
            frames: None,
            stamp_at: None,
            last_logged: Millis::ZERO,
        }
    }

    /// Virtual time: whole milliseconds since the run began.
    pub fn now(&self) -> Millis {
        self.sim.clock
    }

    /// Moves virtual time on to `t` (never back). Only the driver calls it,
    /// and only when every actor is idle, as a paused clock would jump.
    pub fn advance_to(&mut self, t: Millis) -> Millis {
        self.sim.clock = self.sim.clock.max(t);
        self.sim.clock
    }

    #[inline(always)]
    pub fn tracing(&self) -> bool {
        self.trace.is_some() || self.shell.listening()
    }

    pub fn record(&mut self, event: Event) {
        self.shell.probe(&event);
        // Labels are learnt whether or not anyone reads the log: faults that
        // name a request (`@label`, `request =`) must act the same either way.
        if let (true, Event::Opened { id, label, .. }) = (self.run.learn_labels, &event) {
            let text = label.render(|a| self.names[a.index()].as_str());
            Arc::make_mut(&mut self.sim.net).labels.insert(text, *id);
        }
        if !self.tracing() {
            return;
        }
        let follows = deadlock::observe(&mut self.sim.waits, &event, &self.policy);
        let s = Stamped { t: self.stamp_at.unwrap_or_else(|| self.now()), event };
        self.last_logged = s.t;
        if self.shell.listening() {
            self.shell.hear(&s, &self.names);
        }
        if let Some(t) = &mut self.trace {
            t.push(s);
            if t.len() >= MAX_LOGGED {
                // Past it the run stops, judged on what it logged (Stop::LogBound).
                self.aborted = true;
            }
        }
        for e in follows {
            self.record(e);
        }
    }

    pub fn schedule(&mut self, at: Millis, due: Due) {
        if self.sim.queue.push(at, due) {
            self.shell.sooner();
        }
    }

    /// Hands an input to an agent's mailbox now, unless it is stalled.
    #[inline]
    pub fn to_mailbox(&mut self, agent: AgentId, input: Input) {
        if let Some((_, held)) = self.sim.stalls.get_mut(&agent) {
            held.push_back(input);
            return;
        }
        self.post(agent, input);
    }

    /// Puts an input in the agent's mailbox (the shell's).
    #[inline(always)]
    pub fn post(&mut self, agent: AgentId, input: Input) {
        self.shell.post(agent, input);
    }

    /// Routes an accepted envelope: one delivery per recipient, each through
    /// the network's latency and faults.
    #[inline(always)]
    pub fn send(&mut self, sender: AgentId, env: Envelope) {
        match env.to {
            Address::Agent(to) => self.transmit(sender, to, env),
            Address::Everyone => {
                let first = self.next_msg + 1;
                if let Some(inb) = &mut self.sim.inbox {
                    inb.broadcast(first, u64::MAX);
                }
                for i in 0..self.sim.roster.statuses.len() {
                    let to = AgentId(i as u32);
                    if to != sender && self.sim.roster.is_active(to) {
                        self.transmit(sender, to, env.clone());
                    }
                }
                if let Some(inb) = &mut self.sim.inbox {
                    inb.broadcast(first, self.next_msg);
                }
            }
        }
    }

    /// One message to one recipient. Always inlined: this is every message's
    /// path, and building the delivery where the envelope already is saves
    /// copying it through memory once more.
    #[inline(always)]
    pub fn transmit(&mut self, sender: AgentId, to: AgentId, envelope: Envelope) {
        self.next_msg += 1;
        let seq = self.next_msg;
        // The stamp: which life of `to` this was sent to. A copy that is
        // still in flight when `to` crashes and restarts arrives marked as
        // meant for the process that is gone.
        let incarnation = self.sim.epochs[to.index()];
        if self.run.direct_delivery && self.sim.roster.is_active(to) {
            // The benchmark path: nothing to log, no latency, no fault can
            // apply. Straight into the mailbox, the delivery built in the
            // call (inlined, where the mailbox takes it). A turn's mailroom
            // (`Ctx::queue_send`) numbers and stamps its sends as here; one
            // function for both cost the mailroom's path more instructions
            // than these few lines twice.
            let at = self.sim.clock;
            self.shell.post(to, Input::Deliver(Delivery { seq, envelope, sender, to, at, incarnation }));
            return;
        }
        self.route(seq, sender, to, incarnation, envelope);
    }

    /// Logs a message and sends it through the network's latency and faults.
    #[inline(never)]
    fn route(&mut self, seq: u64, sender: AgentId, to: AgentId, incarnation: u32, envelope: Envelope) {
        let message_type = envelope.message.message_type();
        if self.tracing() {
            let m = &envelope.message;
            let (request_id, approve, words) = (m.request_id(), m.approval(), m.words().cloned());
            self.record(Event::Send {
                seq,
                from: sender,
                to: Address::Agent(to),
                message_type,
                request_id,
                approve,
                words,
            });
        }
        let now = self.now();
        // A quiet network (no latency, no fault) routes without writing.
        let route = if self.sim.net.is_quiet() {
            Route::Now
        } else {
            Arc::make_mut(&mut self.sim.net).route(now, sender, to, &envelope.message, &mut self.sim.net_rng)
        };
        match route {
            Route::Now => {
                // The hot path: no latency, no fault. Straight into the mailbox.
                let delivery = Delivery { seq, envelope, sender, to, at: now, incarnation };
                if self.sim.net.capture {
                    Arc::make_mut(&mut self.sim.net).capture(&delivery);
                }
                match &mut self.sim.flight {
                    Some(flight) => flight.push(delivery),
                    None => self.arrive(delivery),
                }
            }
            Route::After { delays, notes } => {
                for (fault, detail) in notes {
                    self.record(Event::Fault { seq, fault, detail });
                }
                let mut last = now;
                for delay in delays {
                    let at = now.after(delay);
                    let delivery = Delivery { seq, envelope: envelope.clone(), sender, to, at, incarnation };
                    if self.sim.net.capture {
                        Arc::make_mut(&mut self.sim.net).capture(&delivery);
                    }
                    last = now.after(delay);
                    self.in_transit(last, delivery);
                }
                network::release_follower(self, sender, to, last);
            }
            Route::Lost(cause) => self.record(Event::Dropped { seq, to, message_type, cause }),
            Route::HoldReorder => {
                network::hold_reorder(self, seq, Delivery { seq, envelope, sender, to, at: now, incarnation })
            }
            Route::HoldPartition(i) => {
                network::hold_partition(self, i, seq, Delivery { seq, envelope, sender, to, at: now, incarnation })
            }
        }
    }

    /// A message on its way, due to arrive at `at`: queued for then, or, when
    /// a shell chooses arrivals, in flight until it does.
    pub fn in_transit(&mut self, at: Millis, delivery: Delivery) {
        match &mut self.sim.flight {
            Some(flight) => flight.push(delivery),
            None => self.schedule(at, Due::Deliver(delivery)),
        }
    }

    /// `agent` crashes now: its mailbox, its timers and its step in progress
    /// are lost (its incarnation moves on). With `restart_at`, a restart is
    /// due (the caller schedules it, or a shell chooses when); without, the
    /// crash is final. False if it was not running.
    pub fn crash(&mut self, agent: AgentId, restart_at: Option<Millis>) -> bool {
        if !self.sim.roster.statuses[agent.index()].is_active() {
            self.record(Event::Note {
                text: format!("{} is not running: nothing to crash", self.names[agent.index()]),
            });
            return false;
        }
        self.record(Event::Crash { agent, restart_at });
        self.halt(agent, RosterStatus::Crashed);
        if restart_at.is_some() {
            self.sim.restarts_due.insert(agent);
        }
        true
    }

    /// The lead starts `agent` again, a new process under its name: a new
    /// incarnation (whatever the old one's mailbox held is lost with it, and
    /// a restart it was waiting for is void). In file mode the new process
    /// finds the inbox file as the old one left it. Only an agent down for
    /// good, or crashed, can be respawned.
    pub fn respawn(&mut self, agent: AgentId) {
        let status = self.sim.roster.statuses[agent.index()];
        if status.is_active() {
            let text = format!("{} is running: nothing to respawn", self.names[agent.index()]);
            self.record(Event::Note { text });
            return;
        }
        self.sim.restarts_due.remove(&agent);
        Arc::make_mut(&mut self.sim.epochs)[agent.index()] += 1;
        self.record(Event::Respawn { agent });
        self.set_status(agent, RosterStatus::Working);
        let incarnation = self.sim.epochs[agent.index()];
        self.to_mailbox(agent, Input::Respawn { incarnation });
        mailbox::arm(self, agent);
    }

    /// `agent` crashes now, as a file's `crash` fault says: with
    /// `restart_after`, its restart is queued that long from now.
    pub fn crash_for(&mut self, agent: AgentId, restart_after: Option<Millis>) {
        let restart_at = restart_after.map(|after| self.now().after(after));
        if self.crash(agent, restart_at) {
            if let Some(at) = restart_at {
                let epoch = self.sim.epochs[agent.index()];
                self.schedule(at, Due::Fault(faults::Scheduled::Restart { agent, epoch }));
            }
        }
    }

    /// A message reaches `to`'s mailbox, unless `to` can no longer receive.
    #[inline]
    pub fn arrive(&mut self, mut delivery: Delivery) {
        let to = delivery.to;
        let status = self.sim.roster.statuses[to.index()];
        if self.sim.inbox.is_some() || self.sim.team.is_some() {
            match mailbox::take(self, delivery) {
                Some(d) => delivery = d,
                None => return,
            }
        }
        if !status.is_active() {
            self.lost_with_receiver(&delivery);
            return;
        }
        delivery.at = self.now();
        self.to_mailbox(to, Input::Deliver(delivery));
    }

    /// A message its receiver can no longer take: the log says it is lost,
    /// and how (the receiver crashed, was killed, or shut down).
    pub fn lost_with_receiver(&mut self, d: &Delivery) {
        let cause = match self.sim.roster.statuses[d.to.index()] {
            RosterStatus::Crashed => Cause::Crash,
            RosterStatus::Killed => Cause::Killed,
            _ => Cause::Undeliverable,
        };
        let message_type = d.envelope.message.message_type();
        self.record(Event::Dropped { seq: d.seq, to: d.to, message_type, cause });
    }

    /// Asks the real-time guard whether to stop (once it has said yes, the
    /// answer stays yes); true when the run must stop.
    pub fn guard_says_stop(&mut self) -> bool {
        if !self.aborted {
            self.aborted = self.shell.must_stop();
        }
        self.aborted
    }

    pub fn set_status(&mut self, agent: AgentId, status: RosterStatus) {
        if self.sim.roster.statuses[agent.index()] != status {
            Arc::make_mut(&mut self.sim.roster).statuses[agent.index()] = status;
            if let Some(f) = &mut self.frames {
                f.moved.push(agent);
            }
            self.record(Event::Status { agent, status });
            if status == RosterStatus::Shutdown {
                teambox::terminated(self, agent);
            }
        }
    }

    /// Force-stops an agent (timeout policy or crash): its queued inputs and
    /// timers become stale and its step in progress is abandoned.
    pub fn halt(&mut self, agent: AgentId, status: RosterStatus) {
        Arc::make_mut(&mut self.sim.epochs)[agent.index()] += 1;
        self.set_status(agent, status);
        if let Some((_, held)) = self.sim.stalls.remove(&agent) {
            // Held inputs go to the mailbox, where the stale epoch marks them lost.
            for input in held {
                self.post(agent, input);
            }
        }
    }

    /// Runs one due event.
    pub fn fire(&mut self, due: Due) {
        self.last_event = self.now();
        let first = if self.frames.is_some() { self.logged() + 1 } else { 0 };
        match due {
            Due::Deliver(delivery) => self.arrive(delivery),
            Due::Wake { agent, epoch, timer } => {
                if self.sim.epochs[agent.index()] == epoch {
                    self.to_mailbox(agent, Input::Wake(timer));
                }
            }
            Due::Input { agent, mut input } => {
                // A scripted answer quotes its request by label: the id is
                // known only once the request has been made.
                if let Input::Script(crate::agent::Script::Answer {
                    quote: q @ crate::agent::Quote::Label(_), ..
                }) = &mut input
                {
                    if let crate::agent::Quote::Label(l) = &*q {
                        if let Some(id) = self.sim.net.labels.get(&**l) {
                            *q = crate::agent::Quote::Id(*id);
                        }
                    }
                }
                if matches!(input, Input::Restart { .. }) || self.sim.roster.is_active(agent) {
                    self.to_mailbox(agent, input);
                } else {
                    let (name, status) = (&self.names[agent.index()], self.sim.roster.statuses[agent.index()]);
                    let text = format!("step skipped: {name} is {status}");
                    self.record(Event::Note { text });
                }
            }
            Due::Fault(f) => faults::fire(self, f),
            Due::ReadInbox { agent } => mailbox::poll(self, agent),
            Due::InboxRead(read) => filebox::finish(self, *read),
            Due::TeamRead(read) => teambox::finish(self, *read),
        }
        if self.frames.is_some() {
            self.frame_world(first);
        }
    }
}
