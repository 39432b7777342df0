//! Every interleaving of a small scenario, breadth first, over the same pure
//! agent logic the actors run (`agent`, `protocol`), with no actix and no
//! clock: the schedules nobody wrote, checked by the same oracle.
//!
//! A state is every agent's state, the roster, the messages in flight (a
//! multiset), the pending timers and the fault budgets left. From a state the
//! explorer may deliver any one message in flight, fire the earliest timer
//! (time only moves forward, in timer order), or, within budget, drop or
//! duplicate a message in flight. Latency is not modelled: a message may
//! arrive before or after any deadline, which is the sound default for
//! safety (every arrival time a real network could give is covered).
//!
//! States are deduplicated by a fingerprint; breadth-first search makes the
//! first violation found a shortest one. Request ids come from one RNG per
//! agent, so an id depends only on its asker's own history, not on the
//! interleaving, and states reached by different orders compare equal.
//!
//! Within budget, a teammate may crash (and later restart), and the
//! adversary may inject any protocol message quoting an id it has seen on the
//! wire, claiming to be any member.
//!
//! What this version leaves out (issue 11 asks for them): symmetry
//! reduction, partial-order reduction, writing a counterexample as a
//! scenario file.

pub mod replay;

use crate::agent::{Agent, Command, Ctx, Input, Lead, Roster, Script, Teammate, Timer};
use crate::protocol::{Address, AgentId, Delivery, Directory, Envelope, Message, Millis, Policy, RequestId};
use crate::scenario::{oracle, Invariant, Scenario};
use crate::team::{FileState, Stop};
use crate::trace::{Cause, Event, Names, RosterStatus, Stamped};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::{Hash, Hasher};

/// Faults the explorer may inject, as many of each as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Budgets {
    pub drop: u32,
    pub duplicate: u32,
    /// Teammates that may crash (each crash may be followed by a restart).
    pub crash: u32,
    /// Messages the adversary may inject: a replay of one it saw on the wire,
    /// or a forgery quoting an id it saw, claiming to be any member.
    pub forge: u32,
}

/// Where the search stops.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub max_depth: usize,
    pub max_states: usize,
    /// Skip interleavings that only reorder deliveries to different agents
    /// (sleep sets): such deliveries commute, so one order of them suffices.
    pub partial_order: bool,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { max_depth: 60, max_states: 200_000, partial_order: true }
    }
}

/// One move from a state to the next.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Deliver the message in flight at this index.
    Deliver(usize),
    /// Fire the earliest timer.
    Fire,
    Drop(usize),
    Duplicate(usize),
    /// A running teammate crashes: its mailbox and its step in progress are lost.
    Crash(AgentId),
    /// A crashed teammate comes back.
    Restart(AgentId),
    /// The adversary sends this message, claiming `from`.
    Inject {
        from: AgentId,
        to: AgentId,
        message: Message,
    },
}

/// What a search found.
#[derive(Debug)]
pub struct Exploration {
    /// States generated, counting repeats.
    pub states: u64,
    /// Distinct states.
    pub unique: u64,
    /// The deepest level reached.
    pub depth: usize,
    /// Which bound stopped the search, if one did.
    pub stopped_by: Option<&'static str>,
    /// Transitions the partial-order reduction did not take (sleeping ones).
    pub slept: u64,
    /// The shortest schedule that breaks an invariant, if any.
    pub counterexample: Option<Counterexample>,
}

/// What a schedule broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broke {
    Invariant(Invariant),
    /// A deadlock formed, and the policy says any deadlock fails (`deadlocks = "fail"`).
    Deadlock,
}

impl std::fmt::Display for Broke {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broke::Invariant(i) => write!(f, "invariant {i}"),
            Broke::Deadlock => f.write_str("no deadlock (policy: deadlocks = \"fail\")"),
        }
    }
}

enum Finding {
    Broken(oracle::Violation),
    Deadlock(String),
}

/// A schedule that breaks an invariant, and the run it makes.
#[derive(Debug)]
pub struct Counterexample {
    pub broke: Broke,
    pub detail: String,
    pub actions: Vec<String>,
    /// The schedule as data, one entry per action.
    pub taken: Vec<Taken>,
    /// The action each message was sent in, by message number.
    pub sent_in: BTreeMap<u64, usize>,
    pub names: Names,
    pub events: Vec<Stamped>,
}

impl Counterexample {
    /// The run in the same sentences as `-v`.
    pub fn narrate(&self) -> Vec<String> {
        let mut names = self.names.clone();
        names.learn_labels(&self.events);
        self.events.iter().map(|e| e.describe(&names)).collect()
    }
}

/// Deliveries asleep at a state, each by its key and recipient: already
/// explored in another order, so not taken again from here.
type Sleep = BTreeSet<(String, AgentId)>;

/// One action of a schedule, as data.
#[derive(Clone, Debug)]
pub enum Taken {
    Deliver {
        at: Millis,
        seq: u64,
        to: AgentId,
    },
    /// The earliest timer fired, `agent`'s.
    Fire {
        at: Millis,
        agent: AgentId,
    },
    Drop {
        at: Millis,
        seq: u64,
    },
    Duplicate {
        at: Millis,
        seq: u64,
    },
    Crash {
        at: Millis,
        agent: AgentId,
    },
    Restart {
        at: Millis,
        agent: AgentId,
    },
    Inject {
        at: Millis,
        seq: u64,
        from: AgentId,
        to: AgentId,
        message: Message,
    },
}

impl Taken {
    pub fn at(&self) -> Millis {
        match self {
            Taken::Deliver { at, .. }
            | Taken::Fire { at, .. }
            | Taken::Drop { at, .. }
            | Taken::Duplicate { at, .. }
            | Taken::Crash { at, .. }
            | Taken::Restart { at, .. }
            | Taken::Inject { at, .. } => *at,
        }
    }

    /// One line of a counterexample's schedule, with the team's `names`.
    pub fn describe(&self, names: &[String]) -> String {
        let name = |a: &AgentId| names[a.index()].as_str();
        let what = match self {
            Taken::Deliver { seq, to, .. } => format!("deliver #{seq} to {}", name(to)),
            Taken::Fire { agent, .. } => format!("timer of {}", name(agent)),
            Taken::Drop { seq, .. } => format!("drop #{seq}"),
            Taken::Duplicate { seq, .. } => format!("duplicate #{seq}"),
            Taken::Crash { agent, .. } => format!("crash {}", name(agent)),
            Taken::Restart { agent, .. } => format!("restart {}", name(agent)),
            Taken::Inject { from, to, message, .. } => {
                format!("adversary sends {} to {}, claiming to be {}", message.type_name(), name(to), name(from))
            }
        };
        format!("{}: {what}", self.at())
    }
}

/// Something due at a time: a scripted step, an agent's timer, its start.
#[derive(Clone, Debug)]
struct Due {
    at: Millis,
    /// Scheduling order among timers due at the same time.
    order: u64,
    agent: AgentId,
    input: DueInput,
}

#[derive(Clone, Debug, Hash)]
enum DueInput {
    Start,
    Wake(TimerKind),
    Script(usize),
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum TimerKind {
    Deadline,
    WorkStep,
}

#[derive(Clone)]
struct State {
    now: Millis,
    agents: Vec<Agent>,
    roster: Roster,
    rngs: Vec<ChaCha8Rng>,
    flight: Vec<Delivery>,
    timers: Vec<Due>,
    budgets: Budgets,
    log: Vec<Stamped>,
    files: BTreeMap<String, FileState>,
    next_seq: u64,
    next_order: u64,
    /// The actions taken so far: what a counterexample tells and what a
    /// scenario file needs to replay it.
    taken: Vec<Taken>,
    /// For each message sent, by number: the index in `taken` of the action it was sent in.
    sent_in: BTreeMap<u64, usize>,
    /// Request ids the adversary has seen on the wire, in the order seen.
    seen: Vec<RequestId>,
    /// Each agent's incarnation: a restart increments it.
    incarnations: Vec<u32>,
    /// Who waits on whom, to name deadlocks as the runtime does.
    waits: crate::protocol::WaitFor,
    /// The first deadlock this path formed, as an index into the log.
    deadlock_at: Option<usize>,
    /// The run's policy (the wait-for graph names the default a deadline applies).
    policy: Policy,
}

/// The parts of a scenario every state shares.
struct World<'a> {
    policy: &'a Policy,
    scripts: Vec<Script>,
    names: Vec<String>,
    /// The agents' names without request labels, for the quick check.
    bare_names: Names,
    require_plan: Vec<bool>,
}

/// Explores `scenario` within `bounds`, injecting at most `budgets` faults.
/// The file's own `[[fault]]`s are not played: the explorer injects its own.
pub fn explore(scenario: &Scenario, budgets: Budgets, bounds: Bounds) -> Exploration {
    explore_with(scenario, budgets, bounds, &mut |_| {})
}

/// As [`explore`], telling `progress` how the search stands every 10,000
/// distinct states (for a long search's progress line).
pub fn explore_with(
    scenario: &Scenario,
    budgets: Budgets,
    bounds: Bounds,
    progress: &mut dyn FnMut(&Exploration),
) -> Exploration {
    let spec = &scenario.team;
    let policy = &spec.policy;
    let mut names = vec![crate::protocol::LEAD_NAME.to_string()];
    names.extend(spec.teammates.iter().map(|(n, _)| n.clone()));
    // After the team: the adversary, who can inject but is not a member.
    names.push("adversary".to_string());
    let defences = policy.defences;
    let mut agents =
        vec![Agent::Lead(Box::new(Lead::new(defences, spec.lead.on_plan.clone(), spec.lead.feedback.clone())))];
    agents.extend(spec.teammates.iter().map(|(_, t)| Agent::Teammate(Teammate::new(t.clone(), defences))));
    let n = agents.len();
    let bare_names = Names { agents: names.clone(), labels: BTreeMap::new() };
    let scripts = spec.steps.iter().map(|s| s.script.clone()).collect();
    let world = World { policy, scripts, names, bare_names, require_plan: scenario.require_plan() };
    let mut start = State {
        now: Millis::ZERO,
        agents,
        roster: Roster { statuses: vec![RosterStatus::Working; n] },
        rngs: (0..n).map(|i| ChaCha8Rng::seed_from_u64(i as u64)).collect(),
        flight: Vec::new(),
        timers: Vec::new(),
        budgets,
        log: Vec::new(),
        files: BTreeMap::new(),
        next_seq: 0,
        next_order: 0,
        taken: Vec::new(),
        sent_in: BTreeMap::new(),
        seen: Vec::new(),
        incarnations: vec![0; n],
        waits: Default::default(),
        deadlock_at: None,
        policy: policy.clone(),
    };
    // Teammates start first, then the lead, as the runtime starts them.
    for i in (1..n).chain(std::iter::once(0)) {
        start.schedule(Millis::ZERO, AgentId(i as u32), DueInput::Start);
    }
    for (k, step) in spec.steps.iter().enumerate() {
        start.schedule(step.at, step.agent, DueInput::Script(k));
    }

    // Each state seen, with the sleep set it was last queued with: a state
    // reached again with fewer deliveries asleep must be explored again for
    // the ones that are now awake (sleep sets with state caching).
    let mut seen: HashMap<u64, Sleep> = HashMap::new();
    seen.insert(start.fingerprint(), BTreeSet::new());
    let mut queue: VecDeque<(State, usize, Sleep)> = VecDeque::from([(start, 0, BTreeSet::new())]);
    let mut out = Exploration { states: 1, unique: 1, depth: 0, stopped_by: None, slept: 0, counterexample: None };
    while let Some((state, depth, sleep)) = queue.pop_front() {
        out.depth = out.depth.max(depth);
        let actions = state.actions_here();
        if actions.is_empty() {
            // Nothing more can happen: the end-of-run checks apply too.
            if let Some(v) = state.violation(&world, true, &world.require_plan) {
                out.counterexample = Some(state.counterexample(&world, v));
                return out;
            }
            continue;
        }
        if depth >= bounds.max_depth {
            out.stopped_by = Some("max-depth");
            continue;
        }
        // Deliveries already taken from this state, by key and recipient:
        // each later sibling that delivers to someone else sleeps on them.
        let mut taken_here: Vec<(String, AgentId)> = Vec::new();
        for action in actions {
            let delivery = match action {
                Action::Deliver(i) if bounds.partial_order => Some(state.delivery_key(i)),
                _ => None,
            };
            if let Some(d) = &delivery {
                if sleep.contains(d) {
                    out.slept += 1;
                    continue;
                }
            }
            // Only deliveries commute (with deliveries to other agents);
            // a timer, a fault or an injection may touch anything.
            let child_sleep: Sleep = match &delivery {
                Some((_, to)) => sleep.iter().chain(taken_here.iter()).filter(|(_, r)| r != to).cloned().collect(),
                None => BTreeSet::new(),
            };
            if let Some(d) = delivery {
                taken_here.push(d);
            }
            let mut next = state.clone();
            next.apply(&world, &action);
            out.states += 1;
            let fp = next.fingerprint();
            let queue_sleep = match seen.get_mut(&fp) {
                Some(old) if old.is_subset(&child_sleep) => continue,
                Some(old) => {
                    // Reached again with more awake: explore what woke.
                    *old = old.intersection(&child_sleep).cloned().collect();
                    old.clone()
                }
                None => {
                    seen.insert(fp, child_sleep.clone());
                    out.unique += 1;
                    if out.unique.is_multiple_of(10_000) {
                        out.depth = out.depth.max(depth + 1);
                        progress(&out);
                    }
                    child_sleep
                }
            };
            if let Some(v) = next.violation(&world, false, &world.require_plan) {
                out.depth = out.depth.max(depth + 1);
                out.counterexample = Some(next.counterexample(&world, v));
                return out;
            }
            if out.unique as usize >= bounds.max_states {
                out.stopped_by = Some("max-states");
                return out;
            }
            queue.push_back((next, depth + 1, queue_sleep));
        }
    }
    out
}

impl State {
    fn schedule(&mut self, at: Millis, agent: AgentId, input: DueInput) {
        self.next_order += 1;
        let due = Due { at, order: self.next_order, agent, input };
        let i = self.timers.partition_point(|d| (d.at, d.order) <= (due.at, due.order));
        self.timers.insert(i, due);
    }

    /// A delivery's identity that does not depend on the order messages were
    /// sent in (message numbers do): who, to whom, what. Its recipient too.
    fn delivery_key(&self, i: usize) -> (String, AgentId) {
        let d = &self.flight[i];
        (format!("{:?}", (d.sender, d.to, &d.envelope)), d.to)
    }

    fn actions_here(&self) -> Vec<Action> {
        let mut out: Vec<Action> = (0..self.flight.len()).map(Action::Deliver).collect();
        if !self.timers.is_empty() {
            out.push(Action::Fire);
        }
        if self.budgets.drop > 0 {
            out.extend((0..self.flight.len()).map(Action::Drop));
        }
        if self.budgets.duplicate > 0 {
            out.extend((0..self.flight.len()).map(Action::Duplicate));
        }
        let team = self.roster.statuses.len() as u32;
        for a in (1..team).map(AgentId) {
            match self.roster.statuses[a.index()] {
                RosterStatus::Crashed => out.push(Action::Restart(a)),
                s if s.is_active() && self.budgets.crash > 0 => out.push(Action::Crash(a)),
                _ => {}
            }
        }
        if self.budgets.forge > 0 {
            out.extend(self.injections());
        }
        out
    }

    /// What the adversary could send now: for every id it has seen, each of
    /// the four protocol messages quoting it (answers both ways), claiming to
    /// come from any member, to any other member.
    fn injections(&self) -> Vec<Action> {
        let team = self.roster.statuses.len() as u32;
        let mut out = Vec::new();
        for &id in &self.seen {
            let messages = [
                Message::ShutdownRequest { request_id: id, reason: None, deadline: Millis::NEVER },
                Message::ShutdownResponse { request_id: id, approve: true, reason: None },
                Message::ShutdownResponse { request_id: id, approve: false, reason: Some("forged".into()) },
                Message::PlanApprovalRequest { request_id: id, plan: "forged".into(), deadline: Millis::NEVER },
                Message::PlanApprovalResponse { request_id: id, approve: true, feedback: None },
                Message::PlanApprovalResponse { request_id: id, approve: false, feedback: Some("forged".into()) },
            ];
            for message in messages {
                for from in (0..team).map(AgentId) {
                    for to in (0..team).map(AgentId).filter(|t| *t != from) {
                        out.push(Action::Inject { from, to, message: message.clone() });
                    }
                }
            }
        }
        out
    }

    fn record(&mut self, event: Event) {
        let follows = crate::team::deadlock::observe(&mut self.waits, &event, &self.policy);
        self.log.push(Stamped { t: self.now, event });
        for e in follows {
            if matches!(e, Event::Deadlock { .. }) && self.deadlock_at.is_none() {
                self.deadlock_at = Some(self.log.len());
            }
            self.log.push(Stamped { t: self.now, event: e });
        }
    }

    fn apply(&mut self, w: &World, action: &Action) {
        match *action {
            Action::Deliver(i) => {
                let mut d = self.flight.remove(i);
                d.at = self.now;
                self.taken.push(Taken::Deliver { at: self.now, seq: d.seq, to: d.to });
                self.deliver(w, d);
            }
            Action::Fire => {
                let due = self.timers.remove(0);
                self.now = self.now.max(due.at);
                self.taken.push(Taken::Fire { at: self.now, agent: due.agent });
                let input = match due.input {
                    DueInput::Start => Input::Start,
                    DueInput::Wake(TimerKind::Deadline) => Input::Wake(Timer::Deadline),
                    DueInput::Wake(TimerKind::WorkStep) => Input::Wake(Timer::WorkStep),
                    DueInput::Script(k) => Input::Script(w.scripts[k].clone()),
                };
                let scripted = matches!(due.input, DueInput::Script(_) | DueInput::Start);
                if scripted && !self.roster.is_active(due.agent) {
                    return;
                }
                self.step(w, due.agent, input);
            }
            Action::Drop(i) => {
                let d = self.flight.remove(i);
                self.budgets.drop -= 1;
                self.taken.push(Taken::Drop { at: self.now, seq: d.seq });
                let message_type = d.envelope.message.type_name();
                self.record(Event::Dropped { seq: d.seq, to: d.to, message_type, cause: Cause::Drop });
            }
            Action::Crash(a) => {
                self.budgets.crash -= 1;
                self.taken.push(Taken::Crash { at: self.now, agent: a });
                // The explorer may restart it later: the oracle must not call
                // the crash final, so it is told a restart is possible.
                self.record(Event::Crash { agent: a, restart_at: Some(self.now) });
                self.roster.statuses[a.index()] = RosterStatus::Crashed;
                self.record(Event::Status { agent: a, status: RosterStatus::Crashed });
                // Its timers and its step in progress die with the process.
                self.timers.retain(|d| d.agent != a);
                self.incarnations[a.index()] += 1;
            }
            Action::Restart(a) => {
                self.taken.push(Taken::Restart { at: self.now, agent: a });
                self.record(Event::Restart { agent: a });
                self.roster.statuses[a.index()] = RosterStatus::Working;
                self.record(Event::Status { agent: a, status: RosterStatus::Working });
                let incarnation = self.incarnations[a.index()];
                self.step(w, a, Input::Restart { incarnation });
            }
            Action::Inject { from, to, ref message } => {
                self.budgets.forge -= 1;
                let adversary = AgentId(self.roster.statuses.len() as u32);
                self.next_seq += 1;
                let seq = self.next_seq;
                self.taken.push(Taken::Inject { at: self.now, seq, from, to, message: message.clone() });
                self.sent_in.insert(seq, self.taken.len() - 1);
                let message_type = message.type_name();
                self.record(Event::Forge { seq, claimed_from: from, to, message_type });
                let m = message;
                self.record(Event::Send {
                    seq,
                    from: adversary,
                    to: Address::Agent(to),
                    message_type,
                    request_id: m.request_id(),
                    approve: m.approval(),
                    words: m.words().cloned(),
                });
                let envelope = Envelope { from, to: Address::Agent(to), sent_at: self.now, message: message.clone() };
                self.flight.push(Delivery { seq, envelope, sender: adversary, to, at: self.now });
            }
            Action::Duplicate(i) => {
                let d = self.flight[i].clone();
                self.budgets.duplicate -= 1;
                self.taken.push(Taken::Duplicate { at: self.now, seq: d.seq });
                self.record(Event::Fault { seq: d.seq, fault: "duplicate", detail: "delivered twice".into() });
                self.flight.insert(i, d);
            }
        }
    }

    fn deliver(&mut self, w: &World, d: Delivery) {
        let to = d.to;
        let status = self.roster.statuses[to.index()];
        if !status.is_active() {
            let cause = match status {
                RosterStatus::Killed => Cause::Killed,
                RosterStatus::Crashed => Cause::Crash,
                _ => Cause::Undeliverable,
            };
            let message_type = d.envelope.message.type_name();
            self.record(Event::Dropped { seq: d.seq, to, message_type, cause });
            return;
        }
        let m = &d.envelope.message;
        let (message_type, request_id) = (m.type_name(), m.request_id());
        self.record(Event::Deliver {
            seq: d.seq,
            sender: d.sender,
            claimed_from: d.envelope.from,
            to,
            message_type,
            request_id,
        });
        self.step(w, to, Input::Deliver(d));
    }

    /// Hands `input` to agent `me` and carries out what it decides, as the
    /// actor shell does.
    fn step(&mut self, w: &World, me: AgentId, input: Input) {
        let mut out = Vec::new();
        let mut ctx = Ctx {
            me,
            now: self.now,
            rng: &mut self.rngs[me.index()],
            dir: &self.roster,
            policy: w.policy,
            out: &mut out,
            tracing: true,
        };
        self.agents[me.index()].handle(input, &mut ctx);
        for cmd in out {
            self.perform(w, me, cmd);
        }
    }

    fn perform(&mut self, w: &World, me: AgentId, cmd: Command) {
        match cmd {
            Command::Send(env) => {
                let recipients: Vec<AgentId> = match env.to {
                    Address::Agent(to) => vec![to],
                    Address::Everyone => (0..self.roster.statuses.len() as u32)
                        .map(AgentId)
                        .filter(|a| *a != me && self.roster.is_active(*a))
                        .collect(),
                };
                for to in recipients {
                    self.next_seq += 1;
                    let seq = self.next_seq;
                    let m = &env.message;
                    self.record(Event::Send {
                        seq,
                        from: me,
                        to: Address::Agent(to),
                        message_type: m.type_name(),
                        request_id: m.request_id(),
                        approve: m.approval(),
                        words: m.words().cloned(),
                    });
                    if let Some(id) = m.request_id() {
                        if !self.seen.contains(&id) {
                            self.seen.push(id);
                        }
                    }
                    self.sent_in.insert(seq, self.taken.len().saturating_sub(1));
                    self.flight.push(Delivery { seq, envelope: env.clone(), sender: me, to, at: self.now });
                }
            }
            Command::Wake { at, timer } => {
                let kind = match timer {
                    Timer::Deadline => TimerKind::Deadline,
                    Timer::WorkStep => TimerKind::WorkStep,
                };
                self.schedule(at, me, DueInput::Wake(kind));
            }
            Command::Record(e) => self.record(*e),
            Command::Status(s) => {
                if self.roster.statuses[me.index()] != s {
                    self.roster.statuses[me.index()] = s;
                    self.record(Event::Status { agent: me, status: s });
                }
            }
            Command::FileStep { path, done, total } => {
                self.files.insert(path.to_string(), FileState { done, total, writer: me });
                self.record(Event::FileStep { agent: me, path: path.to_string(), done, total });
            }
            Command::Kill(target) => {
                let crashed = self.roster.statuses[target.index()] == RosterStatus::Crashed;
                if self.roster.is_active(target) || crashed {
                    self.roster.statuses[target.index()] = RosterStatus::Killed;
                    self.record(Event::Status { agent: target, status: RosterStatus::Killed });
                    // Its timers die with it.
                    self.timers.retain(|d| d.agent != target);
                    let name = &w.names[target.index()];
                    let text = format!("{name} did not answer its shutdown request in time: force-stopped");
                    self.record(Event::Alert { agent: target, text });
                }
            }
            Command::Stop => {
                self.timers.retain(|d| d.agent != me);
            }
        }
    }

    /// Equal for states that behave the same from here on: the log, message
    /// numbers and the actions taken are history, not state.
    fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.now.hash(&mut h);
        self.roster.statuses.hash(&mut h);
        self.budgets.hash(&mut h);
        // The multiset of messages in flight, whatever order they were sent in.
        let mut flight: Vec<String> =
            self.flight.iter().map(|d| format!("{:?}", (d.sender, d.to, &d.envelope))).collect();
        flight.sort();
        flight.hash(&mut h);
        for d in &self.timers {
            (d.at, d.agent, &d.input).hash(&mut h);
        }
        for a in &self.agents {
            format!("{a:?}").hash(&mut h);
        }
        for (path, f) in &self.files {
            (path, f.done, f.total).hash(&mut h);
        }
        // What the adversary knows, not the order it learnt it in.
        let mut seen = self.seen.clone();
        seen.sort();
        seen.hash(&mut h);
        self.incarnations.hash(&mut h);
        h.finish()
    }

    /// The first invariant the path to this state broke. Before the end, the
    /// checks that only make sense once nothing more can happen (a request
    /// still pending, a message never delivered) are left out.
    fn violation(&self, w: &World, at_end: bool, require_plan: &[bool]) -> Option<Finding> {
        if let (true, Some(i)) = (w.policy.fail_on_deadlock, self.deadlock_at) {
            let mut names = Names { agents: w.names.clone(), labels: BTreeMap::new() };
            names.learn_labels(&self.log);
            let detail = self.log[i].describe(&names).trim_start().to_string();
            return Some(Finding::Deadlock(detail));
        }
        let stop = if at_end { Stop::Settled } else { Stop::EndTime };
        let relevant = |v: &oracle::Violation| {
            at_end || !matches!(v.invariant, Invariant::SingleTerminal | Invariant::NoSilentLoss)
        };
        // Most states break nothing: check them against bare names first,
        // and learn the requests' labels only to word a violation found.
        let log = oracle::Log { names: &w.bare_names, events: &self.log, ended_at: self.now, stop };
        if !oracle::check_log(&log, w.policy, require_plan).iter().any(relevant) {
            return None;
        }
        let mut names = Names { agents: w.names.clone(), labels: BTreeMap::new() };
        names.learn_labels(&self.log);
        let log = oracle::Log { names: &names, events: &self.log, ended_at: self.now, stop };
        oracle::check_log(&log, w.policy, require_plan).into_iter().find(relevant).map(Finding::Broken)
    }

    fn counterexample(&self, w: &World, f: Finding) -> Counterexample {
        let (broke, detail) = match f {
            Finding::Broken(v) => (Broke::Invariant(v.invariant), v.detail),
            Finding::Deadlock(detail) => (Broke::Deadlock, detail),
        };
        Counterexample {
            broke,
            detail,
            actions: self.taken.iter().map(|t| t.describe(&w.names)).collect(),
            taken: self.taken.clone(),
            sent_in: self.sent_in.clone(),
            names: Names { agents: w.names.clone(), labels: BTreeMap::new() },
            events: self.log.clone(),
        }
    }
}
