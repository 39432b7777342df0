//! The virtual-time event queue: what is due when, in (time, scheduling
//! order). Same-millisecond events run in the order they were scheduled,
//! never in an order the runtime picks.

use super::Due;
use crate::protocol::Millis;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A binary heap of small keys, the events themselves in a slab beside it.
/// Taking the first entry of a `BTreeMap` shifts the rest of its leaf, a
/// memmove of up to eleven 112-byte events; a heap of whole events still
/// moved 2 log2(n) of them a pop (what each cost: docs/architecture.md). A
/// key is 24 bytes and an event is moved once in and once out.
pub struct Queue {
    heap: BinaryHeap<Entry>,
    slab: Vec<Option<Due>>,
    free: Vec<u32>,
    next_seq: u64,
}

/// Room for the events a small run queues at once, from the start: a sweep
/// plays thousands of short runs, and each grew its queue from nothing, a
/// copy of its events at each doubling.
const QUEUED_AT_FIRST: usize = 32;

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            heap: BinaryHeap::with_capacity(QUEUED_AT_FIRST),
            slab: Vec::with_capacity(QUEUED_AT_FIRST),
            free: Vec::with_capacity(QUEUED_AT_FIRST),
            next_seq: 0,
        }
    }
}

#[derive(Clone)]
struct Entry {
    at: Millis,
    seq: u64,
    slot: u32,
}

impl Entry {
    fn key(&self) -> (Millis, u64) {
        (self.at, self.seq)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: the heap's top is the earliest (time, order).
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A copy holds the live events only, compacted: no free slots, no free
/// list (the explorer copies the world into every state it keeps).
impl Clone for Queue {
    fn clone(&self) -> Queue {
        let mut heap = Vec::with_capacity(self.heap.len());
        let mut slab = Vec::with_capacity(self.heap.len());
        for e in self.heap.iter() {
            if let Some(d) = &self.slab[e.slot as usize] {
                heap.push(Entry { at: e.at, seq: e.seq, slot: slab.len() as u32 });
                slab.push(Some(d.clone()));
            }
        }
        // Still a heap: the entries keep their places, only their slots moved.
        Queue { heap: BinaryHeap::from(heap), slab, free: Vec::new(), next_seq: self.next_seq }
    }
}

impl Queue {
    /// Queues `due` at `at`; true when it is now the earliest entry.
    pub fn push(&mut self, at: Millis, due: Due) -> bool {
        self.next_seq += 1;
        let earliest = self.next_time().is_none_or(|t| at < t);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(due);
                slot
            }
            None => {
                self.slab.push(Some(due));
                // Slots are reused, so there are never more than the most
                // events queued at once; u32 is 4 billion of them.
                u32::try_from(self.slab.len() - 1).expect("fewer than 2^32 events queued at once")
            }
        };
        self.heap.push(Entry { at, seq: self.next_seq, slot });
        earliest
    }

    /// When the earliest entry is due.
    pub fn next_time(&self) -> Option<Millis> {
        self.heap.peek().map(|e| e.at)
    }

    /// Takes the earliest entry if it is due at or before `now`.
    pub fn pop_due(&mut self, now: Millis) -> Option<Due> {
        if self.next_time()? > now {
            return None;
        }
        let slot = self.heap.pop()?.slot;
        self.free.push(slot);
        self.slab[slot as usize].take()
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// About the bytes a copy of the queue holds (its entries, not what
    /// they point to): a long script queues every step from the start.
    pub fn bytes(&self) -> usize {
        self.heap.len() * std::mem::size_of::<Entry>()
            + self.slab.len() * std::mem::size_of::<Option<Due>>()
            + self.free.len() * std::mem::size_of::<u32>()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Every queued event, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Due> {
        self.slab.iter().flatten()
    }

    /// Every queued event with its time and its place in the order, in no
    /// particular order (the fingerprint sorts them its own way).
    pub fn entries(&self) -> impl Iterator<Item = (Millis, u64, &Due)> {
        self.heap.iter().filter_map(|e| self.slab[e.slot as usize].as_ref().map(|d| (e.at, e.seq, d)))
    }

    /// Every queued event with its time and its place in the order, in
    /// (time, order): what a search looks at and fingerprints. A copy of
    /// the keys, sorted: the explorer's queues hold a handful.
    pub fn in_order(&self) -> smallvec::SmallVec<[(Millis, u64, &Due); 8]> {
        // Built in place, not collected: see `Model::fingerprint`.
        let mut keys: smallvec::SmallVec<[(Millis, u64, u32); 8]> = smallvec::SmallVec::new();
        keys.extend(self.heap.iter().map(|e| (e.at, e.seq, e.slot)));
        keys.sort_unstable();
        let mut out = smallvec::SmallVec::new();
        out.extend(keys.iter().filter_map(|&(at, seq, slot)| self.slab[slot as usize].as_ref().map(|d| (at, seq, d))));
        out
    }

    /// The events due at the earliest instant, in their order: what a
    /// search may fire next. Only those are sorted, not the whole queue.
    pub fn earliest(&self) -> smallvec::SmallVec<[(u64, &Due); 8]> {
        let mut out = smallvec::SmallVec::new();
        let Some(first) = self.next_time() else { return out };
        for e in self.heap.iter().filter(|e| e.at == first) {
            if let Some(d) = self.slab[e.slot as usize].as_ref() {
                out.push((e.seq, d));
            }
        }
        out.sort_unstable_by_key(|(seq, _)| *seq);
        out
    }

    /// Takes the event queued with order number `seq`, wherever it stands
    /// (a search may fire any event due at the earliest instant).
    pub fn take(&mut self, seq: u64) -> Option<(Millis, Due)> {
        // Nearly always the earliest of all: then a pop, not a rebuild.
        if self.heap.peek().is_some_and(|e| e.seq == seq) {
            let e = self.heap.pop()?;
            self.free.push(e.slot);
            return self.slab[e.slot as usize].take().map(|d| (e.at, d));
        }
        let entry = self.heap.iter().find(|e| e.seq == seq)?;
        let (at, slot) = (entry.at, entry.slot);
        self.heap.retain(|e| e.seq != seq);
        self.free.push(slot);
        self.slab[slot as usize].take().map(|d| (at, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Input, Timer};
    use crate::protocol::AgentId;

    fn wake(agent: u32) -> Due {
        Due::Wake { agent: AgentId(agent), epoch: 0, timer: Timer::Deadline }
    }

    fn agent_of(d: Due) -> u32 {
        match d {
            Due::Wake { agent, .. } => agent.0,
            Due::Input { agent, .. } => agent.0,
            _ => unreachable!("the tests queue wakes and inputs only"),
        }
    }

    #[test]
    fn earliest_first_and_same_millisecond_in_scheduling_order() {
        let mut q = Queue::default();
        assert!(q.push(Millis(5), wake(1)));
        assert!(!q.push(Millis(5), wake(2)), "a tie is not earlier");
        assert!(q.push(Millis(3), wake(3)));
        assert!(!q.push(Millis(5), Due::Input { agent: AgentId(4), input: Input::Start }));
        assert!(!q.push(Millis(9), wake(5)));
        assert_eq!(q.pop_due(Millis(2)).map(agent_of), None, "nothing is due before 3 ms");
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_due(Millis(5)).map(agent_of)).collect();
        assert_eq!(order, vec![3, 1, 2, 4]);
        assert_eq!(q.next_time(), Some(Millis(9)));
        assert_eq!(q.len(), 1);
        assert_eq!(q.iter().count(), 1, "a taken event's slot is empty");
        q.push(Millis(10), wake(6));
        assert_eq!(q.slab.len(), 5, "freed slots are used again");
        assert_eq!(q.pop_due(Millis(10)).map(agent_of), Some(5));
        assert_eq!(q.pop_due(Millis(10)).map(agent_of), Some(6));
    }

    #[test]
    fn many_ties_keep_their_order() {
        let mut q = Queue::default();
        for i in 0..1000 {
            q.push(Millis((i % 7) as u64), wake(i));
        }
        let mut last = (Millis::ZERO, 0);
        let mut seen = 0;
        while let Some(d) = q.pop_due(Millis(100)) {
            let i = agent_of(d);
            let key = (Millis((i % 7) as u64), i);
            assert!(key > last || seen == 0, "{key:?} after {last:?}");
            last = key;
            seen += 1;
        }
        assert_eq!(seen, 1000);
        assert!(q.is_empty());
    }

    #[test]
    fn an_event_taken_out_of_order_leaves_the_rest_in_theirs() {
        let mut q = Queue::default();
        for i in 0..6 {
            q.push(Millis((i % 3) as u64), wake(i));
        }
        let order: Vec<u32> = q.in_order().into_iter().map(|(_, _, d)| agent_of(d.clone())).collect();
        assert_eq!(order, [0, 3, 1, 4, 2, 5]);
        let (_, seq, _) = q.in_order()[3];
        let (at, d) = q.take(seq).expect("queued");
        assert_eq!((at, agent_of(d)), (Millis(1), 4));
        assert!(q.take(seq).is_none(), "taken once");
        q.push(Millis(1), wake(9));
        let mut rest = Vec::new();
        while let Some(d) = q.pop_due(Millis(10)) {
            rest.push(agent_of(d));
        }
        assert_eq!(rest, [0, 3, 1, 9, 2, 5]);
    }
}
