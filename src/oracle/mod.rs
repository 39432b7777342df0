//! The lifecycle oracle: reads the event log as an independent witness and
//! reports every always-on invariant the run broke. It re-derives request
//! states from the log instead of trusting the agents' tables, and it always
//! applies the full matching rule, whatever defences the scenario switched off.
//!
//! The oracle is a [`Watch`] fed one event at a time. A finished run is read
//! by [`check`] (or [`check_log`]), which feeds it the whole log; the model
//! checker can carry a `Watch` in each state and feed it the one event a
//! transition adds, instead of rereading the path at every state (O(depth)
//! per state). Both go through the same code, so there is one oracle, not two.
//!
//! Each invariant lives in its own file: what it observes of each event, and
//! what it checks when the run ends. What several of them read (the requests
//! and each agent's life, as the log tells them) is kept once, in a [`Book`]
//! the watcher updates after every invariant has seen the event: each one
//! judges an event against the state before it.
//!
//! The watcher holds one field per invariant every protocol is held to and
//! calls each directly, in a fixed order: the order in which one event's
//! violations are reported. A protocol that brings invariants of its own
//! (its spec lists them) has a witness in `protocols/`, which the watcher
//! starts at the first event of that protocol and calls after the others.

mod current_incarnation;
mod expiry_policy;
mod final_roster;
mod gated_action;
mod graceful_complete;
mod matching_response;
mod no_silent_loss;
mod protocols;
mod single_terminal;
mod terminal_final;

#[cfg(test)]
mod fixture;

use crate::protocol::{AgentId, Canon, Kind, Millis, Policy, RequestId, Status};
use crate::trace::{Event, Names, RosterStatus, Stamped};
use crate::world::{Outcome, Stop};
use current_incarnation::CurrentIncarnation;
use expiry_policy::ExpiryPolicy;
use final_roster::FinalRoster;
use gated_action::GatedAction;
use graceful_complete::GracefulComplete;
use matching_response::MatchingResponse;
use no_silent_loss::NoSilentLoss;
use single_terminal::SingleTerminal;
use std::fmt;
use std::hash::Hash;
use terminal_final::TerminalFinal;

/// The always-on invariants, by the names reports and scenario files use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Each request ends in exactly one terminal state, or is still pending
    /// only because the run ended before its deadline.
    SingleTerminal,
    /// A terminal state never changes.
    TerminalFinal,
    /// Only a matching response changes state.
    MatchingResponse,
    /// No gated mutating action runs before its plan is approved.
    GatedAction,
    /// An expired request applies its policy default.
    ExpiryPolicy,
    /// A graceful shutdown leaves no partial write.
    GracefulComplete,
    /// A message disappears only through an injected fault, and the trace says so.
    NoSilentLoss,
    /// Killed, shut down, and crashed without a restart are final: such an
    /// agent never acts again, its state never changes, and a restart brings
    /// back only a crash that scheduled it.
    FinalRoster,
    /// An agent answers only the requests sent to its current incarnation:
    /// one sent before its crash was meant for a process that is gone, and
    /// its asker settles it by the deadline, not by an answer from the restart.
    CurrentIncarnation,
    /// One a protocol brings of its own: the `index`th of its spec's
    /// `invariants`.
    Own { kind: Kind, index: u8 },
}

impl Invariant {
    /// Those every protocol is held to.
    pub const COMMON: [Invariant; 9] = [
        Invariant::SingleTerminal,
        Invariant::TerminalFinal,
        Invariant::MatchingResponse,
        Invariant::GatedAction,
        Invariant::ExpiryPolicy,
        Invariant::GracefulComplete,
        Invariant::NoSilentLoss,
        Invariant::FinalRoster,
        Invariant::CurrentIncarnation,
    ];

    /// Every invariant: the common ones, then each protocol's own.
    pub fn all() -> Vec<Invariant> {
        let own = Kind::ALL
            .into_iter()
            .flat_map(|kind| (0..kind.spec().invariants.len()).map(move |i| Invariant::Own { kind, index: i as u8 }));
        Invariant::COMMON.into_iter().chain(own).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Invariant::SingleTerminal => "single-terminal",
            Invariant::TerminalFinal => "terminal-final",
            Invariant::MatchingResponse => "matching-response",
            Invariant::GatedAction => "gated-action",
            Invariant::ExpiryPolicy => "expiry-policy",
            Invariant::GracefulComplete => "graceful-complete",
            Invariant::NoSilentLoss => "no-silent-loss",
            Invariant::FinalRoster => "final-roster",
            Invariant::CurrentIncarnation => "current-incarnation",
            Invariant::Own { kind, index } => kind.spec().invariants[index as usize].name,
        }
    }

    pub fn parse(name: &str) -> Option<Invariant> {
        Invariant::all().into_iter().find(|i| i.name() == name)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken invariant: which, when, at which event, and why in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub invariant: Invariant,
    pub at: Millis,
    /// Index in `Outcome::events` of the event that broke it, when there is one.
    pub event: Option<usize>,
    pub detail: String,
}

/// A request as the log tells it. `Copy`, so the table clones as one block.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    kind: Kind,
    requester: AgentId,
    target: AgentId,
    deadline: Millis,
    status: Status,
    /// Its target was respawned while it was pending: the process it asked
    /// is gone for good, and the new one under the name was never asked.
    /// Settled when it stops pending; while it pends, read through
    /// [`Book::superseded`].
    superseded: bool,
    /// Its requester was respawned while it was pending: made by a process
    /// that is gone, it expires only if the new one outlives its deadline,
    /// and is abandoned if it stops first (as a killed requester's are).
    /// Settled as `superseded` is; read through [`Book::abandoned`].
    abandoned: bool,
    /// Its target's and its requester's respawns when it was opened: one
    /// since, while it pends, supersedes or abandons it. Counted rather
    /// than marked on every pending request at each respawn, which made a
    /// long history's judging quadratic.
    respawns_at_open: (u32, u32),
}

/// Where an agent is in its life, as the log tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Life {
    Alive,
    /// Crashed; `restart` says whether the crash scheduled a restart.
    Crashed {
        restart: bool,
    },
    /// Killed or shut down.
    Final(RosterStatus),
}

impl Life {
    fn is_final(self) -> bool {
        matches!(self, Life::Final(_) | Life::Crashed { restart: false })
    }

    fn describe(self) -> &'static str {
        match self {
            Life::Alive => "running",
            Life::Crashed { restart: true } => "crashed (its restart not yet due)",
            Life::Crashed { restart: false } => "crashed with no restart",
            Life::Final(RosterStatus::Killed) => "killed",
            Life::Final(_) => "shut down",
        }
    }

    /// The life a status event leads to, or `None` when no status may
    /// follow this life that way (which breaks final-roster, and leaves the
    /// life as it was).
    fn after(self, status: RosterStatus) -> Option<Life> {
        match (self, status) {
            (Life::Alive, RosterStatus::Killed | RosterStatus::Shutdown) => Some(Life::Final(status)),
            // The kill default overrides a pending restart.
            (Life::Crashed { restart: true }, RosterStatus::Killed) => Some(Life::Final(status)),
            // A crash's own status; the crash event came first.
            (Life::Crashed { .. }, RosterStatus::Crashed) => Some(self),
            (Life::Alive, _) => Some(self),
            (_, _) => None,
        }
    }
}

/// What the log says of one agent that more than one invariant reads.
#[derive(Clone, Copy, Debug)]
struct Roster {
    life: Life,
    /// How many respawns the log has shown of it (see `Tracked::respawns_at_open`).
    respawns: u32,
    /// How many times it crashed or was respawned: which incarnation of it
    /// runs (or will run after its restart). A request sent to it is meant
    /// for this one.
    incarnation: u32,
}

/// What several invariants read, kept once: the requests and each agent's
/// life as the log tells them, and the replays not yet sent. Updated after
/// the invariants have seen an event.
#[derive(Clone, Debug)]
struct Book {
    /// By id (a map: a sorted list moved the rest at each of a big run's
    /// requests, whose ids come in no order), keyed by the id as one number:
    /// compared in two words rather than sixteen bytes, in the same order
    /// (a uuid's bytes are its number's, most significant first).
    requests: std::collections::BTreeMap<u128, Tracked>,
    /// Indexed by agent: one record per agent rather than one vector per
    /// fact, so cloning a watcher copies one block for them all.
    agents: Vec<Roster>,
    /// Sends that will be the network replaying a message, not its sender
    /// acting: a replay's fault comes just before its send, under a fresh seq.
    replays: Vec<u64>,
    /// The last event said the next send is a script's (see
    /// `Event::Scripted`): used by the event right after it.
    scripted: bool,
    /// While the invariants judge an event: the request it is about, as
    /// the book has it, looked up once for all of them (most ask for it).
    /// Empty between events.
    subject: Option<(u128, Option<Tracked>)>,
}

impl Book {
    /// The request `id`, if the log opened it.
    fn request(&self, id: RequestId) -> Option<&Tracked> {
        let key = id.0.as_u128();
        match &self.subject {
            Some((subject, r)) if *subject == key => r.as_ref(),
            _ => self.requests.get(&key),
        }
    }

    /// The request `e` is about, if it names one the invariants look up.
    fn subject_of(&self, e: &Event) -> Option<(u128, Option<Tracked>)> {
        let id = match e {
            Event::Verdict { request_id, .. } => *request_id,
            Event::Expired { id, .. } => *id,
            // A send's is looked up by one invariant, and only for some.
            _ => return None,
        };
        let key = id.0.as_u128();
        Some((key, self.requests.get(&key).copied()))
    }

    /// The life of `agent`, if the team has it.
    fn life(&self, agent: AgentId) -> Option<Life> {
        self.agents.get(agent.index()).map(|a| a.life)
    }

    /// What the log says of `agent`, who must be in the team.
    fn agent(&self, agent: AgentId) -> &Roster {
        &self.agents[agent.index()]
    }

    /// Whether `e` is the send of a replay: a replay is used by its one
    /// send, so it is forgotten there.
    fn take_replay(&mut self, e: &Event) -> bool {
        let Event::Send { seq, .. } = e else { return false };
        match self.replays.iter().position(|r| r == seq) {
            Some(k) => {
                self.replays.swap_remove(k);
                true
            }
            None => false,
        }
    }

    /// Brings the book past `e`, once every invariant has judged it.
    fn observe(&mut self, e: &Event) {
        match e {
            Event::Opened { id, kind, requester, target, deadline, .. } => {
                let r = Tracked {
                    kind: *kind,
                    requester: *requester,
                    target: *target,
                    deadline: *deadline,
                    status: Status::Pending,
                    superseded: false,
                    abandoned: false,
                    respawns_at_open: (respawns(&self.agents, *target), respawns(&self.agents, *requester)),
                };
                self.requests.insert(id.0.as_u128(), r);
            }
            Event::Verdict { request_id, verdict: crate::protocol::Verdict::Applied { to, .. }, .. } => {
                self.set_status(*request_id, *to);
            }
            Event::Expired { id, .. } => self.set_status(*id, Status::Expired),
            Event::Status { agent, status } => {
                let a = &mut self.agents[agent.index()];
                a.life = a.life.after(*status).unwrap_or(a.life);
            }
            Event::Crash { agent, restart_at } => {
                let a = &mut self.agents[agent.index()];
                a.life = Life::Crashed { restart: restart_at.is_some() };
                a.incarnation += 1;
            }
            Event::Restart { agent } => {
                let a = &mut self.agents[agent.index()];
                if a.life == (Life::Crashed { restart: true }) {
                    a.life = Life::Alive;
                }
            }
            Event::Respawn { agent } => {
                let a = &mut self.agents[agent.index()];
                if a.life != Life::Alive {
                    a.life = Life::Alive;
                    a.incarnation += 1;
                }
                // Every request pending now is superseded or abandoned by it:
                // counted here, read by `superseded` and `abandoned`.
                a.respawns += 1;
            }
            Event::Fault { seq, fault: crate::world::FaultKind::Replay, .. } if !self.replays.contains(seq) => {
                self.replays.push(*seq)
            }
            _ => {}
        }
    }

    fn set_status(&mut self, id: RequestId, status: Status) {
        let Some(r) = self.requests.get_mut(&id.0.as_u128()) else { return };
        if r.status == Status::Pending {
            // Leaving pending: what respawned while it pended is settled now.
            (r.superseded, r.abandoned) = r.respawned_since_open(&self.agents);
        }
        r.status = status;
    }

    /// Whether `r`'s target was respawned while `r` was pending.
    fn superseded(&self, r: &Tracked) -> bool {
        match r.status {
            Status::Pending => r.respawned_since_open(&self.agents).0,
            _ => r.superseded,
        }
    }

    /// Whether `r`'s requester was respawned while `r` was pending.
    fn abandoned(&self, r: &Tracked) -> bool {
        match r.status {
            Status::Pending => r.respawned_since_open(&self.agents).1,
            _ => r.abandoned,
        }
    }
}

/// How many respawns the log has shown of `agent`.
fn respawns(agents: &[Roster], agent: AgentId) -> u32 {
    agents.get(agent.index()).map_or(0, |a| a.respawns)
}

impl Tracked {
    /// Whether its target, and its requester, were respawned since it was
    /// opened, by the counts in `agents`.
    fn respawned_since_open(&self, agents: &[Roster]) -> (bool, bool) {
        let (target, requester) = self.respawns_at_open;
        (respawns(agents, self.target) > target, respawns(agents, self.requester) > requester)
    }
}

/// The event an invariant is judging, and what it judges it by.
struct At<'a> {
    policy: &'a Policy,
    names: &'a Names,
    /// Its index in the log.
    i: usize,
    t: Millis,
    /// Whether it is the network replaying an earlier send (a `Send` only).
    replayed: bool,
}

impl At<'_> {
    /// A violation of `invariant` at this event.
    fn violation(&self, invariant: Invariant, detail: String) -> Violation {
        Violation { invariant, at: self.t, event: Some(self.i), detail }
    }

    fn who(&self, agent: AgentId) -> &str {
        self.names.agent(agent)
    }

    fn label(&self, id: RequestId) -> String {
        label(self.names, id)
    }
}

/// How a run ended, for the checks made at its end.
struct End<'a> {
    names: &'a Names,
    ended_at: Millis,
    stop: Stop,
}

/// A request's label, or its id when the names do not know it.
fn label(names: &Names, id: RequestId) -> String {
    names.label(id).map(str::to_string).unwrap_or_else(|| id.to_string())
}

/// Pushes a violation found after later events were already reported (an
/// expiry's obligation judged when its instant ends), placing it after those
/// of its own event and before those of later events. A log fed whole thus
/// reports in event order, as when the oracle looked ahead instead.
fn place(out: &mut Vec<Violation>, v: Violation) {
    // `None` (an end-of-run violation) orders before every `Some`: never passed.
    let after = out.iter().rposition(|x| x.event <= v.event).map_or(0, |p| p + 1);
    out.insert(after, v);
}

/// The oracle as a watcher fed one event at a time.
///
/// It holds only what decides verdicts still to come, so the model checker
/// can carry one in every state and clone it per transition: the [`Book`]
/// (requests, a sorted vector since a run has a handful; one record per
/// agent; the replays not yet sent), and what each invariant keeps of its
/// own (see its file). Nothing on the path of an event that breaks nothing
/// formats text.
#[derive(Clone, Debug)]
pub struct Watch {
    book: Book,
    final_roster: FinalRoster,
    matching_response: MatchingResponse,
    terminal_final: TerminalFinal,
    expiry_policy: ExpiryPolicy,
    graceful_complete: GracefulComplete,
    gated_action: GatedAction,
    current_incarnation: CurrentIncarnation,
    no_silent_loss: NoSilentLoss,
    single_terminal: SingleTerminal,
    /// The witnesses of the protocols with invariants of their own.
    protocols: protocols::Witnesses,
}

impl Watch {
    /// A watcher for a team whose agents need a plan before acting where
    /// `require_plan` says so (one entry per agent, the lead first).
    pub fn new(require_plan: &[bool]) -> Watch {
        let agent = Roster { life: Life::Alive, respawns: 0, incarnation: 0 };
        Watch {
            book: Book {
                requests: Default::default(),
                agents: vec![agent; require_plan.len()],
                replays: Vec::new(),
                scripted: false,
                subject: None,
            },
            final_roster: FinalRoster,
            matching_response: MatchingResponse::default(),
            terminal_final: TerminalFinal,
            expiry_policy: ExpiryPolicy::default(),
            graceful_complete: GracefulComplete::default(),
            gated_action: GatedAction::new(require_plan),
            current_incarnation: CurrentIncarnation::default(),
            no_silent_loss: NoSilentLoss::default(),
            single_terminal: SingleTerminal::default(),
            protocols: protocols::Witnesses::default(),
        }
    }

    /// Feeds event number `i` of the log; pushes every violation it shows.
    ///
    /// An expiry whose default has an effect (kill, keep, reject) leaves an
    /// obligation on the events at its own instant. An event at the same
    /// instant discharges it (the kill came) or breaks it at once (a kill
    /// or an opened gate the default forbids); an event at another instant
    /// first judges what is left open (a kill that never came). Such a late
    /// violation names the `Expired` event and is placed in `out` before
    /// the violations of events after it (see [`check_log`]).
    pub fn observe(&mut self, policy: &Policy, names: &Names, i: usize, e: &Stamped, out: &mut Vec<Violation>) {
        self.expiry_policy.end_instant(names, e, out);
        // A replay or a scripted answer: the network or the script acting,
        // not the sender.
        let scripted = std::mem::replace(&mut self.book.scripted, matches!(e.event, Event::Scripted { .. }));
        let replayed = self.book.take_replay(&e.event) || scripted;
        let at = At { policy, names, i, t: e.t, replayed };
        self.book.subject = self.book.subject_of(&e.event);
        let (book, e) = (&self.book, &e.event);
        // The order of one event's violations in a report.
        self.final_roster.observe(book, &at, e, out);
        self.matching_response.observe(book, &at, e, out);
        self.terminal_final.observe(book, &at, e, out);
        self.expiry_policy.observe(book, &at, e, out);
        self.graceful_complete.observe(book, &at, e, out);
        self.gated_action.observe(book, &at, e, out);
        self.current_incarnation.observe(book, &at, e, out);
        self.no_silent_loss.observe(book, &at, e, out);
        self.single_terminal.observe(book, &at, e, out);
        self.protocols.observe(book, &at, e, out);
        self.book.subject = None;
        self.book.observe(e);
    }

    /// The end-of-run checks (a request still pending, a message never
    /// accounted for, and any same-instant obligation still open), for a run
    /// that stopped at `ended_at` for `stop`.
    ///
    /// It takes `&self`, so a caller can judge a run that might go on (the
    /// model checker at a state it will extend) without ending it. The end
    /// checks read no policy today; `policy` is taken so that any that come
    /// to need it have it, with the same arguments as [`Watch::observe`].
    pub fn finish(&self, _policy: &Policy, names: &Names, ended_at: Millis, stop: Stop, out: &mut Vec<Violation>) {
        let end = End { names, ended_at, stop };
        // First: an obligation is placed among the violations already found,
        // before the end-of-run ones that name no event.
        self.expiry_policy.finish(&end, out);
        self.single_terminal.finish(&self.book, &end, out);
        self.no_silent_loss.finish(&end, out);
    }

    /// Hashes what decides the watcher's future verdicts for the explorer's
    /// fingerprint, and nothing that is history: not message numbers, not
    /// event indices, not the sends still unaccounted for (the explorer's
    /// messages in flight are that set). Agents and ids go through the
    /// renaming (see [`Canon`]), so identical teammates swapped, or ids
    /// drawn differently, hash the same. Ids are numbered in the order the
    /// walk meets them, so the order of this walk is part of the hash.
    pub fn canon(&self, c: &mut Canon) {
        // Every field is named, so one added is a compile error here until
        // it is hashed or said not to be state.
        let Watch {
            book,
            final_roster: _, // keeps nothing
            // The last delivery, which its verdict uses in the same step
            // (a turn's events are logged together), and whether any was
            // logged (every state after the first): history between states.
            matching_response: _,
            terminal_final: _, // keeps nothing
            expiry_policy,
            graceful_complete,
            gated_action,
            current_incarnation,
            // The messages sent and not yet delivered or dropped, by message
            // number: the world's messages in flight and due, which are hashed.
            no_silent_loss: _,
            single_terminal,
            protocols,
        } = self;
        let Book {
            requests,
            agents,
            // Between two states, empty: a replay's fault and its send are
            // logged in the same step, and a script's marker with its send.
            replays: _,
            scripted: _,
            // A memo of the event being judged: empty between events.
            subject: _,
        } = book;
        c.word(requests.len() as u64);
        let mut requests: Vec<(u32, &Tracked)> =
            requests.iter().map(|(id, r)| (c.number(RequestId(uuid::Uuid::from_u128(*id))), r)).collect();
        requests.sort_unstable_by_key(|r| r.0);
        for (n, r) in requests {
            c.word(
                n as u64
                    | (r.kind as u64) << 32
                    | (r.status as u64) << 40
                    | (book.superseded(r) as u64) << 48
                    | (book.abandoned(r) as u64) << 49,
            );
            c.agent(r.requester);
            c.agent(r.target);
            c.millis(r.deadline);
        }
        let mut agents: Vec<(u32, AgentId)> =
            (0..agents.len()).map(|i| AgentId(i as u32)).map(|a| (c.agent_index(a), a)).collect();
        agents.sort_unstable_by_key(|a| a.0);
        for (_, a) in agents {
            gated_action.canon_agent(a, c);
            book.agent(a).life.hash(c);
            single_terminal.canon_agent(a, c);
            expiry_policy.canon_agent(a, c);
            c.word(book.agent(a).incarnation as u64);
        }
        current_incarnation.canon(c);
        graceful_complete.canon(c);
        expiry_policy.canon(c);
        protocols.canon(c);
    }
}

/// Checks every invariant over a finished run.
pub fn check(outcome: &Outcome, policy: &Policy, require_plan: &[bool]) -> Vec<Violation> {
    let log = Log { names: &outcome.names, events: &outcome.events, ended_at: outcome.ended_at, stop: outcome.stop };
    check_log(&log, policy, require_plan)
}

/// What the oracle reads of a run: borrowed, so a caller with a log of its
/// own need not copy it into an `Outcome`.
pub struct Log<'a> {
    pub names: &'a Names,
    pub events: &'a [Stamped],
    pub ended_at: Millis,
    pub stop: Stop,
}

/// [`check`] over a borrowed log: a [`Watch`] fed every event, then
/// finished. Violations come in event order (an expiry's obligation judged
/// late is placed at its `Expired` event), then the end-of-run ones.
pub fn check_log(log: &Log, policy: &Policy, require_plan: &[bool]) -> Vec<Violation> {
    let mut w = Watch::new(require_plan);
    let mut out = Vec::new();
    for (i, e) in log.events.iter().enumerate() {
        w.observe(policy, log.names, i, e, &mut out);
    }
    w.finish(policy, log.names, log.ended_at, log.stop, &mut out);
    out
}

/// Where a [`Watch`] fed `o`'s events one at a time parts from
/// [`check_log`] reading them whole, if it does: after each event,
/// finishing a clone of the watcher (as the explorer judges a state it may
/// extend) must report exactly what `check_log` reports on the log up to
/// that event, for a run that settled there and for one stopped there by
/// its end time. The unit tests' logs and the bundled runs are held to it.
pub fn watcher_parts_from_log(o: &Outcome, policy: &Policy, require_plan: &[bool]) -> Option<String> {
    let mut w = Watch::new(require_plan);
    let mut seen = Vec::new();
    for (i, e) in o.events.iter().enumerate() {
        w.observe(policy, &o.names, i, e, &mut seen);
        for stop in [Stop::Settled, Stop::EndTime] {
            let mut got = seen.clone();
            w.clone().finish(policy, &o.names, e.t, stop, &mut got);
            let log = Log { names: &o.names, events: &o.events[..=i], ended_at: e.t, stop };
            let whole = check_log(&log, policy, require_plan);
            if got != whole {
                return Some(format!("after event {i}, {stop:?}: the watcher says {got:?}, the log {whole:?}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! The watcher as a whole: the fingerprint it gives the explorer. That
    //! it is one oracle whether fed event by event or a whole log is
    //! guarded on every test log (see `fixture::check`) and on the bundled
    //! scenarios (tests/oracle.rs).
    use super::fixture::*;
    use super::*;
    use crate::protocol::Kind;

    fn send(seq: u64) -> Event {
        Event::Send {
            seq,
            from: ALICE,
            to: crate::protocol::Address::Agent(LEAD),
            message_type: crate::protocol::MessageType::Request(crate::protocol::Kind::Plan),
            request_id: Some(id(1)),
            approve: None,
            words: None,
        }
    }

    fn deliver(seq: u64) -> Event {
        Event::Deliver {
            seq,
            sender: ALICE,
            claimed_from: ALICE,
            to: LEAD,
            message_type: crate::protocol::MessageType::Request(crate::protocol::Kind::Plan),
            request_id: Some(id(1)),
        }
    }

    #[test]
    fn the_state_hash_leaves_out_message_numbers_and_keeps_request_states() {
        let run = |log: Vec<(u64, Event)>| fed(&log).0;
        let plan = |first: u64, then: Status| {
            run(vec![
                (0, opened(1, Kind::Plan, ALICE, LEAD)),
                (0, send(first)),
                (0, Event::Note { text: "a step that adds nothing".into() }),
                (5, deliver(first)),
                (6, send(first + 1)),
                (8, delivered(1, Kind::Plan, ALICE, LEAD)),
                (8, applied(1, Kind::Plan, ALICE, LEAD, then)),
            ])
        };
        // Same events, other message numbers, and one event more before:
        // the same future.
        assert_eq!(hash_of(&plan(1, Status::Approved)), hash_of(&plan(40, Status::Approved)));
        assert_ne!(hash_of(&plan(1, Status::Approved)), hash_of(&plan(1, Status::Rejected)));
    }
}
