//! The world's simulated state, declared once, and its fingerprint
//! generated from that declaration.
//!
//! Two worlds are in the same state when their `Sim`s agree: the explorer
//! fingerprints them and nothing else of a world. `simulated_state!` below
//! declares `Sim` and, from the same field list, hashes every field through
//! [`Fingerprint`]: a field added to the state is in the fingerprint by being
//! declared, and one whose type has no fingerprint is a compile error. What
//! a type hashes (agents renamed by the symmetry permutation, request ids
//! numbered as met, the messages in flight as a multiset) is said once per
//! type, below or beside the type.
//!
//! The rest of a world is the run's, not its state: its shell, its log, its
//! switches and scratch. [`World::fingerprint`] says why for each of those
//! fields, by name, so a field added to `World` is a compile error there
//! until it is sorted into `Sim` or said not to be state.

use super::filebox::Inboxes;
use super::network::{NetRng, Network};
use super::queue::Queue;
use super::teambox::TeamInboxes;
use super::{choice, Due, FileState, Scheduled, Shell, World};
use crate::agent::{Input, Roster, Script};
use crate::protocol::{Address, AgentId, Canon, Delivery, Fingerprint, Millis, WaitFor};
use smallvec::SmallVec;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// Declares the simulated state and hashes each of its fields, in order.
macro_rules! simulated_state {
    ($(#[$m:meta])* struct $name:ident { $($(#[$fm:meta])* $field:ident : $ty:ty,)* }) => {
        $(#[$m])*
        pub(super) struct $name {
            $($(#[$fm])* pub(super) $field: $ty,)*
        }

        impl Fingerprint for $name {
            fn fingerprint(&self, c: &mut Canon) {
                $(Fingerprint::fingerprint(&self.$field, c);)*
            }
        }
    };
}

simulated_state! {
    /// The simulated state of a world: the team's roster and incarnations,
    /// virtual time and what is due, the network and what it holds, the files
    /// and inboxes, who waits on whom.
    #[derive(Clone)]
    struct Sim {
        /// Virtual time. The driver alone moves it, when every actor is idle.
        clock: Millis,
        /// Shared until written, as the names are: a status changes a few
        /// times a run, and the explorer copies the world into every state.
        roster: Arc<Roster>,
        /// Bumped when an agent crashes or is killed: its queued inputs and timers
        /// from before are then recognised as lost.
        epochs: Arc<PerAgent<u32>>,
        /// Events due, in (time, scheduling order).
        queue: Queue,
        /// The network's own stream (latency draws, a fault's odds), so that
        /// how often the network draws never changes an agent's ids.
        net_rng: NetRng,
        /// Shared until written, as the names are.
        files: Arc<BTreeMap<String, FileState>>,
        /// Shared until written: most steps only read it (a quiet network is
        /// never written), and the explorer copies the world into every state.
        net: Arc<Network>,
        /// `Some`: the network does not time its deliveries; each message waits
        /// here until a shell chooses when it arrives (the explorer, and a run
        /// following a schedule). `None`: it arrives after its drawn latency.
        flight: Option<Vec<Delivery>>,
        /// Inputs held for a stalled agent, with the time the stall ends.
        /// Few agents stall at once, so a map: a slot per agent would cost 4 MB
        /// at 100,000 teammates.
        stalls: BTreeMap<AgentId, (Millis, VecDeque<Input>)>,
        /// Crashed agents whose crash scheduled a restart. Any other crash is
        /// final, and nothing (not even the kill default) changes it.
        restarts_due: BTreeSet<AgentId>,
        /// Who is blocked on whom, to name deadlocks as they form.
        waits: WaitFor,
        /// File mode's inboxes; `None` in memory mode, whose paths never look further.
        /// Boxed: most worlds have none, and the explorer copies the world.
        inbox: Option<Box<Inboxes>>,
        /// Claude Code mode's inbox arrays; `None` in the other modes.
        team: Option<Box<TeamInboxes>>,
    }
}

/// One value per agent, by index: hashed in the permutation's order, so
/// two teammates' values trade places when the teammates do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PerAgent<T>(pub Vec<T>);

impl<T> std::ops::Deref for PerAgent<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> std::ops::DerefMut for PerAgent<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl Fingerprint for PerAgent<u32> {
    fn fingerprint(&self, c: &mut Canon) {
        for i in c.in_new_order(self.len()) {
            c.word(self[i] as u64);
        }
    }
}

impl Fingerprint for Roster {
    fn fingerprint(&self, c: &mut Canon) {
        for i in c.in_new_order(self.statuses.len()) {
            c.word(self.statuses[i] as u64);
        }
    }
}

/// The events due, each owner's in their order; two owners' order at the
/// same instant is not state (either may fire first).
impl Fingerprint for Queue {
    fn fingerprint(&self, c: &mut Canon) {
        // Sorted once, by (time, owner, order), not put in (time, order) first.
        let mut due: SmallVec<[(Millis, u32, u64, &Due); 8]> = SmallVec::new();
        due.extend(self.entries().map(|(at, seq, d)| (at, c.agent_index(choice::owner(d)), seq, d)));
        due.sort_unstable_by_key(|&(at, owner, seq, _)| (at, owner, seq));
        c.word(due.len() as u64);
        for &(at, owner, _, d) in due.iter() {
            c.millis(at);
            c.word(owner as u64);
            d.fingerprint(c);
        }
    }
}

/// How far the stream has drawn: its next coin. Forgotten, two states whose
/// next draws differ (a latency from a range, a fault left to chance) would
/// be merged.
impl Fingerprint for NetRng {
    fn fingerprint(&self, c: &mut Canon) {
        c.word(self.position());
    }
}

impl Fingerprint for BTreeMap<String, FileState> {
    fn fingerprint(&self, c: &mut Canon) {
        c.word(self.len() as u64);
        for (path, f) in self {
            c.text(path);
            c.word(c.agent_index(f.writer) as u64 | (f.done as u64) << 32);
            c.word(f.total as u64);
        }
    }
}

/// Latency is the same in every state; the file's faults, partitions and
/// what the adversary captured are filled only by the file's faults, which
/// name their teammates (so no symmetry reorders them): written out whole.
impl Fingerprint for Network {
    fn fingerprint(&self, c: &mut Canon) {
        if !self.faults.is_empty() || !self.partitions.is_empty() || self.capture {
            c.text(&format!("{self:?}"));
        }
    }
}

/// The messages in flight as a multiset. Each is hashed on its own, with the
/// ids the walk has already named by their numbers, and the hashes are
/// added: a sum does not depend on the order, and duplicates count (a xor
/// would cancel them). Only when a message quotes an id the walk has not met
/// must the walk number it, and then in an order of their own: sorted by
/// those hashes. Hashed after the agents, which name most ids.
impl Fingerprint for Option<Vec<Delivery>> {
    fn fingerprint(&self, c: &mut Canon) {
        let flight = self.as_deref().unwrap_or_default();
        let times = c.flight_times();
        let mut sum = 0u64;
        let mut unmet = false;
        let mut keyed: SmallVec<[(u64, usize); 32]> = SmallVec::new();
        for (i, d) in flight.iter().enumerate() {
            let mut k = c.fresh();
            if let Some(id) = d.envelope.message.request_id() {
                match c.known(id) {
                    Some(n) => k.word(u64::from(n)),
                    None => {
                        unmet = true;
                        k.word(u64::MAX);
                    }
                }
            }
            d.canon_timed(&mut k, times);
            let key = k.finish();
            sum = sum.wrapping_add(key);
            keyed.push((key, i));
        }
        c.word(flight.len() as u64);
        c.word(sum);
        if unmet {
            keyed.sort_unstable();
            for &(_, i) in keyed.iter() {
                if flight[i].envelope.message.request_id().is_some_and(|id| c.known(id).is_none()) {
                    flight[i].canon_timed(c, times);
                }
            }
        }
    }
}

/// Only the file's stalls fill it, naming their teammates: written out whole.
impl Fingerprint for BTreeMap<AgentId, (Millis, VecDeque<Input>)> {
    fn fingerprint(&self, c: &mut Canon) {
        if !self.is_empty() {
            c.text(&format!("{self:?}"));
        }
    }
}

/// A set of agents, renamed: which ones, not in which order they were added.
impl Fingerprint for BTreeSet<AgentId> {
    fn fingerprint(&self, c: &mut Canon) {
        if self.is_empty() {
            // As the count below would say it, without the vector.
            return c.word(0);
        }
        let mut renamed: SmallVec<[u32; 8]> = SmallVec::new();
        renamed.extend(self.iter().map(|a| c.agent_index(*a)));
        renamed.sort_unstable();
        c.word(renamed.len() as u64);
        for &n in renamed.iter() {
            c.word(n as u64);
        }
    }
}

impl Fingerprint for WaitFor {
    fn fingerprint(&self, c: &mut Canon) {
        self.canon(c);
    }
}

/// Claude Code mode's inboxes: never under symmetry (the mode has none).
impl Fingerprint for TeamInboxes {
    fn fingerprint(&self, c: &mut Canon) {
        c.text(&self.state_text());
    }
}

/// File mode's inboxes: never under symmetry (file mode has none).
impl Fingerprint for Inboxes {
    fn fingerprint(&self, c: &mut Canon) {
        c.text(&self.state_text());
    }
}

/// An event due, without when or whose (the queue writes those).
impl Fingerprint for Due {
    fn fingerprint(&self, c: &mut Canon) {
        match self {
            Due::Deliver(x) => {
                c.word(1);
                x.canon(c);
            }
            Due::Wake { agent, epoch, timer } => {
                c.word(2 | (*timer as u64) << 8 | (*epoch as u64) << 16);
                c.agent(*agent);
            }
            Due::Input { agent, input } => {
                c.word(3);
                c.agent(*agent);
                input.fingerprint(c);
            }
            Due::Fault(f) => {
                c.word(4);
                f.fingerprint(c);
            }
            Due::ReadInbox { agent } => {
                c.word(5);
                c.agent(*agent);
            }
            Due::InboxRead(read) => {
                c.word(6);
                c.agent(read.agent);
                c.text(&format!("{read:?}"));
            }
            Due::TeamRead(read) => {
                c.word(7);
                c.agent(read.agent);
                c.text(&format!("{read:?}"));
            }
        }
    }
}

impl Fingerprint for Input {
    fn fingerprint(&self, c: &mut Canon) {
        match self {
            Input::Start => c.word(1),
            Input::Deliver(d) => {
                c.word(2);
                d.canon(c);
            }
            Input::Wake(t) => c.word(3 | (*t as u64) << 8),
            Input::Script(s) => s.fingerprint(c),
            Input::Restart { incarnation } => c.word(20 | (*incarnation as u64) << 8),
            Input::Respawn { incarnation } => c.word(21 | (*incarnation as u64) << 8),
        }
    }
}

impl Fingerprint for Scheduled {
    fn fingerprint(&self, c: &mut Canon) {
        match self {
            Scheduled::Crash { agent, restart_after } => {
                c.word(1 | restart_after.map_or(0, |m| m.0 << 8 | 1) << 4);
                c.agent(*agent);
            }
            Scheduled::TornWrite { agent, restart_after } => {
                c.word(2 | restart_after.map_or(0, |m| m.0 << 8 | 1) << 4);
                c.agent(*agent);
            }
            Scheduled::JunkLine { agent, text } => {
                c.word(9);
                c.agent(*agent);
                c.text(text);
            }
            Scheduled::RepeatedDelivery { agent, times } => {
                c.word(11 | (*times as u64) << 8);
                c.agent(*agent);
            }
            Scheduled::DisplayCap { agent, shown } => {
                c.word(12 | (*shown as u64) << 8);
                c.agent(*agent);
            }
            Scheduled::MisroutedId { agent } => {
                c.word(14);
                c.agent(*agent);
            }
            Scheduled::PhantomSend { from, to, text } => {
                c.word(13);
                c.agent(*from);
                c.text(to);
                c.text(text);
            }
            Scheduled::Restart { agent, epoch } => {
                c.word(3 | (*epoch as u64) << 8);
                c.agent(*agent);
            }
            Scheduled::Stall { agent, until } => {
                c.word(4);
                c.agent(*agent);
                c.millis(*until);
            }
            Scheduled::Unstall { agent, until } => {
                c.word(5);
                c.agent(*agent);
                c.millis(*until);
            }
            Scheduled::Cut { partition } => c.word(6 | (*partition as u64) << 8),
            Scheduled::Heal { partition } => c.word(7 | (*partition as u64) << 8),
            Scheduled::Forge { claimed_from, to, message, id_label } => {
                c.word(8);
                c.agent(*claimed_from);
                c.agent(*to);
                message.canon(c);
                c.opt_text(id_label.as_deref());
            }
            Scheduled::Replay { label, message_type } => {
                c.word(9);
                c.text(label);
                c.text(message_type.name());
            }
            Scheduled::ReleaseReorder { from, to, .. } => {
                c.word(10);
                c.agent(*from);
                c.agent(*to);
            }
        }
    }
}

/// A scripted step: what it does ([`script_kind`]), then whom it is for.
impl Fingerprint for Script {
    fn fingerprint(&self, c: &mut Canon) {
        script_kind(self, c);
        match self {
            Script::Ask { to, .. }
            | Script::AskPlan { to, .. }
            | Script::Respawn { to }
            | Script::Answer { to, .. }
            | Script::Say { to: Address::Agent(to), .. } => c.agent(*to),
            Script::Say { to: Address::Everyone, .. } => c.word(u64::MAX),
        }
    }
}

/// A scripted step without whom it is for (a teammate's signature hashes
/// the lead's steps for it this way).
pub fn script_kind(s: &Script, c: &mut Canon) {
    match s {
        Script::Ask { kind, words, label, .. } => {
            c.word(10 | (kind.index() as u64) << 8);
            c.opt_text(words.as_deref());
            c.opt_text(label.as_deref());
        }
        Script::Say { text, .. } => {
            c.word(12);
            c.text(text);
        }
        Script::AskPlan { text, .. } => {
            c.word(13);
            c.text(text);
        }
        Script::Respawn { .. } => c.word(14),
        Script::Answer { kind, quote, approve, words, .. } => {
            c.word(15 | (*kind as u64) << 8 | (*approve as u64) << 16);
            match quote {
                crate::agent::Quote::Label(l) => c.text(l),
                crate::agent::Quote::Id(id) => c.id(*id),
            }
            c.opt_text(words.as_deref());
        }
    }
}

impl<S: Shell> World<S> {
    /// Hashes this world's simulated state into `c`. Every other field of a
    /// world is named here with why it is not state, so a field added to
    /// `World` is a compile error until it is sorted.
    pub fn fingerprint(&self, c: &mut Canon) {
        let World {
            sim,
            // The same for every state of a run: set before it starts.
            policy: _,
            names: _,
            run: _,
            // Names, not state: a request id is named by the order the walk
            // meets it, a message by what it carries; the streams that draw
            // ids, and the counter that numbers messages, only pick names.
            ids: _,
            next_msg: _,
            // The shell's: between two states its mailboxes are empty (a
            // step hands every input over).
            shell: _,
            // What the run logged and when, and what it keeps for pictures:
            // history, not state.
            trace: _,
            stamp_at: _,
            last_logged: _,
            last_event: _,
            frames: _,
            // Scratch and guards: empty, or the same, between two states.
            out: _,
            handled: _,
            aborted: _,
        } = self;
        sim.fingerprint(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::RosterStatus;

    fn hash(x: &impl Fingerprint, perm: &[u32]) -> u64 {
        let mut c = Canon::new(perm);
        x.fingerprint(&mut c);
        c.finish()
    }

    #[test]
    fn what_is_kept_per_agent_moves_with_the_agents() {
        // Teammates 1 and 2 trade places: their values trade places too.
        let swap = [0, 2, 1];
        assert_eq!(hash(&PerAgent(vec![0, 1, 2]), &swap), hash(&PerAgent(vec![0, 2, 1]), &[]));
        assert_ne!(hash(&PerAgent(vec![0, 1, 2]), &swap), hash(&PerAgent(vec![0, 1, 2]), &[]));
        let roster = |s: Vec<RosterStatus>| Roster { statuses: s };
        let (w, c) = (RosterStatus::Working, RosterStatus::Crashed);
        assert_eq!(hash(&roster(vec![w, c, w]), &swap), hash(&roster(vec![w, w, c]), &[]));
        assert_ne!(hash(&roster(vec![w, c, w]), &[]), hash(&roster(vec![w, w, c]), &[]));
    }

    #[test]
    fn a_set_of_agents_is_renamed_as_a_set() {
        let set = |v: &[u32]| v.iter().map(|&a| AgentId(a)).collect::<BTreeSet<_>>();
        assert_eq!(hash(&set(&[1]), &[0, 2, 1]), hash(&set(&[2]), &[]));
        assert_eq!(hash(&set(&[1, 2]), &[0, 2, 1]), hash(&set(&[1, 2]), &[]));
        assert_ne!(hash(&set(&[1]), &[]), hash(&set(&[1, 2]), &[]));
    }

    #[test]
    fn with_the_inverse_given_or_not_the_order_is_the_same() {
        let perm = [0, 3, 1, 2];
        let inverse = [0, 2, 3, 1];
        let walk = |c: &mut Canon| PerAgent(vec![5, 6, 7, 8]).fingerprint(c);
        let (mut a, mut b) = (Canon::new(&perm), Canon::new(&perm).with_inverse(&inverse));
        walk(&mut a);
        walk(&mut b);
        assert_eq!(a.finish(), b.finish());
        assert_eq!(Canon::new(&perm).in_new_order(4).collect::<Vec<_>>(), vec![0, 2, 3, 1]);
    }

    #[test]
    fn present_and_absent_differ() {
        assert_ne!(hash(&Some(Millis(0)), &[]), hash(&None::<Millis>, &[]));
    }
}
