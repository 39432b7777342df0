//! The network between agents: latency, the faults a scenario injects on
//! links (delay, drop, duplicate, reorder, partition), and the ones that act
//! on the network at a time (a partition's start and end, forge, replay).
//! Every random choice draws from the run's one RNG,
//! in a fixed order, so a seed replays the same faults.

use super::faults::{FaultKind, Scheduled};
use super::{Due, Shell, World};
use crate::protocol::{AgentId, Delivery, Envelope, Message, Millis, RequestId};
use crate::trace::{Cause, Event};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A one-way delivery time, fixed or drawn uniformly from a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    Fixed(Millis),
    Range(Millis, Millis),
}

impl Latency {
    pub fn draw(self, rng: &mut NetRng) -> Millis {
        match self {
            Latency::Fixed(m) => m,
            Latency::Range(lo, hi) => Millis(rng.get().gen_range(lo.0..=hi.0)),
        }
    }
}

/// The network's own random stream (`agent::network_stream`), made on its
/// first draw: a fixed latency and sure faults never draw, and then the
/// world carries one word for it, not a 320-byte generator that every
/// state the explorer keeps would copy.
#[derive(Clone, Debug)]
pub struct NetRng {
    seed: u64,
    rng: Option<Box<ChaCha8Rng>>,
}

impl NetRng {
    pub fn new(seed: u64) -> NetRng {
        NetRng { seed, rng: None }
    }

    /// How far the stream has been drawn (0: not at all): two states whose
    /// next draws differ are different states to a search.
    pub fn position(&self) -> u64 {
        self.rng.as_ref().map_or(0, |r| r.get_word_pos() as u64 + 1)
    }

    #[inline]
    pub fn get(&mut self) -> &mut ChaCha8Rng {
        let seed = self.seed;
        self.rng.get_or_insert_with(|| Box::new(crate::agent::network_stream(seed)))
    }
}

/// Which messages a link fault touches. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub from: Option<AgentId>,
    pub to: Option<AgentId>,
    pub types: Vec<crate::protocol::MessageType>,
    /// Only messages quoting this labelled request's id.
    pub request: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LinkEffect {
    Delay(Latency),
    Drop,
    Duplicate,
    /// Hold the message until the next one on the same link has passed.
    Reorder,
}

/// What a search does with a link fault of the file: the world plays it on
/// every message it matches, the search spends it (a budget) on any
/// message, or every order of arrival the search tries already covers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InSearch {
    Played,
    Budget,
    Covered,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkFault {
    pub effect: LinkEffect,
    pub filter: Filter,
    pub at: Millis,
    pub until: Option<Millis>,
    /// How many messages it may touch; `None` for all that match.
    pub count: Option<u32>,
    /// Chance of touching a matching message.
    pub probability: f64,
    pub hits: u32,
}

/// Messages between `a` and `b` (or only from `a` to `b`) cannot pass while
/// the partition lasts. They wait for it to heal, or are lost with `drop`.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    pub a: AgentId,
    pub b: AgentId,
    pub one_way: bool,
    pub at: Millis,
    pub until: Option<Millis>,
    pub drop: bool,
}

impl LinkFault {
    /// Counted drops and duplicates are budgets, and so are those left to
    /// chance: a search tries both outcomes (touched, or not) where a run
    /// flips a seeded coin, as a lossy network is checked. Uncounted
    /// certain ones touch every match, which only the network can play.
    /// Delays and reorders are covered, since in a search any message may
    /// arrive at any time.
    pub fn in_search(&self) -> InSearch {
        let kind = match self.effect {
            LinkEffect::Delay(_) => FaultKind::Delay,
            LinkEffect::Drop => FaultKind::Drop,
            LinkEffect::Duplicate => FaultKind::Duplicate,
            LinkEffect::Reorder => FaultKind::Reorder,
        };
        InSearch::of(kind, self.count.is_some(), self.probability)
    }
}

impl InSearch {
    /// What a search does with a fault of `kind`, `counted` or not, with
    /// chance `probability` (see [`LinkFault::in_search`]); every fault not
    /// on links (a crash, a stall, a partition) is played at its time. One
    /// rule for the world's faults and a scenario file's (`explore --write`
    /// keeps in the file what was played).
    pub fn of(kind: FaultKind, counted: bool, probability: f64) -> InSearch {
        match kind {
            FaultKind::Delay | FaultKind::Reorder => InSearch::Covered,
            FaultKind::Drop | FaultKind::Duplicate if counted || probability < 1.0 => InSearch::Budget,
            _ => InSearch::Played,
        }
    }
}

impl Partition {
    fn cuts(&self, now: Millis, from: AgentId, to: AgentId) -> bool {
        let active = self.at <= now && self.until.is_none_or(|u| now < u);
        let forward = from == self.a && to == self.b;
        let backward = from == self.b && to == self.a;
        active && (forward || (!self.one_way && backward))
    }
}

/// How the network handles one message.
#[derive(Debug)]
pub enum Route {
    /// No latency, no fault: straight to the mailbox.
    Now,
    /// Deliver one copy after each delay; the notes say which faults acted.
    After {
        /// One delay a copy, at most two (a duplicate): kept inline, as
        /// every message of a run with latency is routed here.
        delays: smallvec::SmallVec<[Millis; 2]>,
        notes: Vec<(FaultKind, String)>,
    },
    Lost(Cause),
    /// Held by a reorder fault until the next message on the link.
    HoldReorder,
    /// Held by partition `i` until it heals.
    HoldPartition(usize),
}

#[derive(Clone, Debug, Default)]
pub struct Network {
    pub latency: Option<Latency>,
    pub faults: Vec<LinkFault>,
    pub partitions: Vec<Partition>,
    reorder_held: BTreeMap<(AgentId, AgentId), (u64, Delivery)>,
    partition_held: Vec<(usize, u64, Delivery)>,
    /// Deliveries seen, for replays: (request id, type) → the last one.
    captured: BTreeMap<(RequestId, crate::protocol::MessageType), Delivery>,
    pub capture: bool,
    /// Label → request id, learnt as requests open (for filters and `@label`).
    pub labels: BTreeMap<String, RequestId>,
    /// How long a reorder hold waits for a follower before letting go.
    pub reorder_patience: Millis,
}

impl Network {
    pub fn new(latency: Latency) -> Network {
        let latency = (latency != Latency::Fixed(Millis::ZERO)).then_some(latency);
        Network { latency, reorder_patience: Millis::from_secs(10), ..Network::default() }
    }

    fn matches(&self, f: &Filter, from: AgentId, to: AgentId, msg: &Message) -> bool {
        f.from.is_none_or(|a| a == from)
            && f.to.is_none_or(|a| a == to)
            && (f.types.is_empty() || f.types.contains(&msg.message_type()))
            && f.request.as_ref().is_none_or(|l| self.labels.get(l).is_some_and(|id| msg.request_id() == Some(*id)))
    }

    /// No latency, no link fault, no partition: every message goes straight
    /// through, and routing it changes nothing.
    #[inline]
    pub fn is_quiet(&self) -> bool {
        self.latency.is_none() && self.faults.is_empty() && self.partitions.is_empty()
    }

    #[inline]
    pub fn route(&mut self, now: Millis, from: AgentId, to: AgentId, msg: &Message, rng: &mut NetRng) -> Route {
        if self.is_quiet() {
            return Route::Now;
        }
        if let Some(cut) = self.across_partitions(now, from, to) {
            return cut;
        }
        let mut delay = self.latency.map_or(Millis::ZERO, |l| l.draw(rng));
        let mut copies = 1;
        let mut notes = Vec::new();
        for i in 0..self.faults.len() {
            let f = &self.faults[i];
            let active = f.at <= now && f.until.is_none_or(|u| now < u) && f.count.is_none_or(|c| f.hits < c);
            if !active || !self.matches(&f.filter, from, to, msg) {
                continue;
            }
            if f.probability < 1.0 && !rng.get().gen_bool(f.probability.max(0.0)) {
                continue;
            }
            let f = &mut self.faults[i];
            f.hits += 1;
            tracing::debug!(at = %now, effect = ?f.effect, from = from.0, to = to.0, "link fault acts");
            match &f.effect {
                LinkEffect::Drop => return Route::Lost(Cause::Drop),
                LinkEffect::Delay(l) => {
                    let extra = l.draw(rng);
                    delay = delay.after(extra);
                    notes.push((FaultKind::Delay, format!("delayed by {extra}")));
                }
                LinkEffect::Duplicate => {
                    copies = 2;
                    notes.push((FaultKind::Duplicate, "delivered twice".to_string()));
                }
                LinkEffect::Reorder => {
                    if !self.reorder_held.contains_key(&(from, to)) {
                        return Route::HoldReorder;
                    }
                }
            }
        }
        Route::After { delays: smallvec::smallvec![delay; copies], notes }
    }

    /// What the partitions on at `now` do to a message from `from` to `to`:
    /// the first that cuts the link loses it or holds it; `None` if none does.
    fn across_partitions(&self, now: Millis, from: AgentId, to: AgentId) -> Option<Route> {
        let i = self.partitions.iter().position(|p| p.cuts(now, from, to))?;
        Some(if self.partitions[i].drop { Route::Lost(Cause::Partition) } else { Route::HoldPartition(i) })
    }

    /// Whether a partition holds any message.
    pub fn partition_held_any(&self) -> bool {
        !self.partition_held.is_empty()
    }

    /// Messages still held by a partition that never healed.
    pub fn drain_partition_held(&mut self) -> Vec<(u64, Delivery)> {
        self.partition_held.drain(..).map(|(_, seq, d)| (seq, d)).collect()
    }

    /// Whether a fault filters on a labelled request.
    pub fn names_requests(&self) -> bool {
        self.faults.iter().any(|f| f.filter.request.is_some())
    }

    /// No latency and no fault of any kind.
    pub fn is_ideal(&self) -> bool {
        self.latency.is_none() && self.faults.is_empty() && self.partitions.is_empty() && !self.capture
    }

    #[inline]
    pub fn capture(&mut self, d: &Delivery) {
        if self.capture {
            if let Some(id) = d.envelope.message.request_id() {
                self.captured.insert((id, d.envelope.message.message_type()), d.clone());
            }
        }
    }
}

/// A partition begins: the log says so (it cuts messages by itself).
pub(super) fn cut<S: Shell>(w: &mut World<S>, partition: usize) {
    if let Some(p) = w.sim.net.partitions.get(partition) {
        let (a, b, one_way, drop, until) = (p.a, p.b, p.one_way, p.drop, p.until);
        w.record(Event::Partition { index: partition as u32, a, b, one_way, drop, until });
    }
}

/// A partition heals: what it held goes on its way, each with its latency,
/// unless another partition cutting the same way is still on: then that one
/// holds it, or loses it if it drops.
pub(super) fn heal<S: Shell>(w: &mut World<S>, partition: usize) {
    w.record(Event::Heal { index: partition as u32 });
    let held = std::mem::take(&mut Arc::make_mut(&mut w.sim.net).partition_held);
    for (p, seq, d) in held {
        if p == partition {
            // Past the partitions still on, as the router sends any message.
            let now = w.now();
            match w.sim.net.across_partitions(now, d.sender, d.to) {
                Some(Route::Lost(cause)) => {
                    let message_type = d.envelope.message.message_type();
                    w.record(Event::Dropped { seq, to: d.to, message_type, cause });
                }
                Some(Route::HoldPartition(other)) => hold_partition(w, other, seq, d),
                _ => {
                    let delay = w.sim.net.latency.map_or(Millis::ZERO, |l| l.draw(&mut w.sim.net_rng));
                    w.in_transit(now.after(delay), d);
                }
            }
        } else {
            Arc::make_mut(&mut w.sim.net).partition_held.push((p, seq, d));
        }
    }
}

/// An adversary injects `message` to `to`, claiming to be `claimed_from`;
/// an `@label` request id is resolved now, or the forge is skipped.
pub(super) fn forge<S: Shell>(
    w: &mut World<S>,
    claimed_from: AgentId,
    to: AgentId,
    mut message: Message,
    id_label: Option<String>,
) {
    if let Some(label) = id_label {
        match w.sim.net.labels.get(&label) {
            Some(id) => message.set_request_id(*id),
            None => {
                w.record(Event::Note { text: format!("forge skipped: request {label:?} was never made") });
                return;
            }
        }
    }
    let adversary = AgentId(w.sim.roster.statuses.len() as u32);
    let now = w.now();
    let env = Envelope { from: claimed_from, to: crate::protocol::Address::Agent(to), sent_at: now, message };
    w.record(Event::Forge { seq: w.next_msg + 1, claimed_from, to, message_type: env.message.message_type() });
    w.transmit(adversary, to, env);
}

/// The network delivers again the last `message_type` it saw for the
/// request labelled `label`, as a new message.
pub(super) fn replay<S: Shell>(w: &mut World<S>, label: &str, message_type: crate::protocol::MessageType) {
    let found = w.sim.net.labels.get(label).and_then(|id| w.sim.net.captured.get(&(*id, message_type))).cloned();
    let Some(mut d) = found else {
        w.record(Event::Note { text: format!("replay skipped: no {message_type} of {label} was seen") });
        return;
    };
    w.next_msg += 1;
    d.seq = w.next_msg;
    let seq = w.next_msg;
    w.record(Event::Fault {
        seq,
        fault: FaultKind::Replay,
        detail: format!("{message_type} of {label} delivered again"),
    });
    let m = &d.envelope.message;
    let (request_id, approve, words) = (m.request_id(), m.approval(), m.words().cloned());
    // The sender the router saw, as for every send: the claimed `from`
    // shows on the delivery.
    w.record(Event::Send {
        seq,
        from: d.sender,
        to: crate::protocol::Address::Agent(d.to),
        message_type,
        request_id,
        approve,
        words,
    });
    w.arrive(d);
}

/// Lets a reorder-held message go if nothing followed it (and no later
/// hold on the link took its place).
pub(super) fn release_reorder<S: Shell>(w: &mut World<S>, from: AgentId, to: AgentId, for_seq: u64) {
    if w.sim.net.reorder_held.get(&(from, to)).is_some_and(|(seq, _)| *seq == for_seq) {
        let Some((seq, d)) = Arc::make_mut(&mut w.sim.net).reorder_held.remove(&(from, to)) else { return };
        w.record(Event::Fault { seq, fault: FaultKind::Reorder, detail: "released: nothing followed it".into() });
        w.arrive(d);
    }
}

pub(super) fn hold_reorder<S: Shell>(w: &mut World<S>, seq: u64, d: Delivery) {
    let key = (d.sender, d.to);
    w.record(Event::Fault { seq, fault: FaultKind::Reorder, detail: "held until the next message on the link".into() });
    let at = w.now().after(w.sim.net.reorder_patience);
    Arc::make_mut(&mut w.sim.net).reorder_held.insert(key, (seq, d));
    w.schedule(at, Due::Fault(Scheduled::ReleaseReorder { from: key.0, to: key.1, seq }));
}

pub(super) fn hold_partition<S: Shell>(w: &mut World<S>, i: usize, seq: u64, d: Delivery) {
    w.record(Event::Fault {
        seq,
        fault: FaultKind::Partition,
        detail: format!("held by partition {} until it heals", i + 1),
    });
    Arc::make_mut(&mut w.sim.net).partition_held.push((i, seq, d));
}

/// After a message passes on a link, a message held there by a reorder fault
/// follows it, arriving just after.
pub(super) fn release_follower<S: Shell>(w: &mut World<S>, from: AgentId, to: AgentId, at: Millis) {
    if !w.sim.net.reorder_held.contains_key(&(from, to)) {
        return;
    }
    if let Some((_, d)) = Arc::make_mut(&mut w.sim.net).reorder_held.remove(&(from, to)) {
        w.in_transit(at, d);
    }
}
