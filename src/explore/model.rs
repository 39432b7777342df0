//! The scenario as a state machine the explorer can step: a [`State`] is
//! everything that decides the future, an [`Action`] is one thing that can
//! happen next, and [`Model::apply`] carries it out with the same pure agent
//! logic the actors run, the way the actor shell does, and feeds every event
//! to the oracle's [`Watch`] as it happens.
//!
//! No log is kept: a state carries the watcher, which knows what the oracle
//! needs of the past. A caller that wants the events (a counterexample, the
//! conformance test) passes a log to `apply`.

use super::Budgets;
use super::Subject;
use crate::agent::{Agent, Command, Ctx, IdStreams, Input, Lead, Roster, Script, Teammate, Timer};
use crate::oracle::{Invariant, Violation, Watch};
use crate::protocol::{Address, AgentId, Canon, Delivery, Directory, Envelope, Message, Millis, Policy, RequestId};
use crate::trace::{Cause, Event, Names, RosterStatus, Stamped};
use crate::world::{FileState, Scheduled, Stop};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One move from a state to the next.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Deliver the message in flight at this index.
    Deliver(usize),
    /// Fire this agent's next timer, which must be due at the earliest
    /// instant any timer is. Each agent takes its own timers in the order
    /// they were set (its mailbox is first in, first out); two agents' timers
    /// due at the same millisecond may go either way, as the actors' do
    /// (each actor handles its whole mailbox when it runs).
    Fire(AgentId),
    Drop(usize),
    Duplicate(usize),
    /// A running teammate crashes: its mailbox and its step in progress are
    /// lost. With `restart`, it may come back later (`Restart`); without, the
    /// crash is final, as a file's crash with no `restart` is.
    Crash {
        agent: AgentId,
        restart: bool,
    },
    /// A crashed teammate comes back: the restart is logged now, and the
    /// teammate takes it up as its next input (another agent's step may come
    /// first, as in the runtime, where the restart waits in its mailbox; a
    /// delivery to the teammate itself may not: it queues behind the restart).
    Restart(AgentId),
    /// The adversary sends this message, claiming `from`.
    Inject {
        from: AgentId,
        to: AgentId,
        message: Message,
    },
    /// The clock moves to this time, no later than the earliest timer. The
    /// search never takes it (a delivery at a timer's instant stands for
    /// every arrival until the next timer); replaying a real run does, to
    /// deliver its messages when the run did.
    Wait(Millis),
}

/// Something due at a time: a scripted step, an agent's timer, its start.
#[derive(Clone, Debug)]
pub(crate) struct Due {
    pub at: Millis,
    /// Scheduling order among timers due at the same time.
    order: u64,
    pub agent: AgentId,
    pub input: DueInput,
}

#[derive(Clone, Debug)]
pub(crate) enum DueInput {
    Start,
    Wake(Timer),
    Script(usize),
    /// Take up a restart as this incarnation.
    Restart(u32),
    /// The file's fault at this place in `Model::faults` (a crash or a
    /// forgery at its time). The network's, not the agent's: it outlives a
    /// crash of the agent it concerns.
    Fault(usize),
    /// The restart a file's crash scheduled.
    FaultRestart,
}

impl DueInput {
    /// Whether it dies with its agent (a crash or kill takes the agent's
    /// timers and mailbox; the file's faults go on).
    fn dies_with_agent(&self) -> bool {
        !matches!(self, DueInput::Fault(_) | DueInput::FaultRestart)
    }
}

/// What broke, as the explorer first sees it.
#[derive(Clone, Debug)]
pub enum Finding {
    Broken(Violation),
    /// A deadlock formed and the policy says any deadlock fails.
    Deadlock(String),
}

/// What a state knows of one agent besides its own state.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// How far into its request-id stream the agent has drawn (a ChaCha
    /// word position, which an explored run never takes past 64 bits): 8
    /// bytes instead of a 300-byte generator, remade when used.
    rng: u64,
    /// A crash increments it.
    incarnation: u32,
    /// Crashed, and a restart may follow: the kill default kills it (the
    /// restart must not undo that); a final crash stays as it is.
    may_restart: bool,
}

/// One state of the search.
#[derive(Clone, Debug)]
pub struct State {
    pub(crate) now: Millis,
    /// Shared until stepped: a transition changes one or two agents, so a
    /// state's copy shares the rest with its parent instead of copying them.
    pub(crate) agents: SmallVec<[Arc<Agent>; 8]>,
    pub(crate) roster: Roster,
    /// Per agent: its RNG, incarnation, whether a restart may come. One
    /// vector, so copying a state allocates once for them all.
    slots: SmallVec<[Slot; 8]>,
    /// On the heap, unlike the agents and their slots: a state's box must
    /// stay under the allocator's fast size (about 1 KB; at 1.8 KB every copy
    /// took glibc's slow path, a sixth of the explorer's time).
    pub(crate) flight: Vec<Delivery>,
    pub(crate) timers: Vec<Due>,
    pub(crate) budgets: Budgets,
    watch: Watch,
    /// Shared until written (most steps write nothing).
    pub(crate) files: Arc<Vec<(String, FileState)>>,
    /// The last message number given: history, never hashed.
    pub(crate) next_seq: u64,
    next_order: u64,
    /// Events so far: the index the watcher gives the next one.
    events: usize,
    /// Request ids the adversary has seen on the wire, in the order seen.
    /// Shared until a new id goes out.
    seen: Arc<Vec<RequestId>>,

    /// Who waits on whom, to name deadlocks as the runtime does.
    waits: crate::protocol::WaitFor,
    /// Whether the last action closed a wait-for cycle (history, not hashed).
    pub(crate) formed_deadlock: bool,
}

impl State {
    pub fn now(&self) -> Millis {
        self.now
    }

    pub fn flight(&self) -> &[Delivery] {
        &self.flight
    }

    pub fn roster(&self) -> &[RosterStatus] {
        &self.roster.statuses
    }

    pub fn agents(&self) -> &[Arc<Agent>] {
        &self.agents
    }

    pub fn files(&self) -> &[(String, FileState)] {
        &self.files
    }

    /// When the earliest timer is due, and whose it is.
    pub fn next_timer(&self) -> Option<(Millis, AgentId)> {
        self.timers.first().map(|d| (d.at, d.agent))
    }

    /// The agents with a timer due at the earliest instant, each once, in
    /// the order of their first such timer: whose timer `Fire` may take.
    pub fn due_now(&self) -> impl Iterator<Item = AgentId> + '_ {
        let first = self.timers.first().map(|d| d.at);
        self.timers
            .iter()
            .take_while(move |d| Some(d.at) == first)
            .enumerate()
            .filter(|(i, d)| !self.timers[..*i].iter().any(|e| e.agent == d.agent))
            .map(|(_, d)| d.agent)
    }

    /// Whether `a` was restarted and has not yet taken the restart up. Its
    /// mailbox then holds the restart first: the runtime puts the restart in
    /// the new incarnation's empty mailbox (the crash lost what was there, and
    /// nothing reaches a crashed agent), so nothing delivered to it can come
    /// before. Until then no delivery to it is enabled: delivered earlier, a
    /// request the dead incarnation set aside would still be set aside, and
    /// be answered by a process it was never sent to.
    pub fn taking_up_restart(&self, a: AgentId) -> bool {
        self.timers.iter().any(|d| d.agent == a && matches!(d.input, DueInput::Restart(_)))
    }

    /// The message in flight with router number `seq`.
    pub fn in_flight(&self, seq: u64) -> Option<usize> {
        self.flight.iter().position(|d| d.seq == seq)
    }

    /// Due now, ahead of every timer due now: the runtime puts a restart in
    /// the agent's mailbox when it happens, so the agent takes it up before
    /// anything handed to it later (a scripted step due this millisecond).
    fn schedule_first(&mut self, agent: AgentId, input: DueInput) {
        let due = Due { at: self.now, order: 0, agent, input };
        let i = self.timers.partition_point(|d| (d.at, d.order) <= (due.at, due.order));
        self.timers.insert(i, due);
    }

    fn schedule(&mut self, at: Millis, agent: AgentId, input: DueInput) {
        self.next_order += 1;
        let due = Due { at, order: self.next_order, agent, input };
        let i = self.timers.partition_point(|d| (d.at, d.order) <= (due.at, due.order));
        self.timers.insert(i, due);
    }
}

/// The parts of a scenario every state shares.
pub struct Model {
    pub(crate) policy: Policy,
    pub(crate) scripts: Vec<Script>,
    pub(crate) names: Vec<String>,
    bare_names: Names,
    pub(crate) require_plan: Vec<bool>,
    /// Teammates that are interchangeable (same behaviour, same plan gate),
    /// as groups of two or more; empty when symmetry is off.
    groups: Vec<Vec<AgentId>>,
    /// The file's crashes and forgeries, played at their times.
    faults: Vec<Scheduled>,
    /// Every message arrives (or is lost) within this of being sent: no
    /// timer fires past the moment a message in flight is due by. `None`:
    /// no bound, any message may arrive after any timer.
    latency_bound: Option<Millis>,
    /// The invariants the file expects broken (it switches a defence off to
    /// show one): a finding of these does not end the search.
    expected: Vec<Invariant>,
    /// The seed the agents' request-id streams derive from: the one `run`
    /// uses by default, so that `explore FILE` and `run FILE` name every
    /// request alike.
    seed: u64,
    start: State,
}

impl Model {
    /// The scenario's team and script, with `budgets` faults to inject.
    /// With `symmetry`, identical teammates are interchangeable in the
    /// fingerprint. The file's own `[[fault]]`s are not part of this model
    /// (see [`Model::playing_file_faults`]).
    pub fn new(scenario: &dyn Subject, budgets: Budgets, symmetry: bool) -> Model {
        Model::build(scenario, budgets, symmetry, Vec::new())
    }

    /// As [`Model::new`], with the file's crashes (and their restarts) and
    /// forgeries played at their times. Its other faults are not: see
    /// [`super::plan_file_faults`], which says what becomes of each.
    pub fn playing_file_faults(scenario: &dyn Subject, budgets: Budgets, symmetry: bool) -> Model {
        let faults: Vec<(Millis, Scheduled)> = scenario
            .team()
            .timed
            .iter()
            .filter(|(_, f)| matches!(f, Scheduled::Crash { .. } | Scheduled::Forge { .. }))
            .cloned()
            .collect();
        Model::build(scenario, budgets, symmetry, faults)
    }

    fn build(scenario: &dyn Subject, budgets: Budgets, symmetry: bool, faults: Vec<(Millis, Scheduled)>) -> Model {
        let spec = scenario.team();
        let policy = spec.policy.clone();
        let mut names = vec![crate::protocol::LEAD_NAME.to_string()];
        names.extend(spec.teammates.iter().map(|(n, _)| n.clone()));
        // After the team: the adversary, who can inject but is not a member.
        names.push("adversary".to_string());
        let defences = policy.defences;
        let lead = Lead::new(defences, spec.lead.on_plan.clone(), spec.lead.feedback.clone());
        let mut agents: SmallVec<[Arc<Agent>; 8]> = smallvec::smallvec![Arc::new(Agent::Lead(Box::new(lead)))];
        agents
            .extend(spec.teammates.iter().map(|(_, t)| Arc::new(Agent::Teammate(Teammate::new(t.clone(), defences)))));
        let n = agents.len();
        let require_plan = scenario.require_plan();
        let mut start = State {
            now: Millis::ZERO,
            agents,
            roster: Roster { statuses: vec![RosterStatus::Working; n] },
            slots: smallvec::smallvec![Slot::default(); n],
            flight: Vec::new(),
            timers: Vec::new(),
            budgets,
            watch: Watch::new(&require_plan),
            files: Arc::default(),
            next_seq: 0,
            next_order: 0,
            events: 0,
            seen: Arc::default(),
            waits: Default::default(),
            formed_deadlock: false,
        };
        // Teammates start first, then the lead, as the runtime starts them.
        for i in (1..n).chain(std::iter::once(0)) {
            start.schedule(Millis::ZERO, AgentId(i as u32), DueInput::Start);
        }
        for (k, step) in spec.steps.iter().enumerate() {
            start.schedule(step.at, step.agent, DueInput::Script(k));
        }
        for (k, (at, f)) in faults.iter().enumerate() {
            // Filed under the agent it concerns, for `Fire`'s choice.
            let agent = match f {
                Scheduled::Crash { agent, .. } => *agent,
                Scheduled::Forge { to, .. } => *to,
                _ => AgentId::LEAD,
            };
            start.schedule(*at, agent, DueInput::Fault(k));
        }
        let groups = if symmetry { groups(scenario) } else { Vec::new() };
        Model {
            policy,
            scripts: spec.steps.iter().map(|s| s.script.clone()).collect(),
            bare_names: Names { agents: names.clone(), labels: BTreeMap::new() },
            names,
            require_plan,
            groups,
            faults: faults.into_iter().map(|(_, f)| f).collect(),
            latency_bound: None,
            expected: scenario.expected_violations(),
            seed: scenario.seed(),
            start,
        }
    }

    /// The agents draw their request ids as in a run with `seed` (by
    /// default, the scenario's own seed).
    pub fn with_seed(mut self, seed: u64) -> Model {
        self.seed = seed;
        self
    }

    /// Messages arrive within `bound` of being sent (see `latency_bound`).
    pub fn with_latency_bound(mut self, bound: Option<Millis>) -> Model {
        self.latency_bound = bound;
        self
    }

    /// Whether time may move to `at`: with a latency bound, not past the
    /// moment the oldest message in flight must have arrived by.
    fn may_reach(&self, s: &State, at: Millis) -> bool {
        let Some(bound) = self.latency_bound else { return true };
        s.flight.iter().all(|d| at <= d.envelope.sent_at.after(bound))
    }

    /// Whether the file expects `f` (an invariant it switches a defence off
    /// to show broken): the search records it and goes on.
    pub fn expects(&self, f: &Finding) -> bool {
        matches!(f, Finding::Broken(v) if self.expected.contains(&v.invariant))
    }

    /// The first of `found` the file does not expect, else the first.
    fn first_unexpected(&self, found: Vec<Violation>) -> Option<Finding> {
        let k = found.iter().position(|v| !self.expected.contains(&v.invariant)).unwrap_or(0);
        found.into_iter().nth(k).map(Finding::Broken)
    }

    /// Whether the file's own crashes and forgeries are part of the model.
    pub fn plays_file_faults(&self) -> bool {
        !self.faults.is_empty()
    }

    pub fn start(&self) -> State {
        self.start.clone()
    }

    /// Groups of interchangeable teammates, each as the agents in it.
    pub fn symmetry_groups(&self) -> &[Vec<AgentId>] {
        &self.groups
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Every action the search takes from `s`, in a fixed order (an action
    /// is named by its place in this list).
    pub fn actions(&self, s: &State, out: &mut Vec<Action>) {
        out.clear();
        // Nearly always none: a restart is taken up in its agent's next step.
        let restarting: SmallVec<[AgentId; 2]> =
            s.timers.iter().filter(|d| matches!(d.input, DueInput::Restart(_))).map(|d| d.agent).collect();
        out.extend((0..s.flight.len()).filter(|&i| !restarting.contains(&s.flight[i].to)).map(Action::Deliver));
        if s.timers.first().is_some_and(|d| self.may_reach(s, d.at)) {
            out.extend(s.due_now().map(Action::Fire));
        }
        if s.budgets.drop > 0 {
            out.extend((0..s.flight.len()).map(Action::Drop));
        }
        if s.budgets.duplicate > 0 {
            out.extend((0..s.flight.len()).map(Action::Duplicate));
        }
        let team = s.roster.statuses.len() as u32;
        for a in (1..team).map(AgentId) {
            match s.roster.statuses[a.index()] {
                RosterStatus::Crashed if s.slots[a.index()].may_restart => out.push(Action::Restart(a)),
                st if st.is_active() && s.budgets.crash > 0 => {
                    out.push(Action::Crash { agent: a, restart: true });
                    out.push(Action::Crash { agent: a, restart: false });
                }
                _ => {}
            }
        }
        if s.budgets.forge > 0 {
            self.injections(s, out);
        }
    }

    /// What the adversary could send now: for every id it has seen, each of
    /// the four protocol messages quoting it (answers both ways), claiming to
    /// come from any member, to any other member.
    fn injections(&self, s: &State, out: &mut Vec<Action>) {
        let team = s.roster.statuses.len() as u32;
        let forged: crate::protocol::Text = "forged".into();
        for &id in s.seen.iter() {
            let messages = [
                Message::ShutdownRequest { request_id: id, reason: None, deadline: Millis::NEVER },
                Message::ShutdownResponse { request_id: id, approve: true, reason: None },
                Message::ShutdownResponse { request_id: id, approve: false, reason: Some(forged.clone()) },
                Message::PlanApprovalRequest { request_id: id, plan: forged.clone(), deadline: Millis::NEVER },
                Message::PlanApprovalResponse { request_id: id, approve: true, feedback: None },
                Message::PlanApprovalResponse { request_id: id, approve: false, feedback: Some(forged.clone()) },
            ];
            for message in messages {
                for from in (0..team).map(AgentId) {
                    for to in (0..team).map(AgentId).filter(|t| *t != from) {
                        out.push(Action::Inject { from, to, message: message.clone() });
                    }
                }
            }
        }
    }

    /// Whether delivering message `i` commutes with delivering any other
    /// message to another agent for which this also holds: true of messages
    /// to teammates when teammates talk only to the lead. Not of messages to
    /// the lead: its step may kill a teammate (a deadline due by now expires
    /// first) and its answers depend on whether their recipient still runs.
    /// Nor between peers, who send to each other.
    pub fn commutes(&self, s: &State, i: usize) -> bool {
        self.policy.strict_hierarchy && !s.flight[i].to.is_lead()
    }

    /// Whether `a` can be taken from `s` (the conformance replay asks before
    /// it takes an action the search would not have offered, like `Wait`).
    pub fn enabled(&self, s: &State, a: &Action) -> bool {
        match a {
            Action::Deliver(i) => *i < s.flight.len() && !s.taking_up_restart(s.flight[*i].to),
            Action::Fire(a) => {
                s.due_now().any(|x| x == *a) && s.timers.first().is_some_and(|d| self.may_reach(s, d.at))
            }
            Action::Drop(i) => *i < s.flight.len() && s.budgets.drop > 0,
            Action::Duplicate(i) => *i < s.flight.len() && s.budgets.duplicate > 0,
            Action::Crash { agent, .. } => !agent.is_lead() && s.roster.is_active(*agent) && s.budgets.crash > 0,
            Action::Restart(x) => {
                s.roster.statuses.get(x.index()) == Some(&RosterStatus::Crashed) && s.slots[x.index()].may_restart
            }
            Action::Inject { from, to, .. } => {
                s.budgets.forge > 0 && from != to && s.roster.exists(*from) && s.roster.exists(*to)
            }
            Action::Wait(t) => *t >= s.now && s.timers.first().is_none_or(|d| *t <= d.at) && self.may_reach(s, *t),
        }
    }

    /// Carries out `action` (which must be enabled), appending the events
    /// it makes to `log` when one is given. Returns the first thing it broke
    /// that the file does not expect, or else the first it does.
    pub fn apply(&self, s: &mut State, action: &Action, log: Option<&mut Vec<Stamped>>) -> Option<Finding> {
        let mut step = self.carry_out(s, action, log);
        step.found.take().or_else(|| step.expected.drain(..).next().map(Finding::Broken))
    }

    /// As [`Model::apply`], for the search: returns only what the file does
    /// not expect, and adds to `expected` the first violation of each
    /// invariant it does expect (the same action may break both kinds).
    pub fn apply_noting(&self, s: &mut State, action: &Action, expected: &mut Vec<Violation>) -> Option<Finding> {
        let mut step = self.carry_out(s, action, None);
        expected.append(&mut step.expected);
        step.found.take()
    }

    fn carry_out<'a>(&'a self, s: &'a mut State, action: &Action, log: Option<&'a mut Vec<Stamped>>) -> Step<'a> {
        s.formed_deadlock = false;
        let mut step = Step { m: self, s, log, found: None, expected: Vec::new(), scratch: Vec::new() };
        step.act(action);
        step
    }

    /// The end-of-run checks, for a state where nothing more can happen.
    pub fn at_end(&self, s: &State) -> Option<Finding> {
        let mut out = Vec::new();
        s.watch.finish(&self.policy, &self.bare_names, s.now, Stop::Settled, &mut out);
        self.first_unexpected(out)
    }

    /// The fingerprint of `s`: equal for states that behave the same from
    /// here on, up to which of the interchangeable teammates is which and
    /// the values of request ids. The log, message numbers and the order
    /// things happened in are history, not state.
    pub fn fingerprint(&self, s: &State) -> u64 {
        let perm = self.permutation(s);
        let mut c = Canon::new(&perm);
        self.walk(s, &mut c, &perm);
        c.finish()
    }

    /// The permutation that puts each group's teammates in the order of
    /// their signatures (what each one's own corner of the state looks
    /// like). Ties keep team order: that can only merge fewer states.
    fn permutation(&self, s: &State) -> SmallVec<[u32; 16]> {
        if self.groups.is_empty() {
            return SmallVec::new();
        }
        let n = s.agents.len();
        let mut perm: SmallVec<[u32; 16]> = (0..n as u32).collect();
        let mut local: SmallVec<[u32; 16]> = smallvec::smallvec![2u32; n];
        local[0] = 0;
        for g in &self.groups {
            let mut keyed: SmallVec<[(u64, AgentId); 16]> = g
                .iter()
                .map(|&a| {
                    local[a.index()] = 1;
                    let key = signature(s, &self.scripts, a, &local);
                    local[a.index()] = 2;
                    (key, a)
                })
                .collect();
            keyed.sort_by_key(|k| k.0);
            for (slot, (_, a)) in g.iter().zip(keyed) {
                perm[a.index()] = slot.0;
            }
        }
        perm
    }

    fn walk(&self, s: &State, c: &mut Canon, perm: &[u32]) {
        c.millis(s.now);
        c.word(s.budgets.drop as u64 | (s.budgets.duplicate as u64) << 16);
        c.word(s.budgets.crash as u64 | (s.budgets.forge as u64) << 16);
        // Agents in their new order: `inverse[new] = old`.
        let mut inverse: SmallVec<[usize; 16]> = (0..s.agents.len()).collect();
        if !perm.is_empty() {
            for (old, &new) in perm.iter().enumerate() {
                inverse[new as usize] = old;
            }
        }
        for &i in &inverse {
            s.agents[i].canon(c);
            c.word(
                s.roster.statuses[i] as u64
                    | (s.slots[i].incarnation as u64) << 8
                    | (s.slots[i].may_restart as u64) << 40,
            );
        }
        c.word(s.timers.len() as u64);
        for d in &s.timers {
            c.millis(d.at);
            c.agent(d.agent);
            match &d.input {
                DueInput::Start => c.word(1),
                DueInput::Wake(t) => c.word(2 + *t as u64),
                DueInput::Script(k) => script(&self.scripts[*k], c),
                DueInput::Restart(n) => c.word(20 + *n as u64),
                DueInput::Fault(k) => c.word(1 << 40 | *k as u64),
                DueInput::FaultRestart => c.word(2 << 40),
            }
        }
        // The messages in flight as a multiset: sorted by what they say,
        // with the ids the walk has already named by their numbers.
        let mut keyed: SmallVec<[(u64, usize); 32]> = s
            .flight
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut k = Canon::new(perm);
                if let Some(id) = d.envelope.message.request_id() {
                    k.word(c.known(id).map_or(u64::MAX, u64::from));
                }
                d.canon(&mut k);
                (k.finish(), i)
            })
            .collect();
        keyed.sort_unstable();
        c.word(keyed.len() as u64);
        for (_, i) in keyed {
            s.flight[i].canon(c);
        }
        let mut files: SmallVec<[(&str, u32, u32, u32); 8]> =
            s.files.iter().map(|(p, f)| (p.as_str(), c.agent_index(f.writer), f.done, f.total)).collect();
        files.sort_unstable();
        for (p, w, done, total) in files {
            c.text(p);
            c.word(w as u64 | (done as u64) << 32);
            c.word(total as u64);
        }
        // What the adversary knows, not the order it learnt it in.
        let mut seen: SmallVec<[u32; 16]> = s.seen.iter().map(|id| c.number(*id)).collect();
        seen.sort_unstable();
        for n in seen {
            c.word(n as u64);
        }
        s.waits.canon(c);
        s.watch.canon(c);
    }

    /// The model's name for an action, as the schedule of a counterexample
    /// records it (the action's data, before it is taken).
    pub fn taken(&self, s: &State, a: &Action) -> super::Taken {
        use super::Taken;
        let at = s.now;
        match a {
            Action::Deliver(i) => Taken::Deliver { at, seq: s.flight[*i].seq, to: s.flight[*i].to },
            Action::Fire(agent) => {
                let at = s.timers.iter().find(|d| d.agent == *agent).map_or(at, |d| at.max(d.at));
                Taken::Fire { at, agent: *agent }
            }
            Action::Drop(i) => Taken::Drop { at, seq: s.flight[*i].seq },
            Action::Duplicate(i) => Taken::Duplicate { at, seq: s.flight[*i].seq },
            Action::Crash { agent, restart } => Taken::Crash { at, agent: *agent, restart: *restart },
            Action::Restart(agent) => Taken::Restart { at, agent: *agent },
            Action::Inject { from, to, message } => {
                Taken::Inject { at, seq: s.next_seq + 1, from: *from, to: *to, message: message.clone() }
            }
            Action::Wait(t) => Taken::Wait { at: *t },
        }
    }
}

/// Teammates with the same behaviour and the same plan gate, in groups of
/// two or more. Their names differ; nothing else about them does.
fn groups(scenario: &dyn Subject) -> Vec<Vec<AgentId>> {
    let mut by_spec: Vec<(String, Vec<AgentId>)> = Vec::new();
    for (i, (_, spec)) in scenario.team().teammates.iter().enumerate() {
        let key = format!("{spec:?}");
        let a = AgentId(i as u32 + 1);
        match by_spec.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(a),
            None => by_spec.push((key, vec![a])),
        }
    }
    by_spec.into_iter().map(|(_, g)| g).filter(|g| g.len() > 1).collect()
}

/// The teammate a scripted step is about.
fn script_target(s: &Script) -> Option<AgentId> {
    match s {
        Script::Shutdown { to, .. } | Script::SubmitPlan { to, .. } => Some(*to),
        Script::Say { to: Address::Agent(to), .. } => Some(*to),
        Script::Say { .. } => None,
    }
}

/// A scripted step without whom it is for.
fn script_kind(s: &Script, c: &mut Canon) {
    match s {
        Script::Shutdown { reason, label, .. } => {
            c.word(10);
            c.opt_text(reason.as_deref());
            c.opt_text(label.as_deref());
        }
        Script::SubmitPlan { plan, label, .. } => {
            c.word(11);
            c.text(plan);
            c.opt_text(label.as_deref());
        }
        Script::Say { text, .. } => {
            c.word(12);
            c.text(text);
        }
    }
}

/// A scripted step: what it does, then whom it is for.
fn script(s: &Script, c: &mut Canon) {
    script_kind(s, c);
    match s {
        Script::Shutdown { to, .. } | Script::SubmitPlan { to, .. } | Script::Say { to: Address::Agent(to), .. } => {
            c.agent(*to)
        }
        Script::Say { to: Address::Everyone, .. } => c.word(u64::MAX),
    }
}

/// A message in flight as a teammate's signature sees it: from, to, type,
/// answer, and whether it was meant for an earlier incarnation of `to`.
type Mail = (u32, u32, &'static str, Option<bool>, bool);

/// What teammate `a`'s own corner of the state looks like, with itself
/// named 1, the lead 0 and every other teammate 2 (`local`): equal for two
/// teammates in the same situation, whoever they are.
fn signature(s: &State, scripts: &[Script], a: AgentId, local: &[u32]) -> u64 {
    let mut c = Canon::new(local);
    s.agents[a.index()].canon(&mut c);
    let i = a.index();
    c.word(s.roster.statuses[i] as u64 | (s.slots[i].incarnation as u64) << 8 | (s.slots[i].may_restart as u64) << 40);
    for d in s.timers.iter().filter(|d| d.agent == a) {
        c.millis(d.at);
        c.word(matches!(d.input, DueInput::Start) as u64);
    }
    // The lead's scripted steps for it, and the lead's requests about it.
    for d in s.timers.iter().filter(|d| d.agent.is_lead()) {
        if let DueInput::Script(k) = d.input {
            if scripts.get(k).is_some_and(|x| script_target(x) == Some(a)) {
                c.millis(d.at);
                script_kind(&scripts[k], &mut c);
            }
        }
    }
    if let Some(table) = s.agents[0].table() {
        let mut about: SmallVec<[(u8, u8, u64, u64); 16]> = table
            .iter()
            .filter(|r| r.teammate() == a)
            .map(|r| (r.kind as u8, r.status as u8, r.sent_at.0, r.deadline.0))
            .collect();
        about.sort_unstable();
        for (kind, status, sent, deadline) in about {
            c.word(kind as u64 | (status as u64) << 8);
            c.word(sent);
            c.word(deadline);
        }
    }
    // Its messages in flight, as a multiset of what they are.
    let mut mail: SmallVec<[Mail; 16]> = s
        .flight
        .iter()
        .filter(|d| d.to == a || d.sender == a)
        .map(|d| {
            // The adversary is past the team: it has a name of its own, 3.
            let who = |a: AgentId| local.get(a.index()).copied().unwrap_or(3);
            let stale = d.incarnation < s.slots[d.to.index()].incarnation;
            (who(d.sender), who(d.to), d.envelope.message.type_name(), d.envelope.message.approval(), stale)
        })
        .collect();
    mail.sort_unstable();
    for (from, to, t, approve, stale) in mail {
        c.word(from as u64 | (to as u64) << 8 | (approve.map_or(2, |b| b as u64)) << 16 | (stale as u64) << 24);
        c.text(t);
    }
    c.finish()
}

thread_local! {
    static COMMANDS: std::cell::RefCell<Vec<Command>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The agents' id streams while one steps: only the stepping agent's
    /// lane is ever filled, remade from its slot's word position.
    static ID_STREAMS: std::cell::RefCell<IdStreams> = std::cell::RefCell::new(IdStreams::default());
}

/// One action being carried out.
struct Step<'a> {
    m: &'a Model,
    s: &'a mut State,
    log: Option<&'a mut Vec<Stamped>>,
    /// The first thing broken that the file does not expect.
    found: Option<Finding>,
    /// The first violation of each invariant the file expects broken.
    expected: Vec<Violation>,
    /// Violations the watcher reports for one event.
    scratch: Vec<Violation>,
}

impl Step<'_> {
    fn record(&mut self, event: Event) {
        let follows = crate::world::deadlock::observe(&mut self.s.waits, &event, &self.m.policy);
        self.witness(event);
        for e in follows {
            if matches!(e, Event::Deadlock { .. }) {
                self.s.formed_deadlock = true;
            }
            if self.m.policy.fail_on_deadlock && self.found.is_none() && matches!(e, Event::Deadlock { .. }) {
                let stamped = Stamped { t: self.s.now, event: e.clone() };
                self.found = Some(Finding::Deadlock(stamped.describe(&self.m.bare_names).trim_start().to_string()));
            }
            self.witness(e);
        }
    }

    /// The watcher sees the event, then the log keeps it.
    fn witness(&mut self, event: Event) {
        let stamped = Stamped { t: self.s.now, event };
        self.scratch.clear();
        self.s.watch.observe(&self.m.policy, &self.m.bare_names, self.s.events, &stamped, &mut self.scratch);
        self.s.events += 1;
        // Rare: most events break nothing.
        for v in self.scratch.drain(..) {
            if !self.m.expected.contains(&v.invariant) {
                self.found.get_or_insert(Finding::Broken(v));
            } else if !self.expected.iter().any(|e| e.invariant == v.invariant) {
                self.expected.push(v);
            }
        }
        if let Some(log) = self.log.as_deref_mut() {
            log.push(stamped);
        }
    }

    fn act(&mut self, action: &Action) {
        match *action {
            Action::Deliver(i) => {
                let mut d = self.s.flight.remove(i);
                d.at = self.s.now;
                self.deliver(d);
            }
            Action::Fire(agent) => {
                let Some(k) = self.s.timers.iter().position(|d| d.agent == agent) else { return };
                let due = self.s.timers.remove(k);
                self.s.now = self.s.now.max(due.at);
                let input = match due.input {
                    DueInput::Start => Input::Start,
                    DueInput::Wake(t) => Input::Wake(t),
                    DueInput::Script(k) => Input::Script(self.m.scripts[k].clone()),
                    DueInput::Restart(incarnation) => Input::Restart { incarnation },
                    DueInput::Fault(k) => return self.file_fault(k),
                    DueInput::FaultRestart => {
                        // Killed while it was down: the kill stands.
                        let crashed = self.s.roster.statuses[agent.index()] == RosterStatus::Crashed;
                        if crashed && self.s.slots[agent.index()].may_restart {
                            self.restart(agent);
                        }
                        return;
                    }
                };
                let scripted = matches!(due.input, DueInput::Script(_) | DueInput::Start);
                if scripted && !self.s.roster.is_active(due.agent) {
                    return;
                }
                self.step(due.agent, input);
            }
            Action::Wait(t) => self.s.now = self.s.now.max(t),
            Action::Drop(i) => {
                let d = self.s.flight.remove(i);
                self.s.budgets.drop -= 1;
                let message_type = d.envelope.message.type_name();
                self.record(Event::Dropped { seq: d.seq, to: d.to, message_type, cause: Cause::Drop });
            }
            Action::Crash { agent: a, restart } => {
                self.s.budgets.crash -= 1;
                // A restart may follow at any time: the oracle is told one is
                // possible (the time is the crash's own, the earliest it could be).
                self.crash(a, restart.then_some(self.s.now));
            }
            Action::Restart(a) => self.restart(a),
            Action::Inject { from, to, ref message } => {
                self.s.budgets.forge -= 1;
                self.inject(from, to, message.clone());
            }
            Action::Duplicate(i) => {
                let d = self.s.flight[i].clone();
                self.s.budgets.duplicate -= 1;
                self.record(Event::Fault { seq: d.seq, fault: "duplicate", detail: "delivered twice".into() });
                self.s.flight.insert(i, d);
            }
        }
    }

    /// `a` crashes: its timers (not the file's faults) and its step in
    /// progress die with the process; a restart follows at `restart_at` if any.
    fn crash(&mut self, a: AgentId, restart_at: Option<Millis>) {
        self.s.slots[a.index()].may_restart = restart_at.is_some();
        self.record(Event::Crash { agent: a, restart_at });
        self.s.roster.statuses[a.index()] = RosterStatus::Crashed;
        self.record(Event::Status { agent: a, status: RosterStatus::Crashed });
        // A scripted step is the world's, not the process's: the runtime hands
        // it to the agent at its time if the agent runs then (`Fire` skips it
        // otherwise), so a restarted teammate still takes up its later steps.
        let restart = restart_at.is_some();
        self.s.timers.retain(|d| {
            d.agent != a || !d.input.dies_with_agent() || (restart && matches!(d.input, DueInput::Script(_)))
        });
        self.s.slots[a.index()].incarnation += 1;
    }

    /// The restart is logged now; the teammate takes it up as its next input.
    fn restart(&mut self, a: AgentId) {
        self.s.slots[a.index()].may_restart = false;
        self.record(Event::Restart { agent: a });
        self.s.roster.statuses[a.index()] = RosterStatus::Working;
        self.record(Event::Status { agent: a, status: RosterStatus::Working });
        let incarnation = self.s.slots[a.index()].incarnation;
        self.s.schedule_first(a, DueInput::Restart(incarnation));
    }

    /// The adversary sends `message`, claiming to be `from`.
    fn inject(&mut self, from: AgentId, to: AgentId, message: Message) {
        let adversary = AgentId(self.s.roster.statuses.len() as u32);
        self.s.next_seq += 1;
        let seq = self.s.next_seq;
        let message_type = message.type_name();
        self.record(Event::Forge { seq, claimed_from: from, to, message_type });
        self.record(Event::Send {
            seq,
            from: adversary,
            to: Address::Agent(to),
            message_type,
            request_id: message.request_id(),
            approve: message.approval(),
            words: message.words().cloned(),
        });
        let now = self.s.now;
        let envelope = Envelope { from, to: Address::Agent(to), sent_at: now, message };
        let incarnation = self.s.slots[to.index()].incarnation;
        self.s.flight.push(Delivery { seq, envelope, sender: adversary, to, at: now, incarnation });
    }

    /// The file's fault `k`, at its time, as the runtime plays it.
    fn file_fault(&mut self, k: usize) {
        match &self.m.faults[k] {
            Scheduled::Crash { agent, restart_after } => {
                let agent = *agent;
                // Not running (stopped, killed, crashed): nothing to crash.
                if !self.s.roster.is_active(agent) {
                    return;
                }
                let restart_at = restart_after.map(|after| self.s.now.after(after));
                self.crash(agent, restart_at);
                if let Some(at) = restart_at {
                    self.s.schedule(at, agent, DueInput::FaultRestart);
                }
            }
            Scheduled::Forge { claimed_from, to, message, id_label } => {
                let (from, to, mut message) = (*claimed_from, *to, message.clone());
                if let Some(label) = id_label {
                    // A forgery quoting a request never made is skipped, as in the runtime.
                    let Some(id) = self.request_labelled(label) else { return };
                    message.set_request_id(id);
                }
                self.inject(from, to, message);
            }
            _ => {}
        }
    }

    /// The id of the request whose label is `label`, if one was made.
    fn request_labelled(&self, label: &str) -> Option<RequestId> {
        let names = &self.m.names;
        self.s
            .agents
            .iter()
            .filter_map(|a| a.table())
            .flat_map(|t| t.iter())
            .find_map(|r| (r.label.render(|a| names[a.index()].as_str()) == label).then_some(r.id))
    }

    fn deliver(&mut self, d: Delivery) {
        let to = d.to;
        let status = self.s.roster.statuses[to.index()];
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
        self.step(to, Input::Deliver(d));
    }

    /// Hands `input` to agent `me` and carries out what it decides, as the
    /// actor shell does.
    fn step(&mut self, me: AgentId, input: Input) {
        // The commands' buffer is reused: a step is the explorer's innermost loop.
        let mut out = COMMANDS.with(|c| std::mem::take(&mut *c.borrow_mut()));
        // Each agent its own stream, as in the runtime: an id depends only on
        // the seed and its asker's own history, so states reached by
        // different orders compare equal. The slot keeps how far it has
        // drawn; the stream is remade there only if this step draws.
        let mut ids = ID_STREAMS.with(|c| std::mem::take(&mut *c.borrow_mut()));
        ids.resume(self.m.seed, me, self.s.slots[me.index()].rng);
        let mut ctx = Ctx {
            me,
            incarnation: self.s.slots[me.index()].incarnation,
            now: self.s.now,
            ids: &mut ids,
            dir: &self.s.roster,
            policy: &self.m.policy,
            out: &mut out,
            tracing: true,
        };
        Arc::make_mut(&mut self.s.agents[me.index()]).handle(&input, &mut ctx);
        if let Some(words) = ids.take_words(me) {
            self.s.slots[me.index()].rng = words;
        }
        ID_STREAMS.with(|c| *c.borrow_mut() = ids);
        for cmd in out.drain(..) {
            self.perform(me, cmd);
        }
        COMMANDS.with(|c| *c.borrow_mut() = out);
    }

    fn perform(&mut self, me: AgentId, cmd: Command) {
        match cmd {
            Command::Send(env) => {
                let team = self.s.roster.statuses.len() as u32;
                let one;
                let everyone: Vec<AgentId>;
                let recipients: &[AgentId] = match env.to {
                    Address::Agent(to) => {
                        one = [to];
                        &one
                    }
                    Address::Everyone => {
                        everyone = (0..team).map(AgentId).filter(|a| *a != me && self.s.roster.is_active(*a)).collect();
                        &everyone
                    }
                };
                for &to in recipients {
                    self.s.next_seq += 1;
                    let seq = self.s.next_seq;
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
                        if !self.s.seen.contains(&id) {
                            Arc::make_mut(&mut self.s.seen).push(id);
                        }
                    }
                    let now = self.s.now;
                    // Stamped as the router does: meant for this life of `to`.
                    let incarnation = self.s.slots[to.index()].incarnation;
                    self.s.flight.push(Delivery { seq, envelope: env.clone(), sender: me, to, at: now, incarnation });
                }
            }
            Command::Wake { at, timer } => self.s.schedule(at, me, DueInput::Wake(timer)),
            Command::Record(e) => self.record(*e),
            Command::Status(st) => {
                if self.s.roster.statuses[me.index()] != st {
                    self.s.roster.statuses[me.index()] = st;
                    self.record(Event::Status { agent: me, status: st });
                }
            }
            Command::FileStep { path, done, total } => {
                let f = FileState { done, total, writer: me };
                let files = Arc::make_mut(&mut self.s.files);
                match files.iter_mut().find(|(p, _)| **p == *path) {
                    Some((_, old)) => *old = f,
                    None => {
                        files.push((path.to_string(), f));
                        files.sort_by(|a, b| a.0.cmp(&b.0));
                    }
                }
                self.record(Event::FileStep { agent: me, path: path.to_string(), done, total });
            }
            Command::Kill(target) => {
                // A crashed teammate whose restart may come is killed too (the
                // restart must not bring it back); a final crash stays as it is.
                let restart_due = std::mem::take(&mut self.s.slots[target.index()].may_restart);
                if self.s.roster.is_active(target) || restart_due {
                    self.s.roster.statuses[target.index()] = RosterStatus::Killed;
                    self.record(Event::Status { agent: target, status: RosterStatus::Killed });
                    // Its timers die with it.
                    self.s.timers.retain(|d| d.agent != target || !d.input.dies_with_agent());
                    let name = &self.m.names[target.index()];
                    let text = format!("{name} did not answer its shutdown request in time: force-stopped");
                    self.record(Event::Alert { agent: target, text });
                }
            }
            Command::Stop => self.s.timers.retain(|d| d.agent != me || !d.input.dies_with_agent()),
        }
    }
}
