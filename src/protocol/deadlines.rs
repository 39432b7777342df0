//! One deadline queue per requester. The runtime arms a single timer for the
//! earliest entry instead of one timer per request, which actix would re-poll
//! on every wake-up (0.13 M/s at 10,000 in flight, measured).
//!
//! Why lanes and not a heap: a deadline is `sent_at + timeout(kind)`, the
//! clock never goes back and a run's timeout per kind is fixed, so within one
//! kind deadlines arrive already sorted. One FIFO lane per kind keeps them in
//! order at O(1) per request; the earliest deadline is the smaller of the two
//! fronts. A deadline that arrives out of order (a caller passing its own
//! timeout) is still placed correctly, by a sorted insert. With many requests
//! in flight a binary heap spent a good part of a handshake sifting; the
//! lanes spend nothing measurable (docs/architecture.md).
//!
//! A request answered before its deadline leaves its entry: at once if it is
//! the oldest of its kind (the usual case), otherwise it is marked ended,
//! found by its ticket in the sorted lane, and dropped when it reaches the
//! front, or sooner, all together, once ended entries outnumber live ones.
//! Without that, answers that come back out of order (many requests in flight
//! to each teammate) left entries behind a pending one, and the queue grew
//! with every handshake instead of with the requests in flight.

use super::message::{Kind, RequestId};
use super::time::Millis;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Entry<T> {
    deadline: Millis,
    /// The ticket: keeps equal deadlines in the order they were armed, across
    /// lanes too, so expiries at the same millisecond come out reproducibly.
    seq: u64,
    /// Whose deadline: a request id, or (in the request table) the request's
    /// place in the table, 4 bytes instead of 16, so more entries share a
    /// cache line at the two ends of a lane.
    item: T,
    /// False once the request ended before its deadline.
    live: bool,
}

/// One kind's deadlines, sorted by `(deadline, seq)`. Its front is always
/// live: ended entries are dropped as soon as they reach it.
#[derive(Debug, Clone)]
struct Lane<T> {
    entries: VecDeque<Entry<T>>,
    /// Entries marked ended and not yet dropped.
    ended: usize,
}

impl<T> Default for Lane<T> {
    fn default() -> Self {
        Lane { entries: VecDeque::new(), ended: 0 }
    }
}

impl<T> Lane<T> {
    fn drop_ended_front(&mut self) {
        while self.entries.front().is_some_and(|e| !e.live) {
            self.entries.pop_front();
            self.ended -= 1;
        }
    }

    /// Marks the entry armed with `(deadline, seq)` as ended, if it is still
    /// here. Out of line: only answers that overtake an older request come here.
    #[inline(never)]
    fn end_inside(&mut self, deadline: Millis, seq: u64) {
        let Ok(i) = self.entries.binary_search_by(|e| (e.deadline, e.seq).cmp(&(deadline, seq))) else { return };
        let e = &mut self.entries[i];
        if !e.live {
            return;
        }
        e.live = false;
        self.ended += 1;
        // Behind a request that stays pending (a stalled teammate), ended
        // entries would wait for its deadline: compact once they are a
        // quarter, which keeps the lane within 4/3 of the live entries plus
        // 64. A ring buffer cycles through all its room, so room is what
        // costs cache: at 10,000 in flight, with compaction at one half, the
        // burst of answers at the start grew the lane to 32,768 entries for
        // good, walked round and round; reserved and compacted at a quarter,
        // it is half that and misses the cache less (docs/architecture.md).
        if self.ended > 64 && self.ended * 4 > self.entries.len() {
            self.entries.retain(|e| e.live);
            self.ended = 0;
        }
    }
}

/// Deadlines of `T`s: request ids by default.
#[derive(Debug, Clone)]
pub struct DeadlineQueue<T = RequestId> {
    /// One a protocol, in [`Kind::ALL`]'s order.
    lanes: [Lane<T>; Kind::COUNT],
    seq: u64,
    /// The room a lane takes the first time it is armed (see `with_room`).
    room: usize,
}

impl<T> Default for DeadlineQueue<T> {
    fn default() -> Self {
        DeadlineQueue { lanes: std::array::from_fn(|_| Lane::default()), seq: 0, room: 0 }
    }
}

impl<T: Copy> DeadlineQueue<T> {
    /// A queue with room for `n` requests pending at once of either kind,
    /// ended entries not yet dropped included: compaction keeps those under
    /// `n / 3` or 64 (see `end_inside`), so with at most `n` pending it never
    /// grows.
    ///
    /// A lane takes its room when it is first armed: a load asks one
    /// protocol, and room for 100,000 in each of the others was memory
    /// nobody used.
    pub fn with_room(n: usize) -> DeadlineQueue<T> {
        let room = n.saturating_add(n / 2).saturating_add(64);
        DeadlineQueue { room, ..DeadlineQueue::default() }
    }

    /// Arms `id`'s deadline and returns its ticket, which `forget` needs.
    #[inline(always)]
    pub fn arm(&mut self, deadline: Millis, kind: Kind, id: T) -> u64 {
        self.seq += 1;
        let seq = self.seq;
        let lane = &mut self.lanes[kind.index()].entries;
        if lane.back().is_none_or(|b| b.deadline <= deadline) {
            // Room first, then the entry: built after any growth, it is
            // written straight into the lane instead of staged on the stack
            // and copied (a copy that waits on the staging stores).
            if lane.capacity() == 0 {
                Self::first_room(lane, self.room);
            }
            lane.reserve(1);
            lane.push_back(Entry { deadline, seq, item: id, live: true });
        } else {
            Self::insert_sorted(lane, Entry { deadline, seq, item: id, live: true });
        }
        seq
    }

    /// A lane's first entry: the room it was promised.
    #[cold]
    fn first_room(lane: &mut VecDeque<Entry<T>>, room: usize) {
        lane.reserve(room);
    }

    /// The rare out-of-order deadline, kept out of the hot path. Placed after
    /// every entry with the same deadline, and its ticket is the newest, so
    /// the lane stays sorted by `(deadline, seq)`.
    #[cold]
    fn insert_sorted(lane: &mut VecDeque<Entry<T>>, entry: Entry<T>) {
        let at = lane.partition_point(|e| e.deadline <= entry.deadline);
        lane.insert(at, entry);
    }

    /// The lane whose front is due first (the older ticket on a tie).
    fn earliest_lane(&self) -> Option<usize> {
        let mut best: Option<(usize, (Millis, u64))> = None;
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(e) = lane.entries.front() {
                if best.is_none_or(|(_, b)| (e.deadline, e.seq) < b) {
                    best = Some((i, (e.deadline, e.seq)));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// The earliest deadline still armed, and whose it is.
    pub fn peek(&self) -> Option<(Millis, T)> {
        let lane = self.earliest_lane()?;
        self.lanes[lane].entries.front().map(|e| (e.deadline, e.item))
    }

    pub fn pop(&mut self) -> Option<(Millis, T)> {
        let lane = &mut self.lanes[self.earliest_lane()?];
        let e = lane.entries.pop_front()?;
        lane.drop_ended_front();
        Some((e.deadline, e.item))
    }

    /// The request armed as `(kind, deadline, ticket)` ended before its
    /// deadline: its entry goes now if it is the oldest of its kind (most
    /// answers), otherwise it is marked ended. Forgetting twice, or a ticket
    /// already popped, changes nothing.
    #[inline]
    pub fn forget(&mut self, kind: Kind, deadline: Millis, ticket: u64) {
        let lane = &mut self.lanes[kind.index()];
        if lane.entries.front().is_some_and(|e| e.seq == ticket) {
            lane.entries.pop_front();
            lane.drop_ended_front();
        } else {
            lane.end_inside(deadline, ticket);
        }
    }

    /// Entries held, ended ones not yet dropped included.
    pub fn len(&self) -> usize {
        self.lanes.iter().map(|l| l.entries.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> RequestId {
        RequestId::from_random_bytes([n; 16])
    }

    fn drain(q: &mut DeadlineQueue) -> Vec<(Millis, RequestId)> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn pops_earliest_first_and_ties_in_arming_order() {
        let mut q = DeadlineQueue::default();
        q.arm(Millis(30), Kind::Shutdown, id(1));
        q.arm(Millis(10), Kind::Plan, id(2));
        q.arm(Millis(30), Kind::Plan, id(3));
        q.arm(Millis(10), Kind::Shutdown, id(4));
        assert_eq!(
            drain(&mut q),
            vec![(Millis(10), id(2)), (Millis(10), id(4)), (Millis(30), id(1)), (Millis(30), id(3))]
        );
    }

    #[test]
    fn out_of_order_deadlines_in_one_lane_are_still_sorted() {
        let mut q = DeadlineQueue::default();
        for (t, n) in [(50, 1), (20, 2), (40, 3), (20, 4), (10, 5)] {
            q.arm(Millis(t), Kind::Shutdown, id(n));
        }
        let order: Vec<u64> = drain(&mut q).iter().map(|(t, _)| t.0).collect();
        assert_eq!(order, vec![10, 20, 20, 40, 50]);
        assert!(q.is_empty());
    }

    #[test]
    fn equal_deadlines_keep_arming_order_even_out_of_order() {
        let mut q = DeadlineQueue::default();
        q.arm(Millis(50), Kind::Plan, id(1));
        q.arm(Millis(20), Kind::Plan, id(2));
        q.arm(Millis(20), Kind::Plan, id(3));
        assert_eq!(drain(&mut q), vec![(Millis(20), id(2)), (Millis(20), id(3)), (Millis(50), id(1))]);
    }

    #[test]
    fn forgetting_drops_an_entry_wherever_it_is_and_only_that_one() {
        let mut q = DeadlineQueue::default();
        let t1 = q.arm(Millis(10), Kind::Plan, id(1));
        let t2 = q.arm(Millis(20), Kind::Shutdown, id(2));
        let t3 = q.arm(Millis(30), Kind::Shutdown, id(3));
        let t4 = q.arm(Millis(30), Kind::Shutdown, id(4));
        // Not the oldest shutdown: marked, and gone from what pops.
        q.forget(Kind::Shutdown, Millis(30), t3);
        // The oldest shutdown, though a plan is earlier overall.
        q.forget(Kind::Shutdown, Millis(20), t2);
        // Twice, or a ticket under the wrong kind: nothing happens.
        q.forget(Kind::Shutdown, Millis(30), t3);
        q.forget(Kind::Shutdown, Millis(10), t1);
        assert_eq!(drain(&mut q), vec![(Millis(10), id(1)), (Millis(30), id(4))]);
        assert!(q.is_empty());
        // A ticket already popped: nothing happens either.
        q.forget(Kind::Shutdown, Millis(30), t4);
        assert!(q.is_empty());
    }

    #[test]
    fn answers_out_of_order_leave_nothing_behind() {
        let mut q = DeadlineQueue::default();
        let tickets: Vec<u64> = (0..200).map(|n| q.arm(Millis(100), Kind::Shutdown, id(n as u8))).collect();
        // Every other one first, then the rest: the ended ones are dropped as
        // they reach the front.
        for t in tickets.iter().skip(1).step_by(2).chain(tickets.iter().step_by(2)) {
            q.forget(Kind::Shutdown, Millis(100), *t);
        }
        assert!(q.is_empty());
    }

    #[test]
    fn ended_entries_behind_a_pending_one_are_compacted() {
        let mut q = DeadlineQueue::default();
        // One request stays pending at the front while 10,000 after it are answered.
        q.arm(Millis(5), Kind::Shutdown, id(0));
        for n in 0..10_000u64 {
            let t = q.arm(Millis(10 + n), Kind::Shutdown, id(1));
            q.forget(Kind::Shutdown, Millis(10 + n), t);
            assert!(q.len() <= 66, "{} entries held for one pending request", q.len());
        }
        assert_eq!(drain(&mut q), vec![(Millis(5), id(0))]);
    }
}
