//! Every interleaving of a small scenario, breadth first, over the same pure
//! agent logic the actors run (`agent`, `protocol`), with no actix and no
//! clock: the schedules nobody wrote, checked by the same oracle.
//!
//! [`model`] is the scenario as a state machine (states, actions, the
//! fingerprint); this module searches it. Breadth first by default, so the
//! first violation found is a shortest one; depth first on request
//! ([`Order::Depth`]), which holds one path's states instead of a level's
//! and finds a violation, not a shortest one. Each distinct state is kept as its
//! fingerprint, the fingerprint of the state it was first reached from and
//! the action that reached it: a counterexample is rebuilt by replaying
//! those actions from the start, so no state carries its path.
//!
//! Two reductions: symmetry (identical teammates are interchangeable in the
//! fingerprint, see `model::Model::fingerprint`) and sleep sets (deliveries
//! to two different teammates commute under the hierarchy, so one order of
//! them is taken; see `model::Model::commutes`). Batches of states are
//! expanded on `Bounds::jobs` threads and merged in one-thread order, so
//! the result does not depend on the number of threads.

pub mod by_hand;
pub mod model;

pub use model::{Action, Finding, Model, State};

/// What the explorer reads of a scenario. The file format lives in
/// `scenario/`, a layer above this one, which implements it; the explorer
/// never reads a file, so it does not depend on that layer.
pub trait Subject {
    /// The team, its script and the faults the file schedules.
    fn team(&self) -> &TeamSpec;
    /// Whether each agent (the lead first) needs a plan before acting.
    fn require_plan(&self) -> Vec<bool>;
    /// The invariants the file expects to see broken (it switches a
    /// defence off to show it): finding one does not end the search.
    fn expected_violations(&self) -> Vec<Invariant>;
    /// The deadlocks the file expects, each by its members' names, sorted:
    /// with `deadlocks = "fail"`, forming one of these fails no run, so it
    /// ends no search.
    fn expected_deadlocks(&self) -> Vec<Vec<String>>;
    /// The seed `run` plays the file with by default: the agents' request
    /// ids are drawn from streams derived from it, in both shells.
    fn seed(&self) -> u64;
    /// The first of the file's own expectations that a schedule's outcome
    /// fails, as which check and why, judged as `run` judges them.
    fn first_failed_expectation(&self, outcome: &Outcome) -> Option<(String, String)>;
    /// The teammates the file's expectations are about, by name or through
    /// a request's label, a gate, a file or a deadlock's members (all of
    /// them where one cannot be told). Judged at the end of a schedule, an
    /// expectation tells such a teammate from its twins, so symmetry must
    /// not swap it with them.
    fn named_by_expectations(&self) -> Vec<AgentId>;
}

use crate::oracle::{self, Invariant};
use crate::protocol::{AgentId, Millis};
use crate::trace::{Names, Stamped};
use crate::world::Stop;
use crate::world::{Outcome, TeamSpec};
use std::collections::{BTreeMap, HashMap};

/// Faults the explorer may inject, as many of each as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Budgets {
    /// `Budgets::ANY`: any message may be lost, any number of times.
    pub drop: u32,
    pub duplicate: u32,
    /// Teammates that may crash (each crash may be followed by a restart).
    pub crash: u32,
    /// Messages the adversary may inject: a replay of one it saw on the wire,
    /// or a forgery quoting an id it saw, claiming to be any member.
    pub forge: u32,
}

impl Budgets {
    /// A budget never spent: the fault may happen to any message, any
    /// number of times (`--drop any`). Constant, it is no part of the state.
    pub const ANY: u32 = u32::MAX;

    /// These budgets with the file's own counted or chance drops and
    /// duplicates added as budgets spent anywhere (`plan_file_faults`),
    /// unless the file's faults are left out.
    pub fn with_file_faults(self, scenario: &dyn Subject, left_out: bool) -> Budgets {
        let team = scenario.team();
        if left_out || team.link_faults.len() + team.partitions.len() + team.timed.len() == 0 {
            return self;
        }
        let plan = plan_file_faults(scenario).budgets;
        Budgets {
            drop: self.drop.saturating_add(plan.drop),
            duplicate: self.duplicate.saturating_add(plan.duplicate),
            ..self
        }
    }
}

/// The largest team the explorer takes.
pub const MAX_TEAM: usize = 10_000;

/// Why a team this big is not explored, if it is too big.
pub fn too_big(scenario: &dyn Subject) -> Option<String> {
    // Every state holds a part for each teammate, and every step copies and
    // hashes a state whole: past this, a search holds few states in much
    // memory and takes each slowly (docs/explore.md, "Bounds").
    let team = scenario.team().teammates.len();
    (team > MAX_TEAM).then(|| {
        format!(
            "the team has {team} teammates; explore takes at most {MAX_TEAM} (each state of the search holds every \
             teammate, and each step copies and hashes it): `run` plays a team of any size"
        )
    })
}

/// Spends one of `budget`, unless it is `Budgets::ANY`.
pub(crate) fn spend(budget: &mut u32) {
    if *budget != Budgets::ANY {
        *budget -= 1;
    }
}

/// Where the search stops, and which reductions it uses.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub max_depth: usize,
    pub max_states: usize,
    /// Stop when the process's resident memory passes this many bytes.
    pub max_memory: Option<u64>,
    /// Skip interleavings that only reorder deliveries to different agents
    /// (sleep sets): such deliveries commute, so one order of them suffices.
    pub partial_order: bool,
    /// Treat identical teammates as interchangeable.
    pub symmetry: bool,
    /// Threads that expand states (the result does not depend on it).
    pub jobs: usize,
    /// Play the file's crashes and forgeries at their times (see
    /// [`plan_file_faults`] for the rest of its faults).
    pub file_faults: bool,
    /// Judge the file's `[[expect]]` entries at the end of every schedule.
    pub expectations: bool,
    /// Every message arrives within this of being sent (`None`: any time).
    pub latency_bound: Option<Millis>,
    /// Breadth first (the default: the first counterexample is a shortest
    /// one) or depth first (memory for the path, not for a whole level).
    pub order: Order,
    /// Asked between batches whether to stop where the search is (Ctrl-C):
    /// it then reports what it explored, stopped by `interrupted`.
    pub stop: fn() -> bool,
}

/// The search is never asked to stop early.
fn never() -> bool {
    false
}

/// The order states are taken in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// Level by level: a counterexample found is a shortest one, and the
    /// search holds a whole level of states (its memory at team scale).
    #[default]
    Breadth,
    /// The newest state first, on one thread: the search holds the states
    /// along one path and their siblings, so its memory is the seen set's
    /// few dozen bytes a state. A counterexample found is a schedule that
    /// breaks, not a shortest one, and the depth bound counts the steps of
    /// the path a state was first met on.
    Depth,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_depth: 60,
            max_states: 200_000,
            max_memory: None,
            partial_order: true,
            symmetry: true,
            jobs: 1,
            file_faults: true,
            expectations: false,
            latency_bound: None,
            order: Order::Breadth,
            stop: never,
        }
    }
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
    /// Which bound stopped the search, if one did (`interrupted`: Ctrl-C).
    pub stopped_by: Option<&'static str>,
    /// A breadth-first search stopped before its end (by --max-states,
    /// --max-memory or Ctrl-C): every schedule of up to this many steps was
    /// explored (longer ones only partly). What a bounded search proves.
    pub explored_to: Option<usize>,
    /// Transitions the partial-order reduction did not take (sleeping ones).
    pub slept: u64,
    /// Interchangeable teammates, as the size of each group (empty: no symmetry used).
    pub symmetric: Vec<usize>,
    /// Teammates alike that the file's expectations name, and so tell apart
    /// (`--expect`): left out of `symmetric`.
    pub set_apart: usize,
    /// The shortest schedule that breaks an invariant the file does not
    /// expect, if any: the search stops there.
    pub counterexample: Option<Counterexample>,
    /// For each invariant the file expects broken (it switches a defence off
    /// to show it), the shortest schedule that breaks it, in the order found.
    /// These do not stop the search: it goes on looking for what the file
    /// does not expect, as `run` fails a run that breaks one.
    pub expected: Vec<Counterexample>,
    /// The shortest schedule that forms a deadlock, where the policy allows
    /// deadlocks (where it does not, that schedule is the counterexample).
    pub deadlock: Option<Counterexample>,
    /// About how many bytes one state of this team holds (an estimate,
    /// `Model::state_bytes`), for a report stopped at the memory bound.
    pub state_bytes: u64,
    /// Children the expansions set out to make (copy, step, fingerprint),
    /// counting those a stop left unmerged: the search's cost, where
    /// `states` counts only what was merged. Unlike the rest, it may differ
    /// with the number of jobs, which expand ahead of the merge.
    pub made: u64,
}

/// What a schedule broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broke {
    Invariant(Invariant),
    /// A deadlock formed, and the policy says any deadlock fails (`deadlocks = "fail"`).
    Deadlock,
    /// One of the file's `[[expect]]` entries fails at the end of a
    /// schedule (only with `Bounds::expectations`).
    Expectation,
}

impl std::fmt::Display for Broke {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broke::Invariant(i) => write!(f, "invariant {i}"),
            Broke::Deadlock => f.write_str("no deadlock (policy: deadlocks = \"fail\")"),
            Broke::Expectation => f.write_str("the file's expectations"),
        }
    }
}

/// A schedule that breaks an invariant, and the run it makes.
#[derive(Debug)]
pub struct Counterexample {
    pub broke: Broke,
    pub detail: String,
    pub actions: Vec<String>,
    /// The schedule as data, one entry per action.
    pub taken: Vec<Taken>,
    /// The same schedule as the world's choices: what `run --schedule`
    /// makes the actors take (see [`Counterexample::schedule`]).
    pub choices: Vec<crate::world::Choice>,
    /// The seed the agents drew their request ids with.
    pub seed: u64,
    /// The action each message was sent in, by message number.
    pub sent_in: BTreeMap<u64, usize>,
    pub names: Names,
    pub events: Vec<Stamped>,
    /// Whether the file's own crashes and forgeries were played (a written
    /// scenario then keeps them).
    pub file_faults: bool,
    /// Whether schedules were judged by the file's `[[expect]]` entries too
    /// (`Bounds::expectations`): `run --schedule` then judges them as well.
    pub expectations: bool,
}

impl Counterexample {
    /// The schedule the actors replay this counterexample with, exactly
    /// (`handshake run FILE --schedule S`).
    pub fn schedule(&self) -> crate::world::Schedule {
        crate::world::Schedule {
            seed: self.seed,
            file_faults: self.file_faults,
            expectations: self.expectations,
            file: None,
            choices: self.choices.clone(),
        }
    }

    /// The schedule as the file `run --schedule` reads, each choice noted
    /// with its time and what it did; taken in the file whose text is `file`.
    pub fn schedule_text(&self, file: &str) -> String {
        let mut names = self.names.clone();
        names.learn_labels(&self.events);
        let notes: Vec<(Millis, String)> = self
            .taken
            .iter()
            .map(|t| {
                let line = t.describe(&names);
                let what = line.split_once(": ").map_or(line.clone(), |(_, w)| w.to_string());
                (t.at(), what)
            })
            .collect();
        let schedule = crate::world::Schedule { file: Some(crate::fnv::contents_hash(file)), ..self.schedule() };
        schedule.to_text(&self.names.agents, &notes)
    }

    /// The run in the same sentences as `-v`.
    pub fn narrate(&self) -> Vec<String> {
        let mut names = self.names.clone();
        names.learn_labels(&self.events);
        self.events.iter().map(|e| e.describe(&names)).collect()
    }
}

/// Deliveries asleep at a state, each by its message's key
/// ([`Model::message_key`]) and recipient, sorted:
/// already explored in another order, so not taken again from here.
type Sleep = Vec<(u64, AgentId)>;

/// One step of a counterexample's schedule: the world's choice, when it was
/// taken, and what a reader needs to follow it.
#[derive(Clone, Debug, PartialEq)]
pub struct Taken {
    pub at: Millis,
    pub choice: crate::world::Choice,
    /// A delivery's receiver.
    pub to: Option<AgentId>,
    /// The number the router gives an injected message.
    pub injected: Option<u64>,
    /// The message a delivery, drop or duplicate moves, as a reader names it.
    pub message: Option<Moved>,
    /// What a `Fire` fires (`None` for any other choice).
    pub fires: Option<Fires>,
}

/// What a `Fire` choice fires, as a reader names it: one list of names for
/// the page's choices and a counterexample's schedule alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fires {
    DeadlineTimer,
    WorkStep,
    Start,
    ScriptedStep,
    ComesBack,
    Input,
    Fault,
    ReadsInbox,
    ReadEnds,
    Message,
    /// A timer armed by a life that has since ended (a crash, a kill): the
    /// world drops it, and only the clock moves.
    Stale,
    /// A deadline timer of an agent with nothing pending: the requests it
    /// was armed for were answered, and only the clock moves.
    Spent,
}

impl Fires {
    pub fn of(due: &crate::world::Due) -> Fires {
        use crate::agent::{Input, Timer};
        use crate::world::Due;
        match due {
            Due::Wake { timer: Timer::Deadline, .. } => Fires::DeadlineTimer,
            Due::Wake { timer: Timer::WorkStep, .. } => Fires::WorkStep,
            Due::Input { input: Input::Start, .. } => Fires::Start,
            Due::Input { input: Input::Script(_), .. } => Fires::ScriptedStep,
            Due::Input { input: Input::Restart { .. } | Input::Respawn { .. }, .. } => Fires::ComesBack,
            Due::Input { .. } => Fires::Input,
            Due::Fault(_) => Fires::Fault,
            Due::ReadInbox { .. } => Fires::ReadsInbox,
            Due::InboxRead(_) | Due::TeamRead(_) => Fires::ReadEnds,
            Due::Deliver(_) => Fires::Message,
        }
    }

    /// What `due` fires in state `s`: a timer from an ended life is
    /// [`Fires::Stale`], a deadline timer with nothing pending [`Fires::Spent`].
    pub fn in_state(due: &crate::world::Due, s: &model::State) -> Fires {
        use crate::world::Due;
        match due {
            Due::Wake { agent, epoch, .. } if s.world().epochs().get(agent.index()) != Some(epoch) => Fires::Stale,
            Due::Wake { agent, timer: crate::agent::Timer::Deadline, .. }
                if s.agents().get(agent.index()).and_then(|a| a.table()).is_none_or(|t| t.pending() == 0) =>
            {
                Fires::Spent
            }
            _ => Fires::of(due),
        }
    }

    /// What happens, with `who` the owner of the event.
    pub fn words(self, who: &str) -> String {
        match self {
            Fires::DeadlineTimer => format!("{who}'s deadline timer fires"),
            Fires::WorkStep => format!("{who} finishes a step of its work"),
            Fires::Start => format!("{who} starts"),
            Fires::ScriptedStep => format!("{who} takes its next scripted step"),
            Fires::ComesBack => format!("{who} comes back"),
            Fires::Input => format!("{who} takes its next input"),
            Fires::Fault => format!("a scheduled fault strikes {who}"),
            Fires::ReadsInbox => format!("{who} reads its inbox"),
            Fires::ReadEnds => format!("{who}'s inbox read ends"),
            Fires::Message => format!("a message reaches {who}"),
            Fires::Stale => format!("a timer {who} set before it went down runs out: nothing happens"),
            Fires::Spent => format!("{who}'s deadline timer fires with nothing pending: nothing happens"),
        }
    }
}

/// A message in flight, named as the schedule says it: its type, its
/// request (by label, once the log has said it) and who sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    pub type_name: &'static str,
    pub request: Option<crate::protocol::RequestId>,
    pub from: AgentId,
}

impl Moved {
    /// The message `d` carries, named.
    pub fn of(d: &crate::protocol::Delivery) -> Moved {
        Moved { type_name: d.envelope.message.type_name(), request: d.envelope.message.request_id(), from: d.sender }
    }

    /// "plan_approval_request [bob-asks-alice] from bob", with the team's
    /// names and the labels learned so far.
    pub fn words(&self, names: &Names) -> String {
        let from = names.agents.get(self.from.index()).map_or("?", String::as_str);
        let label = self.request.map(|id| format!(" [{}]", names.label_or_short(id))).unwrap_or_default();
        format!("{}{label} from {from}", self.type_name)
    }
}

/// A forgery the adversary may send, in words that tell one from another:
/// "plan_approval_response [alice/plan/1] reject", with the id it quotes
/// (labelled where learned) and its answer.
pub fn forged_words(message: &crate::protocol::Message, names: &Names) -> String {
    let label = message.request_id().map(|id| format!(" [{}]", names.label_or_short(id))).unwrap_or_default();
    let answer =
        message.approval().map(|yes| format!(" {}", message.message_type().answer_word(yes))).unwrap_or_default();
    format!("{}{label}{answer}", message.type_name())
}

impl Taken {
    pub fn at(&self) -> Millis {
        self.at
    }

    /// One line of a counterexample's schedule, with the team's `names`
    /// (and the requests' labels, where learned): "deliver
    /// plan_approval_request [bob-asks-alice] from bob to alice".
    pub fn describe(&self, names: &Names) -> String {
        use crate::world::Choice;
        let name = |a: &AgentId| names.agents.get(a.index()).map_or("?", String::as_str);
        let message = |msg: &u64| self.message.as_ref().map_or_else(|| format!("#{msg}"), |m| m.words(names));
        let what = match &self.choice {
            Choice::Deliver { msg } => format!("deliver {} to {}", message(msg), self.to.as_ref().map_or("?", name)),
            Choice::Fire { owner } => match self.fires {
                Some(f) => f.words(name(owner)),
                None => format!("timer of {}", name(owner)),
            },
            Choice::Drop { msg } => format!("drop {}", message(msg)),
            Choice::Duplicate { msg } => format!("duplicate {}", message(msg)),
            Choice::Crash { agent, restart: true } => format!("crash {}", name(agent)),
            Choice::Crash { agent, restart: false } => format!("crash {} for good", name(agent)),
            Choice::Restart { agent } => format!("restart {}", name(agent)),
            Choice::Inject { from, to, message } => {
                format!(
                    "adversary sends {} to {}, claiming to be {}",
                    forged_words(message, names),
                    name(to),
                    name(from)
                )
            }
            Choice::Wait { .. } => "the clock moves on".to_string(),
        };
        format!("{}: {what}", self.at)
    }
}

/// What exploring does with a scenario file's own `[[fault]]`s.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FilePlan {
    /// Played by the world as a run plays them: crashes and their restarts,
    /// stalls, forgeries, replays, torn writes at their times; partitions
    /// with their holds and heals; a drop or duplicate with no count, on
    /// every message it matches.
    pub played: usize,
    /// Counted drops and duplicates, and those left to chance, become
    /// budgets, spent anywhere: every message the file's fault could touch is
    /// among those the explorer tries, touched and not.
    pub budgets: Budgets,
    /// Delays and reorders: already covered, since every order of arrival
    /// is explored.
    pub covered: usize,
}

/// What becomes of each of the file's faults. The explorer runs the same
/// world the actors do, so it models every kind.
pub fn plan_file_faults(scenario: &dyn Subject) -> FilePlan {
    use crate::world::network::InSearch;
    use crate::world::LinkEffect;
    let team = scenario.team();
    let mut plan = FilePlan { played: team.timed.len() + team.partitions.len(), ..FilePlan::default() };
    for f in &team.link_faults {
        match f.in_search() {
            InSearch::Covered => plan.covered += 1,
            InSearch::Played => plan.played += 1,
            InSearch::Budget => {
                // Left to chance with no count: any number of the messages it
                // matches, each touched or not.
                let n = f.count.unwrap_or(Budgets::ANY);
                match f.effect {
                    LinkEffect::Drop => plan.budgets.drop = plan.budgets.drop.saturating_add(n),
                    LinkEffect::Duplicate => plan.budgets.duplicate = plan.budgets.duplicate.saturating_add(n),
                    LinkEffect::Delay(_) | LinkEffect::Reorder => {}
                }
            }
        }
    }
    plan
}

/// A distinct state: where it was first reached from, and how.
struct Node {
    parent: u64,
    /// The action's place in the parent's action list.
    action: u32,
    /// The sleep set it was last queued with.
    sleep: Asleep,
}

/// A seen state's sleep set, in one word: the seen set holds one per
/// distinct state and nearly all are empty (a `Vec` took three words, a
/// third of the node).
#[derive(Default)]
struct Asleep(Option<Box<Sleep>>);

impl Asleep {
    fn new(sleep: Sleep) -> Asleep {
        Asleep((!sleep.is_empty()).then(|| Box::new(sleep)))
    }

    fn get(&self) -> &[(u64, AgentId)] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

/// The root's parent: no fingerprint is this (a collision would only cut a path short).
const ROOT: u64 = 0;

/// A map keyed by fingerprints, which are already hashes.
type Seen = HashMap<u64, Node, std::hash::BuildHasherDefault<PassThrough>>;

#[derive(Default)]
struct PassThrough(u64);

impl std::hash::Hasher for PassThrough {
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 fingerprints are hashed here")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Explores `scenario` within `bounds`, injecting at most `budgets` faults.
/// The file's own `[[fault]]`s are not played: the explorer injects its own.
pub fn explore(scenario: &dyn Subject, budgets: Budgets, bounds: Bounds) -> Exploration {
    explore_with(scenario, budgets, bounds, &mut |_| {})
}

/// A state waiting to be expanded.
struct Entry {
    /// Boxed: entries and children move through vectors by the million.
    state: Box<State>,
    fp: u64,
    sleep: Sleep,
    /// Expanded before with more asleep: only these deliveries, which have
    /// woken since, are still to be taken from it.
    only: Option<Sleep>,
    /// Steps from the start on the path it was queued by.
    depth: u32,
}

/// What expanding one state gave.
enum Expanded {
    /// Nothing more can happen here: the end-of-run checks' first finding.
    End(Option<Finding>),
    /// At the depth bound: not expanded.
    Bounded,
    /// Its children would pass the memory bound: not expanded.
    OverMemory,
    /// Its children would pass what the batch was allowed to make (see
    /// [`Allowance`]): not expanded yet, the merge expands it if it needs it.
    Deferred,
    Children {
        children: Vec<Child>,
        slept: u64,
    },
}

struct Child {
    /// The action's place in the parent's action list.
    action: u32,
    /// `None` when the state was already known with no more awake, so the
    /// merge only counts the transition.
    state: Option<Box<State>>,
    fp: u64,
    sleep: Sleep,
    /// What it broke that the file does not expect.
    found: Option<Finding>,
    /// What it broke that the file expects (empty, nearly always).
    expected: Vec<oracle::Violation>,
    /// It closed a wait-for cycle.
    deadlock: bool,
}

/// States expanded between two merges: enough to keep every thread busy,
/// few enough that the children waiting to be merged stay small.
const BATCH: usize = 2048;

/// As [`explore`], telling `progress` how the search stands every 10,000
/// distinct states (for a long search's progress line).
///
/// Level by level, in batches: `jobs` threads expand a batch of states (the
/// expensive part: copy, step, fingerprint), then one thread merges their
/// children into the set of seen states in the order a one-thread
/// breadth-first search would. So the result (counts, the counterexample)
/// is the same for any number of jobs. With more than one, the merge of a
/// batch runs while the pool expands the next one, and the states a merge
/// let go are freed there too: the merge was the part that kept a core idle.
pub fn explore_with(
    scenario: &dyn Subject,
    budgets: Budgets,
    bounds: Bounds,
    progress: &mut dyn FnMut(&Exploration),
) -> Exploration {
    let expectations = bounds.expectations;
    let mut out = run_search(scenario, budgets, bounds, progress);
    for c in out.counterexample.iter_mut().chain(&mut out.expected).chain(&mut out.deadlock) {
        c.expectations = expectations;
    }
    out
}

/// The search [`explore_with`] makes, its counterexamples not yet told how
/// they were judged.
fn run_search(
    scenario: &dyn Subject,
    budgets: Budgets,
    bounds: Bounds,
    progress: &mut dyn FnMut(&Exploration),
) -> Exploration {
    let model = if bounds.file_faults {
        Model::playing_file_faults(scenario, budgets, bounds.symmetry)
    } else {
        Model::new(scenario, budgets, bounds.symmetry)
    };
    let mut model = model.with_latency_bound(bounds.latency_bound);
    let alike: usize = model.symmetry_groups().iter().map(Vec::len).sum();
    if bounds.expectations {
        // The end of one schedule stands for its mirror images only if the
        // expectations cannot tell them apart.
        model = model.apart(&scenario.named_by_expectations());
    }
    let set_apart = alike - model.symmetry_groups().iter().map(Vec::len).sum::<usize>();
    let start = model.start();
    let root = model.fingerprint(&start);
    let mut seen = Seen::default();
    seen.insert(root, Node { parent: ROOT, action: 0, sleep: Asleep::default() });
    let out = Exploration {
        states: 1,
        unique: 1,
        depth: 0,
        stopped_by: None,
        explored_to: None,
        slept: 0,
        symmetric: model.symmetry_groups().iter().map(Vec::len).collect(),
        set_apart,
        counterexample: None,
        expected: Vec::new(),
        deadlock: None,
        state_bytes: model.state_bytes(),
        made: 0,
    };
    let gauge = Gauge::new(bounds.max_memory, model.state_bytes());
    let mut search = Search {
        model: &model,
        scenario,
        bounds: &bounds,
        seen,
        out,
        deadlock: None,
        next: Vec::new(),
        queued: HashMap::default(),
        freed: Vec::new(),
        progress,
        gauge: &gauge,
    };
    // The start is accounted before anything is expanded: a team whose
    // states are big is looked at before its first level, not after
    // thousands of its states.
    if !gauge.room_for(2, model.state_bytes()) {
        search.out.stopped_by = Some("max-memory");
        return search.out;
    }
    let root = Entry { state: Box::new(start), fp: root, sleep: Vec::new(), only: None, depth: 0 };
    let mut out = match bounds.order {
        Order::Depth => depth_first(search, root),
        Order::Breadth => breadth_first(search, root),
    };
    out.made = gauge.children.load(std::sync::atomic::Ordering::Relaxed);
    out
}

/// The search breadth first, level by level, in batches (see [`explore_with`]).
fn breadth_first(mut search: Search, root: Entry) -> Exploration {
    let (model, bounds, gauge) = (search.model, search.bounds, search.gauge);
    // One thread needs no pool: it expands and merges in turn. A pool that
    // cannot start (the system refuses threads) leaves the search on one.
    let pool =
        (bounds.jobs > 1).then(|| rayon::ThreadPoolBuilder::new().num_threads(bounds.jobs).build().ok()).flatten();
    let mut level: Vec<Entry> = vec![root];
    let mut depth = 0;
    'search: while !level.is_empty() {
        search.out.depth = search.out.depth.max(depth);
        let x = Expanding { model, bounds, gauge, depth };
        let mut entries = level.into_iter();
        let mut batch: Vec<Entry> = entries.by_ref().take(BATCH).collect();
        let mut expanded = expand_batch(pool.as_ref(), x, &batch, Some(&search.seen), &search.allowance());
        while !batch.is_empty() {
            let coming: Vec<Entry> = entries.by_ref().take(BATCH).collect();
            let (flow, coming_expanded) = match pool.as_ref() {
                Some(pool) => {
                    let mut slot = None;
                    // Judged before this batch's merge adds its states: the
                    // coming batch makes at most that many more than needed.
                    let allow = search.allowance();
                    let flow = pool.in_place_scope(|scope| {
                        let (coming, slot, allow) = (&coming, &mut slot, &allow);
                        // Not judged against the seen set, which the merge is
                        // writing: the merge drops what it knows already.
                        scope.spawn(move |_| *slot = Some(expand_batch(Some(pool), x, coming, None, allow)));
                        let flow = search.merge(Some(pool), &batch, expanded, depth);
                        // Freeing is a fifth of the work (a state is a dozen
                        // blocks, cold by now): on the pool, in pieces, so
                        // neither thread waits for the other to finish it.
                        let (parents, freed) = (std::mem::take(&mut batch), std::mem::take(&mut search.freed));
                        if matches!(flow, Flow::Stop) {
                            // Not waited for: the search is over.
                            free_elsewhere((parents, freed));
                            return flow;
                        }
                        scope.spawn(move |_| {
                            use rayon::prelude::*;
                            parents.into_par_iter().with_min_len(64).for_each(drop);
                            freed.into_par_iter().with_min_len(64).for_each(drop);
                        });
                        flow
                    });
                    // The spawned expansion has finished when the scope has.
                    (flow, slot.unwrap_or_default())
                }
                None => {
                    let flow = search.merge(None, &batch, expanded, depth);
                    if matches!(flow, Flow::Stop) {
                        free_elsewhere(std::mem::take(&mut search.freed));
                    }
                    search.freed.clear();
                    // A search that ends here expands nothing more.
                    let go = matches!(flow, Flow::Go);
                    let coming_expanded = if go {
                        expand_batch(None, x, &coming, Some(&search.seen), &search.allowance())
                    } else {
                        Vec::new()
                    };
                    (flow, coming_expanded)
                }
            };
            match flow {
                Flow::Go => {}
                Flow::Found => return search.out,
                Flow::Stop => {
                    // This level was made whole by the one before it, and
                    // each of its states judged as it was made.
                    search.out.explored_to = Some(depth);
                    // Tens of thousands of queued states take long to free,
                    // and a stopped search should answer at once.
                    free_elsewhere((entries, batch, coming, coming_expanded, std::mem::take(&mut search.next)));
                    break 'search;
                }
            }
            batch = coming;
            expanded = coming_expanded;
        }
        level = std::mem::take(&mut search.next);
        search.queued.clear();
        depth += 1;
    }
    let deadlock = search.deadlock.map(|(fp, k)| rebuild(model, &search.seen, fp, Some(k), None));
    search.out.deadlock = deadlock;
    search.out
}

/// The search depth first: `search.next` is the stack, and each state
/// popped is expanded and merged alone, its new children pushed on top. The
/// merge is breadth first's, so what is counted, judged and kept is the
/// same; only the order differs. A state still on the stack and reached
/// again with more awake is narrowed in place, as one still in the next
/// level is breadth first (`Search::queued` maps it to its place in the
/// stack, which holds while it is there: the stack only grows above it).
fn depth_first(mut search: Search, root: Entry) -> Exploration {
    let (model, bounds) = (search.model, search.bounds);
    search.queued.insert(root.fp, 0);
    search.next.push(root);
    while let Some(entry) = search.next.pop() {
        search.queued.remove(&entry.fp);
        let depth = entry.depth as usize;
        search.out.depth = search.out.depth.max(depth);
        // One state at a time, merged at once: it needs no allowance.
        let x = Expanding { model, bounds, gauge: search.gauge, depth };
        let expanded = expand(x, &entry, Some(&search.seen), &Allowance::new(u64::MAX), true);
        // The newest child on top: taken next, so the search goes deep.
        match search.merge(None, std::slice::from_ref(&entry), vec![expanded], depth) {
            Flow::Go => {}
            Flow::Found => return search.out,
            Flow::Stop => break,
        }
        search.freed.clear();
    }
    let deadlock = search.deadlock.map(|(fp, k)| rebuild(model, &search.seen, fp, Some(k), None));
    search.out.deadlock = deadlock;
    search.out
}

/// Where a merge of a batch got to.
enum Merged {
    Done(Flow),
    /// The entry at this place was not expanded yet: the rest waits for it.
    Waits(usize),
}

/// What a merge tells the search to do next.
enum Flow {
    Go,
    /// A counterexample is in the exploration: the search is over.
    Found,
    /// A bound stopped the search.
    Stop,
}

/// The search's state between batches: what is seen, what is queued.
struct Search<'a, 'p> {
    model: &'a Model,
    scenario: &'a dyn Subject,
    bounds: &'a Bounds,
    seen: Seen,
    out: Exploration,
    /// The first transition that formed a deadlock: its parent and action.
    deadlock: Option<(u64, u32)>,
    /// The next level's states, in the order a one-thread search finds them.
    next: Vec<Entry>,
    /// Where in `next` each of its states is, by fingerprint.
    queued: HashMap<u64, usize, std::hash::BuildHasherDefault<PassThrough>>,
    /// States the merge found known already, to be freed off its thread.
    /// Still boxed: unboxed, each would be copied out only to be dropped.
    #[allow(clippy::vec_box)]
    freed: Vec<Box<State>>,
    progress: &'p mut dyn FnMut(&Exploration),
    gauge: &'a Gauge,
}

impl Search<'_, '_> {
    /// Merges the children of `batch` (expanded as `expanded`, in its
    /// order) into the seen set and the next level. An entry left
    /// unexpanded (`Expanded::Deferred`) is expanded when the merge reaches
    /// it, with those after it, within the states then still allowed: so
    /// the merge sees every entry's children, in order, as if all had been
    /// made at once, and the result does not depend on what was deferred.
    fn merge(
        &mut self,
        pool: Option<&rayon::ThreadPool>,
        batch: &[Entry],
        mut expanded: Vec<Expanded>,
        depth: usize,
    ) -> Flow {
        let mut from = 0;
        loop {
            let mut results = expanded.into_iter();
            match self.merge_results(&batch[from..], &mut results, depth) {
                Merged::Waits(k) => {
                    from += k;
                    // The deferred entry itself was taken by the merge.
                    let mut rest: Vec<Expanded> = std::iter::once(Expanded::Deferred).chain(results).collect();
                    let x = Expanding { model: self.model, bounds: self.bounds, gauge: self.gauge, depth };
                    expand_into(pool, x, &batch[from..], &mut rest, Some(&self.seen), &self.allowance());
                    expanded = rest;
                }
                Merged::Done(flow) => {
                    if matches!(flow, Flow::Stop) {
                        // The children not merged yet: a batch's worth of states.
                        free_elsewhere(results);
                    }
                    return flow;
                }
            }
        }
    }

    /// How many children the expansions may make before the merge has
    /// caught up with them: as many as distinct states are still allowed.
    /// A batch expanded whole past `max_states` made its thousands of
    /// children each (bounded only by memory) to keep a few of them.
    fn allowance(&self) -> Allowance {
        let left = (self.bounds.max_states as u64).saturating_sub(self.out.unique);
        Allowance::new(left)
    }

    fn merge_results(&mut self, batch: &[Entry], results: &mut std::vec::IntoIter<Expanded>, depth: usize) -> Merged {
        let model = self.model;
        for (k, (entry, result)) in batch.iter().zip(results).enumerate() {
            // Heard between states: merging a whole batch of big states,
            // with the replays a woken state needs, takes long in a debug build.
            if (self.bounds.stop)() {
                self.out.stopped_by = Some("interrupted");
                return Merged::Done(Flow::Stop);
            }
            let (children, slept) = match result {
                Expanded::End(found) => {
                    if let Some(f) = found {
                        if !model.expects(&f) {
                            self.out.counterexample = Some(rebuild(model, &self.seen, entry.fp, None, Some(f)));
                            return Merged::Done(Flow::Found);
                        }
                        note_expected(model, &self.seen, &mut self.out.expected, entry.fp, None, f);
                    }
                    if self.bounds.expectations {
                        if let Some(c) = expectations_at_end(model, self.scenario, &self.seen, entry.fp) {
                            self.out.counterexample = Some(c);
                            return Merged::Done(Flow::Found);
                        }
                    }
                    continue;
                }
                Expanded::Bounded => {
                    self.out.stopped_by = Some("max-depth");
                    continue;
                }
                Expanded::OverMemory => {
                    self.out.stopped_by = Some("max-memory");
                    return Merged::Done(Flow::Stop);
                }
                Expanded::Children { children, slept } => (children, slept),
                Expanded::Deferred => return Merged::Waits(k),
            };
            self.out.slept += slept;
            for child in children {
                self.out.states += 1;
                // Every transition is judged, even one into a state seen
                // before: the same state reached another way may not
                // have broken anything.
                for v in child.expected {
                    let f = Finding::Broken(v);
                    note_expected(model, &self.seen, &mut self.out.expected, entry.fp, Some(child.action), f);
                }
                if child.found.is_some() {
                    self.out.depth = self.out.depth.max(depth + 1);
                    let found = rebuild(model, &self.seen, entry.fp, Some(child.action), child.found);
                    self.out.counterexample = Some(found);
                    return Merged::Done(Flow::Found);
                }
                if child.deadlock && self.deadlock.is_none() {
                    self.deadlock = Some((entry.fp, child.action));
                }
                let Some(state) = child.state else { continue };
                let (state, queue_sleep, only) = match self.seen.get_mut(&child.fp) {
                    Some(old) if is_subset(old.sleep.get(), &child.sleep) => {
                        self.freed.push(state);
                        continue;
                    }
                    Some(old) => {
                        // Reached again with more awake: explore what woke.
                        let (woke, sleep): (Sleep, Sleep) =
                            old.sleep.get().iter().partition(|d| child.sleep.binary_search(d).is_err());
                        old.sleep = Asleep::new(sleep.clone());
                        self.freed.push(state);
                        // Still waiting in the next level (an order of the same
                        // steps reaches a state at the same depth): it will be
                        // expanded with less asleep, and no second entry, nor
                        // the replay that would make it, is needed.
                        if let Some(&k) = self.queued.get(&child.fp) {
                            let e = &mut self.next[k];
                            e.sleep = sleep;
                            if let Some(only) = &mut e.only {
                                only.extend(woke);
                                only.sort_unstable();
                                only.dedup();
                            }
                            continue;
                        }
                        // From the copy its recorded path reaches, not this one: the
                        // two hash the same but may list their messages (or, under
                        // symmetry, their teammates) in another order, and the
                        // actions its children record are places in its own list.
                        let first = Box::new(replay_path(model, &self.seen, child.fp, None, false).state);
                        (first, sleep, Some(woke))
                    }
                    None => {
                        let node =
                            Node { parent: entry.fp, action: child.action, sleep: Asleep::new(child.sleep.clone()) };
                        self.seen.insert(child.fp, node);
                        self.out.unique += 1;
                        if self.out.unique.is_multiple_of(10_000) {
                            self.out.depth = self.out.depth.max(depth + 1);
                            (self.progress)(&self.out);
                        }
                        if self.out.unique.is_multiple_of(self.gauge.every) && self.gauge.passed() {
                            self.out.stopped_by = Some("max-memory");
                            return Merged::Done(Flow::Stop);
                        }
                        (state, child.sleep, None)
                    }
                };
                if self.out.unique as usize >= self.bounds.max_states {
                    self.out.stopped_by = Some("max-states");
                    return Merged::Done(Flow::Stop);
                }
                self.queued.insert(child.fp, self.next.len());
                let depth = depth as u32 + 1;
                self.next.push(Entry { state, fp: child.fp, sleep: queue_sleep, only, depth });
            }
        }
        Merged::Done(Flow::Go)
    }
}

/// Frees `queued` (what a stopped search still held) on a thread of its
/// own, which the caller neither waits for nor, if the process then exits,
/// keeps alive; where no thread can start, here.
fn free_elsewhere<T: Send + 'static>(queued: T) {
    // A thread that cannot start hands its closure back dropped: freed here.
    let _ = std::thread::Builder::new().name("free".into()).spawn(move || drop(queued));
}

/// Keeps the schedule to `fp` (then `last`) as the first found to break an
/// invariant the file expects, unless one was kept for that invariant already.
fn note_expected(model: &Model, seen: &Seen, kept: &mut Vec<Counterexample>, fp: u64, last: Option<u32>, f: Finding) {
    let Finding::Broken(v) = &f else { return };
    if kept.iter().any(|c| c.broke == Broke::Invariant(v.invariant)) {
        return;
    }
    kept.push(rebuild(model, seen, fp, last, Some(f)));
}

/// Distinct states between two looks at memory where states are small.
const LOOK_EVERY: u64 = 10_000;

/// States made between two looks at memory where states are big: about
/// this many bytes of them.
const LOOK_BYTES: u64 = 64 << 20;

/// Bytes of copies made, by their estimate, between two looks at memory
/// within an expansion: a copy may take twice its estimate, so the looks
/// come often enough that the bound is passed by little.
const COPY_LOOK_BYTES: u64 = 16 << 20;

/// The memory bound's accounting. Small states are looked at every
/// `LOOK_EVERY` distinct states, as ever; a team's big states (a team of
/// thousands) every `LOOK_BYTES` of them, in the merge and while a batch is
/// expanded (a batch's children are all held before the merge sees one),
/// and before the search starts. A look reads the process's resident
/// memory and adds what the states about to be made will take.
struct Gauge {
    limit: Option<u64>,
    state: u64,
    /// Distinct states between the merge's looks.
    every: u64,
    /// Bytes of states made by expansions, to pace their looks.
    made: std::sync::atomic::AtomicU64,
    over: std::sync::atomic::AtomicBool,
    /// Children the expansions set out to make (`Exploration::made`).
    children: std::sync::atomic::AtomicU64,
}

impl Gauge {
    fn new(limit: Option<u64>, state: u64) -> Gauge {
        let every = (LOOK_BYTES / state.max(1)).clamp(1, LOOK_EVERY);
        Gauge { limit, state, every, made: Default::default(), over: Default::default(), children: Default::default() }
    }

    /// Whether memory is looked at while states are made, not only every
    /// `LOOK_EVERY` distinct states.
    fn big(&self) -> bool {
        self.limit.is_some() && self.every < LOOK_EVERY
    }

    /// Whether resident memory has passed the bound (the merge's look).
    fn passed(&self) -> bool {
        matches!((self.limit, crate::process::resident_memory()), (Some(limit), Some(used)) if used > limit)
    }

    /// Whether `n` states more, of about `each` bytes, fit within the
    /// bound: false once they would not, at a look (every `COPY_LOOK_BYTES` of
    /// states made, or `n` at once past it). `each` is the state being
    /// expanded's own size: later states may hold far more in flight than
    /// the start, and judged by the start's size a batch of them passed the
    /// bound many times over before a look saw it.
    fn room_for(&self, n: u64, each: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(limit) = self.limit.filter(|_| self.big()) else { return true };
        if self.over.load(Relaxed) {
            return false;
        }
        let bytes = n.saturating_mul(each.max(self.state));
        let before = self.made.fetch_add(bytes, Relaxed);
        if before > 0 && before / COPY_LOOK_BYTES == before.saturating_add(bytes) / COPY_LOOK_BYTES {
            return true;
        }
        let Some(used) = crate::process::resident_memory() else { return true };
        let over = used.saturating_add(bytes) > limit;
        if over {
            self.over.store(true, Relaxed);
        }
        !over
    }
}

/// How many children the expansions of one batch may still make. The
/// merge stops at `max_states` distinct states, but a batch is expanded
/// before it is merged: a batch of two thousand states with a hundred
/// children each, expanded whole, made and held a hundred times what the
/// bound allowed, for as long as the memory bound let it. An entry whose
/// children find none left is deferred, and expanded by the merge only if
/// the search gets that far.
struct Allowance(std::sync::atomic::AtomicU64);

impl Allowance {
    fn new(left: u64) -> Allowance {
        Allowance(left.into())
    }

    /// Whether an entry may make its `n` children: while any are left (so
    /// one entry may pass the allowance, by at most its own children, on
    /// each thread), and always when it is the `first` of its batch, which
    /// the merge waits for.
    fn take(&self, n: u64, first: bool) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.fetch_update(Relaxed, Relaxed, |left| (first || left > 0).then(|| left.saturating_sub(n))).is_ok()
    }
}

/// What every expansion at one depth reads.
#[derive(Clone, Copy)]
struct Expanding<'a> {
    model: &'a Model,
    bounds: &'a Bounds,
    gauge: &'a Gauge,
    depth: usize,
}

/// Expands a batch, on the pool's threads if there is one, results in the
/// batch's order. `seen`, when given, lets a child already known with no
/// more awake be dropped at once instead of carried to the merge.
fn expand_batch(
    pool: Option<&rayon::ThreadPool>,
    x: Expanding,
    batch: &[Entry],
    seen: Option<&Seen>,
    allow: &Allowance,
) -> Vec<Expanded> {
    let mut out: Vec<Expanded> = batch.iter().map(|_| Expanded::Deferred).collect();
    expand_into(pool, x, batch, &mut out, seen, allow);
    out
}

/// Expands each entry of `batch` whose result in `slots` is still
/// `Expanded::Deferred`, within `allow`; the first of them always.
fn expand_into(
    pool: Option<&rayon::ThreadPool>,
    x: Expanding,
    batch: &[Entry],
    slots: &mut [Expanded],
    seen: Option<&Seen>,
    allow: &Allowance,
) {
    use rayon::prelude::*;
    let expand = |(k, (e, slot)): (usize, (&Entry, &mut Expanded))| {
        if matches!(slot, Expanded::Deferred) {
            *slot = expand(x, e, seen, allow, k == 0);
        }
    };
    match pool {
        // Stolen a few states at a time: states differ in cost (an end
        // state has no children), so halves of a batch would not finish together.
        Some(pool) => {
            pool.install(|| batch.par_iter().zip(slots.par_iter_mut()).enumerate().with_min_len(16).for_each(expand))
        }
        None => batch.iter().zip(slots.iter_mut()).enumerate().for_each(expand),
    }
}

/// Children made between two looks at Ctrl-C within one expansion.
const STOP_EVERY: usize = 64;

/// Every transition from one state, each child stepped and fingerprinted,
/// unless `allow` has none left for them.
fn expand(x: Expanding, entry: &Entry, seen: Option<&Seen>, allow: &Allowance, first: bool) -> Expanded {
    let Expanding { model, bounds, gauge, depth } = x;
    // A batch of big states takes seconds to expand: Ctrl-C is heard
    // between states, and the merge then stops before judging any.
    if (bounds.stop)() {
        return Expanded::Bounded;
    }
    let mut actions = Vec::new();
    let state = &entry.state;
    model.actions(state, &mut actions);
    if actions.is_empty() {
        return Expanded::End(model.at_end(state));
    }
    if depth >= bounds.max_depth {
        return Expanded::Bounded;
    }
    let mut children = Vec::with_capacity(actions.len());
    let mut slept = 0;
    // Deliveries already taken from this state, by key and recipient: each
    // later sibling that delivers to someone else sleeps on them.
    let mut taken_here: Vec<(u64, AgentId)> = Vec::new();
    for (k, action) in actions.iter().enumerate() {
        let delivery = match action {
            Action::Deliver { msg: i } if bounds.partial_order && model.commutes(state, *i) => {
                Some((model.message_key(state, *i), state.flight()[*i].to))
            }
            _ => None,
        };
        // Taken again only for what woke: the rest was taken the first time.
        if let Some(only) = &entry.only {
            if delivery.as_ref().is_none_or(|d| only.binary_search(d).is_err()) {
                continue;
            }
        }
        if let Some(d) = &delivery {
            if entry.sleep.binary_search(d).is_ok() {
                slept += 1;
                continue;
            }
        }
        // Only deliveries to teammates commute (with deliveries to other
        // teammates); a timer, a fault, an injection or the lead's step may
        // touch anything.
        let sleep: Sleep = match &delivery {
            Some((_, to)) => {
                let mut s: Sleep =
                    entry.sleep.iter().chain(taken_here.iter()).filter(|(_, r)| r != to).copied().collect();
                s.sort_unstable();
                s.dedup();
                s
            }
            None => Vec::new(),
        };
        if let Some(d) = delivery {
            taken_here.push(d);
        }
        children.push(Child {
            action: k as u32,
            state: None,
            fp: 0,
            sleep,
            found: None,
            expected: Vec::new(),
            deadlock: false,
        });
    }
    // In phases, each over every child: all copied, then all stepped, then
    // all fingerprinted. One child at a time ran the copy's, the world's and
    // the fingerprint's code in turn, and each evicted the others from the
    // instruction cache.
    // Memory is looked at as the copies are made, not once before: a big
    // state's copies may take more than its estimate says, and thousands
    // of them judged at the estimate passed the bound many times over.
    // Ctrl-C is heard between copies too: a state of a team of thousands
    // has thousands of children, each a copy of it.
    // An entry with nothing left to take costs nothing: never deferred.
    if !children.is_empty() && !allow.take(children.len() as u64, first) {
        return Expanded::Deferred;
    }
    gauge.children.fetch_add(children.len() as u64, std::sync::atomic::Ordering::Relaxed);
    let stopped = |k: usize| k % STOP_EVERY == STOP_EVERY - 1 && (bounds.stop)();
    let each = model.bytes_of(state);
    let mut nexts: Vec<Box<State>> = Vec::with_capacity(children.len());
    for k in 0..children.len() {
        if !gauge.room_for(1, each) {
            return Expanded::OverMemory;
        }
        if stopped(k) {
            return Expanded::Bounded;
        }
        nexts.push(state.clone());
    }
    for (k, (child, next)) in children.iter_mut().zip(nexts.iter_mut()).enumerate() {
        if stopped(k) {
            return Expanded::Bounded;
        }
        // What the file expects broken does not end the search: its state is explored on.
        child.found = model.apply_noting(next, &actions[child.action as usize], &mut child.expected);
        child.deadlock = next.formed_deadlock;
    }
    for (k, (child, next)) in children.iter_mut().zip(nexts).enumerate() {
        if stopped(k) {
            return Expanded::Bounded;
        }
        child.fp = if child.found.is_some() { 0 } else { model.fingerprint(&next) };
        // Known already, with no more awake: only the merge's count needs it.
        let known = child.found.is_none()
            && seen.and_then(|seen| seen.get(&child.fp)).is_some_and(|old| is_subset(old.sleep.get(), &child.sleep));
        if !known {
            child.state = Some(next);
        }
    }
    Expanded::Children { children, slept }
}

fn is_subset(small: &[(u64, AgentId)], big: &[(u64, AgentId)]) -> bool {
    small.iter().all(|d| big.binary_search(d).is_ok())
}

/// A schedule replayed from the start: where it ends, what it logged, its
/// actions as data, and the action each message was sent in.
struct Path {
    state: State,
    events: Vec<Stamped>,
    taken: Vec<Taken>,
    choices: Vec<crate::world::Choice>,
    sent_in: BTreeMap<u64, usize>,
}

/// The schedule to the state `fp`, then `last` from it if given, replayed
/// (logging its events if `logged`).
fn replay_path(model: &Model, seen: &Seen, fp: u64, last: Option<u32>, logged: bool) -> Path {
    let mut path: Vec<u32> = last.into_iter().collect();
    let mut at = fp;
    while let Some(node) = seen.get(&at) {
        if node.parent == ROOT {
            break;
        }
        path.push(node.action);
        at = node.parent;
    }
    path.reverse();
    let mut state = model.start();
    let mut events = if logged { model.start_log().to_vec() } else { Vec::new() };
    let mut taken = Vec::new();
    let mut choices = Vec::new();
    let mut sent_in = BTreeMap::new();
    let mut actions = Vec::new();
    for k in path {
        model.actions(&state, &mut actions);
        let action = &actions[k as usize];
        taken.push(model.taken(&state, action));
        choices.push(model.choice_of(&state, action));
        let before = state.next_seq();
        model.apply(&mut state, action, logged.then_some(&mut events));
        for seq in before + 1..=state.next_seq() {
            sent_in.insert(seq, taken.len() - 1);
        }
    }
    Path { state, events, taken, choices, sent_in }
}

/// The file's expectations judged at the end of the schedule to `fp`, as
/// `run` judges them: a counterexample if one fails.
fn expectations_at_end(model: &Model, scenario: &dyn Subject, seen: &Seen, fp: u64) -> Option<Counterexample> {
    let Path { state, events, taken, choices, sent_in } = replay_path(model, seen, fp, None, true);
    let (stop, ended_at) = model.ending(&state);
    let names = model.names().to_vec();
    let mut labelled = Names { agents: names.clone(), labels: BTreeMap::new() };
    labelled.learn_labels(&events);
    let outcome = crate::world::Outcome {
        names: labelled,
        roster: state.roster().to_vec(),
        requests: state.agents().iter().filter_map(|a| a.table()).flat_map(|t| t.iter().cloned()).collect(),
        files: state.files().into_iter().collect(),
        ended_at: match stop {
            Stop::Settled => events.last().map_or(state.now(), |e| e.t),
            _ => ended_at,
        },
        stop,
        load_done: 0,
        events,
        inbox_files: BTreeMap::new(),
        mirror_error: None,
        schedule_error: None,
        frames: None,
    };
    let (check, why) = scenario.first_failed_expectation(&outcome)?;
    Some(Counterexample {
        broke: Broke::Expectation,
        detail: format!("{check}: {why}"),
        actions: taken.iter().map(|t: &Taken| t.describe(&outcome.names)).collect(),
        taken,
        sent_in,
        choices,
        seed: model.seed(),
        names: Names { agents: names, labels: BTreeMap::new() },
        events: outcome.events,
        file_faults: model.plays_file_faults(),
        expectations: true,
    })
}

/// The schedule to the state `fp` (then one more action, `last`, from it,
/// when the violation was on that transition), replayed from the start with
/// its events, and the violation worded with the requests' labels.
fn rebuild(model: &Model, seen: &Seen, fp: u64, last: Option<u32>, found: Option<Finding>) -> Counterexample {
    let at_end = last.is_none();
    let Path { state, events, taken, choices, sent_in } = replay_path(model, seen, fp, last, true);
    let names = model.names().to_vec();
    let bare = Names { agents: names.clone(), labels: BTreeMap::new() };
    let mut labelled = bare.clone();
    labelled.learn_labels(&events);
    // Worded again over the whole log, with labels: the same oracle.
    let (stop, ended_at) = if at_end { model.ending(&state) } else { (Stop::EndTime, state.now()) };
    let log = oracle::Log { names: &labelled, events: &events, ended_at, stop };
    let relevant =
        |v: &oracle::Violation| at_end || !matches!(v.invariant, Invariant::SingleTerminal | Invariant::NoSilentLoss);
    let violations = oracle::check_log(&log, &model.policy, &model.require_plan);
    // The invariant the search saw break, worded with labels.
    let wanted = match &found {
        Some(Finding::Broken(v)) => Some(v.invariant),
        _ => None,
    };
    let worded = violations.into_iter().filter(relevant).find(|v| wanted.is_none_or(|w| v.invariant == w));
    let (broke, detail) = match (worded, found) {
        (Some(v), Some(Finding::Broken(_)) | None) => (Broke::Invariant(v.invariant), v.detail),
        (None, Some(Finding::Broken(v))) => (Broke::Invariant(v.invariant), v.detail),
        (_, Some(Finding::Deadlock(_))) | (None, None) => {
            let deadlock = events.iter().find(|e| matches!(e.event, crate::trace::Event::Deadlock { .. }));
            let detail = deadlock.map(|e| e.describe(&labelled).trim_start().to_string()).unwrap_or_default();
            (Broke::Deadlock, detail)
        }
    };
    Counterexample {
        broke,
        detail,
        actions: taken.iter().map(|t: &Taken| t.describe(&labelled)).collect(),
        taken,
        sent_in,
        choices,
        seed: model.seed(),
        names: bare,
        events,
        file_faults: model.plays_file_faults(),
        // Told by `explore_with`, which knows the bounds.
        expectations: false,
    }
}
