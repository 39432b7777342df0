//! The scenario as a state machine the explorer can step. A [`State`] is the
//! world the actors run (`crate::world`, with its network holding every
//! message in flight until the search chooses when it arrives) plus the
//! agents; an [`Action`] is one of the world's choice points
//! ([`crate::world::Choice`]) or a fault the search spends from its budget;
//! [`Model::apply`] lets the world carry it out, hands whatever it put in the
//! agents' mailboxes to their turns, in order, with the world's own turn
//! function, and feeds every event to the oracle's [`Watch`].
//!
//! Nothing here decides what a command, a fault or a message does: that is
//! the world's, written once for both shells. This module chooses, and
//! fingerprints.
//!
//! No log is kept: a state carries the watcher, which knows what the oracle
//! needs of the past. A caller that wants the events (a counterexample, the
//! conformance test) passes a log to `apply`.

use super::Budgets;
use super::Subject;
use crate::agent::{Agent, Input, Script, Teammate};
use crate::oracle::{Invariant, Violation, Watch};
use crate::protocol::{Address, AgentId, Canon, Delivery, Message, Millis, RequestId};
use crate::trace::{Event, Names, RosterStatus, Stamped};
use crate::world::{choice, Choice, Due, FileState, Hand, Life, Place, Scheduled, Stop, World};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One step the search may take from a state: the world's [`Choice`], a
/// message named by its place in flight (what the search iterates over).
pub type Action = Choice<AgentId, Place>;

/// What broke, as the explorer first sees it.
#[derive(Clone, Debug)]
pub enum Finding {
    Broken(Violation),
    /// A deadlock formed and the policy says any deadlock fails.
    Deadlock(String),
}

/// One state of the search.
pub struct State {
    /// The world, as the actors would have it at this point of the run.
    pub(crate) world: World<Hand>,
    /// Shared until stepped: a transition changes one or two agents, so a
    /// state's copy shares the rest with its parent instead of copying them.
    pub(crate) agents: SmallVec<[Arc<Agent>; 8]>,
    /// Each agent's process: the incarnation it runs, whether it stopped.
    lives: SmallVec<[Life; 8]>,
    /// How far into its request-id stream each agent has drawn (a ChaCha
    /// word position): 8 bytes instead of a 300-byte generator, remade
    /// when the agent draws again.
    words: SmallVec<[u64; 8]>,
    pub(crate) budgets: Budgets,
    watch: Watch,
    /// Events so far: the index the watcher gives the next one.
    events: usize,
    /// Request ids the adversary has seen on the wire, in the order seen.
    /// Shared until a new id goes out.
    seen: Arc<Vec<RequestId>>,
    /// Whether the last action closed a wait-for cycle (history, not hashed).
    pub(crate) formed_deadlock: bool,
}

/// By hand: the processes and stream positions are plain words, copied
/// whole (`from_slice`), where a derived copy takes them one at a time.
impl Clone for State {
    fn clone(&self) -> State {
        State {
            world: self.world.clone(),
            agents: self.agents.clone(),
            lives: SmallVec::from_slice(&self.lives),
            words: SmallVec::from_slice(&self.words),
            budgets: self.budgets,
            watch: self.watch.clone(),
            events: self.events,
            seen: Arc::clone(&self.seen),
            formed_deadlock: self.formed_deadlock,
        }
    }
}

impl State {
    pub fn now(&self) -> Millis {
        self.world.now()
    }

    pub fn flight(&self) -> &[Delivery] {
        self.world.flight().unwrap_or(&[])
    }

    pub fn roster(&self) -> &[RosterStatus] {
        self.world.statuses()
    }

    pub fn agents(&self) -> &[Arc<Agent>] {
        &self.agents
    }

    pub fn files(&self) -> Vec<(String, FileState)> {
        self.world.files().iter().map(|(p, f)| (p.clone(), *f)).collect()
    }

    /// The world this state is.
    pub fn world(&self) -> &World<Hand> {
        &self.world
    }

    /// When the earliest event is due, and whose it is.
    pub fn next_timer(&self) -> Option<(Millis, AgentId)> {
        let at = self.world.queue().next_time()?;
        self.world.due_now().first().map(|o| (at, *o))
    }

    /// The owners with an event due at the earliest instant, each once.
    pub fn due_now(&self) -> impl Iterator<Item = AgentId> {
        self.world.due_now().into_iter()
    }

    /// The message in flight with router number `seq`.
    pub fn in_flight(&self, seq: u64) -> Option<usize> {
        self.world.in_flight(seq)
    }

    /// Agent `a`'s process: the incarnation it runs, whether it stopped.
    pub fn life(&self, a: AgentId) -> Life {
        self.lives[a.index()]
    }

    /// The last message number given.
    pub fn next_seq(&self) -> u64 {
        self.world.messages_numbered()
    }
}

/// The parts of a scenario every state shares.
pub struct Model {
    pub(crate) policy: crate::protocol::Policy,
    pub(crate) names: Vec<String>,
    bare_names: Names,
    pub(crate) require_plan: Vec<bool>,
    /// Teammates that are interchangeable (same behaviour, same plan gate,
    /// no fault of the file's naming them), as groups of two or more; empty
    /// when symmetry is off.
    groups: Vec<Vec<AgentId>>,
    /// Every message arrives (or is lost) within this of being sent: no
    /// event fires past the moment a message in flight is due by. `None`:
    /// no bound, any message may arrive after any event.
    latency_bound: Option<Millis>,
    /// The invariants the file expects broken (it switches a defence off to
    /// show one): a finding of these does not end the search.
    expected: Vec<Invariant>,
    /// The deadlocks the file expects, by their members' names, sorted.
    expected_deadlocks: Vec<Vec<String>>,
    /// The seed the agents' request-id streams derive from: the one `run`
    /// uses by default, so that `explore FILE` and `run FILE` name every
    /// request alike.
    seed: u64,
    /// Whether the file's own faults are in the world.
    file_faults: bool,
    /// File inboxes: message order is not free (a file's lines are), so
    /// no two deliveries are taken to commute.
    file_mode: bool,
    /// Whether the fingerprint hashes when each message in flight was sent.
    /// Only a latency bound reads it (no event may fire past the moment a
    /// message is due by), and a file inbox, which writes it into the
    /// message's line; otherwise it is history: no step, no invariant and no
    /// expectation reads it (a delivery is stamped with the time it arrives,
    /// and the clock is hashed). Hashed, the same message sent before or
    /// after an unrelated timer made two states (scenario 29, N = 3: 42,829
    /// unique states with it, 26,141 without).
    flight_times: bool,
    start: State,
    /// What the start state logged (the agents taking up their starts): a
    /// replayed schedule's log begins with it.
    start_log: Vec<Stamped>,
    /// The world before the starts are taken up.
    fresh: State,
}

impl Model {
    /// The scenario's team and script, with `budgets` faults to inject.
    /// With `symmetry`, identical teammates are interchangeable in the
    /// fingerprint. The file's own `[[fault]]`s are not part of this model
    /// (see [`Model::playing_file_faults`]).
    pub fn new(scenario: &dyn Subject, budgets: Budgets, symmetry: bool) -> Model {
        Model::build(scenario, budgets, symmetry, false)
    }

    /// As [`Model::new`], with the file's faults in the world, played as
    /// the runtime plays them (see [`super::plan_file_faults`] for the
    /// counted drops and duplicates, which become budgets, and the delays
    /// and reorders, which every order of arrival covers).
    pub fn playing_file_faults(scenario: &dyn Subject, budgets: Budgets, symmetry: bool) -> Model {
        Model::build(scenario, budgets, symmetry, true)
    }

    fn build(scenario: &dyn Subject, budgets: Budgets, symmetry: bool, file_faults: bool) -> Model {
        let mut spec = scenario.team().as_explored(file_faults);
        spec.seed = scenario.seed();
        spec.trace = true;
        let named = named_by_faults(&spec);
        let file_mode = !spec.mailbox.is_memory();
        let mut world = World::for_team(&mut spec, false, Hand::default());
        world.hold_in_flight();
        // The streams are lent to each step (see `Step::hand_over`).
        *world.id_streams_mut() = crate::agent::IdStreams::default();
        let policy = world.policy().clone();
        let names: Vec<String> = world.names().to_vec();
        let defences = policy.defences;
        let lead = spec.lead.lead(defences);
        let mut agents: SmallVec<[Arc<Agent>; 8]> = smallvec::smallvec![Arc::new(Agent::Lead(Box::new(lead)))];
        agents.extend(spec.teammates.iter().map(|(_, t)| Arc::new(Agent::Teammate(Teammate::new(t.clone())))));
        let n = agents.len();
        let require_plan = scenario.require_plan();
        world.begin(&mut spec);
        let start = State {
            world,
            agents,
            lives: smallvec::smallvec![Life::default(); n],
            words: smallvec::smallvec![0; n],
            budgets,
            watch: Watch::new(&require_plan),
            events: 0,
            seen: Arc::default(),
            formed_deadlock: false,
        };
        let groups = if symmetry && !file_mode { groups(scenario, &named) } else { Vec::new() };
        let mut model = Model {
            policy,
            bare_names: Names { agents: names.clone(), labels: BTreeMap::new() },
            names,
            require_plan,
            groups,
            latency_bound: None,
            expected: scenario.expected_violations(),
            expected_deadlocks: scenario.expected_deadlocks(),
            seed: scenario.seed(),
            file_faults,
            file_mode,
            flight_times: file_mode,
            fresh: start.clone(),
            start,
            start_log: Vec::new(),
        };
        model.fresh = model.start.clone();
        model.take_up_starts();
        model
    }

    /// The starts the run begins with are handed over at once, as the
    /// actors take them before anything is due: the search's first state.
    fn take_up_starts(&mut self) {
        let mut start = self.fresh.clone();
        let mut log = Vec::new();
        let mut step = Step::new(self, &mut start, Some(&mut log));
        step.hand_over();
        step.witness_all();
        self.start = start;
        self.start_log = log;
    }

    /// The events the start state logged, for a schedule's full log.
    pub fn start_log(&self) -> &[Stamped] {
        &self.start_log
    }

    /// The agents draw their request ids as in a run with `seed` (by
    /// default, the scenario's own seed).
    pub fn with_seed(mut self, seed: u64) -> Model {
        self.seed = seed;
        self.fresh.world.reseed_network(seed);
        self.take_up_starts();
        self
    }

    /// Messages arrive within `bound` of being sent (see `latency_bound`).
    pub fn with_latency_bound(mut self, bound: Option<Millis>) -> Model {
        self.latency_bound = bound;
        self.flight_times = self.file_mode || bound.is_some();
        self
    }

    /// The message in flight at place `i` as one word, as the fingerprint
    /// sees it: what it is, not its number (which says in what order things
    /// were sent). The sleep sets name deliveries by it.
    pub fn message_key(&self, s: &State, i: usize) -> u64 {
        let mut c = Canon::new(&[]);
        s.flight()[i].canon_timed(&mut c, self.flight_times);
        c.finish()
    }

    /// Takes `named` out of the symmetry groups: each is then unlike every
    /// other teammate, as a teammate a fault of the file names is.
    pub fn apart(mut self, named: &[AgentId]) -> Model {
        for g in &mut self.groups {
            g.retain(|a| !named.contains(a));
        }
        self.groups.retain(|g| g.len() > 1);
        self
    }

    /// Whether time may move to `at`: with a latency bound, not past the
    /// moment the oldest message in flight must have arrived by.
    fn may_reach(&self, s: &State, at: Millis) -> bool {
        let Some(bound) = self.latency_bound else { return true };
        s.flight().iter().all(|d| at <= d.envelope.sent_at.after(bound))
    }

    /// Whether the file expects `f` (an invariant it switches a defence off
    /// to show broken): the search records it and goes on.
    pub fn expects(&self, f: &Finding) -> bool {
        matches!(f, Finding::Broken(v) if self.expected.contains(&v.invariant))
    }

    /// Whether the file expects a deadlock of exactly `members`: as `run`
    /// judges it, such a deadlock fails nothing.
    fn expects_deadlock(&self, members: &[AgentId]) -> bool {
        let mut names: Vec<&str> = members.iter().map(|m| self.bare_names.agent(*m)).collect();
        names.sort_unstable();
        self.expected_deadlocks.iter().any(|e| e.iter().map(String::as_str).eq(names.iter().copied()))
    }

    /// The first of `found` the file does not expect, else the first.
    fn first_unexpected(&self, found: Vec<Violation>) -> Option<Finding> {
        let k = found.iter().position(|v| !self.expected.contains(&v.invariant)).unwrap_or(0);
        found.into_iter().nth(k).map(Finding::Broken)
    }

    /// Whether the file's own faults are part of the model.
    pub fn plays_file_faults(&self) -> bool {
        self.file_faults
    }

    pub fn start(&self) -> State {
        self.start.clone()
    }

    /// About how many bytes one state of this team holds, to pace the
    /// memory looks by (see `Gauge`): each agent costs every state its
    /// process, its stream position, a pointer to its own state, its
    /// roster entry and the watcher's record of it, and the copies a step
    /// makes of what it changes; `PER_AGENT` is that, measured on big
    /// teams (docs/explore.md, "Bounds"). An estimate: the looks themselves
    /// read the process's resident memory.
    pub fn state_bytes(&self) -> u64 {
        self.bytes_of(&self.start)
    }

    /// [`Model::state_bytes`] for `state`, whose messages in flight may be
    /// many more than the start's (a shutdown asked of ten thousand
    /// teammates puts ten thousand in every state after it), and whose
    /// queue every state copies (a script of ten thousand steps queues them
    /// all from the start: a megabyte a state, which counted as a few
    /// hundred bytes let a search pass its bound fivefold between looks).
    pub fn bytes_of(&self, state: &State) -> u64 {
        const PER_AGENT: u64 = 128;
        const BASE: u64 = 1024;
        let agents = self.names.len() as u64;
        let flight = std::mem::size_of_val(state.flight());
        let queue = state.world.queue().bytes();
        BASE + std::mem::size_of::<State>() as u64 + agents * PER_AGENT + (flight + queue) as u64
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
        let flight = s.flight().len();
        out.extend((0..flight).map(|msg| Action::Deliver { msg }));
        if s.world.queue().next_time().is_some_and(|t| self.may_reach(s, t)) {
            out.extend(s.world.due_now().into_iter().map(|owner| Action::Fire { owner }));
        }
        if s.budgets.drop > 0 {
            out.extend((0..flight).map(|msg| Action::Drop { msg }));
        }
        if s.budgets.duplicate > 0 {
            out.extend((0..flight).filter(|&i| may_duplicate(s, i)).map(|msg| Action::Duplicate { msg }));
        }
        let team = s.roster().len() as u32;
        for a in (1..team).map(AgentId) {
            match s.roster()[a.index()] {
                RosterStatus::Crashed if s.world.restart_at_any_time(a) => out.push(Action::Restart { agent: a }),
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
        let team = s.roster().len() as u32;
        let forged: crate::protocol::Text = "forged".into();
        for &id in s.seen.iter() {
            // Each protocol's request (with words if it must have some) and
            // its answer both ways (a "no" with words, which some require).
            let messages = crate::protocol::Kind::ALL.into_iter().flat_map(|kind| {
                let asks = kind.spec().request_words.required.then(|| forged.clone());
                [
                    Message::Request { kind, request_id: id, words: asks, deadline: Millis::NEVER },
                    Message::Response { kind, request_id: id, approve: true, words: None },
                    Message::Response { kind, request_id: id, approve: false, words: Some(forged.clone()) },
                ]
            });
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
    /// to teammates when teammates talk only to the lead, in memory mode.
    /// Not of messages to the lead: its step may kill a teammate (a deadline
    /// due by now expires first) and its answers depend on whether their
    /// recipient still runs. Nor between peers, who send to each other. Nor
    /// in file mode, where a delivery may tear its writer's append.
    pub fn commutes(&self, s: &State, i: usize) -> bool {
        self.policy.strict_hierarchy && !self.file_mode && !s.flight()[i].to.is_lead()
    }

    /// The seed the agents draw their request ids with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// What the end of the run still logs at `s`, where nothing more can
    /// happen: lines nobody will read, messages a partition still holds.
    pub fn end_log(&self, s: &State) -> Vec<Stamped> {
        let mut end = s.clone();
        *end.world.log_mut() = Some(Vec::new());
        Self::end(&mut end);
        end.world.log_mut().take().unwrap_or_default()
    }

    /// How a state where nothing more can happen ends, and when: as the
    /// world's rule ends a run (a team waiting on itself waits to the limit).
    pub fn ending(&self, s: &State) -> (Stop, Millis) {
        let mut end = s.clone();
        let stop = Self::end(&mut end);
        (stop, end.now())
    }

    /// Ends `end`, where nothing more can happen, by the world's rule
    /// ([`World::begin_ending`]), as the actors' run ends.
    fn end(end: &mut State) -> Stop {
        let ending = end.world.begin_ending(Stop::Settled, false);
        end.world.finish_ending(ending, false)
    }

    /// The world's choice an action is, at `s`: what a schedule records.
    pub fn choice_of(&self, s: &State, a: &Action) -> Choice {
        a.named(|agent| *agent, |&i| s.flight()[i].seq)
    }

    /// Whether `a` can be taken from `s` (the conformance replay asks before
    /// it takes an action the search would not have offered, like `Wait`).
    pub fn enabled(&self, s: &State, a: &Action) -> bool {
        let flight = s.flight().len();
        match a {
            Action::Deliver { msg: i } => *i < flight,
            Action::Fire { .. } => {
                s.world.can_choose(&self.choice_of(s, a))
                    && s.world.queue().next_time().is_some_and(|t| self.may_reach(s, t))
            }
            Action::Drop { msg: i } => *i < flight && s.budgets.drop > 0,
            Action::Duplicate { msg: i } => *i < flight && s.budgets.duplicate > 0 && may_duplicate(s, *i),
            Action::Crash { .. } => s.budgets.crash > 0 && s.world.can_choose(&self.choice_of(s, a)),
            Action::Restart { .. } => s.world.can_choose(&self.choice_of(s, a)),
            Action::Inject { .. } => s.budgets.forge > 0 && s.world.can_choose(&self.choice_of(s, a)),
            Action::Wait { at } => s.world.can_choose(&Choice::Wait { at: *at }) && self.may_reach(s, *at),
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
        match action {
            Action::Drop { .. } => super::spend(&mut s.budgets.drop),
            Action::Duplicate { .. } => super::spend(&mut s.budgets.duplicate),
            Action::Crash { .. } => s.budgets.crash -= 1,
            Action::Inject { .. } => s.budgets.forge -= 1,
            _ => {}
        }
        ROOMS.with(|r| r.borrow_mut().lend(&mut s.world));
        // By place where the action names one (the search's own list), the
        // rest as the world's choice: the same world functions either way.
        match action {
            Action::Deliver { msg: i } => s.world.deliver_at(*i),
            Action::Drop { msg: i } => s.world.drop_at(*i),
            Action::Duplicate { msg: i } => s.world.duplicate_at(*i),
            Action::Fire { owner } => s.world.fire_first_of(*owner),
            _ => {
                let choice = self.choice_of(s, action);
                s.world.choose(&choice);
            }
        }
        let mut step = Step::new(self, s, log);
        step.hand_over();
        step.witness_all();
        ROOMS.with(|r| r.borrow_mut().take_back(&mut step.s.world));
        step
    }

    /// The end-of-run checks, for a state where nothing more can happen:
    /// what the run's end still owes the log (lines nobody will read,
    /// messages a partition never let go), then the oracle's last word.
    pub fn at_end(&self, s: &State) -> Option<Finding> {
        let mut end = s.clone();
        let stop = Self::end(&mut end);
        let mut step = Step::new(self, &mut end, None);
        step.witness_all();
        if let Some(f) = step.found.take() {
            return Some(f);
        }
        let expected = std::mem::take(&mut step.expected);
        let mut out = Vec::new();
        end.watch.finish(&self.policy, &self.bare_names, end.now(), stop, &mut out);
        self.first_unexpected(out).or_else(|| expected.into_iter().next().map(Finding::Broken))
    }

    /// The fingerprint of `s`: equal for states that behave the same from
    /// here on, up to which of the interchangeable teammates is which and
    /// the values of request ids. The log, message numbers and the order
    /// things happened in are history, not state.
    pub fn fingerprint(&self, s: &State) -> u64 {
        // The walk's small vectors are filled in place (`extend`) and read by
        // reference: collected or consumed, a small vector is moved whole,
        // its unused room too, and those copies were a tenth of a state's work.
        // The queue in order once, for the signatures and the walk alike.
        let perm = self.permutation(s);
        let inverse = crate::protocol::canon::inverse_of(&perm);
        let mut c = Canon::new(&perm).with_inverse(&inverse).timing_flight(self.flight_times);
        self.walk(s, &mut c);
        c.finish()
    }

    /// The permutation that puts each group's teammates in the order of
    /// their signatures (what each one's own corner of the state looks
    /// like). Ties keep team order: that can only merge fewer states.
    fn permutation(&self, s: &State) -> SmallVec<[u32; 16]> {
        if self.groups.is_empty() {
            return SmallVec::new();
        }
        let queued = s.world.queue().in_order();
        let n = s.agents.len();
        let corners = Corners::of(s, &queued, n);
        let mut perm: SmallVec<[u32; 16]> = SmallVec::new();
        perm.extend(0..n as u32);
        let mut local: SmallVec<[u32; 16]> = SmallVec::new();
        local.extend(std::iter::repeat_n(2u32, n));
        local[0] = 0;
        for g in &self.groups {
            let mut keyed: SmallVec<[(u64, AgentId); 16]> = SmallVec::new();
            keyed.extend(g.iter().map(|&a| {
                local[a.index()] = 1;
                let key = signature(s, &queued, &corners, a, &local);
                local[a.index()] = 2;
                (key, a)
            }));
            keyed.sort_by_key(|k| k.0);
            for (slot, (_, a)) in g.iter().zip(keyed.iter()) {
                perm[a.index()] = slot.0;
            }
        }
        perm
    }

    /// Hashes every part of a state, canonically: teammates in the order
    /// `perm` gives them, request ids by the order they are met, what is
    /// unordered as a multiset. The world's simulated state hashes itself
    /// (`world::state`); every field of the explorer's own state is named
    /// below, so one added is a compile error here until it is hashed, or
    /// said not to be state.
    fn walk(&self, s: &State, c: &mut Canon) {
        let State {
            world,
            agents,
            lives,
            words: _, // names, not state: ids are numbered as met
            budgets,
            watch,
            events: _, // how many events so far: history
            seen,
            formed_deadlock: _, // what the last step did: history
        } = s;
        c.word(budgets.drop as u64 | (budgets.duplicate as u64) << 32);
        c.word(budgets.crash as u64 | (budgets.forge as u64) << 16);
        // The agents first: they name most ids, which the messages in
        // flight then find already numbered.
        for i in c.in_new_order(agents.len()) {
            agents[i].canon(c);
            c.word(lives[i].epoch as u64 | (lives[i].stopped as u64) << 32);
        }
        world.fingerprint(c);
        // What the adversary knows, not the order it learnt it in.
        let mut known: SmallVec<[u32; 16]> = SmallVec::new();
        known.extend(seen.iter().map(|id| c.number(*id)));
        known.sort_unstable();
        for &n in known.iter() {
            c.word(n as u64);
        }
        watch.canon(c);
    }

    /// The model's name for an action, as the schedule of a counterexample
    /// records it (the action's data, before it is taken).
    pub fn taken(&self, s: &State, a: &Action) -> super::Taken {
        let at = match a {
            Action::Fire { owner } => s.world.first_due_of(*owner).map_or(s.now(), |(t, _)| s.now().max(t)),
            Action::Wait { at } => *at,
            _ => s.now(),
        };
        let to = match a {
            Action::Deliver { msg } => Some(s.flight()[*msg].to),
            _ => None,
        };
        let message = match a {
            Action::Deliver { msg } | Action::Drop { msg } | Action::Duplicate { msg } => {
                s.flight().get(*msg).map(super::Moved::of)
            }
            _ => None,
        };
        // An injected message is the next the router numbers.
        let injected = matches!(a, Action::Inject { .. }).then_some(s.world.messages_numbered() + 1);
        let fires = match a {
            Action::Fire { owner } => s.world.first_event_of(*owner).map(|(_, d)| super::Fires::in_state(d, s)),
            _ => None,
        };
        super::Taken { at, choice: self.choice_of(s, a), to, injected, message, fires }
    }
}

/// An agent's process as one word: its roster status, the world's
/// incarnation and the one its process runs, whether it stopped, whether a
/// restart is due.
fn process(s: &State, i: usize) -> u64 {
    let w = &s.world;
    let life = s.lives[i];
    w.statuses()[i] as u64
        | (w.epochs()[i] as u64) << 8
        | (life.epoch as u64) << 24
        | (life.stopped as u64) << 40
        | (w.restart_due(AgentId(i as u32)) as u64) << 41
}

/// The teammates the scenario's faults name: each is unlike the others.
fn named_by_faults(spec: &crate::world::TeamSpec) -> Vec<AgentId> {
    let mut out = Vec::new();
    for (_, f) in &spec.timed {
        match f {
            Scheduled::Crash { agent, .. }
            | Scheduled::TornWrite { agent, .. }
            | Scheduled::JunkLine { agent, .. }
            | Scheduled::RepeatedDelivery { agent, .. }
            | Scheduled::DisplayCap { agent, .. }
            | Scheduled::PhantomSend { from: agent, .. }
            | Scheduled::MisroutedId { agent }
            | Scheduled::Restart { agent, .. }
            | Scheduled::Stall { agent, .. }
            | Scheduled::Unstall { agent, .. } => out.push(*agent),
            Scheduled::Forge { claimed_from, to, .. } => out.extend([*claimed_from, *to]),
            // A replay names a request by label, and with it its agents.
            Scheduled::Replay { .. } => out.extend((1..=spec.teammates.len() as u32).map(AgentId)),
            Scheduled::Cut { .. } | Scheduled::Heal { .. } | Scheduled::ReleaseReorder { .. } => {}
        }
    }
    for p in &spec.partitions {
        out.extend([p.a, p.b]);
    }
    // A request whose default on expiry passes it on to "the next teammate"
    // picks by the team's order, which no renaming of identical teammates
    // keeps: with one scripted, none of them is interchangeable.
    let passed_on = spec
        .steps
        .iter()
        .any(|s| matches!(&s.script, Script::Ask { kind, .. } if spec.policy.on_expiry(*kind).picks_by_order()));
    if passed_on {
        out.extend((1..=spec.teammates.len() as u32).map(AgentId));
    }
    for f in &spec.link_faults {
        out.extend(f.filter.from.into_iter().chain(f.filter.to));
        if f.filter.request.is_some() {
            out.extend((1..=spec.teammates.len() as u32).map(AgentId));
        }
    }
    out
}

/// Teammates with the same behaviour and the same plan gate, that no fault
/// of the file names, in groups of two or more. Their names differ; nothing
/// else about them does.
fn groups(scenario: &dyn Subject, named: &[AgentId]) -> Vec<Vec<AgentId>> {
    let mut by_spec: Vec<(String, Vec<AgentId>)> = Vec::new();
    for (i, (_, spec)) in scenario.team().teammates.iter().enumerate() {
        let a = AgentId(i as u32 + 1);
        if named.contains(&a) {
            continue;
        }
        let key = format!("{spec:?}");
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
        Script::Ask { to, .. } | Script::AskPlan { to, .. } | Script::Answer { to, .. } | Script::Respawn { to } => {
            Some(*to)
        }
        Script::Say { to: Address::Agent(to), .. } => Some(*to),
        Script::Say { .. } => None,
    }
}

/// A message in flight as a teammate's signature sees it: from, to, type,
/// answer, and whether it was meant for an earlier incarnation of `to`.
type Mail = (u32, u32, &'static str, Option<bool>, bool);

/// What each agent's signature reads of the whole state, found in one pass:
/// the queued events that are its own (the lead's scripted steps for it
/// among them), the lead's requests about it and the messages in flight
/// from or to it, each as positions in queue, table and flight order. Read
/// whole for each teammate, a state of a team of n cost n times its size
/// (4,000 teammates: 45 s for 426 states).
struct Corners {
    queued: Grouped,
    table: Grouped,
    flight: Grouped,
}

/// Positions grouped by agent, each group in the order met.
struct Grouped {
    /// Where agent i's positions start in `at` (and end: `starts[i + 1]`).
    starts: Vec<u32>,
    at: Vec<u32>,
}

impl Grouped {
    fn of(n: usize, mut pairs: Vec<(u32, u32)>) -> Grouped {
        // Stable: each agent's positions stay in the order met.
        pairs.sort_by_key(|&(agent, _)| agent);
        let mut starts = vec![0u32; n + 1];
        for &(agent, _) in &pairs {
            starts[agent as usize + 1] += 1;
        }
        for i in 0..n {
            starts[i + 1] += starts[i];
        }
        Grouped { starts, at: pairs.into_iter().map(|(_, at)| at).collect() }
    }

    fn of_agent(&self, a: AgentId) -> &[u32] {
        let i = a.index();
        &self.at[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

impl Corners {
    fn of(s: &State, queued: &[(Millis, u64, &Due)], n: usize) -> Corners {
        let in_team = |a: AgentId| a.index() < n;
        let queued = queued.iter().enumerate().filter_map(|(at, (_, _, d))| {
            let whose = match d {
                Due::Input { agent, input: Input::Script(x) } if agent.is_lead() => {
                    script_target(x).unwrap_or(AgentId::LEAD)
                }
                _ => choice::owner(d),
            };
            in_team(whose).then_some((whose.0, at as u32))
        });
        let table = s.agents[0].table().into_iter().flat_map(|t| t.iter()).enumerate();
        let table = table.filter(|(_, r)| in_team(r.teammate())).map(|(at, r)| (r.teammate().0, at as u32));
        let mut flight = Vec::new();
        for (at, d) in s.flight().iter().enumerate() {
            // Once for each agent it is from or to.
            let second = (d.sender != d.to).then_some(d.sender);
            for who in std::iter::once(d.to).chain(second).filter(|&who| in_team(who)) {
                flight.push((who.0, at as u32));
            }
        }
        Corners {
            queued: Grouped::of(n, queued.collect()),
            table: Grouped::of(n, table.collect()),
            flight: Grouped::of(n, flight),
        }
    }
}

/// What teammate `a`'s own corner of the state looks like, with itself
/// named 1, the lead 0 and every other teammate 2 (`local`): equal for two
/// teammates in the same situation, whoever they are.
fn signature(s: &State, queued: &[(Millis, u64, &Due)], corners: &Corners, a: AgentId, local: &[u32]) -> u64 {
    let i = a.index();
    let own = |agent: &Agent| {
        let mut c = Canon::new(local);
        agent.canon(&mut c);
        c.finish()
    };
    // Kept with the teammate: `local` depends only on whom it is for, and a
    // teammate stays in its place. Only the permutation reads this, and any
    // permutation is sound: a stale value could merge fewer states, no more.
    let own = match &*s.agents[i] {
        Agent::Teammate(t) => t.signature_memo(|| own(&s.agents[i])),
        lead => own(lead),
    };
    let mut c = Canon::new(local);
    c.word(own);
    c.word(process(s, i));
    for &(at, _, d) in corners.queued.of_agent(a).iter().map(|&k| &queued[k as usize]) {
        match d {
            Due::Input { agent, input: Input::Script(x) } if agent.is_lead() && script_target(x) == Some(a) => {
                // The lead's scripted steps for it.
                c.millis(at);
                crate::world::state::script_kind(x, &mut c);
            }
            _ if choice::owner(d) == a => {
                c.millis(at);
                c.word(match d {
                    Due::Input { input: Input::Start, .. } => 1,
                    Due::Wake { epoch, timer, .. } => 2 | (*timer as u64) << 8 | (*epoch as u64) << 16,
                    _ => 3,
                });
            }
            _ => {}
        }
    }
    // The lead's requests about it.
    if let Some(table) = s.agents[0].table() {
        let mut about: SmallVec<[(u8, u8, u64, u64); 8]> = SmallVec::new();
        let requests = table.requests_listed();
        about.extend(
            corners
                .table
                .of_agent(a)
                .iter()
                .map(|&k| &requests[k as usize])
                .map(|r| (r.kind as u8, r.status as u8, r.sent_at.0, r.deadline.0)),
        );
        about.sort_unstable();
        for &(kind, status, sent, deadline) in about.iter() {
            c.word(kind as u64 | (status as u64) << 8);
            c.word(sent);
            c.word(deadline);
        }
    }
    // Its messages in flight, as a multiset of what they are.
    let epochs = s.world.epochs();
    let mut mail: SmallVec<[Mail; 8]> = SmallVec::new();
    let flight = s.flight();
    mail.extend(corners.flight.of_agent(a).iter().map(|&k| &flight[k as usize]).map(|d| {
        // The adversary is past the team: it has a name of its own, 3.
        let who = |a: AgentId| local.get(a.index()).copied().unwrap_or(3);
        let stale = d.incarnation < epochs[d.to.index()];
        (who(d.sender), who(d.to), d.envelope.message.type_name(), d.envelope.message.approval(), stale)
    }));
    mail.sort_unstable();
    for &(from, to, t, approve, stale) in mail.iter() {
        c.word(from as u64 | (to as u64) << 8 | (approve.map_or(2, |b| b as u64)) << 16 | (stale as u64) << 24);
        c.text(t);
    }
    c.finish()
}

thread_local! {
    static ROOMS: std::cell::RefCell<Rooms> = std::cell::RefCell::new(Rooms::default());
}

/// The room a step works in: the log, the command buffer and the
/// mailboxes, lent to each step and taken back after, so that a state kept
/// for later holds none of it (kept, it was a tenth of the explorer's
/// memory). Only room changes hands, never what is in it: all three are
/// empty between steps (the log is read out, a turn clears its commands,
/// the starts are taken before the search begins), and one that is not
/// keeps its own. The agents' id streams are lent the same way, by
/// `Step::hand_over` alone (only turns draw ids): only the lane of the agent
/// taking its turn is ever filled, remade from its position.
#[derive(Default)]
struct Rooms {
    log: Vec<Stamped>,
    out: Vec<crate::agent::Command>,
    ready: std::collections::VecDeque<(AgentId, Input)>,
    ids: crate::agent::IdStreams,
}

impl Rooms {
    fn lend(&mut self, w: &mut World<Hand>) {
        match w.log_mut() {
            Some(t) if !t.is_empty() => {}
            t => *t = Some(std::mem::take(&mut self.log)),
        }
        if w.commands_mut().is_empty() {
            *w.commands_mut() = std::mem::take(&mut self.out);
        }
        if w.shell().ready.is_empty() {
            w.shell_mut().ready = std::mem::take(&mut self.ready);
        }
    }

    fn take_back(&mut self, w: &mut World<Hand>) {
        if let Some(t) = w.log_mut().as_mut().filter(|t| t.is_empty()) {
            self.log = std::mem::take(t);
        }
        if w.commands_mut().is_empty() {
            self.out = std::mem::take(w.commands_mut());
        }
        if w.shell().ready.is_empty() {
            self.ready = std::mem::take(&mut w.shell_mut().ready);
        }
    }
}

/// One action being carried out: the turns it leads to, and what the
/// oracle makes of the events.
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

impl<'a> Step<'a> {
    fn new(m: &'a Model, s: &'a mut State, log: Option<&'a mut Vec<Stamped>>) -> Step<'a> {
        Step { m, s, log, found: None, expected: Vec::new(), scratch: Vec::new() }
    }

    /// Every input the world put in a mailbox goes to its agent's turn, in
    /// the order handed over (a turn may hand over more).
    fn hand_over(&mut self) {
        if self.s.world.shell().ready.is_empty() {
            return;
        }
        let seed = self.m.seed;
        // The streams are lent for the step, so a state kept for later
        // holds none of them (only how far each agent drew, `words`).
        let lent = ROOMS.with(|r| std::mem::take(&mut r.borrow_mut().ids));
        let kept = std::mem::replace(self.s.world.id_streams_mut(), lent);
        while let Some((me, input)) = self.s.world.shell_mut().ready.pop_front() {
            let i = me.index();
            // Each agent its own id stream, as in the runtime: an id depends
            // only on the seed and its asker's own history, so states reached
            // by different orders compare equal. Remade where it stopped.
            self.s.world.id_streams_mut().resume(seed, me, self.s.words[i]);
            let agent = Arc::make_mut(&mut self.s.agents[i]);
            crate::world::turn(&mut self.s.world, me, &mut self.s.lives[i], agent, &input);
            if let Agent::Teammate(t) = agent {
                t.forget_memos();
            }
            if let Some(words) = self.s.world.id_streams_mut().take_words(me) {
                self.s.words[i] = words;
            }
        }
        let lent = std::mem::replace(self.s.world.id_streams_mut(), kept);
        ROOMS.with(|r| r.borrow_mut().ids = lent);
    }

    /// The events the world logged since the last look: the watcher sees
    /// each, the adversary learns the ids members sent, the log keeps them.
    fn witness_all(&mut self) {
        let Some(trace) = self.s.world.log_mut().as_mut() else { return };
        if trace.is_empty() {
            return;
        }
        let events = std::mem::take(trace);
        let team = self.s.world.statuses().len();
        for stamped in &events {
            match &stamped.event {
                Event::Send { from, request_id: Some(id), .. } if from.index() < team && !self.s.seen.contains(id) => {
                    Arc::make_mut(&mut self.s.seen).push(*id);
                }
                Event::Deadlock { members, .. } => {
                    self.s.formed_deadlock = true;
                    if self.m.policy.fail_on_deadlock && self.found.is_none() && !self.m.expects_deadlock(members) {
                        let text = stamped.describe(&self.m.bare_names).trim_start().to_string();
                        self.found = Some(Finding::Deadlock(text));
                    }
                }
                _ => {}
            }
            self.witness(stamped);
        }
        let mut events = events;
        if let Some(log) = self.log.as_deref_mut() {
            log.append(&mut events);
        }
        events.clear();
        // Back where it came from, for the rooms to take.
        if let Some(t) = self.s.world.log_mut().as_mut() {
            *t = events;
        }
    }

    /// The watcher sees one event.
    fn witness(&mut self, stamped: &Stamped) {
        self.scratch.clear();
        self.s.watch.observe(&self.m.policy, &self.m.bare_names, self.s.events, stamped, &mut self.scratch);
        self.s.events += 1;
        // Rare: most events break nothing.
        for v in self.scratch.drain(..) {
            if !self.m.expected.contains(&v.invariant) {
                self.found.get_or_insert(Finding::Broken(v));
            } else if !self.expected.iter().any(|e| e.invariant == v.invariant) {
                self.expected.push(v);
            }
        }
    }
}

/// Whether the message `i` in flight may be duplicated. With a counted
/// budget, any may, as often as the budget allows. With `Budgets::ANY` (a
/// duplicate left to chance: each message it matches arrives once or
/// twice), only one not already copied: copying copies without end would
/// leave the search no end.
fn may_duplicate(s: &State, i: usize) -> bool {
    if s.budgets.duplicate != Budgets::ANY {
        return true;
    }
    let flight = s.flight();
    let seq = flight[i].seq;
    flight.iter().filter(|d| d.seq == seq).count() == 1
}
