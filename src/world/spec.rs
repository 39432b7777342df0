//! A run described (the team, its script, its faults) and what a run leaves
//! behind, with the world's own part of starting and ending one: shared by
//! every shell.

use super::faults::Scheduled;
use super::filebox::Inboxes;
use super::network::{Latency, LinkFault, Network, Partition};
use super::{Due, FileState, Shell, World};
use crate::agent::lead::Load;
use crate::agent::{Answer, Answers, Input, Script, TeammateSpec};
use crate::protocol::{AgentId, Millis, Policy, Request, Text, LEAD_NAME};
use crate::trace::{Names, RosterStatus, Stamped};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How the lead reviews plans, and whether it asks again when a teammate
/// rejects its shutdown request.
#[derive(Clone, Debug)]
pub struct LeadSpec {
    pub on_plan: Answers,
    pub feedback: Option<Text>,
    /// Text sent with an approval (the reference's `plan_approval
    /// {approve, feedback}` carries feedback either way); none by default.
    pub approval_feedback: Option<Text>,
    /// How many rejections of a teammate the lead answers by asking again at once.
    pub ask_again_on_reject: u32,
}

impl Default for LeadSpec {
    fn default() -> Self {
        LeadSpec {
            on_plan: Answers::always(Answer::Approve),
            feedback: None,
            approval_feedback: None,
            ask_again_on_reject: 0,
        }
    }
}

impl LeadSpec {
    /// The lead this spec describes, for either shell.
    pub fn lead(&self, defences: crate::protocol::Defences) -> crate::agent::Lead {
        crate::agent::Lead::new(defences, self.on_plan.clone(), self.feedback.clone())
            .approving_with(self.approval_feedback.clone())
            .asking_again(self.ask_again_on_reject)
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
    /// Each teammate's behaviour; teammates described alike share one.
    pub teammates: Vec<(String, Arc<TeammateSpec>)>,
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
    /// Where messages wait for their receiver: the actors' mailboxes, or
    /// inbox files of one kind or another.
    pub mailbox: super::MailboxWorld,
    /// File mode: replay the inbox files on real files in this directory.
    pub inbox_dir: Option<std::path::PathBuf>,
    /// Take these choices at every tie, in order, instead of the runtime's
    /// own (a schedule the explorer wrote): messages wait in flight until
    /// the schedule delivers them, and the run ends where it ends. Build the
    /// spec with [`TeamSpec::as_explored`] so the world is the explorer's.
    pub schedule: Option<Vec<super::Choice>>,
    /// Keep every agent's and the world's state after each turn (`run --html`).
    pub frames: bool,
    /// Leave the inbox files in the outcome (`Outcome::inbox_files`): the
    /// team folder in Claude Code mode, the inboxes in file mode; a sweep
    /// that reads none of them says false.
    pub folder: bool,
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
    pub fn new<T: Into<Arc<TeammateSpec>>>(teammates: Vec<(String, T)>) -> TeamSpec {
        let teammates = teammates.into_iter().map(|(name, t)| (name, t.into())).collect();
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
            mailbox: super::MailboxWorld::Memory,
            inbox_dir: None,
            schedule: None,
            frames: false,
            folder: true,
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
            schedule: self.schedule.clone(),
            frames: self.frames,
            folder: self.folder,
        }
    }

    /// The team as the explorer searches it, which is also the world a
    /// schedule it wrote replays in. With `file_faults`, the faults the world
    /// plays as a run does stay (every timed fault, partitions, a drop or
    /// duplicate with no count); counted drops and duplicates are the
    /// search's to spend on any message (budgets), and delays and reorders
    /// are covered, since any message may arrive at any time. Without, none.
    pub fn as_explored(&self, file_faults: bool) -> TeamSpec {
        let mut spec = self.fork();
        if file_faults {
            spec.link_faults.retain(|f| f.in_search() == super::network::InSearch::Played);
        } else {
            spec.link_faults.clear();
            spec.partitions.clear();
            spec.timed.clear();
        }
        spec
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
    /// The run's log reached its bound (`crate::world::MAX_LOGGED` events).
    LogBound,
    /// The schedule the run followed ended with something still to happen.
    ScheduleEnd,
}

impl Stop {
    pub const ALL: [Stop; 7] =
        [Stop::Settled, Stop::EndTime, Stop::Cap, Stop::Aborted, Stop::InboxBound, Stop::LogBound, Stop::ScheduleEnd];

    /// The name a history's header gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Settled => "settled",
            Stop::EndTime => "end",
            Stop::Cap => "cap",
            Stop::Aborted => "aborted",
            Stop::InboxBound => "inbox_bound",
            Stop::LogBound => "log_bound",
            Stop::ScheduleEnd => "schedule_end",
        }
    }

    pub fn parse(s: &str) -> Option<Stop> {
        Stop::ALL.into_iter().find(|x| x.as_str() == s)
    }
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
    /// A schedule the run was to follow parted from it: where, and why.
    pub schedule_error: Option<String>,
    /// Every agent's and the world's state as the run went on, if asked.
    pub frames: Option<Box<super::frames::Frames>>,
}

impl Outcome {
    pub fn status_of(&self, name: &str) -> Option<RosterStatus> {
        self.names.agents.iter().position(|n| n == name).and_then(|i| self.roster.get(i).copied())
    }

    pub fn request(&self, label: &str) -> Option<&Request> {
        self.requests.iter().find(|r| self.names.label(r.id) == Some(label))
    }
}

impl<S: Shell> World<S> {
    /// The world of the run `spec` describes, before anything happens: the
    /// team (lead first, then the teammates, then the adversary), the
    /// network with the file's link faults and partitions, the file inboxes
    /// if any. `journal`: a shell mirrors the inbox files on disk.
    pub fn for_team(spec: &mut TeamSpec, journal: bool, shell: S) -> World<S> {
        // Room for the lead, the teammates and the adversary at once: grown
        // by doubling, the adversary's push made room for twice the team.
        let mut names = Vec::with_capacity(spec.teammates.len() + 2);
        names.push(LEAD_NAME.to_string());
        names.extend(spec.teammates.iter().map(|(n, _)| n.clone()));
        names.push("adversary".to_string());
        let team = names.len() - 1;
        // Names not on the team that a phantom send writes to, after the
        // adversary: each has an inbox file and nobody to read it.
        for (_, f) in &spec.timed {
            if let Scheduled::PhantomSend { to, .. } = f {
                if !names.iter().any(|n| **n == **to) {
                    names.push(to.to_string());
                }
            }
        }
        let mut net = Network::new(spec.latency);
        net.faults = std::mem::take(&mut spec.link_faults);
        net.partitions = std::mem::take(&mut spec.partitions);
        net.capture = spec.timed.iter().any(|(_, f)| matches!(f, Scheduled::Replay { .. }));
        let mut world = World::new(spec.policy.clone(), names, team, spec.seed, net, spec.trace, shell);
        let probed = spec.probe.is_some();
        // Agents build events when someone reads them, or when a fault needs the
        // labels they carry.
        world.run.agents_report = world.tracing() || probed || !spec.timed.is_empty() || world.sim.net.names_requests();
        world.run.learn_labels = world.sim.net.names_requests()
            || spec
                .timed
                .iter()
                .any(|(_, f)| matches!(f, Scheduled::Forge { id_label: Some(_), .. } | Scheduled::Replay { .. }))
            || spec.steps.iter().any(|s| {
                matches!(&s.script, crate::agent::Script::Answer { quote: crate::agent::Quote::Label(_), .. })
            });
        world.run.folder = spec.folder;
        world.run.direct_delivery =
            !world.tracing() && world.sim.net.is_ideal() && spec.timed.is_empty() && spec.mailbox.is_memory();
        match std::mem::take(&mut spec.mailbox) {
            super::MailboxWorld::Memory => {}
            super::MailboxWorld::File(m) => world.sim.inbox = Some(Box::new(Inboxes::new(m, team, journal))),
            super::MailboxWorld::ClaudeCode(m) => {
                let planned =
                    std::iter::once(false).chain(spec.teammates.iter().map(|(_, t)| t.require_plan)).collect();
                let inboxes = super::teambox::TeamInboxes::new(m, planned, world.names.len());
                world.sim.team = Some(Box::new(inboxes))
            }
        }
        if spec.frames {
            world.frames = Some(Box::default());
        }
        world
    }

    /// The run begins: every agent's start in its mailbox, the script's
    /// steps and the faults queued at their times.
    pub fn begin(&mut self, spec: &mut TeamSpec) {
        self.run.limit = super::Limit { end: spec.end, cap: spec.cap };
        let team = self.sim.roster.statuses.len();
        // Teammates start first so their plans are in flight before the lead
        // acts; within a role, team order. Straight into the mailboxes, ahead
        // of anything the queue holds for t=0: the same order as scheduling
        // them first, without holding 100,000 queue entries at once.
        for i in (1..team).chain(std::iter::once(0)) {
            self.to_mailbox(AgentId(i as u32), Input::Start);
        }
        for s in spec.steps.drain(..) {
            self.schedule(s.at, Due::Input { agent: s.agent, input: Input::Script(s.script) });
        }
        for (i, p) in self.sim.net.partitions.clone().into_iter().enumerate() {
            self.schedule(p.at, Due::Fault(Scheduled::Cut { partition: i }));
            // A dropping partition heals too: it stops cutting, and the log says so.
            if let Some(until) = p.until {
                self.schedule(until, Due::Fault(Scheduled::Heal { partition: i }));
            }
        }
        for (at, f) in spec.timed.drain(..) {
            self.schedule(at, Due::Fault(f));
        }
    }

    /// Whether all that is left are deadline timers: they are never
    /// cancelled, so an answered request's stays queued, and a run with
    /// only those left has in fact settled (if no request is pending).
    pub fn only_timers_left(&self) -> bool {
        self.sim.stalls.is_empty()
            && self.sim.queue.iter().all(|d| matches!(d, Due::Wake { timer: crate::agent::Timer::Deadline, .. }))
    }

    /// What a settled run still owes its log: lines left in files nobody
    /// will read, and a partition that never heals keeps its messages
    /// forever; the trace says so.
    pub fn settle(&mut self) {
        // What is owed is owed at the last thing that happened, not at the
        // spare deadline timers the clock may have run on through.
        self.stamp_at = Some(self.last_logged.min(self.now()));
        super::mailbox::settle(self);
        self.stamp_at = None;
        let held = if self.sim.net.partition_held_any() {
            Arc::make_mut(&mut self.sim.net).drain_partition_held()
        } else {
            Vec::new()
        };
        for (seq, d) in held {
            let message_type = d.envelope.message.message_type();
            self.record(crate::trace::Event::Dropped {
                seq,
                to: d.to,
                message_type,
                cause: crate::trace::Cause::Partition,
            });
        }
    }

    /// What the run leaves behind, given the agents' request tables.
    pub fn outcome(&mut self, stop: Stop, requests: Vec<Request>, load_done: u64) -> Outcome {
        let events = self.trace.take().unwrap_or_default();
        let mut n = Names { agents: Arc::unwrap_or_clone(std::mem::take(&mut self.names)), labels: BTreeMap::new() };
        n.learn_labels(&events);
        // The last recorded event, not the last timer: a spare deadline wake-up
        // that finds nothing to do does not lengthen the run.
        let ended_at = events.last().map_or(self.last_event, |e| e.t);
        let ended_at = if stop == Stop::Settled { ended_at } else { self.now() };
        tracing::debug!(stop = ?stop, at = %ended_at, events = events.len(), load_done, "run ends");
        let (inbox_files, mirror_error) = match (self.sim.inbox.take(), self.sim.team.take()) {
            (Some(i), _) if self.run.folder => (i.fs.into_files(), i.mirror_error),
            (Some(i), _) => (BTreeMap::new(), i.mirror_error),
            (None, Some(t)) if self.run.folder => (t.folder(&n.agents), None),
            (None, _) => (BTreeMap::new(), None),
        };
        Outcome {
            names: n,
            roster: self.sim.roster.statuses.clone(),
            requests,
            events,
            files: (*self.sim.files).clone(),
            ended_at,
            stop,
            load_done,
            inbox_files,
            mirror_error,
            schedule_error: None,
            frames: self.frames.take(),
        }
    }
}
