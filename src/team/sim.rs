//! The public face of the runtime: describe a team and a script, run it to
//! the end on the virtual clock, get the roster, the requests and the log.

use super::actor::{AgentActor, Finish};
use super::network::{Latency, LinkFault, Network, Partition, Scheduled};
use super::world::{Due, FileState, World};
use crate::agent::lead::Load;
use crate::agent::{Agent, Answer, Answers, Input, Lead, Script, Teammate, TeammateSpec};
use crate::protocol::{AgentId, Millis, Policy, Request, Text, LEAD_NAME};
use crate::trace::{Names, RosterStatus, Stamped};
use actix::Actor;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// How the lead reviews plans.
#[derive(Clone, Debug)]
pub struct LeadSpec {
    pub on_plan: Answers,
    pub feedback: Option<Text>,
}

impl Default for LeadSpec {
    fn default() -> Self {
        LeadSpec { on_plan: Answers::always(Answer::Approve), feedback: None }
    }
}

/// A scripted action at a virtual time, performed by `agent`.
#[derive(Clone, Debug)]
pub struct Step {
    pub at: Millis,
    pub agent: AgentId,
    pub script: Script,
}

/// Everything a run needs. Agent ids: the lead is 0, teammates follow in order.
pub struct TeamSpec {
    pub seed: u64,
    pub policy: Policy,
    pub latency: Latency,
    pub lead: LeadSpec,
    pub teammates: Vec<(String, TeammateSpec)>,
    pub steps: Vec<Step>,
    pub link_faults: Vec<LinkFault>,
    pub partitions: Vec<Partition>,
    /// Faults that act at a time: crash, stall, forge, replay.
    pub timed: Vec<(Millis, Scheduled)>,
    /// Keep the event log (off only for benchmarks).
    pub trace: bool,
    /// Stop here even if work remains.
    pub end: Option<Millis>,
    /// A run that never settles stops here.
    pub cap: Millis,
    pub load: Option<Load>,
    /// Sees every event as it happens.
    pub live: Option<crate::trace::LiveSink>,
    /// Asked now and then; `true` stops the run (a real-time guard).
    pub abort: Option<crate::trace::AbortGuard>,
    /// Sees every event agents report, even with `trace` off.
    pub probe: Option<crate::trace::Probe>,
    /// `Some`: inboxes are files (`mailbox = "file"`); `None`: memory.
    pub mailbox: Option<super::FileMailbox>,
    /// File mode: replay the inbox files on real files in this directory.
    pub inbox_dir: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for TeamSpec {
    /// The description, not the hooks (closures print as nothing useful).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamSpec")
            .field("seed", &self.seed)
            .field("policy", &self.policy)
            .field("latency", &self.latency)
            .field("teammates", &self.teammates.len())
            .field("steps", &self.steps.len())
            .field("faults", &(self.link_faults.len() + self.partitions.len() + self.timed.len()))
            .field("end", &self.end)
            .field("cap", &self.cap)
            .finish_non_exhaustive()
    }
}

impl TeamSpec {
    /// A team of named teammates with default behaviour and no script.
    pub fn new(teammates: Vec<(String, TeammateSpec)>) -> TeamSpec {
        TeamSpec {
            seed: 0,
            policy: Policy::default(),
            latency: Latency::Fixed(Millis(1)),
            lead: LeadSpec::default(),
            teammates,
            steps: Vec::new(),
            link_faults: Vec::new(),
            partitions: Vec::new(),
            timed: Vec::new(),
            trace: true,
            end: None,
            cap: Millis::from_secs(3600),
            load: None,
            live: None,
            abort: None,
            probe: None,
            mailbox: None,
            inbox_dir: None,
        }
    }

    /// A copy of the team, script and faults, without the hooks (`live`,
    /// `abort`, `probe`), which belong to one run.
    pub fn fork(&self) -> TeamSpec {
        TeamSpec {
            seed: self.seed,
            policy: self.policy.clone(),
            latency: self.latency,
            lead: self.lead.clone(),
            teammates: self.teammates.clone(),
            steps: self.steps.clone(),
            link_faults: self.link_faults.clone(),
            partitions: self.partitions.clone(),
            timed: self.timed.clone(),
            trace: self.trace,
            end: self.end,
            cap: self.cap,
            load: self.load.clone(),
            live: None,
            abort: None,
            probe: None,
            mailbox: self.mailbox.clone(),
            inbox_dir: self.inbox_dir.clone(),
        }
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Nothing left to happen: every request ended, no step or fault remains.
    Settled,
    /// The scenario's `end` time.
    EndTime,
    /// The virtual-time cap, with work still to do.
    Cap,
    /// The abort guard said stop.
    Aborted,
    /// File mode: an append would have taken the inbox files past their
    /// bound (`crate::inbox::MAX_HELD_BYTES`).
    InboxBound,
}

/// What a run leaves behind.
#[derive(Debug)]
pub struct Outcome {
    pub names: Names,
    pub roster: Vec<RosterStatus>,
    /// Every request, by requester in team order, then in the order made.
    pub requests: Vec<Request>,
    pub events: Vec<Stamped>,
    pub files: BTreeMap<String, FileState>,
    /// Virtual time of the last thing that happened.
    pub ended_at: Millis,
    pub stop: Stop,
    /// Handshakes the load generator completed.
    pub load_done: u64,
    /// File mode: the inbox files as the run left them, and the disk
    /// mirror's first failure, if any.
    pub inbox_files: BTreeMap<String, Vec<u8>>,
    pub mirror_error: Option<String>,
}

impl Outcome {
    pub fn status_of(&self, name: &str) -> Option<RosterStatus> {
        self.names.agents.iter().position(|n| n == name).and_then(|i| self.roster.get(i).copied())
    }

    pub fn request(&self, label: &str) -> Option<&Request> {
        self.requests.iter().find(|r| self.names.label(r.id) == Some(label))
    }
}

/// Runs a team to the end on the virtual clock. A 60 s deadline costs no real
/// time: the clock jumps whenever every actor is idle.
pub fn run(spec: TeamSpec) -> Outcome {
    thread_local! {
        // One runtime per thread, used by run after run: building and
        // dropping one (tokio's scheduler, actix's system and arbiter) was
        // a tenth of a small run. Nothing of a run outlives it: every actor
        // is stopped by `Finish` and the world is dropped with the last of
        // them, so the next run starts from the same state as on a fresh
        // runtime (the sweep tests compare --jobs 1 with a run per process).
        static SYSTEM: std::cell::RefCell<Option<actix_rt::SystemRunner>> = const { std::cell::RefCell::new(None) };
    }
    SYSTEM.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => slot.get_or_insert_with(system).block_on(simulate(spec)),
        // A run started from inside another (a test's hook, say) gets a
        // runtime of its own.
        Err(_) => system().block_on(simulate(spec)),
    })
}

/// An actix system on a single-threaded tokio runtime: the only runtime a
/// simulation may use (see the design's determinism rules).
///
/// It has no clock at all, paused or not: virtual time belongs to the world
/// and only the driver moves it (see `drive`). Without a time driver the
/// runtime cannot read real time by accident (tokio's timers panic), and
/// parking skips the timer wheel, which was a tenth of a small run.
pub fn system() -> actix_rt::SystemRunner {
    // A current-thread runtime builds on every platform tokio supports.
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a current-thread tokio runtime");
    actix_rt::System::with_tokio_rt(move || rt)
}

async fn simulate(mut spec: TeamSpec) -> Outcome {
    tracing::debug!(
        seed = spec.seed,
        teammates = spec.teammates.len(),
        steps = spec.steps.len(),
        faults = spec.link_faults.len() + spec.partitions.len() + spec.timed.len(),
        end = ?spec.end,
        cap = %spec.cap,
        "run starts"
    );
    let mut names = vec![LEAD_NAME.to_string()];
    names.extend(spec.teammates.iter().map(|(n, _)| n.clone()));
    names.push("adversary".to_string());
    let team = names.len() - 1;

    let mut net = Network::new(spec.latency);
    net.faults = std::mem::take(&mut spec.link_faults);
    net.partitions = std::mem::take(&mut spec.partitions);
    net.capture = spec.timed.iter().any(|(_, f)| matches!(f, Scheduled::Replay { .. }));
    let mut world = World::new(spec.policy.clone(), names, spec.seed, net, spec.trace);
    world.live = spec.live.take();
    world.abort = spec.abort.take();
    world.probe = spec.probe.take();
    // Agents build events when someone reads them, or when a fault needs the
    // labels they carry.
    world.agents_report =
        world.tracing() || world.probe.is_some() || !spec.timed.is_empty() || world.net.names_requests();
    world.learn_labels = world.net.names_requests()
        || spec
            .timed
            .iter()
            .any(|(_, f)| matches!(f, Scheduled::Forge { id_label: Some(_), .. } | Scheduled::Replay { .. }));
    world.direct_delivery = !world.tracing() && world.net.is_ideal() && spec.timed.is_empty() && spec.mailbox.is_none();
    if let Some(m) = spec.mailbox.take() {
        let (mirror, error) = match spec.inbox_dir.take().map(crate::inbox::DiskMirror::new) {
            None => (None, None),
            Some(Ok(m)) => (Some(m), None),
            Some(Err(e)) => (None, Some(e.to_string())),
        };
        let mut inboxes = super::filebox::Inboxes::new(m, team, mirror);
        inboxes.mirror_error = error;
        world.inbox = Some(inboxes);
    }
    let w = Rc::new(RefCell::new(world));

    let defences = spec.policy.defences;
    let lead = match spec.load.take() {
        Some(load) => Agent::Lead(Box::new(Lead::with_load(defences, load))),
        None => Agent::Lead(Box::new(Lead::new(defences, spec.lead.on_plan.clone(), spec.lead.feedback.clone()))),
    };
    // Each agent goes straight into its actor: a list of them all first was
    // 30 MB at 100,000 teammates, freed as soon as the actors had started,
    // and an allocator that gives memory back only after a delay (mimalloc)
    // still held it at the run's peak. The teammates' specs are consumed,
    // not drained, for the same reason (14 MB).
    let teammates =
        std::mem::take(&mut spec.teammates).into_iter().map(|(_, t)| Agent::Teammate(Teammate::new(t, defences)));
    for (i, agent) in std::iter::once(lead).chain(teammates).enumerate() {
        let actor =
            AgentActor { id: AgentId(i as u32), epoch: 0, agent: Some(agent), world: Rc::clone(&w), stopped: false };
        let addr = actor.start();
        w.borrow_mut().addrs[i] = Some(addr);
    }
    tracing::debug!(actors = team, "actors started");

    {
        let mut wb = w.borrow_mut();
        // Teammates start first so their plans are in flight before the lead
        // acts; within a role, team order. Straight into the mailboxes, ahead
        // of anything the queue holds for t=0: the same order as scheduling
        // them first, without holding 100,000 queue entries at once.
        for i in (1..team).chain(std::iter::once(0)) {
            wb.to_mailbox(AgentId(i as u32), Input::Start);
        }
        for s in spec.steps.drain(..) {
            wb.schedule(s.at, Due::Input { agent: s.agent, input: Input::Script(s.script) });
        }
        for (i, p) in wb.net.partitions.clone().into_iter().enumerate() {
            wb.schedule(p.at, Due::Fault(Scheduled::Cut { partition: i }));
            // A dropping partition heals too: it stops cutting, and the log says so.
            if let Some(until) = p.until {
                wb.schedule(until, Due::Fault(Scheduled::Heal { partition: i }));
            }
        }
        for (at, f) in spec.timed.drain(..) {
            wb.schedule(at, Due::Fault(f));
        }
    }

    let mut stop = drive(&w, spec.end, spec.cap).await;
    // Deadline timers are never cancelled, so an answered request's timer
    // stays queued: if nothing else is left, the run has in fact settled.
    // Whether some request is still pending behind those timers is known only
    // once the agents hand over their tables (below).
    let only_timers_left = matches!(stop, Stop::Cap | Stop::EndTime) && {
        let wb = w.borrow();
        wb.stalls.is_empty()
            && wb.queue.iter().all(|d| matches!(d, Due::Wake { timer: crate::agent::Timer::Deadline, .. }))
    };
    let deadlocked = !w.borrow().waits.cycles().is_empty();
    if stop == Stop::Settled && deadlocked {
        // Nothing can happen, but only because the team waits on itself with
        // no deadline to break the cycle: it would wait forever. Show that by
        // letting the clock run to the limit, as a real team's would.
        let limit = spec.end.map_or(spec.cap, |e| e.min(spec.cap));
        w.borrow_mut().advance_to(limit);
        stop = if spec.end.is_some_and(|e| e <= spec.cap) { Stop::EndTime } else { Stop::Cap };
    }
    if stop == Stop::Settled {
        settle(&w);
    }

    // Collect every agent's final state. Actors live to the end of the run
    // (a stopped or killed agent's actor only records what still reaches it).
    // Each agent is read and dropped in turn: holding 100,000 final states at
    // once would be the run's peak memory.
    let addrs: Vec<_> = w.borrow_mut().addrs.iter_mut().map(|a| a.take()).collect();
    let mut requests = Vec::new();
    let mut load_done = 0;
    let mut live_pending = false;
    for (i, addr) in addrs.into_iter().enumerate() {
        let Some(addr) = addr else { continue };
        if let Ok(Some(agent)) = addr.send(Finish).await {
            if let Some(table) = agent.table() {
                // A pending request of an agent still running keeps the run
                // alive; one of a crashed or killed agent lost its timer.
                let active = crate::protocol::Directory::is_active(&w.borrow().roster, AgentId(i as u32));
                live_pending |= active && table.iter().any(|r| r.status == crate::protocol::Status::Pending);
                requests.extend(table.iter().cloned());
            }
            if let Agent::Lead(l) = &agent {
                load_done = l.load_done();
            }
        }
    }
    if only_timers_left && !live_pending {
        stop = Stop::Settled;
        settle(&w);
    }
    let mut wb = w.borrow_mut();
    let events = wb.trace.take().unwrap_or_default();
    let mut n = Names { agents: std::mem::take(&mut wb.names), labels: BTreeMap::new() };
    n.learn_labels(&events);
    // The last recorded event, not the last timer: a spare deadline wake-up
    // that finds nothing to do does not lengthen the run.
    let ended_at = events.last().map_or(wb.last_event, |e| e.t);
    let ended_at = if stop == Stop::Settled { ended_at } else { wb.now() };
    tracing::debug!(stop = ?stop, at = %ended_at, events = events.len(), load_done, "run ends");
    let (inbox_files, mirror_error) = match wb.inbox.take() {
        Some(i) => (i.fs.into_files(), i.mirror_error),
        None => (BTreeMap::new(), None),
    };
    Outcome {
        names: n,
        roster: wb.roster.statuses.clone(),
        requests,
        events,
        files: wb.files.clone(),
        ended_at,
        stop,
        load_done,
        inbox_files,
        mirror_error,
    }
}

/// What a settled run still owes its log: a partition that never heals keeps
/// its messages forever, and the trace says so.
fn settle(w: &Rc<RefCell<World>>) {
    let mut wb = w.borrow_mut();
    super::filebox::settle(&mut wb);
    for (seq, d) in wb.net.drain_partition_held() {
        let message_type = d.envelope.message.type_name();
        wb.record(crate::trace::Event::Dropped { seq, to: d.to, message_type, cause: crate::trace::Cause::Partition });
    }
}

/// The simulation's clock: wait until every actor is idle, move time on to
/// the earliest due event, run every event due, repeat. When the queue is
/// empty and every actor is idle, time jumps to the limit, which is how the
/// run knows it settled.
///
/// Time moves exactly as a paused tokio clock would move it under a sleep
/// until the next event (what this loop did before), without the timer
/// wheel, the parking and the clock reads: a third of a small run's
/// instructions went there. An event due now is fired as soon as the driver
/// runs, even while actors still have mail, as that sleep would have been
/// ready at once; one in the future waits until no mail is left.
async fn drive(w: &Rc<RefCell<World>>, end: Option<Millis>, cap: Millis) -> Stop {
    let (notify, idle) = {
        let wb = w.borrow();
        (Rc::clone(&wb.notify), Rc::clone(&wb.idle))
    };
    let limit = end.map_or(cap, |e| e.min(cap));
    let mut wakes = 0u32;
    loop {
        wakes = wakes.wrapping_add(1);
        {
            // The guard is asked here too, every 64 wake-ups (it reads the
            // real clock, 1% of a small run when asked at each): a run can
            // spin in the driver alone.
            let mut wb = w.borrow_mut();
            let stop = if wakes % 64 == 1 { wb.guard_says_stop() } else { wb.aborted };
            if stop {
                let full = wb.inbox.as_ref().is_some_and(|i| i.full);
                return if full { Stop::InboxBound } else { Stop::Aborted };
            }
        }
        let next = w.borrow().queue.next_time();
        let wake_at = next.map_or(limit, |t| t.min(limit));
        if wake_at > w.borrow().now() {
            // Something scheduled sooner than `next` while we wait (the
            // notify) is looked at again; otherwise wait for the idle team.
            let everyone_idle = async {
                while w.borrow().busy() {
                    idle.notified().await;
                }
            };
            tokio::select! {
                biased;
                _ = notify.notified() => continue,
                _ = everyone_idle => {}
            }
        }
        let now = w.borrow_mut().advance_to(wake_at);
        tracing::debug!(at = %now, queued = w.borrow().queue.len(), "driver wakes");
        match next {
            None => return Stop::Settled,
            Some(t) if t > limit => return if end.is_some_and(|e| e <= cap) { Stop::EndTime } else { Stop::Cap },
            Some(_) => {}
        }
        loop {
            let due = w.borrow_mut().queue.pop_due(now);
            match due {
                Some(d) => {
                    tracing::trace!(at = %now, event = ?d, "event due");
                    w.borrow_mut().fire(d)
                }
                None => break,
            }
        }
        tokio::task::yield_now().await;
    }
}
